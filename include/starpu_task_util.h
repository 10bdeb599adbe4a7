/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * starpu_task_insert() and the argument packing helpers of the StarPU API. */
#ifndef __STARPU_TASK_UTIL_H__
#define __STARPU_TASK_UTIL_H__

#include <stdint.h>
#include <stdarg.h>
#include <starpu_config.h>
#include <starpu_data.h>
#include <starpu_task.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Argument kinds of starpu_task_insert(). Access modes (STARPU_R, STARPU_RW|STARPU_COMMUTE...)
 * are followed by a handle; the kinds below sit above every access-mode bit. */
#define STARPU_MODE_SHIFT 17
#define STARPU_VALUE (1 << STARPU_MODE_SHIFT)                      /**< pointer, size: copied into cl_arg */
#define STARPU_CALLBACK (2 << STARPU_MODE_SHIFT)                   /**< void (*)(void *) */
#define STARPU_CALLBACK_WITH_ARG (3 << STARPU_MODE_SHIFT)          /**< function, argument (freed with the task) */
#define STARPU_CALLBACK_ARG (4 << STARPU_MODE_SHIFT)               /**< argument of the callback (freed with the task) */
#define STARPU_PRIORITY (5 << STARPU_MODE_SHIFT)                   /**< int */
#define STARPU_EXECUTE_ON_NODE (6 << STARPU_MODE_SHIFT)            /**< int (MPI node; ignored here) */
#define STARPU_EXECUTE_ON_DATA (7 << STARPU_MODE_SHIFT)            /**< handle (MPI; ignored here) */
#define STARPU_DATA_ARRAY (8 << STARPU_MODE_SHIFT)                 /**< handle array, count: mode from the codelet */
#define STARPU_DATA_MODE_ARRAY (9 << STARPU_MODE_SHIFT)            /**< struct starpu_data_descr array, count */
#define STARPU_TAG (10 << STARPU_MODE_SHIFT)                       /**< starpu_tag_t */
#define STARPU_HYPERVISOR_TAG (11 << STARPU_MODE_SHIFT)            /**< int */
#define STARPU_FLOPS (12 << STARPU_MODE_SHIFT)                     /**< double */
#define STARPU_SCHED_CTX (13 << STARPU_MODE_SHIFT)                 /**< unsigned */
#define STARPU_PROLOGUE_CALLBACK (14 << STARPU_MODE_SHIFT)         /**< void (*)(void *) */
#define STARPU_PROLOGUE_CALLBACK_ARG (15 << STARPU_MODE_SHIFT)     /**< void * (freed with the task) */
#define STARPU_PROLOGUE_CALLBACK_POP (16 << STARPU_MODE_SHIFT)     /**< void (*)(void *) */
#define STARPU_PROLOGUE_CALLBACK_POP_ARG (17 << STARPU_MODE_SHIFT) /**< void * (freed with the task) */
#define STARPU_EXECUTE_ON_WORKER (18 << STARPU_MODE_SHIFT)         /**< int worker id (-1: any) */
#define STARPU_EXECUTE_WHERE (19 << STARPU_MODE_SHIFT)             /**< unsigned long long STARPU_CPU|... */
#define STARPU_TAG_ONLY (20 << STARPU_MODE_SHIFT)                  /**< starpu_tag_t, without dependencies on it */
#define STARPU_POSSIBLY_PARALLEL (21 << STARPU_MODE_SHIFT)         /**< unsigned */
#define STARPU_WORKER_ORDER (22 << STARPU_MODE_SHIFT)              /**< unsigned */
#define STARPU_NODE_SELECTION_POLICY (23 << STARPU_MODE_SHIFT)     /**< int (MPI; ignored here) */
#define STARPU_NAME (24 << STARPU_MODE_SHIFT)                      /**< const char * */
#define STARPU_CL_ARGS (25 << STARPU_MODE_SHIFT)                   /**< void *, size_t: becomes cl_arg (freed with the task) */
#define STARPU_CL_ARGS_NFREE (26 << STARPU_MODE_SHIFT)             /**< void *, size_t: becomes cl_arg (not freed) */
#define STARPU_TASK_DEPS_ARRAY (27 << STARPU_MODE_SHIFT)           /**< unsigned, struct starpu_task ** */
#define STARPU_TASK_COLOR (28 << STARPU_MODE_SHIFT)                /**< int */
#define STARPU_HANDLES_SEQUENTIAL_CONSISTENCY (29 << STARPU_MODE_SHIFT) /**< unsigned char * */
#define STARPU_TASK_SYNCHRONOUS (30 << STARPU_MODE_SHIFT)          /**< int */
#define STARPU_TASK_END_DEPS_ARRAY (31 << STARPU_MODE_SHIFT)       /**< unsigned, struct starpu_task ** */
#define STARPU_TASK_END_DEP (32 << STARPU_MODE_SHIFT)              /**< int */
#define STARPU_TASK_WORKERIDS (33 << STARPU_MODE_SHIFT)            /**< unsigned, uint32_t * */
#define STARPU_SEQUENTIAL_CONSISTENCY (34 << STARPU_MODE_SHIFT)    /**< unsigned */
#define STARPU_TASK_PROFILING_INFO (35 << STARPU_MODE_SHIFT)       /**< struct starpu_profiling_task_info * */
#define STARPU_TASK_NO_SUBMITORDER (36 << STARPU_MODE_SHIFT)       /**< unsigned */
#define STARPU_CALLBACK_ARG_NFREE (37 << STARPU_MODE_SHIFT)        /**< void * (not freed) */
#define STARPU_CALLBACK_WITH_ARG_NFREE (38 << STARPU_MODE_SHIFT)   /**< function, argument (not freed) */
#define STARPU_PROLOGUE_CALLBACK_ARG_NFREE (39 << STARPU_MODE_SHIFT)     /**< void * (not freed) */
#define STARPU_PROLOGUE_CALLBACK_POP_ARG_NFREE (40 << STARPU_MODE_SHIFT) /**< void * (not freed) */
#define STARPU_TASK_SCHED_DATA (41 << STARPU_MODE_SHIFT)           /**< void * */
#define STARPU_TRANSACTION (42 << STARPU_MODE_SHIFT)               /**< struct starpu_transaction * */
#define STARPU_TASK_FILE (43 << STARPU_MODE_SHIFT)                 /**< const char * */
#define STARPU_TASK_LINE (44 << STARPU_MODE_SHIFT)                 /**< int */
#define STARPU_EPILOGUE_CALLBACK (45 << STARPU_MODE_SHIFT)         /**< void (*)(void *) */
#define STARPU_EPILOGUE_CALLBACK_ARG (46 << STARPU_MODE_SHIFT)     /**< void * */
/* Hierarchical DAGs (StarPU's --enable-bubble builds only): starpu_task_insert() refuses them
 * here with -EINVAL and a message, where StarPU without that option aborts. */
#define STARPU_BUBBLE_FUNC (47 << STARPU_MODE_SHIFT)             /**< starpu_bubble_func_t (refused here) */
#define STARPU_BUBBLE_FUNC_ARG (48 << STARPU_MODE_SHIFT)         /**< void * (refused here) */
#define STARPU_BUBBLE_GEN_DAG_FUNC (49 << STARPU_MODE_SHIFT)     /**< starpu_bubble_gen_dag_func_t (refused here) */
#define STARPU_BUBBLE_GEN_DAG_FUNC_ARG (50 << STARPU_MODE_SHIFT) /**< void * (refused here) */
#define STARPU_BUBBLE_PARENT (51 << STARPU_MODE_SHIFT)           /**< struct starpu_task * (refused here) */
#define STARPU_SHIFTED_MODE_MAX (52 << STARPU_MODE_SHIFT)

/** A handle with its access mode, for STARPU_DATA_MODE_ARRAY. */
struct starpu_data_descr
{
	starpu_data_handle_t handle;
	enum starpu_data_access_mode mode;
};

/**
 * Creates and submits a task of cl described by the arguments (kinds above,
 * or an access mode followed by a handle), terminated by 0. Returns 0,
 * -ENODEV when no worker can run it, -EINVAL for a bad argument list.
 */
int starpu_task_insert(struct starpu_codelet *cl, ...);
/** Same as starpu_task_insert() (older name). */
#define starpu_insert_task starpu_task_insert
/** As starpu_task_insert() with a va_list. */
int starpu_task_insert_v(struct starpu_codelet *cl, va_list varg_list);
/** Creates the task starpu_task_insert() would submit, without submitting it; NULL on error. */
struct starpu_task *starpu_task_build(struct starpu_codelet *cl, ...);
/** Fills an existing task from the argument list; returns 0 or -EINVAL. */
int starpu_task_set(struct starpu_task *task, struct starpu_codelet *cl, ...);

/**
 * Makes room in task for room handles after the first current_buffer ones:
 * past STARPU_NMAXBUFS they go to task->dyn_handles (and task->dyn_modes for a
 * codelet of STARPU_VARIABLE_NBUFFERS), allocated or grown as needed, which
 * *allocated_buffers counts (start it at 0). The task frees them. A bad
 * argument or no memory is said, and nothing changes.
 */
void starpu_task_insert_data_make_room(struct starpu_codelet *cl, struct starpu_task *task, int *allocated_buffers, int current_buffer, int room);
/** Stores handle with access mode arg_type at buffer *current_buffer of task (making room), then counts it. */
void starpu_task_insert_data_process_arg(struct starpu_codelet *cl, struct starpu_task *task, int *allocated_buffers, int *current_buffer,
					 int arg_type, starpu_data_handle_t handle);
/** Stores nb_handles handles with the codelet's access modes (as STARPU_DATA_ARRAY). */
void starpu_task_insert_data_process_array_arg(struct starpu_codelet *cl, struct starpu_task *task, int *allocated_buffers,
					       int *current_buffer, int nb_handles, starpu_data_handle_t *handles);
/** Stores nb_descrs handles with their own access modes (as STARPU_DATA_MODE_ARRAY). */
void starpu_task_insert_data_process_mode_array_arg(struct starpu_codelet *cl, struct starpu_task *task, int *allocated_buffers,
						    int *current_buffer, int nb_descrs, struct starpu_data_descr *descrs);

/** Packs (STARPU_VALUE, pointer, size)... 0 into a newly allocated buffer. */
void starpu_codelet_pack_args(void **arg_buffer, size_t *arg_buffer_size, ...);

/** Incremental packing state. */
struct starpu_codelet_pack_arg_data
{
	char *arg_buffer;
	size_t arg_buffer_size;
	size_t arg_buffer_used;
	size_t current_offset;
	int nargs;
};
/** Starts packing into state. */
void starpu_codelet_pack_arg_init(struct starpu_codelet_pack_arg_data *state);
/** Appends size bytes at ptr. */
void starpu_codelet_pack_arg(struct starpu_codelet_pack_arg_data *state, const void *ptr, size_t ptr_size);
/** Finishes: *cl_arg (to free) and *cl_arg_size. */
void starpu_codelet_pack_arg_fini(struct starpu_codelet_pack_arg_data *state, void **cl_arg, size_t *cl_arg_size);

/** Unpacks a packed buffer into the given pointers, terminated by 0. */
void starpu_codelet_unpack_args(void *cl_arg, ...);
/** As starpu_codelet_unpack_args(), copying the values left over into buffer. */
void starpu_codelet_unpack_args_and_copyleft(void *cl_arg, void *buffer, size_t buffer_size, ...);
/** Starts unpacking cl_arg. */
void starpu_codelet_unpack_arg_init(struct starpu_codelet_pack_arg_data *state, void *cl_arg, size_t cl_arg_size);
/** Copies the next value (size bytes) into ptr. */
void starpu_codelet_unpack_arg(struct starpu_codelet_pack_arg_data *state, void *ptr, size_t size);
/** Returns a malloc'd copy of the next value and its size. */
void starpu_codelet_dup_arg(struct starpu_codelet_pack_arg_data *state, void **ptr, size_t *size);
/** Returns a pointer to the next value inside the buffer and its size. */
void starpu_codelet_pick_arg(struct starpu_codelet_pack_arg_data *state, void **ptr, size_t *size);
/** Skips the next value. */
void starpu_codelet_unpack_discard_arg(struct starpu_codelet_pack_arg_data *state);
/** Finishes unpacking. */
void starpu_codelet_unpack_arg_fini(struct starpu_codelet_pack_arg_data *state);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_TASK_UTIL_H__ */
