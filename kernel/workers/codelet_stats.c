/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Per-codelet execution counts (STARPU_CODELET_PROFILING, starpu_codelet_display_stats()).
 *
 * StarPU keeps them in the codelet itself (per_worker_stats), but a program may
 * declare its codelets const: they then lie in read-only memory, and writing a
 * count there kills the program. The count goes into the codelet only when the
 * program can write it; a read-only codelet gets a record of the runtime's own.
 * Each worker remembers, per codelet it recently ran, where its counts go, so
 * that the task path never looks further than one slot.
 */
#define _GNU_SOURCE
#include "workers/workers.h"
#include <link.h>
#include <stdlib.h>
#include <string.h>

struct _astro_codelet_record
{
	unsigned long per_worker_stats[STARPU_NMAXWORKERS];
};

/* Read-only codelets -> their record; lives until the process ends, as codelets may be displayed after shutdown. */
static starpu_pthread_mutex_t records_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static GHashTable *records;

struct address_probe
{
	uintptr_t first, last;
	bool read_only;
};

/* Is the probed range in a segment the loader leaves read-only: a segment
 * without write permission, or the part made read-only after relocation
 * (RELRO, where const data holding pointers lives in a position-independent
 * program)? Memory outside any loaded object (heap, stacks) is writable. */
static int probe_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct address_probe *probe = arg;
	(void)size;
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		bool read_only = (ph->p_type == PT_LOAD && !(ph->p_flags & PF_W)) || ph->p_type == PT_GNU_RELRO;
		if (!read_only)
			continue;
		uintptr_t start = info->dlpi_addr + ph->p_vaddr, end = start + ph->p_memsz;
		if (probe->last >= start && probe->first < end) {
			probe->read_only = true;
			return 1;
		}
	}
	return 0;
}

static bool read_only(const void *address, size_t size)
{
	struct address_probe probe = { (uintptr_t)address, (uintptr_t)address + size - 1, false };
	dl_iterate_phdr(probe_object, &probe);
	return probe.read_only;
}

/* cl's record, NULL when it has none (never counted while read-only). */
static struct _astro_codelet_record *record_lookup(const struct starpu_codelet *cl)
{
	starpu_pthread_mutex_lock(&records_lock);
	struct _astro_codelet_record *record = records ? g_hash_table_lookup(records, cl) : NULL;
	starpu_pthread_mutex_unlock(&records_lock);
	return record;
}

unsigned long *_astro_codelet_slot_fill(struct _astro_codelet_slot *slot, struct starpu_codelet *cl)
{
	unsigned long *stats = cl->per_worker_stats;
	if (read_only(cl->per_worker_stats, sizeof(cl->per_worker_stats))) {
		struct _astro_codelet_record *record;
		starpu_pthread_mutex_lock(&records_lock);
		if (!records)
			records = g_hash_table_new_full(g_direct_hash, g_direct_equal, NULL, free);
		record = g_hash_table_lookup(records, cl);
		if (!record) {
			record = calloc(1, sizeof(*record));
			if (record)
				g_hash_table_insert(records, (gpointer)cl, record);
		}
		starpu_pthread_mutex_unlock(&records_lock);
		if (!record)
			return NULL; /* out of memory: this execution is not counted */
		stats = record->per_worker_stats;
	}
	slot->cl = cl;
	slot->stats = stats;
	return stats;
}

void starpu_codelet_display_stats(struct starpu_codelet *cl)
{
	if (!cl)
		return;
	const char *name = cl->name ? cl->name : cl->model && cl->model->symbol ? cl->model->symbol : NULL;
	if (name)
		fprintf(stderr, "Statistics for codelet %s\n", name);
	struct _astro_codelet_record *record = record_lookup(cl);
	unsigned long *stats = record ? record->per_worker_stats : cl->per_worker_stats;
	unsigned long total = 0;
	for (unsigned w = 0; w < _astro_rt.nworkers; w++)
		total += __atomic_load_n(&stats[w], __ATOMIC_RELAXED);
	for (unsigned w = 0; w < _astro_rt.nworkers; w++) {
		unsigned long n = __atomic_load_n(&stats[w], __ATOMIC_RELAXED);
		fprintf(stderr, "\t%s -> %lu / %lu (%2.2f %%)\n", _astro_rt.workers[w]->name, n, total,
			total ? 100.0 * (double)n / (double)total : 0.0);
	}
}
