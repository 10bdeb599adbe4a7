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
 */
#include <glib.h>
#include <inttypes.h>
#include <stdbool.h>
#include "json.h"
#include "trace_html.h"

struct trace_html
{
	FILE *f;
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

struct trace_html *trace_html_begin(FILE *f)
{
	struct trace_html *h = g_new0(struct trace_html, 1);
	h->f = f;
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

static int index_of(struct trace_html *h, uint64_t id)
{
	gpointer v = g_hash_table_lookup(h->index, &id);
	if (v)
		return GPOINTER_TO_INT(v) - 1;
	/* Not declared (made before the trace started): known by its moves. */
	trace_html_component(h, id, "component", -1);
	return (int)h->names->len - 1;
}

void trace_html_component(struct trace_html *h, uint64_t id, const char *name, int worker)
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

void trace_html_connect(struct trace_html *h, uint64_t parent, uint64_t child)
{
	int e[2] = { index_of(h, parent), index_of(h, child) };
	g_array_append_vals(h->edges, e, 2);
}

static void step(struct trace_html *h, double ms, const char *job, int from, int to, int pull)
{
	fprintf(h->f, "%s[%.6f,\"%s\",%d,%d,%d]", h->nsteps ? ",\n" : "", ms, job, from, to, pull);
	h->nsteps++;
}

void trace_html_move(struct trace_html *h, double ms, const char *job, uint64_t from, uint64_t to, int pull)
{
	step(h, ms, job, from ? index_of(h, from) : -1, to ? index_of(h, to) : -1, pull);
}

void trace_html_pop(struct trace_html *h, double ms, const char *job, int worker)
{
	gpointer v = g_hash_table_lookup(h->of_worker, GINT_TO_POINTER(worker + 1));
	if (v) /* else: not a modular scheduler */
		step(h, ms, job, GPOINTER_TO_INT(v) - 1, -2, 0);
}

void trace_html_end(struct trace_html *h)
{
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
	g_free(h);
}
