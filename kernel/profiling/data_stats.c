/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Data statistics (STARPU_ENABLE_STATS, STARPU_MEMORY_STATS): the MSI hits
 * and misses of the tasks' fetches, the allocations and the cache's share,
 * per-handle access counts, and their displays.
 */
#include "profiling/profiling.h"

/* starpu_memory_node_get_name(): memory.c, with the node table. */

static unsigned msi_hit[STARPU_MAXNODES], msi_miss[STARPU_MAXNODES];     /* atomics */
static unsigned alloc_total[STARPU_MAXNODES], alloc_cached[STARPU_MAXNODES];
/* Transfers into the node a worker fetches for, seen since its last pop (MSI misses). */
_ASTRO_TLS unsigned _astro_prof_fetch_transfers;

struct _astro_memory_stats
{
	starpu_data_handle_t handle;
	struct _astro_memory_stats *prev, *next;
	unsigned direct_access[STARPU_MAXNODES];   /* atomics */
	unsigned loaded_owner[STARPU_MAXNODES];
	unsigned loaded_shared[STARPU_MAXNODES];
	unsigned invalidated[STARPU_MAXNODES];
};

static struct _astro_memory_stats *memory_stats_head;
static starpu_pthread_mutex_t memory_stats_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;

/* STARPU_MEMORY_STATS: a handle registered meanwhile gets per-node access counts. */
void _astro_prof_memory_stats_register(starpu_data_handle_t handle)
{
	struct _astro_memory_stats *s = calloc(1, sizeof(*s));
	if (!s)
		return;
	s->handle = handle;
	starpu_pthread_mutex_lock(&memory_stats_lock);
	s->next = memory_stats_head;
	if (memory_stats_head)
		memory_stats_head->prev = s;
	memory_stats_head = s;
	starpu_pthread_mutex_unlock(&memory_stats_lock);
	handle->memory_stats = s;
}

void _astro_prof_memory_stats_unregister(starpu_data_handle_t handle)
{
	struct _astro_memory_stats *s = handle->memory_stats;
	if (!s)
		return;
	starpu_pthread_mutex_lock(&memory_stats_lock);
	if (s->prev)
		s->prev->next = s->next;
	else
		memory_stats_head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	starpu_pthread_mutex_unlock(&memory_stats_lock);
	handle->memory_stats = NULL;
	free(s);
}

/* A task's data are on the worker's node: count the accesses. */
void _astro_prof_data_fetched(const struct astro_event *ev)
{
	struct starpu_task *task = ev->task;
	if (!task || ev->workerid < 0)
		return;
	unsigned node = starpu_worker_get_memory_node((unsigned)ev->workerid);
	unsigned n = _astro_task_nbuffers(task), accesses = 0;
	unsigned misses = _astro_prof_fetch_transfers;
	for (unsigned i = 0; i < n; i++) {
		enum starpu_data_access_mode mode = STARPU_TASK_GET_MODE(task, i);
		if (mode & STARPU_SCRATCH)
			continue; /* a private buffer, allocated rather than fetched */
		accesses++;
		struct _astro_memory_stats *s = STARPU_TASK_GET_HANDLE(task, i)->memory_stats;
		if (!s)
			continue;
		if (!misses)
			__atomic_add_fetch(&s->direct_access[node], 1, __ATOMIC_RELAXED);
		else if (mode & STARPU_W)
			__atomic_add_fetch(&s->loaded_owner[node], 1, __ATOMIC_RELAXED);
		else
			__atomic_add_fetch(&s->loaded_shared[node], 1, __ATOMIC_RELAXED);
	}
	if (misses > accesses)
		misses = accesses;
	__atomic_add_fetch(&msi_hit[node], accesses - misses, __ATOMIC_RELAXED);
	__atomic_add_fetch(&msi_miss[node], misses, __ATOMIC_RELAXED);
	_astro_prof_fetch_transfers = 0;
}

static void print_percent_line(FILE *out, const char *label, unsigned value, unsigned total)
{
	fprintf(out, "\t%s : %u (%2.2f %%)\n", label, value, total ? 100.0 * value / total : 0.0);
}

void _astro_prof_msi_display(FILE *out)
{
	unsigned hits = 0, misses = 0;
	for (unsigned node = 0; node < STARPU_MAXNODES; node++) {
		hits += __atomic_load_n(&msi_hit[node], __ATOMIC_RELAXED);
		misses += __atomic_load_n(&msi_miss[node], __ATOMIC_RELAXED);
	}
	unsigned total = hits + misses;
	fprintf(out, "#-----\n");
	fprintf(out, "MSI cache stats :\n");
	fprintf(out, "TOTAL MSI stats\thit %u (%2.2f %%)\tmiss %u (%2.2f %%)\n", hits, total ? 100.0 * hits / total : 0.0,
		misses, total ? 100.0 * misses / total : 0.0);
	for (unsigned node = 0; node < STARPU_MAXNODES; node++) {
		unsigned h = __atomic_load_n(&msi_hit[node], __ATOMIC_RELAXED), m = __atomic_load_n(&msi_miss[node], __ATOMIC_RELAXED);
		if (!h && !m)
			continue;
		char name[64];
		starpu_memory_node_get_name(node, name, sizeof(name));
		fprintf(out, "memory node %s\n", name);
		print_percent_line(out, "hit", h, h + m);
		print_percent_line(out, "miss", m, h + m);
	}
	fprintf(out, "#-----\n");
}

void _astro_prof_alloc_display(FILE *out)
{
	fprintf(out, "#-----\n");
	fprintf(out, "Allocation cache stats:\n");
	for (unsigned node = 0; node < STARPU_MAXNODES; node++) {
		unsigned total = __atomic_load_n(&alloc_total[node], __ATOMIC_RELAXED);
		if (!total)
			continue;
		unsigned cached = __atomic_load_n(&alloc_cached[node], __ATOMIC_RELAXED);
		char name[64];
		starpu_memory_node_get_name(node, name, sizeof(name));
		fprintf(out, "memory node %s\n", name);
		fprintf(out, "\ttotal alloc : %u\n", total);
		fprintf(out, "\tcached alloc: %u (%2.2f %%)\n", cached, 100.0 * cached / total);
	}
	fprintf(out, "#-----\n");
}

static void display_handle_memory_stats(FILE *out, struct _astro_memory_stats *s)
{
	fprintf(out, "#-----\n");
	fprintf(out, "Data : %p\n", (void *)s->handle);
	fprintf(out, "Size : %d\n", (int)starpu_data_get_size(s->handle));
	fprintf(out, "\n");
	fprintf(out, "#--\n");
	fprintf(out, "Data access stats\n");
	fprintf(out, "/!\\ Work Underway\n");
	for (unsigned node = 0; node < STARPU_MAXNODES; node++) {
		unsigned direct = __atomic_load_n(&s->direct_access[node], __ATOMIC_RELAXED);
		unsigned owner = __atomic_load_n(&s->loaded_owner[node], __ATOMIC_RELAXED);
		unsigned shared = __atomic_load_n(&s->loaded_shared[node], __ATOMIC_RELAXED);
		unsigned invalidated = __atomic_load_n(&s->invalidated[node], __ATOMIC_RELAXED);
		if (!direct && !owner && !shared && !invalidated)
			continue;
		fprintf(out, "Node #%u\n", node);
		fprintf(out, "\tDirect access : %u\n", direct);
		fprintf(out, "\tLoaded (Owner) : %u\n", owner);
		fprintf(out, "\tLoaded (Shared) : %u\n", shared);
		fprintf(out, "\tInvalidated (was Owner) : %u\n\n", invalidated);
	}
}

void _astro_prof_memory_stats_display(FILE *out)
{
	starpu_pthread_mutex_lock(&memory_stats_lock);
	fprintf(out, "#-----\n");
	fprintf(out, "Memory stats :\n");
	for (unsigned node = 0; node < starpu_memory_nodes_get_count(); node++) {
		bool header = false;
		for (struct _astro_memory_stats *s = memory_stats_head; s; s = s->next) {
			if (!starpu_data_is_on_node(s->handle, node))
				continue;
			if (!header) {
				fprintf(out, "#-----\n");
				fprintf(out, "Data on Node #%u\n", node);
				header = true;
			}
			display_handle_memory_stats(out, s);
		}
	}
	fprintf(out, "#-----\n");
	starpu_pthread_mutex_unlock(&memory_stats_lock);
}

void starpu_data_display_memory_stats(void)
{
	if (!_astro_memory_stats_enabled) {
		_astro_warn("starpu_data_display_memory_stats: memory statistics are not collected: set STARPU_MEMORY_STATS=1 before starpu_init()");
		return;
	}
	_astro_prof_memory_stats_display(stderr);
}

void _astro_prof_data_reset(void)
{
	memset(msi_hit, 0, sizeof(msi_hit));
	memset(msi_miss, 0, sizeof(msi_miss));
	memset(alloc_total, 0, sizeof(alloc_total));
	memset(alloc_cached, 0, sizeof(alloc_cached));
}

void _astro_prof_alloc_counted(unsigned node)
{
	if (node < STARPU_MAXNODES)
		__atomic_add_fetch(&alloc_total[node], 1, __ATOMIC_RELAXED);
}
