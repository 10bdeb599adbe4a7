/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Point-to-point communication of data handles, and the progression thread.
 *
 * A request first acquires its handle through the runtime (read for a send,
 * write for a receive), so it is ordered with the tasks like any access.
 * Once granted, a send packs the data (the interface's pack method) and
 * releases the handle at once; a receive keeps it until the message is
 * unpacked into it. The request then goes to the progression thread, the
 * only thread that posts and completes MPI requests: it polls them with
 * MPI_Testsome, yielding the processor between polls for 2 ms after the last
 * completion, then sleeping in growing steps (20 us to 320 us) while nothing
 * completes; a new request wakes it at once. In a simulation it only sleeps
 * (a yield would not let virtual time run), and under SMPI the loop runs on
 * the rank's own actor, which also serves the MPI calls handed to it.
 */
#define _GNU_SOURCE 1 /* sched_getaffinity, CPU_SET */
#include "mpi_private.h"

#include <astrolabe/observe.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct
{
	starpu_pthread_mutex_t lock;
	starpu_pthread_cond_t wake;		/* a request to post, or stop */
	starpu_pthread_cond_t idle;		/* outstanding fell to 0 */
	struct _astro_mpi_req *head, *tail;	/* requests ready to post */
	unsigned long outstanding;	/* requests created and not finished (changed under lock, atomically: read without it) */
	bool stop;
	bool started;
	bool bound;			/* the thread has its binding (STARPU_MPI_THREAD_CPUID): starting waits for it */
	bool calls;			/* under SMPI: MPI calls handed to the rank's actor, which runs this loop */
	starpu_pthread_t thread;
	struct _astro_mpi_req *live;	/* the requests not finished, most recent first */
} prog = { STARPU_PTHREAD_MUTEX_INITIALIZER, STARPU_PTHREAD_COND_INITIALIZER, STARPU_PTHREAD_COND_INITIALIZER };

static void req_free(struct _astro_mpi_req *req)
{
	starpu_pthread_mutex_destroy(&req->lock);
	starpu_pthread_cond_destroy(&req->cond);
	free(req);
}

static void buffer_free(struct _astro_mpi_req *req)
{
	if (req->buffer)
		starpu_free_on_node_flags(STARPU_MAIN_RAM, (uintptr_t)req->buffer, req->count ? req->count : 1, 0);
	req->buffer = NULL;
}

/* The bytes of data a request carries (its datatype's size, or what was packed, header aside). */
static size_t payload_bytes(const struct _astro_mpi_req *req)
{
	if (req->datatype != MPI_DATATYPE_NULL) {
		int size = 0;
		MPI_Type_size(req->datatype, &size);
		return (size_t)size;
	}
	return req->enveloped && req->kind == _ASTRO_MPI_SEND ? req->count - _ASTRO_MPI_ENVELOPE_HEADER : req->count;
}

/* A message on the observation path (tools, counters, traces see it): costs a load and a branch when nobody looks. */
static void observe_message(const struct _astro_mpi_req *req, enum astro_moment moment)
{
	if (!ASTRO_OBSERVED(moment))
		return;
	int me = -1, size;
	_astro_mpi_comm_info(req->comm, &me, &size, "starpu_mpi");
	struct astro_event e = {
		.moment = moment, .workerid = -1, .bytes = payload_bytes(req), .other_id = (unsigned long)req->tag64, .object = req->handle,
		.src_node = (unsigned)(moment == ASTRO_MOMENT_MPI_SEND ? me : req->peer),
		.dst_node = (unsigned)(moment == ASTRO_MOMENT_MPI_SEND ? req->peer : me),
	};
	astro_observe_report(&e);
}

/* The end of a request: its data unpacked and released, then its callback
 * run and the request freed (detached) or its waiter woken. */
static void live_remove(struct _astro_mpi_req *req)
{
	starpu_pthread_mutex_lock(&prog.lock);
	if (req->live_prev)
		req->live_prev->live_next = req->live_next;
	else
		prog.live = req->live_next;
	if (req->live_next)
		req->live_next->live_prev = req->live_prev;
	req->live_prev = req->live_next = NULL;
	starpu_pthread_mutex_unlock(&prog.lock);
}

static void req_finish(struct _astro_mpi_req *req)
{
	bool detached = req->detached;
	live_remove(req);
	if (req->in_place) {
		req->buffer = NULL; /* the handle's own */
	} else if (req->kind == _ASTRO_MPI_RECV && req->ret == 0) {
		if (starpu_data_unpack_node(req->handle, STARPU_MAIN_RAM, req->buffer, req->count) == 0)
			req->buffer = NULL; /* unpack frees it */
		else
			req->ret = -EINVAL;
	}
	if (req->kind == _ASTRO_MPI_RECV && req->ret == 0)
		observe_message(req, ASTRO_MOMENT_MPI_RECV);
	if (req->datatype != MPI_DATATYPE_NULL) {
		_astro_mpi_lock();
		req->free_datatype(&req->datatype);
		_astro_mpi_unlock();
	}
	buffer_free(req);
	if (req->held)
		starpu_data_release(req->handle);

	if (detached) {
		if (req->callback)
			req->callback(req->arg);
		req_free(req);
	}
	starpu_pthread_mutex_lock(&prog.lock);
	if (__atomic_sub_fetch(&prog.outstanding, 1, __ATOMIC_RELEASE) == 0)
		starpu_pthread_cond_broadcast(&prog.idle);
	starpu_pthread_mutex_unlock(&prog.lock);
	if (!detached) {
		starpu_pthread_mutex_lock(&req->lock);
		req->done = true;
		starpu_pthread_cond_broadcast(&req->cond);
		starpu_pthread_mutex_unlock(&req->lock);
	}
}

static void req_enqueue(struct _astro_mpi_req *req)
{
	starpu_pthread_mutex_lock(&prog.lock);
	req->next = NULL;
	if (prog.tail)
		prog.tail->next = req;
	else
		prog.head = req;
	prog.tail = req;
	starpu_pthread_cond_signal(&prog.wake);
	starpu_pthread_mutex_unlock(&prog.lock);
}

static const char *kind_name(const struct _astro_mpi_req *req)
{
	return req->kind == _ASTRO_MPI_SEND ? "sending to" : req->kind == _ASTRO_MPI_RECV ? "receiving from" :
	       req->kind == _ASTRO_MPI_CALL ? "exchanging with" : "barrier with";
}

static void mpi_failed(struct _astro_mpi_req *req, const char *call, int err)
{
	char text[MPI_MAX_ERROR_STRING];
	int len = 0;
	if (MPI_Error_string(err, text, &len) != MPI_SUCCESS)
		snprintf(text, sizeof(text), "error %d", err);
	_astro_mpi_error("%s failed %s rank %d (tag %lld): %s", call, kind_name(req), req->peer, (long long)req->tag64, text);
	req->ret = -EIO;
}

/* ------------------------------------------------- the acquires' callbacks */

/* Data are sent as one message of bytes, whose count MPI takes as an int. */
static int one_message(const struct _astro_mpi_req *req, starpu_ssize_t count)
{
	if (count <= INT_MAX)
		return 0;
	_astro_mpi_error("%s rank %d (tag %lld): the data packs to %zd bytes, more than one MPI message carries (%d): split it into smaller handles",
			 kind_name(req), req->peer, (long long)req->tag64, count, INT_MAX);
	return -EINVAL;
}

/* Is handle's main-memory buffer one run of bytes, its packed form (a variable, a vector, a matrix without gaps)? */
static bool contiguous(starpu_data_handle_t handle)
{
	switch (starpu_data_get_interface_id(handle)) {
	case STARPU_VARIABLE_INTERFACE_ID:
	case STARPU_VECTOR_INTERFACE_ID:
		return true;
	case STARPU_MATRIX_INTERFACE_ID:
		return starpu_matrix_get_local_ld(handle) == starpu_matrix_get_nx(handle);
	default:
		return false;
	}
}

/* The handle's buffer in main memory, where its acquire put it. Not
 * starpu_data_get_local_ptr(): that is the calling thread's node (a device's,
 * when a device worker's release granted the acquire), and NULL while the
 * copy is marked invalid (after starpu_data_invalidate(), as a cache flush
 * does), though a write acquire may use it. */
static void *main_ram_buffer(starpu_data_handle_t handle)
{
	struct starpu_data_interface_ops *ops = starpu_data_get_interface_ops(handle);
	void *iface = starpu_data_get_interface_on_node(handle, STARPU_MAIN_RAM);
	if (!ops || !iface)
		return NULL;
	if (ops->to_pointer)
		return ops->to_pointer(iface, STARPU_MAIN_RAM);
	return ops->handle_to_pointer ? ops->handle_to_pointer(handle, STARPU_MAIN_RAM) : NULL;
}

/* Can the message go straight from or to the handle's buffer (a user
 * datatype describes it, or the data is contiguous)? Then nothing is
 * packed, and the request keeps the handle acquired until the message is
 * through: a receive's MPI writes there while the handle is acquired for
 * writing, so nothing else touches it. */
static bool in_place(struct _astro_mpi_req *req)
{
	if (req->enveloped)
		return false;
	void *buffer = main_ram_buffer(req->handle);
	if (_astro_mpi_datatype_of(req->handle, &req->datatype, &req->free_datatype)) {
		req->count = 1;
	} else {
		size_t bytes = starpu_data_get_size(req->handle);
		if (!buffer || !contiguous(req->handle) || bytes > INT_MAX)
			return false;
		req->count = bytes;
	}
	req->in_place = true;
	req->held = true;
	req->buffer = buffer;
	return true;
}

/* The packed data behind the envelope's header, in one buffer. */
static int envelope(struct _astro_mpi_req *req)
{
	size_t total = req->count + _ASTRO_MPI_ENVELOPE_HEADER;
	char *buffer = (char *)starpu_malloc_on_node_flags(STARPU_MAIN_RAM, total, 0);
	if (!buffer) {
		_astro_mpi_error("sending to rank %d (tag %lld): out of memory for %zu bytes", req->peer, (long long)req->tag64, total);
		return -ENOMEM;
	}
	_astro_mpi_envelope_header(buffer, req->tag64);
	memcpy(buffer + _ASTRO_MPI_ENVELOPE_HEADER, req->buffer, req->count);
	buffer_free(req);
	req->buffer = buffer;
	req->count = total;
	return 0;
}

static void send_granted(void *arg)
{
	struct _astro_mpi_req *req = arg;
	if (in_place(req)) {
		req_enqueue(req);
		return;
	}
	starpu_ssize_t count = 0;
	void *ptr = NULL;
	int ret = starpu_data_pack_node(req->handle, STARPU_MAIN_RAM, &ptr, &count);
	starpu_data_release(req->handle);
	req->buffer = ptr;
	req->count = (size_t)count;
	if (ret == 0)
		ret = one_message(req, count + (req->enveloped ? _ASTRO_MPI_ENVELOPE_HEADER : 0));
	if (ret == 0 && req->enveloped)
		ret = envelope(req);
	if (ret) {
		req->ret = ret;
		req_finish(req);
		return;
	}
	req_enqueue(req);
}

static void recv_granted(void *arg)
{
	struct _astro_mpi_req *req = arg;
	req->held = true;
	if (in_place(req)) {
		req_enqueue(req);
		return;
	}
	starpu_ssize_t count = 0;
	int ret = starpu_data_pack_node(req->handle, STARPU_MAIN_RAM, NULL, &count);
	if (ret == 0)
		ret = one_message(req, count);
	if (ret == 0) {
		req->count = (size_t)count;
		req->buffer = (void *)starpu_malloc_on_node_flags(STARPU_MAIN_RAM, req->count ? req->count : 1, 0);
		if (!req->buffer) {
			_astro_mpi_error("receiving from rank %d (tag %lld): out of memory for %zu bytes", req->peer, (long long)req->tag64, req->count);
			ret = -ENOMEM;
		}
	}
	if (ret) {
		req->ret = ret;
		req_finish(req);
		return;
	}
	req_enqueue(req);
}

/* ------------------------------------------------- the progression thread */

/* Posts req; false (req->ret set, said) when MPI refused it. */
static bool req_start(struct _astro_mpi_req *req)
{
	int err;
	MPI_Datatype type = req->datatype != MPI_DATATYPE_NULL ? req->datatype : MPI_BYTE;
	_astro_mpi_lock();
	switch (req->kind) {
	case _ASTRO_MPI_SEND:
		err = (req->ssend ? MPI_Issend : MPI_Isend)(req->buffer, (int)req->count, type, req->peer, req->mpi_tag, req->comm, &req->mpi_req);
		break;
	case _ASTRO_MPI_RECV:
		err = MPI_Irecv(req->buffer, (int)req->count, type, req->peer, req->mpi_tag, req->comm, &req->mpi_req);
		break;
	case _ASTRO_MPI_CALL:
		err = req->start(req->start_arg, &req->mpi_req);
		break;
	default:
		err = MPI_Ibarrier(req->comm, &req->mpi_req);
		break;
	}
	_astro_mpi_unlock();
	if (err != MPI_SUCCESS) {
		mpi_failed(req, req->kind == _ASTRO_MPI_SEND ? "MPI_Isend" : req->kind == _ASTRO_MPI_RECV ? "MPI_Irecv" :
				req->kind == _ASTRO_MPI_CALL ? "StarPU-MPI's own call" : "MPI_Ibarrier", err);
		return false;
	}
	if (req->kind == _ASTRO_MPI_SEND)
		observe_message(req, ASTRO_MOMENT_MPI_SEND);
	return true;
}

/* A completed MPI request: its status checked (under the MPI lock, held by the caller). */
static void req_completed(struct _astro_mpi_req *req, const MPI_Status *status, bool in_status)
{
	req->status = *status;
	if (in_status && status->MPI_ERROR != MPI_SUCCESS) {
		mpi_failed(req, "MPI_Testsome", status->MPI_ERROR);
		return;
	}
	if (req->kind == _ASTRO_MPI_SEND) {
		_astro_mpi_stats_sent(req->peer, payload_bytes(req));
	}
	if (req->kind == _ASTRO_MPI_RECV) {
		int got = 0;
		MPI_Get_count(status, req->datatype != MPI_DATATYPE_NULL ? req->datatype : MPI_BYTE, &got);
		if ((size_t)got != req->count) {
			_astro_mpi_error("received %d bytes from rank %d (tag %lld) but the handle packs to %zu: register the data with the same layout and size on both ranks",
					 got, req->peer, (long long)req->tag64, req->count);
			req->ret = -EINVAL;
		}
	}
}

struct pending
{
	size_t n, cap;
	struct _astro_mpi_req **reqs;
	MPI_Request *mpi;
	int *indices;
	MPI_Status *statuses;
};

static bool pending_add(struct pending *p, struct _astro_mpi_req *req)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		void *a = realloc(p->reqs, cap * sizeof(*p->reqs));
		if (a)
			p->reqs = a;
		void *b = realloc(p->mpi, cap * sizeof(*p->mpi));
		if (b)
			p->mpi = b;
		void *c = realloc(p->indices, cap * sizeof(*p->indices));
		if (c)
			p->indices = c;
		void *d = realloc(p->statuses, cap * sizeof(*p->statuses));
		if (d)
			p->statuses = d;
		if (!a || !b || !c || !d)
			return false;
		p->cap = cap;
	}
	p->reqs[p->n] = req;
	p->mpi[p->n] = req->mpi_req;
	p->n++;
	return true;
}

/* Tests the pending requests; finishes those done. Returns how many. */
static int pending_test(struct pending *p)
{
	int outcount = 0;
	_astro_mpi_lock();
	int err = MPI_Testsome((int)p->n, p->mpi, &outcount, p->indices, p->statuses);
	if (err != MPI_SUCCESS && err != MPI_ERR_IN_STATUS) {
		_astro_mpi_unlock();
		_astro_mpi_error("MPI_Testsome failed (error %d): the %zu communications in flight are abandoned", err, p->n);
		for (size_t i = 0; i < p->n; i++) {
			p->reqs[i]->ret = -EIO;
			req_finish(p->reqs[i]);
		}
		p->n = 0;
		return 1;
	}
	if (outcount == MPI_UNDEFINED)
		outcount = 0;
	struct _astro_mpi_req *done[outcount > 0 ? outcount : 1];
	for (int k = 0; k < outcount; k++) {
		int i = p->indices[k];
		done[k] = p->reqs[i];
		req_completed(done[k], &p->statuses[k], err == MPI_ERR_IN_STATUS);
		p->reqs[i] = NULL;
	}
	_astro_mpi_unlock();
	if (outcount) {
		size_t kept = 0;
		for (size_t i = 0; i < p->n; i++) {
			if (p->reqs[i]) {
				p->reqs[kept] = p->reqs[i];
				p->mpi[kept] = p->mpi[i];
				kept++;
			}
		}
		p->n = kept;
	}
	for (int k = 0; k < outcount; k++)
		req_finish(done[k]);
	return outcount;
}

static void *progress_main(void *unused)
{
	(void)unused;
	struct pending p = { 0 };
	unsigned idle_rounds = 0;
	double last_progress = starpu_timing_now();

	starpu_pthread_mutex_lock(&prog.lock);
	for (;;) {
		struct _astro_mpi_req *incoming = prog.head;
		prog.head = prog.tail = NULL;
		bool calls = prog.calls;
		prog.calls = false;
		if (!incoming && !calls && p.n == 0 && !_astro_mpi_envelope_waiting()) {
			if (prog.stop)
				break;
			starpu_pthread_cond_wait(&prog.wake, &prog.lock);
			continue;
		}
		starpu_pthread_mutex_unlock(&prog.lock);

		bool progressed = incoming != NULL || calls;
#ifdef STARPU_SIMGRID
		if (calls)
			astro_sim_rank_serve();
#endif
		while (incoming) {
			struct _astro_mpi_req *req = incoming;
			incoming = req->next;
			if (req->enveloped && req->kind == _ASTRO_MPI_RECV) {
				if (_astro_mpi_envelope_wait(req)) /* its message had come */
					req_finish(req);
			} else if (!req_start(req))
				req_finish(req);
			else if (!pending_add(&p, req)) {
				_astro_mpi_error("out of memory for the list of communications in flight: one is abandoned");
				req->ret = -ENOMEM;
				req_finish(req);
			}
		}
		if (p.n && pending_test(&p) > 0)
			progressed = true;
		if (_astro_mpi_envelope_waiting() && _astro_mpi_envelope_poll(req_finish) > 0)
			progressed = true;
		double now = starpu_timing_now();
		if (progressed) {
			idle_rounds = 0;
			last_progress = now;
		}

		starpu_pthread_mutex_lock(&prog.lock);
		if (!progressed && !prog.head && (p.n || _astro_mpi_envelope_waiting())) {
			/* A message is often a round trip away: poll politely for a while, then less and less often
			 * (in a simulation, only in virtual time: a yield would not let the clock run). */
			bool spin = now - last_progress < 2000;
#ifdef STARPU_SIMGRID
			spin = false;
#endif
			if (spin) {
				starpu_pthread_mutex_unlock(&prog.lock);
				astro_thread_yield();
				starpu_pthread_mutex_lock(&prog.lock);
			} else {
				unsigned shift = idle_rounds < 4 ? idle_rounds++ : 4;
				long wait_ns = 20000L << shift; /* 20 us .. 320 us */
				astro_cond_wait_for(&prog.wake, &prog.lock, (uint64_t)wait_ns);
			}
		}
	}
	starpu_pthread_mutex_unlock(&prog.lock);
	_astro_mpi_envelope_shutdown();
	free(p.reqs);
	free(p.mpi);
	free(p.indices);
	free(p.statuses);
	return NULL;
}

/* The requests not finished, for the runtime's reports of a wait that hangs (astro_wait_describer_set):
 * each with its peer and what it waits for. */
#define DESCRIBED_MAX 8
static void describe_requests(char *buf, size_t len)
{
	size_t used = 0;
	unsigned n = 0;
	double now = starpu_timing_now();
	starpu_pthread_mutex_lock(&prog.lock);
	for (const struct _astro_mpi_req *r = prog.live; r; r = r->live_next, n++) {
		if (n >= DESCRIBED_MAX || used >= len)
			continue;
		const char *why = !r->held && (r->kind == _ASTRO_MPI_SEND || r->kind == _ASTRO_MPI_RECV)
					  ? "it waits for the accesses to its data submitted before it"
				  : r->kind == _ASTRO_MPI_RECV ? "rank %d has not sent the matching message: that rank stopped (SIGSTOP, a crash, a "
								 "network partition) or its program posts no such send"
				  : r->kind == _ASTRO_MPI_SEND ? "rank %d has not received it: that rank stopped (SIGSTOP, a crash, a network "
								 "partition) or its program posts no such receive"
							       : "rank %d, or another rank of the communicator, has not joined it";
		int k = snprintf(buf + used, len - used, "StarPU-MPI: %s rank %d (data tag %lld) for %.1f s, not complete: ", kind_name(r),
				 r->peer, (long long)r->tag64, (now - r->created_us) / 1e6);
		if (k > 0)
			used += (size_t)k;
		if (used < len) {
			k = snprintf(buf + used, len - used, why, r->peer);
			if (k > 0)
				used += (size_t)k;
		}
		if (used < len) {
			k = snprintf(buf + used, len - used, "\n");
			if (k > 0)
				used += (size_t)k;
		}
	}
	starpu_pthread_mutex_unlock(&prog.lock);
	if (n > DESCRIBED_MAX && used < len)
		snprintf(buf + used, len - used, "StarPU-MPI: ... and %u more communications not complete\n", n - DESCRIBED_MAX);
}

static void progress_on_rank(void *unused)
{
	progress_main(unused);
}

/* Binds the calling thread to processing unit cpuid: whether it is bound there. A unit a worker
 * (or another thread) holds is shared, said by starpu_bind_thread_on's warning and its -1, but the
 * thread is bound all the same: its affinity then holds that unit alone. */
static bool bind_on(int cpuid)
{
	if (starpu_bind_thread_on(cpuid, STARPU_THREAD_ACTIVE, "MPI") == 0)
		return true;
	cpu_set_t set;
	CPU_ZERO(&set);
	if (sched_getaffinity(0, sizeof(set), &set) != 0 || CPU_COUNT(&set) != 1)
		return false;
	int os_index = starpu_get_pu_os_index((unsigned)cpuid);
	return os_index >= 0 && CPU_ISSET(os_index, &set);
}

/* The progression thread: under SMPI, it hands the loop to the rank's actor, the one that can
 * exchange MPI messages, and waits there until the loop ends. */
static void *progress_thread(void *unused)
{
	/* STARPU_MPI_THREAD_CPUID: the thread keeps that processing unit (SMPI's actors are not bound). */
	int cpuid = starpu_getenv_number_default("STARPU_MPI_THREAD_CPUID", -1);
	if (cpuid >= 0 && !_astro_mpi_smpi())
		_astro_mpi_set_thread_cpuid(bind_on(cpuid) ? cpuid : -1);
	starpu_pthread_mutex_lock(&prog.lock);
	prog.bound = true;
	starpu_pthread_cond_broadcast(&prog.idle);
	starpu_pthread_mutex_unlock(&prog.lock);
	_astro_mpi_on_rank(progress_on_rank, unused);
	return NULL;
}

#ifdef STARPU_SIMGRID
/* An MPI call handed to the rank's actor while it runs the loop: the loop serves it. */
static void progress_wake_for_call(void)
{
	starpu_pthread_mutex_lock(&prog.lock);
	prog.calls = true;
	starpu_pthread_cond_signal(&prog.wake);
	starpu_pthread_mutex_unlock(&prog.lock);
}
#endif

int _astro_mpi_progress_start(void)
{
	prog.stop = false;
	prog.bound = false;
#ifdef STARPU_SIMGRID
	astro_sim_rank_waker(progress_wake_for_call);
#endif
	int err = starpu_pthread_create(&prog.thread, NULL, progress_thread, NULL);
	if (err) {
		_astro_mpi_error("starpu_mpi_init: cannot start the progression thread: %s", strerror(err));
		return -err;
	}
	prog.started = true;
	/* starpu_mpi_get_thread_cpuid() answers as soon as starpu_mpi_init*() returns. */
	starpu_pthread_mutex_lock(&prog.lock);
	while (!prog.bound)
		starpu_pthread_cond_wait(&prog.idle, &prog.lock);
	starpu_pthread_mutex_unlock(&prog.lock);
	astro_wait_describer_set(describe_requests);
	return 0;
}

void _astro_mpi_progress_stop(void)
{
	if (!prog.started)
		return;
	astro_wait_describer_set(NULL);
	starpu_pthread_mutex_lock(&prog.lock);
	prog.stop = true;
	starpu_pthread_cond_signal(&prog.wake);
	starpu_pthread_mutex_unlock(&prog.lock);
	starpu_pthread_join(prog.thread, NULL);
#ifdef STARPU_SIMGRID
	astro_sim_rank_waker(NULL);
#endif
	prog.started = false;
}

/* ------------------------------------------------------------- requests */

static struct _astro_mpi_req *req_new(enum _astro_mpi_req_kind kind, int peer, int mpi_tag, MPI_Comm comm)
{
	struct _astro_mpi_req *req = calloc(1, sizeof(*req));
	if (!req) {
		_astro_mpi_error("out of memory for a communication request");
		return NULL;
	}
	req->kind = kind;
	req->peer = peer;
	req->mpi_tag = mpi_tag;
	req->comm = comm;
	req->mpi_req = MPI_REQUEST_NULL;
	req->datatype = MPI_DATATYPE_NULL;
	starpu_pthread_mutex_init(&req->lock, NULL);
	starpu_pthread_cond_init(&req->cond, NULL);
	req->created_us = starpu_timing_now();
	starpu_pthread_mutex_lock(&prog.lock);
	__atomic_add_fetch(&prog.outstanding, 1, __ATOMIC_RELEASE);
	req->live_next = prog.live;
	if (prog.live)
		prog.live->live_prev = req;
	prog.live = req;
	starpu_pthread_mutex_unlock(&prog.lock);
	return req;
}

/* The arguments of a send or receive: 0, or -EINVAL said. */
static int check_post(starpu_data_handle_t handle, int peer, starpu_mpi_tag_t tag, MPI_Comm comm, bool detached, const starpu_mpi_req *out,
		      const char *fn)
{
	int rank, size, ret;

	if (!_astro_mpi_running(fn))
		return -EINVAL;
	if (!detached && !out) {
		_astro_mpi_error("%s: NULL request pointer: pass where to store the request (or use the _detached form)", fn);
		return -EINVAL;
	}
	if (!handle) {
		_astro_mpi_error("%s: NULL data handle: register the data first", fn);
		return -EINVAL;
	}
	ret = _astro_mpi_comm_info(comm, &rank, &size, fn);
	if (ret)
		return ret;
	if (peer < 0 || peer >= size) {
		_astro_mpi_error("%s: rank %d is not in the communicator (ranks 0 to %d)", fn, peer, size - 1);
		return -EINVAL;
	}
	if (tag < 0) {
		_astro_mpi_error("%s: tag %lld is negative: data tags go from 0 to %lld", fn, (long long)tag, (long long)INT64_MAX);
		return -EINVAL;
	}
	return 0;
}

int _astro_mpi_post(enum _astro_mpi_req_kind kind, starpu_data_handle_t handle, int peer, starpu_mpi_tag_t tag, MPI_Comm comm,
		    bool ssend, bool detached, int sequential_consistency, void (*callback)(void *), void *arg,
		    starpu_mpi_req *out, const char *fn)
{
	int ret = check_post(handle, peer, tag, comm, detached, out, fn);
	if (ret)
		return ret;
	bool enveloped = _astro_mpi_envelope_needed(tag);
	struct _astro_mpi_req *req = req_new(kind, peer, enveloped ? _astro_mpi_envelope_tag() : (int)tag, comm);
	if (!req)
		return -ENOMEM;
	req->tag64 = tag;
	req->enveloped = enveloped;
	req->handle = handle;
	req->ssend = ssend;
	req->detached = detached;
	req->callback = callback;
	req->arg = arg;
	if (out)
		*out = detached ? NULL : req;
	ret = starpu_data_acquire_cb_sequential_consistency(handle, kind == _ASTRO_MPI_SEND ? STARPU_R : STARPU_W,
							    kind == _ASTRO_MPI_SEND ? send_granted : recv_granted, req,
							    sequential_consistency);
	if (ret) {
		if (out)
			*out = NULL;
		req->detached = true;
		req->callback = NULL;
		req->ret = ret;
		req_finish(req);
		return ret;
	}
	return 0;
}

/* ------------------------------------------------------------ the public API */

int starpu_mpi_isend(starpu_data_handle_t data_handle, starpu_mpi_req *req, int dest, starpu_mpi_tag_t data_tag, MPI_Comm comm)
{
	return _astro_mpi_post(_ASTRO_MPI_SEND, data_handle, dest, data_tag, comm, false, false, 1, NULL, NULL, req, "starpu_mpi_isend");
}

int starpu_mpi_isend_prio(starpu_data_handle_t data_handle, starpu_mpi_req *req, int dest, starpu_mpi_tag_t data_tag, int prio, MPI_Comm comm)
{
	(void)prio;
	return starpu_mpi_isend(data_handle, req, dest, data_tag, comm);
}

int starpu_mpi_issend(starpu_data_handle_t data_handle, starpu_mpi_req *req, int dest, starpu_mpi_tag_t data_tag, MPI_Comm comm)
{
	return _astro_mpi_post(_ASTRO_MPI_SEND, data_handle, dest, data_tag, comm, true, false, 1, NULL, NULL, req, "starpu_mpi_issend");
}

int starpu_mpi_issend_prio(starpu_data_handle_t data_handle, starpu_mpi_req *req, int dest, starpu_mpi_tag_t data_tag, int prio, MPI_Comm comm)
{
	(void)prio;
	return starpu_mpi_issend(data_handle, req, dest, data_tag, comm);
}

int starpu_mpi_irecv(starpu_data_handle_t data_handle, starpu_mpi_req *req, int source, starpu_mpi_tag_t data_tag, MPI_Comm comm)
{
	return _astro_mpi_post(_ASTRO_MPI_RECV, data_handle, source, data_tag, comm, false, false, 1, NULL, NULL, req, "starpu_mpi_irecv");
}

/* The blocking forms. With MPI_THREAD_MULTIPLE, the calling thread acquires
 * the data and makes the MPI call itself: no hand-off to the progression
 * thread and back, which is most of a small message's time on a loaded
 * machine. Not while other requests are outstanding: one of them may be a
 * message to the same peer with the same tag, not posted yet, which this one
 * must not overtake (MPI matches messages in the order they are posted).
 * Otherwise (and for tags in envelopes), a request and its wait, in order
 * behind the others. */
static int blocking(enum _astro_mpi_req_kind kind, starpu_data_handle_t handle, int peer, starpu_mpi_tag_t tag, MPI_Comm comm,
		    MPI_Status *status, const char *fn)
{
	starpu_mpi_req r = NULL;
	int ret = check_post(handle, peer, tag, comm, false, &r, fn);
	if (ret)
		return ret;
	if (!_astro_mpi_thread_multiple() || _astro_mpi_envelope_needed(tag) || __atomic_load_n(&prog.outstanding, __ATOMIC_ACQUIRE)) {
		ret = _astro_mpi_post(kind, handle, peer, tag, comm, false, false, 1, NULL, NULL, &r, fn);
		return ret ? ret : starpu_mpi_wait(&r, status);
	}
	/* The message's fields only (up to lock): the waiter's part is never used here, and zeroing
	 * it was an eighth of the runtime's instructions per message. */
	struct _astro_mpi_req req;
	memset(&req, 0, offsetof(struct _astro_mpi_req, lock));
	req.kind = kind;
	req.handle = handle;
	req.peer = peer;
	req.mpi_tag = (int)tag;
	req.tag64 = tag;
	req.comm = comm;
	req.datatype = MPI_DATATYPE_NULL;
	req.mpi_req = MPI_REQUEST_NULL;
	ret = starpu_data_acquire(handle, kind == _ASTRO_MPI_SEND ? STARPU_R : STARPU_W);
	if (ret)
		return ret;
	if (!in_place(&req)) {
		starpu_ssize_t count = 0;
		void *ptr = NULL;
		ret = starpu_data_pack_node(handle, STARPU_MAIN_RAM, kind == _ASTRO_MPI_SEND ? &ptr : NULL, &count);
		if (ret == 0)
			ret = one_message(&req, count);
		req.buffer = ptr;
		req.count = (size_t)count;
		if (ret == 0 && kind == _ASTRO_MPI_RECV) {
			req.buffer = (void *)starpu_malloc_on_node_flags(STARPU_MAIN_RAM, req.count ? req.count : 1, 0);
			if (!req.buffer) {
				_astro_mpi_error("%s: out of memory for %zu bytes", fn, req.count);
				ret = -ENOMEM;
			}
		}
	}
	if (ret == 0) {
		MPI_Datatype type = req.datatype != MPI_DATATYPE_NULL ? req.datatype : MPI_BYTE;
		int err;
		if (kind == _ASTRO_MPI_SEND) {
			observe_message(&req, ASTRO_MOMENT_MPI_SEND);
			err = MPI_Send(req.buffer, (int)req.count, type, peer, (int)tag, comm);
		} else {
			err = MPI_Recv(req.buffer, (int)req.count, type, peer, (int)tag, comm, &req.status);
		}
		if (err != MPI_SUCCESS)
			mpi_failed(&req, kind == _ASTRO_MPI_SEND ? "MPI_Send" : "MPI_Recv", err);
		else
			req_completed(&req, &req.status, false);
		ret = req.ret;
	}
	if (kind == _ASTRO_MPI_RECV && ret == 0) {
		if (status && status != MPI_STATUS_IGNORE)
			*status = req.status;
		observe_message(&req, ASTRO_MOMENT_MPI_RECV);
		if (!req.in_place) {
			ret = starpu_data_unpack_node(handle, STARPU_MAIN_RAM, req.buffer, req.count) == 0 ? 0 : -EINVAL;
			req.buffer = NULL; /* unpack frees it */
		}
	}
	if (req.datatype != MPI_DATATYPE_NULL)
		req.free_datatype(&req.datatype);
	if (req.in_place)
		req.buffer = NULL;
	buffer_free(&req);
	starpu_data_release(handle);
	return ret;
}

int starpu_mpi_send(starpu_data_handle_t data_handle, int dest, starpu_mpi_tag_t data_tag, MPI_Comm comm)
{
	return blocking(_ASTRO_MPI_SEND, data_handle, dest, data_tag, comm, MPI_STATUS_IGNORE, "starpu_mpi_send");
}

int starpu_mpi_send_prio(starpu_data_handle_t data_handle, int dest, starpu_mpi_tag_t data_tag, int prio, MPI_Comm comm)
{
	(void)prio;
	return starpu_mpi_send(data_handle, dest, data_tag, comm);
}

int starpu_mpi_recv(starpu_data_handle_t data_handle, int source, starpu_mpi_tag_t data_tag, MPI_Comm comm, MPI_Status *status)
{
	return blocking(_ASTRO_MPI_RECV, data_handle, source, data_tag, comm, status, "starpu_mpi_recv");
}

int starpu_mpi_recv_prio(starpu_data_handle_t data_handle, int source, starpu_mpi_tag_t data_tag, int prio, MPI_Comm comm, MPI_Status *status)
{
	(void)prio;
	return blocking(_ASTRO_MPI_RECV, data_handle, source, data_tag, comm, status, "starpu_mpi_recv_prio");
}

int starpu_mpi_isend_detached(starpu_data_handle_t data_handle, int dest, starpu_mpi_tag_t data_tag, MPI_Comm comm, void (*callback)(void *), void *arg)
{
	return _astro_mpi_post(_ASTRO_MPI_SEND, data_handle, dest, data_tag, comm, false, true, 1, callback, arg, NULL, "starpu_mpi_isend_detached");
}

int starpu_mpi_isend_detached_prio(starpu_data_handle_t data_handle, int dest, starpu_mpi_tag_t data_tag, int prio, MPI_Comm comm, void (*callback)(void *), void *arg)
{
	(void)prio;
	return starpu_mpi_isend_detached(data_handle, dest, data_tag, comm, callback, arg);
}

int starpu_mpi_issend_detached(starpu_data_handle_t data_handle, int dest, starpu_mpi_tag_t data_tag, MPI_Comm comm, void (*callback)(void *), void *arg)
{
	return _astro_mpi_post(_ASTRO_MPI_SEND, data_handle, dest, data_tag, comm, true, true, 1, callback, arg, NULL, "starpu_mpi_issend_detached");
}

int starpu_mpi_issend_detached_prio(starpu_data_handle_t data_handle, int dest, starpu_mpi_tag_t data_tag, int prio, MPI_Comm comm, void (*callback)(void *), void *arg)
{
	(void)prio;
	return starpu_mpi_issend_detached(data_handle, dest, data_tag, comm, callback, arg);
}

int starpu_mpi_irecv_detached(starpu_data_handle_t data_handle, int source, starpu_mpi_tag_t data_tag, MPI_Comm comm, void (*callback)(void *), void *arg)
{
	return _astro_mpi_post(_ASTRO_MPI_RECV, data_handle, source, data_tag, comm, false, true, 1, callback, arg, NULL, "starpu_mpi_irecv_detached");
}

int starpu_mpi_irecv_detached_prio(starpu_data_handle_t data_handle, int source, starpu_mpi_tag_t data_tag, int prio, MPI_Comm comm,
				   void (*callback)(void *), void *arg)
{
	(void)prio;
	return _astro_mpi_post(_ASTRO_MPI_RECV, data_handle, source, data_tag, comm, false, true, 1, callback, arg, NULL, "starpu_mpi_irecv_detached_prio");
}

int starpu_mpi_irecv_detached_sequential_consistency(starpu_data_handle_t data_handle, int source, starpu_mpi_tag_t data_tag, MPI_Comm comm,
						     void (*callback)(void *), void *arg, int sequential_consistency)
{
	return _astro_mpi_post(_ASTRO_MPI_RECV, data_handle, source, data_tag, comm, false, true, sequential_consistency, callback, arg, NULL,
			       "starpu_mpi_irecv_detached_sequential_consistency");
}

int starpu_mpi_wait(starpu_mpi_req *req, MPI_Status *status)
{
	if (!req || !*req) {
		_astro_mpi_error("starpu_mpi_wait: no request: pass the one starpu_mpi_isend()/irecv() gave (a request is waited only once)");
		return -EINVAL;
	}
	struct _astro_mpi_req *r = *req;
	starpu_pthread_mutex_lock(&r->lock);
	while (!r->done)
		starpu_pthread_cond_wait(&r->cond, &r->lock);
	starpu_pthread_mutex_unlock(&r->lock);
	if (status && status != MPI_STATUS_IGNORE)
		*status = r->status;
	int ret = r->ret;
	req_free(r);
	*req = NULL;
	return ret;
}

int starpu_mpi_test(starpu_mpi_req *req, int *flag, MPI_Status *status)
{
	if (!req || !*req || !flag) {
		_astro_mpi_error("starpu_mpi_test: %s: pass the request starpu_mpi_isend()/irecv() gave and where to write the flag",
				 flag ? "no request (a finished request is tested only once)" : "NULL flag");
		return -EINVAL;
	}
	struct _astro_mpi_req *r = *req;
	starpu_pthread_mutex_lock(&r->lock);
	bool done = r->done;
	starpu_pthread_mutex_unlock(&r->lock);
	*flag = done;
	if (done)
		return starpu_mpi_wait(req, status);
	/* Programs poll in a loop: leave the processor to the communication thread, which finishes the request
	 * (on a machine with more threads than cores, a loop that never yields starves it). */
	astro_thread_yield();
	return 0;
}

int starpu_mpi_barrier(MPI_Comm comm)
{
	int rank, size;
	if (!_astro_mpi_running("starpu_mpi_barrier"))
		return -EINVAL;
	int ret = _astro_mpi_comm_info(comm, &rank, &size, "starpu_mpi_barrier");
	if (ret)
		return ret;
	struct _astro_mpi_req *req = req_new(_ASTRO_MPI_BARRIER, -1, -1, comm);
	if (!req)
		return -ENOMEM;
	starpu_mpi_req handle = req;
	req_enqueue(req);
	return starpu_mpi_wait(&handle, MPI_STATUS_IGNORE);
}

int _astro_mpi_call(int (*start)(void *arg, MPI_Request *mpi_req), void *arg, MPI_Comm comm, starpu_mpi_req *out)
{
	struct _astro_mpi_req *req = req_new(_ASTRO_MPI_CALL, -1, -1, comm);
	if (!req)
		return -ENOMEM;
	req->start = start;
	req->start_arg = arg;
	*out = req;
	req_enqueue(req);
	return 0;
}

int starpu_mpi_wait_for_all(MPI_Comm comm)
{
	if (!_astro_mpi_running("starpu_mpi_wait_for_all"))
		return -EINVAL;
	/* A received message may release tasks, which may send more: repeat until both are quiet. */
	for (;;) {
		starpu_task_wait_for_all();
		starpu_pthread_mutex_lock(&prog.lock);
		while (prog.outstanding)
			starpu_pthread_cond_wait(&prog.idle, &prog.lock);
		starpu_pthread_mutex_unlock(&prog.lock);
		if (starpu_task_nsubmitted() == 0)
			break;
	}
	return starpu_mpi_barrier(comm);
}
