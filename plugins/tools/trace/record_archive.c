/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The recorder's OTF2 archive, built under a hidden temporary name in
 * STARPU_FXT_PREFIX and renamed into place at shutdown, so that a reader
 * never sees a half archive under the final name:
 *
 *   <STARPU_FXT_PREFIX>/.<name>/traces.otf2 (+ traces.def and traces/)
 *   <STARPU_FXT_PREFIX>/<name> -> .<name>/traces.otf2
 *   (name: <STARPU_FXT_SUFFIX or prof_file_<USER>>_<id>)
 *
 * The link is named as StarPU's trace file, one per process: what reads
 * StarPU's (StarVZ globs prof_file_*) finds it, and every tool here takes
 * it, the folder or the anchor.
 *
 * OTF2 writes nothing while the run goes on: at shutdown each location's raw
 * records (its spill file, then its buffer: raw.h) are replayed into its
 * event writer, whose buffers keep a bounded number of chunks, then the
 * definitions (record_names.c) are written. A failed write is told once,
 * and the archive is kept, marked incomplete.
 */
#define _GNU_SOURCE
#include <astrolabe/plugin.h>
#include <astrolabe/observe.h>
#include <astrolabe/env.h>
#include <otf2/OTF2_Pthread_Locks.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "record.h"
#include "schema.h"

static struct
{
	OTF2_Archive *archive;
	char final_dir[PATH_MAX]; /* the archive's folder, .<name> */
	char link[PATH_MAX];      /* <name>: a link to its anchor */
	char tmp_dir[PATH_MAX];
	char prefix[PATH_MAX];
	int flush_failed;
	char first_error[256];
} rec;

/* <STARPU_FXT_SUFFIX or prof_file_<USER>>_<id>, id from starpu_profiling_set_id(): one archive per process of a run. */
static void archive_name(char *name, size_t n)
{
	const char *suffix = astro_env_string("STARPU_FXT_SUFFIX", ASTRO_ENV_NAME_MAX, NULL);
	if (suffix && *suffix)
		snprintf(name, n, "%s_%d", suffix, astro_trace_file_id());
	else
		snprintf(name, n, "prof_file_%s_%d", getenv("USER") ? getenv("USER") : "", astro_trace_file_id());
}

static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0777) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0777) < 0 && errno != EEXIST)
		return -errno;
	struct stat st;
	if (stat(buf, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void remove_tree(const char *path)
{
	nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static OTF2_FlushType pre_flush(void *user, OTF2_FileType type, OTF2_LocationRef location, void *callerData, bool final)
{
	(void)user;
	(void)type;
	(void)location;
	(void)callerData;
	(void)final;
	return OTF2_FLUSH;
}

/* OTF2 writes events at shutdown only, replaying each thread's records (raw.h): replay_clock is the date of the one
 * being written. A flush is dated by it, never after the events that follow. */
static uint64_t replay_clock;

static OTF2_TimeStamp post_flush(void *user, OTF2_FileType type, OTF2_LocationRef location)
{
	(void)user;
	(void)type;
	(void)location;
	return replay_clock;
}

static OTF2_FlushCallbacks flush_callbacks = { .otf2_pre_flush = pre_flush, .otf2_post_flush = post_flush };

/* Each OTF2 buffer (one per thread, filled at shutdown by the replay) keeps at
 * most chunk_budget chunks: when they are used up, allocate() says no and OTF2
 * writes them to the file (pre_flush says yes), frees them all (kept for reuse)
 * and asks again. So the replay of a long run keeps a bounded memory. */
#define EVENT_CHUNK (1024 * 1024)
struct chunk_pool
{
	unsigned used, allocated;
	void *chunks[];
};
static unsigned chunk_budget;
static OTF2_ErrorCallback previous_error_callback;

static void *chunk_allocate(void *user, OTF2_FileType type, OTF2_LocationRef location, void **per_buffer, uint64_t size)
{
	(void)user;
	(void)location;
	/* Definition buffers are small and not bounded here. */
	unsigned budget = type == OTF2_FILETYPE_EVENTS ? chunk_budget : 1024;
	struct chunk_pool *pool = *per_buffer;
	if (!pool) {
		pool = calloc(1, sizeof(*pool) + budget * sizeof(void *));
		if (!pool)
			return NULL;
		*per_buffer = pool;
	}
	if (pool->used < pool->allocated)
		return pool->chunks[pool->used++];
	if (pool->allocated == budget)
		return NULL;
	void *chunk = malloc(size);
	if (!chunk)
		return NULL;
	pool->chunks[pool->allocated++] = chunk;
	pool->used++;
	return chunk;
}

static void chunk_free_all(void *user, OTF2_FileType type, OTF2_LocationRef location, void **per_buffer, bool final)
{
	(void)user;
	(void)type;
	(void)location;
	struct chunk_pool *pool = *per_buffer;
	if (!pool)
		return;
	if (!final) {
		pool->used = 0;
		return;
	}
	for (unsigned i = 0; i < pool->allocated; i++)
		free(pool->chunks[i]);
	free(pool);
	*per_buffer = NULL;
}

static OTF2_MemoryCallbacks memory_callbacks = { .otf2_allocate = chunk_allocate, .otf2_free_all = chunk_free_all };

/* OTF2 reports each failure on stderr by itself: the recorder says it once, at shutdown. */
static OTF2_ErrorCode otf2_failed(void *user, const char *file, uint64_t line, const char *function, OTF2_ErrorCode code,
				  const char *fmt, va_list va)
{
	(void)user;
	(void)file;
	(void)line;
	(void)function;
	if (!__atomic_exchange_n(&rec.flush_failed, 1, __ATOMIC_RELAXED))
		vsnprintf(rec.first_error, sizeof(rec.first_error), fmt, va);
	return code;
}

int record_archive_open(unsigned buffer_mib)
{
	const char *prefix = astro_env_string("STARPU_FXT_PREFIX", ASTRO_ENV_PATH_MAX, NULL);
	if (!prefix || !*prefix)
		prefix = getenv("TMPDIR");
	if (!prefix || !*prefix)
		prefix = "/tmp";
	snprintf(rec.prefix, sizeof(rec.prefix), "%s", prefix);
	char name[PATH_MAX];
	archive_name(name, sizeof(name));
	int err = mkdir_p(prefix);
	if (err) {
		astro_log_error(WHAT, "STARPU_FXT_PREFIX=%s: cannot create the trace directory (%s): no trace is recorded; "
			       "point STARPU_FXT_PREFIX to a writable directory", prefix, strerror(-err));
		return -1;
	}
	if (snprintf(rec.final_dir, sizeof(rec.final_dir), "%s/.%s", prefix, name) >= (int)sizeof(rec.final_dir) ||
	    snprintf(rec.link, sizeof(rec.link), "%s/%s", prefix, name) >= (int)sizeof(rec.link) ||
	    snprintf(rec.tmp_dir, sizeof(rec.tmp_dir), "%s/.%s.tmp%ld", prefix, name, (long)getpid()) >= (int)sizeof(rec.tmp_dir)) {
		astro_log_error(WHAT, "STARPU_FXT_PREFIX=%s: the path is too long: no trace is recorded", prefix);
		return -1;
	}
	remove_tree(rec.tmp_dir);
	if (mkdir(rec.tmp_dir, 0777) < 0) {
		astro_log_error(WHAT, "STARPU_FXT_PREFIX=%s: cannot write in the trace directory (%s): no trace is recorded; "
			       "point STARPU_FXT_PREFIX to a writable directory", prefix, strerror(errno));
		return -1;
	}
	chunk_budget = buffer_mib < 2 ? 2 : buffer_mib;
	rec.flush_failed = 0;
	rec.first_error[0] = '\0';
	previous_error_callback = OTF2_Error_RegisterCallback(otf2_failed, NULL);
	rec.archive = OTF2_Archive_Open(rec.tmp_dir, "traces", OTF2_FILEMODE_WRITE, EVENT_CHUNK, 4 * 1024 * 1024,
					OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
	if (!rec.archive) {
		astro_log_error(WHAT, "cannot create the OTF2 archive in %s: no trace is recorded", rec.tmp_dir);
		remove_tree(rec.tmp_dir);
		return -1;
	}
	OTF2_Archive_SetFlushCallbacks(rec.archive, &flush_callbacks, NULL);
	OTF2_Archive_SetMemoryCallbacks(rec.archive, &memory_callbacks, NULL);
	OTF2_Archive_SetSerialCollectiveCallbacks(rec.archive);
	OTF2_Pthread_Archive_SetLockingCallbacks(rec.archive, NULL);
	OTF2_Archive_SetCreator(rec.archive, "Astrolabe (StarPU 1.4 API) trace recorder");
	OTF2_Archive_OpenEvtFiles(rec.archive);
	return 0;
}

const char *record_archive_dir(void)
{
	return rec.tmp_dir;
}

const char *record_archive_prefix(void)
{
	return rec.prefix;
}

void record_archive_discard(void)
{
	OTF2_Archive_Close(rec.archive);
	rec.archive = NULL;
	remove_tree(rec.tmp_dir);
}

/* The workers have stopped: each location's records (its spill file, then its buffer) go into OTF2, one location at
 * a time, so OTF2 keeps at most one location's chunk budget. */
static void replay(struct location *locations)
{
	/* A spill that failed during the run comes first in the message. */
	for (struct location *l = locations; l; l = l->next)
		if (l->raw.failed && !rec.flush_failed) {
			rec.flush_failed = 1;
			snprintf(rec.first_error, sizeof(rec.first_error), "writing %s: %s", l->raw.path, strerror(l->raw.error));
		}
	OTF2_AttributeList *attrs = OTF2_AttributeList_New();
	for (struct location *l = locations; l; l = l->next) {
		OTF2_EvtWriter *writer = OTF2_Archive_GetEvtWriter(rec.archive, l->id);
		l->nevents = 0;
		OTF2_ErrorCode status = raw_replay(&l->raw, writer, attrs, &replay_clock, &l->nevents);
		if (status != OTF2_SUCCESS && !__atomic_exchange_n(&rec.flush_failed, 1, __ATOMIC_RELAXED))
			snprintf(rec.first_error, sizeof(rec.first_error), "the events of %s: %s", l->name, OTF2_Error_GetDescription(status));
		if (OTF2_Archive_CloseEvtWriter(rec.archive, writer) != OTF2_SUCCESS)
			rec.flush_failed = 1;
	}
	OTF2_AttributeList_Delete(attrs);
	OTF2_Archive_CloseEvtFiles(rec.archive);
}

/* The definitions: each location's (empty), then the global ones with the marks the converter reads. */
static void write_definitions(const struct location *locations)
{
	OTF2_Archive_OpenDefFiles(rec.archive);
	for (const struct location *l = locations; l; l = l->next) {
		OTF2_DefWriter *w = OTF2_Archive_GetDefWriter(rec.archive, l->id);
		OTF2_Archive_CloseDefWriter(rec.archive, w);
	}
	OTF2_Archive_CloseDefFiles(rec.archive);
	OTF2_GlobalDefWriter *defs = OTF2_Archive_GetGlobalDefWriter(rec.archive);
	int rank, size;
	int64_t offset;
	char mpi_mark[96];
	bool mpi = record_mpi(&rank, &size, &offset);
	if (mpi)
		snprintf(mpi_mark, sizeof(mpi_mark), TRACE_MPI_MARK "%d %d %lld", rank, size, (long long)offset);
	record_names_write(defs, locations, rec.flush_failed, mpi ? mpi_mark : NULL);
	OTF2_Archive_CloseGlobalDefWriter(rec.archive, defs);
}

/* Replaces path (a file, a link, or a folder: an older trace of that name) by what is at from, in one step when path
 * is no folder; 0, or -1 with errno. */
static int replace(const char *from, const char *path)
{
	struct stat st;
	char old[PATH_MAX + 8];
	bool had_old = false;
	if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (snprintf(old, sizeof(old), "%s.old", rec.tmp_dir) >= (int)sizeof(old) || rename(path, old) < 0)
			return -1;
		had_old = true;
	}
	int ret = rename(from, path);
	if (had_old) {
		int saved = errno;
		if (ret < 0)
			rename(old, path); /* the older trace back */
		else
			remove_tree(old);
		errno = saved;
	}
	return ret;
}

/* The archive's folder renamed to its final, hidden name .<name>, and <name> made a link to its anchor
 * (.<name>/traces.otf2), each replacing an older trace of that name in one step: so that STARPU_FXT_PREFIX holds one
 * file per process named as StarPU's (prof_file_<user>_<id>), which tools that glob those names (StarVZ's
 * `ls prof_file_*`) take as they take StarPU's. 0, or -1 (told; the archive stays where it is then). */
static int move_into_place(void)
{
	/* The id may have been set since the start (StarPU-MPI sets the rank): the name follows it. */
	char name[PATH_MAX];
	archive_name(name, sizeof(name));
	if (snprintf(rec.final_dir, sizeof(rec.final_dir), "%s/.%s", rec.prefix, name) >= (int)sizeof(rec.final_dir) ||
	    snprintf(rec.link, sizeof(rec.link), "%s/%s", rec.prefix, name) >= (int)sizeof(rec.link))
		astro_log_error(WHAT, "the trace's path %s/%s is too long: it is cut", rec.prefix, name);
	if (replace(rec.tmp_dir, rec.final_dir) < 0) {
		astro_log_error(WHAT, "cannot move the trace to %s (%s): it stays in %s", rec.final_dir, strerror(errno), rec.tmp_dir);
		snprintf(rec.final_dir, sizeof(rec.final_dir), "%s", rec.tmp_dir);
		return -1;
	}
	char target[PATH_MAX + 16], tmp_link[PATH_MAX + 8];
	snprintf(target, sizeof(target), ".%s/traces.otf2", name);
	snprintf(tmp_link, sizeof(tmp_link), "%s.link", rec.tmp_dir);
	unlink(tmp_link);
	if (symlink(target, tmp_link) < 0 || replace(tmp_link, rec.link) < 0) {
		astro_log_error(WHAT, "cannot make the link %s to the trace (%s): the trace is the folder %s", rec.link, strerror(errno),
				rec.final_dir);
		unlink(tmp_link);
		return -1;
	}
	return 0;
}

const char *record_archive_close(void)
{
	struct location *locations = record_locations();
	replay(locations);
	write_definitions(locations);
	OTF2_ErrorCode status = OTF2_Archive_Close(rec.archive);
	rec.archive = NULL;
	OTF2_Error_RegisterCallback(previous_error_callback, NULL);
	if (status != OTF2_SUCCESS || rec.flush_failed) {
		/* Keep what was written: the converter reads it and says it is incomplete. */
		astro_log_error(WHAT, "writing the trace failed (%s): %s is incomplete (disk full?)",
				rec.first_error[0] ? rec.first_error : OTF2_Error_GetDescription(status), rec.final_dir);
	}
	int moved = move_into_place();
	if (moved < 0 && !strcmp(rec.final_dir, rec.tmp_dir))
		return NULL;
	if (moved == 0 && !rec.flush_failed && status == OTF2_SUCCESS)
		astro_log_info(WHAT, "trace written to %s (the archive %s)", rec.link, rec.final_dir);
	return rec.final_dir;
}
