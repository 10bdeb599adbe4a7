/*
 * Performance models, internal: what a model holds (one block per
 * architecture combination and implementation, each with its history entries
 * and regression sums), shared by prediction and calibration (perfmodel.c),
 * the entry update rules (history.c) and the model files (file.c).
 *
 * A model's data and a parsed file have the same shape (struct _astro_pm_data),
 * so loading adopts parsed blocks and saving merges the in-memory deltas into
 * what the file holds on disk.
 */
#ifndef __ASTRO_MODELS_H__
#define __ASTRO_MODELS_H__

#include "kernel.h"
#include <starpu_perfmodel.h>

#define _ASTRO_PM_VERSION 45
#define _ASTRO_PM_MAX_COMBS 64          /* architecture combinations per process */
#define _ASTRO_PM_MAX_DEVICES 16        /* devices per combination */
#define _ASTRO_PM_WINDOW 16             /* recent observations per entry, for outlier rejection */

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
};

struct _starpu_perfmodel_state
{
	pthread_mutex_t lock;				/* data, dirty */
	struct _astro_pm_data data;
	int local_of[_ASTRO_PM_MAX_COMBS];		/* global combination id -> index in data.combs, -1 */
	bool dirty;					/* samples recorded since the last save */
	bool warned_uncalibrated, warned_type;
};

/* ---- data (history.c) */
struct _astro_pm_block *_astro_pm_block_new(void);
void _astro_pm_block_free(struct _astro_pm_block *b);
struct _astro_pm_entry *_astro_pm_block_find(struct _astro_pm_block *b, uint32_t footprint);
struct _astro_pm_entry *_astro_pm_block_add(struct _astro_pm_block *b, uint32_t footprint, size_t size);
void _astro_pm_data_clear(struct _astro_pm_data *d);
/* Recomputes mean and deviation from sum, sum2 and nsample. */
void _astro_pm_entry_refresh(struct starpu_perfmodel_history_entry *h);
/* Refits alpha and beta from the sums (valid when the sizes spread and enough samples). */
void _astro_pm_regression_refit(struct starpu_perfmodel_regression_model *r);
/* Fits a, b, c of a·size^b + c on the block's entries; returns 0, or -1 when there are too few. */
int _astro_pm_nl_fit(struct _astro_pm_block *b);
/* Records number executions averaging measured into b (history entry and regression sums). */
void _astro_pm_record(struct starpu_perfmodel *model, struct _astro_pm_block *b, uint32_t footprint, size_t size,
		      double flops, double measured, unsigned number, const char *archname);
bool _astro_pm_regression_valid(const struct starpu_perfmodel_regression_model *r);
unsigned _astro_pm_calibrate_minimum(void);

/* ---- files (file.c) */
/* Parses a version-45 model file held in text[0..len). Pure: touches no global
 * state. Returns 0 with out filled (free it with _astro_pm_data_clear()), or
 * -EINVAL with "line N: what" in err. */
int _astro_perfmodel_parse(const char *text, size_t len, struct _astro_pm_data *out, char *err, size_t errlen);
/* Writes d in StarPU's version-45 format; combination names use d's global ids when set. Returns 0 or -errno. */
int _astro_perfmodel_write(FILE *f, const struct _astro_pm_data *d);
/* Loads the model's file (if any) into its state; a bad file is set aside with one warning. */
void _astro_pm_load(struct starpu_perfmodel *model);
/* Saves the model: merges its new samples into the file under a lock, writes atomically. Returns 0 or -errno. */
int _astro_pm_save(struct starpu_perfmodel *model);

/* ---- combinations and models (perfmodel.c) */
/* The global combination of arch (added when new), -1 when the table is full or arch is bad. */
int _astro_pm_comb_of(const struct starpu_perfmodel_arch *arch);
/* The model's block for global combination comb and impl, created when create. Caller holds the state lock. */
struct _astro_pm_block *_astro_pm_block_of(struct starpu_perfmodel *model, int comb, unsigned impl, bool create);
/* Adopts the parsed data into the model's state (under its lock): combinations get global ids. */
void _astro_pm_adopt(struct starpu_perfmodel *model, struct _astro_pm_data *parsed);
void _astro_pm_arch_name(const struct starpu_perfmodel_arch *arch, int comb, unsigned nimpl, char *name, size_t maxlen);
bool _astro_pm_is_history_type(enum starpu_perfmodel_type type);

#endif /* __ASTRO_MODELS_H__ */
