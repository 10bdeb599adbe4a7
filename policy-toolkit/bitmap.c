/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * starpu_bitmap: a set of small non-negative integers (worker ids), one bit
 * each in a fixed array of words, with its number of elements kept beside
 * (starpu_bitmap.h lays the struct out as StarPU 1.4 does).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <starpu.h>
#include <astrolabe/plugin.h>

#define WORD_BITS _STARPU_LONG_BIT
#define NBITS (_STARPU_BITMAP_SIZE * WORD_BITS)

static inline bool in_range(int e)
{
	return e >= 0 && e < NBITS;
}

static int count(const struct starpu_bitmap *b)
{
	int n = 0;
	for (int i = 0; i < _STARPU_BITMAP_SIZE; i++)
		n += __builtin_popcountl(b->bits[i]);
	return n;
}

struct starpu_bitmap *starpu_bitmap_create(void)
{
	struct starpu_bitmap *b = calloc(1, sizeof(*b));

	if (!b)
		astro_log_error("bitmap", "cannot allocate a bitmap");
	return b;
}

void starpu_bitmap_init(struct starpu_bitmap *b)
{
	if (!b) {
		astro_log_error("bitmap", "starpu_bitmap_init: NULL bitmap: give the address of a struct starpu_bitmap");
		return;
	}
	memset(b, 0, sizeof(*b));
}

void starpu_bitmap_destroy(struct starpu_bitmap *b)
{
	free(b);
}

void starpu_bitmap_set(struct starpu_bitmap *b, int e)
{
	if (!in_range(e)) {
		astro_log_error("bitmap", "starpu_bitmap_set: element %d is %s: elements go from 0 to %d (worker ids)", e,
				e < 0 ? "negative" : "too large", NBITS - 1);
		return;
	}
	unsigned long bit = 1UL << (e % WORD_BITS);
	if (!(b->bits[e / WORD_BITS] & bit)) {
		b->bits[e / WORD_BITS] |= bit;
		b->cardinal++;
	}
}

void starpu_bitmap_unset(struct starpu_bitmap *b, int e)
{
	if (!in_range(e))
		return;
	unsigned long bit = 1UL << (e % WORD_BITS);
	if (b->bits[e / WORD_BITS] & bit) {
		b->bits[e / WORD_BITS] &= ~bit;
		b->cardinal--;
	}
}

void starpu_bitmap_unset_all(struct starpu_bitmap *b)
{
	memset(b->bits, 0, sizeof(b->bits));
	b->cardinal = 0;
}

int starpu_bitmap_get(struct starpu_bitmap *b, int e)
{
	return in_range(e) && (b->bits[e / WORD_BITS] >> (e % WORD_BITS) & 1);
}

void starpu_bitmap_unset_and(struct starpu_bitmap *a, struct starpu_bitmap *b, struct starpu_bitmap *c)
{
	for (int i = 0; i < _STARPU_BITMAP_SIZE; i++)
		a->bits[i] = b->bits[i] & c->bits[i];
	a->cardinal = count(a);
}

void starpu_bitmap_or(struct starpu_bitmap *a, struct starpu_bitmap *b)
{
	for (int i = 0; i < _STARPU_BITMAP_SIZE; i++)
		a->bits[i] |= b->bits[i];
	a->cardinal = count(a);
}

int starpu_bitmap_and_get(struct starpu_bitmap *b1, struct starpu_bitmap *b2, int e)
{
	return starpu_bitmap_get(b1, e) && starpu_bitmap_get(b2, e);
}

int starpu_bitmap_cardinal(struct starpu_bitmap *b)
{
	return b->cardinal;
}

int starpu_bitmap_next(struct starpu_bitmap *b, int e)
{
	if (e >= NBITS - 1)
		return -1;
	int start = e < 0 ? 0 : e + 1;

	for (int i = start / WORD_BITS; i < _STARPU_BITMAP_SIZE; i++) {
		unsigned long word = b->bits[i];

		if (i == start / WORD_BITS)
			word &= ~0UL << (start % WORD_BITS);
		if (word)
			return i * WORD_BITS + __builtin_ctzl(word);
	}
	return -1;
}

int starpu_bitmap_first(struct starpu_bitmap *b)
{
	return starpu_bitmap_next(b, -1);
}

int starpu_bitmap_last(struct starpu_bitmap *b)
{
	for (int i = _STARPU_BITMAP_SIZE - 1; i >= 0; i--)
		if (b->bits[i])
			return i * WORD_BITS + WORD_BITS - 1 - __builtin_clzl(b->bits[i]);
	return -1;
}

int starpu_bitmap_has_next(struct starpu_bitmap *b, int e)
{
	return starpu_bitmap_next(b, e) >= 0;
}
