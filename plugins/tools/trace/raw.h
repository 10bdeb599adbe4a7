/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The recorder's deferred event writer. While the run goes on, an event is
 * appended to its thread's own buffer as a fixed-layout record (no lock, no
 * call into OTF2: a few stores). Each thread has two buffers: a full one is
 * handed to the writer's helper thread, which writes it to the thread's
 * spill file while the other fills, so that the task path neither waits for
 * the disk nor takes page faults (the helper also asks the kernel for a
 * buffer's pages a MiB ahead of the records: MADV_POPULATE_WRITE). At
 * shutdown each thread's spill file then its buffer are replayed, in order,
 * into its OTF2 event writer. So the encoding of OTF2 (attribute lists,
 * compressed integers, chunks) leaves the task path, as StarPU's FxT keeps
 * raw records during the run. Without the helper (a simulation, whose
 * actors all run on one system thread, or a thread that could not start) a
 * full buffer is written by the thread that filled it, and reused.
 *
 * A record is one to three 64-bit words; the first holds its kind (3 bits)
 * and, for an event, a reference (28 bits: the region of an Enter or Leave,
 * the parameter, the metric; larger ones follow in a word of their own, flag
 * RAW_WIDE) and the time since the location's previous event (32 bits, ns;
 * a longer gap is a RAW_TIME record of the absolute date before the event):
 *   Enter, Leave    op | ref << 4 | dt << 32
 *   short param     op | ref << 4 (6 bits) | dt << 10 (22 bits) | value << 32
 *                   (a parameter of a 32-bit value, less than 4 ms after)
 *   other events    op | ref << 4 | dt << 32, then the value (the
 *                   parameter's, the string's id, the metric's double)
 *   attribute       op | OTF2 type << 4 | id << 32, then the value (an
 *                   integer zero-extended, a double's bits)
 *   time            op, then the date (ns)
 * An event's attributes are the records just before it. A task of the chain
 * benchmark takes 72 bytes (nine events).
 *
 * The writers below check nothing: the recorder makes room once per moment
 * (raw_needs_room, raw_make_room: a full buffer handed over, a long gap dated),
 * after which a moment may write RAW_MOMENT_WORDS words at its date or later.
 * A loop writing more checks each turn (raw_check_room); a record at a
 * date of its own, not its moment's (a tag dependency held back), goes
 * through raw_event_dated().
 */
#ifndef __ASTRO_TRACE_RAW_H__
#define __ASTRO_TRACE_RAW_H__

#include <otf2/otf2.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum raw_op { RAW_ENTER, RAW_LEAVE, RAW_PARAM, RAW_PARAM_SHORT, RAW_PARAM_STRING, RAW_METRIC, RAW_ATTR, RAW_TIME };
#define RAW_OP_MASK 7u
#define RAW_WIDE 8u /* the reference is in the next word */

/* The words a moment may write once room is made: past buf's end minus this, the buffer is handed over first. */
#define RAW_MOMENT_WORDS 64

struct raw_writer
{
	uint64_t *pos;       /* where the next record goes */
	uint64_t *limit;     /* past it, raw_overflow(): end, or before it the end of the pages asked for less a MiB */
	uint64_t *mark;      /* after the last event: the attributes from there on wait for theirs */
	uint64_t last;       /* the date of the last event */
	uint64_t *buf;       /* the buffer being filled */
	uint64_t *end;       /* buf's end minus RAW_MOMENT_WORDS */
	uint64_t *spare;     /* the other buffer (NULL without the helper): written out while buf fills */
	size_t bytes;        /* of each buffer */
	size_t asked;        /* bytes of buf from its start whose pages were asked for */
	size_t spare_asked;
	/* Under the helper's lock: its jobs on this writer not done yet, and whether the spare is being written out. */
	unsigned jobs;
	bool spare_out;
	/* The spill file: the helper's while it writes (spare_out), else the recording thread's. */
	int fd;              /* opened at the first spill */
	bool failed;         /* a spill failed: nothing more is kept (the archive holds what came before) */
	int error;           /* errno of that failure */
	uint64_t spilled;    /* bytes in the spill file */
	char *path;
};

/* Starts the helper thread that writes full buffers and asks for pages ahead (a no-op in a simulation; without it
 * full buffers are written by their own thread), and stops it once the writers are discarded. */
void raw_helper_start(void);
void raw_helper_stop(void);

/* A writer of two bytes-byte buffers (one without the helper) spilling to path (created at the first spill). */
void raw_init(struct raw_writer *w, size_t bytes, const char *path);

/* The buffer is past its limit: asks for its next pages, or, when full, has its events written to the spill file
 * (by the helper while the other buffer fills) and goes on in an empty buffer, the attributes waiting moved there. */
void raw_overflow(struct raw_writer *w);

/* Waits until what the helper writes for w is in its spill file (then w->failed and w->error are final). */
void raw_finish(struct raw_writer *w);

/* Replays the spill file then the buffer into writer (attrs: a list for its attributes), setting *clock to the date
 * of each record before it goes to OTF2 (OTF2's flush callback dates a flush by it) and counting the events written
 * in *nevents. Then removes the spill file and frees the writer. Returns OTF2's first failure (OTF2_SUCCESS). */
OTF2_ErrorCode raw_replay(struct raw_writer *w, OTF2_EvtWriter *writer, OTF2_AttributeList *attrs, uint64_t *clock,
			  uint64_t *nevents);

/* Is room to be made before a moment at ts: the buffer past its limit, or 4 s or more since the last record (or
 * none yet)? One test of two conditions: the common path makes no call. */
static inline bool raw_needs_room(const struct raw_writer *w, uint64_t ts)
{
	return (w->pos > w->limit) | ((ts - w->last) >> 32 != 0);
}

/* Makes room for a moment at ts: past the limit (raw_overflow), dates a gap of 4 s or more since the last record (a RAW_TIME
 * record; so is a date before the last record's, which the recorder does not write). */
void raw_make_room(struct raw_writer *w, uint64_t ts);

/* In a loop whose turns write up to RAW_MOMENT_WORDS words each: makes room past the limit. */
static inline void raw_check_room(struct raw_writer *w)
{
	if (__builtin_expect(w->pos > w->limit, 0))
		raw_overflow(w);
}

/* Frees the writer and removes its spill file without replaying. */
void raw_discard(struct raw_writer *w);

/* An attribute of the next event. */
static inline void raw_attr(struct raw_writer *w, uint32_t id, OTF2_Type type, uint64_t bits)
{
	uint64_t *p = w->pos;
	p[0] = RAW_ATTR | (uint64_t)type << 4 | (uint64_t)id << 32;
	p[1] = bits;
	w->pos = p + 2;
}

/* A double's bits, for raw_attr and raw_event. */
static inline uint64_t raw_double_bits(double d)
{
	uint64_t bits;
	memcpy(&bits, &d, sizeof(bits));
	return bits;
}

/* Drops the attributes waiting (their event is not written). */
static inline void raw_attr_clear(struct raw_writer *w)
{
	w->pos = w->mark;
}

/* Appends an event at ts, less than 4 s after the last record (room made); op is a constant at each call (and ref
 * often), so most tests of the layout fold away. */
static inline void raw_event(struct raw_writer *w, enum raw_op op, uint32_t ref, uint64_t ts, uint64_t value)
{
	uint64_t dt = ts - w->last;
	w->last = ts;
	uint64_t *p = w->pos;
	if (op == RAW_PARAM && ref < 64 && !((value >> 32) | (dt >> 22))) {
		p[0] = RAW_PARAM_SHORT | (uint64_t)ref << 4 | dt << 10 | value << 32;
		p += 1;
	} else {
		bool wide = ref >> 28;
		p[0] = op | (wide ? RAW_WIDE : (uint64_t)ref << 4) | dt << 32;
		p += 1;
		if (__builtin_expect(wide, 0))
			*p++ = ref;
		if (op != RAW_ENTER && op != RAW_LEAVE)
			*p++ = value;
	}
	w->pos = w->mark = p;
}

/* raw_event() for an event at a date of its own, however long after the last record (room made as for a moment). */
static inline void raw_event_dated(struct raw_writer *w, enum raw_op op, uint32_t ref, uint64_t ts, uint64_t value)
{
	raw_make_room(w, ts);
	raw_event(w, op, ref, ts, value);
}

#endif /* __ASTRO_TRACE_RAW_H__ */
