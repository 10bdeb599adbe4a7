/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * number_events.data (starpu_fxt_tool -number-events): how many events of
 * each kind the trace holds, to choose the STARPU_FXT_EVENTS categories that
 * make tracing cheaper. Each kind of the OTF2 archive is keyed by the FxT
 * code StarPU 1.4 gives the same event (src/common/fxt.h), so the file reads
 * as StarPU's; kinds StarPU has no code for get keys of Astrolabe's own in
 * 0x5a00.. Every line also carries the name, which
 * starpu_fxt_number_events_to_names.py prints.
 */
#include <glib.h>
#include <inttypes.h>
#include <string.h>
#include "number_events.h"
#include "schema.h"

struct kind
{
	unsigned key;
	const char *name;
};

#define KINDS(X) \
	X(K_INIT_START, 0x5100, "_STARPU_FUT_WORKER_INIT_START") \
	X(K_INIT_END, 0x5101, "_STARPU_FUT_WORKER_INIT_END") \
	X(K_CODELET_START, 0x5102, "_STARPU_FUT_START_CODELET_BODY") \
	X(K_CODELET_END, 0x5103, "_STARPU_FUT_END_CODELET_BODY") \
	X(K_PUSH, 0x5104, "_STARPU_FUT_JOB_PUSH") \
	X(K_POP, 0x5105, "_STARPU_FUT_JOB_POP") \
	X(K_FETCH_START, 0x5107, "_STARPU_FUT_START_FETCH_INPUT_ON_TID") \
	X(K_FETCH_END, 0x5108, "_STARPU_FUT_END_FETCH_INPUT_ON_TID") \
	X(K_PUSH_OUTPUT_START, 0x5109, "_STARPU_FUT_START_PUSH_OUTPUT_ON_TID") \
	X(K_PUSH_OUTPUT_END, 0x5110, "_STARPU_FUT_END_PUSH_OUTPUT_ON_TID") \
	X(K_TAG, 0x5111, "_STARPU_FUT_TAG") \
	X(K_TAG_DEPS, 0x5112, "_STARPU_FUT_TAG_DEPS") \
	X(K_TASK_DEPS, 0x5113, "_STARPU_FUT_TASK_DEPS") \
	X(K_DEINIT_START, 0x5116, "_STARPU_FUT_WORKER_DEINIT_START") \
	X(K_DEINIT_END, 0x5117, "_STARPU_FUT_WORKER_DEINIT_END") \
	X(K_SLEEP_START, 0x5118, "_STARPU_FUT_WORKER_SLEEP_START") \
	X(K_SLEEP_END, 0x5119, "_STARPU_FUT_WORKER_SLEEP_END") \
	X(K_SUBMIT, 0x511a, "_STARPU_FUT_TASK_SUBMIT") \
	X(K_DATA_HANDLE, 0x511b, "_STARPU_FUT_CODELET_DATA_HANDLE") \
	X(K_DATA_NAME, 0x511d, "_STARPU_FUT_DATA_NAME") \
	X(K_DATA_COORDINATES, 0x511e, "_STARPU_FUT_DATA_COORDINATES") \
	X(K_UNREGISTER, 0x511f, "_STARPU_FUT_HANDLE_DATA_UNREGISTER") \
	X(K_CALLBACK_START, 0x5123, "_STARPU_FUT_START_CALLBACK") \
	X(K_CALLBACK_END, 0x5124, "_STARPU_FUT_END_CALLBACK") \
	X(K_TASK_DONE, 0x5125, "_STARPU_FUT_TASK_DONE") \
	X(K_ALLOC, 0x5127, "_STARPU_FUT_START_ALLOC") \
	X(K_ALLOC_END, 0x5128, "_STARPU_FUT_END_ALLOC") \
	X(K_USED_MEM, 0x512a, "_STARPU_FUT_USED_MEM") \
	X(K_WONT_USE, 0x512c, "_STARPU_FUT_DATA_WONT_USE") \
	X(K_RECLAIM_START, 0x5131, "_STARPU_FUT_START_MEMRECLAIM") \
	X(K_RECLAIM_END, 0x5132, "_STARPU_FUT_END_MEMRECLAIM") \
	X(K_COPY_START, 0x5133, "_STARPU_FUT_START_DRIVER_COPY") \
	X(K_COPY_END, 0x5134, "_STARPU_FUT_END_DRIVER_COPY") \
	X(K_USER_EVENT, 0x5139, "_STARPU_FUT_USER_EVENT") \
	X(K_EVENT, 0x513c, "_STARPU_FUT_EVENT") \
	X(K_FREE_START, 0x5156, "_STARPU_FUT_START_FREE") \
	X(K_FREE_END, 0x5157, "_STARPU_FUT_END_FREE") \
	X(K_WRITEBACK_START, 0x5158, "_STARPU_FUT_START_WRITEBACK") \
	X(K_WRITEBACK_END, 0x5159, "_STARPU_FUT_END_WRITEBACK") \
	X(K_SCHEDULING_START, 0x5164, "_STARPU_FUT_WORKER_SCHEDULING_START") \
	X(K_SCHEDULING_END, 0x5165, "_STARPU_FUT_WORKER_SCHEDULING_END") \
	X(K_COMPONENT_NEW, 0x516a, "_STARPU_FUT_SCHED_COMPONENT_NEW") \
	X(K_COMPONENT_CONNECT, 0x516b, "_STARPU_FUT_SCHED_COMPONENT_CONNECT") \
	X(K_COMPONENT_PUSH, 0x516c, "_STARPU_FUT_SCHED_COMPONENT_PUSH") \
	X(K_COMPONENT_PULL, 0x516d, "_STARPU_FUT_SCHED_COMPONENT_PULL") \
	X(K_SUBMIT_START, 0x516e, "_STARPU_FUT_TASK_SUBMIT_START") \
	X(K_SUBMIT_END, 0x516f, "_STARPU_FUT_TASK_SUBMIT_END") \
	X(K_BUILD_START, 0x5170, "_STARPU_FUT_TASK_BUILD_START") \
	X(K_BUILD_END, 0x5171, "_STARPU_FUT_TASK_BUILD_END") \
	X(K_WAIT_START, 0x5178, "_STARPU_FUT_TASK_WAIT_START") \
	X(K_WAIT_END, 0x5179, "_STARPU_FUT_TASK_WAIT_END") \
	X(K_WAIT_ALL_START, 0x517a, "_STARPU_FUT_TASK_WAIT_FOR_ALL_START") \
	X(K_WAIT_ALL_END, 0x517b, "_STARPU_FUT_TASK_WAIT_FOR_ALL_END") \
	X(K_REGISTER, 0x517c, "_STARPU_FUT_HANDLE_DATA_REGISTER") \
	X(K_THROTTLE_START, 0x5180, "_STARPU_FUT_TASK_THROTTLE_START") \
	X(K_THROTTLE_END, 0x5181, "_STARPU_FUT_TASK_THROTTLE_END") \
	X(K_STATE_INVALID, 0x5182, "_STARPU_FUT_DATA_STATE_INVALID") \
	X(K_STATE_OWNER, 0x5183, "_STARPU_FUT_DATA_STATE_OWNER") \
	X(K_STATE_SHARED, 0x5184, "_STARPU_FUT_DATA_STATE_SHARED") \
	X(K_REQUEST_CREATED, 0x5185, "_STARPU_FUT_DATA_REQUEST_CREATED") \
	X(K_PAPI, 0x5186, "_STARPU_FUT_PAPI_TASK_EVENT_VALUE") \
	X(K_MPI_ISEND_SUBMIT, 0x5204, "_STARPU_MPI_FUT_ISEND_SUBMIT_BEGIN") \
	X(K_MPI_IRECV_COMPLETE, 0x520b, "_STARPU_MPI_FUT_IRECV_COMPLETE_END") \
	X(K_READY, 0x5a00, "astro_task_ready") \
	X(K_USER_STATE_OPEN, 0x5a01, "astro_instr_state_open") \
	X(K_USER_STATE_CLOSE, 0x5a02, "astro_instr_state_close") \
	X(K_BURST_BEGIN, 0x5a03, "astro_instr_burst_begin") \
	X(K_BURST_END, 0x5a04, "astro_instr_burst_end") \
	X(K_COUNTER_SAMPLE, 0x5a05, "astro_counter_sample") \
	X(K_RUNTIME_JOB, 0x5a06, "astro_runtime_job") \
	X(K_IDLE_START, 0x5a07, "astro_worker_idle_start") \
	X(K_IDLE_END, 0x5a08, "astro_worker_idle_end") \
	X(K_UNKNOWN, 0x5aff, "astro_unknown_event")

#define KIND_ENUM(id, ...) id,
enum kind_id { KINDS(KIND_ENUM) NKINDS };
#undef KIND_ENUM
#define KIND_ENTRY(id, key, name) { key, name },
static const struct kind kinds[NKINDS] = { KINDS(KIND_ENTRY) };
#undef KIND_ENTRY

/* Worker states (TRACE_STATES), their Enter kind; the Leave kind follows it in the table. */
static const struct
{
	const char *name;
	enum kind_id enter;
} states[] = {
	{ "Initializing", K_INIT_START },	 { "Deinitializing", K_DEINIT_START }, { "Scheduling", K_SCHEDULING_START },
	{ "Sleeping", K_SLEEP_START },		 { "FetchingInput", K_FETCH_START },   { "Callback", K_CALLBACK_START },
	{ "Waiting all tasks", K_WAIT_ALL_START }, { "PushingOutput", K_PUSH_OUTPUT_START },
	{ "Submitting task", K_SUBMIT_START },	 { "Building task", K_BUILD_START },   { "Waiting task", K_WAIT_START },
	{ "Throttling task submission", K_THROTTLE_START }, { "Idle", K_IDLE_START },
};

void number_events_init(struct number_events *n)
{
	n->count = g_new0(uint64_t, NKINDS);
}

void number_events_fini(struct number_events *n)
{
	g_free(n->count);
	n->count = NULL;
}

void number_events_param(struct number_events *n, int param, uint8_t kind)
{
	static const enum kind_id of_param[TRACE_NPARAMETERS] = {
		[P_SUBMIT] = K_SUBMIT,
		[P_READY] = K_READY,
		[P_PUSH] = K_PUSH,
		[P_POP] = K_POP,
		[P_DEPENDENCY] = K_TASK_DEPS,
		[P_HANDLE] = K_DATA_HANDLE,
		[P_REGISTER] = K_REGISTER,
		[P_UNREGISTER] = K_UNREGISTER,
		[P_DATA_NAME] = K_DATA_NAME,
		[P_DATA_COORDINATES] = K_DATA_COORDINATES,
		[P_USER_EVENT] = K_USER_EVENT,
		[P_STRING_EVENT] = K_EVENT,
		[P_TRANSFER_BEGIN] = K_COPY_START,
		[P_TRANSFER_END] = K_COPY_END,
		[P_ALLOCATION] = K_USED_MEM,
		[P_MEMORY_STATE_BEGIN] = K_ALLOC,
		[P_MEMORY_STATE_END] = K_ALLOC_END,
		[P_COMPLETED] = K_TASK_DONE,
		[P_BURST_BEGIN] = K_BURST_BEGIN,
		[P_BURST_END] = K_BURST_END,
		[P_COMPONENT_NEW] = K_COMPONENT_NEW,
		[P_COMPONENT_CONNECT] = K_COMPONENT_CONNECT,
		[P_COMPONENT_PUSH] = K_COMPONENT_PUSH,
		[P_COMPONENT_PULL] = K_COMPONENT_PULL,
		[P_PAPI] = K_PAPI,
		[P_MPI_SEND] = K_MPI_ISEND_SUBMIT,
		[P_MPI_RECV] = K_MPI_IRECV_COMPLETE,
		[P_TAG_DEPENDENCY] = K_TAG_DEPS,
		[P_TASK_TAG] = K_TAG,
		[P_DATA_STATE] = K_STATE_INVALID,
		[P_WONT_USE] = K_WONT_USE,
		[P_DATA_REQUEST] = K_REQUEST_CREATED,
		[P_RUNTIME_JOB] = K_RUNTIME_JOB,
	};
	_Static_assert(TRACE_NPARAMETERS == 33, "every parameter has its kind above");
	/* A data state's kind, by its astro_data_state (invalid, shared, owner). */
	static const enum kind_id data_state[] = { K_STATE_INVALID, K_STATE_SHARED, K_STATE_OWNER };
	/* A memory state's begin and end, by its astro_memory_state. */
	static const enum kind_id memory_state[] = { K_ALLOC, K_FREE_START, K_WRITEBACK_START, K_RECLAIM_START };
	enum kind_id k = param >= 0 && param < TRACE_NPARAMETERS ? of_param[param] : K_UNKNOWN;
	if (param == P_DEPENDENCY && kind == 2)
		k = K_TAG_DEPS;
	if ((param == P_MEMORY_STATE_BEGIN || param == P_MEMORY_STATE_END) && kind < G_N_ELEMENTS(memory_state))
		k = memory_state[kind] + (param == P_MEMORY_STATE_END);
	if (param == P_DATA_STATE && kind < G_N_ELEMENTS(data_state))
		k = data_state[kind];
	n->count[k]++;
}

void number_events_counter(struct number_events *n)
{
	n->count[K_COUNTER_SAMPLE]++;
}

void number_events_region(struct number_events *n, const char *name, bool task, bool user, bool leave)
{
	enum kind_id k = K_UNKNOWN;
	if (task) {
		k = K_CODELET_START;
	} else if (user) {
		k = K_USER_STATE_OPEN;
	} else {
		for (size_t i = 0; i < G_N_ELEMENTS(states); i++)
			if (strcmp(states[i].name, name) == 0)
				k = states[i].enter;
		if (k == K_UNKNOWN) {
			n->count[k]++;
			return;
		}
	}
	n->count[k + leave]++;
}

void number_events_write(const struct number_events *n, FILE *f)
{
	fputs("# Use starpu_fxt_number_events_to_names.py to convert event keys to event names.\n", f);
	/* The table is in key order. */
	for (int k = 0; k < NKINDS; k++)
		if (n->count[k])
			fprintf(f, "0x%x\t%" PRIu64 "\t%s\n", kinds[k].key, n->count[k], kinds[k].name);
}
