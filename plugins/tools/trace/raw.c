/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The recorder's deferred event writer (raw.h): the spill of a full buffer
 * during the run, and the replay of a thread's records into its OTF2 event
 * writer at shutdown.
 */
#define _GNU_SOURCE
#include "raw.h"
#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

void raw_init(struct raw_writer *w, size_t bytes, const char *path)
{
	memset(w, 0, sizeof(*w));
	w->fd = -1;
	w->buf = g_malloc(bytes); /* pages are taken as they are written: a short run uses little of it */
	w->path = g_strdup(path);
	w->pos = w->mark = w->buf;
	w->limit = w->buf + bytes / sizeof(uint64_t) - RAW_MOMENT_WORDS;
}

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

static void spill_events(struct raw_writer *w)
{
	const char *p = (const char *)w->buf, *end = (const char *)w->mark;
	if (w->failed || p == end)
		return;
	if (w->fd < 0) {
		w->fd = open(w->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (w->fd < 0) {
			spill_failed(w, errno);
			return;
		}
	}
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
	w->spilled += (uint64_t)(end - (const char *)w->buf);
}

void raw_spill(struct raw_writer *w)
{
	spill_events(w);
	/* The attributes waiting for their event stay (a buffer holds many events: they fit). */
	size_t waiting = (size_t)(w->pos - w->mark);
	if (w->mark == w->buf)
		waiting = 0;
	memmove(w->buf, w->mark, waiting * sizeof(uint64_t));
	w->mark = w->buf;
	w->pos = w->buf + waiting;
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
		raw_spill(w);
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
			raw_spill(w);
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
	if (w->fd >= 0) {
		close(w->fd);
		unlink(w->path);
	}
	g_free(w->buf);
	g_free(w->path);
	w->fd = -1;
	w->buf = w->pos = w->mark = w->limit = NULL;
	w->path = NULL;
}
