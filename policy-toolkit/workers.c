/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The policy toolkit (astrolabe/sched.h): the set of workers of a context
 * (their hunger and the pop protocol are inline in the header).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <astrolabe/sched.h>

void astro_sched_workers_init(struct astro_sched_workers *ws)
{
	ws->count = 0;
	for (int i = 0; i < STARPU_NMAXWORKERS; i++)
	{
		ws->position[i] = -1;
		atomic_init(&ws->hunger[i].hungry, 0);
	}
	atomic_init(&ws->nhungry, 0);
	atomic_init(&ws->cursor, 0);
}

static void astro_sched_workers_reindex(struct astro_sched_workers *ws)
{
	for (unsigned i = 0; i < ws->count; i++)
		ws->position[ws->ids[i]] = (int)i;
}

void astro_sched_workers_add(struct astro_sched_workers *ws, const int *workerids, unsigned nworkers)
{
	for (unsigned n = 0; n < nworkers; n++)
	{
		int workerid = workerids[n];
		unsigned i;

		if (workerid < 0 || workerid >= STARPU_NMAXWORKERS || ws->position[workerid] >= 0)
			continue;
		for (i = ws->count; i > 0 && ws->ids[i - 1] > workerid; i--)
			ws->ids[i] = ws->ids[i - 1];
		ws->ids[i] = workerid;
		ws->count++;
	}
	astro_sched_workers_reindex(ws);
}

void astro_sched_workers_remove(struct astro_sched_workers *ws, const int *workerids, unsigned nworkers)
{
	for (unsigned n = 0; n < nworkers; n++)
	{
		int workerid = workerids[n];

		if (workerid < 0 || workerid >= STARPU_NMAXWORKERS || ws->position[workerid] < 0)
			continue;
		memmove(&ws->ids[ws->position[workerid]], &ws->ids[ws->position[workerid] + 1],
			(ws->count - ws->position[workerid] - 1) * sizeof(ws->ids[0]));
		ws->count--;
		ws->position[workerid] = -1;
		astro_sched_workers_reindex(ws);
	}
}

