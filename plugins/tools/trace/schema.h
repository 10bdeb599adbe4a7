/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the trace recorder writes into its OTF2 archive and starpu_fxt_tool
 * reads back: the names of the parameters (instant events), attributes and
 * state regions. The recorder numbers them as listed; the converter finds
 * them by name in the archive's definitions, so an archive stays readable
 * when entries are added at the tail.
 */
#ifndef __ASTRO_TRACE_SCHEMA_H__
#define __ASTRO_TRACE_SCHEMA_H__

/* Location ids: a worker's location is its worker id; application threads come after. */
#define TRACE_APP_LOCATION_BASE 1000u

/* Instant events (OTF2 parameters); the value is what the comment says. */
#define TRACE_PARAMETERS(X) \
	X(P_SUBMIT, "submit", UINT64)              /* job; Name, Model (see "Shortcuts"), Tag (older archives), Priority, Color */ \
	X(P_READY, "ready", UINT64)                /* job */ \
	X(P_PUSH, "push", UINT64)                  /* job; Priority */ \
	X(P_POP, "pop", UINT64)                    /* job; Priority */ \
	X(P_DEPENDENCY, "dependency", UINT64)      /* predecessor job (tag); JobId (successor job or tag), DepKind (0 task when absent, 1 data, 2 tag) */ \
	X(P_HANDLE, "handle", UINT64)              /* handle of the task entered just before; Mode, Size */ \
	X(P_REGISTER, "register", UINT64)          /* handle; Size, HomeNode, Description */ \
	X(P_UNREGISTER, "unregister", UINT64)      /* handle */ \
	X(P_DATA_NAME, "data_name", STRING)        /* the name; Handle */ \
	X(P_DATA_COORDINATES, "data_coordinates", STRING) /* space-separated; Handle */ \
	X(P_USER_EVENT, "user_event", UINT64)      /* the code */ \
	X(P_STRING_EVENT, "string_event", STRING)  /* user and meta strings, start_profiling/stop_profiling */ \
	X(P_TRANSFER_BEGIN, "transfer_begin", UINT64) /* bytes; SrcNode, DstNode, Handle (older archives: none) */ \
	X(P_TRANSFER_END, "transfer_end", UINT64)  /* bytes; SrcNode, DstNode, Handle */ \
	X(P_ALLOCATION, "allocation", UINT64)      /* bytes; DstNode */ \
	X(P_COMPLETED, "completed", UINT64)        /* job */ \
	X(P_BURST_BEGIN, "burst_begin", UINT64)    /* the value; Name (the key) */ \
	X(P_BURST_END, "burst_end", UINT64)        /* 0; Name (the key) */ \
	X(P_COMPONENT_NEW, "component_new", UINT64) /* a scheduling component (its address); Name, Worker (of a worker component) */ \
	X(P_COMPONENT_CONNECT, "component_connect", UINT64) /* the child component; Component (the parent) */ \
	X(P_COMPONENT_PUSH, "component_push", UINT64) /* job; Component (where it goes), FromComponent (0: from the policy) */ \
	X(P_COMPONENT_PULL, "component_pull", UINT64) /* job; Component (the puller), FromComponent (the component pulled from) */ \
	X(P_PAPI, "papi", UINT64)                  /* a PAPI counter of a task (the long long's bits); JobId, Name (the PAPI event) */ \
	X(P_MPI_SEND, "mpi_send", UINT64)          /* bytes of a StarPU-MPI message posted; Peer (the destination rank), Tag, Handle */ \
	X(P_MPI_RECV, "mpi_recv", UINT64)          /* bytes of a StarPU-MPI message received; Peer (the source rank), Tag, Handle */ \
	X(P_TAG_DEPENDENCY, "tag_dependency", UINT64) /* tag the JobId tag waits for (starpu_tag_declare_deps): "dependency" with DepKind 2, one attribute less */ \
	X(P_TASK_TAG, "task_tag", UINT64)          /* the tag of the job submitted just before on the location (StarPU's _STARPU_FUT_TAG) */ \
	X(P_MEMORY_STATE_BEGIN, "memory_state_begin", UINT64) /* bytes; DstNode (the memory node), MemoryState (TRACE_MEMORY_STATES' index, 0 when absent), Handle (when one) */ \
	X(P_MEMORY_STATE_END, "memory_state_end", UINT64)     /* bytes; DstNode, MemoryState, Handle */ \
	X(P_DATA_STATE, "data_state", UINT64)      /* handle whose copy on DstNode is now in MSI state Coherency (0 invalid when absent, 1 shared, 2 owner) */ \
	X(P_WONT_USE, "wont_use", UINT64)          /* handle given to starpu_data_wont_use */ \
	X(P_DATA_REQUEST, "data_request", UINT64)  /* the request's number; Handle, SrcNode, DstNode, Prefetch (StarPU's starpu_is_prefetch, 0 fetch when absent) */ \
	X(P_RUNTIME_JOB, "runtime_job", UINT64)    /* a job of the runtime (no task): Name (what for), Handle, Acquire (1: an application's acquisition; absent: internal) */

/* Shortcuts: attributes cost OTF2 about as much as an event, so the recorder
 * leaves out what the reader can tell from the same location's previous events:
 * - an Enter of a task region without JobId is the job this location popped last;
 * - a submit without Name and Model has those of the previous submit of the
 *   location; a Name that is the empty string means none (and no Model);
 * - a tag_dependency without JobId is declared for the tag of the submit just
 *   before it on the location (starpu_tag_declare_deps() then the task's
 *   submission: the recorder holds the dependency until it sees which);
 * - a submitted task's tag is a task_tag event right after its submit, at the
 *   same date (no timestamp bytes): an event costs OTF2 less than an attribute
 *   (about 160 instructions against 225). Older archives carry a Tag attribute. */

/* Attributes attached to events. */
#define TRACE_ATTRIBUTES(X) \
	X(A_JOB_ID, "JobId", UINT64) \
	X(A_NAME, "Name", STRING) \
	X(A_MODEL, "Model", STRING) \
	X(A_TAG, "Tag", UINT64) \
	X(A_PRIORITY, "Priority", INT32) \
	X(A_FOOTPRINT, "Footprint", UINT32) \
	X(A_SIZE, "Size", UINT64) \
	X(A_FLOPS, "Flops", DOUBLE) \
	X(A_MODE, "Mode", UINT32) \
	X(A_DEP_KIND, "DepKind", UINT8) \
	X(A_HOME_NODE, "HomeNode", INT32) \
	X(A_DESCRIPTION, "Description", STRING) \
	X(A_HANDLE, "Handle", UINT64) \
	X(A_SRC_NODE, "SrcNode", UINT32) \
	X(A_DST_NODE, "DstNode", UINT32) \
	X(A_COLOR, "Color", UINT32) \
	X(A_MEMORY_NODE, "MemoryNode", UINT32) \
	X(A_ITERATION, "Iteration", INT64) \
	X(A_SUBITERATION, "Subiteration", INT64) \
	X(A_COMPONENT, "Component", UINT64) \
	X(A_FROM_COMPONENT, "FromComponent", UINT64) \
	X(A_WORKER, "Worker", INT32) \
	X(A_PEER, "Peer", INT32) \
	X(A_MEMORY_STATE, "MemoryState", UINT8) \
	X(A_COHERENCY, "Coherency", UINT32) \
	X(A_PREFETCH, "Prefetch", UINT32) \
	X(A_ACQUIRE, "Acquire", UINT32) \
	X(A_SCHED_CTX, "SchedCtx", UINT32)   /* on a task's Enter: the scheduling context it runs in, when not 0 */ \
	X(A_NUMA_NODES, "NumaNodes", INT64)  /* on a task's handle (TASK_VERBOSE_EXTRA): bit n for NUMA node n holding a valid copy */

/* Worker and thread states (OTF2 regions of role FUNCTION, description "state"); task regions have description "task". */
#define TRACE_STATES(X) \
	X(S_INITIALIZING, "Initializing") \
	X(S_DEINITIALIZING, "Deinitializing") \
	X(S_SCHEDULING, "Scheduling") \
	X(S_SLEEPING, "Sleeping") \
	X(S_FETCHING_INPUT, "FetchingInput") \
	X(S_CALLBACK, "Callback") \
	X(S_WAITING, "Waiting all tasks") \
	X(S_PUSHING_OUTPUT, "PushingOutput") \
	X(S_SUBMITTING, "Submitting task")  /* TASK_VERBOSE: starpu_task_submit() */ \
	X(S_BUILDING, "Building task")      /* TASK_VERBOSE: starpu_task_insert() reading its arguments */ \
	X(S_WAITING_TASK, "Waiting task")   /* starpu_task_wait() (the other waits are "Waiting all tasks") */ \
	X(S_THROTTLING, "Throttling task submission") /* starpu_task_submit() held: STARPU_LIMIT_MAX_SUBMITTED_TASKS reached */ \
	X(S_IDLE, "Idle")                   /* a worker polling for work before it finds a task or sleeps */

/* A memory manager's states, in astro_memory_state's order: the MemoryState attribute's values, their Paje aliases. */
#define TRACE_MEMORY_STATES { "A", "F", "W", "R" } /* Allocating, Freeing, WritingBack, Reclaiming */

#define TRACE_ENUM(id, ...) id,
enum trace_parameter { TRACE_PARAMETERS(TRACE_ENUM) TRACE_NPARAMETERS };
enum trace_attribute { TRACE_ATTRIBUTES(TRACE_ENUM) TRACE_NATTRIBUTES };
enum trace_state { TRACE_STATES(TRACE_ENUM) TRACE_NSTATES };
#undef TRACE_ENUM

/* Location properties: the thread's OS id (gettid, INT64), a worker's logical CPU (INT32, when bound). */
#define TRACE_PROPERTY_TID "OS thread id"
#define TRACE_PROPERTY_BINDID "CPU"
/* The event-key dictionary (astro_instr_key_register): properties of system tree node 0, each a STRING:
 * "<KEY prefix><key>" = the key's description, "<VALUE prefix><value> <key>" = the name of the key's value. */
#define TRACE_PROPERTY_KEY "astrolabe:key "
#define TRACE_PROPERTY_VALUE "astrolabe:value "

#define TRACE_DESC_TASK "task"
#define TRACE_DESC_STATE "state"
#define TRACE_DESC_USER_STATE "user state" /* astro_instr_state_open() */
/* The global-definitions string of a StarPU-MPI process: "<prefix><rank> <ranks> <offset>", offset
 * being rank 0's clock minus this process's, in ns (the converter shifts its events by it). */
#define TRACE_MPI_MARK "astrolabe:mpi "
/* The global-definitions string written when a flush failed: the archive lacks events. */
#define TRACE_INCOMPLETE_MARK "astrolabe:incomplete"

#endif /* __ASTRO_TRACE_SCHEMA_H__ */
