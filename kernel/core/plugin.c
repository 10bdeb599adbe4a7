/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The plugin loader and the kernel's registries. Plugins are found in the
 * built-in directory, then in each folder of STARPU_PLUGIN_PATH; each file
 * KIND_NAME.so must export astrolabe_plugin_KIND_NAME. A bad plugin is
 * reported and skipped: loading never aborts the process.
 *
 * Registries are GLib containers guarded by one mutex; they are used at init,
 * shutdown and for look-ups by name, never on the task path.
 */
#include "core/core.h"
#include "static_plugins.h"
#include <ltdl.h>
#ifdef HAVE_DLFCN_H
#include <dlfcn.h>
#endif
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

struct loaded_plugin
{
	const struct astro_plugin *desc;
	lt_dlhandle handle;                  /* NULL for a static plugin */
	char *path;
	bool initialized;
};

static starpu_pthread_mutex_t registry_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static GHashTable *plugins_by_name;          /* name -> struct loaded_plugin */
static GPtrArray *plugins;                   /* load order */
/* Files stay open for the life of the process (path -> lt_dlhandle): init after
 * shutdown re-runs the plugins' init without reloading them, and code that
 * still points into a plugin (a leak report, a late callback) stays valid. */
static GHashTable *opened_files;
/* Trace-format plugins (format_*): astro_trace_formats_load() loads them when the trace converter starts, not
 * starpu_init(); they stay for the process (their formats stay registered), never finalised. */
#define FORMAT_PREFIX "format_"
static GHashTable *format_plugins;           /* name -> struct loaded_plugin */
static GHashTable *format_paths_seen;        /* each file looked at once: a bad or duplicate one is told once */

static lt_dlhandle open_file(const char *path)
{
	if (!opened_files)
		opened_files = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	lt_dlhandle handle = g_hash_table_lookup(opened_files, path);
	if (handle)
		return handle;
	lt_dladvise advise;
	lt_dladvise_init(&advise);
	lt_dladvise_local(&advise);
	lt_dladvise_ext(&advise);
	handle = lt_dlopenadvise(path, advise);
	lt_dladvise_destroy(&advise);
	if (handle)
		g_hash_table_insert(opened_files, g_strdup(path), handle);
	return handle;
}
static bool ltdl_ready;

static void registries_create(void)
{
	plugins_by_name = g_hash_table_new(g_str_hash, g_str_equal);
	plugins = g_ptr_array_new();
}

/* -------------------------------------------------------------- loader */

/* "sched_eager" from ".../sched_eager.so" or ".../libsched_eager.so". */
static char *module_name_of(const char *path)
{
	char *base = g_path_get_basename(path);
	char *dot = strstr(base, ".so");
	if (dot)
		*dot = '\0';
	char *name = g_strdup(g_str_has_prefix(base, "lib") ? base + 3 : base);
	g_free(base);
	for (char *c = name; *c; c++)
		if (*c == '-')
			*c = '_';
	return name;
}

/* Runs a plugin's init (its result; 0 when it has none) or fini as a foreign call:
 * a crash there names the plugin. */
/* Runs p's init or fini; *refused (unless NULL): one of its registrations was refused, and said so. */
static int plugin_call(const struct loaded_plugin *p, bool fini, bool *refused)
{
	if (fini ? !p->desc->fini : !p->desc->init)
		return 0;
	char *what = g_strdup_printf("plugin %s's %s", p->desc->name, fini ? "fini" : "init");
	char *symbol = g_strconcat(ASTRO_PLUGIN_SYMBOL_PREFIX, p->desc->name, NULL);
	struct _astro_foreign_call call = {
		.what = what, .file = p->path, .symbol = symbol,
		.advice = "the plugin crashed; fix or remove it",
	};
	/* A plugin's fini may load others (the trace recorder's conversion loads the format plugins): restored after. */
	struct _astro_registrant *outer = _astro_registrant;
	struct _astro_registrant registrant = { .name = p->desc->name, .path = p->path };
	_astro_registrant = &registrant;
	_astro_foreign_enter(&call);
	int ret = 0;
	if (fini)
		p->desc->fini();
	else
		ret = p->desc->init();
	_astro_foreign_leave(&call);
	_astro_registrant = outer;
	if (refused)
		*refused = registrant.refused;
	g_free(symbol);
	g_free(what);
	return ret;
}

/* Validates and runs a descriptor (a trace-format plugin's, named format_*, goes to format_plugins); takes ownership of path. */
static void plugin_add(const struct astro_plugin *desc, lt_dlhandle handle, char *path, const char *expected)
{
	bool format = g_str_has_prefix(expected, FORMAT_PREFIX);
	GHashTable *by_name = format ? format_plugins : plugins_by_name;
	if (desc->abi_version != ASTRO_PLUGIN_ABI_VERSION) {
		_astro_error("plugin %s (%s) was built for plugin ABI %u, this runtime speaks ABI %u: rebuild it against this Astrolabe",
			     expected, path, desc->abi_version, ASTRO_PLUGIN_ABI_VERSION);
		goto reject;
	}
	if (!desc->name || strcmp(desc->name, expected) != 0) {
		_astro_error("plugin file %s declares the name '%s' but its file name says '%s': rename the file or fix ASTRO_PLUGIN_DEFINE",
			     path, desc->name ? desc->name : "(null)", expected);
		goto reject;
	}
	starpu_pthread_mutex_lock(&registry_lock);
	struct loaded_plugin *dup = g_hash_table_lookup(by_name, desc->name);
	starpu_pthread_mutex_unlock(&registry_lock);
	if (dup) {
		_astro_warn("plugin %s found twice, in %s and %s: the second is ignored; remove one or fix STARPU_PLUGIN_PATH",
			    desc->name, dup->path, path);
		goto reject;
	}
	struct loaded_plugin *p = g_new0(struct loaded_plugin, 1);
	p->desc = desc;
	p->handle = handle;
	p->path = path;
	starpu_pthread_mutex_lock(&registry_lock);
	g_hash_table_insert(by_name, (gpointer)desc->name, p);
	if (!format)
		g_ptr_array_add(plugins, p);
	starpu_pthread_mutex_unlock(&registry_lock);

	_astro_verbose("plugin %s (%s): %s", desc->name, path, desc->description ? desc->description : "");
	bool refused = false;
	int ret = plugin_call(p, false, &refused);
	if (ret == ASTRO_PLUGIN_DECLINE) {
		_astro_verbose("plugin %s: not available here, skipped", desc->name);
	} else if (ret < 0) {
		/* A refused registration already said why, in one line. */
		if (!refused)
			_astro_error("plugin %s (%s) failed to initialise: %s; it is skipped", desc->name, path, strerror(-ret));
	} else {
		p->initialized = true;
	}
	return;
reject:
	g_free(path);
}

/* Why path cannot be loaded, and what to do about it: libltdl says "file not
 * found" for any failure, even for a file that exists, so look for ourselves:
 * missing, unreadable, not an ELF shared object, then the system loader's own
 * reason (undefined symbol, wrong architecture...). ltdl_why is the last resort. */
static char *library_problem(const char *path, const char *ltdl_why, const char **fix)
{
	/* A bare name is looked up on the library search path: only the loader can tell. */
	if (strchr(path, '/')) {
		struct stat st;
		if (stat(path, &st) != 0) {
			*fix = "fix the path";
			return errno == ENOENT ? g_strdup("the file does not exist")
					       : g_strdup_printf("the file cannot be reached (%s)", strerror(errno));
		}
		if (!S_ISREG(st.st_mode)) {
			*fix = "give the path of a shared library (.so)";
			return g_strdup("it is not a regular file");
		}
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			*fix = "fix its permissions";
			return g_strdup_printf("it cannot be read (%s)", strerror(errno));
		}
		unsigned char ident[EI_NIDENT + 2];
		ssize_t n = read(fd, ident, sizeof(ident));
		close(fd);
		if (n < (ssize_t)sizeof(ident) || memcmp(ident, ELFMAG, SELFMAG) != 0) {
			*fix = "give the path of a shared library (.so)";
			return g_strdup("it is not a shared library (no ELF header)");
		}
		unsigned type = ident[EI_DATA] == ELFDATA2MSB ? (unsigned)ident[EI_NIDENT] << 8 | ident[EI_NIDENT + 1]
							       : (unsigned)ident[EI_NIDENT + 1] << 8 | ident[EI_NIDENT];
		if (type != ET_DYN) {
			*fix = "link it with -shared";
			return g_strdup_printf("it is an ELF %s, not a shared library",
					       type == ET_REL ? "object file" : type == ET_EXEC ? "executable" : "file");
		}
	}
	*fix = strchr(path, '/') ? "it is not a loadable library for this system"
				 : "give its path, or put its folder in LD_LIBRARY_PATH";
#ifdef HAVE_DLFCN_H
	void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	if (h) {
		dlclose(h);
	} else {
		const char *why = dlerror();
		if (why && strstr(why, "undefined symbol"))
			*fix = "it was built against another version of Astrolabe or needs a library that is not loaded; rebuild or relink it";
		if (why)
			return g_strdup(why);
	}
#endif
	return g_strdup(ltdl_why ? ltdl_why : "unknown error");
}

static void plugin_load_file(const char *path)
{
	char *name = module_name_of(path);
	char *symbol = g_strconcat(ASTRO_PLUGIN_SYMBOL_PREFIX, name, NULL);
	lt_dlhandle handle = open_file(path);
	if (!handle) {
		const char *fix;
		char *why = library_problem(path, lt_dlerror(), &fix);
		_astro_error("cannot load plugin %s: %s: %s; it is skipped (remove it from the plugin directory)", path, why, fix);
		g_free(why);
		goto out;
	}
	const struct astro_plugin *desc = lt_dlsym(handle, symbol);
	if (!desc) {
		_astro_error("%s is not an Astrolabe plugin: it exports no '%s' (define it with ASTRO_PLUGIN_DEFINE(%s, ...))",
			     path, symbol, name);
		goto out;
	}
	plugin_add(desc, handle, g_strdup(path), name);
out:
	g_free(symbol);
	g_free(name);
}

static int compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Which plugins a directory scan loads. */
enum plugin_set { PLUGINS_RUNTIME, PLUGINS_FORMATS, PLUGINS_POLICIES };

static bool file_has_prefix(const char *entry, const char *prefix)
{
	return g_str_has_prefix(entry, prefix) || (g_str_has_prefix(entry, "lib") && g_str_has_prefix(entry + 3, prefix));
}

static bool plugin_file_in(const char *entry, enum plugin_set which)
{
	if (!g_str_has_suffix(entry, ".so"))
		return false;
	bool format = file_has_prefix(entry, FORMAT_PREFIX);
	return which == PLUGINS_FORMATS ? format : which == PLUGINS_POLICIES ? file_has_prefix(entry, "sched_") : !format;
}

/* Loads the plugins of dir: the trace-format plugins alone, the policies' alone (sched_*), or all but the formats. */
static void plugin_load_dir(const char *dir, bool must_exist, enum plugin_set which)
{
	bool formats = which == PLUGINS_FORMATS;
	GError *err = NULL;
	GDir *d = g_dir_open(dir, 0, &err);
	if (!d) {
		if (must_exist)
			_astro_warn("STARPU_PLUGIN_PATH names '%s', which cannot be read (%s): fix the path", dir, err->message);
		g_clear_error(&err);
		return;
	}
	_astro_verbose("looking for plugins in %s", dir);
	GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
	const char *entry;
	while ((entry = g_dir_read_name(d)))
		if (plugin_file_in(entry, which))
			g_ptr_array_add(files, g_build_filename(dir, entry, NULL));
	g_dir_close(d);
	/* Sorted, so the load order (and which duplicate wins) does not depend on the file system. */
	g_ptr_array_sort(files, compare_strings);
	for (guint i = 0; i < files->len; i++) {
		const char *file = g_ptr_array_index(files, i);
		if (formats) {
			if (g_hash_table_contains(format_paths_seen, file))
				continue;
			g_hash_table_add(format_paths_seen, g_strdup(file));
		}
		plugin_load_file(file);
	}
	g_ptr_array_free(files, TRUE);
}

static void sched_lib_load(void)
{
	const char *lib = astro_env_string("STARPU_SCHED_LIB", ASTRO_ENV_PATH_MAX, NULL);
	if (!lib || !*lib)
		return;
	lt_dlhandle handle = open_file(lib);
	if (!handle) {
		const char *fix;
		char *why = library_problem(lib, lt_dlerror(), &fix);
		_astro_error("STARPU_SCHED_LIB='%s' cannot be loaded: %s: %s; its policies are not available", lib, why, fix);
		g_free(why);
		return;
	}
	struct starpu_sched_policy *(*get)(const char *) =
		(struct starpu_sched_policy *(*)(const char *))lt_dlsym(handle, "starpu_get_sched_lib_policy");
	if (!get) {
		_astro_error("STARPU_SCHED_LIB='%s' exports no starpu_get_sched_lib_policy(): it is ignored", lib);
		return;
	}
	struct starpu_sched_policy **(*all)(void) =
		(struct starpu_sched_policy **(*)(void))lt_dlsym(handle, "starpu_get_sched_lib_policies");
	char *from = g_strdup_printf("STARPU_SCHED_LIB=%s", lib);
	_astro_policy_library_set(from, get, all);
	g_free(from);
}

static void plugin_load_dirs(enum plugin_set which)
{
	const char *builtin = astro_env_string("ASTROLABE_PLUGIN_DIR", ASTRO_ENV_PATH_MAX, NULL);
	if (!builtin)
		builtin = ASTRO_PLUGIN_DIR;
	if (*builtin)
		plugin_load_dir(builtin, false, which);
	const char *path = astro_env_names("STARPU_PLUGIN_PATH", ":", ASTRO_ENV_PATH_MAX, NULL);
	if (path) {
		char **dirs = _astro_parse_path_list(path, false);
		for (char **dir = dirs; *dir; dir++)
			plugin_load_dir(*dir, true, which);
		g_strfreev(dirs);
	}
}

/* Loads the built-in plugins and those of the directories (policies: the policies' alone). */
static int plugins_load(enum plugin_set which)
{
	starpu_pthread_mutex_lock(&registry_lock);
	if (!plugins_by_name)
		registries_create();
	starpu_pthread_mutex_unlock(&registry_lock);
	if (!ltdl_ready) {
		if (lt_dlinit() != 0) {
			_astro_error("libltdl failed to initialise (%s): no plugin can be loaded", lt_dlerror());
			return -ENOSYS;
		}
		ltdl_ready = true;
	}
	for (unsigned i = 0; _astro_static_plugins[i]; i++)
		if (which != PLUGINS_POLICIES || _astro_static_plugins[i]->kind == ASTRO_PLUGIN_SCHED)
			plugin_add(_astro_static_plugins[i], NULL, g_strdup("built in"), _astro_static_plugins[i]->name);

	plugin_load_dirs(which);
	if (which == PLUGINS_RUNTIME)
		sched_lib_load();
	return 0;
}

int _astro_plugins_load(void)
{
	return plugins_load(PLUGINS_RUNTIME);
}

int _astro_policy_plugins_load(void)
{
	return plugins_load(PLUGINS_POLICIES);
}

/* The trace-format plugins not loaded yet (the trace converter's, astrolabe/trace_format.h); without starpu_init(). */
void _astro_format_plugins_load(void)
{
	starpu_pthread_mutex_lock(&registry_lock);
	if (!format_plugins) {
		format_plugins = g_hash_table_new(g_str_hash, g_str_equal);
		format_paths_seen = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
	}
	starpu_pthread_mutex_unlock(&registry_lock);
	if (!ltdl_ready) {
		if (lt_dlinit() != 0) {
			_astro_error("libltdl failed to initialise (%s): no trace-format plugin can be loaded", lt_dlerror());
			return;
		}
		ltdl_ready = true;
	}
	plugin_load_dirs(PLUGINS_FORMATS);
}

void _astro_plugins_unload(void)
{
	starpu_pthread_mutex_lock(&registry_lock);
	GPtrArray *list = plugins;
	plugins = NULL;
	if (plugins_by_name)
		g_hash_table_destroy(plugins_by_name);
	plugins_by_name = NULL;
	starpu_pthread_mutex_unlock(&registry_lock);
	_astro_policies_clear();
	_astro_drivers_clear();

	for (guint i = list ? list->len : 0; i-- > 0;) {
		struct loaded_plugin *p = g_ptr_array_index(list, i);
		if (p->initialized)
			plugin_call(p, true, NULL);
		g_free(p->path);
		g_free(p);
	}
	if (list)
		g_ptr_array_free(list, TRUE);
}
