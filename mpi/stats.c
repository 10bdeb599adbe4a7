/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Communication statistics (STARPU_MPI_STATS=1): the bytes this rank sent to
 * each other rank, printed at starpu_mpi_shutdown() in StarPU's format, one
 * line per destination (a table of the destinations actually used: its size
 * follows the neighbours, not the number of ranks).
 */
#include "mpi_private.h"

#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool enabled;
static starpu_pthread_mutex_t stats_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static GHashTable *sent;	/* destination rank -> bytes (size_t in a pointer) */
static double start_us;

void _astro_mpi_stats_init(void)
{
	const char *env = getenv("STARPU_MPI_STATS");
	if (!env)
		env = getenv("STARPU_COMM_STATS"); /* StarPU 1.3's name */
	enabled = env && *env && strcmp(env, "0") != 0;
	if (!enabled)
		return;
	starpu_pthread_mutex_lock(&stats_lock);
	sent = g_hash_table_new(g_direct_hash, g_direct_equal);
	starpu_pthread_mutex_unlock(&stats_lock);
	start_us = starpu_timing_now();
}

void _astro_mpi_stats_sent(int dest, size_t bytes)
{
	if (!enabled)
		return;
	starpu_pthread_mutex_lock(&stats_lock);
	gpointer key = GINT_TO_POINTER(dest);
	size_t total = (size_t)(uintptr_t)g_hash_table_lookup(sent, key) + bytes;
	g_hash_table_insert(sent, key, (gpointer)(uintptr_t)total);
	starpu_pthread_mutex_unlock(&stats_lock);
}

static gint by_rank(gconstpointer a, gconstpointer b)
{
	return GPOINTER_TO_INT(a) - GPOINTER_TO_INT(b);
}

/* As StarPU: sizes in B and MB, rates per microsecond of the session. */
void _astro_mpi_stats_shutdown(int rank)
{
	if (!enabled)
		return;
	double us = starpu_timing_now() - start_us;
	if (us <= 0)
		us = 1;
	starpu_pthread_mutex_lock(&stats_lock);
	GList *dests = g_list_sort(g_hash_table_get_keys(sent), by_rank);
	size_t sum = 0;
	for (GList *l = dests; l; l = l->next)
		sum += (size_t)(uintptr_t)g_hash_table_lookup(sent, l->data);
	fprintf(stderr, "\n[starpu_comm_stats][%d] TOTAL:\t%f B\t%f MB\t %f B/s\t %f MB/s\n", rank, (double)sum,
		(double)sum / (1024 * 1024), (double)sum / us, (double)sum / (1024 * 1024) / us);
	for (GList *l = dests; l; l = l->next) {
		size_t bytes = (size_t)(uintptr_t)g_hash_table_lookup(sent, l->data);
		fprintf(stderr, "[starpu_comm_stats][%d:%d]\t%f B\t%f MB\t %f B/s\t %f MB/s\n", rank, GPOINTER_TO_INT(l->data),
			(double)bytes, (double)bytes / (1024 * 1024), (double)bytes / us, (double)bytes / (1024 * 1024) / us);
	}
	g_list_free(dests);
	g_hash_table_destroy(sent);
	sent = NULL;
	enabled = false;
	starpu_pthread_mutex_unlock(&stats_lock);
}

void starpu_mpi_comm_amounts_retrieve(size_t *comm_amounts)
{
	int size = starpu_mpi_world_size();
	if (!comm_amounts || size <= 0) {
		_astro_mpi_error("starpu_mpi_comm_amounts_retrieve: %s", comm_amounts ? "StarPU-MPI is not initialised" : "NULL array: pass one of starpu_mpi_world_size() entries");
		return;
	}
	memset(comm_amounts, 0, (size_t)size * sizeof(*comm_amounts));
	starpu_pthread_mutex_lock(&stats_lock);
	if (enabled) {
		GHashTableIter it;
		gpointer key, value;
		g_hash_table_iter_init(&it, sent);
		while (g_hash_table_iter_next(&it, &key, &value))
			if (GPOINTER_TO_INT(key) >= 0 && GPOINTER_TO_INT(key) < size)
				comm_amounts[GPOINTER_TO_INT(key)] = (size_t)(uintptr_t)value;
	}
	starpu_pthread_mutex_unlock(&stats_lock);
}
