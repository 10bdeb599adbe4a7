/*
 * The plugin loader and the kernel's registries. Plugins are found in the
 * built-in directory, then in each folder of STARPU_PLUGIN_PATH; each file
 * KIND_NAME.so must export astrolabe_plugin_KIND_NAME. A bad plugin is
 * reported and skipped: loading never aborts the process.
 *
 * Registries are GLib containers guarded by one mutex; they are used at init,
 * shutdown and for look-ups by name, never on the task path.
 */
#include "kernel.h"
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
static GHashTable *policies_by_name;         /* name -> struct starpu_sched_policy */
static GPtrArray *policies;                  /* registration order */
static GPtrArray *drivers;                   /* const struct astro_driver */
static lt_dlhandle sched_lib;                /* STARPU_SCHED_LIB */
static char *sched_lib_from;                 /* "STARPU_SCHED_LIB=path", for the messages */
static GPtrArray *sched_lib_refused;         /* its policies that failed _astro_policy_check() */
/* The plugin whose init is running: policies it registers are checked in its name. */
static const struct loaded_plugin *initialising;
static bool initialising_refused;            /* a registration of that init was refused, and said so */
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
	policies_by_name = g_hash_table_new(g_str_hash, g_str_equal);
	policies = g_ptr_array_new();
	drivers = g_ptr_array_new();
}

/* ------------------------------------------------------------ services */

/* The one check of a scheduling policy, wherever it comes from (a plugin's
 * registration, STARPU_SCHED_LIB): from says where, for the message. */
int _astro_policy_check(const struct starpu_sched_policy *policy, const char *from)
{
	const char *missing = !policy ? "a policy (NULL)"
		: !policy->policy_name ? "policy_name"
		: !policy->push_task ? "push_task"
		: !policy->pop_task ? "pop_task" : NULL;
	if (!missing)
		return 0;
	_astro_error("scheduling policy %s%s%s(%s) has no %s: a policy needs policy_name, push_task and pop_task; it is ignored",
		     policy && policy->policy_name ? "'" : "", policy && policy->policy_name ? policy->policy_name : "",
		     policy && policy->policy_name ? "' " : "", from, missing);
	return -EINVAL;
}

int astro_sched_policy_register(struct starpu_sched_policy *policy)
{
	char *from = initialising ? g_strdup_printf("plugin %s, %s", initialising->desc->name, initialising->path)
				  : g_strdup("astro_sched_policy_register()");
	int ret = _astro_policy_check(policy, from);
	g_free(from);
	if (ret) {
		initialising_refused = initialising != NULL;
		return ret;
	}
	starpu_pthread_mutex_lock(&registry_lock);
	if (!policies_by_name)
		registries_create();
	if (g_hash_table_contains(policies_by_name, policy->policy_name)) {
		starpu_pthread_mutex_unlock(&registry_lock);
		_astro_error("scheduling policy '%s' is registered twice: the second one is ignored; rename one of them",
			     policy->policy_name);
		return -EEXIST;
	}
	g_hash_table_insert(policies_by_name, (gpointer)policy->policy_name, policy);
	g_ptr_array_add(policies, policy);
	starpu_pthread_mutex_unlock(&registry_lock);
	_astro_verbose("  policy %s: %s", policy->policy_name,
		       policy->policy_description ? policy->policy_description : "");
	return 0;
}

int astro_driver_register(const struct astro_driver *driver)
{
	if (!driver || !driver->name || !driver->execute || !driver->has_impl || !driver->default_count) {
		_astro_error("astro_driver_register: a driver needs name, execute, has_impl and default_count");
		return -EINVAL;
	}
	const struct astro_node_ops *node = driver->node_ops;
	if (node && (!node->kind || node->kind == STARPU_CPU_RAM || !node->allocate || !node->free || !node->copy_from_ram || !node->copy_to_ram)) {
		_astro_error("astro_driver_register: driver '%s' has node ops without a device kind, allocate, free, copy_from_ram or copy_to_ram",
			     driver->name);
		return -EINVAL;
	}
	starpu_pthread_mutex_lock(&registry_lock);
	if (!drivers)
		registries_create();
	for (guint i = 0; i < drivers->len; i++) {
		const struct astro_driver *d = g_ptr_array_index(drivers, i);
		if (strcmp(d->name, driver->name) == 0 || d->archtype == driver->archtype) {
			starpu_pthread_mutex_unlock(&registry_lock);
			_astro_error("driver '%s' conflicts with the already registered driver '%s': only one driver per worker type",
				     driver->name, d->name);
			return -EEXIST;
		}
	}
	g_ptr_array_add(drivers, (gpointer)driver);
	starpu_pthread_mutex_unlock(&registry_lock);
	_astro_verbose("  driver %s", driver->name);
	return 0;
}

struct starpu_sched_policy *_astro_policy_lookup(const char *name)
{
	struct starpu_sched_policy *policy = NULL;
	starpu_pthread_mutex_lock(&registry_lock);
	if (policies_by_name)
		policy = g_hash_table_lookup(policies_by_name, name);
	starpu_pthread_mutex_unlock(&registry_lock);
	if (!policy && sched_lib) {
		struct starpu_sched_policy *(*get)(const char *) =
			(struct starpu_sched_policy *(*)(const char *))lt_dlsym(sched_lib, "starpu_get_sched_lib_policy");
		if (get) {
			struct _astro_foreign_call call = {
				.what = "STARPU_SCHED_LIB's starpu_get_sched_lib_policy()",
				.file = sched_lib_from, .symbol = "starpu_get_sched_lib_policy",
				.advice = "the library crashed; fix it or unset STARPU_SCHED_LIB",
			};
			_astro_foreign_enter(&call);
			policy = get(name);
			_astro_foreign_leave(&call);
		}
		/* Checked at load when the library lists its policies; otherwise here, at its first use. */
		if (policy && (g_ptr_array_find(sched_lib_refused, policy, NULL) || _astro_policy_check(policy, sched_lib_from)))
			policy = NULL;
	}
	return policy;
}

/* The policies STARPU_SCHED_LIB lists (starpu_get_sched_lib_policies()), NULL when it lists none. */
static struct starpu_sched_policy **sched_lib_policies(void)
{
	struct starpu_sched_policy **(*all)(void) =
		(struct starpu_sched_policy **(*)(void))lt_dlsym(sched_lib, "starpu_get_sched_lib_policies");
	if (!all)
		return NULL;
	struct _astro_foreign_call call = {
		.what = "STARPU_SCHED_LIB's starpu_get_sched_lib_policies()",
		.file = sched_lib_from, .symbol = "starpu_get_sched_lib_policies",
		.advice = "the library crashed; fix it or unset STARPU_SCHED_LIB",
	};
	_astro_foreign_enter(&call);
	struct starpu_sched_policy **list = all();
	_astro_foreign_leave(&call);
	return list;
}

void _astro_policies_print(FILE *out)
{
	fprintf(out, "\nThe variable STARPU_SCHED can be set to one of the following strings:\n");
	starpu_pthread_mutex_lock(&registry_lock);
	for (guint i = 0; policies && i < policies->len; i++) {
		struct starpu_sched_policy *p = g_ptr_array_index(policies, i);
		fprintf(out, "%-10s\t-> %s\n", p->policy_name, p->policy_description ? p->policy_description : "");
	}
	starpu_pthread_mutex_unlock(&registry_lock);
	if (sched_lib) {
		for (struct starpu_sched_policy **p = sched_lib_policies(); p && *p; p++)
			if (!g_ptr_array_find(sched_lib_refused, *p, NULL))
				fprintf(out, "%-10s\t-> %s\n", (*p)->policy_name,
					(*p)->policy_description ? (*p)->policy_description : "");
	}
	fprintf(out, "\n");
}

struct starpu_sched_policy **starpu_sched_get_predefined_policies(void)
{
	static struct starpu_sched_policy *list[64];
	unsigned n = 0;
	starpu_pthread_mutex_lock(&registry_lock);
	for (guint i = 0; policies && i < policies->len && n < 63; i++)
		list[n++] = g_ptr_array_index(policies, i);
	starpu_pthread_mutex_unlock(&registry_lock);
	list[n] = NULL;
	return list;
}

unsigned _astro_driver_count(void)
{
	return drivers ? drivers->len : 0;
}

const struct astro_driver *_astro_driver_nth(unsigned i)
{
	return g_ptr_array_index(drivers, i);
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
static int plugin_call(const struct loaded_plugin *p, bool fini)
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
	const struct loaded_plugin *outer = initialising;
	initialising = p;
	initialising_refused = false;
	_astro_foreign_enter(&call);
	int ret = 0;
	if (fini)
		p->desc->fini();
	else
		ret = p->desc->init();
	_astro_foreign_leave(&call);
	initialising = outer;
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
	int ret = plugin_call(p, false);
	if (ret == ASTRO_PLUGIN_DECLINE) {
		_astro_verbose("plugin %s: not available here, skipped", desc->name);
	} else if (ret < 0) {
		/* A refused registration already said why, in one line. */
		if (!initialising_refused)
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

/* Loads the plugins of dir: the trace-format plugins alone when formats, else all the others. */
static void plugin_load_dir(const char *dir, bool must_exist, bool formats)
{
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
		if (g_str_has_suffix(entry, ".so") &&
		    (g_str_has_prefix(entry, FORMAT_PREFIX) || g_str_has_prefix(entry, "lib" FORMAT_PREFIX)) == formats)
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
	const char *lib = getenv("STARPU_SCHED_LIB");
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
	if (!lt_dlsym(handle, "starpu_get_sched_lib_policy")) {
		_astro_error("STARPU_SCHED_LIB='%s' exports no starpu_get_sched_lib_policy(): it is ignored", lib);
		return;
	}
	sched_lib = handle;
	sched_lib_from = g_strdup_printf("STARPU_SCHED_LIB=%s", lib);
	sched_lib_refused = g_ptr_array_new();
	/* Checked now, like a plugin's policies at their registration. */
	for (struct starpu_sched_policy **p = sched_lib_policies(); p && *p; p++)
		if (_astro_policy_check(*p, sched_lib_from))
			g_ptr_array_add(sched_lib_refused, *p);
}

/* The built-in directory (ASTROLABE_PLUGIN_DIR replaces it: tests use it to ignore an installed copy), then STARPU_PLUGIN_PATH. */
static void plugin_load_dirs(bool formats)
{
	const char *builtin = getenv("ASTROLABE_PLUGIN_DIR");
	if (!builtin)
		builtin = ASTRO_PLUGIN_DIR;
	if (*builtin)
		plugin_load_dir(builtin, false, formats);
	const char *path = getenv("STARPU_PLUGIN_PATH");
	if (path) {
		char **dirs = _astro_parse_path_list(path, false);
		for (char **dir = dirs; *dir; dir++)
			plugin_load_dir(*dir, true, formats);
		g_strfreev(dirs);
	}
}

int _astro_plugins_load(void)
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
		plugin_add(_astro_static_plugins[i], NULL, g_strdup("built in"), _astro_static_plugins[i]->name);

	plugin_load_dirs(false);
	sched_lib_load();
	return 0;
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
	plugin_load_dirs(true);
}

/* What the plugin whose init is running is, for the messages of its registrations ("plugin NAME (PATH)"); NULL outside
 * init. refused: this registration is refused and says so (the init's failure then adds no message). */
char *_astro_plugin_initialising(bool refused)
{
	if (!initialising)
		return NULL;
	if (refused)
		initialising_refused = true;
	return g_strdup_printf("plugin %s (%s)", initialising->desc->name, initialising->path);
}

void _astro_plugins_unload(void)
{
	starpu_pthread_mutex_lock(&registry_lock);
	GPtrArray *list = plugins;
	plugins = NULL;
	if (plugins_by_name)
		g_hash_table_destroy(plugins_by_name);
	plugins_by_name = NULL;
	if (policies_by_name)
		g_hash_table_destroy(policies_by_name);
	policies_by_name = NULL;
	if (policies)
		g_ptr_array_free(policies, TRUE);
	policies = NULL;
	if (drivers)
		g_ptr_array_free(drivers, TRUE);
	drivers = NULL;
	starpu_pthread_mutex_unlock(&registry_lock);

	for (guint i = list ? list->len : 0; i-- > 0;) {
		struct loaded_plugin *p = g_ptr_array_index(list, i);
		if (p->initialized)
			plugin_call(p, true);
		g_free(p->path);
		g_free(p);
	}
	if (list)
		g_ptr_array_free(list, TRUE);
	sched_lib = NULL;
	g_free(sched_lib_from);
	sched_lib_from = NULL;
	if (sched_lib_refused)
		g_ptr_array_free(sched_lib_refused, TRUE);
	sched_lib_refused = NULL;
}
