/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * The StarPU 1.4 profiling-tool interface.
 *
 * A tool is a shared library exporting starpu_prof_tool_library_register();
 * the runtime loads it from STARPU_PROF_TOOL (a colon-separated list of
 * libraries or tool plugin names) or finds it already in the process
 * (LD_PRELOAD, or linked into the program), and calls it with a register and
 * an unregister function. The tool registers one callback per event it wants:
 *
 *     static void cb(struct starpu_prof_tool_info *info,
 *                    union starpu_prof_tool_event_info *event,
 *                    struct starpu_prof_tool_api_info *api)
 *     {
 *             if (info->event_type == starpu_prof_tool_event_start_cpu_exec)
 *                     printf("worker %d runs %p\n", info->worker_id, info->fun_ptr);
 *     }
 *
 *     void starpu_prof_tool_library_register(starpu_prof_tool_entry_register_func reg,
 *                                            starpu_prof_tool_entry_register_func unreg)
 *     {
 *             reg(starpu_prof_tool_event_start_cpu_exec, cb, starpu_prof_tool_command_reg);
 *     }
 *
 * Types, enums and fields are StarPU 1.4's, so a StarPU tool builds unchanged.
 * The Astrolabe additions (several tools and several callbacks per event,
 * working toggle commands, a versioned handshake, a finalize call, a richer
 * event payload, application marks) come after them and are marked "Astrolabe".
 */
#ifndef __STARPU_PROFILING_TOOL_H__
#define __STARPU_PROFILING_TOOL_H__

#include <starpu.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
   @defgroup API_Profiling_Tool Profiling Tool
   @{
*/

/** The events a tool may register a callback for. */
enum starpu_prof_tool_event
{
	starpu_prof_tool_event_none = 0,           /**< never fired */
	starpu_prof_tool_event_init,               /**< the runtime initialises (right after init_begin) */
	starpu_prof_tool_event_terminate,          /**< starpu_shutdown(): the last event, once every worker stopped */
	starpu_prof_tool_event_init_begin,         /**< starpu_init() starts: the first event */
	starpu_prof_tool_event_init_end,           /**< starpu_init() is about to return, workers are ready */

	starpu_prof_tool_event_driver_init,        /**< a worker starts (in its thread) */
	starpu_prof_tool_event_driver_deinit,      /**< a worker stopped (in its thread) */
	starpu_prof_tool_event_driver_init_start,  /**< the driver starts initialising the worker */
	starpu_prof_tool_event_driver_init_end,    /**< the worker is ready to run tasks */
	starpu_prof_tool_event_start_cpu_exec,     /**< a CPU implementation is about to run (fun_ptr) */
	starpu_prof_tool_event_end_cpu_exec,       /**< it returned */
	starpu_prof_tool_event_start_gpu_exec,     /**< a GPU (CUDA, HIP, OpenCL) implementation is about to run */
	starpu_prof_tool_event_end_gpu_exec,       /**< it returned */
	starpu_prof_tool_event_start_transfer,     /**< a data transfer between memory nodes starts */
	starpu_prof_tool_event_end_transfer,       /**< it ended */

	starpu_prof_tool_event_user_start,         /**< the application marks a start (starpu_prof_tool_user_start()) */
	starpu_prof_tool_event_user_end,           /**< and its end (starpu_prof_tool_user_end()) */

	/** Astrolabe: the name the StarPU profiling-interface document's example registers; the same event as starpu_prof_tool_event_start_cpu_exec. */
	starpu_prof_tool_event_driver_start_cpu_exec = starpu_prof_tool_event_start_cpu_exec,
	/** Astrolabe: the same event as starpu_prof_tool_event_end_cpu_exec, under the document's name. */
	starpu_prof_tool_event_driver_end_cpu_exec = starpu_prof_tool_event_end_cpu_exec,
	/** Astrolabe: the same event as starpu_prof_tool_event_start_gpu_exec, named like the two above. */
	starpu_prof_tool_event_driver_start_gpu_exec = starpu_prof_tool_event_start_gpu_exec,
	/** Astrolabe: the same event as starpu_prof_tool_event_end_gpu_exec, named like the two above. */
	starpu_prof_tool_event_driver_end_gpu_exec = starpu_prof_tool_event_end_gpu_exec
};

/** The kind of worker an event concerns. */
enum starpu_prof_tool_driver_type
{
	starpu_prof_tool_driver_cpu,
	starpu_prof_tool_driver_gpu,
	starpu_prof_tool_driver_hip,
	starpu_prof_tool_driver_ocl
};

/**
   What a call to the register function does (its third argument).
   Astrolabe: reg adds a callback; toggle enables/disables an already
   registered callback for every thread; toggle_per_thread does so for the
   calling thread only. Any command on a callback not registered yet
   registers it, as StarPU does.
*/
enum starpu_prof_tool_command
{
	starpu_prof_tool_command_reg = 0,
	starpu_prof_tool_command_toggle = 1,
	starpu_prof_tool_command_toggle_per_thread = 2
};

/**
   General information passed to every callback. Fields that do not apply to
   the event are zero.
*/
struct starpu_prof_tool_info
{
	/** The runtime's configuration. */
	struct starpu_conf *conf;
	/** The event being reported. */
	enum starpu_prof_tool_event event_type;
	/** The runtime's version: major, minor, release. */
	unsigned int starpu_version[3];
	/** The calling thread (its Linux thread id). */
	int thread_id;
	/** The worker concerned; -1 for the application's threads. */
	int worker_id;

	/** Execution events: the task's name (or its codelet's) and its performance model's symbol. */
	const char *task_name;
	const char *model_name;

	/** Worker events: the device number of the worker, and its kind. */
	int device_number;
	enum starpu_prof_tool_driver_type driver_type;

	/** Transfers: the destination memory node, the size, and what has been moved (0 at the start). */
	unsigned memnode;
	unsigned bytes_to_transfer;
	/* StarPU spells the field bytes_transfered; both names read the same value. */
	__extension__ union
	{
		unsigned bytes_transfered;
		unsigned bytes_transferred;
	};

	/** Execution events: the implementation about to run / that ran. NULL otherwise. */
	void *fun_ptr;
};

/** Astrolabe: version of the extensions below; a tool may refuse another one in its handshake. 2 added sched_ctx. */
#define ASTRO_PROF_TOOL_INTERFACE_VERSION 2

/**
   Astrolabe: what events carry beyond struct starpu_prof_tool_info, read
   through event_info->astro, for the tools that take part in Astrolabe's
   extensions: tool plugins, and tools whose astro_prof_tool_handshake()
   accepted. While no such tool is loaded, only event_type is set (the rest is
   zero) and the runtime does not read the clock for the tools: a plain
   StarPU tool reads its own. It starts with the event type, like every
   member of the union, so StarPU's event_info->event_type stays valid.
*/
struct astro_prof_tool_event_ext
{
	/** Same as event_type in the union. */
	enum starpu_prof_tool_event event_type;
	/** ASTRO_PROF_TOOL_INTERFACE_VERSION of the runtime that filled this. */
	unsigned interface_version;
	/** starpu_timing_now() at the event, in microseconds. */
	double time_us;

	/** Execution events: the task, its job id, codelet name and implementation index. */
	struct starpu_task *task;
	unsigned long job_id;
	const char *codelet_name;
	unsigned nimpl;
	/** Execution events: the task's buffers (STARPU_TASK_GET_MODE() gives their modes) and their total size in bytes. */
	unsigned nbuffers;
	starpu_data_handle_t *handles;
	size_t data_size;

	/** Transfers: the nodes and the exact size (bytes_to_transfer is only an unsigned). */
	unsigned src_node;
	unsigned dst_node;
	size_t bytes;

	/** User marks: the label given to starpu_prof_tool_user_start() / _end() (may be NULL). */
	const char *user_label;

	/**
	   Execution events: the scheduling context the task was submitted to
	   (0: the global one); STARPU_NMAX_SCHED_CTXS for the other events.
	   Since interface version 2, in room that was reserved before.
	*/
	unsigned sched_ctx;

	/** Room for growth: zero. */
	void *reserved[7];
};

/**
   Event information. StarPU defines only event_type; Astrolabe adds the
   astro member, which begins with the same field.
*/
union starpu_prof_tool_event_info
{
	enum starpu_prof_tool_event event_type;
	/** Astrolabe: the richer payload. */
	struct astro_prof_tool_event_ext astro;
};

/** API information: empty, as in StarPU 1.4. */
struct starpu_prof_tool_api_info
{
};

/**
   Astrolabe: the three argument types under bare names, so that callbacks
   written as in the StarPU profiling-interface document (its sections 4.1
   and 4.2.1 declare them with these names, without struct or union) compile
   in C as well as in C++.
*/
typedef struct starpu_prof_tool_info starpu_prof_tool_info;
/** The event information under its bare name. */
typedef union starpu_prof_tool_event_info starpu_prof_tool_event_info;
/** The API information under its bare name. */
typedef struct starpu_prof_tool_api_info starpu_prof_tool_api_info;
/** The event information under the name the document's callback example gives it. */
typedef union starpu_prof_tool_event_info starpu_event_tool_info;
/** The API information under the name the document's callback example gives it. */
typedef struct starpu_prof_tool_api_info starpu_api_tool_info;

/** A callback. The pointers are valid during the call only. */
typedef void (*starpu_prof_tool_cb_func)(struct starpu_prof_tool_info *, union starpu_prof_tool_event_info *, struct starpu_prof_tool_api_info *);

/** The register and unregister functions handed to a tool. */
typedef void (*starpu_prof_tool_entry_register_func)(enum starpu_prof_tool_event event_type, starpu_prof_tool_cb_func cb, enum starpu_prof_tool_command info);

/** The same type, under the name the StarPU profiling-interface document uses for unregister. */
typedef starpu_prof_tool_entry_register_func starpu_prof_tool_entry_unregister_func;

/** The type of starpu_prof_tool_library_register(). */
typedef void (*starpu_prof_tool_entry_func)(starpu_prof_tool_entry_register_func reg, starpu_prof_tool_entry_register_func unreg);

/**
   In order to use the StarPU profiling interface, a tool must implement the
   starpu_prof_tool_library_register function, through which StarPU initializes the tool.
   It is called once per starpu_init(); it registers callbacks with reg, and
   may keep reg and unreg to change its callbacks later, from any thread.
*/
extern void starpu_prof_tool_library_register(starpu_prof_tool_entry_register_func reg, starpu_prof_tool_entry_register_func unreg);

/* ------------------------------------------------------------ Astrolabe */

/** What astro_prof_tool_handshake() returns to take part. */
#define ASTRO_PROF_TOOL_ACCEPT 0
/** What it returns to stay out: the runtime reports it and goes on without the tool. */
#define ASTRO_PROF_TOOL_DECLINE 1

/**
   Astrolabe: a tool may export this function in addition to
   starpu_prof_tool_library_register(). It is called first, with
   ASTRO_PROF_TOOL_INTERFACE_VERSION; returning ASTRO_PROF_TOOL_DECLINE keeps
   the tool out (its register function is then never called).
*/
int astro_prof_tool_handshake(unsigned interface_version);
typedef int (*astro_prof_tool_handshake_func)(unsigned interface_version);

/**
   Astrolabe: a tool may export this function to flush its output. It is
   called once per starpu_shutdown(), after the terminate event, when no
   callback can run any more.
*/
void astro_prof_tool_finalize(void);
typedef void (*astro_prof_tool_finalize_func)(void);

/**
   Astrolabe: marks the start of a region of the application. Fires
   starpu_prof_tool_event_user_start in the calling thread, with label in
   event_info->astro.user_label. StarPU 1.4 never fires this event; any
   thread may call it, before or after starpu_init() (nothing is fired then).
*/
void starpu_prof_tool_user_start(const char *label);

/** Astrolabe: marks the end of the region; fires starpu_prof_tool_event_user_end. */
void starpu_prof_tool_user_end(const char *label);

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_PROFILING_TOOL_H__ */
