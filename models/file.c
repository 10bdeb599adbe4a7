/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Model files: where they live, StarPU's version-45 text format (a pure
 * parser and the writer are in format.c), loading, and saving.
 *
 * Saving differs from StarPU on purpose: StarPU rewrites the file in place
 * with what it has in memory, so two processes calibrating the same model
 * lose each other's samples and a crash mid-save leaves half a file. Here the
 * saver takes a lock on "<file>.lock" (a file never renamed, so waiting
 * savers lock what the next one will read), reads the file again, adds what
 * this process measured since it last read or wrote it, writes a temporary
 * file and renames it over the model. Readers need no lock: a rename is
 * atomic. A file that does not parse is renamed aside with one warning.
 */
#include "models.h"
#include <astrolabe/sched.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ locations */

#define MAX_DIRS 20

/* The sampling directories, in search order; returns how many. */
static unsigned sampling_dirs(char dirs[MAX_DIRS][PATH_MAX])
{
	unsigned n = 0;
	const char *dir = astro_env_string("STARPU_PERF_MODEL_DIR", ASTRO_ENV_PATH_MAX, NULL);
	if (dir && dir[0])
		snprintf(dirs[n++], PATH_MAX, "%s", dir);
	snprintf(dirs[n++], PATH_MAX, "%s/.starpu/sampling", _astro_home_dir());
	const char *list = astro_env_names("STARPU_PERF_MODEL_PATH", ":,", ASTRO_ENV_PATH_MAX, NULL);
	if (list && list[0]) {
		char *copy = strdup(list), *save = NULL;
		for (char *tok = copy ? strtok_r(copy, ":,", &save) : NULL; tok && n < MAX_DIRS; tok = strtok_r(NULL, ":,", &save)) {
			struct stat st;
			if (stat(tok, &st) == 0 && S_ISDIR(st.st_mode))
				snprintf(dirs[n++], PATH_MAX, "%s", tok);
			else
				_astro_warn("STARPU_PERF_MODEL_PATH: directory %s does not exist: it is ignored", tok);
		}
		free(copy);
	}
	return n;
}

void astro_sched_sampling_dir(char *path, size_t len)
{
	_astro_sampling_dir(path, len);
}

static void file_in(const char *dir, const char *symbol, char *path, size_t len)
{
	char host[256];
	_astro_host_name(host, sizeof(host));
	if (strchr(symbol, '.'))
		snprintf(path, len, "%s/codelets/%d/%s", dir, _ASTRO_PM_VERSION, symbol);
	else
		snprintf(path, len, "%s/codelets/%d/%s.%s", dir, _ASTRO_PM_VERSION, symbol, host);
}

/* The existing file of symbol (first directory that has it): true, path set. */
static bool find_file(const char *symbol, char *path, size_t len)
{
	static char dirs[MAX_DIRS][PATH_MAX];
	static starpu_pthread_mutex_t lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
	starpu_pthread_mutex_lock(&lock);
	unsigned n = sampling_dirs(dirs);
	bool found = false;
	for (unsigned i = 0; i < n && !found; i++) {
		file_in(dirs[i], symbol, path, len);
		found = access(path, F_OK) == 0;
	}
	if (!found)
		file_in(dirs[0], symbol, path, len);
	starpu_pthread_mutex_unlock(&lock);
	return found;
}

void starpu_perfmodel_get_model_path(const char *symbol, char *path, size_t maxlen)
{
	if (!path || !maxlen)
		return;
	char p[PATH_MAX];
	path[0] = '\0';
	if (symbol && find_file(symbol, p, sizeof(p)))
		snprintf(path, maxlen, "%s", p);
}

void starpu_perfmodel_debugfilepath(struct starpu_perfmodel *model, struct starpu_perfmodel_arch *arch, char *path, size_t maxlen, unsigned nimpl)
{
	if (!path || !maxlen)
		return;
	path[0] = '\0';
	if (!model || !model->symbol || !arch) {
		_astro_error("starpu_perfmodel_debugfilepath: give a model with a symbol and an architecture");
		return;
	}
	char (*dirs)[PATH_MAX] = malloc(MAX_DIRS * sizeof(*dirs));
	if (!dirs)
		return;
	sampling_dirs(dirs);
	char host[256], archname[128];
	_astro_host_name(host, sizeof(host));
	starpu_perfmodel_get_arch_name(arch, archname, sizeof(archname), nimpl);
	snprintf(path, maxlen, "%s/debug/%s.%s%s", dirs[0], model->symbol, host, archname);
	free(dirs);
}

void starpu_perfmodel_directory(FILE *output)
{
	char (*dirs)[PATH_MAX] = malloc(MAX_DIRS * sizeof(*dirs));
	if (!dirs)
		return;
	unsigned n = sampling_dirs(dirs);
	for (unsigned i = 0; i < n; i++)
		fprintf(output, "directory: <%s/codelets/%d/>\n", dirs[i], _ASTRO_PM_VERSION);
	free(dirs);
}

/* ------------------------------------------------------- load and save */

/* A model file is text of some kilobytes: one of more than this is not a model file. */
#define MODEL_FILE_MAX ((size_t)16 << 20)

/* Renames path aside as <path>.corrupt-<pid>: true, the new name in aside; false, why not in aside. */
static bool move_aside(const char *path, char *aside, size_t len)
{
	snprintf(aside, len, "%s.corrupt-%ld", path, (long)getpid());
	if (rename(path, aside) == 0)
		return true;
	snprintf(aside, len, "%s", strerror(errno));
	return false;
}

/* The entries and regressions of path the parser set aside (out->bad), in one warning. When saving, the file
 * is about to be rewritten without them: its text is kept aside first. */
static void report_set_aside(const char *path, const char *text, size_t len, const struct _astro_pm_data *out, bool saving)
{
	char kept[PATH_MAX + 64] = "";
	if (saving) {
		char aside[PATH_MAX + 32];
		snprintf(aside, sizeof(aside), "%s.corrupt-%ld", path, (long)getpid());
		FILE *f = fopen(aside, "w");
		bool ok = f && fwrite(text, 1, len, f) == len;
		if (f && fclose(f) != 0)
			ok = false;
		snprintf(kept, sizeof(kept), ok ? "; the file as it was is kept as %s" : "; the file as it was could not be kept (%s)",
			 ok ? aside : strerror(errno));
	}
	_astro_warn("performance model file %s: %u entr%s set aside, %s%s: the rest is used; correct or delete %s (a mean is sum / n, "
		    "counts at most 2147483647, values finite, non-negative, at most 1e100)%s%s",
		    path, out->nbad, out->nbad > 1 ? "ies or regressions" : "y or regression", out->bad, out->nbad > 3 ? "..." : "",
		    out->nbad > 1 ? "those lines" : "that line", saving ? "; this save drops them" : "; the next save drops them", kept);
}

/* Reads and parses path into out (empty when the file does not exist). A file that does not parse, or that is
 * not a regular file of a sane size (a FIFO, a link to a device), is renamed aside with one warning and reads
 * as empty; entries with bad values are left out with one warning (saving: before the file is rewritten). */
static void read_model_file(const char *path, struct _astro_pm_data *out, bool saving)
{
	size_t len;
	char err[256], aside[PATH_MAX + 32];
	memset(out, 0, sizeof(*out));
	char *text = astro_file_read_regular(path, MODEL_FILE_MAX, &len, err, sizeof(err));
	if (!text) {
		if (errno == ENOENT)
			return;
		if (errno != EINVAL && errno != EFBIG) {
			_astro_warn("performance model file %s cannot be read (%s): starting with an empty model", path, err);
			return;
		}
		bool moved = move_aside(path, aside, sizeof(aside));
		_astro_warn("performance model file %s is %s; %s%s, starting with an empty model", path, err,
			    moved ? "set aside as " : "it could not be set aside: ", aside);
		return;
	}
	int ret = _astro_perfmodel_parse(text, len, out, err, sizeof(err));
	if (ret == 0 && out->nbad)
		report_set_aside(path, text, len, out, saving);
	free(text);
	if (ret == 0)
		return;
	bool moved = move_aside(path, aside, sizeof(aside));
	_astro_warn("performance model file %s, %s: not a version-%d model file; %s%s, starting with an empty model",
		    path, err, _ASTRO_PM_VERSION, moved ? "set aside as " : "it could not be set aside: ", aside);
}

/* Valid flags of loaded regressions, and the type of a model loaded without its codelet. */
static void loaded_fixup(struct starpu_perfmodel *model, struct _astro_pm_data *d)
{
	bool has_entries = false, nl = false, reg = false, mlr = false;
	for (unsigned c = 0; c < d->ncombs; c++)
		for (unsigned i = 0; i < STARPU_MAXIMPLEMENTATIONS; i++) {
			struct _astro_pm_block *b = d->combs[c]->impl[i];
			if (!b)
				continue;
			struct starpu_perfmodel_regression_model *r = &b->pub.regression;
			bool spread = _astro_pm_regression_valid(r);
			r->valid = !isnan(r->alpha) && !isnan(r->beta) && spread;
			r->nl_valid = !isnan(r->a) && !isnan(r->b) && !isnan(r->c) && spread;
			r->multi_valid = r->ncoeff != 0;
			for (unsigned k = 0; k < r->ncoeff; k++)
				r->multi_valid &= !isnan(r->coeff[k]);
			has_entries |= b->nentries > 0;
			mlr |= r->ncoeff != 0;
			nl |= !isnan(r->a) && !isnan(r->b) && !isnan(r->c);
			reg |= !isnan(r->alpha) && !isnan(r->beta);
		}
	if (model->type == STARPU_PERFMODEL_INVALID)
		model->type = mlr ? STARPU_MULTIPLE_REGRESSION_BASED : nl ? STARPU_NL_REGRESSION_BASED
			    : reg ? STARPU_REGRESSION_BASED : has_entries ? STARPU_HISTORY_BASED : STARPU_PERFMODEL_INVALID;
}

static void load_path(struct starpu_perfmodel *model, const char *path)
{
	struct _astro_pm_data parsed;
	read_model_file(path, &parsed, false);
	loaded_fixup(model, &parsed);
	starpu_pthread_mutex_lock(&model->state->lock);
	_astro_pm_adopt(model, &parsed);
	starpu_pthread_mutex_unlock(&model->state->lock);
	_astro_pm_data_clear(&parsed);
	free(model->path);
	model->path = strdup(path);
}

void _astro_pm_load(struct starpu_perfmodel *model)
{
	char path[PATH_MAX];
	if (find_file(model->symbol, path, sizeof(path)))
		load_path(model, path);
}

int starpu_perfmodel_load_file(const char *filename, struct starpu_perfmodel *model)
{
	if (!filename || !model) {
		_astro_error("starpu_perfmodel_load_file: give a file name and a model");
		return -EINVAL;
	}
	if (access(filename, R_OK) != 0) {
		int err = errno;
		_astro_error("starpu_perfmodel_load_file: cannot read %s (%s)", filename, strerror(err));
		return -err;
	}
	starpu_perfmodel_init(model);
	if (!model->state)
		return -ENOMEM;
	load_path(model, filename);
	__atomic_store_n(&model->is_loaded, 1, __ATOMIC_RELEASE);
	return 0;
}

int starpu_perfmodel_load_symbol(const char *symbol, struct starpu_perfmodel *model)
{
	char path[PATH_MAX];
	if (!symbol || !model) {
		_astro_error("starpu_perfmodel_load_symbol: give a symbol and a model");
		return -EINVAL;
	}
	char *sym = strdup(symbol);
	if (!sym)
		return -ENOMEM;
	bool found = find_file(sym, path, sizeof(path));
	char *dot = strrchr(sym, '.');
	if (!found && dot) {
		*dot = '\0';
		found = find_file(sym, path, sizeof(path));
		if (found)
			fprintf(stderr, "[astrolabe] note: loading history from %s instead of %s\n", sym, symbol);
	}
	if (!found) {
		/* path: where the model would be in the first sampling folder (find_file). */
		char *slash = strrchr(path, '/');
		if (slash)
			*slash = '\0';
		_astro_error("There is no performance model for symbol %s in %s (nor in the other sampling folders "
			     "starpu_perfmodel_directory() lists): a run with STARPU_CALIBRATE=1 records it", symbol, path);
		free(sym);
		return 1;
	}
	model->symbol = sym;
	int ret = starpu_perfmodel_load_file(path, model);
	if (ret) {
		free(sym);
		model->symbol = NULL;
	}
	return ret;
}

int starpu_perfmodel_unload_model(struct starpu_perfmodel *model)
{
	if (!model)
		return -EINVAL;
	free((char *)model->symbol);
	model->symbol = NULL;
	return starpu_perfmodel_deinit(model);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int starpu_perfmodel_list(FILE *output)
{
	char path[PATH_MAX + 32];
	char (*dirs)[PATH_MAX] = malloc(MAX_DIRS * sizeof(*dirs));
	if (!dirs)
		return -ENOMEM;
	unsigned n = sampling_dirs(dirs);
	for (unsigned i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/codelets/%d/", dirs[i], _ASTRO_PM_VERSION);
		GDir *dir = g_dir_open(path, 0, NULL);
		if (!dir)
			continue;
		/* As StarPU: one line per directory, then its files in alphabetical order (our lock and temporary files left out). */
		GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
		for (const char *name; (name = g_dir_read_name(dir));)
			if (!g_str_has_suffix(name, ".lock") && !strstr(name, ".corrupt-") && !strstr(name, ".tmp."))
				g_ptr_array_add(names, g_strdup(name));
		g_dir_close(dir);
		if (names->len) /* an empty array has no pdata: qsort(NULL, 0) is undefined */
			qsort(names->pdata, names->len, sizeof(char *), name_cmp);
		fprintf(output, "codelet directory: <%s>\n", path);
		for (unsigned k = 0; k < names->len; k++)
			fprintf(output, "file: <%s>\n", (const char *)g_ptr_array_index(names, k));
		g_ptr_array_free(names, TRUE);
	}
	free(dirs);
	return 0;
}

int _astro_pm_mkdirs(const char *path)
{
	char tmp[PATH_MAX];
	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0700) != 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

void _astro_pm_lock_file(int fd, short type, const char *path)
{
	static int warned;
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET };
	while (fcntl(fd, F_SETLKW, &fl) != 0) {
		if (errno == EINTR)
			continue;
		if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
			_astro_warn("cannot lock %s (%s), probably a network file system: concurrent savers may lose samples", path,
				    strerror(errno));
		return;
	}
}

/* Adds what b measured since it last met the file to into (the file's block). */
static void merge_block(struct starpu_perfmodel *model, struct _astro_pm_block *into, const struct _astro_pm_block *b)
{
	bool changed = false;
	for (unsigned i = 0; i < b->nentries; i++) {
		const struct _astro_pm_entry *e = b->entries[i];
		struct _astro_pm_entry *d = _astro_pm_block_find(into, e->h.footprint);
		/* Unchanged entries keep the file's text: a load and save leaves StarPU's file as it was. */
		if (d && e->h.nsample == e->base_nsample && e->h.sum == e->base_sum && e->h.sum2 == e->base_sum2)
			continue;
		if (!d && !(d = _astro_pm_block_add(into, e->h.footprint, e->h.size)))
			continue;
		changed = true;
		if (e->h.nsample < e->base_nsample) {
			/* Flushed (or halved) in this run: what it kept since replaces the entry. */
			d->h.sum = e->h.sum, d->h.sum2 = e->h.sum2, d->h.nsample = e->h.nsample;
			_astro_pm_entry_refresh(&d->h);
		} else {
			/* Added, never wrapped: past 2^31 samples the sums are halved. */
			_astro_pm_entry_add(&d->h, e->h.sum - e->base_sum, e->h.sum2 - e->base_sum2, e->h.nsample - e->base_nsample);
		}
		if (d->h.flops == 0.0 || isnan(e->h.flops))
			d->h.flops = e->h.flops;
	}
	struct starpu_perfmodel_regression_model *r = &into->pub.regression;
	const struct starpu_perfmodel_regression_model *m = &b->pub.regression, *base = &b->base_reg;
	if (!changed && m->nsample == base->nsample)
		return;
	if (m->nsample < base->nsample) {
		/* Halved in this run (too many samples): its sums replace the file's. */
		r->sumlnx = m->sumlnx, r->sumlnx2 = m->sumlnx2, r->sumlny = m->sumlny, r->sumlnxlny = m->sumlnxlny;
		r->nsample = m->nsample;
	} else {
		_astro_pm_regression_make_room(r, m->nsample - base->nsample);
		r->sumlnx += m->sumlnx - base->sumlnx;
		r->sumlnx2 += m->sumlnx2 - base->sumlnx2;
		r->sumlny += m->sumlny - base->sumlny;
		r->sumlnxlny += m->sumlnxlny - base->sumlnxlny;
		r->nsample += m->nsample - base->nsample;
	}
	if (m->minx && (!r->minx || m->minx < r->minx))
		r->minx = m->minx;
	if (m->maxx > r->maxx)
		r->maxx = m->maxx;
	if (model->type == STARPU_REGRESSION_BASED || model->type == STARPU_NL_REGRESSION_BASED)
		_astro_pm_regression_refit(r);
	if (model->type == STARPU_NL_REGRESSION_BASED && _astro_pm_nl_fit(into) != 0)
		_astro_warn("model %s: could not compute a non-linear regression (fewer than two sizes measured yet)", model->symbol);
}

static void merge(struct starpu_perfmodel *model, struct _astro_pm_data *disk)
{
	struct _astro_pm_data *mem = &model->state->data;
	for (unsigned c = 0; c < mem->ncombs; c++) {
		struct _astro_pm_comb *mc = mem->combs[c], *dc = NULL;
		for (unsigned i = 0; i < disk->ncombs && !dc; i++)
			if (disk->combs[i]->ndevices == mc->ndevices &&
			    !memcmp(disk->combs[i]->devices, mc->devices, (size_t)mc->ndevices * sizeof(mc->devices[0])))
				dc = disk->combs[i];
		if (!dc) {
			if (disk->ncombs == _ASTRO_PM_MAX_COMBS || !(dc = calloc(1, sizeof(*dc))))
				continue;
			dc->ndevices = mc->ndevices;
			memcpy(dc->devices, mc->devices, sizeof(dc->devices));
			disk->combs[disk->ncombs++] = dc;
		}
		for (unsigned impl = 0; impl < STARPU_MAXIMPLEMENTATIONS; impl++) {
			if (!mc->impl[impl])
				continue;
			if (!dc->impl[impl] && !(dc->impl[impl] = _astro_pm_block_new()))
				continue;
			merge_block(model, dc->impl[impl], mc->impl[impl]);
		}
		if (mc->nimpls > dc->nimpls)
			dc->nimpls = mc->nimpls;
	}
	/* The merged data becomes what this process has met on disk. */
	for (unsigned c = 0; c < disk->ncombs; c++) {
		struct starpu_perfmodel_arch arch = { .ndevices = disk->combs[c]->ndevices, .devices = disk->combs[c]->devices };
		disk->combs[c]->global = _astro_pm_comb_of(&arch);
		for (unsigned impl = 0; impl < STARPU_MAXIMPLEMENTATIONS; impl++) {
			struct _astro_pm_block *b = disk->combs[c]->impl[impl];
			if (!b)
				continue;
			b->base_reg = b->pub.regression;
			b->base_reg.coeff = NULL;
			for (unsigned i = 0; i < b->nentries; i++) {
				struct _astro_pm_entry *e = b->entries[i];
				e->base_sum = e->h.sum, e->base_sum2 = e->h.sum2, e->base_nsample = e->h.nsample;
			}
		}
	}
}

/* Removes what savers killed between writing and renaming left: "<path>.tmp.<pid>" files whose process is gone.
 * Called under the model's file lock. */
static void remove_stale_temporaries(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *dir = slash ? g_strndup(path, (gsize)(slash - path + 1)) : g_strdup("./");
	char *prefix = g_strdup_printf("%s.tmp.", slash ? slash + 1 : path);
	GDir *d = g_dir_open(dir, 0, NULL);
	for (const char *name; d && (name = g_dir_read_name(d));) {
		if (!g_str_has_prefix(name, prefix))
			continue;
		const char *digits = name + strlen(prefix);
		char *end;
		long pid = strtol(digits, &end, 10);
		if (!isdigit((unsigned char)digits[0]) || *end || pid <= 0 || pid == (long)getpid() || pid > INT_MAX)
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		char *stale = g_strconcat(dir, name, NULL);
		if (unlink(stale) != 0 && errno != ENOENT)
			_astro_warn("cannot remove %s, left by a save that was killed (%s): remove it by hand", stale, strerror(errno));
		g_free(stale);
	}
	if (d)
		g_dir_close(d);
	g_free(prefix);
	g_free(dir);
}

int _astro_pm_save(struct starpu_perfmodel *model)
{
	char path[PATH_MAX], lock_path[PATH_MAX + 8], tmp_path[PATH_MAX + 32];
	if (model->path)
		snprintf(path, sizeof(path), "%s", model->path);
	else
		find_file(model->symbol, path, sizeof(path));
	int ret = _astro_pm_mkdirs(path);
	if (ret) {
		_astro_error("cannot create the directory of %s (%s): model %s is not saved; check STARPU_HOME / STARPU_PERF_MODEL_DIR",
			     path, strerror(-ret), model->symbol);
		return ret;
	}
	snprintf(lock_path, sizeof(lock_path), "%s.lock", path);
	snprintf(tmp_path, sizeof(tmp_path), "%s.tmp.%ld", path, (long)getpid());
	int fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		ret = -errno;
		_astro_error("cannot open %s (%s): model %s is not saved", lock_path, strerror(errno), model->symbol);
		return ret;
	}
	_astro_pm_lock_file(fd, F_WRLCK, lock_path);
	remove_stale_temporaries(path);

	struct _astro_pm_data disk;
	/* STARPU_CALIBRATE=2 restarts the model: what the file held is replaced, not added to. */
	if (__atomic_load_n(&_astro_rt.calibrate, __ATOMIC_RELAXED) == 2)
		memset(&disk, 0, sizeof(disk));
	else
		read_model_file(path, &disk, true);
	starpu_pthread_mutex_lock(&model->state->lock);
	merge(model, &disk);
	char *terms = NULL;
	if (model->type == STARPU_MULTIPLE_REGRESSION_BASED && !model->state->mlr_bad)
		_astro_pm_mlr_save(model, &disk, &terms);
	disk.mlr_terms = terms;
	FILE *f = fopen(tmp_path, "w");
	ret = f ? _astro_perfmodel_write(f, &disk) : -errno;
	if (f) {
		if (fflush(f) != 0 || fsync(fileno(f)) != 0)
			ret = -errno;
		if (fclose(f) != 0 && !ret)
			ret = -errno;
	}
	if (!ret && rename(tmp_path, path) != 0)
		ret = -errno;
	if (ret) {
		unlink(tmp_path);
		_astro_error("cannot write performance model file %s (%s): model %s is not saved", path, strerror(-ret), model->symbol);
	} else {
		loaded_fixup(model, &disk);
		_astro_pm_adopt(model, &disk);
		model->state->dirty = false;
		if (!model->path)
			model->path = strdup(path);
	}
	starpu_pthread_mutex_unlock(&model->state->lock);
	_astro_pm_data_clear(&disk);
	free(terms);
	struct flock fl = { .l_type = F_UNLCK, .l_whence = SEEK_SET };
	fcntl(fd, F_SETLK, &fl);
	close(fd);
	return ret;
}

void starpu_save_history_based_model(struct starpu_perfmodel *model)
{
	if (!model || !model->state || !model->symbol) {
		_astro_error("starpu_save_history_based_model: the model has no data or no symbol: nothing to save");
		return;
	}
	_astro_pm_save(model);
}

/* ------------------------------------------------------- loading at first use */

static starpu_pthread_mutex_t load_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;	/* serialises first loads */

/* Loads model on first use: its file, and whether it records (STARPU_CALIBRATE at load time). */
void _astro_pm_ensure_loaded(struct starpu_perfmodel *model)
{
	if (STARPU_LIKELY(__atomic_load_n(&model->is_loaded, __ATOMIC_ACQUIRE)))
		return;
	starpu_perfmodel_init(model);
	if (!model->state)
		return;
	starpu_pthread_mutex_lock(&load_lock);
	if (!model->is_loaded) {
		int calibrate = __atomic_load_n(&_astro_rt.calibrate, __ATOMIC_RELAXED);
		if (_astro_pm_is_history_type(model->type)) {
			if (!model->symbol || !model->symbol[0])
				_astro_error("performance model of type %d has no symbol: it cannot be calibrated nor saved; "
					     "set model->symbol (history and regression models need one)", (int)model->type);
			else if (calibrate != 2)
				_astro_pm_load(model);
		}
		model->benchmarking = (unsigned)calibrate;
		__atomic_store_n(&model->is_loaded, 1, __ATOMIC_RELEASE);
	}
	starpu_pthread_mutex_unlock(&load_lock);
	if (model->type == STARPU_MULTIPLE_REGRESSION_BASED)
		_astro_pm_mlr_usable(model);
}
