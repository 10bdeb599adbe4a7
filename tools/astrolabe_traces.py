# SPDX-License-Identifier: LGPL-2.1-or-later
"""Readers shared by the offline trace tools (starpu_paje_*, starpu_trace_state_stats.py,
starpu_workers_activity, starpu_codelet_*, starpu_fxt_data_trace...).

It reads the files that starpu_fxt_tool writes, in StarPU 1.4's formats:
recutils files (tasks.rec, trace.rec, data.rec, sched_tasks.rec), paje.trace,
activity.data, distrib.data and number_events.data. Python 3 standard library only.
Every problem with an input file raises TraceError, whose text names the file
(and the line); the tools print it as one line and exit with status 1.
"""

import html
import math
import re
import os
import shutil
import subprocess
import sys
import zlib


class TraceError(Exception):
    """A problem with an input file or an external program, as one readable line."""


def die(prog, err):
    """Prints err as one line '<prog>: error: ...' on stderr and exits with status 1."""
    sys.stderr.write("%s: error: %s\n" % (os.path.basename(prog), err))
    sys.exit(1)


def run_tool(main):
    """Runs main(argv) as a tool's body: a TraceError becomes one line and status 1; a
    reader that went away (| head) or ^C end it quietly."""
    try:
        sys.exit(main(sys.argv))
    except TraceError as e:
        die(sys.argv[0], e)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)


def usage_error(prog, text):
    """Prints a bad-usage message and exits with status 2."""
    sys.stderr.write("%s: %s (see %s --help)\n" % (os.path.basename(prog), text, os.path.basename(prog)))
    sys.exit(2)


def open_input(path):
    """Opens a text input file; a missing, unreadable or empty file is a TraceError naming it."""
    if os.path.isdir(path):
        raise TraceError("'%s' is a directory, not a trace file" % path)
    try:
        f = open(path, "r", encoding="utf-8", errors="replace")
    except OSError as e:
        raise TraceError("cannot read '%s': %s" % (path, e.strerror or e))
    if os.fstat(f.fileno()).st_size == 0:
        f.close()
        raise TraceError("'%s' is empty: was the trace converted with starpu_fxt_tool?" % path)
    return f


# ------------------------------------------------------------------ recutils

def iter_rec(path):
    """The records of a recutils file, one at a time: dicts field -> value (last wins)
    plus the key '_line' (line number of the record's first field). Comments (#) are skipped."""
    cur, last = None, None
    with open_input(path) as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if line.startswith("#"):
                continue
            if not line.strip():
                if cur is not None:
                    yield cur
                cur = None
                continue
            if line.startswith("+"):
                if cur is None:
                    raise TraceError("%s:%d: continuation line outside a field" % (path, n))
                cur[last] += "\n" + line[1:].lstrip()
                continue
            colon = line.find(":")
            if colon <= 0 or " " in line[:colon]:
                raise TraceError("%s:%d: not a recutils 'Field: value' line: %.40r" % (path, n, line))
            if cur is None:
                cur = {"_line": n}
            last = line[:colon]
            cur[last] = line[colon + 1:].strip()
    if cur is not None:
        yield cur


def read_rec(path):
    """All the records of a recutils file (see iter_rec)."""
    return list(iter_rec(path))


def file_mentions(path, text):
    """Whether some line of path holds text (a cheap look ahead of a full reading)."""
    with open_input(path) as f:
        return any(text in line for line in f)


def rec_float(rec, field, path):
    """The float value of field in rec; a TraceError naming the file and line if it is not a number."""
    try:
        return float(rec[field])
    except KeyError:
        raise TraceError("%s:%d: the record has no '%s' field" % (path, rec["_line"], field))
    except ValueError:
        raise TraceError("%s:%d: '%s: %s' is not a number" % (path, rec["_line"], field, rec[field]))


# ------------------------------------------------------------------ tabular data files

def read_columns(path, ncols, kind):
    """The lines of a whitespace-separated data file split into fields, (line number, fields),
    comment lines (#) and blank lines skipped; each line needs at least ncols fields."""
    rows = []
    with open_input(path) as f:
        for n, raw in enumerate(f, 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            fields = raw.rstrip("\n").split("\t") if "\t" in raw else line.split()
            if len(fields) < ncols:
                raise TraceError("%s:%d: expected %d fields of %s, found %d" % (path, n, ncols, kind, len(fields)))
            rows.append((n, fields))
    if not rows:
        raise TraceError("'%s' holds no %s line" % (path, kind))
    return rows


def to_float(path, n, text):
    try:
        v = float(text)
    except ValueError:
        raise TraceError("%s:%d: '%s' is not a number" % (path, n, text))
    if math.isnan(v):
        raise TraceError("%s:%d: '%s' is not a number" % (path, n, text))
    return v


def read_distrib(path):
    """distrib.data: (task name, worker, data size, footprint, duration ms) per executed codelet."""
    out = []
    for n, f in read_columns(path, 5, "distrib.data (name, worker, size, footprint, duration)"):
        out.append((f[0], f[1], to_float(path, n, f[2]), f[3], to_float(path, n, f[4])))
    return out


class Activity:
    """activity.data: worker names, per-worker windows, task counters, profiling switches."""

    def __init__(self):
        self.names = {}          # worker -> "CPU 0"
        self.windows = {}        # worker -> [(time, elapsed, exec, sleep)] (ms)
        self.submitted = []      # [(time, count)]
        self.ready = []
        self.profiling = []      # [(time, 0|1)]


def read_activity(path):
    act = Activity()
    for n, f in read_columns(path, 3, "activity.data"):
        kind = f[0]
        if kind == "name":
            act.names[f[1]] = f[2]
        elif kind in ("cnt_submitted", "cnt_ready"):
            (act.submitted if kind == "cnt_submitted" else act.ready).append(
                (to_float(path, n, f[1]), to_float(path, n, f[2])))
        elif kind == "set_profiling":
            act.profiling.append((to_float(path, n, f[1]), int(to_float(path, n, f[2]))))
        else:
            if len(f) < 5:
                raise TraceError("%s:%d: a worker line needs 5 fields (worker, time, elapsed, executing, sleeping)" % (path, n))
            act.windows.setdefault(kind, []).append(tuple(to_float(path, n, x) for x in f[1:5]))
    if not act.windows:
        raise TraceError("'%s' holds no worker activity line" % path)
    return act


# ------------------------------------------------------------------ paje.trace

_TOKENS = re.compile(r'"([^"]*)"|(\S+)')


def paje_split(line):
    """Splits a Paje line into fields: blanks separate, double quotes group."""
    if '"' not in line:
        return line.split()
    if line.count('"') % 2:
        return None
    return [q if q or not u else u for q, u in _TOKENS.findall(line)]


# Kinds of the timed Paje events the readers replay; other events only move the trace end.
_CREATE, _DESTROY, _SET, _PUSH, _POP, _EVENT = range(6)
_KINDS = {"PajeCreateContainer": _CREATE, "PajeDestroyContainer": _DESTROY, "PajeSetState": _SET,
          "PajePushState": _PUSH, "PajePopState": _POP, "PajeNewEvent": _EVENT}


class PajeTrace:
    """What a replayed paje.trace defines: containers, types, entity values and their
    colours, the trace end (largest date) and the start/stop_profiling marks."""

    def __init__(self, path):
        self.path = path
        self.containers = {}   # alias -> (name, type alias, parent alias)
        self.types = {}        # alias -> name
        self.values = {}       # (type alias, value alias) -> name
        self.colors = {}       # value name -> "#rrggbb" (from the entity value definitions)
        self.end = 0.0
        self.profiling = []    # (time, "start"|"stop")

    def container_name(self, alias):
        return self.containers.get(alias, (alias,))[0]

    def value_name(self, ctype, value):
        return self.values.get((ctype, value), value)


class _Unsorted(Exception):
    """The states of one container are not in time order: replay a sorted copy."""


def paje_color(text):
    """'#rrggbb' from a Paje colour "r g b" (components in 0..1, or 0..255 as StarPU writes
    codelet colours); None if it is not one."""
    try:
        comps = [float(x) for x in text.split()]
    except ValueError:
        return None
    if len(comps) != 3:
        return None
    scale = 255.0 if max(comps) > 1.0 else 1.0
    return "#%02x%02x%02x" % tuple(int(round(255 * min(1.0, max(0.0, c / scale)))) for c in comps)


def _define(trace, ev, d):
    alias = d.get("Alias", d.get("Name"))
    name = d.get("Name", alias)
    if ev == "PajeDefineEntityValue":
        trace.values[(d.get("Type", d.get("EntityType")), alias)] = name
        rgb = paje_color(d.get("Color", ""))
        if rgb:
            trace.colors.setdefault(name, rgb)
    else:
        trace.types[alias] = name


class _Replayer:
    """Per (container, type) state stacks, fed in time order per container; each finished
    state goes to sink(container name, type name, start, end, depth, value name)."""

    def __init__(self, trace, sink, strict):
        self.trace, self.strict = trace, strict
        types, values, containers = trace.types, trace.values, trace.containers

        def named(c, ty, a, b, depth, v):
            sink(containers.get(c, (c,))[0], types.get(ty, ty), a, b, depth, values.get((ty, v), v))
        self.sink = named
        self.stacks = {}    # (container, type) -> [[start, depth, value]]
        self.last = {}      # (container, type) -> date of its last state event

    def event(self, t, kind, c, ty, v):
        if kind == _CREATE:
            self.trace.containers[c] = (v[0], ty, v[1])
        elif kind == _DESTROY:
            # Destroying a container ends its states and those of all containers inside it.
            inside = _descendants(self.trace, c)
            for key in [k for k in self.stacks if k[0] in inside]:
                for st in reversed(self.stacks.pop(key)):
                    self.sink(key[0], key[1], st[0], t, st[1], st[2])
        elif kind == _EVENT:
            if v in ("start_profiling", "stop_profiling"):
                self.trace.profiling.append((t, v[:-len("_profiling")]))
        else:
            key = (c, ty)
            if self.strict and t < self.last.get(key, t):
                raise _Unsorted()
            self.last[key] = t
            stack = self.stacks.get(key)
            if stack is None:
                stack = self.stacks[key] = []
            if kind == _POP:
                if stack:
                    st = stack.pop()
                    self.sink(c, ty, st[0], t, st[1], st[2])
                return
            if kind == _SET:
                while stack:
                    st = stack.pop()
                    if st[0] == t and st[1] == 0 and st[2] == v and not stack:
                        continue    # the same state set again at its own date (10 then 20)
                    self.sink(c, ty, st[0], t, st[1], st[2])
            stack.append([t, len(stack), v])

    def finish(self, end):
        for key, stack in self.stacks.items():
            for st in reversed(stack):
                self.sink(key[0], key[1], st[0], end, st[1], st[2])
        self.stacks = {}


def _descendants(trace, ident):
    """Aliases of the container named or aliased ident and of all containers inside it."""
    out = {a for a, c in trace.containers.items() if ident in (a, c[0])}
    changed = True
    while changed:
        changed = False
        for a, c in trace.containers.items():
            if c[2] in out and a not in out:
                out.add(a)
                changed = True
    return out


def _paje_pass(path, sink, sort):
    """One reading of path. Without sort, the states of each container are replayed in file
    order (StarPU writes them so; only variables, links and definitions come late) and
    _Unsorted is raised when they are not; with sort, the timed events are sorted first."""
    trace = PajeTrace(path)
    rep = _Replayer(trace, sink, strict=not sort)
    defs = {}      # event id -> (Paje event name, [field names])
    plan = {}      # event id -> (kind, i_time, i_container, i_type, i_value, nfields, extra indexes)
    timed = [] if sort else None
    cur_def = None
    end = 0.0
    with open_input(path) as f:
        for n, raw in enumerate(f, 1):
            if raw[0] == "%":
                parts = raw[1:].split()
                if not parts:
                    continue
                if parts[0] == "EventDef":
                    if len(parts) < 3:
                        raise TraceError("%s:%d: malformed %%EventDef line" % (path, n))
                    cur_def = (parts[2], parts[1], [])
                elif parts[0] == "EndEventDef":
                    if cur_def is None:
                        raise TraceError("%s:%d: %%EndEventDef without %%EventDef" % (path, n))
                    defs[cur_def[0]] = (cur_def[1], cur_def[2])
                    cur_def = None
                elif cur_def is not None:
                    cur_def[2].append(parts[0])
                continue
            fields = paje_split(raw)
            if not fields:
                if fields is None:
                    raise TraceError("%s:%d: unterminated quoted string" % (path, n))
                continue
            pl = plan.get(fields[0])
            if pl is None:
                if fields[0] not in defs:
                    raise TraceError("%s:%d: event id '%s' is not defined by the %%EventDef header: not a Paje trace?"
                                     % (path, n, fields[0]))
                ev, names = defs[fields[0]]
                idx = {name: i + 1 for i, name in enumerate(names)}
                kind = _KINDS.get(ev, -1) if "Time" in idx else -2
                if ev.startswith("PajeDefine"):
                    kind = -2
                if kind == _CREATE:
                    pl = (kind, idx["Time"], idx.get("Alias", idx.get("Name")), idx.get("Type"),
                          (idx.get("Name"), idx.get("Container")), len(names), ev, names)
                else:
                    pl = (kind, idx.get("Time"), idx.get("Container", idx.get("Name")), idx.get("Type"),
                          idx.get("Value"), len(names), ev, names)
                plan[fields[0]] = pl
            kind, it, ic, ity, iv, nf, ev, names = pl
            if len(fields) <= nf:
                raise TraceError("%s:%d: %s needs %d fields, found %d" % (path, n, ev, nf, len(fields) - 1))
            if kind == -2:
                _define(trace, ev, dict(zip(names, fields[1:])))
                continue
            try:
                t = float(fields[it])
            except ValueError:
                raise TraceError("%s:%d: bad date '%s'" % (path, n, fields[it]))
            if t > end:
                end = t
            if kind < 0:
                continue
            if kind == _CREATE:
                v = (fields[iv[0]], fields[iv[1]])
            else:
                v = fields[iv] if iv else None
            if sort:
                timed.append((t, n, kind, fields[ic], fields[ity] if ity else None, v))
            else:
                rep.event(t, kind, fields[ic], fields[ity] if ity else None, v)
    if not defs:
        raise TraceError("'%s' has no %%EventDef header: not a Paje trace" % path)
    if sort:
        timed.sort(key=lambda x: (x[0], x[1]))
        for t, n, kind, c, ty, v in timed:
            rep.event(t, kind, c, ty, v)
    rep.finish(end)
    trace.end = end
    return trace


def read_paje(path, sink, reset):
    """Replays a paje.trace as StarPU writes it (unsorted body, entity values defined on the
    way, TAB or space separators), like pj_dump on the sorted file except that a state set
    again at its own date (StarPU writes each task as event 10 then 20) counts once.
    sink(container name, type name, start, end, depth, value name) receives each state.
    Memory stays bounded by the open states; when the states of a container are out of
    order, reset() is called and the trace is replayed sorted. Returns the PajeTrace."""
    try:
        return _paje_pass(path, sink, sort=False)
    except _Unsorted:
        reset()
        return _paje_pass(path, sink, sort=True)


def profiling_windows(marks, end):
    """[(start, stop)] from start/stop marks sorted by time; None when there is no mark."""
    if not marks:
        return None
    wins, start = [], None
    for k, (t, what) in enumerate(sorted(marks)):
        if what == "start" and start is None:
            start = t
        elif what == "stop" and (start is not None or k == 0):
            # A stop first: profiling was on from the beginning.
            wins.append((-math.inf if start is None else start, t))
            start = None
    if start is not None:
        wins.append((start, end))
    return wins


def clip(a, b, windows):
    """The part of [a, b] inside windows (None = everything)."""
    if windows is None:
        return b - a
    return sum(max(0.0, min(b, w1) - max(a, w0)) for w0, w1 in windows)


def inside(t, windows):
    return windows is None or any(w0 <= t <= w1 for w0, w1 in windows)


# ------------------------------------------------------------------ pictures for pages

# The runtime's own states (StarPU's values for the threads, workers, user threads and memory
# managers of paje.trace), each with a colour of its own: light tones, so that the tasks, in
# the saturated colours of TASK_PALETTE, stand out of them.
STATE_COLOURS = {
    "Sleeping": "#d9d9d9", "Idle": "#f2f2f2", "Overhead": "#fed9a6", "Scheduling": "#fff2ae",
    "Initializing": "#8dd3c7", "Deinitializing": "#bebada", "FetchingInput": "#b3cde3",
    "PushingOutput": "#b3e2cd", "Callback": "#fbb4ae", "Executing": "#cbd5e8", "Progressing": "#e6f5c9",
    "Parallel sync": "#f1e2cc", "Unpartitioning": "#cccccc", "Hypervisor": "#f4cae4",
    "Submitting task": "#fddaec", "Building task": "#e5d8bd", "Waiting all tasks": "#decbe4",
    "Waiting task": "#c2a5cf", "Throttling task submission": "#fb8072", "Nothing": "#f7f7f7",
    "Allocating": "#ccebc5", "AllocatingReuse": "#a6dba0", "Freeing": "#ffffb3", "WritingBack": "#80b1d3",
    "WritingBackAsync": "#a6cee3", "Reclaiming": "#fccde5", "DriverCopy": "#b3de69",
    "DriverCopyAsync": "#d9ef8b",
}

# Tasks (and the states a program opens): a palette made for categories. Okabe and Ito's
# colours first (told apart with every common colour-vision deficiency; black left out), then
# those of Tableau 10 that differ from them; beyond, hues a golden angle apart.
TASK_PALETTE = ["#e69f00", "#56b4e9", "#009e73", "#f0e442", "#0072b2", "#d55e00", "#cc79a7",
                "#9c755f", "#e15759", "#76b7b2", "#b07aa1", "#ff9da7", "#edc948", "#4e79a7",
                "#f28e2b", "#59a14f"]

# What StarPU's paje.trace gives a task without a colour of its own: green, the same for all.
STARPU_TASK_GREEN = "#009966"

# The time axis of the pictures: left margin (row names) and width of the plot, pixels.
PLOT_LEFT, PLOT_WIDTH = 130, 900


def hashed_color(name):
    """The colour starpu_fxt_tool -c gives name (StarPU's: crc32 of the name salted with
    "red", "green" and "blue", the three summing to 1), as it reads back from paje.trace."""
    data = name.encode("utf-8", "surrogateescape")
    comps = [zlib.crc32(data, zlib.crc32(salt)) % 1024 for salt in (b"red", b"green", b"blue")]
    total = sum(comps)
    return paje_color(" ".join("%f" % (c / total if total else 1.0 / 3) for c in comps))


def _hsl(h, s, l):
    """'#rrggbb' of a hue (degrees), saturation and lightness (0..1)."""
    c = (1 - abs(2 * l - 1)) * s
    x = c * (1 - abs((h / 60.0) % 2 - 1))
    r, g, b = [(c, x, 0), (x, c, 0), (0, c, x), (0, x, c), (x, 0, c), (c, 0, x)][int(h // 60) % 6]
    m = l - c / 2
    return "#%02x%02x%02x" % tuple(int(round(255 * (v + m))) for v in (r, g, b))


def _colours(first, lightness, used):
    """Colours not in used: first's, then hues a golden angle apart."""
    for c in first:
        if c not in used:
            yield c
    k = 0
    while True:
        c = _hsl((k * 137.508) % 360, 0.6, lightness)
        k += 1
        if c not in used:
            yield c


def chart_colours(traces, values):
    """The colour of each value a page draws, each its own: a state of the runtime its colour of
    STATE_COLOURS; a task (or a state the program opened) the colour the program gave it
    (starpu_codelet.color, starpu_task.color: paje.trace keeps it), else one of TASK_PALETTE,
    given in the order of the names so that a page gives the same colours to the same names.
    StarPU's green for every task and starpu_fxt_tool -c's hashed colours count as none given.
    traces: the PajeTrace objects the values come from."""
    values = sorted(set(values))
    colours, used = {}, set()
    for v in values:
        if v in STATE_COLOURS:
            colours[v] = STATE_COLOURS[v]
            used.add(colours[v])
    rest = []
    for v in values:
        if v in colours:
            continue
        given = next((t.colors[v] for t in traces if v in t.colors), None)
        if given and given not in (STARPU_TASK_GREEN, hashed_color(v)) and given not in used:
            colours[v] = given
            used.add(given)
        else:
            rest.append(v)
    palette = _colours(TASK_PALETTE, 0.45, used)
    for v in rest:
        colours[v] = next(palette)
        used.add(colours[v])
    return colours


def _nice_step(raw):
    """The round step (1, 2 or 5 times a power of ten) next above raw."""
    power = 10.0 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * power * (1 + 1e-9):
            return m * power
    return 10 * power


class TimeAxis:
    """The time axis (ms) that the pictures of a page share, so that they line up: from a round
    value at or before the first date to the last date, ticks at round values (1, 2 or 5 times a
    power of ten ms apart) labelled with their unit."""

    def __init__(self, t0, t1, left=PLOT_LEFT, width=PLOT_WIDTH, ticks=8):
        if not t1 > t0:
            t1 = t0 + 1e-3
        self.step = _nice_step((t1 - t0) / ticks)
        self.first = math.floor(t0 / self.step + 1e-9)
        self.start = self.first * self.step
        self.end = max(t1, self.start + self.step)
        self.last = math.floor(self.end / self.step + 1e-9)
        self.left, self.width = left, width
        self.decimals = max(0, -int(math.floor(math.log10(self.step) + 1e-9)))

    def x(self, t):
        return self.left + self.width * (t - self.start) / (self.end - self.start)

    def length(self, d):
        return self.width * d / (self.end - self.start)

    def label(self, k):
        text = "%.*f" % (self.decimals, k * self.step)
        return ("0" if text.strip("-0.") == "" else text) + " ms"

    def svg(self, y):
        """The axis under a picture, its line at y: a group that says its range (data-from,
        data-to, ms) and where it is drawn (data-x0, data-x1)."""
        out = ['<g class="axis" data-from="%r" data-to="%r" data-x0="%.2f" data-x1="%.2f">'
               % (self.start, self.end, self.left, self.left + self.width),
               '<line x1="%.2f" y1="%d" x2="%.2f" y2="%d" stroke="#555"/>' % (self.left, y, self.left + self.width, y)]
        for k in range(self.first, self.last + 1):
            x = self.x(k * self.step)
            out.append('<line x1="%.2f" y1="%d" x2="%.2f" y2="%d" stroke="#555"/>' % (x, y, x, y + 4))
            out.append('<text class="tick" x="%.2f" y="%d" text-anchor="middle">%s</text>' % (x, y + 15, self.label(k)))
        out.append("</g>")
        return "\n".join(out)


def gantt_range(trace, states):
    """The dates (ms) a Gantt chart of states spans: from its first state to the trace's end."""
    return min((st[1] for st in states), default=0.0), max(trace.end, max((st[2] for st in states), default=0.0))


def svg_gantt(trace, states, colours, axis=None, row_key=None, rect_class=None):
    """An SVG Gantt chart of states [(container, start, end, depth, value)], one row per
    container (ordered by row_key(name), default by name), each value in its colour of
    colours (chart_colours()), on axis (a TimeAxis; default: over gantt_range()); rect_class(value)
    may give a class attribute to each bar. Each bar's tooltip says its value, duration and date."""
    axis = axis or TimeAxis(*gantt_range(trace, states))
    rows = sorted({st[0] for st in states}, key=row_key)
    index = {c: i for i, c in enumerate(rows)}
    rh = 18
    out = ['<svg class="gantt" xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-size="11" font-family="sans-serif">'
           % (axis.left + axis.width + 40, rh * len(rows) + 30)]
    for i, c in enumerate(rows):
        out.append('<text class="row" x="2" y="%d">%s</text>' % (i * rh + 13, html.escape(c)))
    for c, a, b, depth, value in sorted(states, key=lambda s: s[3]):
        y = index[c] * rh + 2 + 3 * depth
        cls = rect_class(value) if rect_class else None
        out.append('<rect%s x="%.2f" y="%d" width="%.2f" height="%d" fill="%s"><title>%s: %.6f ms at %.6f</title></rect>'
                   % (' class="%s"' % cls if cls else "", axis.x(a), y, max(axis.length(b - a), 0.5),
                      max(rh - 4 - 3 * depth, 2), colours[value], html.escape(value), b - a, a))
    out.append(axis.svg(rh * len(rows) + 4))
    out.append("</svg>")
    return "\n".join(out)


def svg_key(colour, text, cls="key"):
    """One entry of a legend: a square of colour, then text."""
    return ('<span class="%s" data-colour="%s"><svg width="10" height="10"><rect width="10" height="10" fill="%s" '
            'stroke="#888" stroke-width="0.5"/></svg> %s</span>' % (cls, colour, colour, html.escape(text)))


# ------------------------------------------------------------------ gnuplot

def gnuplot_program():
    """The gnuplot to run ($GNUPLOT, else gnuplot in PATH), or None."""
    prog = os.environ.get("GNUPLOT", "gnuplot")
    if os.sep in prog:
        return prog if os.access(prog, os.X_OK) else None
    return shutil.which(prog)


def run_gnuplot(script_path, required):
    """Runs gnuplot on script_path. Without gnuplot: a TraceError when required, else a note
    and False. A gnuplot failure is a TraceError with gnuplot's first error line."""
    prog = gnuplot_program()
    if prog is None:
        if required:
            raise TraceError("gnuplot is needed to draw the picture and was not found "
                             "(install gnuplot-nox, or set GNUPLOT)")
        sys.stderr.write("note: gnuplot not found; run 'gnuplot %s' to draw the picture\n" % script_path)
        return False
    d = os.path.dirname(script_path) or "."
    r = subprocess.run([prog, os.path.basename(script_path)], cwd=d, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    if r.returncode != 0:
        msg = [l for l in r.stderr.splitlines() if l.strip()]
        raise TraceError("gnuplot failed on '%s': %s" % (script_path, msg[-1] if msg else "exit %d" % r.returncode))
    return True


def gp_quote(s):
    """A gnuplot double-quoted string."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def gp_outputs(base, eps=True, png=True, pdf=False):
    """gnuplot lines that set the terminal and output for each picture format; the plot
    commands follow each of them (the caller repeats its plot after each)."""
    out = []
    # noenhanced: task names hold underscores, which must not become subscripts.
    if eps:
        out.append(("set terminal postscript eps noenhanced color font 'Helvetica,10'", base + ".eps"))
    if pdf:
        out.append(("set terminal pdfcairo noenhanced color", base + ".pdf"))
    if png:
        out.append(("set terminal png noenhanced size 1024,768", base + ".png"))
    return out


def safe_name(name):
    """A file-name-safe form of a task name."""
    return "".join(c if c.isalnum() or c in "._-+" else "_" for c in name) or "_"


def _profiling_marks(path):
    """The start/stop_profiling marks of a paje.trace, read ahead of the replay."""
    marks = []
    with open_input(path) as f:
        for line in f:
            if "_profiling" in line and line[0] != "%":
                fields = paje_split(line) or []
                for what in ("start", "stop"):
                    if what + "_profiling" in fields and len(fields) > 1:
                        try:
                            marks.append((float(fields[1]), what))
                        except ValueError:
                            pass
    return marks


def paje_states(path, on_row, reset, names=None, rng=(0.0, -1.0)):
    """Feeds on_row(container, type, start, end, depth, value) with the states of a paje.trace as
    starpu_paje_state_stats selects them: cut to the start/stop_profiling windows when
    there are some, only the named values (None = all), and with rng = (x1, x2) in ms
    (x2 = -1: no limit) only those inside [x1, x2] counted from the first state selected
    (then dates start at 0). reset() is called if the replay has to start again.
    Returns the PajeTrace."""
    wins = profiling_windows(_profiling_marks(path), math.inf)
    lo, hi = rng
    hi = math.inf if hi < 0 else hi
    lo = math.inf if lo < 0 else lo
    ranged = (lo, hi) != (0.0, math.inf)
    rows = []

    def sink(c, ty, a, b, depth, value):
        if names is not None and value not in names:
            return
        if wins is not None:
            parts = [(max(a, w0), min(b, w1)) for w0, w1 in wins if min(b, w1) > max(a, w0) or w0 <= a <= w1]
            if not parts:
                return
            a, b = parts[0][0], parts[-1][1]
        if ranged:
            rows.append((c, ty, a, b, depth, value))
        else:
            on_row(c, ty, a, b, depth, value)

    def restart():
        rows.clear()
        reset()

    trace = read_paje(path, sink, restart)
    if ranged and rows:
        origin = min(r[2] for r in rows)
        for c, ty, a, b, depth, value in rows:
            if a - origin >= lo and b - origin <= hi:
                on_row(c, ty, a - origin, b - origin, depth, value)
    return trace


def parse_range(prog, text):
    """'-r x1:x2' as StarPU's paje scripts take it (-1 = infinity)."""
    try:
        a, b = text.split(":")
        return float(a), float(b)
    except ValueError:
        usage_error(prog, "bad range '%s': expected x1:x2 in ms, -1 for no limit" % text)


def version(prog):
    print("%s (astrolabe) StarPU 1.4 offline trace tool" % os.path.basename(prog))
    sys.exit(0)
