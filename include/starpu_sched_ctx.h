/* Scheduling contexts of the StarPU API (the global context). */
#ifndef __STARPU_SCHED_CTX_H__
#define __STARPU_SCHED_CTX_H__

#include <starpu_config.h>
#include <starpu_worker.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Policy-private data of context sched_ctx_id. */
void *starpu_sched_ctx_get_policy_data(unsigned sched_ctx_id);
void starpu_sched_ctx_set_policy_data(unsigned sched_ctx_id, void *policy_data);
/** Workers of context sched_ctx_id. */
struct starpu_worker_collection *starpu_sched_ctx_get_worker_collection(unsigned sched_ctx_id);
/** Policy of context sched_ctx_id. */
struct starpu_sched_policy *starpu_sched_ctx_get_sched_policy(unsigned sched_ctx_id);
/** Number of workers in context sched_ctx_id. */
unsigned starpu_sched_ctx_get_nworkers(unsigned sched_ctx_id);
/** Fills *workerids (allocated) with the workers of the context; returns their count. */
unsigned starpu_sched_ctx_get_workers_list(unsigned sched_ctx_id, int **workerids);
unsigned starpu_sched_ctx_get_workers_list_raw(unsigned sched_ctx_id, int **workerids);
/** 1 when workerid belongs to context sched_ctx_id. */
unsigned starpu_sched_ctx_contains_worker(int workerid, unsigned sched_ctx_id);
/** Context of the calling thread. */
unsigned starpu_sched_ctx_get_context(void);
void starpu_sched_ctx_set_context(unsigned *sched_ctx_id);
/** Priority range of a context. */
int starpu_sched_ctx_get_min_priority(unsigned sched_ctx_id);
int starpu_sched_ctx_get_max_priority(unsigned sched_ctx_id);
int starpu_sched_ctx_set_min_priority(unsigned sched_ctx_id, int min_prio);
int starpu_sched_ctx_set_max_priority(unsigned sched_ctx_id, int max_prio);
int starpu_sched_ctx_min_priority_is_set(unsigned sched_ctx_id);
int starpu_sched_ctx_max_priority_is_set(unsigned sched_ctx_id);
/** Name of the policy of context sched_ctx_id. */
const char *starpu_sched_ctx_get_sched_policy_name(unsigned sched_ctx_id);
/** Id of the global context. */
#define STARPU_GLOBAL_SCHED_CTX 0

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_SCHED_CTX_H__ */
