/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The theoretical lower bound's linear program (bound.c builds it from the
 * recording and writes it as files; bound_solve.c solves it with GLPK).
 */
#ifndef __ASTRO_MODELS_BOUND_H__
#define __ASTRO_MODELS_BOUND_H__

#include "models.h"

/* How long GLPK may search for the integer bound, in seconds (0: no limit): an integer program with
 * dependencies can take hours for a few dozen tasks. The relaxed one has no limit. */
#define BOUND_TIME_LIMIT_ENV "ASTROLABE_BOUND_TIME_LIMIT"
#define BOUND_TIME_LIMIT_DEFAULT 60

struct lp_col
{
	char name[32];
	double lb, ub, obj;
	bool integer;
	int task_kind, worker_kind;	/* an assignment of tasks of a kind to a kind of workers (-1: not one) */
};

struct lp_row
{
	char name[32];
	char type;		/* 'L' <=, 'G' >=, 'E' = */
	double rhs;
	unsigned first, n;	/* its terms */
};

struct lp_term
{
	unsigned col;
	double coef;
};

struct lp
{
	GArray *cols, *rows, *terms;
	/* The kinds, for messages and starpu_bound_print(). */
	unsigned ntask_kinds, nworker_kinds;
	int *worker_kind;		/* per worker */
	unsigned *task_kind_count;	/* tasks per kind */
	unsigned *task_kind_first;	/* a task of the kind (index in rec.tasks) */
	unsigned *worker_kind_count;	/* workers per kind */
	unsigned ntasks;
};

/* Solves lp (in integers when integer); *value gets the optimum, share (optional, ntask_kinds x nworker_kinds)
 * how many tasks of each kind each kind of worker runs. Returns 0 or -1 (with a message). When the
 * time limit ends an integer search, *value is the best integer solution found (said, with its gap to
 * relaxed, the relaxed bound) or, when none was found, relaxed itself; the return is then 1. */
int _astro_bound_solve(const struct lp *lp, bool integer, double relaxed, double *value, double *share, const char *fn);

#endif /* __ASTRO_MODELS_BOUND_H__ */
