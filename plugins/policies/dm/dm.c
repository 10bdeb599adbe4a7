/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The deque-model policies: each task goes to the worker (and the
 * implementation) where the performance models say it will end best, given
 * the work already queued on every worker.
 *
 *   dm      minimum expected completion time
 *   dmda    fitness = alpha·(end − best end) + beta·transfer + gamma·energy
 *           (+ the idle energy the choice makes the other workers burn)
 *   dmdas   dmda, queues sorted by priority, pops the first ready task
 *   dmdar   dmda, FIFO queues, pops the first ready task
 *   dmdap   dmda, queues sorted by priority, pops the head
 *   heft    dmda's former name
 *
 * Tasks bound to a worker (execute_on_a_specific_worker) go to the kernel's
 * queue of that worker; push_task_notify counts their prediction in its
 * expected end all the same (StarPU counts them as 0).
 *
 * A "ready" task has its input data on the worker's memory node: among the
 * tasks of the head's priority, the one with the fewest bytes still to fetch.
 *
 * Each worker keeps, under its queue lock, the expected start of its queued
 * work (exp_start: when the tasks it runs now are expected done), the
 * predicted length of what is queued (exp_len) and of what it runs
 * (pipeline_len). Pushing adds a task's prediction; the worker's
 * pre_exec_hook moves it to the pipeline, post_exec_hook removes it.
 * Deciders read these without the lock (relaxed atomics): a decision is a
 * heuristic, the counters stay exact. Unlike StarPU, post_exec_hook resets
 * the expected start to now (the worker is free, whatever was predicted). A
 * task that adds no predicted work (no model) skips all that: it only counts
 * in its worker's number of tasks, which the greedy choice reads.
 *
 * A prediction of NaN (the model is not calibrated for that worker and
 * implementation) or 0 (no model) makes the decision greedy: the least
 * loaded worker, uncalibrated ones first so that every architecture gets
 * calibrated.
 *
 * alpha, beta, gamma and the idle power come from STARPU_SCHED_ALPHA,
 * STARPU_SCHED_BETA, STARPU_SCHED_GAMMA (µs per Joule) and STARPU_IDLE_POWER
 * (W) when an instance starts; the knobs starpu.dmda.s_*_knob multiply them,
 * per policy (heft shares dmda's).
 */
#include <astrolabe/sched.h>
#include <astrolabe/env.h>
#include "ready.h"
#include <math.h>
#include <stdbool.h>
#include <astrolabe/knobs.h>

#define MODULE "sched_dm"

enum dm_variant { DM, DMDA, DMDAS, DMDAR, DMDAP, HEFT, DM_NVARIANTS };

struct dm_variant_desc
{
	const char *name;
	const char *description;
	/* Counts data transfers, energy and the knobs (all but dm). */
	bool data_aware;
	/* Queues ordered by priority, else FIFO. */
	bool sorted;
	/* Pops the first task whose data is ready, else the head. */
	bool ready_pop;
};

static const struct dm_variant_desc dm_variants[DM_NVARIANTS] =
{
	[DM] = { "dm", "deque model: each task to the worker where it is expected to end first", false, false, false },
	[DMDA] = { "dmda", "deque model data aware: expected end, data transfer time and energy", true, false, false },
	[DMDAS] = { "dmdas", "dmda with queues sorted by priority, popping the first task whose data is ready", true, true, true },
	[DMDAR] = { "dmdar", "dmda popping the first task whose data is ready", true, false, true },
	[DMDAP] = { "dmdap", "dmda with queues sorted by priority", true, true, false },
	[HEFT] = { "heft", "heft: the former name of dmda", true, false, false },
};

/* ------------------------------------------------------------------ knobs */

enum dm_knob { KNOB_ALPHA, KNOB_BETA, KNOB_GAMMA, KNOB_IDLE_POWER, DM_NKNOBS };

/* The knobs' multipliers, per variant (heft uses dmda's); read with relaxed atomics. */
static double dm_knob_factor[DM_NVARIANTS][DM_NKNOBS];

static enum dm_variant dm_knob_slot(enum dm_variant v)
{
	return v == HEFT ? DMDA : v;
}

static double dm_load(const double *p)
{
	double v;

	__atomic_load(p, &v, __ATOMIC_RELAXED);
	return v;
}

static void dm_store(double *p, double v)
{
	__atomic_store(p, &v, __ATOMIC_RELAXED);
}

static int dm_variant_of_name(const char *name)
{
	for (int v = 0; v < DM_NVARIANTS; v++)
		if (name && strcmp(name, dm_variants[v].name) == 0)
			return v;
	return -1;
}

static int dm_knob_get(const struct astro_knob_context *ctx, union astro_knob_value *value, void *arg)
{
	int v = dm_variant_of_name(ctx->sched_policy_name);

	(void)arg;
	if (v < 0 || ctx->index >= DM_NKNOBS)
		return -EINVAL;
	value->double_val = dm_load(&dm_knob_factor[dm_knob_slot(v)][ctx->index]);
	return 0;
}

static int dm_knob_set(const struct astro_knob_context *ctx, const union astro_knob_value *value, void *arg)
{
	int v = dm_variant_of_name(ctx->sched_policy_name);

	(void)arg;
	if (v < 0 || ctx->index >= DM_NKNOBS)
		return -EINVAL;
	dm_store(&dm_knob_factor[dm_knob_slot(v)][ctx->index], value->double_val);
	return 0;
}

static int dm_knobs_declare(void)
{
	static const char *const policies[] = { "dmda", "dmdas", "dmdar", "dmdap", "heft", NULL };
	static const struct { const char *name, *help; } knobs[DM_NKNOBS] =
	{
		[KNOB_ALPHA] = { "starpu.dmda.s_alpha_knob", "multiplies alpha, the weight of a task's expected end in the fitness" },
		[KNOB_BETA] = { "starpu.dmda.s_beta_knob", "multiplies beta, the weight of the time to transfer a task's input data" },
		[KNOB_GAMMA] = { "starpu.dmda.s_gamma_knob", "multiplies gamma, the weight of a task's expected energy" },
		[KNOB_IDLE_POWER] = { "starpu.dmda.s_idle_power_knob", "multiplies the idle power the other workers burn while a task makes them wait" },
	};
	struct astro_knob_group_decl group =
	{
		.module = MODULE, .scope = starpu_perf_knob_scope_per_scheduler,
		.get = dm_knob_get, .set = dm_knob_set, .policies = policies,
	};
	int g;

	for (int v = 0; v < DM_NVARIANTS; v++)
		for (int k = 0; k < DM_NKNOBS; k++)
			dm_knob_factor[v][k] = 1.0;
	g = astro_knob_group_declare(&group);
	if (g < 0)
		return g;
	for (int k = 0; k < DM_NKNOBS; k++)
	{
		struct astro_knob_decl knob =
		{
			.name = knobs[k].name, .type = starpu_perf_knob_type_double, .help = knobs[k].help,
			.has_default = 1, .default_value.double_val = 1.0,
			/* 0 switches the term off (StarPU refuses 0). */
			.check = ASTRO_KNOB_CHECK_RANGE, .min.double_val = 0.0, .max.double_val = 1e6,
		};
		int ret = astro_knob_declare(g, &knob);

		if (ret < 0)
			return ret;
	}
	return 0;
}

/* --------------------------------------------------------------- instance */

struct dm_worker
{
	starpu_pthread_mutex_t lock;
	struct astro_sched_queue queue;
	/* Written under lock, read anywhere (relaxed atomics). */
	double exp_start;
	double exp_len;
	double pipeline_len;
	/* Tasks queued or running here (StarPU's ntasks + pipeline_ntasks), for the greedy choice; atomic. */
	int ntasks;
	/* Relative speedup of its architecture, 0 until known (the architecture is set as the worker starts). */
	double speedup;
	/* Set at add_workers. */
	unsigned memory_node;
	/* The worker's own: when its current task started. */
	double started_at;
} __attribute__((aligned(ASTRO_SCHED_CACHE_LINE)));

struct dm_sched
{
	enum dm_variant variant;
	const struct dm_variant_desc *desc;
	unsigned sched_ctx_id;
	double alpha, beta, gamma, idle_power;
	int prefetch;
	struct astro_sched_workers workers;
	struct dm_worker w[STARPU_NMAXWORKERS];
};

/* The global context's instance, for the counters' updaters. */
static struct dm_sched *dm_active;

static void dm_init_variant(unsigned sched_ctx_id, enum dm_variant variant)
{
	struct dm_sched *dm = astro_sched_alloc_policy_data(dm_variants[variant].name, sizeof(*dm));
	int min_priority = 0, max_priority = 0, ret = 0;

	dm->variant = variant;
	dm->desc = &dm_variants[variant];
	dm->sched_ctx_id = sched_ctx_id;
	dm->alpha = astro_env_float("STARPU_SCHED_ALPHA", 0.0f, 1e9f, 1.0f, NULL);
	dm->beta = astro_env_float("STARPU_SCHED_BETA", 0.0f, 1e9f, 1.0f, NULL);
	dm->gamma = astro_env_float("STARPU_SCHED_GAMMA", 0.0f, 1e9f, 1000.0f, "µs/J");
	dm->idle_power = astro_env_float("STARPU_IDLE_POWER", 0.0f, ASTRO_ENV_POWER_MAX, 0.0f, "W");
	dm->prefetch = dm->desc->data_aware && starpu_get_prefetch_flag();
	if (dm->desc->sorted)
	{
		/* As StarPU: every priority counts unless the application set a range. */
		if (!starpu_sched_ctx_min_priority_is_set(sched_ctx_id))
			starpu_sched_ctx_set_min_priority(sched_ctx_id, INT_MIN);
		if (!starpu_sched_ctx_max_priority_is_set(sched_ctx_id))
			starpu_sched_ctx_set_max_priority(sched_ctx_id, INT_MAX);
		min_priority = starpu_sched_ctx_get_min_priority(sched_ctx_id);
		max_priority = starpu_sched_ctx_get_max_priority(sched_ctx_id);
	}
	for (int i = 0; i < STARPU_NMAXWORKERS; i++)
	{
		astro_sched_lock_init(&dm->w[i].lock);
		ret |= astro_sched_queue_init(&dm->w[i].queue, min_priority, max_priority);
	}
	if (ret)
	{
		astro_log_error(dm->desc->name, "cannot allocate the task queues");
		abort();
	}
	astro_sched_workers_init(&dm->workers);
	starpu_sched_ctx_set_policy_data(sched_ctx_id, dm);
	if (sched_ctx_id == STARPU_GLOBAL_SCHED_CTX)
		__atomic_store_n(&dm_active, dm, __ATOMIC_RELEASE);
}

#define DM_INIT(ident, variant) \
	static void dm_init_##ident(unsigned sched_ctx_id) { dm_init_variant(sched_ctx_id, variant); }
DM_INIT(dm, DM)
DM_INIT(dmda, DMDA)
DM_INIT(dmdas, DMDAS)
DM_INIT(dmdar, DMDAR)
DM_INIT(dmdap, DMDAP)
DM_INIT(heft, HEFT)

static void dm_deinit(unsigned sched_ctx_id)
{
	struct dm_sched *dm = starpu_sched_ctx_get_policy_data(sched_ctx_id);
	unsigned left = 0;

	if (sched_ctx_id == STARPU_GLOBAL_SCHED_CTX)
		__atomic_store_n(&dm_active, NULL, __ATOMIC_RELEASE);
	for (int i = 0; i < STARPU_NMAXWORKERS; i++)
	{
		left += astro_sched_queue_ntasks(&dm->w[i].queue);
		astro_sched_queue_fini(&dm->w[i].queue);
		STARPU_PTHREAD_MUTEX_DESTROY(&dm->w[i].lock);
	}
	if (left)
		astro_log_error(dm->desc->name, "%u tasks were still queued at shutdown", left);
	starpu_sched_ctx_set_policy_data(sched_ctx_id, NULL);
	free(dm);
}

static void dm_add_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers)
{
	struct dm_sched *dm = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	astro_sched_workers_add(&dm->workers, workerids, nworkers);
	for (unsigned i = 0; i < nworkers; i++)
	{
		int workerid = workerids[i];

		if (workerid < 0 || workerid >= STARPU_NMAXWORKERS)
			continue;
		dm->w[workerid].memory_node = starpu_worker_get_memory_node((unsigned)workerid);
		dm_store(&dm->w[workerid].exp_start, starpu_timing_now());
	}
}

static void dm_remove_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers)
{
	struct dm_sched *dm = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	astro_sched_workers_remove(&dm->workers, workerids, nworkers);
}

/* --------------------------------------------------------------- decision */


/* How much faster than a CPU core workerid is (StarPU's factors), for the greedy choice. */
static double dm_speedup(struct dm_sched *dm, int workerid)
{
	double speedup = dm_load(&dm->w[workerid].speedup);

	if (speedup > 0.0)
		return speedup;
	speedup = starpu_worker_get_relative_speedup(starpu_worker_get_perf_archtype(workerid, dm->sched_ctx_id));
	if (!(speedup > 0.0))
		return 1.0;
	dm_store(&dm->w[workerid].speedup, speedup);
	return speedup;
}

/* A prediction as it counts in the queue lengths: NaN (unknown) counts 0. */
static double dm_counted(double predicted)
{
	return isnan(predicted) || predicted < 0.0 ? 0.0 : predicted;
}

struct dm_choice
{
	int workerid;
	unsigned impl;
	/* The implementation the worker would pick by itself. */
	unsigned first_impl;
	double length;
	double transfer;
};

struct dm_candidate
{
	int workerid;
	unsigned impl;
	unsigned first_impl;
	double exp_end;
	double length;
	double transfer;
	double energy;
	/* What the choice weighs: the task's own length and transfer, or its bundle's. */
	double decide_length, decide_transfer;
};

/* A task of a bundle is placed for the whole bundle, as StarPU's dmda: the
 * tasks still in it, on workerid's architecture and memory node (a bundle
 * without estimate leaves the task's own). */
static void dm_bundle_costs(struct dm_sched *dm, starpu_task_bundle_t bundle, int workerid, unsigned impl, bool with_transfer,
			    struct dm_candidate *c)
{
	double length = starpu_task_bundle_expected_length(bundle, starpu_worker_get_perf_archtype(workerid, dm->sched_ctx_id), impl);
	if (!isnan(length) && length > 0.0)
		c->decide_length = length;
	if (with_transfer)
	{
		double transfer = starpu_task_bundle_expected_data_transfer_time(bundle, starpu_worker_get_memory_node((unsigned)workerid));
		if (!isnan(transfer))
			c->decide_transfer = transfer;
	}
}

/*
 * The greedy choice, taken as soon as one prediction is unknown (NaN) or
 * absent (0): uncalibrated pairs first (the first one, then the least
 * loaded of them), else the least loaded.
 */
struct dm_greedy
{
	bool unknown, calibrating;
	int workerid;
	unsigned impl, first_impl;
	double end, length;
};

/* workerid's implementation impl (of those in impl_mask) has no usable
 * prediction (length NaN or 0); ntasks_end is when the worker would be free. */
static inline void dm_greedy_consider(struct dm_greedy *g, int workerid, unsigned impl, unsigned impl_mask, double length,
				      double ntasks_end)
{
	if (g->workerid < 0 || (!g->calibrating && (isnan(length) || ntasks_end < g->end))
	    || (g->calibrating && isnan(length) && ntasks_end < g->end))
	{
		g->workerid = workerid;
		g->impl = impl;
		g->first_impl = (unsigned)__builtin_ctz(impl_mask);
		g->end = ntasks_end;
		g->length = length;
	}
	if (isnan(length))
		g->calibrating = true;
	g->unknown = true;
}

/* The pairs with a prediction, and the bounds of their expected ends. */
struct dm_candidates
{
	struct dm_candidate *c;
	unsigned n;
	double min_exp_end, max_exp_end_of_workers;
};

/* What the fitness weighs for task. */
struct dm_weights
{
	bool with_transfer, with_energy;
	double now;
};

/* Adds workerid's implementation impl (of those in impl_mask), predicted to
 * take length, to the candidates: its transfer and energy (or its bundle's
 * costs) and its expected end after free_at, when its queue is done. */
static inline void dm_candidate_add(struct dm_sched *dm, struct starpu_task *task, const struct dm_weights *wt, struct dm_candidates *cs,
				    int workerid, unsigned impl, unsigned impl_mask, double length, double free_at)
{
	struct dm_candidate *c = &cs->c[cs->n++];

	c->workerid = workerid;
	c->impl = impl;
	c->first_impl = (unsigned)__builtin_ctz(impl_mask);
	c->length = length;
	c->transfer = wt->with_transfer ? starpu_task_expected_data_transfer_time_for(task, (unsigned)workerid) : 0.0;
	c->decide_length = length;
	c->decide_transfer = c->transfer;
	if (STARPU_UNLIKELY(task->bundle != NULL))
		dm_bundle_costs(dm, task->bundle, workerid, impl, wt->with_transfer, c);
	c->energy = 0.0;
	if (wt->with_energy)
	{
		c->energy = starpu_task_worker_expected_energy(task, (unsigned)workerid, dm->sched_ctx_id, impl);
		if (isnan(c->energy))
			c->energy = 0.0;
	}
	c->exp_end = fmax(free_at, wt->now + c->decide_transfer) + c->decide_length;
	cs->min_exp_end = fmin(cs->min_exp_end, c->exp_end);
	cs->max_exp_end_of_workers = fmax(cs->max_exp_end_of_workers, free_at);
}

/* The candidate of the best fitness (cs->n > 0): dm's earliest end, or the
 * data-aware variants' weighed sum. */
static inline const struct dm_candidate *dm_best_candidate(struct dm_sched *dm, const struct dm_candidates *cs)
{
	enum dm_variant slot = dm_knob_slot(dm->variant);
	double alpha = dm->alpha * dm_load(&dm_knob_factor[slot][KNOB_ALPHA]);
	double beta = dm->beta * dm_load(&dm_knob_factor[slot][KNOB_BETA]);
	double gamma = dm->gamma * dm_load(&dm_knob_factor[slot][KNOB_GAMMA]);
	double idle_power = dm->idle_power * dm_load(&dm_knob_factor[slot][KNOB_IDLE_POWER]);
	const struct dm_candidate *best = NULL;
	double best_fitness = INFINITY;

	for (unsigned n = 0; n < cs->n; n++)
	{
		const struct dm_candidate *c = &cs->c[n];
		double fitness;

		if (dm->desc->data_aware)
		{
			fitness = alpha * (c->exp_end - cs->min_exp_end) + beta * c->decide_transfer + gamma * c->energy;
			/* The others wait idle until this task ends: gamma µs per Joule, idle power in W. */
			if (c->exp_end > cs->max_exp_end_of_workers)
				fitness += gamma * idle_power * (c->exp_end - cs->max_exp_end_of_workers) / 1e6;
		}
		else
			fitness = c->exp_end - cs->min_exp_end;
		if (!best || fitness < best_fitness)
		{
			best = c;
			best_fitness = fitness;
		}
	}
	return best;
}

/* The implementations of task workerid can run, in *impl_mask: with a model
 * all of them, else the first (its prediction is 0 anyway). False: none. */
static inline bool dm_worker_impls(struct starpu_task *task, int workerid, bool with_model, unsigned *impl_mask)
{
	unsigned first_impl;

	if (with_model)
		return starpu_worker_can_execute_task_impl((unsigned)workerid, task, impl_mask);
	if (!starpu_worker_can_execute_task_first_impl((unsigned)workerid, task, &first_impl))
		return false;
	*impl_mask = 1u << first_impl;
	return true;
}

/*
 * Chooses the worker and implementation for task. Returns 0, or -ENODEV
 * when no worker of the context may run it.
 */
static int dm_decide(struct dm_sched *dm, struct starpu_task *task, struct dm_choice *choice)
{
	struct starpu_perfmodel *model = task->cl ? task->cl->model : NULL;
	bool data_aware = dm->desc->data_aware;
	struct dm_candidate candidates[STARPU_NMAXWORKERS * STARPU_MAXIMPLEMENTATIONS];
	struct dm_candidates cs = { candidates, 0, INFINITY, -INFINITY };
	struct dm_greedy greedy = { .workerid = -1 };
	/* Without a model every prediction is 0: the choice is greedy, and needs no clock. */
	struct dm_weights wt =
	{
		.with_transfer = data_aware && task->cl && STARPU_TASK_GET_NBUFFERS(task) > 0,
		.with_energy = data_aware && task->cl && task->cl->energy_model,
		.now = model ? starpu_timing_now() : 0.0,
	};

	/* Ties go to the first worker looked at: the pushing worker itself when it
	 * belongs to the context (it released the task, is awake and has its data). */
	unsigned count = dm->workers.count;
	int pusher = starpu_worker_get_id();
	unsigned first = astro_sched_workers_contains(&dm->workers, pusher) ? (unsigned)dm->workers.position[pusher] : 0;

	for (unsigned n = 0, i = first; n < count; n++, i = i + 1 < count ? i + 1 : 0)
	{
		int workerid = dm->workers.ids[i];
		struct dm_worker *dw = &dm->w[workerid];
		unsigned impl_mask;

		if (!dm_worker_impls(task, workerid, model != NULL, &impl_mask))
			continue;
		double free_at = fmax(dm_load(&dw->exp_start), wt.now) + dm_load(&dw->exp_len);
		double ntasks_end = __atomic_load_n(&dw->ntasks, __ATOMIC_RELAXED) / dm_speedup(dm, workerid);
		for (unsigned impl = 0; impl < STARPU_MAXIMPLEMENTATIONS; impl++)
		{
			if (!(impl_mask & (1u << impl)))
				continue;
			double length = model ? starpu_task_worker_expected_length(task, (unsigned)workerid, dm->sched_ctx_id, impl) : 0.0;
			if (isnan(length) || length <= 0.0)
				dm_greedy_consider(&greedy, workerid, impl, impl_mask, length, ntasks_end);
			else if (!greedy.unknown)
				dm_candidate_add(dm, task, &wt, &cs, workerid, impl, impl_mask, length, free_at);
		}
	}

	if (greedy.unknown)
	{
		if (greedy.workerid < 0)
			return -ENODEV;
		choice->workerid = greedy.workerid;
		choice->impl = greedy.impl;
		choice->first_impl = greedy.first_impl;
		choice->length = greedy.length;
		choice->transfer = 0.0;
		return 0;
	}
	if (cs.n == 0)
		return -ENODEV;

	const struct dm_candidate *best = dm_best_candidate(dm, &cs);
	choice->workerid = best->workerid;
	choice->impl = best->impl;
	choice->first_impl = best->first_impl;
	choice->length = best->length;
	choice->transfer = best->transfer;
	return 0;
}

/* 1 when task adds predicted work (a length or a transfer) to its worker's queue. */
static bool dm_adds_work(const struct starpu_task *task)
{
	return dm_counted(task->predicted) > 0.0 || dm_counted(task->predicted_transfer) > 0.0;
}

/*
 * Adds task's prediction to dw's queue (dw locked). transfer overlaps the
 * work already queued. A task that adds no work (no model) only counts.
 */
static void dm_account_queued(struct dm_worker *dw, struct starpu_task *task, double length, double transfer)
{
	__atomic_fetch_add(&dw->ntasks, 1, __ATOMIC_RELAXED);
	task->predicted = length;
	task->predicted_transfer = dm_counted(transfer);
	if (!dm_adds_work(task))
		return;

	double now = starpu_timing_now();
	double exp_start = fmax(dm_load(&dw->exp_start), now);
	double exp_len = dm_load(&dw->exp_len);
	double exp_end = exp_start + exp_len;

	transfer = dm_counted(transfer);
	transfer = now + transfer < exp_end ? 0.0 : now + transfer - exp_end;
	dm_store(&dw->exp_start, exp_start);
	dm_store(&dw->exp_len, exp_len + transfer + dm_counted(length));
	task->predicted_transfer = transfer;
}

static int dm_push_task(struct starpu_task *task)
{
	struct dm_sched *dm = starpu_sched_ctx_get_policy_data(astro_sched_task_ctx(task));
	struct dm_choice choice;
	struct dm_worker *dw;
	int wake;

	if (dm_decide(dm, task, &choice) < 0)
	{
		/* The kernel runs it elsewhere: the hooks must not take it for one of ours. */
		*astro_sched_task_data(task) = NULL;
		return -ENODEV;
	}
	/* Placed: the rest of its bundle is weighed without it. */
	if (STARPU_UNLIKELY(task->bundle != NULL))
		starpu_task_bundle_remove(task->bundle, task);
	dw = &dm->w[choice.workerid];
	/* The worker runs its first capable implementation unless told otherwise. */
	if (choice.impl != choice.first_impl)
		starpu_task_set_implementation(task, choice.impl);
	if (dm->prefetch)
		starpu_prefetch_task_input_for(task, (unsigned)choice.workerid);
	*astro_sched_task_data(task) = dm;
	/* Before the task is visible: once queued, a worker may run and free it. */
	starpu_push_task_end(task);
	STARPU_PTHREAD_MUTEX_LOCK(&dw->lock);
	dm_account_queued(dw, task, choice.length, choice.transfer);
	astro_sched_queue_push(&dw->queue, task);
	wake = astro_sched_workers_claim(&dm->workers, choice.workerid) ? choice.workerid : -1;
	STARPU_PTHREAD_MUTEX_UNLOCK(&dw->lock);
	astro_sched_wake(wake, 1);
	return 0;
}

/* A task the kernel queued on workerid directly (bound to it): counted in its queue all the same. */
static void dm_push_task_notify(struct starpu_task *task, int workerid, int perf_workerid, unsigned sched_ctx_id)
{
	struct dm_sched *dm = starpu_sched_ctx_get_policy_data(sched_ctx_id);
	struct dm_worker *dw;
	unsigned impl = 0;
	double length = 0.0, transfer = 0.0;

	(void)perf_workerid;
	if (!dm || workerid < 0 || workerid >= STARPU_NMAXWORKERS || !astro_sched_workers_contains(&dm->workers, workerid))
	{
		/* Not counted: the hooks must not take it for one of ours. */
		*astro_sched_task_data(task) = NULL;
		return;
	}
	dw = &dm->w[workerid];
	if (task->cl && task->cl->model && starpu_worker_can_execute_task_first_impl((unsigned)workerid, task, &impl))
		length = starpu_task_worker_expected_length(task, (unsigned)workerid, sched_ctx_id, impl);
	if (dm->desc->data_aware && task->cl && STARPU_TASK_GET_NBUFFERS(task) > 0)
		transfer = starpu_task_expected_data_transfer_time_for(task, (unsigned)workerid);
	*astro_sched_task_data(task) = dm;
	STARPU_PTHREAD_MUTEX_LOCK(&dw->lock);
	dm_account_queued(dw, task, length, transfer);
	STARPU_PTHREAD_MUTEX_UNLOCK(&dw->lock);
}

/* -------------------------------------------------------------------- pop */

/* Bytes of task's input that are not yet on node. */
static size_t dm_missing_bytes(struct starpu_task *task, unsigned node)
{
	size_t missing = 0;
	unsigned nbuffers = task->cl ? STARPU_TASK_GET_NBUFFERS(task) : 0;

	for (unsigned i = 0; i < nbuffers; i++)
	{
		enum starpu_data_access_mode mode = STARPU_TASK_GET_MODE(task, i);
		starpu_data_handle_t handle = STARPU_TASK_GET_HANDLE(task, i);

		if (!(mode & STARPU_R) || (mode & (STARPU_SCRATCH | STARPU_REDUX)))
			continue;
		if (!starpu_data_is_on_node(handle, node))
			missing += starpu_data_get_size(handle);
	}
	return missing;
}

static struct starpu_task *dm_take(void *policy_data, int workerid)
{
	struct dm_sched *dm = policy_data;
	struct dm_worker *dw = &dm->w[workerid];
	struct starpu_task *task = NULL;

	if (!astro_sched_queue_ntasks(&dw->queue))
		return NULL;
	STARPU_PTHREAD_MUTEX_LOCK(&dw->lock);
	/* Everything here was chosen for this worker (even if it was disabled since: it still runs what it has). */
	if (astro_sched_queue_ntasks(&dw->queue))
		task = dm->desc->ready_pop ? dm_queue_take_ready(&dw->queue, dw->memory_node, dm_missing_bytes)
					    : astro_sched_queue_take_head(&dw->queue);
	STARPU_PTHREAD_MUTEX_UNLOCK(&dw->lock);
	return task;
}

static struct starpu_task *dm_pop_task(unsigned sched_ctx_id)
{
	struct dm_sched *dm = starpu_sched_ctx_get_policy_data(sched_ctx_id);

	return astro_sched_pop_task(&dm->workers, starpu_worker_get_id(), dm, dm_take);
}

/* ----------------------------------------------------------- exec hooks */

/* Per-codelet mean gap between predicted and measured lengths: a few slots per worker (single writer). */
#define DM_GAP_SLOTS 32
#define DM_GAP_PROBES 4

struct dm_gap_slot
{
	struct starpu_codelet *cl;
	double sum;
	int64_t count;
};

struct dm_gap_table
{
	struct dm_gap_slot slots[DM_GAP_SLOTS];
} __attribute__((aligned(ASTRO_SCHED_CACHE_LINE)));

static struct dm_gap_table dm_gaps[STARPU_NMAXWORKERS];

static unsigned dm_gap_index(const struct starpu_codelet *cl, unsigned probe)
{
	return (unsigned)(((uintptr_t)cl >> 4) + probe) % DM_GAP_SLOTS;
}

/* Records one execution of cl by workerid (the worker itself); a codelet finding no free slot is not counted. */
static void dm_gap_record(int workerid, struct starpu_codelet *cl, double gap)
{
	struct dm_gap_table *table = &dm_gaps[workerid];

	for (unsigned probe = 0; probe < DM_GAP_PROBES; probe++)
	{
		struct dm_gap_slot *slot = &table->slots[dm_gap_index(cl, probe)];
		struct starpu_codelet *owner = __atomic_load_n(&slot->cl, __ATOMIC_RELAXED);

		if (!owner)
			__atomic_store_n(&slot->cl, owner = cl, __ATOMIC_RELEASE);
		if (owner == cl)
		{
			dm_store(&slot->sum, slot->sum + gap);
			__atomic_store_n(&slot->count, slot->count + 1, __ATOMIC_RELEASE);
			return;
		}
	}
}

/* Tasks this instance counted (pushed or notified) carry it in their policy word; the worker running one, or NULL. */
static struct dm_worker *dm_hook_worker(struct starpu_task *task)
{
	struct dm_sched *dm = *astro_sched_task_data(task);
	int workerid = starpu_worker_get_id();

	/* The word may be another context's policy's, for a task we never saw. */
	if (!dm || dm != __atomic_load_n(&dm_active, __ATOMIC_RELAXED) || workerid < 0 || workerid >= STARPU_NMAXWORKERS)
		return NULL;
	return &dm->w[workerid];
}

/* The task's predicted length moves from the queue to the pipeline, its transfer is done. */
static void dm_pre_exec_hook(struct starpu_task *task, unsigned sched_ctx_id)
{
	struct dm_worker *dw = dm_hook_worker(task);
	double now, length, pipeline_len;

	(void)sched_ctx_id;
	if (!dw || !dm_adds_work(task))
		return;
	length = dm_counted(task->predicted);
	now = starpu_timing_now();
	dw->started_at = now;
	STARPU_PTHREAD_MUTEX_LOCK(&dw->lock);
	dm_store(&dw->exp_len, fmax(dm_load(&dw->exp_len) - length - task->predicted_transfer, 0.0));
	pipeline_len = dm_load(&dw->pipeline_len) + length;
	dm_store(&dw->pipeline_len, pipeline_len);
	dm_store(&dw->exp_start, now + pipeline_len);
	STARPU_PTHREAD_MUTEX_UNLOCK(&dw->lock);
}

static void dm_post_exec_hook(struct starpu_task *task, unsigned sched_ctx_id)
{
	struct dm_worker *dw = dm_hook_worker(task);
	double now, pipeline_len;

	(void)sched_ctx_id;
	if (!dw)
		return;
	*astro_sched_task_data(task) = NULL;
	__atomic_fetch_sub(&dw->ntasks, 1, __ATOMIC_RELAXED);
	if (!dm_adds_work(task))
		return;
	now = starpu_timing_now();
	STARPU_PTHREAD_MUTEX_LOCK(&dw->lock);
	pipeline_len = fmax(dm_load(&dw->pipeline_len) - dm_counted(task->predicted), 0.0);
	dm_store(&dw->pipeline_len, pipeline_len);
	/* The worker is free now, whatever was predicted. */
	dm_store(&dw->exp_start, now + pipeline_len);
	STARPU_PTHREAD_MUTEX_UNLOCK(&dw->lock);
	if (astro_counter_collecting() && task->cl && dm_counted(task->predicted) > 0.0)
		dm_gap_record(starpu_worker_get_id(), task->cl, fabs((now - dw->started_at) - task->predicted));
}

/* --------------------------------------------------------------- counters */

static int dm_id_queue_length = -1, dm_id_gap = -1;

static void dm_update_worker(struct starpu_perf_counter_sample *sample, void *context, void *arg)
{
	struct dm_sched *dm = __atomic_load_n(&dm_active, __ATOMIC_ACQUIRE);
	int workerid = astro_counter_context_worker(context);
	double length = 0.0;

	(void)arg;
	if (workerid < 0 || workerid >= STARPU_NMAXWORKERS)
		return;
	if (dm)
	{
		struct dm_worker *dw = &dm->w[workerid];

		length = fmax(dm_load(&dw->exp_start) - starpu_timing_now(), 0.0) + dm_load(&dw->exp_len);
	}
	astro_counter_sample_set_double(sample, dm_id_queue_length, length);
}

static void dm_update_codelet(struct starpu_perf_counter_sample *sample, void *context, void *arg)
{
	struct starpu_codelet *cl = context;
	double sum = 0.0;
	int64_t count = 0;

	(void)arg;
	for (unsigned w = 0; w < starpu_worker_get_count() && w < STARPU_NMAXWORKERS; w++)
		for (unsigned probe = 0; probe < DM_GAP_PROBES; probe++)
		{
			struct dm_gap_slot *slot = &dm_gaps[w].slots[dm_gap_index(cl, probe)];

			if (__atomic_load_n(&slot->cl, __ATOMIC_ACQUIRE) == cl)
			{
				count += __atomic_load_n(&slot->count, __ATOMIC_ACQUIRE);
				sum += dm_load(&slot->sum);
				break;
			}
		}
	astro_counter_sample_set_double(sample, dm_id_gap, count ? sum / (double)count : 0.0);
}

static int dm_counters_register(void)
{
	memset(dm_gaps, 0, sizeof(dm_gaps));
	dm_id_queue_length = astro_counter_register(MODULE, starpu_perf_counter_scope_per_worker,
						    "starpu.sched.dm.w_expected_queue_length", starpu_perf_counter_type_double,
						    ASTRO_COUNTER_INSTANT, "us",
						    "predicted time until this worker has run what is queued to it (dm, dmda, dmdas, dmdar, dmdap)");
	dm_id_gap = astro_counter_register(MODULE, starpu_perf_counter_scope_per_codelet,
					   "starpu.sched.dm.c_mean_prediction_gap", starpu_perf_counter_type_double,
					   ASTRO_COUNTER_INSTANT, "us",
					   "mean absolute gap between the predicted and the measured length of this codelet's tasks placed by a dm policy");
	if (dm_id_queue_length < 0 || dm_id_gap < 0)
		return -EINVAL;
	if (astro_counter_register_updater(MODULE, starpu_perf_counter_scope_per_worker, dm_update_worker, NULL) < 0)
		return -EINVAL;
	return astro_counter_register_updater(MODULE, starpu_perf_counter_scope_per_codelet, dm_update_codelet, NULL);
}

/* ----------------------------------------------------------------- plugin */

#define DM_POLICY(ident) \
	{ \
		.init_sched = dm_init_##ident, .deinit_sched = dm_deinit, \
		.add_workers = dm_add_workers, .remove_workers = dm_remove_workers, \
		.push_task = dm_push_task, .push_task_notify = dm_push_task_notify, .pop_task = dm_pop_task, \
		.pre_exec_hook = dm_pre_exec_hook, .post_exec_hook = dm_post_exec_hook, \
		.prefetches = 1, .policy_name = #ident, .policy_description = NULL, \
		.worker_type = STARPU_WORKER_LIST, \
	}

static struct starpu_sched_policy dm_policies[DM_NVARIANTS] =
{
	[DM] = DM_POLICY(dm),
	[DMDA] = DM_POLICY(dmda),
	[DMDAS] = DM_POLICY(dmdas),
	[DMDAR] = DM_POLICY(dmdar),
	[DMDAP] = DM_POLICY(dmdap),
	[HEFT] = DM_POLICY(heft),
};

static int init(void)
{
	int ret;

	/* The policies work without their counters and knobs: a failure there was printed. */
	dm_counters_register();
	dm_knobs_declare();
	for (int v = 0; v < DM_NVARIANTS; v++)
	{
		dm_policies[v].policy_description = dm_variants[v].description;
		ret = astro_sched_policy_register(&dm_policies[v]);
		if (ret < 0)
			return ret;
	}
	return 0;
}

ASTRO_PLUGIN_DEFINE(sched_dm, ASTRO_PLUGIN_SCHED, "dm, dmda, dmdas, dmdar, dmdap, heft: placement by performance models", init, NULL);
