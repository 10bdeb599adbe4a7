/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Tags beyond MPI's (MPI_TAG_UB): the envelope protocol. A message whose
 * 64-bit data tag does not fit MPI's tags travels on one reserved MPI tag
 * (MPI_TAG_UB itself), behind a small header carrying the real tag. The
 * receiving progression thread, while it has such receives waiting, probes
 * that tag (MPI_Improbe, then MPI_Mrecv of the matched message), reads the
 * header and hands the payload to the oldest waiting receive of that
 * source, tag and communicator; a message nobody waits for yet is kept
 * until its receive comes. MPI keeps the order of messages between two
 * ranks on one tag, so messages with the same data tag arrive in order.
 * Only the progression thread runs this file: no lock.
 */
#include "mpi_private.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A message received before its receive was posted. */
struct early
{
	int source;
	MPI_Comm comm;
	starpu_mpi_tag_t tag;
	void *bytes;		/* header and payload, malloc'ed */
	int count;
	MPI_Status status;
	struct early *next;
};

static struct _astro_mpi_req *waiting_head, *waiting_tail;	/* linked by next, oldest first */
static struct early *early_head, *early_tail;

/* starpu_mpi_set_communication_tag(): the MPI tag envelopes travel on, -1 for MPI_TAG_UB. Set
 * before starpu_mpi_init(), the same on every rank; a message whose own tag is that one is
 * enveloped too, so that it never meets the envelopes on one tag. */
static int communication_tag = -1;

bool _astro_mpi_envelope_needed(starpu_mpi_tag_t tag)
{
	return tag >= _astro_mpi_tag_ub || (communication_tag >= 0 && tag == communication_tag);
}

int _astro_mpi_envelope_tag(void)
{
	return communication_tag >= 0 && communication_tag <= _astro_mpi_tag_ub ? communication_tag : _astro_mpi_tag_ub;
}

void starpu_mpi_set_communication_tag(int tag)
{
	if (_astro_mpi_is_running()) {
		_astro_mpi_error("starpu_mpi_set_communication_tag: StarPU-MPI is running: messages may be under way on the tag in use; "
				 "set it before starpu_mpi_init(), the same on every rank");
		return;
	}
	if (tag < 0) {
		_astro_mpi_error("starpu_mpi_set_communication_tag: %d is negative: give an MPI tag, 0 to MPI_TAG_UB", tag);
		return;
	}
	communication_tag = tag;
}

int starpu_mpi_get_communication_tag(void)
{
	return _astro_mpi_envelope_tag();
}

void _astro_mpi_communication_tag_check(void)
{
	if (communication_tag > _astro_mpi_tag_ub) {
		_astro_mpi_error("starpu_mpi_set_communication_tag: %d is above this MPI's MPI_TAG_UB (%d): MPI_TAG_UB is used instead",
				 communication_tag, _astro_mpi_tag_ub);
		communication_tag = -1;
	}
}

void _astro_mpi_envelope_header(void *header, starpu_mpi_tag_t tag)
{
	int64_t t = tag;
	memcpy(header, &t, sizeof(t));
}

/* Gives req the payload of a message (header included in bytes); false (said) when it does not fit. */
static void deliver(struct _astro_mpi_req *req, const void *bytes, int count, const MPI_Status *status)
{
	req->status = *status;
	size_t payload = (size_t)count - _ASTRO_MPI_ENVELOPE_HEADER;
	if (payload != req->count) {
		_astro_mpi_error("received %zu bytes from rank %d (tag %lld) but the handle packs to %zu: register the data with the same layout and size on both ranks",
				 payload, req->peer, (long long)req->tag64, req->count);
		req->ret = -EINVAL;
		return;
	}
	memcpy(req->buffer, (const char *)bytes + _ASTRO_MPI_ENVELOPE_HEADER, payload);
}

bool _astro_mpi_envelope_wait(struct _astro_mpi_req *req)
{
	for (struct early **link = &early_head, *prev = NULL; *link; prev = *link, link = &(*link)->next) {
		struct early *e = *link;
		if (e->source != req->peer || e->comm != req->comm || e->tag != req->tag64)
			continue;
		*link = e->next;
		if (early_tail == e)
			early_tail = prev;
		deliver(req, e->bytes, e->count, &e->status);
		free(e->bytes);
		free(e);
		return true;
	}
	req->next = NULL;
	if (waiting_tail)
		waiting_tail->next = req;
	else
		waiting_head = req;
	waiting_tail = req;
	return false;
}

bool _astro_mpi_envelope_waiting(void)
{
	return waiting_head != NULL;
}

/* The oldest waiting receive for this message, taken out of the list; NULL when none. */
static struct _astro_mpi_req *take_waiting(int source, MPI_Comm comm, starpu_mpi_tag_t tag)
{
	for (struct _astro_mpi_req **link = &waiting_head, *prev = NULL; *link; prev = *link, link = &(*link)->next) {
		struct _astro_mpi_req *req = *link;
		if (req->peer != source || req->comm != comm || req->tag64 != tag)
			continue;
		*link = req->next;
		if (waiting_tail == req)
			waiting_tail = prev;
		return req;
	}
	return NULL;
}

/* Receives every enveloped message comm has for us; finishes the receives they complete. */
static int drain(MPI_Comm comm, void (*finish)(struct _astro_mpi_req *))
{
	int done = 0;
	for (;;) {
		int flag = 0, count = 0;
		MPI_Message msg;
		MPI_Status status;
		_astro_mpi_lock();
		int err = MPI_Improbe(MPI_ANY_SOURCE, _astro_mpi_envelope_tag(), comm, &flag, &msg, &status);
		if (err == MPI_SUCCESS && flag)
			MPI_Get_count(&status, MPI_BYTE, &count);
		void *bytes = flag && count >= _ASTRO_MPI_ENVELOPE_HEADER ? malloc((size_t)count) : NULL;
		if (err == MPI_SUCCESS && flag)
			err = MPI_Mrecv(bytes ? bytes : &count, bytes ? count : 0, MPI_BYTE, &msg, &status);
		_astro_mpi_unlock();
		if (err != MPI_SUCCESS) {
			_astro_mpi_error("receiving a message with a tag beyond MPI's failed (error %d): it is lost", err);
			free(bytes);
			return done;
		}
		if (!flag)
			return done;
		if (!bytes) {
			_astro_mpi_error("a message with a tag beyond MPI's from rank %d is %s: it is dropped", status.MPI_SOURCE,
					 count < _ASTRO_MPI_ENVELOPE_HEADER ? "shorter than its header" : "too large for the memory left");
			continue;
		}
		int64_t tag;
		memcpy(&tag, bytes, sizeof(tag));
		struct _astro_mpi_req *req = take_waiting(status.MPI_SOURCE, comm, tag);
		if (req) {
			deliver(req, bytes, count, &status);
			free(bytes);
			finish(req);
			done++;
			continue;
		}
		struct early *e = malloc(sizeof(*e));
		if (!e) {
			_astro_mpi_error("out of memory for a message with a tag beyond MPI's, from rank %d: it is dropped", status.MPI_SOURCE);
			free(bytes);
			continue;
		}
		*e = (struct early){ status.MPI_SOURCE, comm, tag, bytes, count, status, NULL };
		if (early_tail)
			early_tail->next = e;
		else
			early_head = e;
		early_tail = e;
	}
}

int _astro_mpi_envelope_poll(void (*finish)(struct _astro_mpi_req *))
{
	/* Each communicator a receive waits on, once (a few: beyond 16, the others wait their turn). */
	MPI_Comm comms[16];
	int ncomms = 0, done = 0;
	for (struct _astro_mpi_req *req = waiting_head; req && ncomms < 16; req = req->next) {
		bool seen = false;
		for (int i = 0; i < ncomms; i++)
			seen |= comms[i] == req->comm;
		if (!seen)
			comms[ncomms++] = req->comm;
	}
	for (int i = 0; i < ncomms; i++)
		done += drain(comms[i], finish);
	return done;
}

void _astro_mpi_envelope_shutdown(void)
{
	int dropped = 0;
	while (early_head) {
		struct early *e = early_head;
		early_head = e->next;
		free(e->bytes);
		free(e);
		dropped++;
	}
	early_tail = NULL;
	if (dropped)
		_astro_mpi_error("warning: %d message%s with a tag beyond MPI's %s never received: post the matching receives before shutting down",
				 dropped, dropped > 1 ? "s" : "", dropped > 1 ? "were" : "was");
}
