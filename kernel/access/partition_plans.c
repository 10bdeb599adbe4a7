/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Partition plans: the asynchronous partitioning API of StarPU 1.4.
 *
 * starpu_data_partition_plan() makes a plan of a handle: children handles,
 * views into the parent's main-memory buffer. A handle may have several
 * plans, and is at each moment whole, or partitioned into one read-write
 * plan (then the parent may not be used), or into read-only plans, as many as
 * wanted (then the parent and the children are only read). A switch between
 * these states is a task that runs nothing but accesses the parent and the
 * children: the implicit dependencies order it with the tasks before and after
 * it, and its execution brings the data where the views live, main memory.
 *
 * The switches an access needs are submitted before it, as StarPU does: a
 * task or an acquire reaching a partitioned parent gathers its plans first
 * (read-only plans stay for a read), one reaching a child partitions the
 * parent into the child's plan (read-only for a read; a write upgrades a
 * read-only plan), unless the access has STARPU_NOPLAN or the parent was
 * given starpu_data_partition_not_automatic(). The application submits
 * partitions from one thread at a time, as with StarPU.
 */
#include "access/access.h"

#include <stdlib.h>
#include <string.h>

struct _astro_plan
{
	starpu_data_handle_t parent;         /* NULL once the parent is unregistered */
	unsigned refs;                       /* children still registered */
	unsigned n;
	starpu_data_handle_t children[];
};

/* Plans that exist: while there are none, a submission skips all this. */
/* The plans and the handles' partition states change under it; switches are submitted without it. */
static starpu_pthread_mutex_t plans_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;

/* ------------------------------------------------------------ the states */

static int active_index(starpu_data_handle_t h, struct _astro_plan *p)
{
	for (unsigned i = 0; i < h->nactive; i++)
		if (h->active[i] == p)
			return (int)i;
	return -1;
}

static void activate(starpu_data_handle_t h, struct _astro_plan *p, bool readonly)
{
	if (h->nactive == h->active_cap) {
		h->active_cap = h->active_cap ? 2 * h->active_cap : 2;
		h->active = realloc(h->active, h->active_cap * sizeof(*h->active));
	}
	h->active[h->nactive++] = p;
	h->active_readonly = readonly;
}

static void deactivate(starpu_data_handle_t h, int index)
{
	h->active[index] = h->active[--h->nactive];
}

/* The plan children[0..n) make (NULL, said under fn, when they do not make one plan of h). */
static struct _astro_plan *plan_of(starpu_data_handle_t h, unsigned n, starpu_data_handle_t *children, const char *fn)
{
	if (!h || !n || !children) {
		_astro_error("%s: NULL handle, or no children: give the handle and the array starpu_data_partition_plan() filled", fn);
		return NULL;
	}
	starpu_pthread_mutex_lock(&plans_lock);
	struct _astro_plan *p = children[0] ? children[0]->plan : NULL;
	bool ok = p && p->parent == h && p->n == n;
	for (unsigned i = 0; ok && i < n; i++)
		ok = children[i] == p->children[i];
	starpu_pthread_mutex_unlock(&plans_lock);
	if (!ok) {
		_astro_error("%s: these %u children are not a plan of the handle: give the array starpu_data_partition_plan() "
			     "filled for it, and its size", fn, n);
		return NULL;
	}
	return p;
}

/* ------------------------------------------------------------ switches */

/* The switch task: it runs nothing, its accesses order the tasks around it. */
static struct starpu_codelet switch_cl = {
	.where = STARPU_NOWHERE,
	.nbuffers = STARPU_VARIABLE_NBUFFERS,
	.name = "partition_switch",
};

static void switch_submit(starpu_data_handle_t parent, enum starpu_data_access_mode parent_mode, struct _astro_plan *p,
			  enum starpu_data_access_mode children_mode, void (*callback)(void *), void *callback_arg, const char *fn)
{
	unsigned n = p->n + (parent_mode != STARPU_NONE);
	struct starpu_task *task = starpu_task_create();
	task->cl = &switch_cl;
	task->name = fn;
	task->nbuffers = (int)n;
	task->dyn_handles = malloc(n * sizeof(*task->dyn_handles));
	task->dyn_modes = malloc(n * sizeof(*task->dyn_modes));
	unsigned slot = 0;
	if (parent_mode != STARPU_NONE) {
		task->dyn_handles[slot] = parent;
		task->dyn_modes[slot++] = parent_mode;
	}
	for (unsigned i = 0; i < p->n; i++) {
		task->dyn_handles[slot] = p->children[i];
		task->dyn_modes[slot++] = children_mode;
	}
	task->callback_func = callback;
	task->callback_arg = callback_arg;
	int ret = _astro_task_submit_internally(task);
	if (ret)
		_astro_error("%s: submitting the switch failed (%d)", fn, ret);
}

static void gather_all(starpu_data_handle_t h, const char *fn);

/* Partitions h into p (read-only or not): false, said, when its state does not allow it. */
static bool partition(starpu_data_handle_t h, struct _astro_plan *p, bool readonly, bool consistency, const char *fn)
{
	starpu_pthread_mutex_lock(&plans_lock);
	const char *refusal = active_index(h, p) >= 0 ? "the handle is already partitioned into this plan"
			      : h->nactive && !(readonly && h->active_readonly) ? "the handle is partitioned into another plan"
			      : NULL;
	if (!refusal)
		activate(h, p, readonly);
	starpu_pthread_mutex_unlock(&plans_lock);
	if (refusal) {
		_astro_error("%s: %s: unpartition it first (starpu_data_unpartition_submit); several plans may be active "
			     "together only read-only (starpu_data_partition_readonly_submit)", fn, refusal);
		return false;
	}
	/* The children's content is the parent's: written by the switch, which reads the parent. */
	switch_submit(h, consistency ? (readonly ? STARPU_R : STARPU_RW) : STARPU_NONE, p, STARPU_W, NULL, NULL, fn);
	return true;
}

/* Back from p to h (or, readonly_after, to h and p read-only). */
static void unpartition(starpu_data_handle_t h, struct _astro_plan *p, bool readonly_after, bool consistency,
			void (*callback)(void *), void *callback_arg, const char *fn)
{
	starpu_pthread_mutex_lock(&plans_lock);
	int index = active_index(h, p);
	bool was_readonly = h->active_readonly;
	if (index >= 0) {
		if (!readonly_after)
			deactivate(h, index);
		else
			h->active_readonly = true;
	}
	starpu_pthread_mutex_unlock(&plans_lock);
	if (index < 0) {
		_astro_error("%s: the handle is not partitioned into this plan (never, or already gathered): nothing to unpartition", fn);
		return;
	}
	if (readonly_after && was_readonly)
		return;
	/* Children partitioned further are gathered first. */
	for (unsigned i = 0; i < p->n; i++)
		gather_all(p->children[i], fn);
	enum starpu_data_access_mode parent_mode, children_mode;
	if (readonly_after) {
		/* The children stay readable: the switch reads them once their writers are done. */
		parent_mode = STARPU_W;
		children_mode = STARPU_R;
	} else if (was_readonly) {
		/* The parent was read meanwhile: it is whole, but its next writers must wait for the children's readers. */
		parent_mode = STARPU_R;
		children_mode = STARPU_RW;
	} else {
		parent_mode = STARPU_W;
		children_mode = STARPU_RW;
	}
	switch_submit(h, consistency ? parent_mode : STARPU_NONE, p, children_mode, callback, callback_arg, fn);
}

/* Gathers every plan h is partitioned into, deepest first. */
static void gather_all(starpu_data_handle_t h, const char *fn)
{
	for (;;) {
		starpu_pthread_mutex_lock(&plans_lock);
		struct _astro_plan *p = h->nactive ? h->active[h->nactive - 1] : NULL;
		starpu_pthread_mutex_unlock(&plans_lock);
		if (!p)
			return;
		unpartition(h, p, false, true, NULL, NULL, fn);
	}
}

/* ----------------------------------------------------- automatic switches */

static const char automatic[] = "automatic partitioning";

/* The switches an access (write or not) to h needs before it. */
static void access_switches(starpu_data_handle_t h, bool write)
{
	starpu_pthread_mutex_lock(&plans_lock);
	struct _astro_plan *p = h->plan;
	starpu_data_handle_t parent = p ? p->parent : NULL;
	bool parent_auto = parent && !parent->plans_manual;
	int index = parent_auto ? active_index(parent, p) : -1;
	bool parent_readonly = parent_auto && parent->active_readonly;
	bool others = parent_auto && parent->nactive > 1;
	starpu_pthread_mutex_unlock(&plans_lock);
	if (parent_auto && index < 0) {
		/* The parent as a whole first (whatever its own parent needs), then its children. */
		access_switches(parent, write);
		partition(parent, p, !write, true, automatic);
	} else if (parent_auto && write && parent_readonly) {
		/* Read-only plans beside this one go, then this one may be written. */
		while (others) {
			starpu_pthread_mutex_lock(&plans_lock);
			struct _astro_plan *other = NULL;
			for (unsigned i = 0; i < parent->nactive && !other; i++)
				if (parent->active[i] != p)
					other = parent->active[i];
			starpu_pthread_mutex_unlock(&plans_lock);
			if (!other)
				break;
			unpartition(parent, other, false, true, NULL, NULL, automatic);
		}
		starpu_data_partition_readwrite_upgrade_submit(parent, p->n, p->children);
	}
	starpu_pthread_mutex_lock(&plans_lock);
	bool gather = !h->plans_manual && h->nactive && (write || !h->active_readonly);
	starpu_pthread_mutex_unlock(&plans_lock);
	if (gather)
		gather_all(h, automatic);
}

void _astro_plans_access(starpu_data_handle_t h, enum starpu_data_access_mode mode)
{
	if (mode & (STARPU_NOPLAN | STARPU_SCRATCH))
		return;
	access_switches(h, (mode & (STARPU_W | STARPU_REDUX)) != 0);
}

int _astro_plans_task_access(struct starpu_task *task)
{
	if (task->cl == &switch_cl)
		return 0;
	unsigned n = _astro_task_nbuffers(task);
	for (unsigned i = 0; i < n; i++)
		_astro_plans_access(STARPU_TASK_GET_HANDLE(task, i), STARPU_TASK_GET_MODE(task, i));
	return 0;
}

/* ------------------------------------------------------- handles going */

void _astro_plans_gather(starpu_data_handle_t h)
{
	if (__atomic_load_n(&_astro_plans, __ATOMIC_RELAXED))
		gather_all(h, "starpu_data_unregister");
}

void _astro_plans_forget(starpu_data_handle_t h)
{
	/* The handle is going: nobody else reads these fields of it now. */
	if (!h->plan && !h->plans && !h->active)
		return;
	starpu_pthread_mutex_lock(&plans_lock);
	struct _astro_plan *p = h->plan;
	/* A child unregistered while its plan is active (its data is home, in the parent's buffer): the plan is no longer. */
	int index = p && p->parent ? active_index(p->parent, p) : -1;
	if (index >= 0)
		deactivate(p->parent, index);
	if (p && --p->refs == 0) {
		/* The parent no longer lists it once its children are gone. */
		starpu_data_handle_t parent = p->parent;
		for (unsigned i = 0; parent && i < parent->nplans; i++)
			if (parent->plans[i] == p)
				parent->plans[i] = parent->plans[--parent->nplans];
		free(p);
		__atomic_sub_fetch(&_astro_plans, 1, __ATOMIC_RELAXED);
	}
	h->plan = NULL;
	/* Plans of this handle whose children remain (not cleaned): they have no parent any more. */
	for (unsigned i = 0; i < h->nplans; i++)
		h->plans[i]->parent = NULL;
	free(h->plans);
	h->plans = NULL;
	h->nplans = 0;
	free(h->active);
	h->active = NULL;
	h->nactive = h->active_cap = 0;
	starpu_pthread_mutex_unlock(&plans_lock);
}

/* ------------------------------------------------------------ the API */

void starpu_data_partition_plan(starpu_data_handle_t initial_handle, struct starpu_data_filter *f, starpu_data_handle_t *children)
{
	if (!_astro_filter_checks(initial_handle, f, "starpu_data_partition_plan"))
		return;
	if (!children) {
		_astro_error("starpu_data_partition_plan: NULL children array: give an array of nchildren handles");
		return;
	}
	unsigned nparts = _astro_filter_nparts(f, initial_handle);
	struct _astro_plan *p = calloc(1, sizeof(*p) + nparts * sizeof(p->children[0]));
	p->parent = initial_handle;
	p->n = nparts;
	for (unsigned i = 0; i < nparts; i++) {
		children[i] = p->children[i] = _astro_child_register(initial_handle, f, i, nparts);
		if (children[i]) {
			children[i]->plan = p;
			p->refs++;
		}
	}
	if (!p->refs) {
		free(p);
		return;
	}
	starpu_pthread_mutex_lock(&plans_lock);
	initial_handle->plans = realloc(initial_handle->plans, (initial_handle->nplans + 1) * sizeof(*initial_handle->plans));
	initial_handle->plans[initial_handle->nplans++] = p;
	starpu_pthread_mutex_unlock(&plans_lock);
	/* Submissions switch the plans their accesses need from now on (tasks/task.c). */
	_astro_plans_task_switch = _astro_plans_task_access;
	__atomic_add_fetch(&_astro_plans, 1, __ATOMIC_RELEASE);
}

void starpu_data_partition_submit_sequential_consistency(starpu_data_handle_t initial_handle, unsigned nparts, starpu_data_handle_t *children, int sequential_consistency)
{
	struct _astro_plan *p = plan_of(initial_handle, nparts, children, "starpu_data_partition_submit");
	if (p)
		partition(initial_handle, p, false, sequential_consistency, "starpu_data_partition_submit");
}

void starpu_data_partition_submit(starpu_data_handle_t initial_handle, unsigned nparts, starpu_data_handle_t *children)
{
	starpu_data_partition_submit_sequential_consistency(initial_handle, nparts, children, 1);
}

void starpu_data_partition_readonly_submit_sequential_consistency(starpu_data_handle_t initial_handle, unsigned nparts, starpu_data_handle_t *children, int sequential_consistency)
{
	struct _astro_plan *p = plan_of(initial_handle, nparts, children, "starpu_data_partition_readonly_submit");
	if (p)
		partition(initial_handle, p, true, sequential_consistency, "starpu_data_partition_readonly_submit");
}

void starpu_data_partition_readonly_submit(starpu_data_handle_t initial_handle, unsigned nparts, starpu_data_handle_t *children)
{
	starpu_data_partition_readonly_submit_sequential_consistency(initial_handle, nparts, children, 1);
}

void starpu_data_partition_readwrite_upgrade_submit(starpu_data_handle_t initial_handle, unsigned nparts, starpu_data_handle_t *children)
{
	const char *fn = "starpu_data_partition_readwrite_upgrade_submit";
	struct _astro_plan *p = plan_of(initial_handle, nparts, children, fn);
	if (!p)
		return;
	starpu_pthread_mutex_lock(&plans_lock);
	bool ok = active_index(initial_handle, p) >= 0 && initial_handle->active_readonly && initial_handle->nactive == 1;
	if (ok)
		initial_handle->active_readonly = false;
	starpu_pthread_mutex_unlock(&plans_lock);
	if (!ok) {
		_astro_error("%s: the handle must be partitioned read-only into this plan, and into no other: "
			     "call starpu_data_partition_readonly_submit first, and unpartition the other plans", fn);
		return;
	}
	/* The children will be written: after the reads of the parent and of the children. */
	switch_submit(initial_handle, STARPU_RW, p, STARPU_RW, NULL, NULL, fn);
}

void starpu_data_unpartition_submit_sequential_consistency_cb(starpu_data_handle_t initial_handle, unsigned nparts, starpu_data_handle_t *children,
							      int gathering_node, int sequential_consistency,
							      void (*callback_func)(void *), void *callback_arg)
{
	(void)gathering_node; /* the views live in main memory */
	struct _astro_plan *p = plan_of(initial_handle, nparts, children, "starpu_data_unpartition_submit");
	if (p)
		unpartition(initial_handle, p, false, sequential_consistency, callback_func, callback_arg, "starpu_data_unpartition_submit");
}

void starpu_data_unpartition_submit_sequential_consistency(starpu_data_handle_t initial_handle, unsigned nparts, starpu_data_handle_t *children,
							   int gathering_node, int sequential_consistency)
{
	starpu_data_unpartition_submit_sequential_consistency_cb(initial_handle, nparts, children, gathering_node, sequential_consistency, NULL, NULL);
}

void starpu_data_unpartition_submit(starpu_data_handle_t initial_handle, unsigned nparts, starpu_data_handle_t *children, int gathering_node)
{
	starpu_data_unpartition_submit_sequential_consistency_cb(initial_handle, nparts, children, gathering_node, 1, NULL, NULL);
}

void starpu_data_unpartition_readonly_submit(starpu_data_handle_t initial_handle, unsigned nparts, starpu_data_handle_t *children, int gathering_node)
{
	(void)gathering_node;
	struct _astro_plan *p = plan_of(initial_handle, nparts, children, "starpu_data_unpartition_readonly_submit");
	if (p)
		unpartition(initial_handle, p, true, true, NULL, NULL, "starpu_data_unpartition_readonly_submit");
}

void starpu_data_partition_readonly_downgrade_submit(starpu_data_handle_t initial_handle, unsigned nparts, starpu_data_handle_t *children)
{
	struct _astro_plan *p = plan_of(initial_handle, nparts, children, "starpu_data_partition_readonly_downgrade_submit");
	if (p)
		unpartition(initial_handle, p, true, true, NULL, NULL, "starpu_data_partition_readonly_downgrade_submit");
}

void starpu_data_unpartition_submit_r(starpu_data_handle_t initial_handle, int gathering_node)
{
	(void)gathering_node;
	if (!initial_handle) {
		_astro_error("starpu_data_unpartition_submit_r: NULL handle");
		return;
	}
	gather_all(initial_handle, "starpu_data_unpartition_submit_r");
}

void starpu_data_partition_clean_node(starpu_data_handle_t root_data, unsigned nparts, starpu_data_handle_t *children, int gather_node)
{
	(void)gather_node; /* the views live in main memory */
	starpu_data_partition_clean(root_data, nparts, children);
}

void starpu_data_partition_clean(starpu_data_handle_t root_data, unsigned nparts, starpu_data_handle_t *children)
{
	struct _astro_plan *p = plan_of(root_data, nparts, children, "starpu_data_partition_clean");
	if (!p)
		return;
	starpu_pthread_mutex_lock(&plans_lock);
	bool active = active_index(root_data, p) >= 0;
	starpu_pthread_mutex_unlock(&plans_lock);
	/* Gathered first, so that the parent holds the data again once the children go. */
	if (active)
		unpartition(root_data, p, false, true, NULL, NULL, "starpu_data_partition_clean");
	for (unsigned i = 0; i < nparts; i++)
		starpu_data_unregister_submit(children[i]);
}

void starpu_data_partition_not_automatic(starpu_data_handle_t handle)
{
	if (!handle) {
		_astro_error("starpu_data_partition_not_automatic: NULL handle");
		return;
	}
	starpu_pthread_mutex_lock(&plans_lock);
	handle->plans_manual = true;
	starpu_pthread_mutex_unlock(&plans_lock);
}
