/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Puts a paje.trace's timed events in time order (paje_sort.c). Pajé readers
 * need each container's events in time order; the GFlop/s variables are known
 * only at a task's end and are written dated back, behind later lines of
 * their containers (pj_dump then silently stops reading there).
 */
#ifndef __ASTRO_TRACE_PAJE_SORT_H__
#define __ASTRO_TRACE_PAJE_SORT_H__

#include <stdbool.h>

/** Rewrites the file at path with its timed events in time order, equal times in their order of writing; the
 * definitions (untimed lines) stay first. With to, writes that (or, without sort, the file as it is) into to instead
 * (opened for writing: a file, or a pipe such as /dev/stdout) and removes path. Returns 0, or -1 with errno when it
 * cannot be read or written. */
int paje_sort_file(const char *path, const char *to, bool sort);

#endif
