/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The theoretical lower bound on execution time (starpu_bound.h).
 *
 * An observer of the hub records, between starpu_bound_start() and
 * starpu_bound_stop(), each submitted task with its codelet's prediction on
 * every worker (the best implementation the worker can run), and, when asked,
 * the dependencies between the tasks; it also notes where and when each
 * recorded task ran, for starpu_bound_print().
 *
 * The recording becomes one linear program (struct lp), which is written as a
 * CPLEX LP or free MPS file, or handed to GLPK:
 * - without dependencies, tasks with the same codelet and the same predictions
 *   form a kind, and workers with the same predictions form a kind; the program
 *   spreads the tasks of each kind over the kinds of workers so that no kind
 *   of worker works longer than tmax times its number of workers;
 * - with dependencies, each task gets a start and an end time and a share of
 *   each worker (0 or 1 when solved in integers); a task starts after its
 *   predecessors end; two tasks that may run at the same time and are put on
 *   the same worker do not overlap (an ordering variable and big-M rows, which
 *   only bind in integers); with priorities, a task of higher priority starts
 *   no later than a task of lower priority that does not depend on it.
 * Times are in ms, as StarPU's.
 */
#include "bound.h"
#include <math.h>

/* ------------------------------------------------------------ the recording */

struct rec_task
{
	unsigned long job;
	char *name;		/* the codelet's name (NULL: a task without codelet, which takes no time) */
	int prio;
	bool has_tag;
	starpu_tag_t tag;
	double *len;		/* per worker, ms: INFINITY where it cannot run, NAN without a prediction */
	int ran_on;		/* the worker that ran it, -1 */
	double start_us, end_us;
	int kind;		/* its task kind, once the program is built */
};

struct rec_dep
{
	unsigned long succ, pred;	/* job ids, or tags for ASTRO_DEP_TAG */
	unsigned kind;
};

enum rec_state { REC_IDLE, REC_RECORDING, REC_STOPPED };

static struct
{
	starpu_pthread_mutex_t lock;
	enum rec_state state;
	bool deps, prio;
	unsigned nworkers;
	GArray *tasks;		/* struct rec_task */
	GArray *dep_list;	/* struct rec_dep */
	GHashTable *by_job;	/* job id -> index + 1 */
	unsigned nended;	/* recorded tasks that ran */
	int subscription;
} rec = { .lock = STARPU_PTHREAD_MUTEX_INITIALIZER, .subscription = -1 };

#define RECORD_MOMENTS (ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_SUBMITTED) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_STARTED) | \
			ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_ENDED))
#define RUN_MOMENTS (ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_STARTED) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_ENDED))

static void recording_free(void)
{
	for (unsigned i = 0; rec.tasks && i < rec.tasks->len; i++) {
		struct rec_task *t = &g_array_index(rec.tasks, struct rec_task, i);
		free(t->name);
		free(t->len);
	}
	if (rec.tasks)
		g_array_free(rec.tasks, TRUE);
	if (rec.dep_list)
		g_array_free(rec.dep_list, TRUE);
	if (rec.by_job)
		g_hash_table_destroy(rec.by_job);
	rec.tasks = NULL;
	rec.dep_list = NULL;
	rec.by_job = NULL;
	rec.nended = 0;
}

/* The codelet's prediction for task on workerid, in ms: its best implementation there. */
static double predict(struct starpu_task *task, unsigned workerid)
{
	unsigned mask = 0;
	if (!starpu_worker_can_execute_task_impl(workerid, task, &mask) || !mask)
		return INFINITY;
	if (!task->cl->model)
		return NAN;
	double best = INFINITY;
	for (unsigned impl = 0; impl < STARPU_MAXIMPLEMENTATIONS; impl++) {
		if (!(mask & (1u << impl)))
			continue;
		double us = _astro_pm_worker_predict(task, workerid, impl);
		if (isnan(us) || us < 0)
			return NAN;
		best = fmin(best, us / 1000.0);
	}
	return best;
}

static void record_task(struct starpu_task *task, unsigned long job)
{
	unsigned nworkers = starpu_worker_get_count();	/* rec.nworkers, which needs rec.lock */
	struct rec_task t = { .job = job, .prio = task->priority, .has_tag = task->use_tag, .tag = task->tag_id,
			      .ran_on = -1, .kind = -1 };
	t.len = calloc(nworkers ? nworkers : 1, sizeof(*t.len));
	if (task->cl) {
		const char *name = starpu_task_get_name(task);
		t.name = strdup(name ? name : "(unnamed codelet)");
		for (unsigned w = 0; w < nworkers; w++)
			t.len[w] = predict(task, w);
	}
	starpu_pthread_mutex_lock(&rec.lock);
	if (rec.state == REC_RECORDING) {
		g_array_append_val(rec.tasks, t);
		g_hash_table_insert(rec.by_job, GSIZE_TO_POINTER(job), GUINT_TO_POINTER(rec.tasks->len));
		t.name = NULL;
		t.len = NULL;
	}
	starpu_pthread_mutex_unlock(&rec.lock);
	free(t.name);
	free(t.len);
}

static void record_run(const struct astro_event *ev)
{
	double now = starpu_timing_now();
	starpu_pthread_mutex_lock(&rec.lock);
	guint index = rec.by_job ? GPOINTER_TO_UINT(g_hash_table_lookup(rec.by_job, GSIZE_TO_POINTER(ev->job_id))) : 0;
	if (index) {
		struct rec_task *t = &g_array_index(rec.tasks, struct rec_task, index - 1);
		if (ev->moment == ASTRO_MOMENT_TASK_STARTED) {
			t->ran_on = ev->workerid;
			t->start_us = now;
		} else if (t->end_us == 0.0) {
			t->end_us = now;
			/* Once every recorded task ran, the observer costs nothing any more. */
			if (++rec.nended == rec.tasks->len && rec.state == REC_STOPPED)
				astro_observe_set_mask(rec.subscription, 0);
		}
	}
	starpu_pthread_mutex_unlock(&rec.lock);
}

static void on_moment(const struct astro_event *ev, void *arg)
{
	(void)arg;
	switch (ev->moment) {
	case ASTRO_MOMENT_TASK_SUBMITTED:
		if (ev->task)
			record_task(ev->task, ev->job_id);
		break;
	case ASTRO_MOMENT_TASK_DEPENDENCY: {
		struct rec_dep d = { .succ = ev->job_id, .pred = ev->other_id, .kind = ev->nimpl };
		starpu_pthread_mutex_lock(&rec.lock);
		if (rec.state == REC_RECORDING)
			g_array_append_val(rec.dep_list, d);
		starpu_pthread_mutex_unlock(&rec.lock);
		break;
	}
	case ASTRO_MOMENT_TASK_STARTED:
	case ASTRO_MOMENT_TASK_ENDED:
		record_run(ev);
		break;
	default:
		break;
	}
}

void starpu_bound_start(int deps, int prio)
{
	if (!starpu_is_initialized()) {
		_astro_error("starpu_bound_start: StarPU is not initialised: call starpu_init() first");
		return;
	}
	uint64_t mask = RECORD_MOMENTS | (deps ? ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_DEPENDENCY) : 0) | ASTRO_OBSERVE_UNTIMED;
	starpu_pthread_mutex_lock(&rec.lock);
	recording_free();
	rec.tasks = g_array_new(FALSE, TRUE, sizeof(struct rec_task));
	rec.dep_list = g_array_new(FALSE, TRUE, sizeof(struct rec_dep));
	rec.by_job = g_hash_table_new(g_direct_hash, g_direct_equal);
	rec.deps = deps != 0;
	rec.prio = prio != 0;
	rec.nworkers = starpu_worker_get_count();
	rec.state = REC_RECORDING;
	int sub = rec.subscription;
	starpu_pthread_mutex_unlock(&rec.lock);
	if (sub >= 0)
		astro_observe_set_mask(sub, mask);
	else {
		sub = astro_observe_subscribe(mask, on_moment, NULL);
		starpu_pthread_mutex_lock(&rec.lock);
		rec.subscription = sub;
		starpu_pthread_mutex_unlock(&rec.lock);
	}
}

void starpu_bound_stop(void)
{
	starpu_pthread_mutex_lock(&rec.lock);
	if (rec.state != REC_RECORDING) {
		starpu_pthread_mutex_unlock(&rec.lock);
		_astro_error("starpu_bound_stop: no recording is going on: call starpu_bound_start() before submitting the tasks");
		return;
	}
	rec.state = REC_STOPPED;
	/* Only where the recorded tasks run is still of interest. */
	astro_observe_set_mask(rec.subscription, rec.nended == rec.tasks->len ? 0 : RUN_MOMENTS | ASTRO_OBSERVE_UNTIMED);
	starpu_pthread_mutex_unlock(&rec.lock);
}

/* From starpu_init() (models_init): the hub's slots were reset by the previous shutdown. */
void _astro_bound_init(void)
{
	starpu_pthread_mutex_lock(&rec.lock);
	recording_free();
	rec.state = REC_IDLE;
	rec.subscription = -1;
	starpu_pthread_mutex_unlock(&rec.lock);
}

void _astro_bound_shutdown(void)
{
	starpu_pthread_mutex_lock(&rec.lock);
	if (rec.subscription >= 0)
		astro_observe_set_mask(rec.subscription, 0);
	recording_free();
	rec.state = REC_IDLE;
	starpu_pthread_mutex_unlock(&rec.lock);
}

/* ------------------------------------------------------- the linear program */

static unsigned lp_col(struct lp *lp, double lb, double ub, bool integer, int task_kind, int worker_kind, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));
static unsigned lp_col(struct lp *lp, double lb, double ub, bool integer, int task_kind, int worker_kind, const char *fmt, ...)
{
	struct lp_col c = { .lb = lb, .ub = ub, .integer = integer, .task_kind = task_kind, .worker_kind = worker_kind };
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c.name, sizeof(c.name), fmt, ap);
	va_end(ap);
	g_array_append_val(lp->cols, c);
	return lp->cols->len - 1;
}

static void lp_row(struct lp *lp, char type, double rhs, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void lp_row(struct lp *lp, char type, double rhs, const char *fmt, ...)
{
	struct lp_row r = { .type = type, .rhs = rhs, .first = lp->terms->len };
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r.name, sizeof(r.name), fmt, ap);
	va_end(ap);
	g_array_append_val(lp->rows, r);
}

/* Adds coef * col to the last row. */
static void lp_term(struct lp *lp, unsigned col, double coef)
{
	struct lp_term t = { .col = col, .coef = coef };
	g_array_append_val(lp->terms, t);
	g_array_index(lp->rows, struct lp_row, lp->rows->len - 1).n++;
}

static void lp_free(struct lp *lp)
{
	if (lp->cols)
		g_array_free(lp->cols, TRUE);
	if (lp->rows)
		g_array_free(lp->rows, TRUE);
	if (lp->terms)
		g_array_free(lp->terms, TRUE);
	free(lp->worker_kind);
	free(lp->task_kind_count);
	free(lp->task_kind_first);
	free(lp->worker_kind_count);
	memset(lp, 0, sizeof(*lp));
}

static struct rec_task *task_at(unsigned i)
{
	return &g_array_index(rec.tasks, struct rec_task, i);
}

/* Is the caller's state one the outputs can use? Caller holds rec.lock. */
static bool recording_usable(const char *fn)
{
	if (rec.state == REC_IDLE) {
		_astro_error("%s: nothing was recorded: call starpu_bound_start() before submitting the tasks, and starpu_bound_stop() after", fn);
		return false;
	}
	if (rec.state == REC_RECORDING) {
		_astro_error("%s: the recording is still going on: call starpu_bound_stop() first", fn);
		return false;
	}
	if (rec.tasks->len == 0) {
		_astro_error("%s: no task was submitted between starpu_bound_start() and starpu_bound_stop()", fn);
		return false;
	}
	return true;
}

/* Do all the recorded tasks have a prediction, and a worker to run them? Names the codelets that do not. Caller holds rec.lock. */
static bool recording_predicted(const char *fn)
{
	GString *missing = g_string_new(NULL), *nowhere = g_string_new(NULL);
	GHashTable *named = g_hash_table_new(g_str_hash, g_str_equal);
	for (unsigned i = 0; i < rec.tasks->len; i++) {
		struct rec_task *t = task_at(i);
		if (!t->name)
			continue;
		bool runnable = false, predicted = true;
		for (unsigned w = 0; w < rec.nworkers; w++) {
			runnable |= !isinf(t->len[w]);
			predicted &= !isnan(t->len[w]);
		}
		GString *list = !runnable ? nowhere : !predicted ? missing : NULL;
		if (list && !g_hash_table_contains(named, t->name)) {
			g_hash_table_add(named, t->name);
			g_string_append_printf(list, "%s%s", list->len ? ", " : "", t->name);
		}
	}
	bool ok = missing->len == 0 && nowhere->len == 0;
	if (missing->len)
		_astro_error("%s: no performance-model prediction for the tasks of codelet(s) %s: calibrate their models "
			     "(STARPU_CALIBRATE=1) or give them one; no bound is computed", fn, missing->str);
	if (nowhere->len)
		_astro_error("%s: no worker can run the tasks of codelet(s) %s: start a worker of a kind they have an "
			     "implementation for; no bound is computed", fn, nowhere->str);
	g_hash_table_destroy(named);
	g_string_free(missing, TRUE);
	g_string_free(nowhere, TRUE);
	return ok;
}

static bool same_lengths(const double *a, const double *b, unsigned n, unsigned stride)
{
	for (unsigned i = 0; i < n; i++)
		if (a[i * stride] != b[i * stride])
			return false;
	return true;
}

/* Workers with the same predictions for every task form a kind; tasks with the same codelet and predictions too. */
static void lp_kinds(struct lp *lp)
{
	unsigned n = rec.tasks->len, nw = rec.nworkers;
	lp->ntasks = n;
	lp->worker_kind = calloc(nw ? nw : 1, sizeof(int));
	lp->worker_kind_count = calloc(nw ? nw : 1, sizeof(unsigned));
	int *rep = calloc(nw ? nw : 1, sizeof(int));
	for (unsigned w = 0; w < nw; w++) {
		unsigned k;
		for (k = 0; k < lp->nworker_kinds; k++) {
			bool same = true;
			for (unsigned i = 0; same && i < n; i++)
				same = task_at(i)->len[w] == task_at(i)->len[rep[k]];
			if (same)
				break;
		}
		if (k == lp->nworker_kinds)
			rep[lp->nworker_kinds++] = (int)w;
		lp->worker_kind[w] = (int)k;
		lp->worker_kind_count[k]++;
	}
	free(rep);
	lp->task_kind_count = calloc(n, sizeof(unsigned));
	lp->task_kind_first = calloc(n, sizeof(unsigned));
	for (unsigned i = 0; i < n; i++) {
		struct rec_task *t = task_at(i);
		if (!t->name)
			continue;
		unsigned p;
		for (p = 0; p < lp->ntask_kinds; p++) {
			struct rec_task *r = task_at(lp->task_kind_first[p]);
			if (!strcmp(r->name, t->name) && same_lengths(r->len, t->len, nw, 1))
				break;
		}
		if (p == lp->ntask_kinds)
			lp->task_kind_first[lp->ntask_kinds++] = i;
		t->kind = (int)p;
		lp->task_kind_count[p]++;
	}
}

/* Without dependencies: how many tasks of each kind each kind of worker runs. */
static void lp_build_independent(struct lp *lp, bool integer)
{
	double longest_task = 0;	/* a task runs whole on one worker: tmax is at least its shortest length */
	for (unsigned p = 0; p < lp->ntask_kinds; p++) {
		double shortest = INFINITY;
		for (unsigned w = 0; w < rec.nworkers; w++)
			shortest = fmin(shortest, task_at(lp->task_kind_first[p])->len[w]);
		longest_task = fmax(longest_task, shortest);
	}
	unsigned tmax = lp_col(lp, longest_task, INFINITY, false, -1, -1, "tmax");
	g_array_index(lp->cols, struct lp_col, tmax).obj = 1;
	/* n<p>w<k>: tasks of kind p on workers of kind k, where they can run. */
	int *col_of = malloc(sizeof(int) * (lp->ntask_kinds * lp->nworker_kinds + 1));
	for (unsigned p = 0; p < lp->ntask_kinds; p++)
		for (unsigned k = 0; k < lp->nworker_kinds; k++) {
			col_of[p * lp->nworker_kinds + k] = -1;
			unsigned w = 0;
			while (lp->worker_kind[w] != (int)k)
				w++;
			if (!isinf(task_at(lp->task_kind_first[p])->len[w]))
				col_of[p * lp->nworker_kinds + k] = (int)lp_col(lp, 0, lp->task_kind_count[p], integer, (int)p, (int)k, "n%uw%u", p, k);
		}
	for (unsigned k = 0; k < lp->nworker_kinds; k++) {
		lp_row(lp, 'L', 0, "W%u", k);
		unsigned w = 0;
		while (lp->worker_kind[w] != (int)k)
			w++;
		for (unsigned p = 0; p < lp->ntask_kinds; p++)
			if (col_of[p * lp->nworker_kinds + k] >= 0)
				lp_term(lp, (unsigned)col_of[p * lp->nworker_kinds + k], task_at(lp->task_kind_first[p])->len[w]);
		lp_term(lp, tmax, -(double)lp->worker_kind_count[k]);
	}
	for (unsigned p = 0; p < lp->ntask_kinds; p++) {
		lp_row(lp, 'E', lp->task_kind_count[p], "T%u", p);
		for (unsigned k = 0; k < lp->nworker_kinds; k++)
			if (col_of[p * lp->nworker_kinds + k] >= 0)
				lp_term(lp, (unsigned)col_of[p * lp->nworker_kinds + k], 1);
	}
	free(col_of);
}

/* reach[i] (bitsets of n bits): the tasks i transitively depends on. */
static guint64 *reachability(const GArray *edges, unsigned n, unsigned words)
{
	guint64 *reach = calloc((size_t)n * words + 1, sizeof(guint64));
	/* Iterate to a fixed point: dependency chains are short next to the cost of the program itself. */
	for (bool changed = true; changed;) {
		changed = false;
		for (unsigned e = 0; e < edges->len / 2; e++) {
			const unsigned *ed = &g_array_index(edges, unsigned, e * 2);	/* succ, pred */
			guint64 *s = reach + (size_t)ed[0] * words, *p = reach + (size_t)ed[1] * words;
			if (!(s[ed[1] / 64] & (UINT64_C(1) << (ed[1] % 64)))) {
				s[ed[1] / 64] |= UINT64_C(1) << (ed[1] % 64);
				changed = true;
			}
			for (unsigned x = 0; x < words; x++)
				if ((s[x] | p[x]) != s[x]) {
					s[x] |= p[x];
					changed = true;
				}
		}
	}
	return reach;
}

/* The recorded dependencies as (succ, pred) index pairs between recorded tasks. */
static GArray *dependency_edges(void)
{
	GArray *edges = g_array_new(FALSE, FALSE, sizeof(unsigned));
	GHashTable *by_tag = g_hash_table_new(g_int64_hash, g_int64_equal);
	for (unsigned i = 0; i < rec.tasks->len; i++)
		if (task_at(i)->has_tag)
			g_hash_table_insert(by_tag, &task_at(i)->tag, GUINT_TO_POINTER(i + 1));
	for (unsigned d = 0; d < rec.dep_list->len; d++) {
		const struct rec_dep *dep = &g_array_index(rec.dep_list, struct rec_dep, d);
		guint s, p;
		if (dep->kind == ASTRO_DEP_TAG) {
			gint64 st = (gint64)dep->succ, pt = (gint64)dep->pred;
			s = GPOINTER_TO_UINT(g_hash_table_lookup(by_tag, &st));
			p = GPOINTER_TO_UINT(g_hash_table_lookup(by_tag, &pt));
		} else {
			s = GPOINTER_TO_UINT(g_hash_table_lookup(rec.by_job, GSIZE_TO_POINTER(dep->succ)));
			p = GPOINTER_TO_UINT(g_hash_table_lookup(rec.by_job, GSIZE_TO_POINTER(dep->pred)));
		}
		if (s && p && s != p) {	/* a dependency on a task outside the recording is already satisfied */
			unsigned pair[2] = { s - 1, p - 1 };
			g_array_append_vals(edges, pair, 2);
		}
	}
	g_hash_table_destroy(by_tag);
	return edges;
}

static bool reaches(const guint64 *reach, unsigned words, unsigned from, unsigned to)
{
	return reach[(size_t)from * words + to / 64] & (UINT64_C(1) << (to % 64));
}

/* With dependencies: start and end times, the share of each worker, precedence, no overlap, priorities. */
static void lp_build_dependent(struct lp *lp, bool integer)
{
	unsigned n = rec.tasks->len, nw = rec.nworkers;
	unsigned tmax = lp_col(lp, 0, INFINITY, false, -1, -1, "tmax");
	g_array_index(lp->cols, struct lp_col, tmax).obj = 1;
	unsigned *s = malloc(sizeof(unsigned) * n), *e = malloc(sizeof(unsigned) * n);
	int *a = malloc(sizeof(int) * ((size_t)n * nw + 1));
	double horizon = 0;	/* no schedule needs longer than all tasks one after the other: the big M */
	for (unsigned i = 0; i < n; i++) {
		struct rec_task *t = task_at(i);
		s[i] = lp_col(lp, 0, INFINITY, false, -1, -1, "t%lus", t->job);
		e[i] = lp_col(lp, 0, INFINITY, false, -1, -1, "t%lue", t->job);
		double longest = 0;
		for (unsigned w = 0; w < nw; w++) {
			a[i * nw + w] = -1;
			if (t->name && !isinf(t->len[w])) {
				a[i * nw + w] = (int)lp_col(lp, 0, 1, integer, t->kind, lp->worker_kind[w], "t%luw%u", t->job, w);
				longest = fmax(longest, t->len[w]);
			}
		}
		horizon += longest;
	}
	double M = horizon > 0 ? horizon : 1;
	for (unsigned i = 0; i < n; i++) {
		struct rec_task *t = task_at(i);
		if (t->name) {
			lp_row(lp, 'E', 1, "t%lua", t->job);	/* the task runs whole */
			for (unsigned w = 0; w < nw; w++)
				if (a[i * nw + w] >= 0)
					lp_term(lp, (unsigned)a[i * nw + w], 1);
		}
		lp_row(lp, 'E', 0, "t%lud", t->job);		/* end = start + its length where it runs */
		lp_term(lp, e[i], 1);
		lp_term(lp, s[i], -1);
		for (unsigned w = 0; t->name && w < nw; w++)
			if (a[i * nw + w] >= 0)
				lp_term(lp, (unsigned)a[i * nw + w], -t->len[w]);
		lp_row(lp, 'L', 0, "t%lum", t->job);		/* it ends by tmax */
		lp_term(lp, e[i], 1);
		lp_term(lp, tmax, -1);
	}
	for (unsigned w = 0; w < nw; w++) {			/* no worker works longer than tmax */
		lp_row(lp, 'L', 0, "w%u", w);
		for (unsigned i = 0; i < n; i++)
			if (a[i * nw + w] >= 0)
				lp_term(lp, (unsigned)a[i * nw + w], task_at(i)->len[w]);
		lp_term(lp, tmax, -1);
	}
	GArray *edges = dependency_edges();
	for (unsigned d = 0; d < edges->len / 2; d++) {		/* a task starts after its predecessors end */
		const unsigned *ed = &g_array_index(edges, unsigned, d * 2);
		lp_row(lp, 'G', 0, "d%lu_%lu", task_at(ed[0])->job, task_at(ed[1])->job);
		lp_term(lp, s[ed[0]], 1);
		lp_term(lp, e[ed[1]], -1);
	}
	unsigned words = (n + 63) / 64;
	guint64 *reach = reachability(edges, n, words);
	g_array_free(edges, TRUE);
	for (unsigned i = 0; i < n; i++)
		for (unsigned j = i + 1; j < n; j++) {
			if (reaches(reach, words, i, j) || reaches(reach, words, j, i))
				continue;
			struct rec_task *ti = task_at(i), *tj = task_at(j);
			if (rec.prio && ti->prio != tj->prio) {
				unsigned hi = ti->prio > tj->prio ? i : j, lo = hi == i ? j : i;
				lp_row(lp, 'L', 0, "p%lu_%lu", task_at(hi)->job, task_at(lo)->job);
				lp_term(lp, s[hi], 1);
				lp_term(lp, s[lo], -1);
			}
			/* o = 1: i before j; the rows bind only when both are on worker w. */
			int o = -1;
			for (unsigned w = 0; w < nw; w++) {
				if (a[i * nw + w] < 0 || a[j * nw + w] < 0)
					continue;
				if (o < 0)
					o = (int)lp_col(lp, 0, 1, integer, -1, -1, "o%lu_%lu", ti->job, tj->job);
				lp_row(lp, 'G', -3 * M, "o%lu_%luw%ua", ti->job, tj->job, w);
				lp_term(lp, s[j], 1);
				lp_term(lp, e[i], -1);
				lp_term(lp, (unsigned)o, -M);
				lp_term(lp, (unsigned)a[i * nw + w], -M);
				lp_term(lp, (unsigned)a[j * nw + w], -M);
				lp_row(lp, 'G', -2 * M, "o%lu_%luw%ub", ti->job, tj->job, w);
				lp_term(lp, s[i], 1);
				lp_term(lp, e[j], -1);
				lp_term(lp, (unsigned)o, M);
				lp_term(lp, (unsigned)a[i * nw + w], -M);
				lp_term(lp, (unsigned)a[j * nw + w], -M);
			}
		}
	free(reach);
	free(s);
	free(e);
	free(a);
}

/* Builds the program of the recording (integer: its assignment variables are integers). Caller holds rec.lock. */
static bool lp_build(struct lp *lp, bool integer, const char *fn)
{
	memset(lp, 0, sizeof(*lp));
	if (!recording_usable(fn) || !recording_predicted(fn))
		return false;
	lp->cols = g_array_new(FALSE, TRUE, sizeof(struct lp_col));
	lp->rows = g_array_new(FALSE, TRUE, sizeof(struct lp_row));
	lp->terms = g_array_new(FALSE, FALSE, sizeof(struct lp_term));
	lp_kinds(lp);
	if (rec.deps)
		lp_build_dependent(lp, integer);
	else
		lp_build_independent(lp, integer);
	return true;
}

/* -------------------------------------------------------------- the files */

static void lp_write_cplex(const struct lp *lp, FILE *out)
{
	fprintf(out, "\\ Astrolabe: theoretical lower bound of %u recorded tasks (%s dependencies%s), times in ms\n",
		lp->ntasks, rec.deps ? "with" : "without", rec.deps && rec.prio ? ", with priorities" : "");
	for (unsigned k = 0; k < lp->nworker_kinds; k++) {
		fprintf(out, "\\ worker kind %u:", k);
		for (unsigned w = 0; w < rec.nworkers; w++)
			if (lp->worker_kind[w] == (int)k)
				fprintf(out, " %u", w);
		fprintf(out, "\n");
	}
	for (unsigned p = 0; p < lp->ntask_kinds; p++)
		fprintf(out, "\\ task kind %u: %u task(s) of %s\n", p, lp->task_kind_count[p], task_at(lp->task_kind_first[p])->name);
	fprintf(out, "Minimize\n obj: tmax\nSubject To\n");
	for (unsigned r = 0; r < lp->rows->len; r++) {
		const struct lp_row *row = &g_array_index(lp->rows, struct lp_row, r);
		fprintf(out, " %s:", row->name);
		for (unsigned t = 0; t < row->n; t++) {
			const struct lp_term *term = &g_array_index(lp->terms, struct lp_term, row->first + t);
			if (t && t % 8 == 0)
				fprintf(out, "\n   ");
			fprintf(out, " %s %.17g %s", term->coef < 0 ? "-" : "+", fabs(term->coef),
				g_array_index(lp->cols, struct lp_col, term->col).name);
		}
		fprintf(out, " %s %.17g\n", row->type == 'L' ? "<=" : row->type == 'G' ? ">=" : "=", row->rhs);
	}
	fprintf(out, "Bounds\n");
	for (unsigned c = 0; c < lp->cols->len; c++) {
		const struct lp_col *col = &g_array_index(lp->cols, struct lp_col, c);
		if (!isinf(col->ub))
			fprintf(out, " %.17g <= %s <= %.17g\n", col->lb, col->name, col->ub);
		else if (col->lb != 0)
			fprintf(out, " %s >= %.17g\n", col->name, col->lb);
	}
	bool any = false;
	for (unsigned c = 0; c < lp->cols->len; c++) {
		const struct lp_col *col = &g_array_index(lp->cols, struct lp_col, c);
		if (col->integer) {
			fprintf(out, "%s %s\n", any ? "" : "General\n", col->name);
			any = true;
		}
	}
	fprintf(out, "End\n");
}

static void lp_write_mps(const struct lp *lp, FILE *out)
{
	fprintf(out, "* Astrolabe: theoretical lower bound of %u recorded tasks (%s dependencies), times in ms\n",
		lp->ntasks, rec.deps ? "with" : "without");
	fprintf(out, "NAME astrolabe_bound\nROWS\n N obj\n");
	for (unsigned r = 0; r < lp->rows->len; r++) {
		const struct lp_row *row = &g_array_index(lp->rows, struct lp_row, r);
		fprintf(out, " %c %s\n", row->type, row->name);
	}
	/* COLUMNS lists each column's terms together: transpose the rows. */
	unsigned ncols = lp->cols->len;
	unsigned *count = calloc(ncols + 1, sizeof(unsigned)), *at = calloc(lp->terms->len + 1, sizeof(unsigned));
	unsigned *row_of = calloc(lp->terms->len + 1, sizeof(unsigned));
	for (unsigned r = 0; r < lp->rows->len; r++) {
		const struct lp_row *row = &g_array_index(lp->rows, struct lp_row, r);
		for (unsigned t = row->first; t < row->first + row->n; t++) {
			row_of[t] = r;
			count[g_array_index(lp->terms, struct lp_term, t).col + 1]++;
		}
	}
	for (unsigned c = 0; c < ncols; c++)
		count[c + 1] += count[c];
	unsigned *fill = calloc(ncols + 1, sizeof(unsigned));
	for (unsigned t = 0; t < lp->terms->len; t++) {
		unsigned c = g_array_index(lp->terms, struct lp_term, t).col;
		at[count[c] + fill[c]++] = t;
	}
	fprintf(out, "COLUMNS\n");
	bool in_int = false;
	for (unsigned c = 0; c < ncols; c++) {
		const struct lp_col *col = &g_array_index(lp->cols, struct lp_col, c);
		if (col->integer != in_int) {
			fprintf(out, " M%u 'MARKER' '%s'\n", c, col->integer ? "INTORG" : "INTEND");
			in_int = col->integer;
		}
		if (col->obj != 0)
			fprintf(out, " %s obj %.17g\n", col->name, col->obj);
		for (unsigned k = count[c]; k < count[c + 1]; k++) {
			const struct lp_term *term = &g_array_index(lp->terms, struct lp_term, at[k]);
			fprintf(out, " %s %s %.17g\n", col->name, g_array_index(lp->rows, struct lp_row, row_of[at[k]]).name, term->coef);
		}
		if (col->obj == 0 && count[c] == count[c + 1])
			fprintf(out, " %s obj 0\n", col->name);
	}
	if (in_int)
		fprintf(out, " M%u 'MARKER' 'INTEND'\n", ncols);
	free(count);
	free(at);
	free(row_of);
	free(fill);
	fprintf(out, "RHS\n");
	for (unsigned r = 0; r < lp->rows->len; r++) {
		const struct lp_row *row = &g_array_index(lp->rows, struct lp_row, r);
		if (row->rhs != 0)
			fprintf(out, " RHS %s %.17g\n", row->name, row->rhs);
	}
	/* Integer columns get explicit bounds: an MPS reader may take a bare integer column for a binary one. */
	fprintf(out, "BOUNDS\n");
	for (unsigned c = 0; c < ncols; c++) {
		const struct lp_col *col = &g_array_index(lp->cols, struct lp_col, c);
		if (col->lb != 0)
			fprintf(out, " LO BND %s %.17g\n", col->name, col->lb);
		if (!isinf(col->ub))
			fprintf(out, " UP BND %s %.17g\n", col->name, col->ub);
		else if (col->integer)
			fprintf(out, " PL BND %s\n", col->name);
	}
	fprintf(out, "ENDATA\n");
}

typedef void (*lp_writer)(const struct lp *, FILE *);

static void print_program(FILE *output, lp_writer write, const char *fn)
{
	if (!output) {
		_astro_error("%s: NULL output: pass an open FILE (stdout, or one fopen() returned)", fn);
		return;
	}
	struct lp lp;
	starpu_pthread_mutex_lock(&rec.lock);
	if (lp_build(&lp, true, fn))
		write(&lp, output);
	starpu_pthread_mutex_unlock(&rec.lock);
	lp_free(&lp);
}

void starpu_bound_print_lp(FILE *output)
{
	print_program(output, lp_write_cplex, "starpu_bound_print_lp");
}

void starpu_bound_print_mps(FILE *output)
{
	print_program(output, lp_write_mps, "starpu_bound_print_mps");
}

void starpu_bound_print_dot(FILE *output)
{
	static const char *const fn = "starpu_bound_print_dot";
	if (!output) {
		_astro_error("%s: NULL output: pass an open FILE (stdout, or one fopen() returned)", fn);
		return;
	}
	starpu_pthread_mutex_lock(&rec.lock);
	if (recording_usable(fn)) {
		fprintf(output, "digraph astrolabe_bound {\n");
		for (unsigned i = 0; i < rec.tasks->len; i++) {
			struct rec_task *t = task_at(i);
			fprintf(output, "\tt%lu [label=\"", t->job);
			for (const char *c = t->name ? t->name : "(no codelet)"; *c; c++)
				fprintf(output, *c == '"' || *c == '\\' ? "\\%c" : "%c", *c);
			fprintf(output, "\"];\n");
		}
		GArray *edges = dependency_edges();
		for (unsigned d = 0; d < edges->len / 2; d++) {
			const unsigned *ed = &g_array_index(edges, unsigned, d * 2);
			fprintf(output, "\tt%lu -> t%lu;\n", task_at(ed[1])->job, task_at(ed[0])->job);
		}
		g_array_free(edges, TRUE);
		fprintf(output, "}\n");
	}
	starpu_pthread_mutex_unlock(&rec.lock);
}

void starpu_bound_compute(double *res, double *integer_res, int integer)
{
	static const char *const fn = "starpu_bound_compute";
	if (res)
		*res = 0;
	if (integer_res)
		*integer_res = 0;
	if (!res || (integer && !integer_res)) {
		_astro_error("%s: NULL result pointer: pass where to store the bound (and the integer bound when integer is set)", fn);
		return;
	}
	struct lp lp;
	starpu_pthread_mutex_lock(&rec.lock);
	bool built = lp_build(&lp, integer != 0, fn);
	starpu_pthread_mutex_unlock(&rec.lock);
	if (built && _astro_bound_solve(&lp, false, 0, res, NULL, fn) == 0 && integer)
		_astro_bound_solve(&lp, true, *res, integer_res, NULL, fn);
	lp_free(&lp);
}

void starpu_bound_print(FILE *output, int integer)
{
	static const char *const fn = "starpu_bound_print";
	if (!output) {
		_astro_error("%s: NULL output: pass an open FILE (stdout, or one fopen() returned)", fn);
		return;
	}
	struct lp lp;
	starpu_pthread_mutex_lock(&rec.lock);
	if (!lp_build(&lp, integer != 0, fn)) {
		starpu_pthread_mutex_unlock(&rec.lock);
		lp_free(&lp);
		return;
	}
	/* The actual execution, while the lock holds the recording still. */
	unsigned P = lp.ntask_kinds, K = lp.nworker_kinds;
	double *actual = calloc((size_t)P * K + 1, sizeof(double)), *share = calloc((size_t)P * K + 1, sizeof(double));
	double first = INFINITY, last = -INFINITY;
	unsigned ran = 0;
	for (unsigned i = 0; i < rec.tasks->len; i++) {
		struct rec_task *t = task_at(i);
		if (t->end_us == 0.0)
			continue;
		ran++;
		first = fmin(first, t->start_us);
		last = fmax(last, t->end_us);
		if (t->kind >= 0 && t->ran_on >= 0 && (unsigned)t->ran_on < rec.nworkers)
			actual[t->kind * K + lp.worker_kind[t->ran_on]]++;
	}
	bool deps = rec.deps;
	unsigned nworkers = rec.nworkers;
	char **names = calloc(P + 1, sizeof(char *));
	for (unsigned p = 0; p < P; p++)
		names[p] = strdup(task_at(lp.task_kind_first[p])->name);
	starpu_pthread_mutex_unlock(&rec.lock);
	double relaxed = 0, bound;
	int solved = integer ? _astro_bound_solve(&lp, false, 0, &relaxed, NULL, fn) : 0;
	if (solved == 0)
		solved = _astro_bound_solve(&lp, integer != 0, relaxed, &bound, share, fn);
	if (solved >= 0) {
		if (solved == 1)
			fprintf(output, "Theoretical lower bound (relaxed, %s dependencies): %.3f ms; the integer search stopped at "
					"its time limit (%s): integer result %.3f ms (the warning says which)\n",
				deps ? "with" : "without", relaxed, BOUND_TIME_LIMIT_ENV, bound);
		else
			fprintf(output, "Theoretical lower bound (%s, %s dependencies): %.3f ms\n", integer ? "integer" : "relaxed",
				deps ? "with" : "without", bound);
		if (ran)
			fprintf(output, "Actual execution: %u of %u tasks ran, in %.3f ms (%.1f%% above the bound)\n", ran, lp.ntasks,
				(last - first) / 1000.0, bound > 0 ? ((last - first) / 1000.0 / bound - 1) * 100 : 0.0);
		else
			fprintf(output, "Actual execution: none of the %u tasks ran yet\n", lp.ntasks);
		for (unsigned k = 0; k < K; k++) {
			fprintf(output, "Worker kind %u: worker(s)", k);
			for (unsigned w = 0; w < nworkers; w++)
				if (lp.worker_kind[w] == (int)k)
					fprintf(output, " %u", w);
			fprintf(output, "\n");
		}
		fprintf(output, "%-24s %8s", "Task kind", "tasks");
		for (unsigned k = 0; k < K; k++)
			fprintf(output, "   kind %u: actual   bound", k);
		fprintf(output, "\n");
		for (unsigned p = 0; p < P; p++) {
			fprintf(output, "%-24s %8u", names[p], lp.task_kind_count[p]);
			for (unsigned k = 0; k < K; k++)
				fprintf(output, "   %13.0f %7.2f", actual[p * K + k], share[p * K + k]);
			fprintf(output, "\n");
		}
	}
	for (unsigned p = 0; p < P; p++)
		free(names[p]);
	free(names);
	free(actual);
	free(share);
	lp_free(&lp);
}
