/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The "heat" load balancing policy: load flows from hot ranks to cooler
 * neighbours, one data unit at a time.
 *
 * Tasks are numbered by the application (STARPU_TAG_ONLY in
 * starpu_mpi_task_insert()); a phase is a run of LB_HEAT_SLEEP_THRESHOLD
 * numbers. When a task of a later phase is inserted, every rank (all see
 * the same insertions) ends the phase:
 *  1. it waits until LB_HEAT_WAKEUP_RATIO of the tasks it runs in the phase
 *     are done, and takes as its load the time its workers spent running
 *     tasks since the previous phase (observed at TASK_STARTED/ENDED);
 *  2. it sends that load to the ranks that list it as a neighbour and
 *     receives its own neighbours' (point to point; the relation may be
 *     one way, who lists whom is learnt once at init);
 *  3. if its least loaded neighbour is cooler by LB_HEAT_TIME_THRESHOLD µs or
 *     more, it asks the application which data it gives that neighbour;
 *  4. every rank learns every move (all-gather: each handle may be known
 *     to any rank), the destinations check they know the data, and each
 *     rank calls starpu_mpi_data_migrate() for the data it holds.
 * The tasks inserted afterwards follow the data to their new owners. At
 * shutdown each moved data goes back to the rank that had it first.
 */
#include "lb_policy.h"

#include <astrolabe/observe.h>

#include <errno.h>
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TAG_LOAD 1

/* A data the balancer moved, and the rank that owned it before. */
struct moved
{
	starpu_mpi_tag_t tag;
	int home;
};

/* The arguments of one nonblocking MPI call (lb.c's _astro_mpi_lb_run()). */
struct call
{
	const void *send;
	void *recv;
	int count;
	const int *counts, *displs;	/* Iallgatherv */
	MPI_Datatype type;
	int peer;
	MPI_Comm comm;
};

static int alltoall_start(void *arg, MPI_Request *req)
{
	struct call *c = arg;
	return MPI_Ialltoall(c->send, c->count, c->type, c->recv, c->count, c->type, c->comm, req);
}

static int send_start(void *arg, MPI_Request *req)
{
	struct call *c = arg;
	return MPI_Isend(c->send, c->count, c->type, c->peer, TAG_LOAD, c->comm, req);
}

static int recv_start(void *arg, MPI_Request *req)
{
	struct call *c = arg;
	return MPI_Irecv(c->recv, c->count, c->type, c->peer, TAG_LOAD, c->comm, req);
}

static int allgather_start(void *arg, MPI_Request *req)
{
	struct call *c = arg;
	return MPI_Iallgather(c->send, c->count, c->type, c->recv, c->count, c->type, c->comm, req);
}

static int allgatherv_start(void *arg, MPI_Request *req)
{
	struct call *c = arg;
	return MPI_Iallgatherv(c->send, c->count, c->type, c->recv, c->counts, c->displs, c->type, c->comm, req);
}

static int allreduce_min_start(void *arg, MPI_Request *req)
{
	struct call *c = arg;
	return MPI_Iallreduce(MPI_IN_PLACE, c->recv, c->count, c->type, MPI_MIN, c->comm, req);
}

/* One call: 0 or -EIO said. */
static int run(int (*start)(void *, MPI_Request *), struct call c, const char *fn)
{
	struct _astro_mpi_lb_call call = { start, &c };
	return _astro_mpi_lb_run(&call, 1, fn);
}

/* The application thread's state (the balancer runs in starpu_mpi_task_insert()). */
static struct
{
	MPI_Comm comm;
	int me, size;
	struct starpu_mpi_lb_conf conf;
	int *neighbors;			/* the ranks this rank compares itself with (and may give data to) */
	int nneighbors;
	int *watchers;			/* the ranks that list this one: they get its load */
	int nwatchers;
	unsigned long sleep_threshold;
	double wakeup_ratio;
	double time_threshold;
	unsigned long phase;
	unsigned long submitted;	/* tasks inserted to run here */
	unsigned long submitted_then;	/* ... when the phase began */
	double busy_then;		/* busy (below) when the phase began */
	int observer;
	GArray *moved;			/* struct moved, in the order of the moves (the same on every rank) */
	GHashTable *moved_tags;		/* the tags in moved */
} heat = { .observer = -1 };

/* The workers' side: static, since an observer may still be called as it unsubscribes. */
static starpu_pthread_mutex_t lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static starpu_pthread_cond_t tasks_ended = STARPU_PTHREAD_COND_INITIALIZER;
static unsigned long ended;	/* tasks run here since heat_init() */
static double busy;		/* µs the workers spent running them */
static double started[STARPU_NMAXWORKERS];	/* each worker's running task's start (its own slot), 0: none seen */
static double since;		/* when the observer started: older starts are another run's */

static void task_moment(const struct astro_event *event, void *arg)
{
	(void)arg;
	int w = event->workerid;
	if (w < 0 || w >= STARPU_NMAXWORKERS)
		return;
	if (event->moment == ASTRO_MOMENT_TASK_STARTED) {
		started[w] = event->time_us;
		return;
	}
	double start = started[w];
	started[w] = 0;
	starpu_pthread_mutex_lock(&lock);
	if (start >= since)
		busy += event->time_us - start;
	ended++;
	starpu_pthread_cond_broadcast(&tasks_ended);
	starpu_pthread_mutex_unlock(&lock);
}

/* A number from the environment at least min (an integer when integer), def when unset; said and def when wrong. */
static double env_number(const char *name, double def, double min, bool integer)
{
	const char *s = getenv(name);
	if (!s || !*s)
		return def;
	char *end;
	double v = strtod(s, &end);
	if (*end || v < min || (integer && v != floor(v))) {
		_astro_mpi_error("%s='%s' is not %s %s %g: the heat load balancer uses %g", name, s, integer ? "an integer" : "a number",
				 min > 0 ? "of at least" : "from", min, def);
		return def;
	}
	return v;
}

/* Keeps the neighbours get_neighbors() gave (self and repeats dropped): 0, or -EINVAL said. */
static int take_neighbors(int *given, int n)
{
	heat.neighbors = malloc((n > 0 ? n : 1) * sizeof(int));
	if (!heat.neighbors) {
		_astro_mpi_error("starpu_mpi_lb_init: out of memory");
		return -ENOMEM;
	}
	heat.nneighbors = 0;
	for (int i = 0; i < n; i++) {
		int r = given[i];
		if (r < 0 || r >= heat.size) {
			_astro_mpi_error("starpu_mpi_lb_init: get_neighbors() gave rank %d, which is not a rank of MPI_COMM_WORLD (0 to %d): give ranks of MPI_COMM_WORLD",
					 r, heat.size - 1);
			return -EINVAL;
		}
		bool known = r == heat.me;
		for (int j = 0; j < heat.nneighbors; j++)
			known = known || heat.neighbors[j] == r;
		if (!known)
			heat.neighbors[heat.nneighbors++] = r;
	}
	if (heat.nneighbors == 0 && heat.size > 1) {
		_astro_mpi_error("starpu_mpi_lb_init: get_neighbors() gave rank %d no neighbour: give each rank at least one other rank to balance with", heat.me);
		return -EINVAL;
	}
	return 0;
}

/* Who lists this rank as a neighbour (the relation may be one way): every
 * rank tells every rank whether it lists it, once, at init. */
static int find_watchers(void)
{
	int *mine = calloc(heat.size, sizeof(int)), *theirs = calloc(heat.size, sizeof(int));
	heat.watchers = malloc(heat.size * sizeof(int));
	int ret = mine && theirs && heat.watchers ? 0 : -ENOMEM;
	if (ret == 0) {
		for (int i = 0; i < heat.nneighbors; i++)
			mine[heat.neighbors[i]] = 1;
		ret = run(alltoall_start, (struct call){ .send = mine, .recv = theirs, .count = 1, .type = MPI_INT, .comm = heat.comm },
			  "starpu_mpi_lb_init");
	} else
		_astro_mpi_error("starpu_mpi_lb_init: out of memory");
	heat.nwatchers = 0;
	for (int r = 0; ret == 0 && r < heat.size; r++)
		if (theirs[r])
			heat.watchers[heat.nwatchers++] = r;
	free(mine);
	free(theirs);
	return ret;
}

static void forget(void)
{
	free(heat.neighbors);
	free(heat.watchers);
	heat.neighbors = heat.watchers = NULL;
	heat.nneighbors = heat.nwatchers = 0;
	if (heat.moved)
		g_array_free(heat.moved, TRUE);
	if (heat.moved_tags)
		g_hash_table_destroy(heat.moved_tags);
	heat.moved = NULL;
	heat.moved_tags = NULL;
}

static int heat_init(const struct starpu_mpi_lb_conf *conf, MPI_Comm comm)
{
	static const char fn[] = "starpu_mpi_lb_init";
	int ret = 0;
	heat.comm = comm;	/* a duplicate of MPI_COMM_WORLD: the same ranks */
	starpu_mpi_comm_rank(MPI_COMM_WORLD, &heat.me);
	starpu_mpi_comm_size(MPI_COMM_WORLD, &heat.size);
	if (!conf || !conf->get_neighbors || !conf->get_data_unit_to_migrate) {
		_astro_mpi_error("%s: the heat policy needs a struct starpu_mpi_lb_conf with get_neighbors and get_data_unit_to_migrate set (%s)", fn,
				 !conf ? "conf is NULL" : !conf->get_neighbors ? "get_neighbors is NULL" : "get_data_unit_to_migrate is NULL");
		ret = -EINVAL;
	} else {
		int *given = NULL, n = 0;
		conf->get_neighbors(&given, &n);
		if (n < 0 || (n > 0 && !given)) {
			_astro_mpi_error("%s: get_neighbors() gave %d neighbours%s: fill *neighbor_ids with a malloc'ed array and *nneighbors with its length",
					 fn, n, given ? "" : " and no array");
			ret = -EINVAL;
		} else
			ret = take_neighbors(given, n);
		free(given);
		heat.conf = *conf;
	}
	int agreed = _astro_mpi_lb_agree_min(comm, ret, fn);
	if (agreed == 0) {
		ret = find_watchers();
		agreed = _astro_mpi_lb_agree_min(comm, ret, fn);
	}
	if (agreed && !ret)
		_astro_mpi_error("%s: another rank's load balancer conf is wrong (see its message); balancing stays off on every rank", fn);
	if (agreed) {
		forget();
		return agreed;
	}
	heat.sleep_threshold = (unsigned long)env_number("LB_HEAT_SLEEP_THRESHOLD", 2000, 1, true);
	heat.wakeup_ratio = env_number("LB_HEAT_WAKEUP_RATIO", 0.5, 0, false);
	if (heat.wakeup_ratio > 1) {
		_astro_mpi_error("LB_HEAT_WAKEUP_RATIO=%g is above 1 (all the tasks of a phase): the heat load balancer uses 1", heat.wakeup_ratio);
		heat.wakeup_ratio = 1;
	}
	heat.time_threshold = env_number("LB_HEAT_TIME_THRESHOLD", 2000, 0, false);
	heat.phase = 0;
	heat.submitted = heat.submitted_then = 0;
	heat.moved = g_array_new(FALSE, FALSE, sizeof(struct moved));
	heat.moved_tags = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL);
	starpu_pthread_mutex_lock(&lock);
	ended = 0;	/* counted from here, as heat.submitted */
	busy = heat.busy_then = 0;
	since = starpu_timing_now();
	starpu_pthread_mutex_unlock(&lock);
	heat.observer = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_STARTED) | ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_ENDED), task_moment, NULL);
	/* Agreed once more: a rank without its observer could not measure its load. */
	ret = _astro_mpi_lb_agree_min(comm, heat.observer < 0 ? heat.observer : 0, fn);
	if (ret) {
		if (heat.observer >= 0)
			astro_observe_unsubscribe(heat.observer);
		else
			_astro_mpi_error("%s: the heat policy could not observe the tasks (error %d); balancing stays off", fn, heat.observer);
		heat.observer = -1;
		forget();
	}
	return ret;
}

/* Steps 1 and 2: this rank's load in the phase that ends, and its neighbours' (in theirs). */
static double loads(double *theirs)
{
	starpu_pthread_mutex_lock(&lock);
	unsigned long tasks = heat.submitted - heat.submitted_then;
	unsigned long wake_at = heat.submitted_then + (unsigned long)ceil(heat.wakeup_ratio * (double)tasks);
	while (ended < wake_at)
		starpu_pthread_cond_wait(&tasks_ended, &lock);
	double load = busy - heat.busy_then;
	heat.busy_then = busy;
	starpu_pthread_mutex_unlock(&lock);
	heat.submitted_then = heat.submitted;

	int n = heat.nneighbors + heat.nwatchers;
	struct call args[n];
	struct _astro_mpi_lb_call calls[n];
	for (int i = 0; i < n; i++) {
		bool in = i < heat.nneighbors;
		args[i] = (struct call){ .send = &load, .recv = &theirs[i], .count = 1, .type = MPI_DOUBLE,
					 .peer = in ? heat.neighbors[i] : heat.watchers[i - heat.nneighbors], .comm = heat.comm };
		calls[i] = (struct _astro_mpi_lb_call){ in ? recv_start : send_start, &args[i] };
	}
	if (_astro_mpi_lb_run(calls, n, "starpu_mpi_task_insert (load balancer)"))
		for (int i = 0; i < heat.nneighbors; i++)
			theirs[i] = load;	/* not known: no move */
	return load;
}

/* Step 3: the (tag, destination) pairs this rank gives, in *out (malloc'ed); their number. */
static int offer(double load, const double *theirs, int64_t **out)
{
	int dst = -1;
	double least = load;
	for (int i = 0; i < heat.nneighbors; i++)
		if (theirs[i] < least) {
			least = theirs[i];
			dst = heat.neighbors[i];
		}
	*out = NULL;
	if (dst < 0 || heat.time_threshold <= 0 || load - least < heat.time_threshold)
		return 0;
	starpu_data_handle_t *handles = NULL;
	int n = 0;
	heat.conf.get_data_unit_to_migrate(&handles, &n, dst);
	if (n <= 0 || !handles) {
		if (n != 0)
			_astro_mpi_error("load balancer: get_data_unit_to_migrate() gave %d handles%s: fill *handle_unit with a malloc'ed array and *nhandles with its length; nothing moves",
					 n, handles ? "" : " and no array");
		free(handles);
		return 0;
	}
	int64_t *pairs = malloc(2 * (size_t)n * sizeof(int64_t));
	int kept = 0;
	for (int i = 0; pairs && i < n; i++) {
		int owner = handles[i] ? starpu_mpi_data_get_rank(handles[i]) : -1;
		starpu_mpi_tag_t tag = handles[i] ? starpu_mpi_data_get_tag(handles[i]) : -1;
		if (owner != heat.me || tag < 0 || _astro_mpi_data_by_tag(MPI_COMM_WORLD, tag) != handles[i]) {
			_astro_mpi_error("load balancer: get_data_unit_to_migrate() gave data %p, which is not registered on MPI_COMM_WORLD as owned by this rank (%d): give only data this rank owns; it stays",
					 (void *)handles[i], heat.me);
			continue;
		}
		pairs[2 * kept] = tag;
		pairs[2 * kept + 1] = dst;
		kept++;
	}
	if (!pairs)
		_astro_mpi_error("load balancer: out of memory; nothing moves");
	free(handles);
	*out = pairs;
	return kept;
}

/* Step 4: every rank learns every move and makes those of the data it holds. */
static void move(int64_t *mine, int nmine)
{
	static const char fn[] = "starpu_mpi_task_insert (load balancer)";
	int *counts = malloc(heat.size * sizeof(int)), *displs = malloc(heat.size * sizeof(int));
	int64_t *all = NULL;
	int *ok = NULL;
	int total = 0;
	if (!counts || !displs) {
		_astro_mpi_error("%s: out of memory", fn);
		abort();	/* the other ranks would wait for this one's moves */
	}
	if (run(allgather_start, (struct call){ .send = &nmine, .recv = counts, .count = 1, .type = MPI_INT, .comm = heat.comm }, fn))
		goto out;
	for (int r = 0; r < heat.size; r++) {
		displs[r] = 2 * total;
		total += counts[r];
		counts[r] *= 2;
	}
	if (total == 0)
		goto out;
	all = malloc(2 * (size_t)total * sizeof(int64_t));
	ok = malloc(total * sizeof(int));
	if (!all || !ok) {
		_astro_mpi_error("%s: out of memory", fn);
		abort();
	}
	if (run(allgatherv_start, (struct call){ .send = mine, .recv = all, .count = 2 * nmine, .counts = counts, .displs = displs,
						 .type = MPI_INT64_T, .comm = heat.comm }, fn))
		goto out;
	/* A destination that does not know the data could not receive it: the move is off everywhere. */
	for (int k = 0; k < total; k++) {
		ok[k] = all[2 * k + 1] != heat.me || _astro_mpi_data_by_tag(MPI_COMM_WORLD, all[2 * k]);
		if (!ok[k])
			_astro_mpi_error("load balancer: the data with tag %lld should move to rank %d, which has none registered with that tag: register it on the ranks it may move to (the owner's neighbours); it stays",
					 (long long)all[2 * k], heat.me);
	}
	if (run(allreduce_min_start, (struct call){ .recv = ok, .count = total, .type = MPI_INT, .comm = heat.comm }, fn))
		goto out;
	for (int r = 0, k = 0; r < heat.size; r++)
		for (int end = k + counts[r] / 2; k < end; k++) {
			if (!ok[k])
				continue;
			struct moved m = { all[2 * k], r };
			if (!g_hash_table_contains(heat.moved_tags, &m.tag)) {
				gint64 *key = g_new(gint64, 1);
				*key = m.tag;
				g_hash_table_add(heat.moved_tags, key);
				g_array_append_val(heat.moved, m);
			}
			starpu_data_handle_t handle = _astro_mpi_data_by_tag(MPI_COMM_WORLD, m.tag);
			if (handle)
				starpu_mpi_data_migrate(MPI_COMM_WORLD, handle, (int)all[2 * k + 1]);
		}
out:
	free(counts);
	free(displs);
	free(all);
	free(ok);
}

static void heat_inserted(starpu_tag_t tag, bool local)
{
	unsigned long phase = (unsigned long)(tag / heat.sleep_threshold);
	if (phase > heat.phase) {
		heat.phase = phase;
		if (heat.size > 1) {
			double theirs[heat.nneighbors];
			double load = loads(theirs);
			int64_t *mine;
			int nmine = offer(load, theirs, &mine);
			move(mine, nmine);
			free(mine);
		}
	}
	if (local)
		heat.submitted++;
}

static void heat_shutdown(void)
{
	for (guint i = 0; i < heat.moved->len; i++) {
		const struct moved *m = &g_array_index(heat.moved, struct moved, i);
		starpu_data_handle_t handle = _astro_mpi_data_by_tag(MPI_COMM_WORLD, m->tag);
		if (handle && starpu_mpi_data_get_rank(handle) != m->home)
			starpu_mpi_data_migrate(MPI_COMM_WORLD, handle, m->home);
	}
	astro_observe_unsubscribe(heat.observer);
	heat.observer = -1;
	forget();
}

const struct _astro_mpi_lb_policy _astro_mpi_lb_heat = {
	.name = "heat",
	.init = heat_init,
	.inserted = heat_inserted,
	.shutdown = heat_shutdown,
};
