/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Sets of small non-negative integers (worker ids), as in StarPU's starpu_bitmap.h. */
#ifndef __STARPU_BITMAP_H__
#define __STARPU_BITMAP_H__

#include <starpu_config.h>
#include <starpu_util.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef _STARPU_LONG_BIT
/** Bits in an unsigned long. */
#define _STARPU_LONG_BIT ((int)(sizeof(unsigned long) * 8))
#endif
/** Words of a bitmap: room for every worker id, combined workers' included. */
#define _STARPU_BITMAP_SIZE ((STARPU_NMAXWORKERS + STARPU_NMAX_COMBINEDWORKERS - 1) / _STARPU_LONG_BIT + 1)

/**
 * A set of elements from 0 to _STARPU_BITMAP_SIZE * _STARPU_LONG_BIT - 1, as
 * StarPU 1.4 lays it out: a program may keep one anywhere (on the stack, in
 * its own structs) and starpu_bitmap_init() it.
 */
struct starpu_bitmap
{
	unsigned long bits[_STARPU_BITMAP_SIZE];   /**< element e is bit e % _STARPU_LONG_BIT of word e / _STARPU_LONG_BIT */
	int cardinal;                              /**< how many elements are set */
};

/** A new empty set (NULL when out of memory). */
struct starpu_bitmap *starpu_bitmap_create(void) STARPU_ATTRIBUTE_MALLOC;
/** Empties b, whatever it held before (for a bitmap the program keeps itself). */
void starpu_bitmap_init(struct starpu_bitmap *b);
/** Frees b, made by starpu_bitmap_create() (NULL is accepted). */
void starpu_bitmap_destroy(struct starpu_bitmap *b);
/** Adds e (an e outside the bitmap's range is refused with a message, nothing changes). */
void starpu_bitmap_set(struct starpu_bitmap *b, int e);
/** Removes e. */
void starpu_bitmap_unset(struct starpu_bitmap *b, int e);
/** Empties b. */
void starpu_bitmap_unset_all(struct starpu_bitmap *b);
/** 1 when e is in b. */
int starpu_bitmap_get(struct starpu_bitmap *b, int e);
/** a = b & c (a is emptied first). */
void starpu_bitmap_unset_and(struct starpu_bitmap *a, struct starpu_bitmap *b, struct starpu_bitmap *c);
/** a |= b. */
void starpu_bitmap_or(struct starpu_bitmap *a, struct starpu_bitmap *b);
/** 1 when e is in both b1 and b2. */
int starpu_bitmap_and_get(struct starpu_bitmap *b1, struct starpu_bitmap *b2, int e);
/** Number of elements. */
int starpu_bitmap_cardinal(struct starpu_bitmap *b);
/** Smallest element, -1 when empty. */
int starpu_bitmap_first(struct starpu_bitmap *b);
/** Largest element, -1 when empty. */
int starpu_bitmap_last(struct starpu_bitmap *b);
/** Smallest element above e, -1 when none. */
int starpu_bitmap_next(struct starpu_bitmap *b, int e);
/** 1 when b holds an element above e. */
int starpu_bitmap_has_next(struct starpu_bitmap *b, int e);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_BITMAP_H__ */
