/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * History entries and regressions: how one measurement updates a model.
 *
 * The rules are StarPU's (notes/perfmodels.md §3): a new HISTORY entry drops
 * its first single measurement (a cold run), sums give the mean and the
 * population deviation, a regression keeps log-log sums and refits alpha and
 * beta once the sizes spread by 10% and it has STARPU_CALIBRATE_MINIMUM
 * samples. Outliers differ: StarPU compares a sample with the entry's mean
 * (STARPU_HISTORY_MAX_ERROR, 50%), so one early spike becomes the mean and
 * every normal sample after it looks wrong. Here a sample is compared with
 * the median of the entry's last observations (spikes included), with a
 * tolerance of max(5 MAD-sigmas, MAX_ERROR% of the median); the mean is used
 * only until three observations exist. Rejected samples feed neither the
 * entry nor the regression sums.
 */
#include "models.h"
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* STARPU_CALIBRATE_MINIMUM and STARPU_HISTORY_MAX_ERROR, read at starpu_init
 * (or at first use without it), as StarPU does: a getenv() per sample cost
 * more than the rest of recording it. 0: not read yet. */
static unsigned calibrate_minimum, max_error;

void _astro_pm_env_read(void)
{
	int v = astro_env_int("STARPU_CALIBRATE_MINIMUM", 1, 1000000, 10, "samples");
	__atomic_store_n(&calibrate_minimum, (unsigned)v, __ATOMIC_RELAXED);
	v = astro_env_int("STARPU_HISTORY_MAX_ERROR", 1, INT_MAX, 50, "%");
	__atomic_store_n(&max_error, (unsigned)v, __ATOMIC_RELAXED);
}

unsigned _astro_pm_calibrate_minimum(void)
{
	unsigned v = __atomic_load_n(&calibrate_minimum, __ATOMIC_RELAXED);
	if (STARPU_UNLIKELY(!v)) {
		_astro_pm_env_read();
		v = __atomic_load_n(&calibrate_minimum, __ATOMIC_RELAXED);
	}
	return v;
}

static double max_error_percent(void)
{
	unsigned v = __atomic_load_n(&max_error, __ATOMIC_RELAXED);
	if (STARPU_UNLIKELY(!v)) {
		_astro_pm_env_read();
		v = __atomic_load_n(&max_error, __ATOMIC_RELAXED);
	}
	return (double)v;
}

bool _astro_pm_regression_valid(const struct starpu_perfmodel_regression_model *r)
{
	return r->minx < 9 * r->maxx / 10 && r->nsample >= _astro_pm_calibrate_minimum();
}

void _astro_pm_regression_refit(struct starpu_perfmodel_regression_model *r)
{
	double n = r->nsample;
	double denom = n * r->sumlnx2 - r->sumlnx * r->sumlnx;
	if (r->nsample > 1 && denom != 0.0) {
		r->beta = (n * r->sumlnxlny - r->sumlnx * r->sumlny) / denom;
		r->alpha = exp((r->sumlny - r->beta * r->sumlnx) / n);
	} else {
		r->alpha = r->beta = NAN;
	}
	r->valid = !isnan(r->alpha) && !isnan(r->beta) && _astro_pm_regression_valid(r);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median_sorted(const double *s, unsigned n)
{
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* Median absolute deviation of sorted s around its median med: the
 * deviations on each side of med are already in order, so a merge sorts them. */
static double mad_sorted(const double *s, unsigned n, double med)
{
	double d[_ASTRO_PM_WINDOW];
	unsigned r = 0, k = 0;
	while (r < n && s[r] < med)
		r++;
	int l = (int)r - 1;
	while (k < n) {
		if (l >= 0 && (r >= n || med - s[l] <= s[r] - med))
			d[k++] = med - s[l--];
		else
			d[k++] = s[r++] - med;
	}
	return median_sorted(d, n);
}

/* Is measured an outlier for e? Decided before measured joins the window.
 * Within MAX_ERROR% of the median a sample is kept whatever the deviation
 * says, so the deviation is computed only for the few samples beyond. */
static bool is_outlier(const struct _astro_pm_entry *e, double measured)
{
	double tolerance = max_error_percent() / 100.0;
	if (e->nwindow >= 3) {
		double med = median_sorted(e->sorted, e->nwindow), off = fabs(measured - med);
		if (off <= tolerance * med)
			return false;
		return off > 5 * 1.4826 * mad_sorted(e->sorted, e->nwindow, med);
	}
	if (e->h.nsample == 0 || e->h.mean <= 0)
		return false;
	double r = measured / e->h.mean;
	return r > 1 + tolerance || 1 / r > 1 + tolerance;
}

/* Adds measured to the window (dropping the oldest when full) and to its sorted copy. */
static void window_push(struct _astro_pm_entry *e, double measured)
{
	unsigned n = e->nwindow;
	if (n == _ASTRO_PM_WINDOW) {
		double old = e->window[e->window_pos];
		unsigned i = 0;
		while (i + 1 < n && e->sorted[i] != old)
			i++;
		memmove(&e->sorted[i], &e->sorted[i + 1], (n - 1 - i) * sizeof(double));
		n--;
	}
	unsigned j = n;
	for (; j > 0 && e->sorted[j - 1] > measured; j--)
		e->sorted[j] = e->sorted[j - 1];
	e->sorted[j] = measured;
	e->window[e->window_pos] = measured;
	e->window_pos = (e->window_pos + 1) % _ASTRO_PM_WINDOW;
	if (e->nwindow < _ASTRO_PM_WINDOW)
		e->nwindow++;
}

/* arch for a person, as the workers are named: "CPU 0", "CPU 0 (4 cores)", "CUDA 0 + CPU 0"
 * (not in format.c: the model-file fuzzer builds that alone, without the runtime). */
void _astro_pm_arch_words(const struct starpu_perfmodel_arch *arch, char *name, size_t maxlen)
{
	size_t len = 0;
	if (!maxlen)
		return;
	snprintf(name, maxlen, "an unknown architecture");
	for (int i = 0; arch && i < arch->ndevices && len < maxlen; i++) {
		const struct starpu_perfmodel_device *d = &arch->devices[i];
		len += (size_t)snprintf(name + len, maxlen - len, "%s%s %d", i ? " + " : "", starpu_worker_get_type_as_string(d->type),
					d->devid);
		if (d->ncores > 1 && len < maxlen)
			len += (size_t)snprintf(name + len, maxlen - len, " (%d cores)", d->ncores);
	}
}

void _astro_pm_record(struct starpu_perfmodel *model, struct _astro_pm_block *b, uint32_t footprint, size_t size,
		      double flops, double measured, unsigned number, const struct starpu_perfmodel_arch *arch, unsigned nimpl)
{
	/* A duration beyond _ASTRO_PM_MAX_VALUE (1e100 µs) is a broken clock or meter, not a measurement. */
	if (!(measured >= 0 && measured <= _ASTRO_PM_MAX_VALUE) || number == 0)
		return;
	struct _astro_pm_entry *e = _astro_pm_block_find(b, footprint);
	bool fresh = !e;
	if (fresh) {
		e = _astro_pm_block_add(b, footprint, size);
		if (!e)
			return;
	}
	bool drop_first = fresh && number == 1 && model->type == STARPU_HISTORY_BASED;
	bool outlier = !fresh && number == 1 && is_outlier(e, measured);
	if (number == 1)
		window_push(e, measured);
	if (drop_first)
		return;
	if (outlier) {
		e->h.nerror += number;
		/* The kept samples are the odd ones (e.g. a spike kept first): start again from the window. */
		if (e->h.nerror >= e->h.nsample && e->h.nsample > 0) {
			char archname[128];
			_astro_pm_arch_words(arch, archname, sizeof(archname));
			_astro_warn("model %s on %s (implementation %u): %u sample%s rejected against %u kept (last %.3g us, mean %.3g us): "
				    "flushing the entry (raise STARPU_HISTORY_MAX_ERROR if the task's duration really varies that much)",
				    model->symbol, archname, nimpl, e->h.nerror, e->h.nerror == 1 ? "" : "s", e->h.nsample, measured, e->h.mean);
			e->h.sum = e->h.sum2 = 0;
			e->h.nsample = e->h.nerror = 0;
			_astro_pm_entry_refresh(&e->h);
		}
		return;
	}
	_astro_pm_entry_add(&e->h, measured * number, measured * measured * number, number);
	if (flops != 0.0) {
		if (e->h.flops == 0.0)
			e->h.flops = flops;
		else if (!isnan(e->h.flops) && fabs(e->h.flops - flops) > 1e-5 * fabs(flops))
			e->h.flops = NAN;
	}
	if ((model->type == STARPU_REGRESSION_BASED || model->type == STARPU_NL_REGRESSION_BASED) && size > 0 && measured > 0) {
		struct starpu_perfmodel_regression_model *r = &b->pub.regression;
		double lx = log((double)size), ly = log(measured);
		_astro_pm_regression_make_room(r, number);
		for (unsigned i = 0; i < number; i++) {
			r->sumlnx += lx;
			r->sumlnx2 += lx * lx;
			r->sumlny += ly;
			r->sumlnxlny += lx * ly;
			r->nsample++;
		}
		if (r->minx == 0 || size < r->minx)
			r->minx = size;
		if (size > r->maxx)
			r->maxx = size;
		_astro_pm_regression_refit(r);
	}
}

/* ------------------------------------------------ non-linear regression */

/* Pearson correlation of (ln x, ln(y - c)) over the points with y > c. */
static double correlation(const double *x, const double *y, const double *w, unsigned n, double c)
{
	double sw = 0, sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
	for (unsigned i = 0; i < n; i++) {
		if (y[i] <= c)
			continue;
		double lx = log(x[i]), ly = log(y[i] - c);
		sw += w[i];
		sx += w[i] * lx;
		sy += w[i] * ly;
		sxx += w[i] * lx * lx;
		syy += w[i] * ly * ly;
		sxy += w[i] * lx * ly;
	}
	double num = sw * sxy - sx * sy;
	double den = sqrt(fmax(sw * sxx - sx * sx, 0)) * sqrt(fmax(sw * syy - sy * sy, 0));
	return den > 0 ? num / den : 0;
}

/* Weight of a point whose y is close to c: 0 within one c of it, full beyond two, smooth between. */
static double closeness_weight(double y, double c)
{
	if (c <= 0)
		return 1;
	double t = (y - c) / c - 1;
	if (t <= 0)
		return 0;
	if (t >= 1)
		return 1;
	return t < 0.5 ? 2 * t * t : 1 - 2 * (1 - t) * (1 - t);
}

int _astro_pm_nl_fit(struct _astro_pm_block *b)
{
	unsigned n = 0;
	double *x = malloc(4 * (b->nentries + 1) * sizeof(double));
	if (!x)
		return -1;
	double *y = x + b->nentries + 1, *w = y + b->nentries + 1, *sorted = w + b->nentries + 1;
	for (unsigned i = 0; i < b->nentries; i++) {
		const struct starpu_perfmodel_history_entry *h = &b->entries[i]->h;
		if (h->nsample == 0 || h->size == 0 || !(h->mean > 0))
			continue;
		x[n] = (double)h->size;
		y[n] = h->mean;
		w[n] = h->nsample;
		n++;
	}
	if (n < 2) {
		free(x);
		return -1;
	}
	/* c lies between 0 and the n/3-th smallest mean: search where the log-log fit is straightest. */
	memcpy(sorted, y, n * sizeof(double));
	qsort(sorted, n, sizeof(double), cmp_double);
	double cmin = 0, cmax = sorted[n / 3], last = INFINITY;
	for (int it = 0; it < 1000; it++) {
		double c1 = cmin + 0.33 * (cmax - cmin), c2 = cmin + 0.67 * (cmax - cmin);
		double e1 = fabs(1 - correlation(x, y, w, n, c1)), e2 = fabs(1 - correlation(x, y, w, n, c2));
		if (e1 < e2)
			cmax = c2;
		else
			cmin = c1;
		double err = fmin(e1, e2);
		if (fabs(err - last) < 1e-10)
			break;
		last = err;
	}
	double c = (cmin + cmax) / 2;
	double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
	for (unsigned i = 0; i < n; i++) {
		if (y[i] <= c)
			continue;
		double wi = w[i] * closeness_weight(y[i], c);
		double lx = log(x[i]), ly = log(y[i] - c);
		sw += wi;
		sx += wi * lx;
		sy += wi * ly;
		sxx += wi * lx * lx;
		sxy += wi * lx * ly;
	}
	free(x);
	double den = sw * sxx - sx * sx;
	if (sw <= 0 || den == 0)
		return -1;
	struct starpu_perfmodel_regression_model *r = &b->pub.regression;
	r->b = (sw * sxy - sx * sy) / den;
	r->a = exp((sy - r->b * sx) / sw);
	r->c = c;
	return 0;
}
