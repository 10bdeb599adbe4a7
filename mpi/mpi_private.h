/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * StarPU-MPI's internals, shared by its files (never installed).
 *
 * The files of mpi/, lowest first: each calls only files listed before it
 * (the sections below follow this order).
 *
 *   state.c        the shared state: running or not, the thread level and
 *                  the MPI lock, MPI's largest tag, the communicators' ranks
 *                  and sizes (starpu_mpi_comm_rank, ...), where MPI calls run
 *                  (_astro_mpi_on_rank); calls no other file
 *   stats.c, datatype.c, envelope.c, clock.c
 *                  the bytes sent per rank, user MPI datatypes, tags beyond
 *                  MPI's, the clock offsets of traces: each uses state.c at most
 *   data.c         ownership (tag and rank of each handle), the cache,
 *                  the contributors of reductions
 *   comm.c         point-to-point messages and the progression thread
 *                  (under SMPI, a loop the rank's own actor runs)
 *   unlock_tag.c   the requests that notify a task tag when they finish
 *   redux.c, select.c
 *                  reductions across ranks, the rank a task runs on
 *   collective.c   scatter, gather, a value to given ranks, migration
 *   lb.c, lb_heat.c (lb_policy.h)
 *                  the load balancer and its policy (they call each other)
 *   task_insert.c  starpu_mpi_task_insert(): the owner-computes rule, and its
 *                  halves for a task the program builds (the exchange functions)
 *   ft.c           starpu_mpi_ft.h: checkpoints, declined (no fault-tolerance build)
 *   init.c         starpu_mpi_init*() and starpu_mpi_shutdown(): sets the
 *                  state and starts and stops the others; nothing calls it
 *   smpi_calls.c   (SMPI programs only) the program's own MPI calls, handed
 *                  to the rank's actor; calls no other file
 */
#ifndef __ASTRO_MPI_PRIVATE_H__
#define __ASTRO_MPI_PRIVATE_H__

#include <starpu_mpi.h>
#include <astrolabe/plugin.h>
#include <astrolabe/thread.h>
#include <stdbool.h>

#define _astro_mpi_error(...) astro_log_error("starpu_mpi", __VA_ARGS__)

/* ----------------------------------------------------------------- state.c */

/* Is StarPU-MPI running (between starpu_mpi_init* and starpu_mpi_shutdown)?
 * Said when not (fn names the caller); _astro_mpi_is_running() says nothing. */
bool _astro_mpi_running(const char *fn);
bool _astro_mpi_is_running(void);
/* Did MPI give MPI_THREAD_MULTIPLE (any thread may call MPI at any time)? */
bool _astro_mpi_thread_multiple(void);
/* Under SimGrid's SMPI (a simulation build run by smpirun): only the rank's own actor exchanges
 * MPI messages, so every MPI call goes through _astro_mpi_on_rank(), which runs fn(arg) there
 * (at once in a native build, and in the rank's actor itself). */
bool _astro_mpi_smpi(void);
void _astro_mpi_on_rank(void (*fn)(void *), void *arg);
/* MPI calls go through this lock unless MPI gave MPI_THREAD_MULTIPLE. */
void _astro_mpi_lock(void);
void _astro_mpi_unlock(void);
/* The largest MPI tag (MPI_TAG_UB of MPI_COMM_WORLD). */
extern int _astro_mpi_tag_ub;
/* This process's rank and comm's size: 0, or -EINVAL said (fn names the caller). */
int _astro_mpi_comm_info(MPI_Comm comm, int *rank, int *size, const char *fn);
/* init.c's side: StarPU-MPI starts or stops running; MPI gave this thread
 * level (said when below MPI_THREAD_SERIALIZED); forget the communicators. */
void _astro_mpi_set_running(bool on);
void _astro_mpi_use_thread_level(int provided);
void _astro_mpi_comms_forget(void);
/* comm.c's progression thread was bound to cpuid (-1: not bound); starpu_mpi_get_thread_cpuid() says it. */
void _astro_mpi_set_thread_cpuid(int cpuid);

/* ----------------------------------------------------------------- stats.c */

/* STARPU_MPI_STATS=1: the bytes sent to each rank, printed at shutdown (rank: this process's). */
void _astro_mpi_stats_init(void);
void _astro_mpi_stats_sent(int dest, size_t bytes);
void _astro_mpi_stats_shutdown(int rank);

/* -------------------------------------------------------------- datatype.c */

/* The user datatype of handle's interface, made now (false: none, pack it). */
bool _astro_mpi_datatype_of(starpu_data_handle_t handle, MPI_Datatype *type, starpu_mpi_datatype_free_func_t *free_func);
/* Forgets the registered datatypes (at shutdown). */
void _astro_mpi_datatype_shutdown(void);

/* ------------------------------------------ a request (comm.c, envelope.c) */

enum _astro_mpi_req_kind { _ASTRO_MPI_SEND, _ASTRO_MPI_RECV, _ASTRO_MPI_BARRIER, _ASTRO_MPI_CALL };

/* One communication, from its creation to its completion. */
struct _astro_mpi_req
{
	enum _astro_mpi_req_kind kind;
	starpu_data_handle_t handle;
	int peer;
	int mpi_tag;		/* the MPI tag: the data tag, or the envelope's */
	starpu_mpi_tag_t tag64;	/* the data tag */
	bool enveloped;		/* the data tag is beyond MPI's: the envelope protocol (envelope.c) */
	MPI_Comm comm;
	bool ssend;
	bool detached;
	int sequential_consistency;
	void (*callback)(void *);
	void *arg;
	void *buffer;		/* the packed data (starpu_malloc_on_node_flags on main memory), or the handle's own (in_place) */
	size_t count;		/* bytes, or 1 (datatype) */
	MPI_Datatype datatype;	/* a user datatype (the handle stays acquired), or MPI_DATATYPE_NULL: packed bytes */
	starpu_mpi_datatype_free_func_t free_datatype;
	bool held;		/* the request holds its handle's acquire until it finishes */
	bool in_place;		/* buffer is the handle's own (contiguous, or a user datatype): nothing packed */
	int (*start)(void *arg, MPI_Request *mpi_req);	/* _ASTRO_MPI_CALL: makes the nonblocking MPI call */
	void *start_arg;
	MPI_Request mpi_req;
	MPI_Status status;
	int ret;		/* 0 or a negative errno */
	/* From here on, what a request handed to the progression thread needs: a blocking call
	 * that makes its MPI call itself (comm.c, blocking()) leaves these unset. */
	starpu_pthread_mutex_t lock;	/* done and the waiter's condition (requests that are not detached) */
	starpu_pthread_cond_t cond;
	bool done;
	struct _astro_mpi_req *next;
	/* The requests not finished, for the reports of a wait that hangs (comm.c, under its lock). */
	struct _astro_mpi_req *live_prev, *live_next;
	double created_us;
};

/* -------------------------------------------------------------- envelope.c */

/* The header before the payload of an enveloped message: the 64-bit data tag. */
#define _ASTRO_MPI_ENVELOPE_HEADER 8
/* Does tag need the envelope? Its MPI tag, and its header. */
bool _astro_mpi_envelope_needed(starpu_mpi_tag_t tag);
int _astro_mpi_envelope_tag(void);
/* At starpu_mpi_init(), MPI_TAG_UB known: a communication tag above it is said and dropped. */
void _astro_mpi_communication_tag_check(void);
void _astro_mpi_envelope_header(void *header, starpu_mpi_tag_t tag);
/* The progression thread's side: an enveloped receive waits (true: its message
 * had come, it is filled: finish it); are some waiting; receive what came,
 * finishing the receives served (returns how many); forget what is left. */
bool _astro_mpi_envelope_wait(struct _astro_mpi_req *req);
bool _astro_mpi_envelope_waiting(void);
int _astro_mpi_envelope_poll(void (*finish)(struct _astro_mpi_req *));
void _astro_mpi_envelope_shutdown(void);

/* ----------------------------------------------------------------- clock.c */

/* Reports StarPU-MPI's start (ASTRO_MOMENT_MPI_INIT) with this rank's clock
 * offset to rank 0, measured with every rank when someone observes it.
 * Collective over MPI_COMM_WORLD; before the progression thread starts. */
void _astro_mpi_clock_report(void);

/* ------------------------------------------------------------------ data.c */

/* Ownership: the tag and rank of handle (false, said, when it has none; fn names the caller). */
bool _astro_mpi_data_owner(starpu_data_handle_t handle, MPI_Comm comm, int *rank, starpu_mpi_tag_t *tag, const char *fn);
/* The handle with tag in comm on this rank, NULL when none has it (said by nobody). */
starpu_data_handle_t _astro_mpi_data_by_tag(MPI_Comm comm, starpu_mpi_tag_t tag);
/* The same, a data without tag (-1) being fine until it must travel (StarPU's temporary data). */
bool _astro_mpi_data_owner_untagged(starpu_data_handle_t handle, MPI_Comm comm, int *rank, starpu_mpi_tag_t *tag, const char *fn);
/* The cache: does node already hold the current value (its receipt was posted)? Records it if not. */
bool _astro_mpi_cache_sent(starpu_data_handle_t handle, int dest);
bool _astro_mpi_cache_received(starpu_data_handle_t handle);
/* The value of handle changed (a task wrote it): what was sent and received is stale. */
void _astro_mpi_cache_written(starpu_data_handle_t handle);
/* Reductions: rank contributes to handle (1: its first contribution of this
 * reduction, 0: not the first, negative errno); is one pending; takes the
 * contributors (*ranks malloc'ed, their count returned, the set emptied). */
int _astro_mpi_redux_contribute(starpu_data_handle_t handle, int rank);
bool _astro_mpi_redux_pending(starpu_data_handle_t handle);
int _astro_mpi_redux_take(starpu_data_handle_t handle, int **ranks);
/* Forgets every data (at shutdown) and follows unregistrations. */
int _astro_mpi_data_init(void);
void _astro_mpi_data_shutdown(void);

/* ------------------------------------------------------------------ comm.c */

/* Starts and stops the progression thread. */
int _astro_mpi_progress_start(void);
void _astro_mpi_progress_stop(void);
/* The progression thread calls start(arg, &request), a nonblocking MPI call of
 * StarPU-MPI's own (the load balancer's exchanges), and follows the request
 * like the others: so no other thread calls MPI meanwhile. *req is then
 * waited with starpu_mpi_wait(). 0 or a negative errno. */
int _astro_mpi_call(int (*start)(void *arg, MPI_Request *mpi_req), void *arg, MPI_Comm comm, starpu_mpi_req *req);
/* A send or receive of handle: *req when not detached. 0 or a negative errno (said). */
int _astro_mpi_post(enum _astro_mpi_req_kind kind, starpu_data_handle_t handle, int peer, starpu_mpi_tag_t tag, MPI_Comm comm,
		    bool ssend, bool detached, int sequential_consistency, void (*callback)(void *), void *arg,
		    starpu_mpi_req *req, const char *fn);

/* ----------------------------------------------------------------- redux.c */

/* A task on rank xrank accesses handle (owned by owner) in a reduction mode:
 * records the contribution, and on xrank starts its copy from the neutral
 * value when it is the first. 0 or a negative errno (said). */
int _astro_mpi_redux_access(starpu_data_handle_t handle, enum starpu_data_access_mode mode, int owner, int xrank, int me, const char *fn);

/* ---------------------------------------------------------------- select.c */

/* The rank policy (or the current one, for STARPU_MPI_NODE_SELECTION_CURRENT_POLICY)
 * chooses for a task with these data; a negative errno (said) when it cannot. */
int _astro_mpi_select_node(int policy, int me, int nb_nodes, struct starpu_data_descr *descr, int nb_data, const char *fn);

/* -------------------------------------------------------------------- lb.c */

/* starpu_mpi_task_insert() inserted a task numbered tag (its tag_id), run on
 * this rank when local: the load balancer's phases (nothing when none runs). */
void _astro_mpi_lb_inserted(starpu_tag_t tag, bool local);

#endif /* __ASTRO_MPI_PRIVATE_H__ */
