/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * paje.trace: StarPU's Pajé trace (ViTE, pj_dump), written through the
 * trace format API (astrolabe/trace_format.h) from the converter's stream,
 * with StarPU 1.4's event definitions, containers, aliases, fields and
 * number formats (the project's notes on traces). Built into the converter;
 * -o NAME names the file, -no-format paje leaves it out.
 *
 * What each callback gives becomes Pajé lines as it comes: an archive
 * (process) its program, scheduler, MPI and memory-node containers, a
 * location its thread and worker (or user thread) containers, a state its
 * worker (WS) or user-thread (US) state (a task's with its extended event
 * 20 and its scheduling context's, ctxstates.c), counters their variables,
 * events their Pajé events, memory-manager states, transfers' links and,
 * with -memory-states, the details of memstates.c; the StarPU-MPI messages
 * become MPI links at the end; the copies between memory nodes and the messages give the bandwidth variables of
 * the memory managers and of the ranks (at the end too, from their begins and ends). What it keeps is what Pajé needs and the
 * stream does not repeat: the values and variable types defined, each
 * location's states entered (its parent state comes back at a leave), the
 * memory nodes made, the transfers in flight and those ended. The
 * GFlop/s variables (known at a task's end) and the copies' bandwidths come
 * dated back: the file is then put in time order at the end (paje_sort.c).
 */
#include <errno.h>
#include <glib.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "builtin_formats.h"
#include "ctxstates.h"
#include "format_common.h"
#include "memstates.h"
#include "paje_sort.h"

#define STACK_DEPTH 32 /* the states remembered per location, as the converter's stack of regions */

/* A location's containers and the states it entered. */
struct paje_location
{
	bool worker;
	char alias[64];          /* its states' container: w<worker id> or t<thread>, with the archive's prefix */
	unsigned depth;
	const char *stack[STACK_DEPTH]; /* the aliases of the states entered and not left (interned: they outlive the archive) */
	GArray *transfers;       /* struct paje_transfer: those begun here and not ended */
};

/* A copy between memory nodes begun and not ended: its link's key, what its bandwidth needs. */
struct paje_transfer
{
	unsigned id;
	unsigned src, dst;
	double begin_ms;
	uint64_t size;
};

/* Bytes that flowed from one container to another between two dates: a copy between memory nodes (the bwo_mm of
 * its source's memory manager, the bwi_mm of its destination's) or a StarPU-MPI message (the bwo_mpi / bwi_mpi of the
 * ranks' mpict). */
struct paje_flow
{
	double begin_ms, end_ms; /* end_ms never before begin_ms */
	uint64_t size;
	char from[32], to[32];   /* the containers' aliases */
};

/* A StarPU-MPI message, for its link and the bandwidth of the ranks' MPI communication containers. */
struct paje_message
{
	double send_ms, recv_ms; /* recv_ms never before send_ms */
	int src, dst;
	uint64_t tag, handle, size;
	char hname[32];          /* the sent handle's name, "-" when none */
};

/* One end of a flow (of an MPI link: the send, event 23 on the sender's mpict, or the receive, event 19 on the
 * receiver's). */
struct flow_end
{
	double time_ms;
	guint flow;
	bool end;
};

struct paje
{
	FILE *f;
	char *path;
	char *to;                   /* -o's absolute path, written at the end from path; NULL: path is the output */
	bool colors, no_events, no_counter, no_bus, no_flops, memory_states, use_task_color;
	GHashTable *defined_values; /* task names and "<type>\t<name>" of application states with a Pajé entity value */
	GHashTable *counter_types;  /* "ctr:" counter or "bst:" burst name -> its variable type's number + 1, over every archive */
	GHashTable *state_aliases;  /* a runtime state's name -> its alias (StarPU's "Sl"...) */
	GHashTable *names;          /* a task's or application state's name, interned: its own alias */
	bool dated_back;            /* lines were written behind later ones (GFlop/s): sorted at the end */
	unsigned ncomms;            /* the transfers' links, over every archive */
	GArray *messages;           /* struct paje_message, in the order of their receptions */
	GArray *copies;             /* struct paje_flow: the copies between memory nodes, in the order of their ends */
	/* The archive's. */
	char pre[16];
	int width;                  /* of the ranks in the prefixes */
	bool mpi;
	uint64_t nodes_made;        /* bit n: memory node n's containers are written */
	unsigned node_depth[64];    /* the states pushed on each memory manager and not popped */
	GHashTable *locations;      /* id -> struct paje_location */
	GHashTable *by_name;        /* a location's name -> its struct paje_location (the GFlop/s counters name it) */
};

static double ms(uint64_t date)
{
	return (double)date / 1e6;
}

/* ------------------------------------------------------------ header */

static const char *const paje_defs[] = {
	"PajeDefineContainerType 1", "Alias string", "Type string", "Name string", NULL,
	"PajeDefineEventType 2", "Alias string", "Type string", "Name string", "Color color", NULL,
	"PajeDefineStateType 3", "Alias string", "Type string", "Name string", NULL,
	"PajeDefineVariableType 4", "Alias string", "Type string", "Name string", NULL,
	"PajeDefineLinkType 5", "Alias string", "Type string", "StartContainerType string", "EndContainerType string", "Name string", NULL,
	"PajeDefineEntityValue 6", "Alias string", "Type string", "Name string", "Color color", NULL,
	"PajeCreateContainer 7", "Time date", "Alias string", "Type string", "Container string", "Name string", NULL,
	"PajeDestroyContainer 8", "Time date", "Name string", "Type string", NULL,
	"PajeNewEvent 9", "Time date", "Type string", "Container string", "Value string", NULL,
	"PajeSetState 10", "Time date", "Container string", "Type string", "Value string", NULL,
	"PajePushState 11", "Time date", "Container string", "Type string", "Value string", NULL,
	"PajePopState 12", "Time date", "Container string", "Type string", NULL,
	"PajeSetVariable 13", "Time date", "Container string", "Type string", "Value double", NULL,
	"PajeAddVariable 14", "Time date", "Type string", "Container string", "Value double", NULL,
	"PajeSubVariable 15", "Time date", "Type string", "Container string", "Value double", NULL,
	"PajeStartLink 18", "Time date", "Type string", "Container string", "Value string", "StartContainer string", "Key string", NULL,
	"PajeEndLink 19", "Time date", "Type string", "Container string", "Value string", "EndContainer string", "Key string", NULL,
	"PajeSetState 20", "Time date", "Container string", "Type string", "Value string", "Size string", "Params string",
	"Footprint string", "Tag string", "JobId string", "SubmitOrder string", "Priority string", "GFlop string", "X string",
	"Y string", "Iteration string", "Subiteration string", "NumaNodes string", NULL,
	"PajeSetState 21", "Time date", "Container string", "Type string", "Value string", "Size string", "Params string",
	"Footprint string", "Tag string", "JobId string", "SubmitOrder string", NULL,
	"PajeStartLink 23", "Time date", "Type string", "Container string", "Value string", "StartContainer string", "Key string",
	"MPITAG string", "MPIType string", "Priority string", "Handle string", "HName string", "X string", "Y string", NULL,
	"PajeStartLink 24", "Time date", "Type string", "Container string", "Value string", "StartContainer string", "Key string",
	"Handle string", "HName string", "X string", "Y string", NULL,
	"PajeSetState 26", "Time date", "Container string", "Type string", "Value string", "JobId string", NULL,
	NULL,
};

/* Worker/thread state values of StarPU (alias, name, colour). */
static const char *const thread_states[][3] = {
	{ "I", "Idle", ".9 .1 .0" }, { "In", "Initializing", "0.0 .7 1.0" }, { "D", "Deinitializing", "0.0 .1 .7" },
	{ "Fi", "FetchingInput", "1.0 .1 1.0" }, { "Po", "PushingOutput", "0.1 1.0 1.0" }, { "C", "Callback", ".0 .3 .8" },
	{ "B", "Overhead", ".5 .18 .0" }, { "Ps", "Parallel sync", ".5 .18 1.0" }, { "E", "Executing", ".0 .6 .5" },
	{ "Sc", "Scheduling", ".7 .36 .0" }, { "Sl", "Sleeping", ".9 .1 .0" }, { "P", "Progressing", ".1 .3 .1" },
	{ "U", "Unpartitioning", ".0 .0 1.0" }, { "H", "Hypervisor", ".5 .18 .0" }, { "Bu", "Building task", ".5 .18 .0" },
	{ "Su", "Submitting task", ".3 .09 .0" }, { "Th", "Throttling task submission", ".8 .6 .6" },
};
static const char *const user_states[][3] = {
	{ "C", "Callback", ".0 .3 .8" }, { "Sc", "Scheduling", ".7 .36 .0" }, { "Bu", "Building task", ".5 .18 .0" },
	{ "Su", "Submitting task", ".3 .09 .0" }, { "Th", "Throttling task submission", ".8 .6 .6" },
	{ "W", "Waiting task", ".9 .1 .0" }, { "WA", "Waiting all tasks", ".9 .1 .0" }, { "No", "Nothing", ".0 .0 .0" },
};
static const char *const memory_states[][3] = {
	{ "No", "Nothing", ".0 .0 .0" }, { "A", "Allocating", ".4 .1 .0" }, { "Ar", "AllocatingReuse", ".1 .1 .8" },
	{ "F", "Freeing", ".6 .3 .0" }, { "W", "WritingBack", ".0 .0 .5" }, { "Wa", "WritingBackAsync", ".0 .0 .4" },
	{ "R", "Reclaiming", ".0 .1 .6" }, { "Co", "DriverCopy", ".3 .5 .1" }, { "CoA", "DriverCopyAsync", ".1 .3 .1" },
};

/* Writes the %EventDef block of def (as in paje_defs: its name and number, then "Field type" entries up to NULL);
 * returns what follows it. */
static const char *const *paje_event_def(FILE *f, const char *const *def)
{
	fprintf(f, "%%EventDef %s\n", *def++);
	for (; *def; def++) {
		const char *space = strchr(*def, ' ');
		fprintf(f, "%%\t%.*s\t%s\n", (int)(space - *def), *def, space + 1);
	}
	fprintf(f, "%%EndEventDef\n");
	return def + 1;
}

static void paje_header(struct paje *p)
{
	FILE *f = p->f;
	for (const char *const *d = paje_defs; *d;) {
		if (p->memory_states && strcmp(*d, "PajeStartLink 23") == 0)
			paje_event_def(f, memstates_event_def); /* in its place, between 21 and 23 */
		d = paje_event_def(f, d);
	}
	static const char *const types[] = {
		"1\tMPIP\t0\t\"MPI Program\"", "1\tP\tMPIP\tProgram", "1\tMn\tP\t\"Memory Node\"", "1\tT\tMn\tThread",
		"1\tUT\tP\t\"User Thread\"", "1\tMm\tMn\t\"Memory Manager\"", "1\tW\tT\tWorker",
		"1\tMPICt\tP\t\"MPI Communication Thread\"", "1\tSc\tP\t\"Scheduler State\"",
		"2\tprog_event\tP\t\"program event type\"\t\"1.0 1.0 1.0\"", "2\tpu\tP\t\"Task Push\"\t\"1.0 1.0 1.0\"",
		"2\tpo\tP\t\"Task Pop\"\t\"1.0 1.0 1.0\"", "2\tregister\tP\t\"data registration\"\t\"1.0 1.0 1.0\"",
		"2\tunregister\tP\t\"data unregistration\"\t\"1.0 1.0 1.0\"", "2\tuser_event\tP\t\"user event type\"\t\"1.0 1.0 1.0\"",
		"2\tthread_event\tT\t\"thread event type\"\t\"1.0 1.0 1.0\"", "2\tuser_user_event\tUT\t\"user event type\"\t\"1.0 1.0 1.0\"",
		"2\tuser_thread_event\tUT\t\"thread event type\"\t\"1.0 1.0 1.0\"",
		"3\tS\tT\t\"Thread State\"", "3\tWS\tW\t\"Worker State\"", "3\tUS\tUT\t\"User Thread State\"",
		"3\tMS\tMm\t\"Memory Node State\"",
		"4\tnsubmitted\tSc\t\"Number of Submitted Uncompleted Tasks\"", "4\tnready\tSc\t\"Number of Ready Tasks\"",
		"4\tgft\tSc\t\"Total GFlop/s\"", "4\tuse\tMm\t\"Used (MB)\"", "4\tbwi_mm\tMm\t\"Bandwidth In (MB/s)\"",
		"4\tbwo_mm\tMm\t\"Bandwidth Out (MB/s)\"", "4\tgf\tW\t\"GFlop/s\"",
		"4\tbwi_mpi\tMPICt\t\"Bandwidth In (MB/s)\"", "4\tbwo_mpi\tMPICt\t\"Bandwidth Out (MB/s)\"",
		"5\tF\tP\tMm\tMm\t\"Intra-node data Fetch\"", "5\tTF\tP\tMm\tMm\t\"Intra-node data TaskPreFetch\"",
		"5\tPF\tP\tMm\tMm\t\"Intra-node data PreFetch\"", "5\tIF\tP\tMm\tMm\t\"Intra-node data IdleFetch\"",
		"5\tWSL\tP\tW\tW\t\"Work steal\"", "5\tMPIL\tMPIP\tMPICt\tMPICt\t\"MPI communication\"",
		NULL,
	};
	for (const char *const *t = types; *t; t++) {
		fprintf(f, "%s\n", *t);
		if (strcmp(*t, "3\tWS\tW\t\"Worker State\"") == 0)
			ctxstates_types(f);
	}
	if (p->memory_states)
		memstates_event_types(f);
	for (size_t i = 0; i < G_N_ELEMENTS(thread_states); i++) {
		fprintf(f, "6\t%s\tS\t\"%s\"\t\"%s\"\n", thread_states[i][0], thread_states[i][1], thread_states[i][2]);
		fprintf(f, "6\t%s\tWS\t\"%s\"\t\"%s\"\n", thread_states[i][0], thread_states[i][1], thread_states[i][2]);
		ctxstates_state_values(f, thread_states[i][0], thread_states[i][1], thread_states[i][2]);
	}
	for (size_t i = 0; i < G_N_ELEMENTS(user_states); i++)
		fprintf(f, "6\t%s\tUS\t\"%s\"\t\"%s\"\n", user_states[i][0], user_states[i][1], user_states[i][2]);
	for (size_t i = 0; i < G_N_ELEMENTS(memory_states); i++)
		fprintf(f, "6\t%s\tMS\t\"%s\"\t\"%s\"\n", memory_states[i][0], memory_states[i][1], memory_states[i][2]);
	fprintf(f, "7\t0.000000000\tMPIroot\tMPIP\t0\troot\n");
}

static void free_location(gpointer data)
{
	struct paje_location *l = data;
	g_array_free(l->transfers, TRUE);
	g_free(l);
}

static void *paje_begin(const struct astro_trace_format_options *options)
{
	const char *name = options->paje && *options->paje ? options->paje : "paje.trace";
	/* -o with an absolute path (StarVZ's -o /dev/stdout): written beside the other outputs, then into it at the end. */
	bool elsewhere = g_path_is_absolute(name);
	char *path = g_build_filename(options->dir, elsewhere ? ".paje.trace.out" : name, NULL);
	FILE *f = fopen(path, "w");
	if (!f) {
		g_free(path);
		return NULL;
	}
	struct paje *p = g_new0(struct paje, 1);
	p->f = f;
	p->path = path;
	p->to = elsewhere ? g_strdup(name) : NULL;
	p->colors = options->colors;
	p->no_events = options->no_events;
	p->no_counter = options->no_counter;
	p->no_bus = options->no_bus;
	p->no_flops = options->no_flops;
	p->memory_states = options->memory_states;
	p->use_task_color = options->use_task_color;
	p->defined_values = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	p->counter_types = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	p->state_aliases = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	p->names = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	p->messages = g_array_new(FALSE, FALSE, sizeof(struct paje_message));
	p->copies = g_array_new(FALSE, FALSE, sizeof(struct paje_flow));
	p->locations = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, free_location);
	p->by_name = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	paje_header(p);
	return p;
}

/* ------------------------------------------------------------ containers */

/* Memory node node's containers (StarPU's mn<N> and its manager mm<N>), made at date_ms the first time it is named. */
static void memory_node(struct paje *p, unsigned node, double date_ms)
{
	if (node >= 64 || (p->nodes_made >> node & 1))
		return;
	p->nodes_made |= UINT64_C(1) << node;
	FILE *f = p->f;
	const char *P = p->pre;
	fprintf(f, "7\t%.9f\t%smn%u\tMn\t%sp\t%sMEMNODE%u\n", date_ms, P, node, P, P, node);
	fprintf(f, "7\t%.9f\t%smm%u\tMm\t%smn%u\t%sMEMMANAGER%u\n", date_ms, P, node, P, node, P, node);
	if (!p->no_bus) {
		fprintf(f, "13\t%.9f\t%smm%u\tuse\t0.000000\n", date_ms, P, node);
		fprintf(f, "13\t%.9f\t%smm%u\tbwi_mm\t0.000000\n", date_ms, P, node);
		fprintf(f, "13\t%.9f\t%smm%u\tbwo_mm\t0.000000\n", date_ms, P, node);
	}
}

/* An archive: the program and scheduler containers, the MPI communication one of a StarPU-MPI process, memory node 0. */
static void paje_process(void *state, const struct astro_trace_process *process)
{
	struct paje *p = state;
	FILE *f = p->f;
	g_strlcpy(p->pre, process->prefix, sizeof(p->pre));
	p->width = process->multi && *p->pre ? (int)strlen(p->pre) - 1 : 1;
	p->mpi = process->mpi;
	p->nodes_made = 0;
	memset(p->node_depth, 0, sizeof(p->node_depth));
	g_hash_table_remove_all(p->by_name);
	g_hash_table_remove_all(p->locations);
	const char *P = p->pre;
	fprintf(f, "7\t0.000000000\t%sp\tP\tMPIroot\t%sprogram\n", P, P);
	fprintf(f, "7\t0.000000000\t%ssched\tSc\t%sp\t%sscheduler\n", P, P, P);
	if (!p->no_counter) {
		fprintf(f, "13\t0.000000000\t%ssched\tnsubmitted\t0.000000\n", P);
		fprintf(f, "13\t0.000000000\t%ssched\tnready\t0.000000\n", P);
	}
	if (!p->no_flops)
		fprintf(f, "13\t0.000000000\t%ssched\tgft\t0.000000\n", P);
	if (p->mpi) { /* the two ends of its messages' links, the bandwidth of those in flight */
		fprintf(f, "7\t0.000000000\t%smpict\tMPICt\t%sp\t%smpict\n", P, P, P);
		if (!p->no_bus) {
			fprintf(f, "13\t0.000000000\t%smpict\tbwi_mpi\t0.000000\n", P);
			fprintf(f, "13\t0.000000000\t%smpict\tbwo_mpi\t0.000000\n", P);
		}
	}
	memory_node(p, 0, 0.0);
}

/* A worker's thread (t<OS id>, named T<its CPU>) and worker containers, or a user thread's. */
static void paje_location(void *state, const struct astro_trace_location *where)
{
	struct paje *p = state;
	FILE *f = p->f;
	const char *P = p->pre;
	struct paje_location *l = g_new0(struct paje_location, 1);
	l->worker = where->workerid >= 0;
	l->transfers = g_array_new(FALSE, FALSE, sizeof(struct paje_transfer));
	if (l->worker) {
		snprintf(l->alias, sizeof(l->alias), "%sw%d", P, where->workerid);
		/* An older archive has neither the thread's OS id nor its CPU: the worker's id. */
		long thread = where->tid ? where->tid : where->workerid;
		fprintf(f, "7\t0.000000000\t%st%ld\tT\t%smn0\t%sT%d\n", P, thread, P, P, where->bindid >= 0 ? where->bindid : where->workerid);
		fprintf(f, "7\t0.000000000\t%s\tW\t%st%ld\t%s%s\n", l->alias, P, thread, P, where->name);
		if (!p->no_flops)
			fprintf(f, "13\t0.000000000\t%s\tgf\t0.000000\n", l->alias);
	} else {
		/* Application threads are named UserThread<n>: t<n>. */
		const char *n = strlen(where->name) >= strlen("UserThread") ? where->name + strlen("UserThread") : "";
		snprintf(l->alias, sizeof(l->alias), "%st%ld", P, strtol(n, NULL, 10));
		fprintf(f, "7\t0.000000000\t%s\tUT\t%sp\t%s%s\n", l->alias, P, P, where->name);
	}
	uint64_t *id = g_new(uint64_t, 1);
	*id = where->id;
	g_hash_table_replace(p->locations, id, l);
	g_hash_table_replace(p->by_name, g_strdup(where->name), l);
}

static struct paje_location *location_of(struct paje *p, const struct astro_trace_location *where)
{
	return where ? g_hash_table_lookup(p->locations, &where->id) : NULL;
}

/* ------------------------------------------------------------ states */

/* A state's Pajé alias: a task's or an application state's own name, StarPU's for a runtime state; interned. */
static const char *alias_of(struct paje *p, const struct astro_trace_state *s)
{
	GHashTable *table = s->is_task || s->is_user ? p->names : p->state_aliases;
	const char *alias = g_hash_table_lookup(table, s->name);
	if (alias)
		return alias;
	const char *category;
	char *name = g_strdup(s->name);
	alias = s->is_task || s->is_user ? name : trace_state_alias(name, &category);
	g_hash_table_insert(table, name, (gpointer)alias);
	return alias;
}

static void define_task_value(struct paje *p, const char *name, const struct astro_trace_task *t)
{
	if (g_hash_table_contains(p->defined_values, name))
		return;
	g_hash_table_add(p->defined_values, g_strdup(name));
	double rgb[3] = { 0.0, 0.6, 0.4 };
	if (t->color) {
		rgb[0] = ((t->color >> 16) & 0xff) / 255.0;
		rgb[1] = ((t->color >> 8) & 0xff) / 255.0;
		rgb[2] = (t->color & 0xff) / 255.0;
	} else if (p->colors) {
		trace_hashed_color(name, rgb);
	}
	fputs("6\t", p->f);
	paje_word(p->f, name);
	fputs("\tWS\t", p->f);
	paje_word(p->f, name);
	fprintf(p->f, "\t\"%f %f %f\"\n", rgb[0], rgb[1], rgb[2]);
	ctxstates_task_values(p->f, name, rgb, p->use_task_color);
}

/* An application state's value for container type type (WS or US), defined before its first use. */
static void define_user_state(struct paje *p, const char *name, const char *type)
{
	char *key = g_strdup_printf("%s\t%s", type, name);
	if (g_hash_table_contains(p->defined_values, key)) {
		g_free(key);
		return;
	}
	g_hash_table_add(p->defined_values, key);
	double rgb[3];
	trace_hashed_color(name, rgb);
	fputs("6\t", p->f);
	paje_word(p->f, name);
	fprintf(p->f, "\t%s\t", type);
	paje_word(p->f, name);
	fprintf(p->f, "\t\"%f %f %f\"\n", rgb[0], rgb[1], rgb[2]);
}

/* A task's Params: the descriptions of its first 8 handles, separated by sep ("nodata": none). */
static void params_of(const struct astro_trace_task *t, GString *out, char sep)
{
	if (!t->nhandles) {
		g_string_append(out, "nodata");
		return;
	}
	for (unsigned i = 0; i < t->nhandles && i < 8; i++) {
		const char *d = t->descriptions ? t->descriptions[i] : NULL;
		if (i)
			g_string_append_c(out, sep);
		const char *desc = d && *d ? d : "0";
		for (const char *s = desc; *s; s++)
			g_string_append_c(out, (sep == '_' && (*s == ' ' || *s == '\t')) ? '_' : *s);
	}
}

/* Worker alias runs task t from date_ms: its value (defined at its first use), events 10 and 20, its context's state. */
static void task_begin(struct paje *p, const char *alias, double date_ms, const struct astro_trace_task *t)
{
	FILE *f = p->f;
	const char *name = trace_format_task_name(t);
	define_task_value(p, name, t);
	GString *params = g_string_new(NULL);
	params_of(t, params, '_');
	fprintf(f, "10\t%.9f\t%s\tWS\t", date_ms, alias);
	paje_word(f, name);
	fprintf(f, "\n20\t%.9f\t%s\tWS\t", date_ms, alias);
	paje_word(f, name);
	fprintf(f, "\t%" PRIu64 "\t", t->size);
	paje_word(f, params->str);
	/* X, Y: the coordinates of the first handle the task writes. */
	int x = 0, y = 0;
	for (unsigned i = 0; i < t->nhandles; i++) {
		if (!(t->handles[i].mode & 2)) /* STARPU_W */
			continue;
		const char *coordinates = t->coordinates ? t->coordinates[i] : NULL;
		if (coordinates)
			sscanf(coordinates, "%d %d", &x, &y);
		break;
	}
	fprintf(f, "\t%08x\t%016" PRIx64 "\t%s%" PRIu64 "\t%s%" PRIu64 "\t%d\t%f\t%d\t%d\t%" PRId64 "\t%" PRId64 "\t\"-1\"\n",
		t->footprint, t->tag, p->pre, t->job, p->pre, t->job, t->priority, (double)(uint64_t)(t->flops / 1e3) / 1e6, x, y,
		t->iteration, t->subiteration);
	if (t->sched_ctx && t->sched_ctx <= CTXSTATES_N) {
		char job[48];
		snprintf(job, sizeof(job), "%s%" PRIu64, p->pre, t->job);
		ctxstates_task_begin(f, date_ms, alias, t->sched_ctx, name, t->size, params->str, t->footprint, t->tag, job);
	}
	g_string_free(params, TRUE);
}

/* A worker's state changes to alias (aliases never hold a quote: paje_word's rule). */
static void worker_state(struct paje *p, const struct paje_location *l, double date_ms, const char *alias)
{
	fprintf(p->f, "10\t%.9f\t%s\tWS\t\"%s\"\n", date_ms, l->alias, alias);
}

/* A worker's state is set (StarPU's SetState: left, its parent state comes back, Overhead at the top); a user
 * thread's is pushed and popped. */
static void paje_state(void *state, const struct astro_trace_state *s)
{
	struct paje *p = state;
	struct paje_location *l = location_of(p, s->location);
	if (!l)
		return;
	const char *alias = alias_of(p, s);
	if (!s->left) {
		if (l->depth < STACK_DEPTH)
			l->stack[l->depth] = alias;
		l->depth++;
		if (s->is_task) {
			if (s->task)
				task_begin(p, l->alias, ms(s->begin), s->task);
			return;
		}
		if (s->is_user)
			define_user_state(p, s->name, l->worker ? "WS" : "US");
		if (l->worker) {
			worker_state(p, l, ms(s->begin), alias);
		} else {
			fprintf(p->f, "11\t%.9f\t%s\tUS\t", ms(s->begin), l->alias);
			paje_word(p->f, alias);
			fputc('\n', p->f);
		}
		return;
	}
	if (!l->depth)
		return;
	l->depth--;
	const char *parent = l->depth && l->depth <= STACK_DEPTH ? l->stack[l->depth - 1] : NULL;
	if (l->worker)
		worker_state(p, l, ms(s->end), parent ? parent : "B");
	else
		fprintf(p->f, "12\t%.9f\t%s\tUS\n", ms(s->end), l->alias);
}

/* ------------------------------------------------------------ variables */

/* A value of a variable of the program container: kind "ctr" (a sampled counter) or "bst" (a burst's key), type
 * <kind><n> named name, defined at its first value (the numbers are shared by every kind and archive). */
static void program_variable(struct paje *p, const char *kind, const char *name, uint64_t date, double value)
{
	char key[512];
	snprintf(key, sizeof(key), "%s:%s", kind, name);
	guint type = GPOINTER_TO_UINT(g_hash_table_lookup(p->counter_types, key));
	if (!type) {
		type = g_hash_table_size(p->counter_types) + 1;
		g_hash_table_insert(p->counter_types, g_strdup(key), GUINT_TO_POINTER(type));
		fprintf(p->f, "4\t%s%u\tP\t", kind, type - 1);
		paje_word(p->f, name);
		fputc('\n', p->f);
	}
	fprintf(p->f, "13\t%.9f\t%sp\t%s%u\t%f\n", ms(date), p->pre, kind, type - 1, value);
}

/* A burst's value that has a name (the event-key dictionary): an event of the program container, of type
 * "<key> value" (bsv<n>, defined at its first event), showing the name. */
static void burst_value_name(struct paje *p, const struct astro_trace_counter *c)
{
	char key[512];
	snprintf(key, sizeof(key), "bsv:%s", c->name);
	guint type = GPOINTER_TO_UINT(g_hash_table_lookup(p->counter_types, key));
	if (!type) {
		type = g_hash_table_size(p->counter_types) + 1;
		g_hash_table_insert(p->counter_types, g_strdup(key), GUINT_TO_POINTER(type));
		char *name = g_strconcat(c->name, " value", NULL);
		fprintf(p->f, "2\tbsv%u\tP\t", type - 1);
		paje_word(p->f, name);
		fputs("\t\"1.0 1.0 1.0\"\n", p->f);
		g_free(name);
	}
	fprintf(p->f, "9\t%.9f\tbsv%u\t%sp\t", ms(c->date), type - 1, p->pre);
	paje_word(p->f, c->label);
	fputc('\n', p->f);
}

static void paje_counter(void *state, const struct astro_trace_counter *c)
{
	struct paje *p = state;
	switch (c->kind) {
	case ASTRO_TRACE_COUNTER_RUNTIME:
		fprintf(p->f, "13\t%.9f\t%ssched\t%s\t%f\n", ms(c->date), p->pre, c->name, c->value);
		break;
	case ASTRO_TRACE_COUNTER_GFLOPS:
		/* Known at a task's end, dated back: the file is sorted at the end. */
		p->dated_back = true;
		if (strcmp(c->name, "GFlop/s") == 0) {
			fprintf(p->f, "13\t%.9f\t%ssched\tgft\t%f\n", ms(c->date), p->pre, c->value);
		} else if (g_str_has_prefix(c->name, "GFlop/s ")) {
			const struct paje_location *l = g_hash_table_lookup(p->by_name, c->name + strlen("GFlop/s "));
			if (l)
				fprintf(p->f, "13\t%.9f\t%s\tgf\t%f\n", ms(c->date), l->alias, c->value);
		}
		break;
	case ASTRO_TRACE_COUNTER_SAMPLED:
		program_variable(p, "ctr", c->name, c->date, c->value);
		break;
	case ASTRO_TRACE_COUNTER_BURST:
		program_variable(p, "bst", c->name, c->date, c->value);
		if (c->label)
			burst_value_name(p, c);
		break;
	default: /* the memory managers' Used (MB): from the allocations (event) */
		break;
	}
}

static void paje_instant(void *state, const struct astro_trace_instant *i)
{
	struct paje *p = state;
	if (p->no_events)
		return;
	if (i->kind == 0) {
		fprintf(p->f, "9\t%.9f\tuser_event\t%sp\t%" PRIu64 "\n", ms(i->date), p->pre, i->value);
	} else if (i->kind == 1) {
		fprintf(p->f, "9\t%.9f\tprog_event\t%sp\t", ms(i->date), p->pre);
		paje_word(p->f, i->name);
		fputc('\n', p->f);
	}
}

/* ------------------------------------------------------------ memory managers */

/* Node holds bytes allocated now: its Used (MB). */
static void node_used(struct paje *p, unsigned node, uint64_t bytes, uint64_t date)
{
	if (node >= 64)
		return;
	memory_node(p, node, ms(date));
	fprintf(p->f, "13\t%.9f\t%smm%u\tuse\t%f\n", ms(date), p->pre, node, (double)bytes / (1 << 20));
}

/* Pushes state alias on node's manager, or pops its last one (alias NULL; none pushed: an end whose begin came
 * before recording started, left out). */
static void memory_state(struct paje *p, unsigned node, uint64_t date, const char *alias)
{
	if (node >= 64 || (!alias && !p->node_depth[node]))
		return;
	memory_node(p, node, ms(date));
	if (alias) {
		p->node_depth[node]++;
		fprintf(p->f, "11\t%.9f\t%smm%u\tMS\t%s\n", ms(date), p->pre, node, alias);
	} else {
		p->node_depth[node]--;
		fprintf(p->f, "12\t%.9f\t%smm%u\tMS\n", ms(date), p->pre, node);
	}
}

/* -memory-states: the details of a memory manager's state (StarPU's event 22): Al/AlE around an allocation (Info: 0, then
 * the bytes allocated), Fe/FeE around a free (its size), Wb/WbE around a write-back; a reclaim has none. */
static void memory_state_details(struct paje *p, const struct astro_trace_event *e)
{
	static const char *const states[] = { "A", "F", "W" };
	static const char *const names[][2] = { { "Al", "AlE" }, { "Fe", "FeE" }, { "Wb", "WbE" } };
	unsigned node = (unsigned)e->node, state = 0;
	while (state < G_N_ELEMENTS(states) && strcmp(states[state], e->name) != 0)
		state++;
	if (state >= G_N_ELEMENTS(states) || node >= 64)
		return;
	bool end = e->kind == ASTRO_TRACE_EVENT_MEMORY_STATE_END;
	memory_node(p, node, ms(e->date));
	memstates_event(p->f, ms(e->date), p->pre, node, names[state][end], 0, e->handle, state == 0 && end ? e->size : 0,
			state == 2 || end ? 0 : (int64_t)e->size, node);
}

/* A copy between memory nodes: the DriverCopy state of the destination's manager while it lasts, a link (F, com_<n>)
 * from the source's manager to the destination's, and its flow (its bandwidth, written at the end: bandwidths()). */
static void transfer(struct paje *p, struct paje_location *l, const struct astro_trace_event *e)
{
	unsigned src = (unsigned)e->src_node, dst = (unsigned)e->node;
	double date_ms = ms(e->date);
	const char *P = p->pre;
	memory_node(p, src, date_ms);
	memory_node(p, dst, date_ms);
	bool begin = e->kind == ASTRO_TRACE_EVENT_TRANSFER_BEGIN;
	memory_state(p, dst, e->date, begin ? "Co" : NULL);
	if (!l)
		return;
	unsigned id;
	if (begin) {
		struct paje_transfer t = { ++p->ncomms, src, dst, date_ms, e->size };
		id = t.id;
		g_array_append_val(l->transfers, t);
	} else if (l->transfers->len) {
		const struct paje_transfer *t = &g_array_index(l->transfers, struct paje_transfer, l->transfers->len - 1);
		id = t->id;
		struct paje_flow flow = { t->begin_ms, date_ms, t->size ? t->size : e->size, "", "" };
		snprintf(flow.from, sizeof(flow.from), "%smm%u", P, t->src);
		snprintf(flow.to, sizeof(flow.to), "%smm%u", P, t->dst);
		g_array_append_val(p->copies, flow);
		g_array_set_size(l->transfers, l->transfers->len - 1);
	} else {
		return; /* its begin came before recording started */
	}
	fprintf(p->f, "%d\t%.9f\tF\t%sp\t%" PRIu64 "\t%smm%u\t%scom_%u\n", begin ? 18 : 19, date_ms, P, e->size, P, begin ? src : dst,
		P, id);
	if (p->memory_states)
		memstates_event(p->f, date_ms, P, dst, begin ? "DCo" : "DCoE", 0, e->handle, id, (int64_t)e->size, src);
}

/* -memory-states: the coherency of the handles' copies and the memory requests, on the memory managers. */
static void coherency(struct paje *p, const struct astro_trace_event *e)
{
	unsigned src = (unsigned)e->src_node, dst = (unsigned)e->node;
	if (!p->memory_states || src >= 64 || dst >= 64)
		return;
	double date_ms = ms(e->date);
	memory_node(p, src, date_ms);
	memory_node(p, dst, date_ms);
	if (e->kind == ASTRO_TRACE_EVENT_DATA_STATE)
		memstates_data_state(p->f, date_ms, p->pre, dst, (unsigned)e->value, e->handle);
	else if (e->kind == ASTRO_TRACE_EVENT_WONT_USE)
		memstates_wont_use(p->f, date_ms, p->pre, e->handle);
	else /* a request: on the source's manager, StarPU's priority (none here) as its Size */
		memstates_event(p->f, date_ms, p->pre, src, "rc", (uint64_t)e->value, e->handle, e->prefetch, 0, dst);
}

static void paje_event(void *state, const struct astro_trace_event *e)
{
	struct paje *p = state;
	FILE *f = p->f;
	switch (e->kind) {
	case ASTRO_TRACE_EVENT_PUSH:
	case ASTRO_TRACE_EVENT_POP:
		if (!p->no_counter && !p->no_events)
			fprintf(f, "9\t%.9f\t%s\t%sp\t%s%" PRIu64 "\n", ms(e->date), e->kind == ASTRO_TRACE_EVENT_PUSH ? "pu" : "po", p->pre,
				p->pre, e->job);
		break;
	case ASTRO_TRACE_EVENT_REGISTER:
	case ASTRO_TRACE_EVENT_UNREGISTER:
		if (!p->no_events)
			fprintf(f, "9\t%.9f\t%s\t%sp\t%" PRIx64 "\n", ms(e->date), e->kind == ASTRO_TRACE_EVENT_REGISTER ? "register" : "unregister",
				p->pre, e->handle);
		break;
	case ASTRO_TRACE_EVENT_ALLOCATION:
		node_used(p, (unsigned)e->node, e->size, e->date);
		break;
	case ASTRO_TRACE_EVENT_MEMORY_STATE_BEGIN:
	case ASTRO_TRACE_EVENT_MEMORY_STATE_END:
		if (p->memory_states)
			memory_state_details(p, e);
		/* On the node's manager, pushed and popped as StarPU does (several threads may overlap there). */
		if (!p->no_bus)
			memory_state(p, (unsigned)e->node, e->date, e->kind == ASTRO_TRACE_EVENT_MEMORY_STATE_BEGIN ? e->name : NULL);
		break;
	case ASTRO_TRACE_EVENT_TRANSFER_BEGIN:
	case ASTRO_TRACE_EVENT_TRANSFER_END:
		if (!p->no_bus)
			transfer(p, location_of(p, e->location), e);
		break;
	case ASTRO_TRACE_EVENT_DATA_STATE:
	case ASTRO_TRACE_EVENT_WONT_USE:
	case ASTRO_TRACE_EVENT_DATA_REQUEST:
		coherency(p, e);
		break;
	default:
		break;
	}
}

/* ------------------------------------------------------------ MPI links */

static void paje_message(void *state, const struct astro_trace_message *m)
{
	struct paje *p = state;
	struct paje_message pm = { ms(m->send_date), ms(m->recv_date), m->src, m->dst, m->tag, m->send_handle, m->size, "-" };
	if (m->name)
		g_strlcpy(pm.hname, m->name, sizeof(pm.hname));
	g_array_append_val(p->messages, pm);
}

static gint by_flow_time(gconstpointer a, gconstpointer b)
{
	const struct flow_end *x = a, *y = b;
	if (x->time_ms != y->time_ms)
		return (x->time_ms > y->time_ms) - (x->time_ms < y->time_ms);
	return (x->end > y->end) - (x->end < y->end); /* a start before an end at the same date */
}

/* The begins and ends of flows (struct paje_flow), in time order (a new array of struct flow_end). */
static GArray *flow_ends(const GArray *flows)
{
	GArray *ends = g_array_sized_new(FALSE, FALSE, sizeof(struct flow_end), 2 * flows->len);
	for (guint i = 0; i < flows->len; i++) {
		const struct paje_flow *f = &g_array_index(flows, struct paje_flow, i);
		struct flow_end begin = { f->begin_ms, i, false }, end = { f->end_ms, i, true };
		g_array_append_val(ends, begin);
		g_array_append_val(ends, end);
	}
	g_array_sort(ends, by_flow_time);
	return ends;
}

/* Container alias's variable var (in sums, those of every container): changed by delta, written at time_ms. */
static void add_bandwidth(struct paje *p, GHashTable *sums, double time_ms, const char *alias, const char *var, double delta)
{
	char *key = g_strconcat(alias, "\t", var, NULL);
	double *sum = g_hash_table_lookup(sums, key);
	if (!sum) {
		sum = g_new0(double, 1);
		g_hash_table_insert(sums, key, sum);
	} else {
		g_free(key);
	}
	*sum += delta;
	if (*sum < 1e-9)
		*sum = 0; /* rounding, once the last flow in flight ended */
	fprintf(p->f, "13\t%.9f\t%s\t%s\t%f\n", time_ms, alias, var, *sum);
}

/* StarPU's bandwidth variables out (of each flow's source) and in (of its destination): the sum of the bandwidths of
 * the flows in flight (MB/s: 0.001 * bytes / ms, from its begin to its end; one of no duration has none), written at
 * each begin and end in time order (ends: flow_ends()). */
static void bandwidths(struct paje *p, const GArray *flows, const GArray *ends, const char *out, const char *in)
{
	if (p->no_bus)
		return;
	GHashTable *sums = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	for (guint i = 0; i < ends->len; i++) {
		const struct flow_end *e = &g_array_index(ends, struct flow_end, i);
		const struct paje_flow *f = &g_array_index(flows, struct paje_flow, e->flow);
		double duration = f->end_ms - f->begin_ms;
		if (duration <= 0)
			continue;
		double bw = 0.001 * (double)f->size / duration;
		add_bandwidth(p, sums, e->time_ms, f->from, out, e->end ? -bw : bw);
		add_bandwidth(p, sums, e->time_ms, f->to, in, e->end ? -bw : bw);
	}
	g_hash_table_destroy(sums);
}

/* The MPI links (StarPU's MPIL, mpicom_<n>), then the bwo_mpi / bwi_mpi variables of the sender's and the receiver's
 * mpict (bandwidths(): each message from its send to its receive), at the end of the file as StarPU writes them, in
 * time order (pj_dump wants each container's events so). */
static void write_mpi_links(struct paje *p)
{
	GArray *flows = g_array_sized_new(FALSE, FALSE, sizeof(struct paje_flow), p->messages->len);
	for (guint i = 0; i < p->messages->len; i++) {
		const struct paje_message *m = &g_array_index(p->messages, struct paje_message, i);
		struct paje_flow f = { m->send_ms, m->recv_ms, m->size, "", "" };
		snprintf(f.from, sizeof(f.from), "%0*d_mpict", p->width, m->src);
		snprintf(f.to, sizeof(f.to), "%0*d_mpict", p->width, m->dst);
		g_array_append_val(flows, f);
	}
	GArray *ends = flow_ends(flows);
	for (guint i = 0; i < ends->len; i++) {
		const struct flow_end *e = &g_array_index(ends, struct flow_end, i);
		const struct paje_message *m = &g_array_index(p->messages, struct paje_message, e->flow);
		const struct paje_flow *f = &g_array_index(flows, struct paje_flow, e->flow);
		if (e->end) {
			fprintf(p->f, "19\t%.9f\tMPIL\tMPIroot\t%" PRIu64 "\t%s\tmpicom_%u\n", e->time_ms, m->size, f->to, e->flow);
		} else {
			fprintf(p->f, "23\t%.9f\tMPIL\tMPIroot\t%" PRIu64 "\t%s\tmpicom_%u\t%" PRIu64 "\tPointToPoint\t0\t%" PRIx64 "\t",
				e->time_ms, m->size, f->from, e->flow, m->tag, m->handle);
			paje_word(p->f, m->hname);
			fputs("\t0\t0\n", p->f);
		}
	}
	bandwidths(p, flows, ends, "bwo_mpi", "bwi_mpi");
	g_array_free(ends, TRUE);
	g_array_free(flows, TRUE);
}

/* The memory managers' bwo_mm / bwi_mm (bandwidths(): each copy from its begin to its end), at the end as StarPU
 * writes them: the file is then sorted (each container's events in time order). */
static void write_copy_bandwidths(struct paje *p)
{
	if (p->no_bus || !p->copies->len)
		return;
	GArray *ends = flow_ends(p->copies);
	bandwidths(p, p->copies, ends, "bwo_mm", "bwi_mm");
	g_array_free(ends, TRUE);
	p->dated_back = true;
}

/* ------------------------------------------------------------ end */

static int paje_end(void *state)
{
	struct paje *p = state;
	write_mpi_links(p);
	write_copy_bandwidths(p);
	int ret = trace_format_close(p->f);
	if (ret == 0 && (p->dated_back || p->to) && paje_sort_file(p->path, p->to, p->dated_back) != 0)
		ret = errno ? -errno : -EIO;
	if (p->to)
		unlink(p->path); /* a failure leaves nothing behind among the other outputs */
	g_hash_table_destroy(p->defined_values);
	g_hash_table_destroy(p->counter_types);
	g_hash_table_destroy(p->state_aliases);
	g_hash_table_destroy(p->names);
	g_hash_table_destroy(p->by_name);
	g_hash_table_destroy(p->locations);
	g_array_free(p->messages, TRUE);
	g_array_free(p->copies, TRUE);
	g_free(p->path);
	g_free(p->to);
	g_free(p);
	return ret;
}

const struct astro_trace_format trace_paje_format = {
	.abi_version = ASTRO_TRACE_FORMAT_ABI_VERSION,
	.name = "paje",
	.description = "paje.trace: StarPU's Paje trace, for ViTE and pj_dump (-o names it)",
	.begin = paje_begin,
	.process = paje_process,
	.location = paje_location,
	.state = paje_state,
	.counter = paje_counter,
	.instant = paje_instant,
	.event = paje_event,
	.message = paje_message,
	.end = paje_end,
};
