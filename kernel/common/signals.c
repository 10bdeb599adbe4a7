/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The runtime's signal handlers, as StarPU's STARPU_CATCH_SIGNALS: while they
 * are installed, SIGINT, SIGSEGV and SIGTRAP print one line naming the signal,
 * then the handler that was there before is put back and the signal raised
 * again, so the process ends (or goes on) as it would have without us. When
 * it comes while the thread is calling into a plugin or a tool
 * (_astro_foreign_enter()), or on the task path into a policy's hook, a
 * tool's callback or a codelet (_astro_site_enter()), the line names that
 * one instead.
 *
 * Installed at starpu_init() unless conf.catch_signals or STARPU_CATCH_SIGNALS
 * is 0, removed at starpu_shutdown(), switched by the knob
 * starpu.global.g_enable_catch_signal_knob. A signal the process ignores
 * (SIG_IGN, e.g. SIGINT under nohup) stays ignored.
 */
#define _GNU_SOURCE /* dladdr() */
#include "common/common.h"
#include <dlfcn.h>
#include <stdarg.h>
#include <signal.h>
#include <unistd.h>

static const struct
{
	int number;
	const char *name;
} caught[] = {
	{ SIGINT, "SIGINT" },
	{ SIGSEGV, "SIGSEGV" },
	{ SIGTRAP, "SIGTRAP" },
};
#define NCAUGHT (sizeof(caught) / sizeof(caught[0]))

_ASTRO_TLS const struct _astro_foreign_call *_astro_foreign_call;
size_t _astro_worker_site_offset;

void _astro_foreign_locate(struct _astro_foreign_call *call, void *fn, const char *fallback)
{
	Dl_info info;
	bool found = dladdr(fn, &info) && info.dli_fname && *info.dli_fname;
	call->file = found ? info.dli_fname : "the program";
	/* dladdr() gives the nearest exported symbol: it names fn only when it is fn. */
	call->symbol = found && info.dli_sname && info.dli_saddr == fn ? info.dli_sname : fallback;
}

void _astro_foreign_enter_fn(struct _astro_foreign_call *call, void *fn, const char *fallback, const char *advice,
			     const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *what = g_strdup_vprintf(fmt, ap);
	va_end(ap);
	*call = (struct _astro_foreign_call){ .what = what, .advice = advice, .owned_what = what };
	_astro_foreign_locate(call, fn, fallback);
	_astro_foreign_enter(call);
}

void _astro_foreign_leave_fn(struct _astro_foreign_call *call)
{
	_astro_foreign_leave(call);
	g_free(call->owned_what);
}

void _astro_site_format(struct _astro_foreign_call *site, char *buf, size_t size, void *fn, const char *fallback,
			const char *advice, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	*site = (struct _astro_foreign_call){ .what = buf, .advice = advice, .kind = _ASTRO_SITE_CALL };
	_astro_foreign_locate(site, fn, fallback);
}

static starpu_pthread_mutex_t signals_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static struct sigaction previous[NCAUGHT];
static volatile sig_atomic_t installed[NCAUGHT];
static int catching;                     /* the knob's value */

/* Appends s to the line being built in the handler (no stdio there: it is not async-signal-safe). */
static size_t append(char *line, size_t len, size_t size, const char *s)
{
	while (*s && len + 1 < size)
		line[len++] = *s++;
	return len;
}

static size_t append_unsigned(char *line, size_t len, size_t size, unsigned long v)
{
	char digits[24];
	unsigned n = 0;
	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) && n < sizeof(digits));
	while (n && len + 1 < size)
		line[len++] = digits[--n];
	return len;
}

static size_t append_int(char *line, size_t len, size_t size, int value)
{
	if (value < 0 && len + 1 < size)
		line[len++] = '-';
	return append_unsigned(line, len, size, value < 0 ? 0ul - (unsigned long)(long)value : (unsigned long)value);
}

/* The line for a fault in a codelet: its task's name, job and worker (the task is the thread's current one). */
static size_t append_codelet(char *line, size_t len, size_t size, const struct _astro_foreign_call *call)
{
	const struct starpu_task *task = _astro_current_task;
	const char *name = NULL;
	if (task) {
		name = task->name;
		if (!name && task->cl)
			name = task->cl->name ? task->cl->name : task->cl->model ? task->cl->model->symbol : NULL;
	}
	len = append(line, len, size, " in codelet '");
	len = append(line, len, size, name ? name : "(unnamed)");
	len = append(line, len, size, "'");
	if (task && task->starpu_private) {
		len = append(line, len, size, " (job ");
		len = append_unsigned(line, len, size, _astro_job_id_of(task));
		len = append(line, len, size, ")");
	}
	len = append(line, len, size, " on worker ");
	len = append(line, len, size, call->what);
	len = append(line, len, size, ": the codelet's code crashed, not the runtime; debug that function (gdb, valgrind)\n");
	return len;
}

static void on_signal(int sig)
{
	int saved_errno = errno;
	unsigned i = 0;
	while (i < NCAUGHT && caught[i].number != sig)
		i++;
	char line[1024];
	size_t len = 0;
	const struct _astro_foreign_call *call = _astro_foreign_call;
	if (!call && _astro_self && _astro_worker_site_offset)
		call = *(const struct _astro_foreign_call *const *)(const void *)((const char *)_astro_self + _astro_worker_site_offset);
	if (call && sig != SIGINT) {
		/* A fault inside a plugin, a tool or a codelet (SIGINT comes from outside): that one is to blame, say which. */
		len = append(line, len, sizeof(line), "[astrolabe] ");
		if (call->kind == _ASTRO_SITE_CODELET) {
			/* The program's own code: said as the runtime says a signal, with where it came. */
			len = append(line, len, sizeof(line), "caught signal ");
			len = append_int(line, len, sizeof(line), sig);
			len = append(line, len, sizeof(line), " (");
			len = append(line, len, sizeof(line), i < NCAUGHT ? caught[i].name : "?");
			len = append(line, len, sizeof(line), ")");
			len = append_codelet(line, len, sizeof(line), call);
		} else {
			len = append(line, len, sizeof(line), i < NCAUGHT ? caught[i].name : "signal");
			len = append(line, len, sizeof(line), " while calling ");
			len = append(line, len, sizeof(line), call->what);
			len = append(line, len, sizeof(line), " (");
			len = append(line, len, sizeof(line), call->file);
			len = append(line, len, sizeof(line), ", ");
			len = append(line, len, sizeof(line), call->symbol);
			len = append(line, len, sizeof(line), "): ");
			len = append(line, len, sizeof(line), call->advice);
			len = append(line, len, sizeof(line), "\n");
		}
	} else {
		len = append(line, len, sizeof(line), "[astrolabe] caught signal ");
		len = append_int(line, len, sizeof(line), sig);
		len = append(line, len, sizeof(line), " (");
		len = append(line, len, sizeof(line), i < NCAUGHT ? caught[i].name : "?");
		len = append(line, len, sizeof(line), "): passing it on to the handler installed before starpu_init()\n");
	}
	if (len + 1 == sizeof(line))
		line[len - 1] = '\n';
	ssize_t written = write(STDERR_FILENO, line, len);
	(void)written;
	if (i < NCAUGHT) {
		sigaction(sig, &previous[i], NULL);
		installed[i] = 0;
	}
	errno = saved_errno;
	/* Blocked until we return, then delivered to the handler just put back. */
	raise(sig);
}

int _astro_signals_catch(bool on)
{
	starpu_pthread_mutex_lock(&signals_lock);
	for (unsigned i = 0; i < NCAUGHT; i++) {
		int sig = caught[i].number;
		struct sigaction current;
		if (sigaction(sig, NULL, &current) != 0)
			continue;
		bool ours = !(current.sa_flags & SA_SIGINFO) && current.sa_handler == on_signal;
		if (on && !installed[i]) {
			if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN)
				continue;
			struct sigaction action;
			memset(&action, 0, sizeof(action));
			action.sa_handler = on_signal;
			sigemptyset(&action.sa_mask);
			/* SA_ONSTACK: a stack overflow still reaches us when an alternate stack exists. */
			action.sa_flags = SA_RESTART | SA_ONSTACK;
			if (sigaction(sig, &action, &previous[i]) == 0)
				installed[i] = 1;
		} else if (!on && installed[i]) {
			/* The application may have installed its own handler since: leave that one alone. */
			if (ours)
				sigaction(sig, &previous[i], NULL);
			installed[i] = 0;
		}
	}
	__atomic_store_n(&catching, on, __ATOMIC_RELAXED);
	starpu_pthread_mutex_unlock(&signals_lock);
	return 0;
}

int _astro_signals_caught(void)
{
	return __atomic_load_n(&catching, __ATOMIC_RELAXED);
}

void _astro_signals_init(void)
{
	int value = _astro_conf_int_in("STARPU_CATCH_SIGNALS", NULL, _astro_rt.conf.catch_signals, 0, 1, 1);
	/* On unless asked otherwise, as in StarPU. */
	_astro_signals_catch(value != 0);
}

void _astro_signals_shutdown(void)
{
	_astro_signals_catch(false);
}
