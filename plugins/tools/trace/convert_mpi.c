/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Several archives converted together, one per process of a run (the ranks
 * of StarPU-MPI): their order (by rank), their common time base (each
 * archive's clock shifted by the offset to rank 0's that StarPU-MPI
 * measured), and the StarPU-MPI messages of every archive, matched once all
 * are read (the formats' messages: comms.rec, paje.trace's links).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "converter.h"

/* The rank of an archive: the <id> that ends its folder's name (prof_file_<user>_<id>), else -1. */
static int rank_of(const char *input)
{
	char *path = g_strdup(input);
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		path[--n] = '\0';
	if (g_str_has_suffix(path, "/traces.otf2"))
		path[n - strlen("/traces.otf2")] = '\0';
	char *base = g_path_get_basename(path);
	const char *underscore = strrchr(base, '_');
	int rank = -1;
	if (underscore && underscore[1] && strspn(underscore + 1, "0123456789") == strlen(underscore + 1))
		rank = atoi(underscore + 1);
	g_free(base);
	g_free(path);
	return rank;
}

static gint by_rank(gconstpointer a, gconstpointer b)
{
	const struct ranked *x = a, *y = b;
	return (x->rank > y->rank) - (x->rank < y->rank);
}

static OTF2_CallbackCode origin_clock(void *arg, uint64_t resolution, uint64_t offset, uint64_t length, uint64_t realtime)
{
	(void)resolution;
	(void)length;
	(void)realtime;
	((struct clock_info *)arg)->first = offset;
	return OTF2_CALLBACK_SUCCESS;
}

/* TRACE_MPI_MARK's offset, 0 when absent (not an MPI process, or one machine's clock). */
static int64_t mpi_offset_of(const char *s)
{
	int rank, size;
	long long offset;
	if (strncmp(s, TRACE_MPI_MARK, strlen(TRACE_MPI_MARK)) == 0 && sscanf(s + strlen(TRACE_MPI_MARK), "%d %d %lld", &rank, &size, &offset) == 3)
		return offset;
	return 0;
}

static OTF2_CallbackCode origin_string(void *arg, OTF2_StringRef self, const char *s)
{
	(void)self;
	int64_t offset = mpi_offset_of(s);
	if (offset)
		((struct clock_info *)arg)->offset_ns = offset;
	return OTF2_CALLBACK_SUCCESS;
}

void convert_mpi_origin(struct converter *c, GArray *clocks)
{
	uint64_t origin = UINT64_MAX;
	for (guint i = 0; i < c->opt.inputs->len; i++) {
		struct clock_info *info = &g_array_index(clocks, struct clock_info, i);
		char *anchor = convert_anchor(g_ptr_array_index(c->opt.inputs, i));
		OTF2_Reader *reader = anchor ? OTF2_Reader_Open(anchor) : NULL;
		g_free(anchor);
		if (!reader)
			continue; /* reported when its turn comes */
		OTF2_Reader_SetSerialCollectiveCallbacks(reader);
		OTF2_GlobalDefReader *defs = OTF2_Reader_GetGlobalDefReader(reader);
		if (defs) {
			OTF2_GlobalDefReaderCallbacks *cb = OTF2_GlobalDefReaderCallbacks_New();
			OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, origin_clock);
			OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, origin_string);
			OTF2_Reader_RegisterGlobalDefCallbacks(reader, defs, cb, info);
			OTF2_GlobalDefReaderCallbacks_Delete(cb);
			uint64_t n;
			OTF2_Reader_ReadAllGlobalDefinitions(reader, defs, &n);
			OTF2_Reader_CloseGlobalDefReader(reader, defs);
		}
		OTF2_Reader_Close(reader);
		uint64_t first = (uint64_t)((int64_t)info->first + info->offset_ns);
		if (first < origin)
			origin = first;
	}
	c->common_origin = origin == UINT64_MAX ? 0 : origin;
}

static gint by_time(gconstpointer a, gconstpointer b)
{
	const struct message *x = a, *y = b;
	return (x->date > y->date) - (x->date < y->date);
}

/* Each receive meets the oldest send of the same source, destination and tag (MPI keeps their order). */
void convert_mpi_messages(struct converter *c)
{
	g_array_sort(c->sends, by_time);
	g_array_sort(c->recvs, by_time);
	GHashTable *queues = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, (GDestroyNotify)g_queue_free);
	for (guint i = 0; i < c->sends->len; i++) {
		const struct message *m = &g_array_index(c->sends, struct message, i);
		char *key = g_strdup_printf("%d %d %" PRIu64, m->self, m->peer, m->tag);
		GQueue *q = g_hash_table_lookup(queues, key);
		if (!q) {
			q = g_queue_new();
			g_hash_table_insert(queues, key, q);
		} else {
			g_free(key);
		}
		g_queue_push_tail(q, (gpointer)m);
	}
	for (guint i = 0; i < c->recvs->len; i++) {
		const struct message *r = &g_array_index(c->recvs, struct message, i);
		char key[64];
		snprintf(key, sizeof(key), "%d %d %" PRIu64, r->peer, r->self, r->tag);
		GQueue *q = g_hash_table_lookup(queues, key);
		const struct message *m = q ? g_queue_pop_head(q) : NULL;
		if (!m)
			continue; /* its sender's archive was not given */
		struct astro_trace_message e = { .src = m->self, .dst = r->self, .tag = r->tag, .send_date = m->date,
						 .recv_date = MAX(r->date, m->date), .send_handle = m->handle, .recv_handle = r->handle,
						 .size = r->size, .name = m->name, .recorded_recv_date = r->date };
		trace_formats_message(&c->opt.formats, &e);
	}
	g_hash_table_destroy(queues);
}

GArray *convert_mpi_ranks(const GPtrArray *inputs)
{
	guint n = inputs->len;
	GArray *ranked = g_array_new(FALSE, FALSE, sizeof(struct ranked));
	bool ids_usable = true;
	for (guint i = 0; i < n; i++) {
		struct ranked r = { rank_of(g_ptr_array_index(inputs, i)), g_ptr_array_index(inputs, i) };
		for (guint k = 0; k < ranked->len; k++)
			if (g_array_index(ranked, struct ranked, k).rank == r.rank)
				ids_usable = false;
		if (r.rank < 0)
			ids_usable = false;
		g_array_append_val(ranked, r);
	}
	for (guint i = 0; i < n && !ids_usable; i++)
		g_array_index(ranked, struct ranked, i).rank = (int)i;
	g_array_sort(ranked, by_rank);
	return ranked;
}
