/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Profiling of the StarPU API: on-line performance feedback per task, per
 * worker and per bus, and the summaries printed at shutdown.
 *
 * All the dates below are relative to starpu_init(); durations are
 * timespecs too. Feedback is collected only while profiling is enabled
 * (starpu_profiling_status_set() or STARPU_PROFILING=1), so that profiling
 * "off" costs nothing on the task path.
 */
#ifndef __STARPU_PROFILING_H__
#define __STARPU_PROFILING_H__

#include <errno.h>
#include <stdint.h>
#include <time.h>
#include <starpu_config.h>
#ifdef STARPU_PAPI
#include <papi.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** Passed to starpu_profiling_status_set() to stop collecting feedback. */
#define STARPU_PROFILING_DISABLE 0
/** Passed to starpu_profiling_status_set() to (re)start collecting feedback. */
#define STARPU_PROFILING_ENABLE 1

/**
 * Timing of one task, filled while profiling is enabled: task->profiling_info
 * points to it from submission on, and it is freed with the task. Readable
 * from the task's callback (starpu_task_get_current()).
 */
struct starpu_profiling_task_info
{
	/** Submission (relative to starpu_init()). */
	struct timespec submit_time;
	/** The task was handed to the scheduler. */
	struct timespec push_start_time;
	/** The scheduler took it. */
	struct timespec push_end_time;
	/** The worker that got it started asking the scheduler for work. */
	struct timespec pop_start_time;
	/** The scheduler handed it over. */
	struct timespec pop_end_time;
	/** The worker started fetching its data. */
	struct timespec acquire_data_start_time;
	/** Its data was available on the worker's memory node. */
	struct timespec acquire_data_end_time;
	/** Its implementation started. */
	struct timespec start_time;
	/** Its implementation returned. */
	struct timespec end_time;
	/** The worker started releasing its data. */
	struct timespec release_data_start_time;
	/** Its data was released. */
	struct timespec release_data_end_time;
	/** Its callback started. */
	struct timespec callback_start_time;
	/** Its callback returned. */
	struct timespec callback_end_time;
	/** The worker that ran it. */
	int workerid;
	/** Cycles used by the task, where the hardware reports them (0 here). */
	uint64_t used_cycles;
	/** Cycles stalled within the task, where the hardware reports them (0 here). */
	uint64_t stall_cycles;
	/**
	 * Energy used while the task ran, in Joules: the energy of its worker's
	 * CPU package (and its DRAM) over the task's execution, where an energy
	 * meter is registered (counters_energy: Linux powercap), else 0. Like
	 * StarPU's device-wide counters, it includes whatever else ran on that
	 * package meanwhile (other workers' tasks).
	 */
	double energy_consumed;
#ifdef STARPU_PAPI
	/** Values of the STARPU_PROF_PAPI_EVENTS events counted while the task ran, in that variable's order. */
	long long int papi_values[PAPI_MAX_HWCTRS];
	/** The worker's PAPI event set that counted them; PAPI_NULL (or 0) when they were not counted. */
	int papi_event_set;
#endif
};

/**
 * Feedback of one worker since the previous starpu_profiling_worker_get_info()
 * (or since profiling was enabled). Two views of time: the "all" times
 * overlap (e.g. scheduling while sleeping); the split times never do and,
 * with the uncategorised overhead, add up to total_time.
 */
struct starpu_profiling_worker_info
{
	/** Start of the measurement interval (relative to starpu_init()). */
	struct timespec start_time;
	/** Length of the measurement interval. */
	struct timespec total_time;
	/** Tasks the worker executed during the interval. */
	int executed_tasks;

	/** Time running task implementations. */
	struct timespec all_executing_time;
	/** Time running application callbacks. */
	struct timespec all_callback_time;
	/** Time waiting for data. */
	struct timespec all_waiting_time;
	/** Time without any task to run (lack of parallelism). */
	struct timespec all_sleeping_time;
	/** Time asking the scheduler for work. */
	struct timespec all_scheduling_time;

	/** Time running task implementations (equal to all_executing_time). */
	struct timespec executing_time;
	/** Callback time while not executing a task. */
	struct timespec callback_time;
	/** Waiting time while not executing a task or a callback. */
	struct timespec waiting_time;
	/** Time without work while not executing, running a callback or waiting for data. */
	struct timespec sleeping_time;
	/** Scheduling time while there was work and nothing of the above. */
	struct timespec scheduling_time;

	/** Cycles used by the worker, where the hardware reports them (0 here). */
	uint64_t used_cycles;
	/** Cycles stalled within the worker, where the hardware reports them (0 here). */
	uint64_t stall_cycles;
	/** Energy, in Joules, of the tasks the worker ended during the interval,
	 *  each measured over its execution (its package and DRAM) where an
	 *  energy meter exists (plugin counters_energy), else 0. */
	double energy_consumed;
	/** Sum of starpu_task::flops of the tasks it executed. */
	double flops;
};

/** Feedback of one bus (a link between two memory nodes). */
struct starpu_profiling_bus_info
{
	/** Start of the measurement interval (relative to starpu_init()). */
	struct timespec start_time;
	/** Length of the measurement interval. */
	struct timespec total_time;
	/** Bytes transferred during the interval. */
	int long long transferred_bytes;
	/** Transfers during the interval. */
	int transfer_count;
};

/**
 * Resets all the collected feedback, and enables profiling when the
 * environment variable STARPU_PROFILING is a positive number.
 */
void starpu_profiling_init(void);

/** Sets the id used in profiling trace file names (call it before starpu_init()). */
void starpu_profiling_set_id(int new_id);

/**
 * Enables (STARPU_PROFILING_ENABLE) or disables (STARPU_PROFILING_DISABLE)
 * profiling. Enabling resets all the collected feedback; disabling keeps it
 * readable. Returns the previous status, or -EINVAL for another value.
 */
int starpu_profiling_status_set(int status);

/** Returns the current profiling status (STARPU_PROFILING_ENABLE or STARPU_PROFILING_DISABLE). */
int starpu_profiling_status_get(void);

/**
 * Stores in worker_info the feedback of worker workerid since the previous
 * call, then resets it (worker_info may be NULL to only reset). Returns 0, or
 * -EINVAL for an unknown worker.
 */
int starpu_profiling_worker_get_info(int workerid, struct starpu_profiling_worker_info *worker_info);

/** Number of buses (links between memory nodes) seen so far: 0 on a main-memory-only machine. */
int starpu_bus_get_count(void);
/** Id of the bus from memory node src to memory node dst, -1 if there is none. */
int starpu_bus_get_id(int src, int dst);
/** Source memory node of bus busid, -1 (with a message) for an unknown bus. */
int starpu_bus_get_src(int busid);
/** Destination memory node of bus busid, -1 (with a message) for an unknown bus. */
int starpu_bus_get_dst(int busid);
/** Records whether bus busid is a direct link (no staging through main memory). */
void starpu_bus_set_direct(int busid, int direct);
/** 1 when bus busid is a direct link. */
int starpu_bus_get_direct(int busid);
/** Records how many GPUs share bus busid. */
void starpu_bus_set_ngpus(int busid, int ngpus);
/** How many GPUs share bus busid (all of them when unknown). */
int starpu_bus_get_ngpus(int busid);

/**
 * Stores in bus_info the feedback of bus busid since the previous call, then
 * resets it (bus_info may be NULL to only reset). Returns 0, or -EINVAL for
 * an unknown bus.
 */
int starpu_bus_get_profiling_info(int busid, struct starpu_profiling_bus_info *bus_info);

/** Nanoseconds per second, for the timespec helpers. */
#define STARPU_NS_PER_S 1000000000

/** Sets *tsp to zero. */
static inline void starpu_timespec_clear(struct timespec *tsp)
{
	tsp->tv_sec = 0;
	tsp->tv_nsec = 0;
}

/** *result = *a + *b. */
static inline void starpu_timespec_add(struct timespec *a, struct timespec *b, struct timespec *result)
{
	result->tv_sec = a->tv_sec + b->tv_sec;
	result->tv_nsec = a->tv_nsec + b->tv_nsec;
	if (result->tv_nsec >= STARPU_NS_PER_S) {
		result->tv_sec++;
		result->tv_nsec -= STARPU_NS_PER_S;
	}
}

/** *result += *a. */
static inline void starpu_timespec_accumulate(struct timespec *result, struct timespec *a)
{
	result->tv_sec += a->tv_sec;
	result->tv_nsec += a->tv_nsec;
	if (result->tv_nsec >= STARPU_NS_PER_S) {
		result->tv_sec++;
		result->tv_nsec -= STARPU_NS_PER_S;
	}
}

/** *result = *a - *b. */
static inline void starpu_timespec_sub(const struct timespec *a, const struct timespec *b, struct timespec *result)
{
	result->tv_sec = a->tv_sec - b->tv_sec;
	result->tv_nsec = a->tv_nsec - b->tv_nsec;
	if (result->tv_nsec < 0) {
		result->tv_sec--;
		result->tv_nsec += STARPU_NS_PER_S;
	}
}

/** Compares two timespecs with the operator CMP (<, <=, ==...). */
#define starpu_timespec_cmp(a, b, CMP) \
	(((a)->tv_sec == (b)->tv_sec) ? ((a)->tv_nsec CMP (b)->tv_nsec) : ((a)->tv_sec CMP (b)->tv_sec))

/** Microseconds from *start to *end. */
double starpu_timing_timespec_delay_us(struct timespec *start, struct timespec *end);

/** *ts in microseconds. */
double starpu_timing_timespec_to_us(struct timespec *ts);

/**
 * When STARPU_BUS_STATS is a positive number, prints the data transfers per
 * bus (bytes, bandwidth, count, average size) to stderr, or to the file
 * STARPU_BUS_STATS_FILE names. starpu_shutdown() calls it.
 */
void starpu_profiling_bus_helper_display_summary(void);

/**
 * When STARPU_WORKER_STATS is a positive number, prints per worker the tasks
 * executed and, with profiling enabled, the time split and GFlop/s, then the
 * global time split, to stderr or to the file STARPU_WORKER_STATS_FILE names.
 * starpu_shutdown() calls it. It resets the workers' feedback.
 */
void starpu_profiling_worker_helper_display_summary(void);

/**
 * Prints, per memory node, the registered data handles and how they were
 * accessed there. Statistics are collected when STARPU_MEMORY_STATS is a
 * positive number at starpu_init(); starpu_shutdown() then prints them for
 * the handles still registered.
 */
void starpu_data_display_memory_stats(void);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_PROFILING_H__ */
