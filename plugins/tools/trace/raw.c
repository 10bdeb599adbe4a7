/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The recorder's deferred event writer (raw.h): the buffers, their helper
 * thread (it writes a full buffer to its thread's spill file while the
 * other fills, and asks for a buffer's pages ahead of its records), and the
 * replay of a thread's records into its OTF2 event writer at shutdown.
 */
#define _GNU_SOURCE
#include "raw.h"
#include <astrolabe/plugin.h>
#include <astrolabe/thread.h>
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The pages of a buffer are asked for this far ahead of its records. */
#define AHEAD ((size_t)1 << 20)

/* ---------------------------------------------------------------- helper */

/* A job of the helper: write [start, start + len) to w's spill file, or ask for those pages of one of w's buffers. */
struct job
{
	struct raw_writer *w;
	char *start;
	size_t len;
	bool write;
};

static struct
{
	starpu_pthread_mutex_t lock;
	starpu_pthread_cond_t cond; /* a job queued, one done, or stop */
	GQueue jobs;
	starpu_pthread_t thread;
	bool running, stop;
	bool no_populate; /* the kernel has no MADV_POPULATE_WRITE (before Linux 5.14): pages are taken as written */
} helper = { .lock = STARPU_PTHREAD_MUTEX_INITIALIZER, .cond = STARPU_PTHREAD_COND_INITIALIZER, .jobs = G_QUEUE_INIT };

static void spill_failed(struct raw_writer *w, int err)
{
	w->failed = true;
	w->error = err;
	/* A part of the buffer may have gone: the file keeps whole records only. */
	if (w->fd >= 0 && ftruncate(w->fd, (off_t)w->spilled) < 0) {
		/* Then nothing of it is replayed. */
		w->spilled = 0;
	}
}

/* Appends [p, end) to w's spill file (by the helper while w->spare_out, else by w's thread). */
static void write_out(struct raw_writer *w, const char *p, const char *end)
{
	if (w->failed || p == end)
		return;
	if (w->fd < 0) {
		w->fd = open(w->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (w->fd < 0) {
			spill_failed(w, errno);
			return;
		}
	}
	uint64_t bytes = (uint64_t)(end - p);
	while (p < end) {
		ssize_t n = write(w->fd, p, (size_t)(end - p));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			spill_failed(w, n < 0 ? errno : ENOSPC);
			return;
		}
		p += n;
	}
	w->spilled += bytes;
}

/* The pages of [start, start + len) that lie wholly inside it, made present and writable (their contents stay). */
static void populate(char *start, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t from = ((uintptr_t)start + page - 1) & ~(page - 1), to = ((uintptr_t)start + len) & ~(page - 1);
	if (to > from && madvise((void *)from, to - from, MADV_POPULATE_WRITE) < 0 && errno == EINVAL)
		__atomic_store_n(&helper.no_populate, true, __ATOMIC_RELAXED);
}

static void *helper_main(void *arg)
{
	(void)arg;
	astro_thread_set_name("trace-writer");
	starpu_pthread_mutex_lock(&helper.lock);
	for (;;) {
		while (!helper.stop && g_queue_is_empty(&helper.jobs))
			starpu_pthread_cond_wait(&helper.cond, &helper.lock);
		struct job *job = g_queue_pop_head(&helper.jobs);
		if (!job)
			break; /* stopped, nothing left */
		starpu_pthread_mutex_unlock(&helper.lock);
		if (job->write)
			write_out(job->w, job->start, job->start + job->len);
		else
			populate(job->start, job->len);
		starpu_pthread_mutex_lock(&helper.lock);
		job->w->jobs--;
		if (job->write)
			job->w->spare_out = false;
		starpu_pthread_cond_broadcast(&helper.cond);
		g_free(job);
	}
	starpu_pthread_mutex_unlock(&helper.lock);
	return NULL;
}

void raw_helper_start(void)
{
#ifdef STARPU_SIMGRID
	const bool simulated = true; /* a simulation's actors share one system thread: its writers write their own buffers */
#else
	const bool simulated = false;
#endif
	if (helper.running || simulated)
		return;
	helper.stop = false;
	int err = starpu_pthread_create(&helper.thread, NULL, helper_main, NULL);
	helper.running = err == 0;
	if (err)
		astro_log_error("trace", "cannot start the thread that writes full trace buffers (%s): each thread writes its own, "
				"pausing its tasks meanwhile (raise the process's thread limit: ulimit -u)", strerror(err));
}

void raw_helper_stop(void)
{
	if (!helper.running)
		return;
	starpu_pthread_mutex_lock(&helper.lock);
	helper.stop = true;
	starpu_pthread_cond_broadcast(&helper.cond);
	starpu_pthread_mutex_unlock(&helper.lock);
	starpu_pthread_join(helper.thread, NULL);
	helper.running = false;
}

static void queue(struct raw_writer *w, char *start, size_t len, bool write)
{
	struct job *job = g_new(struct job, 1);
	*job = (struct job){ w, start, len, write };
	starpu_pthread_mutex_lock(&helper.lock);
	w->jobs++;
	if (write)
		w->spare_out = true;
	g_queue_push_tail(&helper.jobs, job);
	starpu_pthread_cond_broadcast(&helper.cond);
	starpu_pthread_mutex_unlock(&helper.lock);
}

/* ---------------------------------------------------------------- writer */

/* Asks for the pages of buf from *asked on, up to len more. */
static void ask(struct raw_writer *w, uint64_t *buf, size_t *asked, size_t len)
{
	if (__atomic_load_n(&helper.no_populate, __ATOMIC_RELAXED)) {
		*asked = w->bytes;
		return;
	}
	if (len > w->bytes - *asked)
		len = w->bytes - *asked;
	queue(w, (char *)buf + *asked, len, false);
	*asked += len;
}

/* Asks for the pages of buf the next len bytes past those asked for; once they are all asked for, for the first ones
 * of the spare, where the records go on when buf is full (a short run takes no more than it uses and 2 MiB). */
static void ask_ahead(struct raw_writer *w, size_t len)
{
	if (w->asked < w->bytes)
		ask(w, w->buf, &w->asked, len);
	if (w->asked == w->bytes && !w->spare_asked)
		ask(w, w->spare, &w->spare_asked, 2 * AHEAD);
}

/* The limit: buf's end, or a MiB before the end of its pages asked for. */
static void set_limit(struct raw_writer *w)
{
	w->limit = w->end;
	if (w->asked < w->bytes && w->buf + (w->asked - AHEAD) / sizeof(uint64_t) < w->end)
		w->limit = w->buf + (w->asked - AHEAD) / sizeof(uint64_t);
}

void raw_init(struct raw_writer *w, size_t bytes, const char *path)
{
	memset(w, 0, sizeof(*w));
	w->fd = -1;
	w->bytes = bytes;
	w->buf = g_malloc(bytes); /* its pages are taken as it fills: a short run uses little of it */
	w->path = g_strdup(path);
	w->pos = w->mark = w->buf;
	w->end = w->buf + bytes / sizeof(uint64_t) - RAW_MOMENT_WORDS;
	w->asked = w->spare_asked = bytes;
	if (helper.running) {
		w->spare = g_malloc(bytes);
		w->asked = w->spare_asked = 0;
		ask_ahead(w, 2 * AHEAD);
	}
	set_limit(w);
}

/* The buffer is full: its events are written, and the attributes waiting for their event go to the start of the
 * buffer that fills next (a buffer holds many events: they fit). */
static void hand_over(struct raw_writer *w)
{
	size_t waiting = w->mark == w->buf ? 0 : (size_t)(w->pos - w->mark);
	if (!w->spare) {
		write_out(w, (const char *)w->buf, (const char *)w->mark);
		memmove(w->buf, w->mark, waiting * sizeof(uint64_t));
	} else {
		starpu_pthread_mutex_lock(&helper.lock);
		while (w->spare_out) /* the helper still writes the other one: the disk is slower than the records */
			starpu_pthread_cond_wait(&helper.cond, &helper.lock);
		bool failed = w->failed;
		starpu_pthread_mutex_unlock(&helper.lock);
		uint64_t *full = w->buf, *full_end = w->mark;
		size_t full_asked = w->asked;
		w->buf = w->spare;
		w->asked = w->spare_asked;
		w->spare = full;
		w->spare_asked = full_asked;
		memcpy(w->buf, full_end, waiting * sizeof(uint64_t));
		if (!failed && full_end > full)
			queue(w, (char *)full, (size_t)(full_end - full) * sizeof(uint64_t), true);
		w->end = w->buf + w->bytes / sizeof(uint64_t) - RAW_MOMENT_WORDS;
	}
	w->mark = w->buf;
	w->pos = w->buf + waiting;
}

void raw_overflow(struct raw_writer *w)
{
	if (w->pos > w->end)
		hand_over(w);
	else
		ask_ahead(w, AHEAD);
	set_limit(w);
}

void raw_finish(struct raw_writer *w)
{
	if (!w->spare)
		return;
	starpu_pthread_mutex_lock(&helper.lock);
	while (w->jobs)
		starpu_pthread_cond_wait(&helper.cond, &helper.lock);
	starpu_pthread_mutex_unlock(&helper.lock);
}

/* The attribute value of bits, by its type (raw.h: integers zero-extended, doubles as their bits). */
static OTF2_AttributeValue attribute_value(OTF2_Type type, uint64_t bits)
{
	OTF2_AttributeValue v;
	memset(&v, 0, sizeof(v));
	switch (type) {
	case OTF2_TYPE_UINT8: v.uint8 = (uint8_t)bits; break;
	case OTF2_TYPE_UINT32: v.uint32 = (uint32_t)bits; break;
	case OTF2_TYPE_INT32: v.int32 = (int32_t)(uint32_t)bits; break;
	case OTF2_TYPE_INT64: v.int64 = (int64_t)bits; break;
	case OTF2_TYPE_DOUBLE: memcpy(&v.float64, &bits, sizeof(v.float64)); break;
	case OTF2_TYPE_STRING: v.stringRef = (OTF2_StringRef)bits; break;
	default: v.uint64 = bits; break;
	}
	return v;
}

static OTF2_ErrorCode replay_words(const uint64_t *p, const uint64_t *end, OTF2_EvtWriter *writer, OTF2_AttributeList *attrs,
				   uint64_t *clock, uint64_t *nevents)
{
	while (p < end) {
		uint64_t h = *p++;
		enum raw_op op = (enum raw_op)(h & RAW_OP_MASK);
		OTF2_ErrorCode status;
		/* Most of a task's events first: a short parameter is one word, a state's Enter or Leave one or two. */
		if (op == RAW_PARAM_SHORT) {
			*clock += (h >> 10) & 0x3fffff;
			status = OTF2_EvtWriter_ParameterUnsignedInt(writer, attrs, *clock, (uint32_t)(h >> 4) & 63, h >> 32);
		} else if (op == RAW_ENTER || op == RAW_LEAVE) {
			uint32_t ref = (uint32_t)(h >> 4) & 0x0fffffff;
			if (h & RAW_WIDE) {
				if (p == end)
					return OTF2_ERROR_INVALID_DATA;
				ref = (uint32_t)*p++;
			}
			*clock += h >> 32;
			status = op == RAW_ENTER ? OTF2_EvtWriter_Enter(writer, attrs, *clock, ref) : OTF2_EvtWriter_Leave(writer, attrs, *clock, ref);
		} else if (op == RAW_ATTR || op == RAW_TIME) {
			if (p == end)
				return OTF2_ERROR_INVALID_DATA;
			uint64_t value = *p++;
			if (op == RAW_TIME) {
				*clock = value;
			} else {
				OTF2_Type type = (OTF2_Type)(h >> 4);
				OTF2_AttributeList_AddAttribute(attrs, (OTF2_AttributeRef)(h >> 32), type, attribute_value(type, value));
			}
			continue;
		} else {
			/* A parameter, a string's or a metric: the reference (when wide), then the value. */
			uint32_t ref = (uint32_t)(h >> 4) & 0x0fffffff;
			if ((size_t)(end - p) < 1 + !!(h & RAW_WIDE))
				return OTF2_ERROR_INVALID_DATA;
			if (h & RAW_WIDE)
				ref = (uint32_t)*p++;
			uint64_t value = *p++;
			*clock += h >> 32;
			if (op == RAW_PARAM) {
				status = OTF2_EvtWriter_ParameterUnsignedInt(writer, attrs, *clock, ref, value);
			} else if (op == RAW_PARAM_STRING) {
				status = OTF2_EvtWriter_ParameterString(writer, attrs, *clock, ref, (OTF2_StringRef)value);
			} else {
				OTF2_Type type = OTF2_TYPE_DOUBLE;
				OTF2_MetricValue v;
				memcpy(&v.floating_point, &value, sizeof(v.floating_point));
				status = OTF2_EvtWriter_Metric(writer, attrs, *clock, ref, 1, &type, &v);
			}
		}
		if (status != OTF2_SUCCESS)
			return status;
		(*nevents)++;
	}
	return OTF2_SUCCESS;
}

static OTF2_ErrorCode replay_file(struct raw_writer *w, OTF2_EvtWriter *writer, OTF2_AttributeList *attrs, uint64_t *clock,
				  uint64_t *nevents)
{
	if (w->fd < 0 || !w->spilled)
		return OTF2_SUCCESS;
	void *map = mmap(NULL, (size_t)w->spilled, PROT_READ, MAP_PRIVATE, w->fd, 0);
	if (map == MAP_FAILED)
		return OTF2_ERROR_MEM_FAULT;
	madvise(map, (size_t)w->spilled, MADV_SEQUENTIAL);
	const uint64_t *p = map;
	OTF2_ErrorCode status = replay_words(p, p + w->spilled / sizeof(uint64_t), writer, attrs, clock, nevents);
	munmap(map, (size_t)w->spilled);
	return status;
}

void raw_make_room(struct raw_writer *w, uint64_t ts)
{
	if (w->pos > w->limit)
		raw_overflow(w);
	/* A gap of 4 s or more, or the first record: the date itself (also for a date before the last record's). */
	if ((ts - w->last) >> 32) {
		bool settled = w->mark == w->pos; /* no attribute waits: the date is not dropped with one (raw_attr_clear) */
		w->pos[0] = RAW_TIME;
		w->pos[1] = ts;
		w->pos += 2;
		w->last = ts;
		if (settled)
			w->mark = w->pos;
		if (w->pos > w->limit) /* the moment still has its RAW_MOMENT_WORDS */
			raw_overflow(w);
	}
}

OTF2_ErrorCode raw_replay(struct raw_writer *w, OTF2_EvtWriter *writer, OTF2_AttributeList *attrs, uint64_t *clock,
			  uint64_t *nevents)
{
	*clock = 0;
	OTF2_ErrorCode status = replay_file(w, writer, attrs, clock, nevents);
	/* After a failed spill the archive holds what came before it, no gap. */
	if (status == OTF2_SUCCESS && !w->failed && w->buf)
		status = replay_words(w->buf, w->mark, writer, attrs, clock, nevents);
	OTF2_AttributeList_RemoveAllAttributes(attrs);
	raw_discard(w);
	return status;
}

void raw_discard(struct raw_writer *w)
{
	raw_finish(w); /* the helper is done with its buffers and its file */
	if (w->fd >= 0) {
		close(w->fd);
		unlink(w->path);
	}
	g_free(w->buf);
	g_free(w->spare);
	g_free(w->path);
	w->fd = -1;
	w->buf = w->spare = w->pos = w->mark = w->limit = w->end = NULL;
	w->path = NULL;
}
