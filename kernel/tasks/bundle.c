/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Task bundles (starpu_task_bundle.h): a list of tasks under a lock, the
 * task pointing back at its bundle (task->bundle). A task leaves when the
 * program removes it, or when it is destroyed or cleaned (task.c calls
 * _astro_bundle_forget); a closed bundle is freed when its last task left.
 */
#include "tasks/tasks.h"

struct _starpu_task_bundle
{
	starpu_pthread_mutex_t lock;
	struct starpu_task **tasks;
	unsigned ntasks, cap;
	bool closed;
};

static void bundle_free(starpu_task_bundle_t b)
{
	starpu_pthread_mutex_destroy(&b->lock);
	free(b->tasks);
	free(b);
}

void starpu_task_bundle_create(starpu_task_bundle_t *bundle)
{
	if (!bundle) {
		_astro_error("starpu_task_bundle_create: NULL: pass the address of a starpu_task_bundle_t");
		return;
	}
	starpu_task_bundle_t b = calloc(1, sizeof(*b));
	if (!b) {
		_astro_error("starpu_task_bundle_create: out of memory: no bundle created");
		*bundle = NULL;
		return;
	}
	starpu_pthread_mutex_init(&b->lock, NULL);
	*bundle = b;
}

static bool submitted(struct starpu_task *task)
{
	struct _astro_job *job = task->starpu_private;
	return job && __atomic_load_n(&job->submitted, __ATOMIC_ACQUIRE);
}

int starpu_task_bundle_insert(starpu_task_bundle_t bundle, struct starpu_task *task)
{
	if (!bundle || !task) {
		_astro_error("starpu_task_bundle_insert: NULL %s: pass a bundle from starpu_task_bundle_create() and a task",
			     bundle ? "task" : "bundle");
		return -EINVAL;
	}
	const char *name = starpu_task_get_name(task) ? starpu_task_get_name(task) : "(unnamed)";
	if (submitted(task)) {
		_astro_error("starpu_task_bundle_insert: task '%s' is submitted already: insert tasks before submitting them", name);
		return -EPERM;
	}
	if (task->bundle) {
		_astro_error("starpu_task_bundle_insert: task '%s' is in a bundle already: a task is in one bundle at most "
			     "(starpu_task_bundle_remove() it first)", name);
		return -EINVAL;
	}
	starpu_pthread_mutex_lock(&bundle->lock);
	if (bundle->closed) {
		starpu_pthread_mutex_unlock(&bundle->lock);
		_astro_error("starpu_task_bundle_insert: the bundle is closed: no task can be inserted any more");
		return -EPERM;
	}
	if (bundle->ntasks == bundle->cap) {
		unsigned cap = bundle->cap ? 2 * bundle->cap : 8;
		struct starpu_task **tasks = realloc(bundle->tasks, cap * sizeof(*tasks));
		if (!tasks) {
			starpu_pthread_mutex_unlock(&bundle->lock);
			_astro_error("starpu_task_bundle_insert: out of memory: task '%s' not inserted", name);
			return -ENOMEM;
		}
		bundle->tasks = tasks;
		bundle->cap = cap;
	}
	bundle->tasks[bundle->ntasks++] = task;
	task->bundle = bundle;
	starpu_pthread_mutex_unlock(&bundle->lock);
	return 0;
}

/* Takes task out of b, under its lock; frees b when closed and empty. Returns -ENOENT when not there. */
static int take_out(starpu_task_bundle_t b, struct starpu_task *task)
{
	starpu_pthread_mutex_lock(&b->lock);
	unsigned i = 0;
	while (i < b->ntasks && b->tasks[i] != task)
		i++;
	if (i == b->ntasks) {
		starpu_pthread_mutex_unlock(&b->lock);
		return -ENOENT;
	}
	memmove(&b->tasks[i], &b->tasks[i + 1], (b->ntasks - i - 1) * sizeof(*b->tasks));
	b->ntasks--;
	task->bundle = NULL;
	bool gone = b->closed && b->ntasks == 0;
	starpu_pthread_mutex_unlock(&b->lock);
	if (gone)
		bundle_free(b);
	return 0;
}

int starpu_task_bundle_remove(starpu_task_bundle_t bundle, struct starpu_task *task)
{
	if (!bundle || !task) {
		_astro_error("starpu_task_bundle_remove: NULL %s", bundle ? "task" : "bundle");
		return -EINVAL;
	}
	if (task->bundle != bundle || take_out(bundle, task) != 0) {
		_astro_error("starpu_task_bundle_remove: task '%s' is not in this bundle",
			     starpu_task_get_name(task) ? starpu_task_get_name(task) : "(unnamed)");
		return -ENOENT;
	}
	return 0;
}

void starpu_task_bundle_close(starpu_task_bundle_t bundle)
{
	if (!bundle) {
		_astro_error("starpu_task_bundle_close: NULL bundle");
		return;
	}
	starpu_pthread_mutex_lock(&bundle->lock);
	bundle->closed = true;
	bool gone = bundle->ntasks == 0;
	starpu_pthread_mutex_unlock(&bundle->lock);
	if (gone)
		bundle_free(bundle);
}

void _astro_bundle_forget(struct starpu_task *task)
{
	take_out(task->bundle, task);
}

/* Sum of estimate over the bundle's tasks; NAN as soon as one has none. */
static double bundle_sum(starpu_task_bundle_t b, const char *call, struct starpu_perfmodel_arch *arch, unsigned nimpl,
			 double (*estimate)(struct starpu_task *, struct starpu_perfmodel_arch *, unsigned))
{
	if (!b || !arch) {
		_astro_error("%s: NULL %s", call, b ? "arch" : "bundle");
		return NAN;
	}
	double total = 0;
	starpu_pthread_mutex_lock(&b->lock);
	for (unsigned i = 0; i < b->ntasks && !isnan(total); i++)
		total += estimate(b->tasks[i], arch, nimpl);
	starpu_pthread_mutex_unlock(&b->lock);
	return total;
}

double starpu_task_bundle_expected_length(starpu_task_bundle_t bundle, struct starpu_perfmodel_arch *arch, unsigned nimpl)
{
	return bundle_sum(bundle, "starpu_task_bundle_expected_length", arch, nimpl, starpu_task_expected_length);
}

double starpu_task_bundle_expected_energy(starpu_task_bundle_t bundle, struct starpu_perfmodel_arch *arch, unsigned nimpl)
{
	return bundle_sum(bundle, "starpu_task_bundle_expected_energy", arch, nimpl, starpu_task_expected_energy);
}

double starpu_task_bundle_expected_data_transfer_time(starpu_task_bundle_t bundle, unsigned memory_node)
{
	if (!bundle) {
		_astro_error("starpu_task_bundle_expected_data_transfer_time: NULL bundle");
		return NAN;
	}
	/* Each handle once, with the union of the modes its tasks use. */
	GHashTable *modes = g_hash_table_new(g_direct_hash, g_direct_equal);
	starpu_pthread_mutex_lock(&bundle->lock);
	for (unsigned i = 0; i < bundle->ntasks; i++) {
		struct starpu_task *task = bundle->tasks[i];
		unsigned n = _astro_task_nbuffers(task);
		for (unsigned b = 0; b < n; b++) {
			starpu_data_handle_t h = STARPU_TASK_GET_HANDLE(task, b);
			uintptr_t mode = (uintptr_t)g_hash_table_lookup(modes, h) | (uintptr_t)STARPU_TASK_GET_MODE(task, b);
			g_hash_table_insert(modes, h, (void *)mode);
		}
	}
	starpu_pthread_mutex_unlock(&bundle->lock);
	double total = 0;
	GHashTableIter it;
	void *h, *mode;
	g_hash_table_iter_init(&it, modes);
	while (g_hash_table_iter_next(&it, &h, &mode))
		total += starpu_data_expected_transfer_time(h, memory_node, (enum starpu_data_access_mode)(uintptr_t)mode);
	g_hash_table_destroy(modes);
	return total;
}
