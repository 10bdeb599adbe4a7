/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Astrolabe plugin ABI: what a scheduler, driver, tool or counter module
 * exports so the kernel can load it, and the services it may call from init.
 *
 * A plugin is a libtool module named KIND_NAME (sched_eager.la, driver_cpu.la)
 * that exports one constant descriptor named astrolabe_plugin_KIND_NAME:
 *
 *     static int init(void) { return astro_sched_policy_register(&my_policy); }
 *     ASTRO_PLUGIN_DEFINE(sched_mine, ASTRO_PLUGIN_SCHED, "my policy", init, NULL);
 *
 * Install it in `pkg-config --variable=plugindir astrolabe-plugin`, or put its
 * folder in STARPU_PLUGIN_PATH.
 */
#ifndef __ASTROLABE_PLUGIN_H__
#define __ASTROLABE_PLUGIN_H__

#include <starpu.h>

#ifdef __cplusplus
extern "C" {
#endif

/** ABI version of struct astro_plugin and of the services below, the policy toolkit's structs
 * (astrolabe/sched.h) included. Bumped on any incompatible change (2: the per-worker queues'
 * lock became an astro_lock_t; 3: they gained an inbox, the central queue's lock became an
 * astro_lock_t too, and the hunger counts have lines of their own). */
#define ASTRO_PLUGIN_ABI_VERSION 3

/** What init returns when the plugin has nothing to offer on this machine (no device...): not an error. */
#define ASTRO_PLUGIN_DECLINE 1

/** What a plugin provides (informative: a plugin may register anything from init). */
enum astro_plugin_kind
{
	ASTRO_PLUGIN_DRIVER = 1,
	ASTRO_PLUGIN_SCHED = 2,
	ASTRO_PLUGIN_TOOL = 3,
	ASTRO_PLUGIN_COUNTERS = 4,
	ASTRO_PLUGIN_OTHER = 5,
	/** Output formats of the trace converter (astrolabe/trace_format.h): a module format_NAME, loaded by the converter, not by starpu_init(). */
	ASTRO_PLUGIN_TRACE_FORMAT = 6
};

/**
 * The descriptor every plugin exports. Fields are only ever added at the
 * tail, in the reserved room.
 */
struct astro_plugin
{
	/** ASTRO_PLUGIN_ABI_VERSION the plugin was built with; checked first: any other version, older or newer, is refused. */
	unsigned abi_version;
	/** Module name (KIND_NAME); must match the file name. */
	const char *name;
	enum astro_plugin_kind kind;
	/** One line shown by STARPU_PLUGIN_VERBOSE=1 and the listing tools. */
	const char *description;
	/** Registers what the plugin provides. Returns 0, ASTRO_PLUGIN_DECLINE, or a negative errno. */
	int (*init)(void);
	/** Undoes init at starpu_shutdown(); may be NULL. */
	void (*fini)(void);
	/** Room for growth: zero. */
	void *reserved[8];
};

#define ASTRO_PLUGIN_SYMBOL_PREFIX "astrolabe_plugin_"

/** Defines the descriptor of module ident (e.g. sched_eager). */
#define ASTRO_PLUGIN_DEFINE(ident, kind, description, init, fini) \
	const struct astro_plugin astrolabe_plugin_##ident __attribute__((visibility("default"))) = \
	{ ASTRO_PLUGIN_ABI_VERSION, #ident, kind, description, init, fini, { 0 } }

/* ------------------------------------------------------------ scheduling */

/**
 * Makes policy selectable by STARPU_SCHED=policy->policy_name. The policy
 * struct must outlive the plugin's fini. Returns 0, -EEXIST when a policy of
 * that name exists, -EINVAL for a policy without name, push_task or pop_task.
 */
int astro_sched_policy_register(struct starpu_sched_policy *policy);

/**
 * Wakes workerid for a task the policy just queued where only that worker
 * will take it (its own queue). Besides what starpu_wake_worker_relax_light()
 * does, a worker spinning between two polls looks again at once instead of
 * finishing its pause. Waking a worker that may take a task others can take
 * too (a thief, a shared queue) stays starpu_wake_worker_relax_light(): the
 * worker that queued it then keeps its chance to take it first. Returns 1
 * if the worker was asleep, 0 otherwise (or for an unknown worker).
 */
int astro_worker_wake_for_queued(int workerid);

/**
 * What the kernel reads and writes of a task to submit, schedule, run and
 * end it lies in the first ASTRO_TASK_HOT_BYTES of struct starpu_task and
 * the first ASTRO_JOB_HOT_BYTES of its job (task->starpu_private): the lines
 * a worker asks for ahead of the task it takes next (astrolabe/sched.h,
 * astro_sched_task_prefetch()).
 */
#define ASTRO_TASK_HOT_BYTES 176
#define ASTRO_JOB_HOT_BYTES 224

/** One per worker, on a line of its own: see astro_worker_last_look(). */
struct astro_worker_look
{
	int last;
} __attribute__((aligned(64)));
extern struct astro_worker_look astro_worker_looks[STARPU_NMAXWORKERS];

/**
 * 1 when workerid's next look for work is its last before it sleeps (the
 * kernel's worker loop says so; 0 for an id that is not a worker's). A
 * worker that spins between looks finds work by looking again; only its last
 * look announces its hunger (astro_sched_pop_task()), so that a worker
 * keeping pace with the submitting thread costs it no wake-up per task.
 */
static inline int astro_worker_last_look(int workerid)
{
	return workerid >= 0 && workerid < STARPU_NMAXWORKERS && __atomic_load_n(&astro_worker_looks[workerid].last, __ATOMIC_RELAXED);
}

/* --------------------------------------------------------------- drivers */

/**
 * A kind of worker. The kernel creates one thread per worker, binds it,
 * and runs the scheduling loop; the driver runs the codelet.
 */
struct astro_driver
{
	/** Name ("cpu"). */
	const char *name;
	enum starpu_worker_archtype archtype;
	/** The codelet "where" bit it serves (STARPU_CPU). */
	uint32_t where;
	/** Variable giving the worker count (STARPU_NCPU), and the struct starpu_conf field that does. */
	const char *count_env;
	const char *count_env_alias;
	size_t conf_count_offset;
	/** Workers started when nothing is asked: the devices found (0 when none). */
	int (*default_count)(void);
	/** Largest count it can run (asked counts are clamped to it, with a warning). */
	int (*max_count)(void);
	/** Called in the worker thread before its first task; returns 0 or a negative errno. */
	int (*worker_init)(int workerid, int devid);
	/** Called in the worker thread after its last task. */
	void (*worker_deinit)(int workerid, int devid);
	/** Returns 1 when the driver has implementation nimpl of cl. */
	int (*has_impl)(const struct starpu_codelet *cl, unsigned nimpl);
	/** Runs implementation nimpl of task; buffers are the interfaces on the worker's node. */
	void (*execute)(int workerid, struct starpu_task *task, void **buffers, unsigned nimpl);
	/* --- From here on, fields taken from the reserved room (same ABI version). --- */
	/** Memory-node operations of the devices this driver runs on; NULL: its workers work in main memory. */
	const struct astro_node_ops *node_ops;
	/**
	 * Variable giving how many tasks a worker holds at once, asking for their
	 * data as it takes them so that their transfers overlap the execution of
	 * the task before them (STARPU_CUDA_PIPELINE; default 2, 0 or 1: one task
	 * at a time). Only for node ops with copy_test and copy_wait; NULL: one at a time.
	 */
	const char *pipeline_env;
	/**
	 * Variable giving how many workers share each device (STARPU_NWORKER_PER_CUDA;
	 * default 1): the device's workers share its memory node, and each runs
	 * its tasks apart (worker_init gives each its own stream). NULL: one.
	 */
	const char *workers_per_device_env;
	/**
	 * Starts implementation nimpl of task without waiting for its work when
	 * the codelet says it may (STARPU_CUDA_ASYNC, STARPU_OPENCL_ASYNC), so
	 * that a pipelined worker (pipeline_env) starts its next task meanwhile:
	 * returns a request that execute_done completes, or NULL when the task's
	 * work is already done (it ran as execute would). NULL: execute always.
	 */
	void *(*execute_async)(int workerid, struct starpu_task *task, void **buffers, unsigned nimpl);
	/**
	 * 1 when the work execute_async started for task is done (the request is
	 * then released; a failure of that work is said), 0 while it runs. With
	 * wait, returns only when it is done. A worker's requests complete in the
	 * order it started them.
	 */
	int (*execute_done)(int workerid, struct starpu_task *task, void *request, int wait);
	/** Room for growth: zero. */
	void *reserved[3];
};

/**
 * What the kernel needs to keep data on a device's memory: each worker of a
 * driver with node ops gets a memory node of its own (one per device), and
 * the kernel allocates, frees and copies there only through these. Data
 * interfaces reach them through starpu_malloc_on_node() and
 * starpu_interface_copy(); coherency (MSI), eviction and the transfers'
 * observation are the kernel's. Copies between two devices go through
 * main memory.
 */
struct astro_node_ops
{
	/** Kind of the node (STARPU_OPENCL_RAM, STARPU_CUDA_RAM...). */
	enum starpu_node_kind kind;
	/** Allocates size bytes on device devid: an address meaningful to the driver (a cl_mem, a device pointer), 0 when full. */
	uintptr_t (*allocate)(int devid, size_t size);
	/** Frees what allocate returned. */
	void (*free)(int devid, uintptr_t addr, size_t size);
	/**
	 * Copies size bytes from main memory at src to the device at dst + dst_offset.
	 * With request NULL the copy is complete on return; otherwise the driver may
	 * start it and set *request (NULL when already complete), for copy_wait.
	 * Returns 0 or a negative errno.
	 */
	int (*copy_from_ram)(int devid, const void *src, uintptr_t dst, size_t dst_offset, size_t size, void **request);
	/** The same from the device at src + src_offset to main memory at dst. */
	int (*copy_to_ram)(int devid, uintptr_t src, size_t src_offset, void *dst, size_t size, void **request);
	/** Completion of an asynchronous copy: returns 1 when request is complete, 0 when it is still under way. */
	int (*copy_test)(int devid, void *request);
	/** Waits for request to complete and releases it; 0 or a negative errno. */
	int (*copy_wait)(int devid, void *request);
	/** Bytes of memory of device devid (0: unknown). */
	size_t (*memory_size)(int devid);
	/**
	 * Page-locks size bytes of main memory at addr for the driver's devices
	 * (StarPU's pinned memory: starpu_malloc(), starpu_memory_pin()), so that
	 * their copies run at full speed and truly asynchronously; 0, or a
	 * negative errno (the memory then stays usable, unpinned). NULL: the
	 * driver gains nothing from it (the kernel mlock()s instead).
	 */
	int (*host_register)(void *addr, size_t size);
	/** Undoes host_register; a no-op for an address it did not register. Registrations left at fini are the driver's to undo. */
	void (*host_unregister)(void *addr);
	/* --- From here on, fields taken from the reserved room (same ABI version). --- */
	/**
	 * Copies numblocks blocks of blocksize bytes, ld_src bytes apart in main
	 * memory from src, to the device at dst + dst_offset, ld_dst bytes apart,
	 * as one command (a tile of a larger matrix: clEnqueueWriteBufferRect,
	 * cudaMemcpy2DAsync); request as in copy_from_ram. NULL: the kernel
	 * copies block by block with copy_from_ram. Set both or neither.
	 */
	int (*copy2d_from_ram)(int devid, const void *src, size_t ld_src, uintptr_t dst, size_t dst_offset, size_t ld_dst,
			       size_t blocksize, size_t numblocks, void **request);
	/** The same from the device at src + src_offset (ld_src apart) to main memory at dst (ld_dst apart). */
	int (*copy2d_to_ram)(int devid, uintptr_t src, size_t src_offset, size_t ld_src, void *dst, size_t ld_dst,
			     size_t blocksize, size_t numblocks, void **request);
	/** Room for growth: zero. */
	void *reserved[4];
};

/** Registers a driver; its workers start at this starpu_init(). Returns 0 or -EEXIST. */
int astro_driver_register(const struct astro_driver *driver);

/* --------------------------------------------------------------- helpers */

/**
 * Sets the function that says what the application may wait for besides the
 * runtime's tasks (StarPU-MPI: its communications not complete); NULL
 * removes it. The idle-wait report and the watchdog's call it when they
 * speak: it writes lines, each ended by a newline, into buf (len bytes,
 * NUL-terminated, cut at len). One such function at a time.
 */
void astro_wait_describer_set(void (*describe)(char *buf, size_t len));

/** Prints one runtime message on stderr: "[astrolabe] <what>: <message>". */
void astro_log_error(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/** The same, only when STARPU_PLUGIN_VERBOSE / STARPU_SILENT allow. */
void astro_log_info(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/**
 * Opens path for reading without ever blocking (a FIFO or a device in its
 * place would) and checks that it is a regular file of at most max_size bytes
 * (0: any size). Returns the descriptor (close-on-exec, reads block again), or
 * -errno: the open's (-ENOENT...), -EINVAL when path is not a regular file,
 * -EFBIG when it is larger; why (whylen bytes, may be NULL) then gets one
 * readable reason ("a FIFO, not a regular file").
 */
int astro_file_open_regular(const char *path, size_t max_size, char *why, size_t whylen);
/**
 * The whole of a regular file of at most max_size bytes, checked as
 * astro_file_open_regular() does, NUL-terminated (free() it), its length in
 * *len; NULL with errno set and why filled when it is refused or unreadable.
 */
char *astro_file_read_regular(const char *path, size_t max_size, size_t *len, char *why, size_t whylen);

#ifdef __cplusplus
}
#endif

#endif /* __ASTROLABE_PLUGIN_H__ */
