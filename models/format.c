/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A model's data and StarPU's version-45 text form of it: the blocks and
 * their entries, a pure parser and the writer. Nothing here touches the
 * runtime or global state: bench/fuzz/fuzz_model_file.c drives this file
 * alone.
 */
#include "format.h"
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ data */

struct _astro_pm_block *_astro_pm_block_new(void)
{
	struct _astro_pm_block *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->by_footprint = g_hash_table_new(g_direct_hash, g_direct_equal);
	b->pub.regression.alpha = b->pub.regression.beta = NAN;
	b->pub.regression.a = b->pub.regression.b = b->pub.regression.c = NAN;
	b->base_reg = b->pub.regression;
	return b;
}

void _astro_pm_block_free(struct _astro_pm_block *b)
{
	if (!b)
		return;
	for (unsigned i = 0; i < b->nentries; i++)
		free(b->entries[i]);
	free(b->entries);
	free(b->pub.regression.coeff);
	free(b->mlr_rows);
	g_hash_table_destroy(b->by_footprint);
	free(b);
}

void _astro_pm_data_clear(struct _astro_pm_data *d)
{
	for (unsigned c = 0; c < d->ncombs; c++) {
		for (unsigned i = 0; i < STARPU_MAXIMPLEMENTATIONS; i++)
			_astro_pm_block_free(d->combs[c]->impl[i]);
		free(d->combs[c]);
		d->combs[c] = NULL;
	}
	d->ncombs = 0;
	d->nbad = 0;
	d->bad[0] = '\0';
}

struct _astro_pm_entry *_astro_pm_block_find(struct _astro_pm_block *b, uint32_t footprint)
{
	return g_hash_table_lookup(b->by_footprint, GUINT_TO_POINTER(footprint));
}

struct _astro_pm_entry *_astro_pm_block_add(struct _astro_pm_block *b, uint32_t footprint, size_t size)
{
	if (b->nentries == b->capacity) {
		unsigned cap = b->capacity ? 2 * b->capacity : 8;
		struct _astro_pm_entry **n = realloc(b->entries, cap * sizeof(*n));
		if (!n)
			return NULL;
		b->entries = n;
		b->capacity = cap;
	}
	struct _astro_pm_entry *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->h.footprint = footprint;
	e->h.size = size;
	e->node.entry = &e->h;
	if (b->nentries)
		b->entries[b->nentries - 1]->node.next = &e->node;
	else
		b->pub.list = &e->node;
	b->entries[b->nentries++] = e;
	g_hash_table_insert(b->by_footprint, GUINT_TO_POINTER(footprint), e);
	return e;
}

void _astro_pm_entry_refresh(struct starpu_perfmodel_history_entry *h)
{
	if (h->nsample == 0) {
		h->mean = h->deviation = 0.0;
		return;
	}
	double n = h->nsample;
	h->mean = h->sum / n;
	/* sum * mean, not sum * sum / n: the square of a large sum would overflow. */
	h->deviation = sqrt(fabs(h->sum2 - h->sum * h->mean) / n);
}

void _astro_pm_entry_add(struct starpu_perfmodel_history_entry *h, double sum, double sum2, unsigned long n)
{
	double total = (double)h->nsample + (double)n;
	sum += h->sum;
	sum2 += h->sum2;
	while (total > _ASTRO_PM_MAX_COUNT) {
		total = floor(total / 2);
		sum /= 2;
		sum2 /= 2;
	}
	h->sum = sum, h->sum2 = sum2, h->nsample = (unsigned)total;
	_astro_pm_entry_refresh(h);
}

void _astro_pm_regression_make_room(struct starpu_perfmodel_regression_model *r, unsigned long more)
{
	while (r->nsample && (unsigned long)r->nsample + more > _ASTRO_PM_MAX_COUNT) {
		r->sumlnx /= 2, r->sumlnx2 /= 2, r->sumlny /= 2, r->sumlnxlny /= 2;
		r->nsample /= 2;
	}
}

double _astro_pm_regression_predict(const struct starpu_perfmodel_regression_model *r, bool nl, double size)
{
	if (!(size >= 0.9 * (double)r->minx && size <= 1.1 * (double)r->maxx))
		return NAN;
	double v = nl ? r->a * pow(size, r->b) + r->c : r->alpha * pow(size, r->beta);
	return v >= 0 && isfinite(v) ? v : NAN;
}

/* ------------------------------------------------------------- names */

const char *starpu_perfmodel_get_archtype_name(enum starpu_worker_archtype archtype)
{
	switch (archtype) {
	case STARPU_CPU_WORKER: return "cpu";
	case STARPU_CUDA_WORKER: return "cuda";
	case STARPU_OPENCL_WORKER: return "opencl";
	case STARPU_MAX_FPGA_WORKER: return "fpga";
	case STARPU_MPI_MS_WORKER: return "mpi_ms";
	case STARPU_TCPIP_MS_WORKER: return "tcpip_ms";
	case STARPU_HIP_WORKER: return "hip";
	default: return "unknown";
	}
}

void _astro_pm_arch_name(const struct starpu_perfmodel_arch *arch, int comb, unsigned nimpl, char *name, size_t maxlen)
{
	size_t len = 0;
	if (!maxlen)
		return;
	name[0] = '\0';
	for (int i = 0; arch && i < arch->ndevices && len < maxlen; i++)
		len += (size_t)snprintf(name + len, maxlen - len, "%s%s%d", i ? "_" : "",
					starpu_perfmodel_get_archtype_name(arch->devices[i].type), arch->devices[i].devid);
	if (len < maxlen)
		snprintf(name + len, maxlen - len, "_impl%u (Comb%d)", nimpl, comb);
}

/* ----------------------------------------------------------- the parser */

struct reader
{
	const char *p, *end;
	unsigned line;
	char *err;
	size_t errlen;
};

static int fail(struct reader *r, const char *what)
{
	snprintf(r->err, r->errlen, "line %u: %s", r->line, what);
	return -EINVAL;
}

/* Sets aside what line holds (an entry or a regression): counted, and named while there is room. */
static void set_aside(struct _astro_pm_data *d, unsigned line, const char *what)
{
	size_t used = strlen(d->bad);
	if (d->nbad < 3 && used < sizeof(d->bad))
		snprintf(d->bad + used, sizeof(d->bad) - used, "%sline %u: %s", used ? "; " : "", line, what);
	d->nbad++;
}

/* A mean, deviation, sum or sum of squares of a file: finite, non-negative and not so large that sums overflow. */
static bool sane(double v)
{
	return v >= 0 && v <= _ASTRO_PM_MAX_VALUE;
}

/* Finite and at most max in magnitude (NaN allowed when nan_ok: "not fitted"). */
static bool bounded(double v, double max, bool nan_ok)
{
	return isnan(v) ? nan_ok : fabs(v) <= max;
}

/* Why a history entry's values cannot be trusted, or NULL. */
static const char *entry_flaw(const struct starpu_perfmodel_history_entry *h, unsigned long n)
{
	if (n > _ASTRO_PM_MAX_COUNT)
		return "its sample count is over 2147483647";
	if (!sane(h->mean) || !sane(h->deviation) || !sane(h->sum) || !sane(h->sum2))
		return "its mean, deviation, sum and sum2 must be finite, non-negative and at most 1e100";
	if (!isnan(h->flops) && !sane(h->flops))
		return "its flops must be finite and non-negative (or nan)";
	if (n == 0)
		return h->sum == 0 && h->sum2 == 0 ? NULL : "its sum and sum2 must be 0 when it has no sample";
	double mean = h->sum / (double)n;
	if (fabs(h->mean - mean) > 1e-4 * fmax(h->mean, mean) + 1e-300)
		return "its mean is not sum / n";
	if (h->sum2 < h->sum * mean * (1 - 1e-4) - 1e-300)
		return "its sum2 is below sum * sum / n (a variance cannot be negative)";
	return NULL;
}

/* Why a block's regression cannot be trusted, or NULL. */
static const char *regression_flaw(const struct starpu_perfmodel_regression_model *r, unsigned long n)
{
	double max = _ASTRO_PM_MAX_VALUE;
	if (n > _ASTRO_PM_MAX_COUNT)
		return "the regression's sample count is over 2147483647";
	if (!bounded(r->sumlnx, max, false) || !bounded(r->sumlnx2, max, false) || r->sumlnx2 < 0 ||
	    !bounded(r->sumlny, max, false) || !bounded(r->sumlnxlny, max, false))
		return "the regression's sums must be finite and at most 1e100 in magnitude (sumlnx2 non-negative)";
	if (!bounded(r->alpha, max, true) || r->alpha < 0 || !bounded(r->beta, 100, true))
		return "the regression's alpha must be non-negative and its beta within [-100, 100] (or nan)";
	if (!bounded(r->a, max, true) || r->a < 0 || !bounded(r->b, 100, true) || !bounded(r->c, max, true) || r->c < 0)
		return "the non-linear regression's a and c must be non-negative and its b within [-100, 100] (or nan)";
	if (r->minx > r->maxx)
		return "the regression's minx is above its maxx";
	for (unsigned i = 0; i < r->ncoeff; i++)
		if (!bounded(r->coeff[i], max, true))
			return "a multiple-regression coefficient is not finite (or nan) within 1e100";
	return NULL;
}

/* Skips blanks, newlines and comment lines. */
static void skip(struct reader *r)
{
	while (r->p < r->end) {
		if (*r->p == '\n') {
			r->line++;
			r->p++;
		} else if (isspace((unsigned char)*r->p)) {
			r->p++;
		} else if (*r->p == '#') {
			while (r->p < r->end && *r->p != '\n')
				r->p++;
		} else {
			break;
		}
	}
}

/* Copies the next token of the current line into tok; false at the end of the line or the text. */
static bool token_on_line(struct reader *r, char *tok, size_t len)
{
	while (r->p < r->end && *r->p != '\n' && isspace((unsigned char)*r->p))
		r->p++;
	if (r->p == r->end || *r->p == '\n' || *r->p == '#')
		return false;
	size_t n = 0;
	while (r->p < r->end && !isspace((unsigned char)*r->p)) {
		if (n + 1 < len)
			tok[n++] = *r->p;
		r->p++;
	}
	tok[n] = '\0';
	return true;
}

static bool token(struct reader *r, char *tok, size_t len)
{
	skip(r);
	return token_on_line(r, tok, len);
}

static bool parse_double(const char *tok, double *v)
{
	char *end;
	*v = strtod(tok, &end);
	if (end != tok && *end == '\0' && isnan(*v))
		*v = NAN;	/* "-nan" reads back as the positive NaN the writer prints */
	return end != tok && *end == '\0';
}

static bool parse_ulong(const char *tok, unsigned long max, unsigned long *v, int base)
{
	if (!tok[0] || tok[0] == '-' || tok[0] == '+')
		return false;
	char *end;
	errno = 0;
	*v = strtoul(tok, &end, base);
	return errno == 0 && *end == '\0' && *v <= max;
}

static int read_uint(struct reader *r, unsigned long max, unsigned long *v, const char *what)
{
	char tok[64];
	if (!token(r, tok, sizeof(tok)) || !parse_ulong(tok, max, v, 10))
		return fail(r, what);
	return 0;
}

static int read_int(struct reader *r, int min, int max, int *v, const char *what)
{
	char tok[64], *end;
	if (!token(r, tok, sizeof(tok)))
		return fail(r, what);
	errno = 0;
	long l = strtol(tok, &end, 10);
	if (errno || *end || end == tok || l < min || l > max)
		return fail(r, what);
	*v = (int)l;
	return 0;
}

static int read_doubles(struct reader *r, double *v, unsigned n, const char *what)
{
	char tok[64];
	for (unsigned i = 0; i < n; i++)
		if (!(i ? token_on_line(r, tok, sizeof(tok)) : token(r, tok, sizeof(tok))) || !parse_double(tok, &v[i]))
			return fail(r, what);
	return 0;
}

/* Forgets a regression set aside: the block reads as one with no regression yet. */
static void regression_reset(struct starpu_perfmodel_regression_model *reg)
{
	free(reg->coeff);
	memset(reg, 0, sizeof(*reg));
	reg->alpha = reg->beta = reg->a = reg->b = reg->c = NAN;
}

static int parse_block(struct reader *r, struct _astro_pm_data *d, struct _astro_pm_block *b)
{
	unsigned long nentries, ul, reg_n;
	int ret;
	if ((ret = read_uint(r, UINT32_MAX, &nentries, "expected the number of entries")))
		return ret;
	/* Each entry takes at least 16 characters: a larger count is a corrupt file, not an allocation to try. */
	if (nentries > (unsigned long)(r->end - r->p) / 16)
		return fail(r, "more entries announced than the file holds");
	struct starpu_perfmodel_regression_model *reg = &b->pub.regression;
	double v[6];
	if ((ret = read_doubles(r, v, 6, "expected the regression sums (sumlnx sumlnx2 sumlny sumlnxlny alpha beta)")))
		return ret;
	unsigned reg_line = r->line;
	reg->sumlnx = v[0], reg->sumlnx2 = v[1], reg->sumlny = v[2], reg->sumlnxlny = v[3], reg->alpha = v[4], reg->beta = v[5];
	char tok[64];
	if (!token_on_line(r, tok, sizeof(tok)) || !parse_ulong(tok, UINT32_MAX, &ul, 10))
		return fail(r, "expected the regression's sample count");
	reg->nsample = (unsigned)ul;
	reg_n = ul;
	if (!token_on_line(r, tok, sizeof(tok)) || !parse_ulong(tok, ULONG_MAX, &reg->minx, 10) ||
	    !token_on_line(r, tok, sizeof(tok)) || !parse_ulong(tok, ULONG_MAX, &reg->maxx, 10))
		return fail(r, "expected the regression's minx and maxx");
	if ((ret = read_doubles(r, v, 3, "expected the non-linear regression's a b c")))
		return ret;
	reg->a = v[0], reg->b = v[1], reg->c = v[2];
	if ((ret = read_uint(r, 1024, &ul, "expected the number of multiple-regression coefficients")))
		return ret;
	if (ul) {
		reg->ncoeff = (unsigned)ul;
		reg->coeff = calloc(ul, sizeof(double));
		if (!reg->coeff)
			return fail(r, "out of memory");
		for (unsigned i = 0; i < reg->ncoeff; i++)
			if (!token_on_line(r, tok, sizeof(tok)) || !parse_double(tok, &reg->coeff[i]))
				return fail(r, "expected a multiple-regression coefficient");
	}
	const char *flaw = regression_flaw(reg, reg_n);
	if (flaw) {
		set_aside(d, reg_line, flaw);
		regression_reset(reg);
	}
	b->base_reg = *reg;
	b->base_reg.coeff = NULL;
	for (unsigned long i = 0; i < nentries; i++) {
		char f[8][64];
		unsigned n = 0;
		skip(r);
		while (n < 8 && token_on_line(r, f[n], sizeof(f[n])))
			n++;
		if (token_on_line(r, tok, sizeof(tok)) || n < 7)
			return fail(r, "a history entry needs 8 fields: hash size flops mean dev sum sum2 n");
		/* The old format has no flops column. */
		const char *const *cols = (const char *const[]){ f[0], f[1], n == 8 ? f[2] : "0", f[n - 5], f[n - 4], f[n - 3], f[n - 2], f[n - 1] };
		unsigned long fp, size, ns;
		double flops, mean, dev, sum, sum2;
		if (!parse_ulong(cols[0], UINT32_MAX, &fp, 16) || !parse_ulong(cols[1], ULONG_MAX, &size, 10) ||
		    !parse_double(cols[2], &flops) || !parse_double(cols[3], &mean) || !parse_double(cols[4], &dev) ||
		    !parse_double(cols[5], &sum) || !parse_double(cols[6], &sum2) || !parse_ulong(cols[7], UINT32_MAX, &ns, 10))
			return fail(r, "malformed history entry");
		if (_astro_pm_block_find(b, (uint32_t)fp))
			return fail(r, "the same footprint appears twice");
		struct starpu_perfmodel_history_entry h = { .flops = flops, .mean = mean, .deviation = dev, .sum = sum, .sum2 = sum2 };
		if ((flaw = entry_flaw(&h, ns))) {
			set_aside(d, r->line, flaw);
			continue;
		}
		struct _astro_pm_entry *e = _astro_pm_block_add(b, (uint32_t)fp, size);
		if (!e)
			return fail(r, "out of memory");
		e->h.flops = flops, e->h.mean = mean, e->h.deviation = dev, e->h.sum = sum, e->h.sum2 = sum2;
		e->h.nsample = (unsigned)ns;
		e->base_sum = sum, e->base_sum2 = sum2, e->base_nsample = (unsigned)ns;
	}
	return 0;
}

int _astro_perfmodel_parse(const char *text, size_t len, struct _astro_pm_data *out, char *err, size_t errlen)
{
	struct reader r = { .p = text, .end = text + len, .line = 1, .err = err, .errlen = errlen };
	unsigned long version, ncombs;
	int ret;
	memset(out, 0, sizeof(*out));
	if (errlen)
		err[0] = '\0';
	skip(&r);
	if (r.p == r.end)
		return fail(&r, "the file is empty");
	if ((ret = read_uint(&r, UINT32_MAX, &version, "expected the format version")))
		return ret;
	if (version != _ASTRO_PM_VERSION) {
		snprintf(err, errlen, "line %u: format version %lu, this runtime reads version %d", r.line, version, _ASTRO_PM_VERSION);
		return -EINVAL;
	}
	if ((ret = read_uint(&r, _ASTRO_PM_MAX_COMBS, &ncombs, "expected the number of combinations (at most 64)")))
		return ret;
	for (unsigned c = 0; c < ncombs; c++) {
		struct _astro_pm_comb *comb = calloc(1, sizeof(*comb));
		if (!comb) {
			ret = fail(&r, "out of memory");
			goto fail;
		}
		comb->global = -1;
		out->combs[out->ncombs++] = comb;
		if ((ret = read_int(&r, 1, _ASTRO_PM_MAX_DEVICES, &comb->ndevices, "expected the number of devices (1 to 16)")))
			goto fail;
		for (int d = 0; d < comb->ndevices; d++) {
			int type;
			if ((ret = read_int(&r, 0, STARPU_NARCH - 1, &type, "expected a device type (0 to 7)")) ||
			    (ret = read_int(&r, 0, 1 << 20, &comb->devices[d].devid, "expected a device id")) ||
			    (ret = read_int(&r, 1, 1 << 20, &comb->devices[d].ncores, "expected a number of cores")))
				goto fail;
			comb->devices[d].type = (enum starpu_worker_archtype)type;
		}
		for (unsigned p = 0; p < c; p++)
			if (out->combs[p]->ndevices == comb->ndevices &&
			    !memcmp(out->combs[p]->devices, comb->devices, (size_t)comb->ndevices * sizeof(comb->devices[0]))) {
				ret = fail(&r, "the same combination appears twice");
				goto fail;
			}
		unsigned long nimpls;
		if ((ret = read_uint(&r, 64, &nimpls, "expected the number of implementations")))
			goto fail;
		comb->nimpls = nimpls < STARPU_MAXIMPLEMENTATIONS ? (unsigned)nimpls : STARPU_MAXIMPLEMENTATIONS;
		for (unsigned i = 0; i < nimpls; i++) {
			struct _astro_pm_block *b = _astro_pm_block_new();
			if (!b) {
				ret = fail(&r, "out of memory");
				goto fail;
			}
			ret = parse_block(&r, out, b);
			/* Implementations beyond what this build has are read and dropped, as StarPU does. */
			if (ret || i >= STARPU_MAXIMPLEMENTATIONS)
				_astro_pm_block_free(b);
			else
				comb->impl[i] = b;
			if (ret)
				goto fail;
		}
	}
	skip(&r);
	if (r.p != r.end) {
		ret = fail(&r, "unexpected text after the last combination");
		goto fail;
	}
	return 0;
fail:
	_astro_pm_data_clear(out);
	return ret;
}

/* ----------------------------------------------------------- the writer */

int _astro_perfmodel_write(FILE *f, const struct _astro_pm_data *d)
{
	fprintf(f, "##################\n# Performance Model Version\n%d\n\n", _ASTRO_PM_VERSION);
	fprintf(f, "####################\n# COMBs\n# number of combinations\n%u\n", d->ncombs);
	for (unsigned c = 0; c < d->ncombs; c++) {
		const struct _astro_pm_comb *comb = d->combs[c];
		int id = comb->global >= 0 ? comb->global : (int)c;
		fprintf(f, "####################\n# COMB_%d\n# number of types devices\n%d\n", id, comb->ndevices);
		for (int i = 0; i < comb->ndevices; i++) {
			fprintf(f, "####################\n# DEV_%d\n# device type (CPU - 0, CUDA - 1, OPENCL - 2, MPI_MS - 5, TCPIP_MS - 6)\n%d\n",
				i, (int)comb->devices[i].type);
			fprintf(f, "####################\n# DEV_%d\n# device id \n%d\n", i, comb->devices[i].devid);
			fprintf(f, "####################\n# DEV_%d\n# number of cores \n%d\n", i, comb->devices[i].ncores);
		}
		fprintf(f, "##########\n# number of implementations\n%u\n", comb->nimpls);
		struct starpu_perfmodel_arch arch = { .ndevices = comb->ndevices, .devices = (struct starpu_perfmodel_device *)comb->devices };
		for (unsigned impl = 0; impl < comb->nimpls; impl++) {
			static const struct _astro_pm_block empty = {
				.pub.regression = { .alpha = NAN, .beta = NAN, .a = NAN, .b = NAN, .c = NAN } };
			const struct _astro_pm_block *b = comb->impl[impl] ? comb->impl[impl] : &empty;
			const struct starpu_perfmodel_regression_model *r = &b->pub.regression;
			char name[256];
			_astro_pm_arch_name(&arch, id, impl, name, sizeof(name));
			fprintf(f, "#####\n# Model for %s\n# number of entries\n%u\n", name, b->nentries);
			fprintf(f, "# sumlnx\tsumlnx2\t\tsumlny\t\tsumlnxlny\talpha\t\tbeta\t\tn\tminx\t\tmaxx\n");
			/* NaN is printed positive: a "-nan" would not match StarPU's files. */
			fprintf(f, "%-15e\t%-15e\t%-15e\t%-15e\t%-15e\t%-15e\t%u\t%-15lu\t%-15lu\n", r->sumlnx, r->sumlnx2, r->sumlny,
				r->sumlnxlny, isnan(r->alpha) ? NAN : r->alpha, isnan(r->beta) ? NAN : r->beta, r->nsample, r->minx, r->maxx);
			fprintf(f, "# a\t\tb\t\tc\n%-15e\t%-15e\t%-15e\n", isnan(r->a) ? NAN : r->a, isnan(r->b) ? NAN : r->b,
				isnan(r->c) ? NAN : r->c);
			if (r->ncoeff) {
				fprintf(f, "# n\tintercept\t");
				if (d->mlr_terms)
					fputs(d->mlr_terms, f);
				else
					for (unsigned i = 1; i < r->ncoeff; i++)
						fprintf(f, "c%u\t", i);
				fprintf(f, "\n%u", r->ncoeff);
				for (unsigned i = 0; i < r->ncoeff; i++)
					fprintf(f, "\t%-15e", isnan(r->coeff[i]) ? NAN : r->coeff[i]);
				fprintf(f, "\n");
			} else {
				fprintf(f, "# not multiple-regression-base\n0\n");
			}
			fprintf(f, "# hash\t\tsize\t\tflops\t\tmean (us or J)\tdev (us or J)\tsum\t\tsum2\t\tn\n");
			for (unsigned i = 0; i < b->nentries; i++) {
				const struct starpu_perfmodel_history_entry *h = &b->entries[i]->h;
				fprintf(f, "%08x\t%-15lu\t%-15e\t%-15e\t%-15e\t%-15e\t%-15e\t%u\n", h->footprint, (unsigned long)h->size,
					isnan(h->flops) ? NAN : h->flops, h->mean, h->deviation, h->sum, h->sum2, h->nsample);
			}
			fprintf(f, "\n");
		}
	}
	return ferror(f) ? -EIO : 0;
}

