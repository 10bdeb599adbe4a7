/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * heteroprio's data locality mode (see la.h). The groups' access orders,
 * their distances and the push strategies follow StarPU 1.4's laheteroprio.
 */
#include <astrolabe/env.h>
#include <float.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <astrolabe/sched.h>
#include "la.h"

#define NB STARPU_HETEROPRIO_MAX_PRIO
#define G HP_LA_MAX_GROUPS

/* The push strategies, by StarPU's numbers: the first HP_LA_NAUTO are those AUTO chooses among. */
enum push
{
	PUSH_LS_SDH,
	PUSH_LS_SDH2,
	PUSH_LS_SDHB,
	PUSH_LC_SMWB,
	PUSH_LCS = HP_LA_NAUTO + 1,
	PUSH_WORKER,
	PUSH_AUTO
};

static const struct
{
	const char *name;
	enum push push;
} push_names[] = {
	{ "LS_SDH", PUSH_LS_SDH }, { "LS_SDH2", PUSH_LS_SDH2 }, { "LS_SDHB", PUSH_LS_SDHB }, { "LC_SMWB", PUSH_LC_SMWB },
	{ "LcS", PUSH_LCS }, { "WORKER", PUSH_WORKER }, { "AUTO", PUSH_AUTO },
};

struct hp_la
{
	unsigned ngroups;
	/* The group of each worker (its memory node), and of the application's threads. */
	unsigned group_of[STARPU_NMAXWORKERS];
	unsigned master;
	/* The architecture of each group's workers; -1: no worker. */
	int arch_of[G];
	/* A worker of each group (for LcS); -1: none. */
	int worker_of[G];
	struct hp_la_access order[G][G * NB];
	unsigned norder[G];
	/* The buckets each architecture looks at, as in the layout (for print). */
	unsigned nb_prios[STARPU_NARCH];
	unsigned mapping[STARPU_NARCH][NB];
	enum push set;
	atomic_int use;
	atomic_int history[HP_LA_NAUTO];
};

static const char what[] = "heteroprio";

/* ------------------------------------------------------ access orders */

struct dist
{
	double dist;
	unsigned group;
};

static int by_dist(const void *x, const void *y)
{
	const struct dist *d = x, *e = y;

	return (d->dist > e->dist) - (d->dist < e->dist);
}

/* An env value for architecture arch: STARPU_LAHETEROPRIO_<kind>_<ARCH>, else def. */
static unsigned arch_env(const char *kind, unsigned arch, unsigned def)
{
	const char *name = starpu_worker_get_type_as_env_var((enum starpu_worker_archtype)arch); /* as in STARPU_NCPU */
	char var[64];
	int v;

	if (!name)
		return def;
	snprintf(var, sizeof(var), "STARPU_LAHETEROPRIO_%s_%s", kind, name);
	v = astro_env_int(var, 0, 1000000, (int)def, NULL);
	return (unsigned)v;
}

/*
 * Each group's access order: per block of prio_step of its architecture's
 * buckets, its own list, then the lists of its s closest groups; then the
 * farther groups, bucket by bucket. Groups are the closer for their
 * transfer times and for the likeness of their architectures' bucket orders.
 */
static void build_orders(struct hp_la *la, const struct astro_heteroprio_setup *layout)
{
	unsigned n = la->ngroups;
	double mem[G][G] = { { 0 } }, prio[G][G] = { { 0 } };
	unsigned position[STARPU_NARCH][NB];
	unsigned s[STARPU_NARCH], step[STARPU_NARCH];
	double most = 0.0;

	/* Where each bucket stands in each architecture's order, plus one (0: not looked at). */
	memset(position, 0, sizeof(position));
	for (unsigned arch = 0; arch < STARPU_NARCH; arch++)
		for (unsigned i = 0; i < layout->nb_prios[arch]; i++)
			position[arch][layout->mapping[arch][i]] = i + 1;
	for (unsigned x = 0; x < n; x++)
		for (unsigned y = 0; y < n; y++)
			if (x != y)
			{
				mem[x][y] = starpu_transfer_predict(y, x, 1024 * 1024 * 1024);
				if (isfinite(mem[x][y]))
					most = fmax(most, mem[x][y]);
			}
	for (unsigned x = 0; x < n; x++)
		for (unsigned y = 0; y < n; y++)
		{
			mem[x][y] = most > 0.0 && isfinite(mem[x][y]) ? mem[x][y] / most : (x == y ? 0.0 : 1.0);
			if (x == y || la->arch_of[x] < 0 || la->arch_of[y] < 0)
				continue;
			double diff = 0.0;
			unsigned cx = 0, cy = 0;
			for (unsigned b = 0; b < NB; b++)
			{
				unsigned px = position[la->arch_of[x]][b], py = position[la->arch_of[y]][b];

				diff += fabs((double)px - (double)py);
				cx += px != 0;
				cy += py != 0;
			}
			unsigned c = cx > cy ? cx : cy;
			prio[x][y] = diff / ((c + 1) * (c + 2) / 2.0);
		}
	for (unsigned arch = 0; arch < STARPU_NARCH; arch++)
	{
		s[arch] = arch_env("S", arch, arch == STARPU_CPU_WORKER ? n - 1 : 1);
		step[arch] = arch_env("PRIO_STEP", arch, arch != STARPU_CPU_WORKER ? layout->nb_prios[arch] : 1);
		if (!step[arch])
			step[arch] = 1;
	}
	for (unsigned g = 0; g < n; g++)
	{
		int arch = la->arch_of[g];
		struct dist others[G];
		unsigned k = 0, nb, near;

		if (arch < 0)
			continue;
		nb = layout->nb_prios[arch];
		for (unsigned y = 0; y < n; y++)
		{
			others[y].group = y;
			others[y].dist = (1.0 - prio[g][y]) * 0.5 + mem[g][y] * 0.5;
		}
		others[g] = others[0];
		others[0] = (struct dist){ 0.0, g };
		qsort(others + 1, n - 1, sizeof(others[0]), by_dist);
		near = s[arch] + 1 < n ? s[arch] + 1 : n;
		for (unsigned block = 0; block < nb; block += step[arch])
		{
			unsigned end = block + step[arch] < nb ? block + step[arch] : nb;

			for (unsigned p = block; p < end; p++)
				la->order[g][k++] = (struct hp_la_access){ (unsigned short)p, (unsigned short)g };
			for (unsigned p = block; p < end; p++)
				for (unsigned o = 1; o < near; o++)
					la->order[g][k++] = (struct hp_la_access){ (unsigned short)p, (unsigned short)others[o].group };
		}
		for (unsigned p = 0; p < nb; p++)
			for (unsigned o = near; o < n; o++)
				la->order[g][k++] = (struct hp_la_access){ (unsigned short)p, (unsigned short)others[o].group };
		la->norder[g] = k;
	}
}

static void print_groups(FILE *stream, void *arg)
{
	const struct hp_la *la = arg;
	unsigned nworkers = starpu_worker_get_count();

	fprintf(stream, "[STARPU-LAHETEROPRIO] There are %u groups\n", la->ngroups);
	for (unsigned w = 0; w < nworkers && w < STARPU_NMAXWORKERS; w++)
	{
		char name[128];

		starpu_worker_get_name((int)w, name, sizeof(name));
		fprintf(stream, "[STARPU-LAHETEROPRIO] Worker %u => group %u (%s)\n", w, la->group_of[w], name);
	}
	fprintf(stream, "\n");
	for (unsigned g = 0; g < la->ngroups; g++)
	{
		int arch = la->arch_of[g];
		int at[G][NB];

		if (arch < 0)
			continue;
		memset(at, -1, sizeof(at));
		for (unsigned i = 0; i < la->norder[g]; i++)
			at[la->order[g][i].group][la->order[g][i].prio_idx] = (int)i;
		fprintf(stream, "[STARPU-LAHETEROPRIO] Access order for wgroup %u (of arch type %d):\n", g, arch);
		for (unsigned p = la->nb_prios[arch]; p > 0; p--)
		{
			fprintf(stream, "[STARPU-LAHETEROPRIO]     Prio %3u (Bucket %3u) => ", p - 1, la->mapping[arch][p - 1]);
			for (unsigned other = 0; other < la->ngroups; other++)
				if (at[other][p - 1] < 0)
					fprintf(stream, "[XX] ");
				else
					fprintf(stream, "[%2d] ", at[other][p - 1]);
			fprintf(stream, "\n");
		}
		fprintf(stream, "\n");
	}
}

/* ---------------------------------------------------------------- open */

struct hp_la *hp_la_open(unsigned sched_ctx_id, const struct astro_heteroprio_setup *layout)
{
	unsigned nnodes = starpu_memory_nodes_get_count();
	unsigned nworkers = starpu_worker_get_count();
	const char *push = astro_env_string("STARPU_LAHETEROPRIO_PUSH", ASTRO_ENV_NAME_MAX, NULL);
	struct hp_la *la;

	if (!layout->use_locality && astro_env_int("STARPU_HETEROPRIO_USE_LA", 0, 1, 0, NULL) <= 0)
		return NULL;
	if (nnodes > G)
	{
		astro_log_error(what, "data locality mode: %u memory nodes, more than the %d worker groups it handles; heteroprio runs without it",
				nnodes, G);
		return NULL;
	}
	if (!(la = calloc(1, sizeof(*la))))
	{
		astro_log_error(what, "data locality mode: out of memory; heteroprio runs without it");
		return NULL;
	}
	la->ngroups = nnodes ? nnodes : 1;
	for (unsigned g = 0; g < G; g++)
	{
		la->arch_of[g] = -1;
		la->worker_of[g] = -1;
	}
	for (unsigned w = 0; w < nworkers && w < STARPU_NMAXWORKERS; w++)
	{
		unsigned node = starpu_worker_get_memory_node(w);

		la->group_of[w] = node < la->ngroups ? node : 0;
		if (la->arch_of[la->group_of[w]] < 0)
			la->arch_of[la->group_of[w]] = (int)starpu_worker_get_type((int)w);
		la->worker_of[la->group_of[w]] = (int)w;
	}
	/* The application's threads push to the group of the first CPU worker. */
	la->master = starpu_cpu_worker_get_count() ? la->group_of[starpu_worker_get_by_type(STARPU_CPU_WORKER, 0)] : 0;
	memcpy(la->nb_prios, layout->nb_prios, sizeof(la->nb_prios));
	memcpy(la->mapping, layout->mapping, sizeof(la->mapping));

	la->set = PUSH_AUTO;
	if (push && push[0])
	{
		unsigned i;

		for (i = 0; i < sizeof(push_names) / sizeof(push_names[0]) && strcmp(push, push_names[i].name); i++)
			;
		if (i < sizeof(push_names) / sizeof(push_names[0]))
			la->set = push_names[i].push;
		else
			astro_log_error(what, "STARPU_LAHETEROPRIO_PUSH=%s: no such push strategy (WORKER, LcS, LS_SDH, LS_SDH2, LS_SDHB, LC_SMWB or AUTO); AUTO is used", push);
	}
	atomic_init(&la->use, la->set == PUSH_AUTO ? PUSH_LS_SDHB : (int)la->set);
	build_orders(la, layout);
	astro_heteroprio_setup_set_printer(sched_ctx_id, print_groups, la);
	return la;
}

void hp_la_close(struct hp_la *la, unsigned sched_ctx_id)
{
	if (!la)
		return;
	astro_heteroprio_setup_set_printer(sched_ctx_id, NULL, NULL);
	free(la);
}

const struct hp_la_access *hp_la_order(const struct hp_la *la, int workerid, unsigned *n)
{
	unsigned g = la->group_of[workerid];

	*n = la->norder[g];
	return la->order[g];
}

/* ---------------------------------------------------------------- push */

/* The group strategy push chooses for task, pushed from group own. */
static unsigned best_group(const struct hp_la *la, struct starpu_task *task, enum push push, unsigned own)
{
	unsigned n = la->ngroups, nbuffers = STARPU_TASK_GET_NBUFFERS(task);
	double size_on[G] = { 0 }, read_on[G] = { 0 }, write_on[G] = { 0 };
	unsigned written_on[G] = { 0 };
	double total_read = 0.0, total_write = 0.0;
	unsigned nwritten = 0, best = own;

	if (push == PUSH_WORKER || !nbuffers || !task->cl)
		return own;
	if (push == PUSH_LCS)
	{
		double least = DBL_MAX;

		for (unsigned g = 0; g < n; g++)
		{
			double t;

			if (la->worker_of[g] < 0)
				continue;
			t = starpu_task_expected_data_transfer_time_for(task, (unsigned)la->worker_of[g]);
			if (t < least || (t == least && g == own))
			{
				least = t;
				best = g;
			}
		}
		return best;
	}
	for (unsigned i = 0; i < nbuffers; i++)
	{
		starpu_data_handle_t handle = STARPU_TASK_GET_HANDLE(task, i);
		int is_read = STARPU_TASK_GET_MODE(task, i) == STARPU_R;
		double size = (double)starpu_data_get_size(handle);
		unsigned everywhere = 1;

		if (push == PUSH_LC_SMWB)
		{
			for (unsigned g = 0; g < n && everywhere; g++)
				everywhere = starpu_data_is_on_node(handle, g) != 0;
			/* Data present everywhere decide nothing. */
			if (everywhere)
				continue;
		}
		if (is_read)
			total_read += size;
		else
		{
			total_write += size;
			nwritten++;
		}
		for (unsigned g = 0; g < n; g++)
		{
			if (!starpu_data_is_on_node(handle, g))
				continue;
			size_on[g] += push == PUSH_LS_SDH2 && !is_read ? size * size : size;
			if (is_read)
				read_on[g] += size;
			else
			{
				write_on[g] += size;
				written_on[g]++;
			}
		}
	}
	if (push == PUSH_LS_SDHB)
	{
		/* The fewest bytes to bring, written ones weighing more when few are written. */
		double least = DBL_MAX;

		for (unsigned g = 0; g < n; g++)
		{
			double score = (total_read - read_on[g]) + (total_write - write_on[g]) * (2.0 - (double)nwritten / (double)nbuffers);

			if (score < least || (score == least && g == own))
			{
				least = score;
				best = g;
			}
		}
		return best;
	}
	/* LS_SDH, LS_SDH2: the most bytes already there; LC_SMWB: the same, written bytes weighing far more. */
	double most = 0.0;
	for (unsigned g = 0; g < n; g++)
	{
		double score = push == PUSH_LC_SMWB ? read_on[g] + 1000.0 * write_on[g] * written_on[g] : size_on[g];

		if (score > most || (score == most && g == own))
		{
			most = score;
			best = g;
		}
	}
	return best;
}

static unsigned own_group(const struct hp_la *la)
{
	int w = starpu_worker_get_id();

	return w < 0 ? la->master : la->group_of[w];
}

unsigned hp_la_push_group(struct hp_la *la, struct starpu_task *task, unsigned auto_groups[HP_LA_NAUTO])
{
	unsigned own = own_group(la);
	int use = atomic_load_explicit(&la->use, memory_order_relaxed);

	if (la->set != PUSH_AUTO)
		return best_group(la, task, (enum push)use, own);
	for (unsigned p = 0; p < HP_LA_NAUTO; p++)
		auto_groups[p] = best_group(la, task, (enum push)p, own);
	return auto_groups[use];
}

void hp_la_taken(struct hp_la *la, struct starpu_task *task, const unsigned auto_groups[HP_LA_NAUTO])
{
	unsigned own = own_group(la);
	int best = 0;

	if (la->set != PUSH_AUTO)
		return;
	for (unsigned p = 0; p < HP_LA_NAUTO; p++)
	{
		int h = best_group(la, task, (enum push)p, own) == auto_groups[p]
			? atomic_fetch_add(&la->history[p], 1) + 1 : atomic_load(&la->history[p]);

		if (h >= atomic_load(&la->history[best]))
			best = (int)p;
	}
	atomic_store_explicit(&la->use, best, memory_order_relaxed);
}
