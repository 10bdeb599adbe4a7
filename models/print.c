/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Printing models as StarPU 1.4's tools show them (notes/perfmodels.md §4, §6):
 * starpu_perfmodel_print / _print_all (starpu_perfmodel_display's text),
 * starpu_perfmodel_dump_xml (-x), starpu_perfmodel_print_estimations
 * (starpu_tasks_rec_complete's EstimatedTime) and starpu_perfmodel_list_combs
 * (starpu_perfmodel_plot -lc). Each function reads the model under its lock;
 * none touches a file.
 */
#include "models.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* NaN printed positive, as the model files write it. */
static double pos(double v)
{
	return isnan(v) ? NAN : v;
}

static bool block_has_data(const struct _astro_pm_block *b)
{
	return b && (b->pub.regression.nsample || b->pub.regression.valid || b->pub.regression.nl_valid || b->pub.regression.ncoeff ||
		     b->pub.list);
}

static void monomial_name(const struct starpu_perfmodel *model, unsigned i, FILE *f);

/* The coefficients of a multiple regression: its terms named by the codelet's model when it is there (a model
 * loaded from its file alone, by starpu_perfmodel_display, knows only their number). */
static void print_mlr(const struct starpu_perfmodel *model, const struct starpu_perfmodel_regression_model *r, FILE *output)
{
	bool named = model->parameters_names && model->combinations && model->ncombinations + 1 == r->ncoeff;
	fprintf(output, "\tMultiple regression: y = constant");
	for (unsigned i = 1; i < r->ncoeff; i++) {
		fprintf(output, " + c%u * ", i);
		if (named)
			monomial_name(model, i - 1, output);
		else
			fprintf(output, "term%u", i);
	}
	fprintf(output, " (%u coefficient%s)\n\t\tconstant = %e\n", r->ncoeff, r->ncoeff > 1 ? "s" : "", pos(r->coeff[0]));
	for (unsigned i = 1; i < r->ncoeff; i++)
		fprintf(output, "\t\tc%u = %e\n", i, pos(r->coeff[i]));
}

static const char *const parameters[] = { "a", "b", "c", "alpha", "beta", "mean", "stddev", "path-file-debug" };

static bool parameter_known(const char *parameter)
{
	for (unsigned i = 0; i < sizeof(parameters) / sizeof(parameters[0]); i++)
		if (!strcmp(parameter, parameters[i]))
			return true;
	return false;
}

/* The history table of b (entries of footprint only when given), or one column of it. */
static void print_history(const struct _astro_pm_block *b, const char *parameter, const uint32_t *footprint, FILE *output)
{
	if (!parameter && b->nentries)
		fprintf(output, "# hash\t\tsize\t\tflops\t\tmean (us or J)\tstddev (us or J)\t\tn\n");
	for (unsigned i = 0; i < b->nentries; i++) {
		const struct starpu_perfmodel_history_entry *h = &b->entries[i]->h;
		if (footprint && h->footprint != *footprint)
			continue;
		if (!parameter)
			fprintf(output, "%08x\t%-15lu\t%-15e\t%-15e\t%-15e\t%u\n", h->footprint, (unsigned long)h->size, pos(h->flops),
				h->mean, h->deviation, h->nsample);
		else
			fprintf(output, "%-15e\n", !strcmp(parameter, "mean") ? h->mean : h->deviation);
	}
}

/* Prints block b of model (global combination comb, arch, impl); caller holds the state lock. */
static void print_block(struct starpu_perfmodel *model, const struct _astro_pm_block *b, struct starpu_perfmodel_arch *arch, int comb,
			unsigned nimpl, const char *parameter, const uint32_t *footprint, FILE *output)
{
	if (!block_has_data(b))
		return;
	const struct starpu_perfmodel_regression_model *r = &b->pub.regression;
	char name[256];
	_astro_pm_arch_name(arch, comb, nimpl, name, sizeof(name));
	fprintf(output, "# performance model for %s\n", name);
	if (!parameter) {
		if (r->nsample)
			fprintf(output, "\tRegression : #sample = %u\n", r->nsample);
		if (r->valid)
			fprintf(output, "\tLinear: y = alpha size ^ beta\n\t\talpha = %e\n\t\tbeta = %e\n", r->alpha, r->beta);
		if (r->nl_valid)
			fprintf(output, "\tNon-Linear: y = a size ^b + c\n\t\ta = %e\n\t\tb = %e\n\t\tc = %e\n", r->a, r->b, r->c);
		if (r->ncoeff && r->coeff)
			print_mlr(model, r, output);
		print_history(b, NULL, footprint, output);
	} else if (!strcmp(parameter, "mean") || !strcmp(parameter, "stddev")) {
		print_history(b, parameter, footprint, output);
	} else if (!strcmp(parameter, "path-file-debug")) {
		char path[PATH_MAX];
		starpu_perfmodel_debugfilepath(model, arch, path, sizeof(path), nimpl);
		fprintf(output, "%s\n", path);
	} else {
		double v = !strcmp(parameter, "a") ? r->a : !strcmp(parameter, "b") ? r->b : !strcmp(parameter, "c") ? r->c
			 : !strcmp(parameter, "alpha") ? r->alpha : r->beta;
		fprintf(output, "%e\n", pos(v));
	}
}

void starpu_perfmodel_print(struct starpu_perfmodel *model, struct starpu_perfmodel_arch *arch, unsigned nimpl, char *parameter,
			    uint32_t *footprint, FILE *output)
{
	if (!model || !arch || !output || nimpl >= STARPU_MAXIMPLEMENTATIONS || (parameter && !parameter_known(parameter))) {
		_astro_error("starpu_perfmodel_print: bad arguments (model %p, arch %p, impl %u, parameter %s): give a model, an "
			     "architecture, impl below %d and a parameter among a b c alpha beta mean stddev path-file-debug",
			     (void *)model, (void *)arch, nimpl, parameter ? parameter : "(none)", STARPU_MAXIMPLEMENTATIONS);
		return;
	}
	_astro_pm_ensure_loaded(model);
	int comb = starpu_perfmodel_arch_comb_get(arch->ndevices, arch->devices);
	struct _starpu_perfmodel_state *s = model->state;
	if (comb < 0 || !s)
		return;
	starpu_pthread_mutex_lock(&s->lock);
	struct _astro_pm_block *b = _astro_pm_block_of(model, comb, nimpl, false);
	if (b)
		print_block(model, b, arch, comb, nimpl, parameter, footprint, output);
	starpu_pthread_mutex_unlock(&s->lock);
}

/* Prints every implementation of model for the combinations chosen by keep(arch, want). */
static void print_matching(struct starpu_perfmodel *model, bool (*keep)(const struct starpu_perfmodel_arch *, const struct starpu_perfmodel_device *),
			   const struct starpu_perfmodel_device *want, char *parameter, uint32_t *footprint, FILE *output)
{
	int n = starpu_perfmodel_get_narch_combs();
	for (int c = 0; c < n; c++) {
		struct starpu_perfmodel_arch *arch = starpu_perfmodel_arch_comb_fetch(c);
		if (!arch || (keep && !keep(arch, want)))
			continue;
		for (unsigned impl = 0; impl < STARPU_MAXIMPLEMENTATIONS; impl++)
			starpu_perfmodel_print(model, arch, impl, parameter, footprint, output);
	}
}

/* One device of want's type; want->devid < 0 matches any device id; want->ncores is matched as given. */
static bool single_device(const struct starpu_perfmodel_arch *arch, const struct starpu_perfmodel_device *want)
{
	const struct starpu_perfmodel_device *d = &arch->devices[0];
	return arch->ndevices == 1 && d->type == want->type && (want->devid < 0 || d->devid == want->devid) && d->ncores == want->ncores;
}

/* Reads "cpu", "cpu:K", "cuda", "cudaN", "cuda_N" (and so for every worker type) into want. */
static bool parse_arch(const char *arch, struct starpu_perfmodel_device *want)
{
	for (int t = 0; t < STARPU_NARCH; t++) {
		const char *name = starpu_perfmodel_get_archtype_name((enum starpu_worker_archtype)t);
		size_t len = strlen(name);
		if (strncmp(arch, name, len))
			continue;
		const char *rest = arch + len;
		char *end;
		*want = (struct starpu_perfmodel_device){ .type = (enum starpu_worker_archtype)t, .devid = -1, .ncores = 1 };
		if (!*rest) {
			if (t == STARPU_CPU_WORKER)
				want->devid = 0;
			return true;
		}
		if (t == STARPU_CPU_WORKER && *rest == ':') {
			long k = strtol(rest + 1, &end, 10);
			want->devid = 0;
			want->ncores = (int)k;
			return end != rest + 1 && !*end && k >= 1 && k <= STARPU_NMAXWORKERS;
		}
		if (*rest == '_')
			rest++;
		long id = strtol(rest, &end, 10);
		want->devid = (int)id;
		return end != rest && !*end && id >= 0 && id < (1 << 20) && t != STARPU_CPU_WORKER;
	}
	return false;
}

int starpu_perfmodel_print_all(struct starpu_perfmodel *model, char *arch, char *parameter, uint32_t *footprint, FILE *output)
{
	if (!model || !output) {
		_astro_error("starpu_perfmodel_print_all: give a model and an output stream");
		return -EINVAL;
	}
	if (parameter && !parameter_known(parameter)) {
		_astro_error("Unknown parameter requested: %s (give one of a b c alpha beta mean stddev path-file-debug)", parameter);
		return -EINVAL;
	}
	struct starpu_perfmodel_device want;
	if (arch && !parse_arch(arch, &want)) {
		_astro_error("Unknown architecture requested: %s (give cpu, cpu:K for K combined cores, cuda, cudaN or cuda_N, "
			     "and so for opencl, hip, ...)", arch);
		return -EINVAL;
	}
	_astro_pm_ensure_loaded(model);
	print_matching(model, arch ? single_device : NULL, &want, parameter, footprint, output);
	return 0;
}

int starpu_perfmodel_print_estimations(struct starpu_perfmodel *model, uint32_t footprint, FILE *output)
{
	if (!model || !output) {
		_astro_error("starpu_perfmodel_print_estimations: give a model and an output stream");
		return -EINVAL;
	}
	_astro_pm_ensure_loaded(model);
	struct _starpu_perfmodel_state *s = model->state;
	unsigned n = starpu_worker_get_count();
	for (unsigned w = 0; w < n; w++) {
		struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype((int)w, 0);
		int comb = arch ? starpu_perfmodel_arch_comb_get(arch->ndevices, arch->devices) : -1;
		double v = INFINITY;
		if (s && comb >= 0) {
			starpu_pthread_mutex_lock(&s->lock);
			struct _astro_pm_block *b = _astro_pm_block_of(model, comb, 0, false);
			struct _astro_pm_entry *e = b ? _astro_pm_block_find(b, footprint) : NULL;
			if (e)
				v = e->h.mean;
			starpu_pthread_mutex_unlock(&s->lock);
		}
		fprintf(output, "%s%e", w ? " " : "", v);
	}
	return 0;
}

int starpu_perfmodel_list_combs(FILE *output, struct starpu_perfmodel *model)
{
	if (!model || !output) {
		_astro_error("starpu_perfmodel_list_combs: give an output stream and a model");
		return -EINVAL;
	}
	_astro_pm_ensure_loaded(model);
	struct _starpu_perfmodel_state *s = model->state;
	fprintf(output, "Model <%s>\n", model->symbol ? model->symbol : "");
	if (!s)
		return 0;
	starpu_pthread_mutex_lock(&s->lock);
	for (unsigned i = 0; i < s->data.ncombs; i++) {
		const struct _astro_pm_comb *c = s->data.combs[i];
		fprintf(output, "\tComb %d: %d device%s\n", c->global, c->ndevices, c->ndevices > 1 ? "s" : "");
		for (int d = 0; d < c->ndevices; d++)
			fprintf(output, "\t\tDevice %d: type: %s - devid: %d - ncores: %d\n", d,
				starpu_perfmodel_get_archtype_name(c->devices[d].type), c->devices[d].devid, c->devices[d].ncores);
	}
	starpu_pthread_mutex_unlock(&s->lock);
	return 0;
}

/* ------------------------------------------------------------------ XML */

static const char *xml_type(enum starpu_worker_archtype type)
{
	switch (type) {
	case STARPU_CPU_WORKER: return "CPU";
	case STARPU_CUDA_WORKER: return "CUDA";
	case STARPU_OPENCL_WORKER: return "OpenCL";
	case STARPU_MPI_MS_WORKER: return "MPI_MS";
	case STARPU_TCPIP_MS_WORKER: return "TCPIP_MS";
	case STARPU_HIP_WORKER: return "HIP";
	case STARPU_MAX_FPGA_WORKER: return "FPGA";
	default: return "unknown";
	}
}

/* "M^2*N": the monomial of combination i, from the parameters' names. */
static void monomial_name(const struct starpu_perfmodel *model, unsigned i, FILE *f)
{
	if (!model->parameters_names) {
		fprintf(f, "c%u", i + 1);
		return;
	}
	bool first = true;
	for (unsigned j = 0; j < model->nparameters; j++) {
		unsigned e = model->combinations[i][j];
		if (!e)
			continue;
		fprintf(f, "%s", first ? "" : "*");
		first = false;
		if (model->parameters_names[j])
			fprintf(f, "%s", model->parameters_names[j]);
		else
			fprintf(f, "P%u", j);
		if (e > 1)
			fprintf(f, "^%u", e);
	}
}

static void xml_block(FILE *f, const struct starpu_perfmodel *model, const struct _astro_pm_block *b)
{
	const struct starpu_perfmodel_regression_model *r = &b->pub.regression;
	if (model->type == STARPU_REGRESSION_BASED) {
		fprintf(f, "      <!-- time = alpha size ^ beta -->\n");
		fprintf(f, "      <l_regression sumlnx=\"%e\" sumlnx2=\"%e\" sumlny=\"%e\" sumlnxlny=\"%e\" alpha=\"%e\" beta=\"%e\" "
			   "nsample=\"%u\" minx=\"%lu\" maxx=\"%lu\"/>\n",
			r->sumlnx, r->sumlnx2, r->sumlny, r->sumlnxlny, pos(r->alpha), pos(r->beta), r->nsample, r->minx, r->maxx);
	} else if (model->type == STARPU_NL_REGRESSION_BASED) {
		fprintf(f, "      <!-- time = a size ^b + c -->\n");
		fprintf(f, "      <nl_regression a=\"%e\" b=\"%e\" c=\"%e\"/>\n", pos(r->a), pos(r->b), pos(r->c));
	} else if (model->type == STARPU_MULTIPLE_REGRESSION_BASED) {
		if (!r->ncoeff || !r->coeff || !model->ncombinations || !model->combinations ||
		    r->ncoeff < model->ncombinations + 1) {
			fprintf(f, "      <ml_regression constant=\"nan\"/>\n");
		} else {
			fprintf(f, "      <ml_regression constant=\"%e\">\n", pos(r->coeff[0]));
			for (unsigned i = 0; i < model->ncombinations; i++) {
				fprintf(f, "        <monomial name=\"");
				monomial_name(model, i, f);
				fprintf(f, "\" coef=\"%e\"/>\n", pos(r->coeff[i + 1]));
			}
			fprintf(f, "      </ml_regression>\n");
		}
	}
	for (unsigned i = 0; i < b->nentries; i++) {
		const struct starpu_perfmodel_history_entry *h = &b->entries[i]->h;
		fprintf(f, "      <entry footprint=\"%08x\" size=\"%lu\" flops=\"%e\" mean=\"%e\" deviation=\"%e\" sum=\"%e\" sum2=\"%e\" "
			   "nsample=\"%u\"/>\n",
			h->footprint, (unsigned long)h->size, pos(h->flops), h->mean, h->deviation, h->sum, h->sum2, h->nsample);
	}
}

void starpu_perfmodel_dump_xml(FILE *output, struct starpu_perfmodel *model)
{
	if (!output || !model) {
		_astro_error("starpu_perfmodel_dump_xml: give an output stream and a model");
		return;
	}
	_astro_pm_ensure_loaded(model);
	fprintf(output, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(output, "<!DOCTYPE StarPUPerfmodel SYSTEM \"starpu-perfmodel.dtd\">\n");
	fprintf(output, "<!-- symbol %s -->\n", model->symbol ? model->symbol : "");
	fprintf(output, "<!-- All times in us -->\n");
	fprintf(output, "<perfmodel version=\"%d\">\n", _ASTRO_PM_VERSION);
	struct _starpu_perfmodel_state *s = model->state;
	if (s) {
		starpu_pthread_mutex_lock(&s->lock);
		for (unsigned i = 0; i < s->data.ncombs; i++) {
			const struct _astro_pm_comb *c = s->data.combs[i];
			fprintf(output, "  <combination>\n");
			for (int d = 0; d < c->ndevices; d++) {
				fprintf(output, "    <device type=\"%s\" id=\"%d\"", xml_type(c->devices[d].type), c->devices[d].devid);
				if (c->devices[d].type == STARPU_CPU_WORKER)
					fprintf(output, " ncores=\"%d\"", c->devices[d].ncores);
				fprintf(output, "/>\n");
			}
			struct starpu_perfmodel_arch arch = { .ndevices = c->ndevices, .devices = (struct starpu_perfmodel_device *)c->devices };
			for (unsigned impl = 0; impl < c->nimpls; impl++) {
				char name[256];
				_astro_pm_arch_name(&arch, c->global, impl, name, sizeof(name));
				fprintf(output, "    <implementation id=\"%u\">\n      <!-- %s -->\n", impl, name);
				if (c->impl[impl])
					xml_block(output, model, c->impl[impl]);
				fprintf(output, "    </implementation>\n");
			}
			fprintf(output, "  </combination>\n");
		}
		starpu_pthread_mutex_unlock(&s->lock);
	}
	fprintf(output, "</perfmodel>\n");
}
