/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * starpu_bitmap: a set of small non-negative integers, one bit each, in
 * words that grow as higher elements are added.
 */
#include <stdlib.h>
#include <string.h>
#include <starpu.h>
#include <astrolabe/plugin.h>

#define WORD_BITS ((int)(8 * sizeof(unsigned long)))

struct starpu_bitmap
{
	unsigned long *words;
	int nwords;
};

struct starpu_bitmap *starpu_bitmap_create(void)
{
	struct starpu_bitmap *b = calloc(1, sizeof(*b));

	if (!b)
		astro_log_error("bitmap", "cannot allocate a bitmap");
	return b;
}

void starpu_bitmap_destroy(struct starpu_bitmap *b)
{
	if (!b)
		return;
	free(b->words);
	free(b);
}

void starpu_bitmap_set(struct starpu_bitmap *b, int e)
{
	if (e < 0)
	{
		astro_log_error("bitmap", "starpu_bitmap_set: element %d is negative, elements are ids >= 0", e);
		return;
	}
	if (e / WORD_BITS >= b->nwords)
	{
		int nwords = e / WORD_BITS + 1;
		unsigned long *words = realloc(b->words, nwords * sizeof(*words));

		if (!words)
		{
			astro_log_error("bitmap", "cannot grow a bitmap to %d elements", e + 1);
			return;
		}
		memset(words + b->nwords, 0, (nwords - b->nwords) * sizeof(*words));
		b->words = words;
		b->nwords = nwords;
	}
	b->words[e / WORD_BITS] |= 1UL << (e % WORD_BITS);
}

void starpu_bitmap_unset(struct starpu_bitmap *b, int e)
{
	if (e >= 0 && e / WORD_BITS < b->nwords)
		b->words[e / WORD_BITS] &= ~(1UL << (e % WORD_BITS));
}

void starpu_bitmap_unset_all(struct starpu_bitmap *b)
{
	if (b->nwords)
		memset(b->words, 0, b->nwords * sizeof(*b->words));
}

int starpu_bitmap_get(struct starpu_bitmap *b, int e)
{
	return e >= 0 && e / WORD_BITS < b->nwords && (b->words[e / WORD_BITS] >> (e % WORD_BITS) & 1);
}

void starpu_bitmap_unset_and(struct starpu_bitmap *a, struct starpu_bitmap *b, struct starpu_bitmap *c)
{
	starpu_bitmap_unset_all(a);
	for (int e = starpu_bitmap_first(b); e >= 0; e = starpu_bitmap_next(b, e))
		if (starpu_bitmap_get(c, e))
			starpu_bitmap_set(a, e);
}

void starpu_bitmap_or(struct starpu_bitmap *a, struct starpu_bitmap *b)
{
	for (int e = starpu_bitmap_first(b); e >= 0; e = starpu_bitmap_next(b, e))
		starpu_bitmap_set(a, e);
}

int starpu_bitmap_and_get(struct starpu_bitmap *b1, struct starpu_bitmap *b2, int e)
{
	return starpu_bitmap_get(b1, e) && starpu_bitmap_get(b2, e);
}

int starpu_bitmap_cardinal(struct starpu_bitmap *b)
{
	int n = 0;

	for (int i = 0; i < b->nwords; i++)
		n += __builtin_popcountl(b->words[i]);
	return n;
}

int starpu_bitmap_next(struct starpu_bitmap *b, int e)
{
	int start = e < 0 ? 0 : e + 1;

	for (int i = start / WORD_BITS; i < b->nwords; i++)
	{
		unsigned long word = b->words[i];

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
	for (int i = b->nwords - 1; i >= 0; i--)
		if (b->words[i])
			return i * WORD_BITS + WORD_BITS - 1 - __builtin_clzl(b->words[i]);
	return -1;
}

int starpu_bitmap_has_next(struct starpu_bitmap *b, int e)
{
	return starpu_bitmap_next(b, e) >= 0;
}
