/* Profiling information of the StarPU API. */
#ifndef __STARPU_PROFILING_H__
#define __STARPU_PROFILING_H__

#include <stdint.h>
#include <time.h>
#include <starpu_config.h>

#ifdef __cplusplus
extern "C" {
#endif

#define STARPU_PROFILING_DISABLE 0
#define STARPU_PROFILING_ENABLE 1

/** Timing of one task, filled when profiling is enabled (task->profiling_info). */
struct starpu_profiling_task_info
{
	struct timespec submit_time;
	struct timespec push_start_time;
	struct timespec push_end_time;
	struct timespec pop_start_time;
	struct timespec pop_end_time;
	struct timespec acquire_data_start_time;
	struct timespec acquire_data_end_time;
	struct timespec start_time;
	struct timespec end_time;
	struct timespec release_data_start_time;
	struct timespec release_data_end_time;
	struct timespec callback_start_time;
	struct timespec callback_end_time;
	int workerid;
	uint64_t used_cycles;
	uint64_t stall_cycles;
	double energy_consumed;
};

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_PROFILING_H__ */
