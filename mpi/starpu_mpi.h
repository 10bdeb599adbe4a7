/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * StarPU-MPI: the StarPU 1.4 MPI API over Open MPI. Each MPI process runs
 * the runtime; data handles get an owner rank and a tag, tasks inserted with
 * starpu_mpi_task_insert() run where the data they write lives, and the data
 * they read from other ranks travels with MPI, driven by one progression
 * thread per process. Link with `pkg-config --libs starpumpi-1.4`.
 */
#ifndef __STARPU_MPI_H__
#define __STARPU_MPI_H__

#include <starpu.h>

#if defined(STARPU_USE_MPI)

#include <mpi.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ initialisation */

/**
 * Starts the runtime with conf (NULL: defaults), then StarPU-MPI on comm.
 * With initialize_mpi, MPI is initialised here (MPI_Init_thread, asking for
 * MPI_THREAD_MULTIPLE; comm must then be MPI_COMM_WORLD) and finalised by
 * starpu_mpi_shutdown(). Returns 0, or a negative errno (said on stderr).
 */
int starpu_mpi_init_conf(int *argc, char ***argv, int initialize_mpi, MPI_Comm comm, struct starpu_conf *conf);
/** Starts StarPU-MPI on comm; the runtime must already run (starpu_init()). */
int starpu_mpi_init_comm(int *argc, char ***argv, int initialize_mpi, MPI_Comm comm);
/** starpu_mpi_init_comm() on MPI_COMM_WORLD. */
int starpu_mpi_init(int *argc, char ***argv, int initialize_mpi);
/** Deprecated (StarPU-MPI 1.0): starpu_mpi_init(NULL, NULL, 0), MPI being started by the program. */
int starpu_mpi_initialize(void) STARPU_DEPRECATED;
/** Deprecated (StarPU-MPI 1.0): starpu_mpi_init(NULL, NULL, 1), then the calling process's rank and
 * the number of ranks of MPI_COMM_WORLD in *rank and *world_size (either may be NULL). */
int starpu_mpi_initialize_extended(int *rank, int *world_size) STARPU_DEPRECATED;
/**
 * Waits for the tasks and communications in flight (starpu_mpi_wait_for_all()),
 * stops the progression thread, finalises MPI if starpu_mpi_init*() initialised
 * it and stops the runtime if starpu_mpi_init_conf() started it.
 */
int starpu_mpi_shutdown(void);
/** starpu_mpi_shutdown(), the ranks meeting on comm (instead of MPI_COMM_WORLD) before StarPU-MPI stops.
 * Returns 0, or -EINVAL (said) when comm is not a communicator of this process: StarPU-MPI then keeps running. */
int starpu_mpi_shutdown_comm(MPI_Comm comm);
/** Makes comm known to StarPU-MPI (its rank and size noted; StarPU-MPI also does it at comm's first use). Returns 0, or -EINVAL (said) for a communicator MPI does not know. */
int starpu_mpi_comm_register(MPI_Comm comm);
/** The processing unit (hwloc logical index) the progression thread is bound to, asked with
 * STARPU_MPI_THREAD_CPUID before starpu_mpi_init*(); -1 when it is not bound on a unit of its own. */
int starpu_mpi_get_thread_cpuid(void);

/**
 * With STARPU_MPI_STATS=1 (StarPU 1.3's STARPU_COMM_STATS also works): the
 * bytes this rank sent to each rank of MPI_COMM_WORLD so far, in
 * comm_amounts[rank] (starpu_mpi_world_size() entries). Zeros otherwise.
 * starpu_mpi_shutdown() then prints them on stderr, one
 * "[starpu_comm_stats][me:dest]" line per destination after a TOTAL line.
 */
void starpu_mpi_comm_amounts_retrieve(size_t *comm_amounts);

/** The size of comm in *size. Returns 0, or -EINVAL when MPI is not initialised. */
int starpu_mpi_comm_size(MPI_Comm comm, int *size);
/** The rank of this process in comm in *rank. Returns 0, or -EINVAL when MPI is not initialised. */
int starpu_mpi_comm_rank(MPI_Comm comm, int *rank);
/** The rank of this process in MPI_COMM_WORLD. */
int starpu_mpi_world_rank(void);
/** The size of MPI_COMM_WORLD. */
int starpu_mpi_world_size(void);

/** For starpu_mpi_comm_get_attr(): the largest data tag (INT64_MAX: tags beyond MPI's MPI_TAG_UB travel behind a header on one reserved MPI tag). */
#define STARPU_MPI_TAG_UB MPI_TAG_UB
/** As MPI_Comm_get_attr(): *attribute_val (an int64_t *) receives the address of the value, *flag 1; 0 for a key without value. Only STARPU_MPI_TAG_UB has one. */
int starpu_mpi_comm_get_attr(MPI_Comm comm, int keyval, void *attribute_val, int *flag);

/* ------------------------------------------------------------- communication */

/** A communication in flight, for starpu_mpi_wait() / starpu_mpi_test(). */
typedef void *starpu_mpi_req;
/** The tag naming a piece of data in messages (0 .. INT64_MAX). */
typedef int64_t starpu_mpi_tag_t;

/**
 * Sends data_handle to dest in comm with data_tag, once the tasks submitted
 * before that write it are done; *req is then waited or tested. The data is
 * packed with its interface's pack method; the receiver's handle must have
 * the same layout. Returns 0 or a negative errno (said on stderr).
 */
int starpu_mpi_isend(starpu_data_handle_t data_handle, starpu_mpi_req *req, int dest, starpu_mpi_tag_t data_tag, MPI_Comm comm);
/** starpu_mpi_isend() with a priority (accepted; requests are served in order). */
int starpu_mpi_isend_prio(starpu_data_handle_t data_handle, starpu_mpi_req *req, int dest, starpu_mpi_tag_t data_tag, int prio, MPI_Comm comm);
/** Receives data_handle from source in comm with data_tag, ordered after the tasks submitted before that access it. */
int starpu_mpi_irecv(starpu_data_handle_t data_handle, starpu_mpi_req *req, int source, starpu_mpi_tag_t data_tag, MPI_Comm comm);
/** starpu_mpi_isend() then starpu_mpi_wait(). */
int starpu_mpi_send(starpu_data_handle_t data_handle, int dest, starpu_mpi_tag_t data_tag, MPI_Comm comm);
/** As starpu_mpi_send(); prio is accepted and not used. */
int starpu_mpi_send_prio(starpu_data_handle_t data_handle, int dest, starpu_mpi_tag_t data_tag, int prio, MPI_Comm comm);
/** starpu_mpi_irecv() then starpu_mpi_wait(); status may be MPI_STATUS_IGNORE. */
int starpu_mpi_recv(starpu_data_handle_t data_handle, int source, starpu_mpi_tag_t data_tag, MPI_Comm comm, MPI_Status *status);
/** As starpu_mpi_recv(); prio is accepted and not used (requests are served in order). */
int starpu_mpi_recv_prio(starpu_data_handle_t data_handle, int source, starpu_mpi_tag_t data_tag, int prio, MPI_Comm comm, MPI_Status *status);
/** starpu_mpi_isend() that frees itself when done, after callback(arg) (callback may be NULL). */
int starpu_mpi_isend_detached(starpu_data_handle_t data_handle, int dest, starpu_mpi_tag_t data_tag, MPI_Comm comm, void (*callback)(void *), void *arg);
/** As starpu_mpi_isend_detached(); prio is accepted and not used. */
int starpu_mpi_isend_detached_prio(starpu_data_handle_t data_handle, int dest, starpu_mpi_tag_t data_tag, int prio, MPI_Comm comm, void (*callback)(void *), void *arg);
/** starpu_mpi_irecv() that frees itself when done, after callback(arg) (callback may be NULL). */
int starpu_mpi_irecv_detached(starpu_data_handle_t data_handle, int source, starpu_mpi_tag_t data_tag, MPI_Comm comm, void (*callback)(void *), void *arg);
/** As starpu_mpi_irecv_detached(); prio is accepted and not used. */
int starpu_mpi_irecv_detached_prio(starpu_data_handle_t data_handle, int source, starpu_mpi_tag_t data_tag, int prio, MPI_Comm comm, void (*callback)(void *), void *arg);
/** starpu_mpi_irecv_detached(), ordered after earlier tasks only when sequential_consistency is set. */
int starpu_mpi_irecv_detached_sequential_consistency(starpu_data_handle_t data_handle, int source, starpu_mpi_tag_t data_tag, MPI_Comm comm, void (*callback)(void *), void *arg, int sequential_consistency);
/** Synchronous-mode sends (MPI_Issend): complete once the receiver matched them. */
int starpu_mpi_issend(starpu_data_handle_t data_handle, starpu_mpi_req *req, int dest, starpu_mpi_tag_t data_tag, MPI_Comm comm);
/** As starpu_mpi_issend(); prio is accepted and not used. */
int starpu_mpi_issend_prio(starpu_data_handle_t data_handle, starpu_mpi_req *req, int dest, starpu_mpi_tag_t data_tag, int prio, MPI_Comm comm);
/** As starpu_mpi_isend_detached(), with a synchronous send (MPI_Issend). */
int starpu_mpi_issend_detached(starpu_data_handle_t data_handle, int dest, starpu_mpi_tag_t data_tag, MPI_Comm comm, void (*callback)(void *), void *arg);
/** As starpu_mpi_issend_detached(); prio is accepted and not used. */
int starpu_mpi_issend_detached_prio(starpu_data_handle_t data_handle, int dest, starpu_mpi_tag_t data_tag, int prio, MPI_Comm comm, void (*callback)(void *), void *arg);
/** Detached send / receive that notify the runtime tag `tag` when done. */
int starpu_mpi_isend_detached_unlock_tag(starpu_data_handle_t data_handle, int dest, starpu_mpi_tag_t data_tag, MPI_Comm comm, starpu_tag_t tag);
/** As starpu_mpi_isend_detached_unlock_tag(); prio is accepted and not used. */
int starpu_mpi_isend_detached_unlock_tag_prio(starpu_data_handle_t data_handle, int dest, starpu_mpi_tag_t data_tag, int prio, MPI_Comm comm, starpu_tag_t tag);
/** Receives data_handle from source in the background and notifies tag once it has arrived. */
int starpu_mpi_irecv_detached_unlock_tag(starpu_data_handle_t data_handle, int source, starpu_mpi_tag_t data_tag, MPI_Comm comm, starpu_tag_t tag);
/** Detached sends of the n-th handle of data_handle to dest[n] with data_tag[n] in comm[n], for n below array_size;
 * tag is notified once every one has finished (nothing is posted and tag is left alone when array_size is 0).
 * Returns 0, or the error of the first send that could not be posted (tag is then never notified). */
int starpu_mpi_isend_array_detached_unlock_tag(unsigned array_size, starpu_data_handle_t *data_handle, int *dest, starpu_mpi_tag_t *data_tag,
						MPI_Comm *comm, starpu_tag_t tag);
/** As starpu_mpi_isend_array_detached_unlock_tag(); the priorities prio are accepted and not used. */
int starpu_mpi_isend_array_detached_unlock_tag_prio(unsigned array_size, starpu_data_handle_t *data_handle, int *dest,
						     starpu_mpi_tag_t *data_tag, int *prio, MPI_Comm *comm, starpu_tag_t tag);
/** Detached receives, as starpu_mpi_isend_array_detached_unlock_tag(), of the n-th handle from source[n]. */
int starpu_mpi_irecv_array_detached_unlock_tag(unsigned array_size, starpu_data_handle_t *data_handle, int *source, starpu_mpi_tag_t *data_tag,
						MPI_Comm *comm, starpu_tag_t tag);

/** Waits for *req, fills *status (unless MPI_STATUS_IGNORE) and frees the request (*req becomes NULL). Returns the request's result. */
int starpu_mpi_wait(starpu_mpi_req *req, MPI_Status *status);
/** Sets *flag to 1 when *req is done (then as starpu_mpi_wait()), to 0 otherwise. */
int starpu_mpi_test(starpu_mpi_req *req, int *flag, MPI_Status *status);
/** Returns once every process of comm called it. */
int starpu_mpi_barrier(MPI_Comm comm);
/** Waits for every task and every communication of this process, then for the other processes of comm. */
int starpu_mpi_wait_for_all(MPI_Comm comm);

/* ------------------------------------------------------------ user datatypes */

/** Makes the MPI datatype describing handle's buffer in *datatype; returns 0 (else the data is packed). */
typedef int (*starpu_mpi_datatype_allocate_func_t)(starpu_data_handle_t handle, MPI_Datatype *datatype);
/** As starpu_mpi_datatype_allocate_func_t, for the copy of handle on memory node node (main memory here: messages leave from and arrive there). */
typedef int (*starpu_mpi_datatype_node_allocate_func_t)(starpu_data_handle_t handle, unsigned node, MPI_Datatype *datatype);
/** Frees a datatype the allocate function made. */
typedef void (*starpu_mpi_datatype_free_func_t)(MPI_Datatype *datatype);
/**
 * Data of interface id then travel with the datatype allocate_datatype_func
 * makes, straight from and to their buffer in main memory (the interface's to_pointer),
 * instead of being packed by the interface's pack method. Register it on
 * every rank before the first communication of such data. Returns 0 or a
 * negative errno.
 */
int starpu_mpi_interface_datatype_register(enum starpu_data_interface_id id, starpu_mpi_datatype_allocate_func_t allocate_datatype_func,
					   starpu_mpi_datatype_free_func_t free_datatype_func);
/** Data of interface id are packed again. Returns 0, or -EINVAL when none was registered. */
int starpu_mpi_interface_datatype_unregister(enum starpu_data_interface_id id);
/** starpu_mpi_interface_datatype_register() for handle's interface. */
int starpu_mpi_datatype_register(starpu_data_handle_t handle, starpu_mpi_datatype_allocate_func_t allocate_datatype_func,
				 starpu_mpi_datatype_free_func_t free_datatype_func);
/** As starpu_mpi_interface_datatype_register(), with a function told the memory node of the buffer it describes; undone by starpu_mpi_interface_datatype_unregister(). */
int starpu_mpi_interface_datatype_node_register(enum starpu_data_interface_id id, starpu_mpi_datatype_node_allocate_func_t allocate_datatype_node_func,
						starpu_mpi_datatype_free_func_t free_datatype_func);
/** starpu_mpi_interface_datatype_node_register() for handle's interface; undone by starpu_mpi_datatype_unregister(). */
int starpu_mpi_datatype_node_register(starpu_data_handle_t handle, starpu_mpi_datatype_node_allocate_func_t allocate_datatype_node_func,
				      starpu_mpi_datatype_free_func_t free_datatype_func);
/** starpu_mpi_interface_datatype_unregister() for handle's interface. */
int starpu_mpi_datatype_unregister(starpu_data_handle_t handle);

/* ---------------------------------------------------- the communication cache */

/** 1 when received data is kept until written (STARPU_MPI_CACHE, default 1), 0 otherwise. */
int starpu_mpi_cache_is_enabled(void);
/** Turns the cache on (1) or off (0, flushing it). Returns 0. */
int starpu_mpi_cache_set(int enabled);
/** Forgets what was sent and received of data_handle and drops copies other than the owner's; every rank calls it at the same point of submission. */
void starpu_mpi_cache_flush(MPI_Comm comm, starpu_data_handle_t data_handle);
/** starpu_mpi_cache_flush() on every registered data. */
void starpu_mpi_cache_flush_all_data(MPI_Comm comm);
/** 1 when this rank holds the owner's current value of data_handle, received earlier. */
int starpu_mpi_cached_receive(starpu_data_handle_t data_handle);
/** 1 when the current value of data_handle was already sent to dest. */
int starpu_mpi_cached_send(starpu_data_handle_t data_handle, int dest);
/** Notes that this rank holds the owner's current value of data: 1 when it did already (nothing
 * changes), 0 when it is noted now, and 0 when the cache is off (STARPU_MPI_CACHE=0). 0, with a
 * message, for data not registered with starpu_mpi_data_register(). */
int starpu_mpi_cached_receive_set(starpu_data_handle_t data);
/** Forgets that this rank holds the current value of data (the next task reading it receives it again). */
void starpu_mpi_cached_receive_clear(starpu_data_handle_t data);
/** Notes that the current value of data was sent to dest: 1 when it was already, 0 when it is noted
 * now, and 0 when the cache is off. 0, with a message, for data not registered. */
int starpu_mpi_cached_send_set(starpu_data_handle_t data, int dest);
/** Forgets to which ranks data was sent (the next tasks reading it there get it sent again). */
void starpu_mpi_cached_send_clear(starpu_data_handle_t data);

/** The MPI tag StarPU-MPI's own messages (envelopes of data tags beyond MPI_TAG_UB) travel on:
 * MPI_TAG_UB unless starpu_mpi_set_communication_tag() chose another. */
int starpu_mpi_get_communication_tag(void);
/** Chooses the MPI tag of StarPU-MPI's own messages, to keep it off a tag the program's own MPI
 * messages use; a data tag equal to it is carried in an envelope too. Before starpu_mpi_init(),
 * the same on every rank (refused, with a message, while StarPU-MPI runs, and for a negative
 * tag; one above MPI_TAG_UB is said at starpu_mpi_init() and MPI_TAG_UB used). */
void starpu_mpi_set_communication_tag(int tag);

/** Copies the value of src_handle into dst_handle, whichever ranks own them: every rank calls it at
 * the same point of its submissions (both registered with starpu_mpi_data_register()). The owner of
 * the source sends it to the owner of the destination on the destination's tag, which receives it;
 * one owner for both (or per-node data on each rank) copies with starpu_data_cpy_priority(). The
 * destination is then forgotten by every rank's cache. Without asynchronous, the owners return once
 * their part is done; callback_func(callback_arg) runs on the destination's owner once the value is
 * there. 0, or a negative errno with a message. */
int starpu_mpi_data_cpy_priority(starpu_data_handle_t dst_handle, starpu_data_handle_t src_handle, MPI_Comm comm, int asynchronous,
				 void (*callback_func)(void *), void *callback_arg, int priority);
/** starpu_mpi_data_cpy_priority() with the default priority. */
int starpu_mpi_data_cpy(starpu_data_handle_t dst_handle, starpu_data_handle_t src_handle, MPI_Comm comm, int asynchronous,
			void (*callback_func)(void *), void *callback_arg);

/** Registers f, called with each task starpu_mpi_task_insert() submits on this rank, just before it is
 * submitted (the load balancer's way to see the tasks). One hook: a second replaces the first, with a
 * warning. 0, or -EINVAL (said) for a NULL f. */
int starpu_mpi_pre_submit_hook_register(void (*f)(struct starpu_task *));
/** Removes the hook starpu_mpi_pre_submit_hook_register() set. Returns 0. */
int starpu_mpi_pre_submit_hook_unregister(void);

/* --------------------------------------------------------- ownership and tasks */

/** As a rank: the data is per-process, each one has its own value, and it never travels. */
#define STARPU_MPI_PER_NODE -2

/**
 * Gives data_handle its tag and owner rank in comm, the same on every rank.
 * A tag already given to another handle of comm is refused (said on stderr).
 * Unregistering the handle forgets both.
 */
void starpu_mpi_data_register_comm(starpu_data_handle_t data_handle, starpu_mpi_tag_t data_tag, int rank, MPI_Comm comm);
#define starpu_mpi_data_register(data_handle, data_tag, rank) starpu_mpi_data_register_comm(data_handle, data_tag, rank, MPI_COMM_WORLD)
/** Sets only the tag (the rank stays). */
void starpu_mpi_data_set_tag(starpu_data_handle_t handle, starpu_mpi_tag_t data_tag);
#define starpu_data_set_tag starpu_mpi_data_set_tag
/** Sets only the owner rank, in comm (the tag stays). */
void starpu_mpi_data_set_rank_comm(starpu_data_handle_t handle, int rank, MPI_Comm comm);
#define starpu_mpi_data_set_rank(handle, rank) starpu_mpi_data_set_rank_comm(handle, rank, MPI_COMM_WORLD)
#define starpu_data_set_rank starpu_mpi_data_set_rank
/** The owner rank of handle; -1 when it has none. */
int starpu_mpi_data_get_rank(starpu_data_handle_t handle);
#define starpu_data_get_rank starpu_mpi_data_get_rank
/** The tag of handle; -1 when it has none. */
starpu_mpi_tag_t starpu_mpi_data_get_tag(starpu_data_handle_t handle);
#define starpu_data_get_tag starpu_mpi_data_get_tag

/** STARPU_NODE_SELECTION_POLICY values. */
#define STARPU_MPI_NODE_SELECTION_CURRENT_POLICY -1
#define STARPU_MPI_NODE_SELECTION_MOST_R_DATA 0

/**
 * A node-selection policy: the rank (0 .. nb_nodes - 1) that runs a task
 * whose nb_data data are descr, when the owner-computes rule cannot say (the
 * data it writes have different owners, or it writes none). me is the
 * calling rank; every rank must choose the same.
 */
typedef int (*starpu_mpi_select_node_policy_func_t)(int me, int nb_nodes, struct starpu_data_descr *descr, int nb_data);
/** Registers policy_func (on every rank, in the same order): returns its id (> 0), or a negative errno. */
int starpu_mpi_node_selection_register_policy(starpu_mpi_select_node_policy_func_t policy_func);
/** Forgets a registered policy (the built-in one stays). Returns 0 or -EINVAL. */
int starpu_mpi_node_selection_unregister_policy(int policy);
/** The policy used when a task names none (STARPU_MPI_NODE_SELECTION_MOST_R_DATA at first). */
int starpu_mpi_node_selection_get_current_policy(void);
/** Makes policy the one used when a task names none. Returns 0 or -EINVAL (not registered). */
int starpu_mpi_node_selection_set_current_policy(int policy);

/**
 * Called by every rank with the same arguments as starpu_task_insert(). The
 * task runs on one rank: STARPU_EXECUTE_ON_NODE's, the owner of
 * STARPU_EXECUTE_ON_DATA's handle, else the owner of the data it writes
 * (when they disagree, or nothing is written: the rank owning the most bytes
 * it reads). The data it reads are sent there by their owners, and the data
 * it writes are sent back to theirs. Returns 0, or a negative errno (said on
 * stderr): -EINVAL for a data without owner or tag.
 */
int starpu_mpi_task_insert(MPI_Comm comm, struct starpu_codelet *codelet, ...);
/** The older name of starpu_mpi_task_insert(). */
int starpu_mpi_insert_task(MPI_Comm comm, struct starpu_codelet *codelet, ...);
/**
 * The first half of starpu_mpi_task_insert(): posts the transfers the task
 * needs and returns the task on the rank that runs it (to submit), NULL
 * elsewhere. starpu_mpi_task_post_build() must follow on every rank, with
 * the same arguments.
 */
struct starpu_task *starpu_mpi_task_build(MPI_Comm comm, struct starpu_codelet *codelet, ...);
/** The second half: sends the written data back to their owners. Returns 0 or a negative errno. */
int starpu_mpi_task_post_build(MPI_Comm comm, struct starpu_codelet *codelet, ...);

/** What starpu_mpi_task_exchange_data_before_execution() decided, for its other half. */
struct starpu_mpi_task_exchange_params
{
	/** 1 when this rank runs the task (it then submits it), 0 otherwise. */
	int do_execute;
	/** The rank that runs the task; STARPU_MPI_PER_NODE when every rank runs it; -1 when this rank cannot tell and takes no part. */
	int xrank;
	/** The task's priority. */
	int priority;
};
/**
 * The first half of starpu_mpi_task_insert() for a task the program built
 * (task->cl and its handles set, on every rank, at the same point of
 * submission): decides which rank runs it (the owner of the data it writes,
 * else the current node-selection policy), posts the transfers of the data
 * it reads to that rank, and fills descrs (one entry per buffer of the task)
 * and *params. The program then submits the task where params->do_execute
 * is set (destroys it elsewhere) and calls
 * starpu_mpi_task_exchange_data_after_execution(). Returns 0, or a negative
 * errno (said on stderr): the task is left to the program either way.
 */
int starpu_mpi_task_exchange_data_before_execution(MPI_Comm comm, struct starpu_task *task, struct starpu_data_descr *descrs,
						   struct starpu_mpi_task_exchange_params *params);
/**
 * The second half: the data the task writes go back from the rank that ran
 * it to their owners, and the communication cache forgets them. descrs,
 * nb_data (the task's number of buffers) and params are what
 * starpu_mpi_task_exchange_data_before_execution() gave. Returns 0, or a
 * negative errno (said on stderr).
 */
int starpu_mpi_task_exchange_data_after_execution(MPI_Comm comm, struct starpu_data_descr *descrs, unsigned nb_data,
						  struct starpu_mpi_task_exchange_params params);

/** Brings data_handle's value to rank node from its owner; called at least by both, node waits for it. */
void starpu_mpi_get_data_on_node(MPI_Comm comm, starpu_data_handle_t data_handle, int node);
/** As starpu_mpi_get_data_on_node() without waiting: on node, callback(arg) once received. */
void starpu_mpi_get_data_on_node_detached(MPI_Comm comm, starpu_data_handle_t data_handle, int node, void (*callback)(void *), void *arg);
/** Brings data_handle's value to every rank; every rank calls it. */
void starpu_mpi_get_data_on_all_nodes_detached(MPI_Comm comm, starpu_data_handle_t data_handle);
/**
 * Completes the reduction of data_handle: the ranks other than its owner
 * that ran tasks accessing it in STARPU_REDUX or STARPU_MPI_REDUX mode send
 * their contributions to the owner, which folds each into its value with
 * the reduction codelet of starpu_data_set_reduction_methods() (each
 * contributor's copy started from the init codelet). Every rank calls it at
 * the same point of submission; a later starpu_mpi_task_insert() accessing
 * the data in another mode calls it by itself. Returns 0 or a negative
 * errno (said on stderr).
 */
int starpu_mpi_redux_data(MPI_Comm comm, starpu_data_handle_t data_handle);
/** starpu_mpi_redux_data() whose reduction tasks have priority prio. */
int starpu_mpi_redux_data_prio(MPI_Comm comm, starpu_data_handle_t data_handle, int prio);
/**
 * starpu_mpi_redux_data() along a tree: the owner and the contributors, in
 * groups of arity, fold into the first of each group, level after level
 * (arity below 2: all into the owner at once).
 */
int starpu_mpi_redux_data_tree(MPI_Comm comm, starpu_data_handle_t data_handle, int arity);
/** starpu_mpi_redux_data_tree() whose reduction tasks have priority prio. */
int starpu_mpi_redux_data_prio_tree(MPI_Comm comm, starpu_data_handle_t data_handle, int prio, int arity);

/**
 * The root sends each data of data_handles (NULL entries skipped) to its
 * owner, with detached requests; scallback(sarg) runs on the root once its
 * sends are done, rcallback(rarg) on the others once their receives are.
 * Every rank calls it. Returns 0 or a negative errno (said on stderr).
 */
int starpu_mpi_scatter_detached(starpu_data_handle_t *data_handles, int count, int root, MPI_Comm comm, void (*scallback)(void *), void *sarg,
				void (*rcallback)(void *), void *rarg);
/**
 * Each owner sends its data of data_handles to the root; rcallback(rarg)
 * runs on the root once it received them all, scallback(sarg) on the
 * others once their sends are done. Every rank calls it.
 */
int starpu_mpi_gather_detached(starpu_data_handle_t *data_handles, int count, int root, MPI_Comm comm, void (*scallback)(void *), void *sarg,
			       void (*rcallback)(void *), void *rarg);

/** Moves the ownership of handle to new_rank, sending it the value; every rank calls it at the same point. */
void starpu_mpi_data_migrate(MPI_Comm comm, starpu_data_handle_t handle, int new_rank);

#ifdef __cplusplus
}
#endif

#endif /* STARPU_USE_MPI */
#endif /* __STARPU_MPI_H__ */
