/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The theoretical lower bound's program solved by GLPK (bound.h), relaxed or
 * in integers, within ASTROLABE_BOUND_TIME_LIMIT seconds. GLPK is loaded at
 * the first solve (ASTRO_GLPK_SONAME, which configure found), as LAPACKE is
 * for the models: libastrolabe does not link it, so a machine without it
 * runs everything but the bound's solve, which says what to install.
 */
#include "bound.h"
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#ifdef ASTRO_HAVE_GLPK
#include <glpk.h>

/* The functions of GLPK the solve calls, with glpk.h's own types. */
#define GLPK_FUNCTIONS(F) \
	F(create_prob) F(delete_prob) F(set_obj_dir) F(add_cols) F(add_rows) F(set_col_name) F(set_row_name) \
	F(set_col_bnds) F(set_row_bnds) F(set_obj_coef) F(set_col_kind) F(set_mat_row) F(init_iocp) F(init_smcp) \
	F(intopt) F(simplex) F(mip_status) F(get_status) F(mip_obj_val) F(get_obj_val) F(mip_col_val) F(get_col_prim)
#define GLPK_POINTER(f) __typeof__(glp_##f) *f;
static struct {
	GLPK_FUNCTIONS(GLPK_POINTER)
} glp;
static bool glpk_loaded;
static char glpk_why[256];
static starpu_pthread_once_t glpk_once = STARPU_PTHREAD_ONCE_INIT;

static bool glpk_symbol(void *lib, void *slot, const char *name)
{
	void *sym = dlsym(lib, name);
	if (!sym) {
		snprintf(glpk_why, sizeof(glpk_why), "%s has no %s", ASTRO_GLPK_SONAME, name);
		return false;
	}
	memcpy(slot, &sym, sizeof(sym));
	return true;
}

static void glpk_load(void)
{
	void *lib = dlopen(ASTRO_GLPK_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(glpk_why, sizeof(glpk_why), "cannot load %s (%s)", ASTRO_GLPK_SONAME, dlerror());
		return;
	}
	bool ok = true;
#define GLPK_LOAD(f) ok = ok && glpk_symbol(lib, &glp.f, "glp_" #f);
	GLPK_FUNCTIONS(GLPK_LOAD)
#undef GLPK_LOAD
	glpk_loaded = ok;
}

int _astro_bound_solve(const struct lp *lp, bool integer, double relaxed, double *value, double *share, const char *fn)
{
	starpu_pthread_once(&glpk_once, glpk_load);
	if (!glpk_loaded) {
		_astro_error("%s: -ENOSYS: %s: install GLPK's library (Debian: apt-get install libglpk40), "
			     "or solve the program starpu_bound_print_lp() writes with an external solver", fn, glpk_why);
		return -1;
	}
	glp_prob *P = glp.create_prob();
	glp.set_obj_dir(P, GLP_MIN);
	int ncols = (int)lp->cols->len, nrows = (int)lp->rows->len;
	glp.add_cols(P, ncols);
	for (int c = 1; c <= ncols; c++) {
		const struct lp_col *col = &g_array_index(lp->cols, struct lp_col, c - 1);
		glp.set_col_name(P, c, col->name);
		glp.set_col_bnds(P, c, isinf(col->ub) ? GLP_LO : col->lb == col->ub ? GLP_FX : GLP_DB, col->lb, isinf(col->ub) ? 0 : col->ub);
		glp.set_obj_coef(P, c, col->obj);
		if (integer && col->integer)
			glp.set_col_kind(P, c, GLP_IV);
	}
	if (nrows)
		glp.add_rows(P, nrows);
	int *ind = malloc(sizeof(int) * (ncols + 1));
	double *val = malloc(sizeof(double) * (ncols + 1));
	for (int r = 1; r <= nrows; r++) {
		const struct lp_row *row = &g_array_index(lp->rows, struct lp_row, r - 1);
		glp.set_row_name(P, r, row->name);
		glp.set_row_bnds(P, r, row->type == 'L' ? GLP_UP : row->type == 'G' ? GLP_LO : GLP_FX, row->rhs, row->rhs);
		for (unsigned t = 0; t < row->n; t++) {
			const struct lp_term *term = &g_array_index(lp->terms, struct lp_term, row->first + t);
			ind[t + 1] = (int)term->col + 1;
			val[t + 1] = term->coef;
		}
		glp.set_mat_row(P, r, (int)row->n, ind, val);
	}
	free(ind);
	free(val);
	int ret = -1;
	if (integer) {
		int limit_s = _astro_env_int_in(BOUND_TIME_LIMIT_ENV, 0, 7 * 24 * 3600, BOUND_TIME_LIMIT_DEFAULT);
		int limit_ms = limit_s > 0 && limit_s < INT_MAX / 1000 ? limit_s * 1000 : INT_MAX;
		glp_iocp parm;
		glp.init_iocp(&parm);
		parm.msg_lev = GLP_MSG_OFF;
		parm.presolve = GLP_ON;
		parm.tm_lim = limit_ms;
		int err = glp.intopt(P, &parm);
		if (err == 0 && glp.mip_status(P) == GLP_OPT) {
			ret = 0;
		} else if (err == GLP_ETMLIM && glp.mip_status(P) == GLP_FEAS) {
			double found = glp.mip_obj_val(P);
			_astro_warn("%s: the integer search stopped at its time limit (%d s, %s): %.3f ms is the best integer "
				    "schedule found, %.1f%% above the relaxed bound %.3f ms (the integer optimum lies between them); "
				    "raise %s (0: no limit) for a tighter one",
				    fn, limit_s, BOUND_TIME_LIMIT_ENV, found, relaxed > 0 ? (found / relaxed - 1) * 100 : 0.0, relaxed,
				    BOUND_TIME_LIMIT_ENV);
			ret = 1;
		} else if (err == GLP_ETMLIM) {
			_astro_warn("%s: the integer search stopped at its time limit (%d s, %s) before any integer schedule was "
				    "found: the integer result is the relaxed bound, %.3f ms; raise %s (0: no limit) to search longer",
				    fn, limit_s, BOUND_TIME_LIMIT_ENV, relaxed, BOUND_TIME_LIMIT_ENV);
			*value = relaxed;
			glp.delete_prob(P);
			return 1;
		} else {
			_astro_error("%s: GLPK found no integer optimum (glp_intopt returned %d, status %d): the relaxed bound still holds",
				     fn, err, glp.mip_status(P));
		}
	} else {
		glp_smcp parm;
		glp.init_smcp(&parm);
		parm.msg_lev = GLP_MSG_OFF;
		parm.presolve = GLP_ON;
		/* No time limit: the relaxed program solves in polynomial time (0.1 s for the 32 tasks
		 * whose integer search ran for hours), and the integer search falls back on it. */
		int err = glp.simplex(P, &parm);
		if (err == 0 && glp.get_status(P) == GLP_OPT)
			ret = 0;
		else
			_astro_error("%s: GLPK found no optimum (glp_simplex returned %d, status %d)", fn, err, glp.get_status(P));
	}
	if (ret >= 0) {
		*value = integer ? glp.mip_obj_val(P) : glp.get_obj_val(P);
		for (int c = 1; share && c <= ncols; c++) {
			const struct lp_col *col = &g_array_index(lp->cols, struct lp_col, c - 1);
			if (col->task_kind >= 0 && col->worker_kind >= 0)
				share[col->task_kind * lp->nworker_kinds + col->worker_kind] += integer ? glp.mip_col_val(P, c) : glp.get_col_prim(P, c);
		}
	}
	glp.delete_prob(P);
	return ret;
}
#else
int _astro_bound_solve(const struct lp *lp, bool integer, double relaxed, double *value, double *share, const char *fn)
{
	(void)lp, (void)integer, (void)relaxed, (void)value, (void)share;
	_astro_error("%s: -ENOSYS: Astrolabe was built without GLPK: install libglpk-dev and configure again, "
		     "or solve the program starpu_bound_print_lp() writes with an external solver", fn);
	return -1;
}
#endif
