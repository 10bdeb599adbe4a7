/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * StarPU-MPI's message counters (module "mpi"): the messages and bytes this
 * process (this rank) sent and received, from the moments mpi/ reports for
 * every message: ASTRO_MOMENT_MPI_SEND when one is posted,
 * ASTRO_MOMENT_MPI_RECV when one has arrived (bytes: the data carried, an
 * envelope's header aside).
 *
 *   starpu.mpi.g_total_messages_sent      starpu.mpi.g_total_bytes_sent
 *   starpu.mpi.g_total_messages_received  starpu.mpi.g_total_bytes_received
 *
 * As the runtime's own counters, they follow the moments only while
 * collection is on: while it is off there is no subscription, and a message
 * costs StarPU-MPI one branch. They count what happened while collection was
 * on, and stay at zero in a process that does not run StarPU-MPI. A
 * message refreshes no sample: listeners see the values at the runtime's
 * next refresh (a task submitted, a blocking call returning), tools read
 * them at any time with astro_counter_read().
 */
#include "framework.h"
#include <string.h>

#define MODULE "mpi"

static struct
{
	int64_t messages_sent, bytes_sent, messages_received, bytes_received;
} __attribute__((aligned(64))) totals;
static int id_messages_sent = -1, id_bytes_sent = -1, id_messages_received = -1, id_bytes_received = -1;
static int subscription = -1;

#define MESSAGE_MOMENTS (ASTRO_OBSERVE_UNTIMED | ASTRO_MOMENT_BIT(ASTRO_MOMENT_MPI_SEND) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_MPI_RECV))

static void on_message(const struct astro_event *ev, void *arg)
{
	(void)arg;
	if (ev->moment == ASTRO_MOMENT_MPI_SEND) {
		astro_counter_add_int64(&totals.messages_sent, 1);
		astro_counter_add_int64(&totals.bytes_sent, (int64_t)ev->bytes);
	} else if (ev->moment == ASTRO_MOMENT_MPI_RECV) {
		astro_counter_add_int64(&totals.messages_received, 1);
		astro_counter_add_int64(&totals.bytes_received, (int64_t)ev->bytes);
	}
}

static void set(struct starpu_perf_counter_sample *sample, int id, const int64_t *value)
{
	if (id >= 0)
		astro_counter_sample_set_int64(sample, id, astro_counter_load_int64(value));
}

static void update_global(struct starpu_perf_counter_sample *sample, void *context, void *arg)
{
	(void)context;
	(void)arg;
	set(sample, id_messages_sent, &totals.messages_sent);
	set(sample, id_bytes_sent, &totals.bytes_sent);
	set(sample, id_messages_received, &totals.messages_received);
	set(sample, id_bytes_received, &totals.bytes_received);
}

static int reg(const char *name, const char *unit, const char *help)
{
	return astro_counter_register(MODULE, starpu_perf_counter_scope_global, name, starpu_perf_counter_type_int64,
				      ASTRO_COUNTER_MONOTONIC, unit, help);
}

void _astro_mpi_counters_register(void)
{
	memset(&totals, 0, sizeof(totals));
	subscription = -1;
	id_messages_sent = reg("starpu.mpi.g_total_messages_sent", "messages", "StarPU-MPI messages this rank posted while counters were collected");
	id_bytes_sent = reg("starpu.mpi.g_total_bytes_sent", "bytes", "bytes of data in the StarPU-MPI messages this rank posted");
	id_messages_received = reg("starpu.mpi.g_total_messages_received", "messages",
				   "StarPU-MPI messages this rank received while counters were collected");
	id_bytes_received = reg("starpu.mpi.g_total_bytes_received", "bytes", "bytes of data in the StarPU-MPI messages this rank received");
	astro_counter_register_updater(MODULE, starpu_perf_counter_scope_global, update_global, NULL);
}

void _astro_mpi_counters_collect(bool on)
{
	/* Subscribed once per run, then switched by the mask: the kernel never reuses observer slots before shutdown. */
	if (on && subscription < 0) {
		subscription = astro_observe_subscribe(MESSAGE_MOMENTS, on_message, NULL);
		if (subscription < 0)
			astro_log_error("performance counters", "cannot follow the MPI messages (%d): the starpu.mpi counters stay at zero",
					subscription);
	} else if (subscription >= 0) {
		astro_observe_set_mask(subscription, on ? MESSAGE_MOMENTS : 0);
	}
}

void _astro_mpi_counters_shutdown(void)
{
	subscription = -1;
}
