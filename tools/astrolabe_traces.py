"""Readers shared by the offline trace tools (starpu_paje_*, starpu_trace_state_stats.py,
starpu_workers_activity, starpu_codelet_*, starpu_fxt_data_trace...).

It reads the files that starpu_fxt_tool writes, in StarPU 1.4's formats:
recutils files (tasks.rec, trace.rec, data.rec, sched_tasks.rec), paje.trace,
activity.data, distrib.data and number_events.data. Python 3 standard library only.
Every problem with an input file raises TraceError, whose text names the file
(and the line); the tools print it as one line and exit with status 1.
"""

import math
import os
import shutil
import subprocess
import sys


class TraceError(Exception):
    """A problem with an input file or an external program, as one readable line."""


def die(prog, err):
    """Prints err as one line '<prog>: error: ...' on stderr and exits with status 1."""
    sys.stderr.write("%s: error: %s\n" % (os.path.basename(prog), err))
    sys.exit(1)


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

def read_rec(path):
    """Reads a recutils file: a list of records, each a dict field -> value (last wins)
    plus the key '_line' (line number of the record's first field). Comments (#) are skipped."""
    records = []
    cur = None
    with open_input(path) as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if line.startswith("#"):
                continue
            if not line.strip():
                cur = None
                continue
            if line.startswith("+"):
                if cur is None or not cur.get("_last"):
                    raise TraceError("%s:%d: continuation line outside a field" % (path, n))
                cur[cur["_last"]] += "\n" + line[1:].lstrip()
                continue
            colon = line.find(":")
            if colon <= 0 or " " in line[:colon]:
                raise TraceError("%s:%d: not a recutils 'Field: value' line: %.40r" % (path, n, line))
            if cur is None:
                cur = {"_line": n}
                records.append(cur)
            field = line[:colon]
            cur[field] = line[colon + 1:].strip()
            cur["_last"] = field
    for r in records:
        r.pop("_last", None)
    return records


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

def paje_split(line):
    """Splits a Paje line into fields: blanks separate, double quotes group."""
    out = []
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c in " \t\r\n":
            i += 1
            continue
        if c == '"':
            j = line.find('"', i + 1)
            if j < 0:
                return None
            out.append(line[i + 1:j])
            i = j + 1
        else:
            j = i
            while j < n and line[j] not in " \t\r\n":
                j += 1
            out.append(line[i:j])
            i = j
    return out


# Field names of the Paje definitions, in the old (StarPU) and the new spelling.
_PARENT = ("Type", "ContainerType")


def _get(fields, names, default=None):
    for n in names:
        if n in fields:
            return fields[n]
    return default


class PajeState:
    __slots__ = ("container", "ctype", "start", "end", "depth", "value", "extra")

    def __init__(self, container, ctype, start, depth, value, extra):
        self.container, self.ctype, self.start = container, ctype, start
        self.end, self.depth, self.value, self.extra = None, depth, value, extra

    @property
    def duration(self):
        return self.end - self.start


class PajeTrace:
    """A replayed paje.trace: states with their names resolved, events, trace end."""

    def __init__(self, path):
        self.path = path
        self.containers = {}   # alias -> (name, type alias, parent alias)
        self.types = {}        # alias -> name
        self.values = {}       # (type alias, value alias) -> name
        self.colors = {}       # value name -> "#rrggbb" (from the entity value definitions)
        self.states = []       # PajeState, in closing order
        self.events = []       # (time, type name, container name, value)
        self.end = 0.0
        self.profiling = []    # (time, "start"|"stop")

    def container_name(self, alias):
        return self.containers.get(alias, (alias,))[0]

    def value_name(self, ctype, value):
        return self.values.get((ctype, value), value)


def read_paje(path):
    """Parses and replays a paje.trace as StarPU writes it (unsorted body, entity values
    defined on the way, TAB or space separators), like pj_dump on the sorted file, except
    that a state replaced at its own date (StarPU writes each task as event 10 then 20)
    is not counted twice."""
    defs = {}      # event id -> (Paje event name, [field names])
    trace = PajeTrace(path)
    timed = []     # (time, order, event name, fields dict)
    cur_def = None
    with open_input(path) as f:
        for n, raw in enumerate(f, 1):
            line = raw.strip()
            if not line:
                continue
            if line.startswith("%"):
                parts = line[1:].split()
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
            fields = paje_split(line)
            if fields is None:
                raise TraceError("%s:%d: unterminated quoted string" % (path, n))
            if fields[0] not in defs:
                raise TraceError("%s:%d: event id '%s' is not defined by the %%EventDef header: not a Paje trace?"
                                 % (path, n, fields[0]))
            ev, names = defs[fields[0]]
            if len(fields) - 1 < len(names):
                raise TraceError("%s:%d: %s needs %d fields, found %d" % (path, n, ev, len(names), len(fields) - 1))
            d = dict(zip(names, fields[1:]))
            if ev.startswith("PajeDefine"):
                _define(trace, ev, d)
                continue
            t = d.get("Time")
            try:
                t = float(t)
            except (TypeError, ValueError):
                raise TraceError("%s:%d: bad date '%s'" % (path, n, t))
            timed.append((t, n, ev, d))
    if not defs:
        raise TraceError("'%s' has no %%EventDef header: not a Paje trace" % path)
    timed.sort(key=lambda x: (x[0], x[1]))
    _replay(trace, timed)
    return trace


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
    alias = _get(d, ("Alias",), d.get("Name"))
    name = d.get("Name", alias)
    if ev == "PajeDefineEntityValue":
        trace.values[(_get(d, _PARENT), alias)] = name
        rgb = paje_color(d.get("Color", ""))
        if rgb:
            trace.colors.setdefault(name, rgb)
    else:
        trace.types[alias] = name


def _replay(trace, timed):
    stacks = {}    # (container alias, type alias) -> [PajeState]
    end = 0.0

    def close(st, t):
        st.end = t
        trace.states.append(st)

    for t, n, ev, d in timed:
        end = max(end, t)
        if ev == "PajeCreateContainer":
            trace.containers[d.get("Alias", d.get("Name"))] = (d.get("Name"), d.get("Type"), d.get("Container"))
        elif ev == "PajeDestroyContainer":
            name = d.get("Name")
            # Destroying a container ends the states of it and of everything inside it.
            inside = _descendants(trace, name)
            for key in list(stacks):
                if key[0] in inside:
                    for st in reversed(stacks.pop(key)):
                        close(st, t)
        elif ev in ("PajeSetState", "PajePushState", "PajePopState"):
            c, ty = d.get("Container"), d.get("Type")
            stack = stacks.setdefault((c, ty), [])
            if ev == "PajePopState":
                if stack:
                    close(stack.pop(), t)
                continue
            value = trace.value_name(ty, d.get("Value"))
            extra = {k: v for k, v in d.items() if k not in ("Time", "Container", "Type", "Value")}
            if ev == "PajeSetState":
                while stack:
                    st = stack.pop()
                    if st.start == t and st.depth == 0 and st.value == value and not stack:
                        continue    # the same state set again at its own date (10 then 20)
                    close(st, t)
            stack.append(PajeState(c, ty, t, len(stack), value, extra))
        elif ev == "PajeNewEvent":
            value = d.get("Value")
            trace.events.append((t, trace.types.get(d.get("Type"), d.get("Type")),
                                 trace.container_name(d.get("Container")), value))
            if value in ("start_profiling", "stop_profiling"):
                trace.profiling.append((t, value[:-len("_profiling")]))
    for key in stacks:
        for st in reversed(stacks[key]):
            close(st, end)
    trace.end = end
    for st in trace.states:
        st.container = trace.container_name(st.container)
        st.ctype = trace.types.get(st.ctype, st.ctype)


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


def profiling_windows(marks, end):
    """[(start, stop)] from start/stop marks sorted by time; None when there is no mark."""
    if not marks:
        return None
    wins, start = [], None
    for t, what in sorted(marks):
        if what == "start" and start is None:
            start = t
        elif what == "stop" and start is not None:
            wins.append((start, t))
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


def paje_state_rows(trace, names=None, rng=(0.0, -1.0)):
    """The states of trace as starpu_paje_state_stats selects them: cut to the
    start/stop_profiling windows when there are some, only the named values (None = all),
    dates shifted so that the first state starts at 0, kept when inside rng
    ((x1, x2) in ms, x2 = -1 for no limit). Rows are (container, type, start, end, value, extra)."""
    wins = profiling_windows(trace.profiling, trace.end)
    rows = []
    for st in trace.states:
        a, b = st.start, st.end
        if wins is not None:
            parts = [(max(a, w0), min(b, w1)) for w0, w1 in wins if min(b, w1) > max(a, w0) or w0 <= a <= w1]
            if not parts:
                continue
            a, b = parts[0][0], parts[-1][1]
        if names is not None and st.value not in names:
            continue
        rows.append([st.container, st.ctype, a, b, st.value, st.extra])
    if rows:
        origin = min(r[2] for r in rows)
        for r in rows:
            r[2] -= origin
            r[3] -= origin
    lo, hi = rng
    hi = math.inf if hi < 0 else hi
    lo = math.inf if lo < 0 else lo
    return [r for r in rows if r[2] >= lo and r[3] <= hi]


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
