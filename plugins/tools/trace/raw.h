/*
 * The recorder's deferred event writer. While the run goes on, an event is
 * appended to its thread's own buffer as a fixed-layout record (no lock, no
 * call into OTF2: a few stores); a full buffer is written with one write() to
 * the thread's spill file and reused. At shutdown each thread's spill file
 * then its buffer are replayed, in order, into its OTF2 event writer. So the
 * encoding of OTF2 (attribute lists, compressed integers, chunks) leaves the
 * task path, as StarPU's FxT keeps raw records during the run.
 *
 * A record, in 64-bit words:
 *   header    op | (attributes: the OTF2 type << 8) | reference << 32
 *             (the region of an Enter or Leave, the parameter, the metric,
 *             the attribute)
 *   then      an event's time (ns) and, but for Enter and Leave, its value
 *             (the parameter's value, the string's id, the metric's double);
 *             an attribute's value (an integer zero-extended, a double's bits)
 * An event's attributes are the records just before it.
 */
#ifndef __ASTRO_TRACE_RAW_H__
#define __ASTRO_TRACE_RAW_H__

#include <otf2/otf2.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum raw_op { RAW_ENTER, RAW_LEAVE, RAW_PARAM, RAW_PARAM_STRING, RAW_METRIC, RAW_ATTR };

/* The longest record, in words: past buf's end minus this, a record spills the buffer first. */
#define RAW_MAX_RECORD 3

struct raw_writer
{
	uint64_t *pos;       /* where the next record goes */
	uint64_t *limit;     /* buf's end minus RAW_MAX_RECORD */
	uint64_t *mark;      /* after the last event: the attributes from there on wait for theirs */
	uint64_t *buf;
	int fd;              /* the spill file, opened at the first spill */
	bool failed;         /* a spill failed: nothing more is kept (the archive holds what came before) */
	int error;           /* errno of that failure */
	uint64_t spilled;    /* bytes in the spill file */
	char *path;
};

/* A writer of a bytes-byte buffer spilling to path (created at the first spill). */
void raw_init(struct raw_writer *w, size_t bytes, const char *path);

/* Writes the buffer's events to the spill file and empties it but for the attributes waiting (called when full). */
void raw_spill(struct raw_writer *w);

/* Replays the spill file then the buffer into writer (attrs: a list for its attributes), setting *clock to the date
 * of each record before it goes to OTF2 (OTF2's flush callback dates a flush by it) and counting the events written
 * in *nevents. Then removes the spill file and frees the writer. Returns OTF2's first failure (OTF2_SUCCESS). */
OTF2_ErrorCode raw_replay(struct raw_writer *w, OTF2_EvtWriter *writer, OTF2_AttributeList *attrs, uint64_t *clock,
			  uint64_t *nevents);

/* Frees the writer and removes its spill file without replaying. */
void raw_discard(struct raw_writer *w);

/* An attribute of the next event. */
static inline void raw_attr(struct raw_writer *w, uint32_t id, OTF2_Type type, uint64_t bits)
{
	if (__builtin_expect(w->pos > w->limit, 0))
		raw_spill(w);
	uint64_t *p = w->pos;
	p[0] = RAW_ATTR | (uint64_t)type << 8 | (uint64_t)id << 32;
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

/* Appends an event; op is a constant at each call, so the test of the layout folds away. */
static inline void raw_event(struct raw_writer *w, enum raw_op op, uint32_t ref, uint64_t ts, uint64_t value)
{
	if (__builtin_expect(w->pos > w->limit, 0))
		raw_spill(w);
	uint64_t *p = w->pos;
	p[0] = op | (uint64_t)ref << 32;
	p[1] = ts;
	if (op == RAW_ENTER || op == RAW_LEAVE) {
		p += 2;
	} else {
		p[2] = value;
		p += 3;
	}
	w->pos = w->mark = p;
}

#endif /* __ASTRO_TRACE_RAW_H__ */
