/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Performance models, internal: what a model holds (one block per
 * architecture combination and implementation, each with its history entries
 * and regression sums), shared by prediction (predict.c) and calibration (calibrate.c),
 * the entry update rules (history.c) and the model files (file.c); the data
 * structures and their text form live in format.h / format.c.
 *
 * A model's data and a parsed file have the same shape (struct _astro_pm_data),
 * so loading adopts parsed blocks and saving merges the in-memory deltas into
 * what the file holds on disk.
 */
#ifndef __ASTRO_MODELS_H__
#define __ASTRO_MODELS_H__

#include "data/data.h"
#include "format.h"

/* How well the model predicted the executions measured in this process (quality.c). Written under the
 * state lock (samples: atomically), read by the counters' updater without it. */
struct _astro_pm_quality
{
	int64_t samples, predicted;
	int32_t calibrated;
	double last_error, sum_error;
};

struct _starpu_perfmodel_state
{
	starpu_pthread_mutex_t lock;				/* data, dirty */
	struct _astro_pm_data data;
	int local_of[_ASTRO_PM_MAX_COMBS];		/* global combination id -> index in data.combs, -1 */
	bool dirty;					/* samples recorded since the last save */
	bool warned_uncalibrated, warned_type, warned_mlr_ncoeff, warned_value;
	bool mlr_checked, mlr_bad;			/* the multiple-regression description was checked; it is unusable */
	struct _astro_pm_quality quality;
};

/* ---- update rules (history.c) */
/* Refits alpha and beta from the sums (valid when the sizes spread and enough samples). */
void _astro_pm_regression_refit(struct starpu_perfmodel_regression_model *r);
/* Fits a, b, c of a·size^b + c on the block's entries; returns 0, or -1 when there are too few. */
int _astro_pm_nl_fit(struct _astro_pm_block *b);
/* Records number executions averaging measured into b (history entry and regression sums); arch and nimpl
 * name the block in a warning. */
/* The architecture in words, for messages: "CPU 0", "CUDA 1", "CPU 0 (4 cores)", joined by " + " (history.c). */
void _astro_pm_arch_words(const struct starpu_perfmodel_arch *arch, char *name, size_t maxlen);
void _astro_pm_record(struct starpu_perfmodel *model, struct _astro_pm_block *b, uint32_t footprint, size_t size,
		      double flops, double measured, unsigned number, const struct starpu_perfmodel_arch *arch, unsigned nimpl);
bool _astro_pm_regression_valid(const struct starpu_perfmodel_regression_model *r);
unsigned _astro_pm_calibrate_minimum(void);
/* Reads STARPU_CALIBRATE_MINIMUM and STARPU_HISTORY_MAX_ERROR (at starpu_init). */
void _astro_pm_env_read(void);

/* ---- files (file.c) */
/* Loads the model's file (if any) into its state; a bad file is set aside with one warning. */
void _astro_pm_load(struct starpu_perfmodel *model);
/* Saves the model: merges its new samples into the file under a lock, writes atomically. Returns 0 or -errno. */
int _astro_pm_save(struct starpu_perfmodel *model);

/* ---- multiple regression (mlr.c) */
/* Whether model's description (parameters, nparameters, combinations) is usable; one error line the first time it is not. */
bool _astro_pm_mlr_usable(struct starpu_perfmodel *model);
/* The prediction of b's coefficients for task (NaN when not fitted). Caller holds the state lock. */
double _astro_pm_mlr_predict(struct starpu_perfmodel *model, const struct _astro_pm_block *b, struct starpu_task *task);
/* Fills row (1 + nparameters values) with measured and the task's parameters. */
void _astro_pm_mlr_task_row(struct starpu_perfmodel *model, struct starpu_task *task, double measured, double *row);
/* Appends number copies of row (width values) to b's samples. Caller holds the state lock. */
void _astro_pm_mlr_record(struct _astro_pm_block *b, const double *row, unsigned width, unsigned number);
/* Least squares: a (m x n, row-major) x = y; x in y[0..n). Returns 0, or -errno with why filled. */
int _astro_pm_mlr_solve(double *a, double *y, unsigned m, unsigned n, char *why, size_t whylen);
/* At save, under the file lock and the state lock: fits the coefficients of the blocks of disk that have new
 * samples (with the samples file's), appends the samples to that file; *terms gets the names of the
 * coefficients for the writer (free it). Returns 0 or -errno. */
int _astro_pm_mlr_save(struct starpu_perfmodel *model, struct _astro_pm_data *disk, char **terms);

/* ---- file helpers (file.c) */
const char *_astro_home_dir(void);
/* Creates the directories above path. Returns 0 or -errno. */
int _astro_pm_mkdirs(const char *path);
/* fcntl lock (F_RDLCK / F_WRLCK) on fd, waiting; one warning when locks do not work there. */
void _astro_pm_lock_file(int fd, short type, const char *path);

/* ---- model quality counters (quality.c) */
/* Registers the starpu.model.c_* counters (from starpu_init()). */
void _astro_pm_quality_register(void);
/* Has a tool read them (executions are then compared with predictions)? */
bool _astro_pm_quality_wanted(void);
/* An execution of a task of model's codelet lasted measured; the model predicted predicted (NaN: nothing). */
void _astro_pm_quality_observe(struct starpu_perfmodel *model, double predicted, double measured);
/* model recorded number samples. */
void _astro_pm_quality_sampled(struct starpu_perfmodel *model, unsigned number);

/* ---- combinations and models (state.c) */
/* The workers' architectures (at init); the architecture of size CPU cores together (a combined
 * worker); a model's state freed; the models with a state, taken out of the list (at shutdown). */
void _astro_pm_workers_describe(void);
struct starpu_perfmodel_arch *_astro_pm_cores_arch(int size);
void _astro_pm_state_free(struct starpu_perfmodel *model);
GPtrArray *_astro_pm_registered_take(void);
/* Follows task executions while something needs them measured (calibration, energy, quality counters). */
void _astro_pm_follow(void);
/* The global combination of arch (added when new), -1 when the table is full or arch is bad. */
int _astro_pm_comb_of(const struct starpu_perfmodel_arch *arch);
/* The model's block for global combination comb and impl, created when create. Caller holds the state lock. */
struct _astro_pm_block *_astro_pm_block_of(struct starpu_perfmodel *model, int comb, unsigned impl, bool create);
/* Adopts the parsed data into the model's state (under its lock): combinations get global ids. */
void _astro_pm_adopt(struct starpu_perfmodel *model, struct _astro_pm_data *parsed);
bool _astro_pm_is_history_type(enum starpu_perfmodel_type type);
/* Initialises model and loads its file once (what a first prediction does; file.c). */
void _astro_pm_ensure_loaded(struct starpu_perfmodel *model);
/* What task's codelet model predicts for implementation nimpl on workerid (µs; NaN: nothing), without forcing
 * calibration nor reporting a model that cannot predict: the caller says what is missing. */
double _astro_pm_worker_predict(struct starpu_task *task, unsigned workerid, unsigned nimpl);
/* For calibration (predict.c; caller holds the model's state lock for the first two): task's footprint and size
 * for arch (comb) and nimpl; what model predicts for task on arch (quiet: nothing said when it cannot). */
uint32_t _astro_pm_footprint_locked(struct starpu_perfmodel *model, struct starpu_task *task, struct starpu_perfmodel_arch *arch,
				    unsigned nimpl);
size_t _astro_pm_task_size(struct starpu_perfmodel *model, struct starpu_task *task, struct starpu_perfmodel_arch *arch, int comb,
			   unsigned nimpl);
double _astro_pm_model_prediction(struct starpu_perfmodel *model, struct starpu_task *task, struct starpu_perfmodel_arch *arch,
				  int workerid, unsigned nimpl, bool quiet);

/* ---- the theoretical lower bound (bound.c) */
/* From starpu_init() and starpu_shutdown(): forget the recording and the hub subscription. */
void _astro_bound_init(void);
void _astro_bound_shutdown(void);

#endif /* __ASTRO_MODELS_H__ */
