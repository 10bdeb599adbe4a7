/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Multiple-regression models (STARPU_MULTIPLE_REGRESSION_BASED):
 *
 *   time = coeff[0] + sum_i coeff[i+1] * prod_k param[k]^combinations[i][k]
 *
 * The parameters come from model->parameters(task, double *). Each measured
 * execution is one sample (duration and parameters, no footprint, no outlier
 * test, as in StarPU); samples accumulate in memory and, when the model is
 * saved, go to StarPU's companion file <home>/.starpu/sampling/codelets/tmp/
 * <symbol>.out ("Duration, M, N, K" then one "%f, %f, ..." row per sample).
 * The coefficients are fitted then, by least squares (the built-in solver of
 * lsq.c, or LAPACKE_dgels with configure's --enable-mlr-system-blas) over
 * this run's samples plus that file's (unless STARPU_CALIBRATE=2), and
 * written in the model file. The samples file has no architecture column
 * (StarPU's format, read by starpu_mlr_analysis): its samples count for every
 * architecture of the symbol, as in StarPU. A model without combinations
 * only collects samples (its file holds one NaN coefficient), for an
 * analysis that chooses the terms; so does every model of a build configured
 * with --disable-mlr. LAPACKE is loaded when a model is first fitted:
 * OpenBLAS starts its threads when loaded, which no program that never fits
 * a model should pay for.
 */
#include "models.h"
#include "lsq.h"
#include <dlfcn.h>
#include <fcntl.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef ASTRO_MLR_SYSTEM_BLAS
#include <lapacke.h>
#endif

/* ---------------------------------------------------- the description */

bool _astro_pm_mlr_usable(struct starpu_perfmodel *model)
{
	struct _starpu_perfmodel_state *s = model->state;
	if (__atomic_load_n(&s->mlr_checked, __ATOMIC_ACQUIRE))
		return !s->mlr_bad;
	char why[160] = "";
	if (!model->parameters)
		snprintf(why, sizeof(why), "parameters is NULL: set the function that fills the task's parameter values");
	else if (model->nparameters == 0)
		snprintf(why, sizeof(why), "nparameters is 0: give the number of values parameters() fills");
	else if (model->ncombinations && !model->combinations)
		snprintf(why, sizeof(why), "ncombinations is %u but combinations is NULL: give ncombinations arrays of nparameters exponents",
			 model->ncombinations);
	else
		for (unsigned i = 0; i < model->ncombinations && !why[0]; i++)
			if (!model->combinations[i])
				snprintf(why, sizeof(why), "combinations[%u] is NULL: give ncombinations arrays of nparameters exponents", i);
	starpu_pthread_mutex_lock(&s->lock);
	bool first = !s->mlr_checked;
	s->mlr_bad = why[0] != '\0';
	__atomic_store_n(&s->mlr_checked, true, __ATOMIC_RELEASE);
	starpu_pthread_mutex_unlock(&s->lock);
	if (first && why[0])
		_astro_error("multiple-regression model %s: %s; it predicts nothing (NaN) and records nothing",
			     model->symbol ? model->symbol : "(no symbol)", why);
	return !why[0];
}

/* The value of term i (combination i) for these parameters. */
static double term(const struct starpu_perfmodel *model, unsigned i, const double *params)
{
	double v = 1.0;
	for (unsigned k = 0; k < model->nparameters; k++)
		if (model->combinations[i][k])
			v *= pow(params[k], (double)model->combinations[i][k]);
	return v;
}

/* model->parameters() into a buffer of nparameters doubles (params when it is large enough, else allocated). */
static double *task_parameters(struct starpu_perfmodel *model, struct starpu_task *task, double *params, unsigned room)
{
	double *p = model->nparameters <= room ? params : malloc(model->nparameters * sizeof(double));
	if (p) {
		memset(p, 0, model->nparameters * sizeof(double));
		model->parameters(task, p);
	}
	return p;
}

double _astro_pm_mlr_predict(struct starpu_perfmodel *model, const struct _astro_pm_block *b, struct starpu_task *task)
{
	const struct starpu_perfmodel_regression_model *r = &b->pub.regression;
	if (!r->coeff || !r->ncoeff)
		return NAN;
	if (r->ncoeff != model->ncombinations + 1) {
		struct _starpu_perfmodel_state *s = model->state;
		if (!s->warned_mlr_ncoeff) {
			s->warned_mlr_ncoeff = true;
			_astro_warn("multiple-regression model %s: its file has %u coefficients, the model describes %u combinations "
				    "(%u expected): it predicts nothing until recalibrated (STARPU_CALIBRATE=2)",
				    model->symbol, r->ncoeff, model->ncombinations, model->ncombinations + 1);
		}
		return NAN;
	}
	double local[16];
	double *params = task_parameters(model, task, local, 16);
	if (!params)
		return NAN;
	double v = r->coeff[0];
	for (unsigned i = 0; i < model->ncombinations; i++)
		v += r->coeff[i + 1] * term(model, i, params);
	if (params != local)
		free(params);
	if (isnan(v))
		return NAN;
	return v < 0 ? 1e-5 : v;	/* as StarPU: a negative time means a poor fit, not a free task */
}

/* ------------------------------------------------------------ samples */

void _astro_pm_mlr_task_row(struct starpu_perfmodel *model, struct starpu_task *task, double measured, double *row)
{
	row[0] = measured;
	task_parameters(model, task, row + 1, model->nparameters);
}

void _astro_pm_mlr_record(struct _astro_pm_block *b, const double *row, unsigned width, unsigned number)
{
	if (!(row[0] >= 0) || isinf(row[0]))
		return;
	if (b->mlr_width && b->mlr_width != width)
		return;	/* the description changed under a loaded model: keep the first shape */
	b->mlr_width = width;
	for (unsigned n = 0; n < number; n++) {
		if (b->mlr_nrows == b->mlr_capacity) {
			unsigned cap = b->mlr_capacity ? 2 * b->mlr_capacity : 64;
			double *bigger = realloc(b->mlr_rows, (size_t)cap * width * sizeof(double));
			if (!bigger)
				return;
			b->mlr_rows = bigger;
			b->mlr_capacity = cap;
		}
		memcpy(b->mlr_rows + (size_t)b->mlr_nrows * width, row, width * sizeof(double));
		b->mlr_nrows++;
	}
}

/* ------------------------------------------------------- least squares */

#ifdef ASTRO_MLR_SYSTEM_BLAS
typedef lapack_int (*dgels_fn)(int layout, char trans, lapack_int m, lapack_int n, lapack_int nrhs, double *a, lapack_int lda,
			       double *b, lapack_int ldb);

static dgels_fn dgels;
static char dgels_error[256];
static starpu_pthread_once_t dgels_once = STARPU_PTHREAD_ONCE_INIT;

static void dgels_load(void)
{
	void *lib = dlopen(ASTRO_LAPACKE_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(dgels_error, sizeof(dgels_error), "cannot load %s (%s)", ASTRO_LAPACKE_SONAME, dlerror());
		return;
	}
	dgels = (dgels_fn)dlsym(lib, "LAPACKE_dgels");
	if (!dgels)
		snprintf(dgels_error, sizeof(dgels_error), "%s has no LAPACKE_dgels", ASTRO_LAPACKE_SONAME);
}
#endif

int _astro_pm_mlr_solve(double *a, double *y, unsigned m, unsigned n, char *why, size_t whylen)
{
#if !defined(ASTRO_MLR_MODEL)
	(void)a, (void)y, (void)m, (void)n;
	snprintf(why, whylen, "this build was configured with --disable-mlr: configure it without that option to fit the models");
	return -ENOSYS;
#elif defined(ASTRO_MLR_SYSTEM_BLAS)
	starpu_pthread_once(&dgels_once, dgels_load);
	if (!dgels) {
		snprintf(why, whylen, "%s: install liblapacke (Debian: liblapacke-dev)", dgels_error);
		return -ENOSYS;
	}
	lapack_int info = dgels(LAPACK_ROW_MAJOR, 'N', (lapack_int)m, (lapack_int)n, 1, a, (lapack_int)n, y, 1);
	if (info != 0) {
		snprintf(why, whylen, "the least-squares solver failed (LAPACKE_dgels info %d: %s)", (int)info,
			 info > 0 ? "the terms are linearly dependent on these samples" : "bad argument");
		return -EDOM;
	}
	return 0;
#else
	return _astro_lsq_solve(a, y, m, n, why, whylen);
#endif
}

/* Fits the coefficients of model from nrows rows (duration, parameters); 0 with coeff[ncombinations+1] set. */
static int fit(struct starpu_perfmodel *model, const double *rows, unsigned nrows, unsigned width, double *coeff, char *why, size_t whylen)
{
	unsigned n = model->ncombinations + 1;
	if (nrows <= n) {
		snprintf(why, whylen, "%u samples for %u coefficients: run more tasks (more samples than coefficients are needed)", nrows, n);
		return -EAGAIN;
	}
	double *a = malloc((size_t)nrows * n * sizeof(double)), *y = malloc((size_t)nrows * sizeof(double));
	if (!a || !y) {
		free(a);
		free(y);
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	for (unsigned i = 0; i < nrows; i++) {
		const double *row = rows + (size_t)i * width;
		y[i] = row[0];
		a[(size_t)i * n] = 1.0;
		for (unsigned t = 0; t < model->ncombinations; t++)
			a[(size_t)i * n + 1 + t] = term(model, t, row + 1);
	}
	int ret = _astro_pm_mlr_solve(a, y, nrows, n, why, whylen);
	if (ret == 0)
		memcpy(coeff, y, n * sizeof(double));
	free(a);
	free(y);
	return ret;
}

/* ------------------------------------------------- the samples file */

static void samples_path(const char *symbol, char *path, size_t len)
{
	snprintf(path, len, "%s/.starpu/sampling/codelets/tmp/%s.out", _astro_home_dir(), symbol);
}

/* Parses the samples file text: rows of width values appended to *rows; false when it is not one of width columns. */
static bool samples_parse(char *text, unsigned width, double **rows, unsigned *nrows, unsigned *line)
{
	char *save = NULL;
	*line = 0;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		(*line)++;
		if (*line == 1) {
			unsigned ncols = 1;
			for (char *c = l; *c; c++)
				ncols += *c == ',';
			if (ncols != width)
				return false;
			continue;
		}
		while (*l == ' ' || *l == '\t' || *l == '\r')
			l++;
		if (!*l)
			continue;
		double *row = realloc(*rows, ((size_t)*nrows + 1) * width * sizeof(double));
		if (!row)
			return false;
		*rows = row;
		row += (size_t)*nrows * width;
		char *p = l, *end;
		for (unsigned k = 0; k < width; k++) {
			row[k] = strtod(p, &end);
			if (end == p)
				return false;
			p = end;
			while (*p == ' ' || *p == '\t' || *p == '\r')
				p++;
			if (k + 1 < width && *p++ != ',')
				return false;
		}
		if (*p)
			return false;
		(*nrows)++;
	}
	return *line > 0;
}

static void samples_header(const struct starpu_perfmodel *model, FILE *f)
{
	fprintf(f, "Duration");
	for (unsigned k = 0; k < model->nparameters; k++) {
		const char *name = model->parameters_names ? model->parameters_names[k] : NULL;
		if (name)
			fprintf(f, ", %s", name);
		else
			fprintf(f, ", P%u", k);
	}
}

/* "M^2*N\t\tN^3*K\t\t": the coefficients' names in the model file's comment line. */
static char *terms_names(const struct starpu_perfmodel *model)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	for (unsigned i = 0; i < model->ncombinations; i++) {
		bool first = true;
		for (unsigned k = 0; k < model->nparameters; k++) {
			unsigned e = model->combinations[i][k];
			if (!e)
				continue;
			const char *name = model->parameters_names ? model->parameters_names[k] : NULL;
			if (!first)
				fputc('*', f);
			first = false;
			if (name)
				fputs(name, f);
			else
				fprintf(f, "P%u", k);
			if (e != 1)
				fprintf(f, "^%u", e);
		}
		fputs("\t\t", f);
	}
	fclose(f);
	return buf;
}

/* How many samples of rows of width values this run took, in mem. */
static unsigned samples_taken(const struct _astro_pm_data *mem, unsigned width)
{
	unsigned n = 0;
	for (unsigned c = 0; c < mem->ncombs; c++)
		for (unsigned i = 0; i < STARPU_MAXIMPLEMENTATIONS; i++)
			if (mem->combs[c]->impl[i] && mem->combs[c]->impl[i]->mlr_width == width)
				n += mem->combs[c]->impl[i]->mlr_nrows;
	return n;
}

/* The samples of every run so far, read whole at each save: more than this is not a samples file. */
#define SAMPLES_FILE_MAX ((size_t)256 << 20)

/* Opens the samples file at path to append to it, locked, with the samples
 * it holds in *old (*nold rows, malloc'ed): none when calibration starts
 * again (STARPU_CALIBRATE=2) or when the file is corrupt (then set aside and
 * started again). *empty: it has no header line yet. NULL (said) when it
 * cannot be opened, *ret then a negative errno. */
static FILE *samples_open(const struct starpu_perfmodel *model, const char *path, unsigned width, double **old, unsigned *nold,
			  bool *empty, int *ret)
{
	*ret = _astro_pm_mkdirs(path);
	/* A FIFO or a link to a device in its place would hang or flood the save: set aside first. */
	char why[256], aside[PATH_MAX + 32];
	int fd = *ret ? -ENOENT : astro_file_open_regular(path, SAMPLES_FILE_MAX, why, sizeof(why));
	if (fd >= 0)
		close(fd);
	else if (fd == -EINVAL || fd == -EFBIG) {
		snprintf(aside, sizeof(aside), "%s.corrupt-%ld", path, (long)getpid());
		bool moved = rename(path, aside) == 0;
		_astro_warn("samples file %s is %s; %s%s, starting it again", path, why, moved ? "set aside as " : "it could not be set aside: ",
			    moved ? aside : strerror(errno));
	}
	FILE *f = *ret ? NULL : fopen(path, "a+");
	if (!f) {
		*ret = *ret ? *ret : -errno;
		_astro_error("cannot open %s (%s): the samples of model %s are lost and its coefficients not fitted",
			     path, strerror(-*ret), model->symbol);
		return NULL;
	}
	_astro_pm_lock_file(fileno(f), F_WRLCK, path);
	bool restart = __atomic_load_n(&_astro_rt.calibrate, __ATOMIC_RELAXED) == 2;
	unsigned line = 0;
	struct stat st;
	*empty = fstat(fileno(f), &st) != 0 || st.st_size == 0;
	if (!restart && !*empty) {
		char *text = malloc((size_t)st.st_size + 1);
		size_t len = text ? fread(text, 1, (size_t)st.st_size, f) : 0;
		bool ok = text != NULL;
		if (ok) {
			text[len] = '\0';
			ok = samples_parse(text, width, old, nold, &line);
		}
		free(text);
		if (!ok) {
			char aside[PATH_MAX + 32];
			snprintf(aside, sizeof(aside), "%s.corrupt-%ld", path, (long)getpid());
			bool moved = rename(path, aside) == 0;
			_astro_warn("samples file %s, line %u: not %u columns of numbers (Duration and %u parameters); %s%s, starting it again",
				    path, line, width, model->nparameters, moved ? "set aside as " : "it could not be set aside: ",
				    moved ? aside : strerror(errno));
			free(*old);
			*old = NULL;
			*nold = 0;
			restart = true;
		}
	}
	if (restart) {
		fclose(f);	/* drops the lock: the file is made again, under a lock of its own */
		f = fopen(path, "w");
		if (!f) {
			*ret = -errno;
			free(*old);
			*old = NULL;
			_astro_error("cannot write %s (%s): the samples of model %s are lost", path, strerror(-*ret), model->symbol);
			return NULL;
		}
		_astro_pm_lock_file(fileno(f), F_WRLCK, path);
		*empty = true;
	}
	return f;
}

/* Fits each block of disk that has new samples in mem, on the file's samples
 * (old, nold rows) and its own; a model without terms gets StarPU's one NaN
 * coefficient. */
static void fit_blocks(struct starpu_perfmodel *model, const struct _astro_pm_data *mem, struct _astro_pm_data *disk,
		       const double *old, unsigned nold, unsigned nnew, unsigned width)
{
	double *all = malloc(((size_t)nold + nnew) * width * sizeof(double));
	if (all && nold)
		memcpy(all, old, (size_t)nold * width * sizeof(double));
	for (unsigned c = 0; c < mem->ncombs && all; c++) {
		struct _astro_pm_comb *mc = mem->combs[c], *dc = NULL;
		for (unsigned i = 0; i < disk->ncombs && !dc; i++)
			if (disk->combs[i]->global == mc->global)
				dc = disk->combs[i];
		for (unsigned impl = 0; impl < STARPU_MAXIMPLEMENTATIONS && dc; impl++) {
			struct _astro_pm_block *b = mc->impl[impl], *into = dc->impl[impl];
			if (!b || !into || !b->mlr_nrows || b->mlr_width != width || !model->ncombinations)
				continue;
			memcpy(all + (size_t)nold * width, b->mlr_rows, (size_t)b->mlr_nrows * width * sizeof(double));
			unsigned ncoeff = model->ncombinations + 1;
			double *coeff = calloc(ncoeff, sizeof(double));
			char why[256], name[128];
			int fitted = coeff ? fit(model, all, nold + b->mlr_nrows, width, coeff, why, sizeof(why)) : -ENOMEM;
			if (fitted == 0) {
				free(into->pub.regression.coeff);
				into->pub.regression.coeff = coeff;
				into->pub.regression.ncoeff = ncoeff;
			} else {
				free(coeff);
				struct starpu_perfmodel_arch arch = { .ndevices = mc->ndevices, .devices = mc->devices };
				_astro_pm_arch_name(&arch, mc->global, impl, name, sizeof(name));
				_astro_warn("multiple-regression model %s on %s: coefficients not computed: %s", model->symbol, name,
					    fitted == -ENOMEM ? "out of memory" : why);
			}
		}
	}
	if (!model->ncombinations)	/* StarPU's file for a model without terms: one NaN coefficient */
		for (unsigned c = 0; c < disk->ncombs; c++)
			for (unsigned impl = 0; impl < STARPU_MAXIMPLEMENTATIONS; impl++) {
				struct _astro_pm_block *into = disk->combs[c]->impl[impl];
				if (into && !into->pub.regression.ncoeff && (into->pub.regression.coeff = malloc(sizeof(double)))) {
					into->pub.regression.coeff[0] = NAN;
					into->pub.regression.ncoeff = 1;
				}
			}
	free(all);
}

/* Appends this run's samples in mem to f (after the header when empty), and closes it. */
static int samples_append(const struct starpu_perfmodel *model, const struct _astro_pm_data *mem, FILE *f, const char *path,
			  unsigned width, bool empty)
{
	if (empty)
		samples_header(model, f);
	for (unsigned c = 0; c < mem->ncombs; c++)
		for (unsigned impl = 0; impl < STARPU_MAXIMPLEMENTATIONS; impl++) {
			const struct _astro_pm_block *b = mem->combs[c]->impl[impl];
			for (unsigned i = 0; b && b->mlr_width == width && i < b->mlr_nrows; i++) {
				const double *row = b->mlr_rows + (size_t)i * width;
				fprintf(f, "\n%f", row[0]);
				for (unsigned k = 1; k < width; k++)
					fprintf(f, ", %f", row[k]);
			}
		}
	int ret = fflush(f) != 0 ? -errno : 0;
	if (fclose(f) != 0 && !ret)
		ret = -errno;
	if (ret)
		_astro_error("cannot write %s (%s): samples of model %s are lost", path, strerror(-ret), model->symbol);
	return ret;
}

int _astro_pm_mlr_save(struct starpu_perfmodel *model, struct _astro_pm_data *disk, char **terms)
{
	struct _starpu_perfmodel_state *s = model->state;
	struct _astro_pm_data *mem = &s->data;
	*terms = NULL;
	if (!s->mlr_checked || s->mlr_bad)
		return 0;	/* never used in this run (or unusable): no samples, and the description is not to be followed */
	unsigned width = model->nparameters + 1;
	unsigned nnew = samples_taken(mem, width);
	*terms = terms_names(model);
	if (nnew == 0)
		return 0;

	char path[PATH_MAX];
	samples_path(model->symbol, path, sizeof(path));
	double *old = NULL;
	unsigned nold = 0;
	bool empty;
	int ret;
	FILE *f = samples_open(model, path, width, &old, &nold, &empty, &ret);
	if (!f)
		return ret;
	fit_blocks(model, mem, disk, old, nold, nnew, width);
	free(old);
	return samples_append(model, mem, f, path, width, empty);
}
