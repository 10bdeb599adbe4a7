/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The profiling-tool dispatcher (starpu_profiling_tool.h): loads the tools
 * named in STARPU_PROF_TOOL, the one already in the process (LD_PRELOAD or
 * linked in) and the tool plugins named there, and turns the kernel's
 * observation moments into StarPU tool callbacks. It is one subscriber of the
 * observation path, subscribed only to the moments some callback needs, so a
 * program without a tool pays nothing beyond the kernel's mask branch.
 *
 * Callbacks of an event live in an immutable array replaced as a whole when
 * a tool registers or unregisters: firing an event reads one pointer and
 * walks the array without a lock. Replaced arrays and registrations are kept
 * until starpu_shutdown(), when no callback can run any more.
 */
#define _GNU_SOURCE
#include "profiling/profiling.h"
#include <starpu_profiling_tool.h>
#include <astrolabe/prof_tool.h>
#include <ltdl.h>
#include <dlfcn.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#define NEVENTS (starpu_prof_tool_event_user_end + 1)

/* Weak references: a program that defines these (the tool linked in) exports
 * them because this library refers to them, so dlsym() finds them. */
#pragma weak starpu_prof_tool_library_register
#pragma weak astro_prof_tool_handshake
#pragma weak astro_prof_tool_finalize

struct registration
{
	starpu_prof_tool_cb_func cb;
	enum starpu_prof_tool_event event;
	int enabled;                         /* atomic: toggled by starpu_prof_tool_command_toggle */
	bool removed;
	struct _astro_foreign_call site;     /* entered around each call: a crash there names the tool and the event */
	char what[160];
};

/* The callbacks of one event, in registration order. Never modified once published. */
struct cb_list
{
	unsigned n;
	struct registration *regs[];
};

struct tool
{
	char *origin;                        /* what the messages call it */
	starpu_prof_tool_entry_func entry;
	astro_prof_tool_finalize_func finalize;
};

static starpu_pthread_mutex_t tools_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static struct cb_list *lists[NEVENTS];   /* atomic pointers */
static GPtrArray *garbage;               /* retired lists and every registration, freed at shutdown */
static GPtrArray *tools;                 /* struct tool, load order */
static GPtrArray *provided;              /* const struct astro_prof_tool *, from plugins */
static bool session_active;              /* between _astro_prof_tool_load() and _astro_prof_tool_unload() */
static unsigned long session;            /* tells per-thread toggles of an old session from current ones */
static int observer_id = -1;
static bool ltdl_ready;
/* A loaded tool takes part in Astrolabe's extension (event_info->astro): a tool plugin, or a tool
 * whose astro_prof_tool_handshake() accepted. Without one, events carry StarPU's fields only, and
 * the moments they come from are not stamped (a StarPU tool reads its own clock). */
static bool ext_wanted;                  /* atomic */

/* Registrations the calling thread turned off with toggle_per_thread. */
#define MAX_THREAD_TOGGLES 16
struct thread_toggles
{
	unsigned long session;
	unsigned n;
	struct registration *regs[MAX_THREAD_TOGGLES];
};
static _ASTRO_TLS struct thread_toggles thread_toggles;
static _ASTRO_TLS int thread_tid;
/* The tool whose register function the calling thread runs (tool_start), for its registrations' sites. */
static _ASTRO_TLS const char *registering;

static const char *const event_names[NEVENTS] = {
	"none", "init", "terminate", "init_begin", "init_end",
	"driver_init", "driver_deinit", "driver_init_start", "driver_init_end",
	"start_cpu_exec", "end_cpu_exec", "start_gpu_exec", "end_gpu_exec",
	"start_transfer", "end_transfer", "user_start", "user_end",
};

/* ------------------------------------------------------------ dispatch */

static int current_tid(void)
{
	if (STARPU_UNLIKELY(!thread_tid))
		thread_tid = (int)astro_thread_tid();
	return thread_tid;
}

static bool off_in_this_thread(const struct registration *r)
{
	const struct thread_toggles *t = &thread_toggles;
	if (t->session != __atomic_load_n(&session, __ATOMIC_RELAXED))
		return false;
	for (unsigned i = 0; i < t->n; i++)
		if (t->regs[i] == r)
			return true;
	return false;
}

static enum starpu_prof_tool_driver_type driver_type_of(enum starpu_worker_archtype arch)
{
	switch (arch) {
	case STARPU_CUDA_WORKER: return starpu_prof_tool_driver_gpu;
	case STARPU_HIP_WORKER: return starpu_prof_tool_driver_hip;
	case STARPU_OPENCL_WORKER: return starpu_prof_tool_driver_ocl;
	default: return starpu_prof_tool_driver_cpu;
	}
}

/* Calls every enabled callback of type with the information ev gives (ev may be NULL). */
static void dispatch(enum starpu_prof_tool_event type, const struct astro_event *ev)
{
	struct cb_list *list = __atomic_load_n(&lists[type], __ATOMIC_ACQUIRE);
	if (!list)
		return;

	struct starpu_prof_tool_info info;
	union starpu_prof_tool_event_info event_info;
	memset(&info, 0, sizeof(info));
	memset(&event_info, 0, sizeof(event_info));
	info.conf = &_astro_rt.conf;
	info.event_type = type;
	info.starpu_version[0] = STARPU_MAJOR_VERSION;
	info.starpu_version[1] = STARPU_MINOR_VERSION;
	info.starpu_version[2] = STARPU_RELEASE_VERSION;
	info.thread_id = current_tid();
	info.worker_id = -1;
	struct astro_prof_tool_event_ext *ext = &event_info.astro;
	ext->event_type = type;
	bool with_ext = __atomic_load_n(&ext_wanted, __ATOMIC_RELAXED);
	if (with_ext) {
		ext->interface_version = ASTRO_PROF_TOOL_INTERFACE_VERSION;
		ext->time_us = ev && ev->time_us != 0.0 ? ev->time_us : _astro_now();
		ext->sched_ctx = STARPU_NMAX_SCHED_CTXS;
	}

	if (ev) {
		info.worker_id = ev->workerid;
		if (ev->workerid >= 0 && (unsigned)ev->workerid < _astro_rt.nworkers) {
			const struct _astro_worker *w = _astro_worker(ev->workerid);
			info.device_number = w->devid;
			info.driver_type = driver_type_of(w->arch);
		}
		struct starpu_task *task = ev->task;
		switch (type) {
		case starpu_prof_tool_event_start_cpu_exec:
		case starpu_prof_tool_event_end_cpu_exec:
		case starpu_prof_tool_event_start_gpu_exec:
		case starpu_prof_tool_event_end_gpu_exec:
			info.fun_ptr = ev->fun_ptr;
			if (task) {
				info.task_name = starpu_task_get_name(task);
				if (task->cl)
					info.model_name = task->cl->model ? task->cl->model->symbol : NULL;
			}
			if (!with_ext)
				break;
			ext->task = task;
			if (task)
				ext->sched_ctx = task->sched_ctx < STARPU_NMAX_SCHED_CTXS ? task->sched_ctx : 0;
			ext->job_id = ev->job_id;
			ext->nimpl = ev->nimpl;
			if (task && task->cl) {
				ext->codelet_name = task->cl->name;
				ext->nbuffers = STARPU_TASK_GET_NBUFFERS(task);
				ext->handles = STARPU_TASK_GET_HANDLES(task);
				for (unsigned i = 0; i < ext->nbuffers; i++)
					ext->data_size += starpu_data_get_size(ext->handles[i]);
			}
			break;
		case starpu_prof_tool_event_start_transfer:
		case starpu_prof_tool_event_end_transfer:
			info.memnode = ev->dst_node;
			info.bytes_to_transfer = ev->bytes > UINT_MAX ? UINT_MAX : (unsigned)ev->bytes;
			info.bytes_transfered = type == starpu_prof_tool_event_end_transfer ? info.bytes_to_transfer : 0;
			if (with_ext) {
				ext->src_node = ev->src_node;
				ext->dst_node = ev->dst_node;
				ext->bytes = ev->bytes;
			}
			break;
		case starpu_prof_tool_event_user_start:
		case starpu_prof_tool_event_user_end:
			if (with_ext)
				ext->user_label = ev->label;
			break;
		default:
			break;
		}
	}

	bool thread_has_toggles = thread_toggles.n != 0;
	enum _astro_call_context previous_context = _astro_context_enter(_ASTRO_CTX_TOOL);
	for (unsigned i = 0; i < list->n; i++) {
		struct registration *r = list->regs[i];
		if (!__atomic_load_n(&r->enabled, __ATOMIC_RELAXED))
			continue;
		if (STARPU_UNLIKELY(thread_has_toggles) && off_in_this_thread(r))
			continue;
		struct starpu_prof_tool_api_info api_info;
		const struct _astro_foreign_call *outer = _astro_site_enter(&r->site);
		if (list->n == 1) {
			r->cb(&info, &event_info, &api_info);
		} else {
			/* Each callback gets its own copy: one tool scribbling on the info cannot mislead the next. */
			struct starpu_prof_tool_info info_copy = info;
			union starpu_prof_tool_event_info event_copy = event_info;
			r->cb(&info_copy, &event_copy, &api_info);
		}
		_astro_site_leave(outer);
	}
	_astro_context_leave(previous_context);
}

static void on_moment(const struct astro_event *ev, void *arg)
{
	(void)arg;
	bool cpu = true;
	if (ev->workerid >= 0 && (unsigned)ev->workerid < _astro_rt.nworkers)
		cpu = _astro_worker(ev->workerid)->arch == STARPU_CPU_WORKER;
	switch (ev->moment) {
	case ASTRO_MOMENT_RUNTIME_INIT_END:
		dispatch(starpu_prof_tool_event_init_end, ev);
		break;
	case ASTRO_MOMENT_WORKER_INIT_BEGIN:
		dispatch(starpu_prof_tool_event_driver_init, ev);
		dispatch(starpu_prof_tool_event_driver_init_start, ev);
		break;
	case ASTRO_MOMENT_WORKER_INIT_END:
		dispatch(starpu_prof_tool_event_driver_init_end, ev);
		break;
	case ASTRO_MOMENT_WORKER_DEINIT_END:
		dispatch(starpu_prof_tool_event_driver_deinit, ev);
		break;
	case ASTRO_MOMENT_TASK_STARTED:
		dispatch(cpu ? starpu_prof_tool_event_start_cpu_exec : starpu_prof_tool_event_start_gpu_exec, ev);
		break;
	case ASTRO_MOMENT_TASK_ENDED:
		dispatch(cpu ? starpu_prof_tool_event_end_cpu_exec : starpu_prof_tool_event_end_gpu_exec, ev);
		break;
	case ASTRO_MOMENT_TRANSFER_BEGIN:
		dispatch(starpu_prof_tool_event_start_transfer, ev);
		break;
	case ASTRO_MOMENT_TRANSFER_END:
		dispatch(starpu_prof_tool_event_end_transfer, ev);
		break;
	case ASTRO_MOMENT_USER_BEGIN:
		dispatch(starpu_prof_tool_event_user_start, ev);
		break;
	case ASTRO_MOMENT_USER_END:
		dispatch(starpu_prof_tool_event_user_end, ev);
		break;
	default:
		break;
	}
}

/* The moments that feed event type (0 for the events the dispatcher fires itself). */
static uint64_t moments_of(enum starpu_prof_tool_event type)
{
	switch (type) {
	case starpu_prof_tool_event_init_end: return ASTRO_MOMENT_BIT(ASTRO_MOMENT_RUNTIME_INIT_END);
	case starpu_prof_tool_event_driver_init:
	case starpu_prof_tool_event_driver_init_start: return ASTRO_MOMENT_BIT(ASTRO_MOMENT_WORKER_INIT_BEGIN);
	case starpu_prof_tool_event_driver_init_end: return ASTRO_MOMENT_BIT(ASTRO_MOMENT_WORKER_INIT_END);
	case starpu_prof_tool_event_driver_deinit: return ASTRO_MOMENT_BIT(ASTRO_MOMENT_WORKER_DEINIT_END);
	case starpu_prof_tool_event_start_cpu_exec:
	case starpu_prof_tool_event_start_gpu_exec: return ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_STARTED);
	case starpu_prof_tool_event_end_cpu_exec:
	case starpu_prof_tool_event_end_gpu_exec: return ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_ENDED);
	case starpu_prof_tool_event_start_transfer: return ASTRO_MOMENT_BIT(ASTRO_MOMENT_TRANSFER_BEGIN);
	case starpu_prof_tool_event_end_transfer: return ASTRO_MOMENT_BIT(ASTRO_MOMENT_TRANSFER_END);
	case starpu_prof_tool_event_user_start: return ASTRO_MOMENT_BIT(ASTRO_MOMENT_USER_BEGIN);
	case starpu_prof_tool_event_user_end: return ASTRO_MOMENT_BIT(ASTRO_MOMENT_USER_END);
	default: return 0;
	}
}

/* Subscribes to exactly the moments the registered callbacks need. Called with tools_lock held. */
static void update_subscription(void)
{
	uint64_t mask = 0;
	for (int e = 0; e < NEVENTS; e++)
		if (lists[e] && lists[e]->n)
			mask |= moments_of((enum starpu_prof_tool_event)e);
	if (mask && !__atomic_load_n(&ext_wanted, __ATOMIC_RELAXED))
		mask |= ASTRO_OBSERVE_UNTIMED; /* nobody reads event_info->astro.time_us */
	if (observer_id < 0) {
		if (!mask)
			return;
		observer_id = astro_observe_subscribe(mask, on_moment, NULL);
		if (observer_id < 0)
			_astro_error("profiling tools: no observation slot is left (%s): tool callbacks will not be called",
				     strerror(-observer_id));
		return;
	}
	astro_observe_set_mask(observer_id, mask);
}

/* ------------------------------------------------------- registration */

/* Publishes a copy of event's list with add appended and/or without drop. Called with tools_lock held. */
static void replace_list(enum starpu_prof_tool_event event, struct registration *add, struct registration *drop)
{
	struct cb_list *old = lists[event];
	unsigned n = old ? old->n : 0;
	struct cb_list *list = g_malloc(sizeof(*list) + (n + 1) * sizeof(list->regs[0]));
	list->n = 0;
	for (unsigned i = 0; i < n; i++)
		if (old->regs[i] != drop)
			list->regs[list->n++] = old->regs[i];
	if (add)
		list->regs[list->n++] = add;
	__atomic_store_n(&lists[event], list, __ATOMIC_RELEASE);
	if (old)
		g_ptr_array_add(garbage, old);
	update_subscription();
}

/* The earliest live registration of cb for event, NULL if none. Called with tools_lock held. */
static struct registration *find_registration(enum starpu_prof_tool_event event, starpu_prof_tool_cb_func cb)
{
	struct cb_list *list = lists[event];
	for (unsigned i = 0; list && i < list->n; i++)
		if (list->regs[i]->cb == cb)
			return list->regs[i];
	return NULL;
}

static bool check_call(const char *what, enum starpu_prof_tool_event event, starpu_prof_tool_cb_func cb)
{
	if ((int)event <= starpu_prof_tool_event_none || (int)event >= NEVENTS) {
		_astro_error("profiling tool %s: unknown event %d: use a value of enum starpu_prof_tool_event (init .. user_end)",
			     what, (int)event);
		return false;
	}
	if (!cb) {
		_astro_error("profiling tool %s(%s): NULL callback: pass the function to call", what, event_names[event]);
		return false;
	}
	if (!session_active) {
		_astro_error("profiling tool %s(%s) called outside starpu_init()..starpu_shutdown(): ignored", what, event_names[event]);
		return false;
	}
	return true;
}

static void toggle_for_this_thread(struct registration *r)
{
	struct thread_toggles *t = &thread_toggles;
	if (t->session != __atomic_load_n(&session, __ATOMIC_RELAXED)) {
		t->session = __atomic_load_n(&session, __ATOMIC_RELAXED);
		t->n = 0;
	}
	for (unsigned i = 0; i < t->n; i++) {
		if (t->regs[i] == r) {
			t->regs[i] = t->regs[--t->n];
			return;
		}
	}
	if (t->n == MAX_THREAD_TOGGLES) {
		_astro_error("profiling tool toggle_per_thread(%s): this thread already turned %d callbacks off: turn some back on first",
			     event_names[r->event], MAX_THREAD_TOGGLES);
		return;
	}
	t->regs[t->n++] = r;
}

/* The register function handed to tools. */
static void tool_register(enum starpu_prof_tool_event event, starpu_prof_tool_cb_func cb, enum starpu_prof_tool_command command)
{
	starpu_pthread_mutex_lock(&tools_lock);
	if (!check_call("register", event, cb))
		goto out;
	struct registration *r = find_registration(event, cb);
	if (r && command == starpu_prof_tool_command_toggle) {
		__atomic_store_n(&r->enabled, !__atomic_load_n(&r->enabled, __ATOMIC_RELAXED), __ATOMIC_RELEASE);
		goto out;
	}
	if (r && command == starpu_prof_tool_command_toggle_per_thread) {
		toggle_for_this_thread(r);
		goto out;
	}
	if ((unsigned)command > starpu_prof_tool_command_toggle_per_thread)
		_astro_warn("profiling tool register(%s): unknown command %d, taken as starpu_prof_tool_command_reg",
			    event_names[event], (int)command);
	/* Any command on a callback not registered yet registers it, as StarPU does. */
	r = g_new0(struct registration, 1);
	r->cb = cb;
	r->event = event;
	r->enabled = 1;
	/* A callback registered later (from another callback) is named by its library only. */
	_astro_site_format(&r->site, r->what, sizeof(r->what), (void *)cb, "its callback",
			   "the tool crashed, not the runtime; fix it or remove it from STARPU_PROF_TOOL",
			   "profiling tool %s's %s callback", registering ? registering : "(registered from a callback)",
			   event_names[event]);
	g_ptr_array_add(garbage, r);
	replace_list(event, r, NULL);
out:
	starpu_pthread_mutex_unlock(&tools_lock);
}

/* The unregister function handed to tools: removes the earliest registration of cb for event. */
static void tool_unregister(enum starpu_prof_tool_event event, starpu_prof_tool_cb_func cb, enum starpu_prof_tool_command command)
{
	(void)command;
	starpu_pthread_mutex_lock(&tools_lock);
	if (!check_call("unregister", event, cb))
		goto out;
	struct registration *r = find_registration(event, cb);
	if (!r) {
		_astro_warn("profiling tool unregister(%s, callback %p): this callback is not registered for that event: nothing to remove",
			    event_names[event], (void *)cb);
		goto out;
	}
	/* A thread walking the old list skips it from now on. */
	__atomic_store_n(&r->enabled, 0, __ATOMIC_RELEASE);
	r->removed = true;
	replace_list(event, NULL, r);
out:
	starpu_pthread_mutex_unlock(&tools_lock);
}

/* --------------------------------------------------------------- tools */

int astro_prof_tool_provide(const struct astro_prof_tool *tool)
{
	if (!tool || !tool->name || !*tool->name || !tool->library_register) {
		_astro_error("astro_prof_tool_provide: a tool needs a name and library_register%s%s",
			     tool && tool->name ? ": check tool " : "", tool && tool->name ? tool->name : "");
		return -EINVAL;
	}
	for (const char *c = tool->name; *c; c++) {
		if (!g_ascii_isalnum(*c) && *c != '_' && *c != '-') {
			_astro_error("astro_prof_tool_provide: tool name '%s' has a '%c': use letters, digits, '_' and '-' (it is written in STARPU_PROF_TOOL)",
				     tool->name, *c);
			return -EINVAL;
		}
	}
	starpu_pthread_mutex_lock(&tools_lock);
	if (!provided)
		provided = g_ptr_array_new();
	for (guint i = 0; i < provided->len; i++) {
		const struct astro_prof_tool *t = g_ptr_array_index(provided, i);
		if (strcmp(t->name, tool->name) == 0) {
			starpu_pthread_mutex_unlock(&tools_lock);
			_astro_error("profiling tool '%s' is provided twice: the second is ignored; rename one of them", tool->name);
			return -EEXIST;
		}
	}
	g_ptr_array_add(provided, (gpointer)tool);
	starpu_pthread_mutex_unlock(&tools_lock);
	_astro_verbose("  profiling tool %s (enable it with STARPU_PROF_TOOL=%s)", tool->name, tool->name);
	return 0;
}

/* A call into a tool outside the events (handshake, register function,
 * finalize), recorded so that a crash there names the tool. */
static void tool_call_enter(struct _astro_foreign_call *call, const char *origin, const char *fn_name, void *fn)
{
	_astro_foreign_enter_fn(call, fn, fn_name, "the tool crashed; fix it or remove it from STARPU_PROF_TOOL",
				"profiling tool %s's %s", origin, fn_name);
}

/* Runs a tool's handshake and entry function; origin is what messages call it. */
static void tool_start(const char *origin, starpu_prof_tool_entry_func entry, astro_prof_tool_handshake_func handshake,
		       astro_prof_tool_finalize_func finalize, bool plugin)
{
	for (guint i = 0; i < tools->len; i++) {
		struct tool *t = g_ptr_array_index(tools, i);
		if (t->entry == entry) {
			_astro_warn("profiling tool %s is the same as %s, already loaded: it is loaded once", origin, t->origin);
			return;
		}
	}
	struct _astro_foreign_call tc;
	if (handshake) {
		tool_call_enter(&tc, origin, "astro_prof_tool_handshake", (void *)handshake);
		int answer = handshake(ASTRO_PROF_TOOL_INTERFACE_VERSION);
		_astro_foreign_leave_fn(&tc);
		if (answer != ASTRO_PROF_TOOL_ACCEPT) {
			_astro_error("profiling tool %s declined this runtime in astro_prof_tool_handshake() (tool interface version %d, answer %d): the program runs without it",
				     origin, ASTRO_PROF_TOOL_INTERFACE_VERSION, answer);
			return;
		}
	}
	struct tool *t = g_new0(struct tool, 1);
	t->origin = g_strdup(origin);
	t->entry = entry;
	t->finalize = finalize;
	starpu_pthread_mutex_lock(&tools_lock);
	g_ptr_array_add(tools, t);
	if ((plugin || handshake) && !ext_wanted) {
		__atomic_store_n(&ext_wanted, true, __ATOMIC_RELAXED);
		update_subscription(); /* its callbacks, and those already registered, get the extension */
	}
	starpu_pthread_mutex_unlock(&tools_lock);
	_astro_verbose("profiling tool %s loaded", origin);
	/* Not under tools_lock: the entry function calls tool_register. */
	tool_call_enter(&tc, origin, "starpu_prof_tool_library_register", (void *)entry);
	registering = t->origin;
	entry(tool_register, tool_unregister);
	registering = NULL;
	_astro_foreign_leave_fn(&tc);
}

/* sym, when it lives in the same object file as ref; NULL otherwise. */
static void *same_object(void *ref, void *sym)
{
	Dl_info a, b;
	if (!sym || !dladdr(ref, &a) || !dladdr(sym, &b))
		return NULL;
	return a.dli_fbase == b.dli_fbase ? sym : NULL;
}

/* A tool already in the process: preloaded, or linked into the program. */
static void load_process_tool(void)
{
	void *entry = dlsym(RTLD_DEFAULT, "starpu_prof_tool_library_register");
	if (!entry)
		entry = (void *)starpu_prof_tool_library_register;
	if (!entry)
		return;
	void *handshake = dlsym(RTLD_DEFAULT, "astro_prof_tool_handshake");
	void *finalize = dlsym(RTLD_DEFAULT, "astro_prof_tool_finalize");
	Dl_info where;
	char *origin;
	if (dladdr(entry, &where) && where.dli_fname && *where.dli_fname)
		origin = g_strdup_printf("%s (in the process)", where.dli_fname);
	else
		origin = g_strdup("linked into the program");
	tool_start(origin, (starpu_prof_tool_entry_func)entry,
		   (astro_prof_tool_handshake_func)same_object(entry, handshake),
		   (astro_prof_tool_finalize_func)same_object(entry, finalize), false);
	g_free(origin);
}

static const struct astro_prof_tool *provided_tool(const char *name)
{
	for (guint i = 0; provided && i < provided->len; i++) {
		const struct astro_prof_tool *t = g_ptr_array_index(provided, i);
		if (strcmp(t->name, name) == 0)
			return t;
	}
	return NULL;
}

static char *provided_names(void)
{
	GString *s = g_string_new(NULL);
	for (guint i = 0; provided && i < provided->len; i++) {
		const struct astro_prof_tool *t = g_ptr_array_index(provided, i);
		g_string_append_printf(s, "%s%s", s->len ? ", " : "", t->name);
	}
	if (!s->len)
		g_string_append(s, "none");
	return g_string_free(s, FALSE);
}

/* The system loader's reason for refusing path (libltdl says "file not found" for most). */
static char *dlopen_failure(const char *path)
{
	void *h = dlopen(path, RTLD_LAZY | RTLD_LOCAL);
	if (h) {
		dlclose(h);
		return NULL;
	}
	const char *why = dlerror();
	return g_strdup(why ? why : "unknown reason");
}

/* One entry of STARPU_PROF_TOOL: a tool plugin's name, or a library. */
static void load_named_tool(const char *entry)
{
	bool is_path = strchr(entry, '/') != NULL;
	if (!is_path) {
		const struct astro_prof_tool *t = provided_tool(entry);
		if (t) {
			char *origin = g_strdup_printf("'%s' (plugin)", t->name);
			tool_start(origin, t->library_register, NULL, t->finalize, true);
			g_free(origin);
			return;
		}
	}
	struct stat st;
	if (is_path && stat(entry, &st) != 0) {
		_astro_error("profiling tool %s (STARPU_PROF_TOOL) does not exist: fix the path; the program runs without it", entry);
		return;
	}
	lt_dladvise advise;
	lt_dladvise_init(&advise);
	lt_dladvise_local(&advise);
	lt_dlhandle handle = lt_dlopenadvise(entry, advise);
	lt_dladvise_destroy(&advise);
	if (!handle) {
		if (!is_path) {
			char *names = provided_names();
			bool here = stat(entry, &st) == 0;
			_astro_error("STARPU_PROF_TOOL names '%s', which is neither a tool plugin (available: %s) nor a library on the search path: %s; the program runs without it",
				     entry, names, here ? "it is in the current directory, write ./ before it" : "give the path of the tool's .so");
			g_free(names);
			return;
		}
		char *why = dlopen_failure(entry);
		if (why && strstr(why, "undefined symbol"))
			_astro_error("profiling tool %s (STARPU_PROF_TOOL) cannot be loaded: %s: link it against the libraries it needs; the program runs without it",
				     entry, why);
		else
			_astro_error("profiling tool %s (STARPU_PROF_TOOL) is not a loadable library: %s: give the path of the tool's .so; the program runs without it",
				     entry, why ? why : lt_dlerror());
		g_free(why);
		return;
	}
	/* The library stays loaded for the life of the process, like plugins: code may still point into it. */
	void *register_fn = lt_dlsym(handle, "starpu_prof_tool_library_register");
	if (!register_fn) {
		_astro_error("profiling tool %s (STARPU_PROF_TOOL) exports no starpu_prof_tool_library_register(): it is not a StarPU profiling tool; the program runs without it",
			     entry);
		return;
	}
	tool_start(entry, (starpu_prof_tool_entry_func)register_fn,
		   (astro_prof_tool_handshake_func)same_object(register_fn, lt_dlsym(handle, "astro_prof_tool_handshake")),
		   (astro_prof_tool_finalize_func)same_object(register_fn, lt_dlsym(handle, "astro_prof_tool_finalize")), false);
}

void _astro_prof_tool_load(void)
{
	starpu_pthread_mutex_lock(&tools_lock);
	__atomic_add_fetch(&session, 1, __ATOMIC_RELAXED);
	session_active = true;
	__atomic_store_n(&ext_wanted, false, __ATOMIC_RELAXED);
	garbage = g_ptr_array_new();
	tools = g_ptr_array_new();
	starpu_pthread_mutex_unlock(&tools_lock);

	if (!ltdl_ready) {
		if (lt_dlinit() != 0) {
			_astro_error("libltdl failed to initialise (%s): STARPU_PROF_TOOL libraries cannot be loaded", lt_dlerror());
			return;
		}
		ltdl_ready = true;
	}
	load_process_tool();
	const char *list = astro_env_names("STARPU_PROF_TOOL", ":", ASTRO_ENV_PATH_MAX, NULL);
	if (list && *list) {
		char **entries = _astro_parse_path_list(list, true);
		for (char **e = entries; *e; e++)
			load_named_tool(*e);
		g_strfreev(entries);
	}
	/* The kernel's init moment passed before any tool could be loaded: these two are fired here. */
	dispatch(starpu_prof_tool_event_init_begin, NULL);
	dispatch(starpu_prof_tool_event_init, NULL);
}

static void forget_provided(void)
{
	/* Plugins provide their tools again at the next starpu_init(). */
	starpu_pthread_mutex_lock(&tools_lock);
	if (provided)
		g_ptr_array_free(provided, TRUE);
	provided = NULL;
	starpu_pthread_mutex_unlock(&tools_lock);
}

void _astro_prof_tool_unload(void)
{
	if (!session_active) {
		forget_provided();
		return;
	}
	/* Workers have stopped: terminate is the last event, then each tool flushes. */
	dispatch(starpu_prof_tool_event_terminate, NULL);
	starpu_pthread_mutex_lock(&tools_lock);
	if (observer_id >= 0)
		astro_observe_unsubscribe(observer_id);
	observer_id = -1;
	session_active = false;
	GPtrArray *loaded = tools;
	tools = NULL;
	starpu_pthread_mutex_unlock(&tools_lock);

	for (guint i = 0; i < loaded->len; i++) {
		struct tool *t = g_ptr_array_index(loaded, i);
		if (t->finalize) {
			struct _astro_foreign_call tc;
			tool_call_enter(&tc, t->origin, "astro_prof_tool_finalize", (void *)t->finalize);
			t->finalize();
			_astro_foreign_leave_fn(&tc);
		}
		g_free(t->origin);
		g_free(t);
	}
	g_ptr_array_free(loaded, TRUE);

	starpu_pthread_mutex_lock(&tools_lock);
	for (int e = 0; e < NEVENTS; e++) {
		g_free(lists[e]);
		lists[e] = NULL;
	}
	for (guint i = 0; i < garbage->len; i++)
		g_free(g_ptr_array_index(garbage, i));
	g_ptr_array_free(garbage, TRUE);
	garbage = NULL;
	starpu_pthread_mutex_unlock(&tools_lock);
	forget_provided();
}

/* ------------------------------------------------------ application marks */

void starpu_prof_tool_user_start(const char *label)
{
	_ASTRO_OBSERVE(ASTRO_MOMENT_USER_BEGIN, .workerid = _astro_worker_id(), .label = label);
}

void starpu_prof_tool_user_end(const char *label)
{
	_ASTRO_OBSERVE(ASTRO_MOMENT_USER_END, .workerid = _astro_worker_id(), .label = label);
}
