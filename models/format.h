/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a performance model holds, and its text form: one block per
 * architecture combination and implementation, each with its history entries
 * and regression sums (format.c). Needs nothing of the runtime, so the
 * libFuzzer target bench/fuzz/fuzz_model_file.c runs the very parser and
 * writer the runtime uses.
 */
#ifndef __ASTRO_MODELS_FORMAT_H__
#define __ASTRO_MODELS_FORMAT_H__

#include <starpu_perfmodel.h>
#include <glib.h>
#include <stdbool.h>
#include <stdio.h>

#define _ASTRO_PM_VERSION 45
#define _ASTRO_PM_MAX_COMBS 64          /* architecture combinations per process */
#define _ASTRO_PM_MAX_DEVICES 16        /* devices per combination */
#define _ASTRO_PM_WINDOW 16             /* recent observations per entry, for outlier rejection */
/* What a model file may hold: more samples than this in one entry are halved (mean and deviation kept)
 * rather than wrap; a mean, deviation, sum or sum of squares is finite, non-negative and at most
 * _ASTRO_PM_MAX_VALUE, so that sums and squares of sums never overflow. */
#define _ASTRO_PM_MAX_COUNT 2147483647u
#define _ASTRO_PM_MAX_VALUE 1e100

/* One footprint's measurements. h first: the public entry is what tools see. */
struct _astro_pm_entry
{
	struct starpu_perfmodel_history_entry h;
	struct starpu_perfmodel_history_list node;	/* node.entry == &h, in the block's list */
	/* What the file held when this process last read or wrote it: saving adds only the difference. */
	double base_sum, base_sum2;
	unsigned base_nsample;
	/* The last observations (kept or rejected), for the median / MAD test; not saved. */
	double window[_ASTRO_PM_WINDOW];
	double sorted[_ASTRO_PM_WINDOW];		/* the same values in order, kept as they come and go */
	unsigned nwindow, window_pos;
};

/* One (combination, implementation). pub first: it is what starpu_perfmodel_get_model_per_arch() returns. */
struct _astro_pm_block
{
	struct starpu_perfmodel_per_arch pub;
	struct _astro_pm_entry **entries;		/* file order; pub.list links them in the same order */
	unsigned nentries, capacity;
	GHashTable *by_footprint;			/* footprint -> entry */
	struct starpu_perfmodel_regression_model base_reg; /* regression sums as last read from or written to the file */
	/* Multiple regression: this run's samples, rows of mlr_width values (duration, then the
	 * parameters). They go to codelets/tmp/<symbol>.out when saved, not to the model file. */
	double *mlr_rows;
	unsigned mlr_nrows, mlr_capacity, mlr_width;
};

struct _astro_pm_comb
{
	int ndevices;
	struct starpu_perfmodel_device devices[_ASTRO_PM_MAX_DEVICES];
	int global;					/* the process-wide combination id, -1 until adopted */
	unsigned nimpls;				/* blocks 0..nimpls-1 are written */
	struct _astro_pm_block *impl[STARPU_MAXIMPLEMENTATIONS];
};

/* A model's data, or a file's content. */
struct _astro_pm_data
{
	unsigned ncombs;
	struct _astro_pm_comb *combs[_ASTRO_PM_MAX_COMBS];
	/* The writer's names of the multiple-regression terms ("M^2*N\t\tN^3*K\t\t"), or NULL: c1, c2...
	 * Not owned, never parsed (a comment in the file). */
	const char *mlr_terms;
	/* What the parser set aside, its values out of range or inconsistent: how many entries and regressions,
	 * and the first ones ("line N: what; line M: what"). */
	unsigned nbad;
	char bad[400];
};

/* ---- data */
struct _astro_pm_block *_astro_pm_block_new(void);
void _astro_pm_block_free(struct _astro_pm_block *b);
struct _astro_pm_entry *_astro_pm_block_find(struct _astro_pm_block *b, uint32_t footprint);
struct _astro_pm_entry *_astro_pm_block_add(struct _astro_pm_block *b, uint32_t footprint, size_t size);
void _astro_pm_data_clear(struct _astro_pm_data *d);
/* Recomputes mean and deviation from sum, sum2 and nsample. */
void _astro_pm_entry_refresh(struct starpu_perfmodel_history_entry *h);
/* Adds n samples summing to sum (squares: sum2) to h, mean and deviation recomputed; past _ASTRO_PM_MAX_COUNT
 * samples, the count and the sums are halved (the mean and deviation stay) instead of wrapping. */
void _astro_pm_entry_add(struct starpu_perfmodel_history_entry *h, double sum, double sum2, unsigned long n);
/* Makes room for more samples in r's sums: halves them and the count while they would pass _ASTRO_PM_MAX_COUNT. */
void _astro_pm_regression_make_room(struct starpu_perfmodel_regression_model *r, unsigned long more);
/* What regression r predicts for size (its power law, or a·size^b + c when nl), when size is within its range:
 * finite and non-negative, or NaN (out of range, or a fit that gives nothing usable). The caller checks the
 * valid flags. */
double _astro_pm_regression_predict(const struct starpu_perfmodel_regression_model *r, bool nl, double size);

/* ---- the version-45 text format */
/* Parses a version-45 model file held in text[0..len). Pure: touches no global
 * state. Returns 0 with out filled (free it with _astro_pm_data_clear()), or
 * -EINVAL with "line N: what" in err. Values are checked, not only the syntax:
 * an entry or a regression whose values are out of range or inconsistent is
 * left out of out (counted in out->nbad, named in out->bad), the rest kept. */
int _astro_perfmodel_parse(const char *text, size_t len, struct _astro_pm_data *out, char *err, size_t errlen);
/* Writes d in StarPU's version-45 format; combination names use d's global ids when set. Returns 0 or -errno. */
int _astro_perfmodel_write(FILE *f, const struct _astro_pm_data *d);
/* "cpu0_impl0 (Comb0)": the name files and messages give a block. */
void _astro_pm_arch_name(const struct starpu_perfmodel_arch *arch, int comb, unsigned nimpl, char *name, size_t maxlen);

#endif /* __ASTRO_MODELS_FORMAT_H__ */
