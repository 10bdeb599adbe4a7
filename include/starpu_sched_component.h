/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Modular schedulers (StarPU's starpu_sched_component.h): a policy as a tree
 * of components. Tasks enter at the root (push_task) and flow down towards
 * the workers; a worker looking for work pulls from the component above it
 * (pull_task), which may pull from its own parents in turn. A component that
 * stores tasks tells the components below that they may pull (can_pull),
 * and a component that made room tells the ones above that they may push
 * again (can_push). Astrolabe's components are in libastrolabe (sched/);
 * a component written out of tree is a struct starpu_sched_component made
 * with starpu_sched_component_create() and its own methods.
 */
#ifndef __STARPU_SCHED_COMPONENT_H__
#define __STARPU_SCHED_COMPONENT_H__

#include <starpu.h>
#include <starpu_bitmap.h>

#ifdef STARPU_HAVE_HWLOC
#include <hwloc.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Flags of starpu_sched_component::properties. */
enum starpu_sched_component_properties
{
	/** All the workers below have the same architecture. */
	STARPU_SCHED_COMPONENT_HOMOGENEOUS = (1 << 0),
	/** All the workers below share one memory node. */
	STARPU_SCHED_COMPONENT_SINGLE_MEMORY_NODE = (1 << 1)
};

#define STARPU_SCHED_COMPONENT_IS_HOMOGENEOUS(component) ((component)->properties & STARPU_SCHED_COMPONENT_HOMOGENEOUS)
#define STARPU_SCHED_COMPONENT_IS_SINGLE_MEMORY_NODE(component) ((component)->properties & STARPU_SCHED_COMPONENT_SINGLE_MEMORY_NODE)

/** One node of a scheduling tree; methods are called as component->push_task(component, task). */
struct starpu_sched_component
{
	/** The tree the component belongs to. */
	struct starpu_sched_tree *tree;
	/** The workers below the component. */
	struct starpu_bitmap *workers;
	/** Those of them that are in the tree's context now: decisions consider only these. */
	struct starpu_bitmap *workers_in_ctx;
	/** The component's own data. */
	void *data;
	char *name;
	unsigned nchildren;
	struct starpu_sched_component **children;
	unsigned nparents;
	struct starpu_sched_component **parents;

	void (*add_child)(struct starpu_sched_component *component, struct starpu_sched_component *child);
	void (*remove_child)(struct starpu_sched_component *component, struct starpu_sched_component *child);
	void (*add_parent)(struct starpu_sched_component *component, struct starpu_sched_component *parent);
	void (*remove_parent)(struct starpu_sched_component *component, struct starpu_sched_component *parent);

	/**
	 * Takes task, which some worker below can run: keeps it or pushes it to
	 * a child. Returns 0 when it took it, non-zero when it did not (a full
	 * queue): the caller keeps the task.
	 */
	int (*push_task)(struct starpu_sched_component *component, struct starpu_task *task);
	/** Gives component to (a child) a task some worker below to can run, from its own store or its parents; NULL if none. */
	struct starpu_task *(*pull_task)(struct starpu_sched_component *from, struct starpu_sched_component *to);
	/** Called on a parent by its child to, which has room again: push to it. Returns 1 when tasks could be pushed. */
	int (*can_push)(struct starpu_sched_component *from, struct starpu_sched_component *to);
	/** Called by a component that stored tasks: tell the components below to pull. Returns 1 when a worker will pull. */
	int (*can_pull)(struct starpu_sched_component *component);
	int (*notify)(struct starpu_sched_component *component, int message_ID, void *arg);
	/** Work queued below, in tasks divided by the relative speed of the workers. */
	double (*estimated_load)(struct starpu_sched_component *component);
	/** When the workers below will have finished what they have (µs, starpu_timing_now() clock). */
	double (*estimated_end)(struct starpu_sched_component *component);
	/** Frees data, called by starpu_sched_component_destroy(). */
	void (*deinit_data)(struct starpu_sched_component *component);
	/** Told when the workers of the context change. */
	void (*notify_change_workers)(struct starpu_sched_component *component);
	int properties;
#ifdef STARPU_HAVE_HWLOC
	hwloc_obj_t obj;
#else
	void *obj;
#endif
};

/** A scheduler: the tree of components of one context. */
struct starpu_sched_tree
{
	/** Where tasks are pushed. */
	struct starpu_sched_component *root;
	/** The workers of the context. */
	struct starpu_bitmap *workers;
	unsigned sched_ctx_id;
	/** Held while workers are added or removed. */
	starpu_pthread_mutex_t lock;
};

/** init_sched of modular-prio. */
void starpu_initialize_prio_center_policy(unsigned sched_ctx_id);

/* ------------------------------------------------------------------ trees */

/** An empty tree for sched_ctx_id (NULL with a message when the context already has one or memory is short). */
struct starpu_sched_tree *starpu_sched_tree_create(unsigned sched_ctx_id) STARPU_ATTRIBUTE_MALLOC;
/** Destroys tree and every component in it, worker components included. */
void starpu_sched_tree_destroy(struct starpu_sched_tree *tree);
/** deinit_sched of a modular policy: destroys the context's tree. */
void starpu_sched_tree_deinitialize(unsigned sched_ctx_id);
/** The tree of sched_ctx_id, NULL if none. */
struct starpu_sched_tree *starpu_sched_tree_get(unsigned sched_ctx_id);
/** Recomputes every component's workers from the worker components below it. */
void starpu_sched_tree_update_workers(struct starpu_sched_tree *t);
/** Recomputes every component's workers_in_ctx (its workers that are in the context). */
void starpu_sched_tree_update_workers_in_ctx(struct starpu_sched_tree *t);
/** push_task of a modular policy: into the root (a task bound to a worker goes to that worker). */
int starpu_sched_tree_push_task(struct starpu_task *task);
/** pop_task of a modular policy: the calling worker pulls from its worker component. */
struct starpu_task *starpu_sched_tree_pop_task(unsigned sched_ctx);
/** add_workers / remove_workers of a modular policy. */
void starpu_sched_tree_add_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers);
/** Removes workers from the modular tree of context sched_ctx_id. */
void starpu_sched_tree_remove_workers(unsigned sched_ctx_id, int *workerids, unsigned nworkers);

/** to->push_task(to, task); from is the pusher (for traces). */
int starpu_sched_component_push_task(struct starpu_sched_component *from, struct starpu_sched_component *to, struct starpu_task *task);
/** from->pull_task(from, to). */
struct starpu_task *starpu_sched_component_pull_task(struct starpu_sched_component *from, struct starpu_sched_component *to);
/** Moves component's tasks (pulled from it) to to until to refuses one: that one is returned (the caller keeps it), else NULL; *success is set when a task moved. */
struct starpu_task *starpu_sched_component_pump_to(struct starpu_sched_component *component, struct starpu_sched_component *to, int *success);
/** starpu_sched_component_pump_to() towards each child in turn. */
struct starpu_task *starpu_sched_component_pump_downstream(struct starpu_sched_component *component, int *success);
/** Calls can_push on each parent of component until one returns non-zero; returns that. */
int starpu_sched_component_send_can_push_to_parents(struct starpu_sched_component *component);

/** Makes child a child of parent and parent a parent of child. */
void starpu_sched_component_connect(struct starpu_sched_component *parent, struct starpu_sched_component *child);

/* ------------------------------------------------------ generic components */

typedef struct starpu_sched_component *(*starpu_sched_component_create_t)(struct starpu_sched_tree *tree, void *data);

/**
 * A component with the default methods: pull_task pulls from the parents,
 * can_push asks the parents, can_pull asks the children, estimated_load sums
 * the children's, estimated_end is the children's minimum. NULL with a
 * message when memory is short.
 */
struct starpu_sched_component *starpu_sched_component_create(struct starpu_sched_tree *tree, const char *name) STARPU_ATTRIBUTE_MALLOC;
/** Calls deinit_data, unlinks component from its parents and children, frees it. */
void starpu_sched_component_destroy(struct starpu_sched_component *component);
/** Destroys component and, recursively, its children that are not worker components. */
void starpu_sched_component_destroy_rec(struct starpu_sched_component *component);
/** Adds child to component's children. */
void starpu_sched_component_add_child(struct starpu_sched_component *component, struct starpu_sched_component *child);
/** 1 when a worker of component's workers_in_ctx can run task. */
int starpu_sched_component_can_execute_task(struct starpu_sched_component *component, struct starpu_task *task);
/** 1 when a worker below can run task; *length is the shortest predicted length on them (NaN: a model needs calibrating, 0: no model). */
int STARPU_WARN_UNUSED_RESULT starpu_sched_component_execute_preds(struct starpu_sched_component *component, struct starpu_task *task, double *length);
/** Average predicted time to bring task's data to the workers below. */
double starpu_sched_component_transfer_length(struct starpu_sched_component *component, struct starpu_task *task);
/** Prefetches task's data to the memory node of the workers below, when they share one. */
void starpu_sched_component_prefetch_on_node(struct starpu_sched_component *component, struct starpu_task *task);

/* -------------------------------------------------------------- workers */

/** The leaf of sched_ctx's tree for workerid, made on first use (NULL with a message for a bad id). */
struct starpu_sched_component *starpu_sched_component_worker_get(unsigned sched_ctx, int workerid);
/** The worker component of workerid in the modular tree of context sched_ctx. */
struct starpu_sched_component *starpu_sched_component_worker_new(unsigned sched_ctx, int workerid);
/**
 * The component of the combined worker of workers (made with starpu_combined_worker_assign_workerid() if none
 * exists; their order gives the ranks), parent of their worker components: a task pushed to it runs on all of
 * them at once (a parallel codelet: STARPU_SPMD or STARPU_FORKJOIN). Decisions count it when all its workers are
 * in the context. starpu_sched_component_worker_get() gives it by its combined worker id. NULL with a message for
 * bad workers (not CPU workers, repeated, out of range).
 */
struct starpu_sched_component *starpu_sched_component_parallel_worker_create(struct starpu_sched_tree *tree, unsigned nworkers, unsigned *workers);
/** The worker of a worker component, -1 for another component. */
int starpu_sched_component_worker_get_workerid(struct starpu_sched_component *worker_component);
/** Returns 1 if component is a worker component (simple or combined). */
int starpu_sched_component_is_worker(struct starpu_sched_component *component);
/** Returns 1 if component is the component of one worker. */
int starpu_sched_component_is_simple_worker(struct starpu_sched_component *component);
/** Returns 1 if component is the component of a combined worker. */
int starpu_sched_component_is_combined_worker(struct starpu_sched_component *component);
/** pre_exec_hook / post_exec_hook of a modular policy: keep the worker components' estimated ends. */
void starpu_sched_component_worker_pre_exec_hook(struct starpu_task *task, unsigned sched_ctx_id);
/** Post-execution hook of the modular policies: lets the worker component of the calling worker update its expected end. */
void starpu_sched_component_worker_post_exec_hook(struct starpu_task *task, unsigned sched_ctx_id);

/* ------------------------------------------------- default methods */

/** Pulls a task from component's parents in turn (on behalf of to), NULL if none has one. */
struct starpu_task *starpu_sched_component_parents_pull_task(struct starpu_sched_component *component, struct starpu_sched_component *to);
/** Tells component's parents that it can take tasks again, so they push to it. */
int starpu_sched_component_can_push(struct starpu_sched_component *component, struct starpu_sched_component *to);
/** Tells component's children that it has tasks to pull; returns 1 once one of them took note. */
int starpu_sched_component_can_pull(struct starpu_sched_component *component);
/** can_pull on every child, not only until one answers. */
int starpu_sched_component_can_pull_all(struct starpu_sched_component *component);
/** Sum of the estimated loads of component's children. */
double starpu_sched_component_estimated_load(struct starpu_sched_component *component);
/** Earliest estimated end among component's children. */
double starpu_sched_component_estimated_end_min(struct starpu_sched_component *component);
/** The children's minimum end, plus exp_len spread over the workers below. */
double starpu_sched_component_estimated_end_min_add(struct starpu_sched_component *component, double exp_len);
/** Average estimated end of component's children (now when it has none). */
double starpu_sched_component_estimated_end_average(struct starpu_sched_component *component);

/* ---------------------------------------------------------- queues */

/** A queue component refuses a push once it holds ntasks_threshold tasks or exp_len_threshold µs of predicted work (0: no limit); ready takes first the tasks whose data is already there. */
struct starpu_sched_component_fifo_data
{
	unsigned ntasks_threshold;
	double exp_len_threshold;
	int ready;
};

/** A first-in first-out queue component (fifo_data may be NULL: no limit). */
struct starpu_sched_component *starpu_sched_component_fifo_create(struct starpu_sched_tree *tree, struct starpu_sched_component_fifo_data *fifo_data) STARPU_ATTRIBUTE_MALLOC;
/** Returns 1 if component was made by starpu_sched_component_fifo_create(). */
int starpu_sched_component_is_fifo(struct starpu_sched_component *component);

struct starpu_sched_component_prio_data
{
	unsigned ntasks_threshold;
	double exp_len_threshold;
	int ready;
};

/** A queue component ordered by priority, first in first out among equals. */
struct starpu_sched_component *starpu_sched_component_prio_create(struct starpu_sched_tree *tree, struct starpu_sched_component_prio_data *prio_data) STARPU_ATTRIBUTE_MALLOC;
/** Returns 1 if component was made by starpu_sched_component_prio_create(). */
int starpu_sched_component_is_prio(struct starpu_sched_component *component);

/* ------------------------------------------------------ decisions */

/** Work stealing: a queue per child, filled round-robin (or by the pushing worker), and idle children steal. */
struct starpu_sched_component *starpu_sched_component_work_stealing_create(struct starpu_sched_tree *tree, void *arg) STARPU_ATTRIBUTE_MALLOC;
/** Returns 1 if component was made by starpu_sched_component_work_stealing_create(). */
int starpu_sched_component_is_work_stealing(struct starpu_sched_component *component);
/** push_task of modular-ws: a task pushed by a worker stays in its queue of the tree's work-stealing component. */
int starpu_sched_tree_work_stealing_push_task(struct starpu_task *task);

/** Pushes each task to a child chosen at random, weighted by the relative speed of its workers. */
struct starpu_sched_component *starpu_sched_component_random_create(struct starpu_sched_tree *tree, void *arg) STARPU_ATTRIBUTE_MALLOC;
/** Returns 1 if component was made by starpu_sched_component_random_create(). */
int starpu_sched_component_is_random(struct starpu_sched_component *);

/** Gives tasks to the children that ask for them (pull), or pushes to the first child that can run them and takes them. */
struct starpu_sched_component *starpu_sched_component_eager_create(struct starpu_sched_tree *tree, void *arg) STARPU_ATTRIBUTE_MALLOC;
/** Returns 1 if component was made by starpu_sched_component_eager_create(). */
int starpu_sched_component_is_eager(struct starpu_sched_component *);
/** Eager, towards the children whose workers still need to calibrate the task's model first. */
struct starpu_sched_component *starpu_sched_component_eager_calibration_create(struct starpu_sched_tree *tree, void *arg) STARPU_ATTRIBUTE_MALLOC;
/** Returns 1 if component was made by starpu_sched_component_eager_calibration_create(). */
int starpu_sched_component_is_eager_calibration(struct starpu_sched_component *);

/** Weights of the minimum-completion-time decision: alpha the completion time, beta the transfers, _gamma the energy, idle_power the idle workers' power. */
struct starpu_sched_component_mct_data
{
	double alpha;
	double beta;
	double _gamma;
	double idle_power;
};

/** Pushes each task to the child where it is predicted to complete first (mct_data NULL: StarPU's defaults and env vars). */
struct starpu_sched_component *starpu_sched_component_mct_create(struct starpu_sched_tree *tree, struct starpu_sched_component_mct_data *mct_data) STARPU_ATTRIBUTE_MALLOC;
/** Returns 1 if component was made by starpu_sched_component_mct_create(). */
int starpu_sched_component_is_mct(struct starpu_sched_component *component);
/** MCT over a window of tasks it keeps by priority, decided highest first as the children make room. */
struct starpu_sched_component *starpu_sched_component_heft_create(struct starpu_sched_tree *tree, struct starpu_sched_component_mct_data *mct_data) STARPU_ATTRIBUTE_MALLOC;
/** Returns 1 if component was made by starpu_sched_component_heft_create(). */
int starpu_sched_component_is_heft(struct starpu_sched_component *component);

/** Parameters of the heteroprio component: mct the weights of its decisions (NULL: StarPU's defaults and env vars);
 * batch non-zero (the default) sends the tasks of its buckets down with the context's highest priority, so the queues below keep its order. */
struct starpu_sched_component_heteroprio_data
{
	struct starpu_sched_component_mct_data *mct;
	unsigned batch;
};

/**
 * Sorts tasks into buckets of similar acceleration factor (their predicted
 * length on the slowest worker below over the fastest), most accelerated
 * first, and hands them down by the mct decision: accelerators take the most
 * accelerated tasks, CPUs the least; tasks that not every worker can run or
 * without prediction go by the mct decision alone (params NULL: mct defaults,
 * batch on). NULL with a message when memory is short.
 */
struct starpu_sched_component *starpu_sched_component_heteroprio_create(struct starpu_sched_tree *tree, struct starpu_sched_component_heteroprio_data *params) STARPU_ATTRIBUTE_MALLOC;
/** Returns 1 if component was made by starpu_sched_component_heteroprio_create(). */
int starpu_sched_component_is_heteroprio(struct starpu_sched_component *component);

/** Chooses the implementation predicted fastest on the workers below (one needing calibration first), then pushes to its only child. */
struct starpu_sched_component *starpu_sched_component_best_implementation_create(struct starpu_sched_tree *tree, void *arg) STARPU_ATTRIBUTE_MALLOC;

struct starpu_sched_component_perfmodel_select_data
{
	struct starpu_sched_component *calibrator_component;
	struct starpu_sched_component *no_perfmodel_component;
	struct starpu_sched_component *perfmodel_component;
};

/** Sends a task with a calibrated model to perfmodel_component, one still calibrating to calibrator_component, any other to no_perfmodel_component. */
struct starpu_sched_component *starpu_sched_component_perfmodel_select_create(struct starpu_sched_tree *tree, struct starpu_sched_component_perfmodel_select_data *perfmodel_select_data) STARPU_ATTRIBUTE_MALLOC;
/** Returns 1 if component was made by starpu_sched_component_perfmodel_select_create(). */
int starpu_sched_component_is_perfmodel_select(struct starpu_sched_component *component);

/* ------------------------------------------------ simple schedulers */

#define STARPU_SCHED_SIMPLE_DECIDE_MASK		(3 << 0)
/** The decision component chooses a worker. */
#define STARPU_SCHED_SIMPLE_DECIDE_WORKERS	(1 << 0)
/** It chooses a memory node (the workers of a node share what is sent there). */
#define STARPU_SCHED_SIMPLE_DECIDE_MEMNODES	(2 << 0)
/** It chooses an architecture (CPU, OpenCL, ...). */
#define STARPU_SCHED_SIMPLE_DECIDE_ARCHS	(3 << 0)
/** Keep the decision component even when there is a single choice. */
#define STARPU_SCHED_SIMPLE_DECIDE_ALWAYS	(1 << 3)
/** A perfmodel_select above the decision: tasks without a calibrated model go around it, eagerly. */
#define STARPU_SCHED_SIMPLE_PERFMODEL		(1 << 4)
/** A best_implementation component above each worker. */
#define STARPU_SCHED_SIMPLE_IMPL		(1 << 5)
/** A queue above the decision component (the root). */
#define STARPU_SCHED_SIMPLE_FIFO_ABOVE		(1 << 6)
/** ... ordered by priority. */
#define STARPU_SCHED_SIMPLE_FIFO_ABOVE_PRIO	(1 << 7)
/** A queue below the decision for each choice, with a limit (STARPU_NTASKS_THRESHOLD, STARPU_EXP_LEN_THRESHOLD), its tasks' data prefetched. */
#define STARPU_SCHED_SIMPLE_FIFOS_BELOW		(1 << 8)
/** ... ordered by priority. */
#define STARPU_SCHED_SIMPLE_FIFOS_BELOW_PRIO	(1 << 9)
/** ... taking first the tasks whose data is there. */
#define STARPU_SCHED_SIMPLE_FIFOS_BELOW_READY	(1 << 10)
/** The workers sharing a queue below share it through a work-stealing component. */
#define STARPU_SCHED_SIMPLE_WS_BELOW		(1 << 11)
/** Choose among combined workers too: StarPU's default ones are made (starpu_sched_find_all_worker_combinations()) and each
 * is a choice of the decision (or goes with its first member's memory node or kind), with no queue below it. */
#define STARPU_SCHED_SIMPLE_COMBINED_WORKERS	(1 << 12)

/** Builds sched_ctx_id's tree around the decision component create_decision_component(tree, data), as flags describe, and makes it the context's policy data. */
void starpu_sched_component_initialize_simple_scheduler(starpu_sched_component_create_t create_decision_component, void *data, unsigned flags, unsigned sched_ctx_id);
/** The same with ndecisions decision components side by side (create, data, flags for each); their flags must agree and not include STARPU_SCHED_SIMPLE_PERFMODEL. */
void starpu_sched_component_initialize_simple_schedulers(unsigned sched_ctx_id, unsigned ndecisions, ...);

/* ------------------------------------------ trees from a specification */

/** A list of component constructors, each instance placed under the previous one. */
struct starpu_sched_component_composed_recipe;

/** An empty recipe (NULL with a message when memory is short): add components to it. */
struct starpu_sched_component_composed_recipe *starpu_sched_component_composed_recipe_create(void) STARPU_ATTRIBUTE_MALLOC;
/** A recipe of the one component create_component(tree, arg). */
struct starpu_sched_component_composed_recipe *starpu_sched_component_composed_recipe_create_singleton(struct starpu_sched_component *(*create_component)(struct starpu_sched_tree *tree, void *arg), void *arg) STARPU_ATTRIBUTE_MALLOC;
/** Adds create_component(tree, arg) under the components already in recipe. */
void starpu_sched_component_composed_recipe_add(struct starpu_sched_component_composed_recipe *recipe, struct starpu_sched_component *(*create_component)(struct starpu_sched_tree *tree, void *arg), void *arg);
/** Frees recipe (the components made from it stay). */
void starpu_sched_component_composed_recipe_destroy(struct starpu_sched_component_composed_recipe *recipe);
/** The component of a recipe: its one component, or for several a "composed" component that chains them (pushed tasks enter the first, the components below take from the last); NULL with a message for an empty recipe or a step that cannot be made. */
struct starpu_sched_component *starpu_sched_component_composed_component_create(struct starpu_sched_tree *tree, struct starpu_sched_component_composed_recipe *recipe) STARPU_ATTRIBUTE_MALLOC;

#ifdef STARPU_HAVE_HWLOC
/** What starpu_sched_component_make_scheduler() builds, level by level from the root; a NULL level is skipped. */
struct starpu_sched_component_specs
{
	/** The components at the root (required). */
	struct starpu_sched_component_composed_recipe *hwloc_machine_composed_sched_component;
	/** The components made once per memory node (RAM node) of the workers, under the machine's. */
	struct starpu_sched_component_composed_recipe *hwloc_component_composed_sched_component;
	/** Made once per package (hwloc) of the CPU workers' processing units, or NULL: no such level. */
	struct starpu_sched_component_composed_recipe *hwloc_socket_composed_sched_component;
	/** Made once per last-level cache of the CPU workers' processing units, or NULL: no such level. */
	struct starpu_sched_component_composed_recipe *hwloc_cache_composed_sched_component;
	/** A new recipe (or NULL: none) made once above each worker of kind archtype; the builder destroys it. */
	struct starpu_sched_component_composed_recipe *(*worker_composed_sched_component)(enum starpu_worker_archtype archtype);
	/** Non-zero: workers of different kinds on one memory node share its components; zero: each kind has its own. */
	int mix_heterogeneous_workers;
};

/** Builds sched_ctx_id's tree from s (NULL with a message on bad specifications); the caller makes it the context's policy data. */
struct starpu_sched_tree *starpu_sched_component_make_scheduler(unsigned sched_ctx_id, struct starpu_sched_component_specs s);
#endif

#define STARPU_COMPONENT_MUTEX_LOCK(m) \
	do { \
		const int _relaxed_state = starpu_worker_get_relax_state(); \
		if (!_relaxed_state) \
			starpu_worker_relax_on(); \
		STARPU_PTHREAD_MUTEX_LOCK((m)); \
		if (!_relaxed_state) \
			starpu_worker_relax_off(); \
	} while (0)
#define STARPU_COMPONENT_MUTEX_TRYLOCK(m) STARPU_PTHREAD_MUTEX_TRYLOCK((m))
#define STARPU_COMPONENT_MUTEX_UNLOCK(m) STARPU_PTHREAD_MUTEX_UNLOCK((m))

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_SCHED_COMPONENT_H__ */
