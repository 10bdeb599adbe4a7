/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * trace.html (StarPU's name): the flow of tasks between the components of a
 * modular scheduler (modular-*), to play in a browser. The recorder records
 * the components (name, worker), their connections, and each move of a task:
 * pushed into a component (from the policy or from its parent), pulled out of
 * one by the component below, taken by a worker. The page holds the moves as
 * they come, then the components; its script draws the tree (one row per
 * depth) and replays the moves up to the step the slider (or #step=N in the
 * address) chooses: how many tasks each component holds, how many went
 * through it, the last move. One file, no network (StarPU's loads jQuery).
 * Written through the trace format API (astrolabe/trace_format.h) from the
 * converter's component events and the workers' pops. Built into the
 * converter.
 */
#include <glib.h>
#include <inttypes.h>
#include <stdbool.h>
#include "builtin_formats.h"
#include "format_common.h"

struct trace_html
{
	FILE *f;
	char *prefix;           /* the archive's "<rank>_" before job ids and component names ("" for one archive) */
	GHashTable *index;      /* component id -> its index + 1 */
	GPtrArray *names;       /* index -> name */
	GArray *workers;        /* index -> worker (-1) */
	GArray *edges;          /* pairs of indexes */
	GHashTable *of_worker;  /* worker + 1 -> index + 1 of its worker component */
	uint64_t nsteps;
};

/* The script: the tree from components/edges, the counts at step k from steps. */
static const char player[] =
	"var S = steps.length, N = components.length, ns = 'http://www.w3.org/2000/svg';\n"
	"var depth = components.map(function () { return 0; });\n"
	"for (var pass = 0; pass < N; pass++)\n"
	"  edges.forEach(function (e) { depth[e[1]] = Math.max(depth[e[1]], depth[e[0]] + 1); });\n"
	"var rows = [], W = 150, H = 46, GAP = 30, VGAP = 50, pos = [];\n"
	"components.forEach(function (c, i) { (rows[depth[i]] = rows[depth[i]] || []).push(i); });\n"
	"rows = rows.filter(function (r) { return r; });\n"
	"var width = Math.max.apply(null, rows.map(function (r) { return r.length; }).concat([1])) * (W + GAP) + GAP;\n"
	"var svg = document.getElementById('tree');\n"
	"svg.setAttribute('width', width); svg.setAttribute('height', rows.length * (H + VGAP) + 10);\n"
	"function add(tag, attrs, text) { var e = document.createElementNS(ns, tag);\n"
	"  for (var a in attrs) e.setAttribute(a, attrs[a]); if (text !== undefined) e.textContent = text; svg.appendChild(e); return e; }\n"
	"rows.forEach(function (r, d) { r.forEach(function (i, k) {\n"
	"  pos[i] = [(width - r.length * (W + GAP) + GAP) / 2 + k * (W + GAP), 10 + d * (H + VGAP)]; }); });\n"
	"edges.forEach(function (e) { add('line', { x1: pos[e[0]][0] + W / 2, y1: pos[e[0]][1] + H, x2: pos[e[1]][0] + W / 2,\n"
	"  y2: pos[e[1]][1], stroke: '#888' }); });\n"
	"var boxes = [], counts = [], through = [];\n"
	"components.forEach(function (c, i) {\n"
	"  var g = document.createElementNS(ns, 'g'); g.setAttribute('class', 'component'); g.setAttribute('id', 'component' + i);\n"
	"  svg.appendChild(g);\n"
	"  var box = document.createElementNS(ns, 'rect');\n"
	"  [['x', pos[i][0]], ['y', pos[i][1]], ['width', W], ['height', H], ['rx', 6]].forEach(function (a) { box.setAttribute(a[0], a[1]); });\n"
	"  g.appendChild(box); boxes[i] = box;\n"
	"  function text(cls, dy, s) { var t = document.createElementNS(ns, 'text'); t.setAttribute('class', cls);\n"
	"    t.setAttribute('x', pos[i][0] + W / 2); t.setAttribute('y', pos[i][1] + dy); t.setAttribute('text-anchor', 'middle');\n"
	"    t.textContent = s; g.appendChild(t); return t; }\n"
	"  text('name', 16, c.worker >= 0 ? c.name + ' ' + c.worker : c.name);\n"
	"  counts[i] = text('count', 31, ''); through[i] = text('through', 42, '');\n"
	"});\n"
	"var slider = document.getElementById('slider'), timer = null;\n"
	"slider.max = S;\n"
	"function label(i) { return i == -1 ? 'the policy' : i == -2 ? 'a worker' : components[i].name + (components[i].worker >= 0 ? ' ' + components[i].worker : ''); }\n"
	"function show(k) {\n"
	"  k = Math.max(0, Math.min(S, k)); slider.value = k;\n"
	"  var held = components.map(function () { return 0; }), went = held.slice(), entered = 0, left = 0;\n"
	"  for (var s = 0; s < k; s++) { var m = steps[s];\n"
	"    if (m[2] >= 0) held[m[2]]--; else entered++;\n"
	"    if (m[3] >= 0) { held[m[3]]++; went[m[3]]++; } else if (m[3] == -2) left++; else entered--; }\n"
	"  components.forEach(function (c, i) { counts[i].textContent = held[i] + ' task' + (held[i] == 1 ? '' : 's');\n"
	"    through[i].textContent = went[i] + ' passed';\n"
	"    boxes[i].setAttribute('class', k && (steps[k - 1][2] == i || steps[k - 1][3] == i) ? 'active' : (held[i] ? 'busy' : '')); });\n"
	"  document.getElementById('step').textContent = k;\n"
	"  document.getElementById('entered').textContent = entered;\n"
	"  document.getElementById('left').textContent = left;\n"
	"  var m = k ? steps[k - 1] : null;\n"
	"  document.getElementById('move').textContent = m ? 'at ' + m[0].toFixed(6) + ' ms, task ' + m[1] + ' went from ' + label(m[2]) +\n"
	"    ' to ' + label(m[3]) + (m[4] ? ' (pulled)' : '') : 'no task moved yet';\n"
	"}\n"
	"slider.oninput = function () { show(+slider.value); };\n"
	"document.getElementById('play').onclick = function () {\n"
	"  if (timer) { clearInterval(timer); timer = null; return; }\n"
	"  if (+slider.value >= S) show(0);\n"
	"  timer = setInterval(function () { show(+slider.value + 1); if (+slider.value >= S) { clearInterval(timer); timer = null; } }, 200); };\n"
	"var at = /step=(\\d+)/.exec(location.hash);\n"
	"document.getElementById('nsteps').textContent = S;\n"
	"document.getElementById('ncomponents').textContent = N;\n"
	"show(at ? +at[1] : S);\n";

static void *trace_html_begin(const struct astro_trace_format_options *options)
{
	FILE *f = trace_format_open(options, "trace.html");
	if (!f)
		return NULL;
	struct trace_html *h = g_new0(struct trace_html, 1);
	h->f = f;
	h->prefix = g_strdup("");
	h->index = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	h->names = g_ptr_array_new_with_free_func(g_free);
	h->workers = g_array_new(FALSE, FALSE, sizeof(int));
	h->edges = g_array_new(FALSE, FALSE, sizeof(int));
	h->of_worker = g_hash_table_new(g_direct_hash, g_direct_equal);
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>Task flow between the scheduling components</title>\n"
	      "<style>body{font-family:sans-serif} rect{fill:#eef;stroke:#446} rect.busy{fill:#cfc} rect.active{fill:#fc6} "
	      "text{font-size:12px} text.name{font-weight:bold}</style>\n</head><body>\n"
	      "<h1>Task flow between the scheduling components</h1>\n"
	      "<p>Step <span id=\"step\"></span> of <span id=\"nsteps\"></span>; <span id=\"ncomponents\"></span> components; "
	      "<span id=\"entered\"></span> tasks pushed into the tree, <span id=\"left\"></span> taken by workers. "
	      "<span id=\"move\"></span></p>\n"
	      "<p><button id=\"play\">play / pause</button> <input type=\"range\" id=\"slider\" min=\"0\" value=\"0\" style=\"width:60%\"> "
	      "(or open this page as trace.html#step=N)</p>\n"
	      "<svg id=\"tree\" xmlns=\"http://www.w3.org/2000/svg\" width=\"10\" height=\"10\"></svg>\n"
	      "<script>\n/* [date (ms), task, from, to, pulled]; -1: the policy (to -1: a component refused it), -2: a worker */\nvar steps = [\n",
	      f);
	return h;
}

static void trace_html_process(void *state, const struct astro_trace_process *p)
{
	struct trace_html *h = state;
	g_free(h->prefix);
	h->prefix = g_strdup(p->prefix);
}

static void component(struct trace_html *h, uint64_t id, const char *name, int worker);

static int index_of(struct trace_html *h, uint64_t id)
{
	gpointer v = g_hash_table_lookup(h->index, &id);
	if (v)
		return GPOINTER_TO_INT(v) - 1;
	/* Not declared (made before the trace started): known by its moves. */
	component(h, id, "component", -1);
	return (int)h->names->len - 1;
}

/* Component id (unique in the conversion) is named name; worker >= 0 for a worker component. */
static void component(struct trace_html *h, uint64_t id, const char *name, int worker)
{
	gpointer v = g_hash_table_lookup(h->index, &id);
	int i;
	if (v) {
		/* Declared again (a worker component says its worker once set up). */
		i = GPOINTER_TO_INT(v) - 1;
		g_free(g_ptr_array_index(h->names, i));
		g_ptr_array_index(h->names, i) = g_strdup(name);
		g_array_index(h->workers, int, i) = worker;
	} else {
		uint64_t *key = g_new(uint64_t, 1);
		*key = id;
		i = (int)h->names->len;
		g_ptr_array_add(h->names, g_strdup(name));
		g_array_append_val(h->workers, worker);
		g_hash_table_insert(h->index, key, GINT_TO_POINTER(i + 1));
	}
	if (worker >= 0)
		g_hash_table_insert(h->of_worker, GINT_TO_POINTER(worker + 1), GINT_TO_POINTER(i + 1));
}

/* At date, job goes from component from (-1: the policy; -2: out of the tree, to a worker) into component to. */
static void step(struct trace_html *h, uint64_t date, uint64_t job, int from, int to, int pull)
{
	fprintf(h->f, "%s[%.6f,\"%s%" PRIu64 "\",%d,%d,%d]", h->nsteps ? ",\n" : "", (double)date / 1e6, h->prefix, job, from, to, pull);
	h->nsteps++;
}

static void trace_html_event(void *state, const struct astro_trace_event *e)
{
	struct trace_html *h = state;
	switch (e->kind) {
	case ASTRO_TRACE_EVENT_COMPONENT_NEW: {
		char *name = g_strdup_printf("%s%s", h->prefix, e->name);
		component(h, e->component, name, e->worker);
		g_free(name);
		break;
	}
	case ASTRO_TRACE_EVENT_COMPONENT_CONNECT: {
		int edge[2];
		edge[0] = index_of(h, e->from); /* in this order: index_of may declare either (C leaves an initializer's order open) */
		edge[1] = index_of(h, e->component);
		g_array_append_vals(h->edges, edge, 2);
		break;
	}
	case ASTRO_TRACE_EVENT_COMPONENT_PUSH:
	case ASTRO_TRACE_EVENT_COMPONENT_PULL: { /* 0: the policy, for a task it pushes or gets back */
		int from = e->from ? index_of(h, e->from) : -1; /* before the destination: either may be declared here */
		int to = e->component ? index_of(h, e->component) : -1;
		step(h, e->date, e->job, from, to, e->kind == ASTRO_TRACE_EVENT_COMPONENT_PULL);
		break;
	}
	case ASTRO_TRACE_EVENT_POP: {
		/* A worker takes the task out of the tree (its worker component), to run it. */
		gpointer v = e->worker >= 0 ? g_hash_table_lookup(h->of_worker, GINT_TO_POINTER(e->worker + 1)) : NULL;
		if (v) /* else: not a modular scheduler */
			step(h, e->date, e->job, GPOINTER_TO_INT(v) - 1, -2, 0);
		break;
	}
	default:
		break;
	}
}

/* Writes the components and the player. */
static int trace_html_end(void *state)
{
	struct trace_html *h = state;
	FILE *f = h->f;
	fputs("\n];\n</script>\n<script>\nvar components = [", f);
	for (guint i = 0; i < h->names->len; i++) {
		fputs(i ? ",\n{\"name\":" : "\n{\"name\":", f);
		trace_json_string(f, g_ptr_array_index(h->names, i));
		fprintf(f, ",\"worker\":%d}", g_array_index(h->workers, int, i));
	}
	fputs("];\nvar edges = [", f);
	for (guint i = 0; i + 1 < h->edges->len; i += 2)
		fprintf(f, "%s[%d,%d]", i ? "," : "", g_array_index(h->edges, int, i), g_array_index(h->edges, int, i + 1));
	fputs("];\n", f);
	if (!h->names->len)
		fputs("document.body.insertAdjacentHTML('beforeend', '<p id=\"none\">No scheduling component in this trace: "
		      "the run did not use a modular scheduler (STARPU_SCHED=modular-...).</p>');\n", f);
	fputs(player, f);
	fputs("</script>\n</body></html>\n", f);
	g_hash_table_destroy(h->index);
	g_ptr_array_free(h->names, TRUE);
	g_array_free(h->workers, TRUE);
	g_array_free(h->edges, TRUE);
	g_hash_table_destroy(h->of_worker);
	g_free(h->prefix);
	int ret = trace_format_close(f);
	g_free(h);
	return ret;
}

const struct astro_trace_format trace_html_format = {
	.abi_version = ASTRO_TRACE_FORMAT_ABI_VERSION,
	.name = "trace_html",
	.description = "trace.html: the task flow between the components of a modular scheduler, for a browser",
	.begin = trace_html_begin,
	.process = trace_html_process,
	.event = trace_html_event,
	.end = trace_html_end,
};
