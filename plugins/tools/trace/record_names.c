/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The names of the trace archive's definitions (schema.h): each string,
 * region (the runtime's states first, then the task names and the
 * application's states in the order met) and sampled counter's metric gets
 * its number the first time a thread meets it, under one lock; a thread
 * keeps the numbers it asked for in its own caches (record_moments.c), so
 * that the task path takes the lock only for a name it never saw. At
 * shutdown they are written as the archive's definitions, with the
 * locations.
 */
#include <glib.h>
#include <astrolabe/counters.h>
#include <astrolabe/instrument.h>
#include <astrolabe/thread.h>
#include <stdio.h>
#include <string.h>
#include "record.h"
#include "schema.h"

/* Region kinds: the runtime's states, tasks, the application's states. */
enum region_kind { R_STATE, R_TASK, R_USER_STATE };

static struct
{
	starpu_pthread_mutex_t lock;
	GHashTable *strings;             /* char* -> id + 1 */
	GPtrArray *string_list;          /* id -> char* */
	GHashTable *regions;             /* task name -> region + 1 */
	GArray *region_names;            /* region -> string id */
	GArray *region_kind;             /* region -> enum region_kind */
	GHashTable *metrics;             /* counter name -> metric (class and member) + 1 */
	GArray *metric_names;            /* metric -> string id */
	GArray *metric_units;            /* metric -> string id of its unit ("" when unknown or dimensionless) */
} names = { .lock = STARPU_PTHREAD_MUTEX_INITIALIZER };

static uint32_t intern_locked(const char *s)
{
	gpointer v = g_hash_table_lookup(names.strings, s);
	if (v)
		return GPOINTER_TO_UINT(v) - 1;
	char *copy = g_strdup(s);
	uint32_t id = names.string_list->len;
	g_ptr_array_add(names.string_list, copy);
	g_hash_table_insert(names.strings, copy, GUINT_TO_POINTER(id + 1));
	return id;
}

uint32_t record_intern(const char *s)
{
	starpu_pthread_mutex_lock(&names.lock);
	uint32_t id = intern_locked(s);
	starpu_pthread_mutex_unlock(&names.lock);
	return id;
}

/* The number of key in ids, given at its first look-up in the order met; names gets name's string then. */
static uint32_t numbered_locked(GHashTable *ids, GArray *strings, const char *key, const char *name, bool *fresh)
{
	gpointer v = g_hash_table_lookup(ids, key);
	if (fresh)
		*fresh = !v;
	if (v)
		return GPOINTER_TO_UINT(v) - 1;
	uint32_t id = strings->len;
	uint32_t sid = intern_locked(name);
	g_array_append_val(strings, sid);
	g_hash_table_insert(ids, g_strdup(key), GUINT_TO_POINTER(id + 1));
	return id;
}

static uint32_t region_locked(const char *name, enum region_kind kind)
{
	/* States and tasks share names only by accident: keep them apart. */
	char key[512];
	snprintf(key, sizeof(key), "%c%s", "STU"[kind], name);
	bool fresh;
	uint32_t id = numbered_locked(names.regions, names.region_names, key, name, &fresh);
	if (fresh)
		g_array_append_val(names.region_kind, kind);
	return id;
}

/* The unit of a sampled counter: that of the runtime's counter which the sampler's own component reads as
 * "astrolabe:::<counter>"; "" for the others (PAPI's events) and for a dimensionless one. Looked up without a message. */
static const char *counter_unit(const char *event)
{
	const char *sep = strstr(event, ":::");
	if (!sep)
		return "";
	int id = astro_counter_find(sep + 3, NULL);
	const char *unit = id >= 0 ? astro_counter_get_unit(id) : NULL;
	return unit ? unit : "";
}

/* A sampled counter's OTF2 metric: one class of one member per counter name, in the order met. */
static uint32_t metric_locked(const char *name, const char *unit)
{
	bool fresh;
	uint32_t id = numbered_locked(names.metrics, names.metric_names, name, name, &fresh);
	if (fresh) {
		uint32_t sid = intern_locked(unit);
		g_array_append_val(names.metric_units, sid);
	}
	return id;
}

uint32_t record_name(enum record_name_kind kind, const char *s)
{
	const char *unit = kind == NAME_METRIC ? counter_unit(s) : NULL; /* the counters' registry has its own lock: not under ours */
	uint32_t v;
	starpu_pthread_mutex_lock(&names.lock);
	switch (kind) {
	case NAME_TASK_REGION: v = region_locked(s, R_TASK); break;
	case NAME_USER_STATE_REGION: v = region_locked(s, R_USER_STATE); break;
	case NAME_METRIC: v = metric_locked(s, unit); break;
	default: v = intern_locked(s); break;
	}
	starpu_pthread_mutex_unlock(&names.lock);
	return v;
}

void record_names_new(void)
{
	names.strings = g_hash_table_new(g_str_hash, g_str_equal);
	names.string_list = g_ptr_array_new_with_free_func(g_free);
	names.regions = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	names.region_names = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	names.region_kind = g_array_new(FALSE, FALSE, sizeof(enum region_kind));
	names.metrics = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	names.metric_names = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	names.metric_units = g_array_new(FALSE, FALSE, sizeof(uint32_t));
	/* The state regions take the first ids, in schema order. */
#define STATE_REGION(id, name) region_locked(name, R_STATE);
	TRACE_STATES(STATE_REGION)
#undef STATE_REGION
}

void record_names_free(void)
{
	if (names.strings)
		g_hash_table_destroy(names.strings);
	if (names.string_list)
		g_ptr_array_free(names.string_list, TRUE);
	if (names.regions)
		g_hash_table_destroy(names.regions);
	if (names.region_names)
		g_array_free(names.region_names, TRUE);
	if (names.region_kind)
		g_array_free(names.region_kind, TRUE);
	if (names.metrics)
		g_hash_table_destroy(names.metrics);
	if (names.metric_names)
		g_array_free(names.metric_names, TRUE);
	if (names.metric_units)
		g_array_free(names.metric_units, TRUE);
	names.metrics = NULL;
	names.metric_names = NULL;
	names.metric_units = NULL;
	names.strings = NULL;
	names.string_list = NULL;
	names.regions = NULL;
	names.region_names = names.region_kind = NULL;
}

void record_names_write(OTF2_GlobalDefWriter *defs, const struct location *locations, bool incomplete, const char *mpi_mark)
{
	uint64_t first = UINT64_MAX, last = 0;
	for (const struct location *l = locations; l; l = l->next) {
		if (l->nevents && l->first_ts < first)
			first = l->first_ts;
		if (l->last_ts > last)
			last = l->last_ts;
	}
	if (first == UINT64_MAX)
		first = last = 0;
	OTF2_GlobalDefWriter_WriteClockProperties(defs, 1000000000, first, last - first, OTF2_UNDEFINED_TIMESTAMP);

	/* Names the writer needs besides those the run interned. */
	starpu_pthread_mutex_lock(&names.lock);
	uint32_t s_machine = intern_locked("machine"), s_node = intern_locked("node"), s_process = intern_locked("StarPU program");
	uint32_t s_task = intern_locked(TRACE_DESC_TASK), s_state = intern_locked(TRACE_DESC_STATE), s_empty = intern_locked("");
	uint32_t s_user_state = intern_locked(TRACE_DESC_USER_STATE);
	/* The converter warns about a trace that lost events. */
	if (incomplete)
		intern_locked(TRACE_INCOMPLETE_MARK);
	if (mpi_mark)
		intern_locked(mpi_mark);
	uint32_t param_names[TRACE_NPARAMETERS], attr_names[TRACE_NATTRIBUTES];
	unsigned k = 0;
#define PNAME(id, name, type) param_names[k++] = intern_locked(name);
	TRACE_PARAMETERS(PNAME)
#undef PNAME
	k = 0;
#define ANAME(id, name, type) attr_names[k++] = intern_locked(name);
	TRACE_ATTRIBUTES(ANAME)
#undef ANAME
	for (const struct location *l = locations; l; l = l->next)
		intern_locked(l->name);
	uint32_t s_tid = intern_locked(TRACE_PROPERTY_TID), s_bindid = intern_locked(TRACE_PROPERTY_BINDID);
	/* The event-key dictionary: each key's description and each named value, as (property, string) pairs. */
	GArray *dict = g_array_new(FALSE, FALSE, sizeof(uint32_t) * 2);
	for (unsigned id = 1, n = astro_instr_key_count(); id <= n; id++) {
		struct astro_instr_key_info key;
		if (astro_instr_key_get(id, &key))
			continue;
		char *property = g_strconcat(TRACE_PROPERTY_KEY, key.name, NULL);
		uint32_t pair[2] = { intern_locked(property), intern_locked(key.description) };
		g_free(property);
		g_array_append_val(dict, pair);
		for (unsigned i = 0; i < key.nvalues; i++) {
			uint64_t value;
			const char *name;
			if (astro_instr_value_get(id, i, &value, &name))
				continue;
			property = g_strdup_printf(TRACE_PROPERTY_VALUE "%" G_GUINT64_FORMAT " %s", value, key.name);
			uint32_t vpair[2] = { intern_locked(property), intern_locked(name) };
			g_free(property);
			g_array_append_val(dict, vpair);
		}
	}

	for (unsigned i = 0; i < names.string_list->len; i++)
		OTF2_GlobalDefWriter_WriteString(defs, i, g_ptr_array_index(names.string_list, i));
	k = 0;
#define PDEF(id, name, type) OTF2_GlobalDefWriter_WriteParameter(defs, id, param_names[k++], OTF2_PARAMETER_TYPE_##type);
	TRACE_PARAMETERS(PDEF)
#undef PDEF
	k = 0;
#define ADEF(id, name, type) OTF2_GlobalDefWriter_WriteAttribute(defs, id, attr_names[k++], s_empty, OTF2_TYPE_##type);
	TRACE_ATTRIBUTES(ADEF)
#undef ADEF
	OTF2_GlobalDefWriter_WriteSystemTreeNode(defs, 0, s_machine, s_node, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
	for (unsigned i = 0; i < dict->len; i++) {
		const uint32_t *pair = &g_array_index(dict, uint32_t, 2 * i);
		OTF2_AttributeValue v = { .stringRef = pair[1] };
		OTF2_GlobalDefWriter_WriteSystemTreeNodeProperty(defs, 0, pair[0], OTF2_TYPE_STRING, v);
	}
	g_array_free(dict, TRUE);
	OTF2_GlobalDefWriter_WriteLocationGroup(defs, 0, s_process, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP);
	for (const struct location *l = locations; l; l = l->next)
		OTF2_GlobalDefWriter_WriteLocation(defs, l->id, intern_locked(l->name), OTF2_LOCATION_TYPE_CPU_THREAD, l->nevents, 0);
	/* Each thread's OS id and a worker's CPU: the names of StarPU's thread containers. */
	for (const struct location *l = locations; l; l = l->next) {
		OTF2_AttributeValue v = { .int64 = l->tid };
		OTF2_GlobalDefWriter_WriteLocationProperty(defs, l->id, s_tid, OTF2_TYPE_INT64, v);
		if (l->bindid >= 0) {
			v.int32 = l->bindid;
			OTF2_GlobalDefWriter_WriteLocationProperty(defs, l->id, s_bindid, OTF2_TYPE_INT32, v);
		}
	}
	for (unsigned r = 0; r < names.region_names->len; r++) {
		enum region_kind kind = g_array_index(names.region_kind, enum region_kind, r);
		uint32_t n = g_array_index(names.region_names, uint32_t, r);
		OTF2_GlobalDefWriter_WriteRegion(defs, r, n, n, kind == R_TASK ? s_task : kind == R_STATE ? s_state : s_user_state,
						 kind == R_TASK ? OTF2_REGION_ROLE_TASK : OTF2_REGION_ROLE_FUNCTION, OTF2_PARADIGM_USER,
						 OTF2_REGION_FLAG_NONE, s_empty, 0, 0);
	}
	/* Each sampled counter: a member (its name, double values, each a point in time, its unit) and a class of it alone. */
	for (uint32_t m = 0; m < names.metric_names->len; m++) {
		OTF2_GlobalDefWriter_WriteMetricMember(defs, m, g_array_index(names.metric_names, uint32_t, m), s_empty, OTF2_METRIC_TYPE_OTHER,
						       OTF2_METRIC_ABSOLUTE_POINT, OTF2_TYPE_DOUBLE, OTF2_BASE_DECIMAL, 0,
						       g_array_index(names.metric_units, uint32_t, m));
		OTF2_GlobalDefWriter_WriteMetricClass(defs, m, 1, &m, OTF2_METRIC_SYNCHRONOUS_STRICT, OTF2_RECORDER_KIND_ABSTRACT);
	}
	starpu_pthread_mutex_unlock(&names.lock);
}
