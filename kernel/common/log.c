/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Runtime messages: one line each, on stderr, prefixed so users can grep them.
 *
 * Between starpu_init() and starpu_shutdown(), an error or a warning identical
 * to one already printed is not printed again: the same mistake made by every
 * task would flood stderr. Its repeats are counted, and starpu_shutdown() says
 * each repeated message once more with "(repeated N times)", N being the lines
 * left out. Only error paths come here, so a mutex and a hash table are fine;
 * past MAX_TRACKED distinct messages, new ones are printed every time, which
 * bounds the memory.
 */
#include "common/common.h"
#include <stdarg.h>

int _astro_verbose_level;

#define MAX_TRACKED 256

struct printed
{
	char *line;
	unsigned long repeats;
};

static starpu_pthread_mutex_t printed_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static GHashTable *printed;		/* line -> struct printed; NULL outside a session */
static GPtrArray *printed_order;	/* struct printed, in the order they were first printed */

void _astro_log_session_begin(void)
{
	starpu_pthread_mutex_lock(&printed_lock);
	if (!printed) {
		printed = g_hash_table_new(g_str_hash, g_str_equal);
		printed_order = g_ptr_array_new();
	}
	starpu_pthread_mutex_unlock(&printed_lock);
}

void _astro_log_session_end(void)
{
	starpu_pthread_mutex_lock(&printed_lock);
	GHashTable *table = printed;
	GPtrArray *order = printed_order;
	printed = NULL;
	printed_order = NULL;
	for (guint i = 0; order && i < order->len; i++) {
		struct printed *p = g_ptr_array_index(order, i);
		if (p->repeats)
			fprintf(stderr, "%s (repeated %lu time%s)\n", p->line, p->repeats, p->repeats > 1 ? "s" : "");
		g_free(p->line);
		g_free(p);
	}
	starpu_pthread_mutex_unlock(&printed_lock);
	if (table)
		g_hash_table_destroy(table);
	if (order)
		g_ptr_array_free(order, TRUE);
}

/* Prints line unless it is a repeat within the session, which is counted instead. */
static void print_once(const char *line)
{
	starpu_pthread_mutex_lock(&printed_lock);
	struct printed *p = printed ? g_hash_table_lookup(printed, line) : NULL;
	if (p) {
		p->repeats++;
	} else {
		if (printed && g_hash_table_size(printed) < MAX_TRACKED) {
			p = g_new0(struct printed, 1);
			p->line = g_strdup(line);
			g_hash_table_insert(printed, p->line, p);
			g_ptr_array_add(printed_order, p);
		}
		fprintf(stderr, "%s\n", line);
	}
	starpu_pthread_mutex_unlock(&printed_lock);
}

static void vlog(const char *prefix, bool once, const char *fmt, va_list ap)
{
	char line[1024];
	int n = snprintf(line, sizeof(line), "[astrolabe] %s", prefix);
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	if (once)
		print_once(line);
	else
		fprintf(stderr, "%s\n", line);
}

void _astro_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog("error: ", true, fmt, ap);
	va_end(ap);
}

void _astro_warn(const char *fmt, ...)
{
	va_list ap;
	if (astro_env_int("STARPU_SILENT", 0, 1, 0, NULL) > 0)
		return;
	va_start(ap, fmt);
	vlog("warning: ", true, fmt, ap);
	va_end(ap);
}

void _astro_verbose(const char *fmt, ...)
{
	va_list ap;
	if (!_astro_verbose_level)
		return;
	va_start(ap, fmt);
	vlog("", false, fmt, ap);
	va_end(ap);
}

void astro_log_error(const char *what, const char *fmt, ...)
{
	char msg[900];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	_astro_error("%s: %s", what, msg);
}

void astro_log_info(const char *what, const char *fmt, ...)
{
	char msg[900];
	va_list ap;
	if (!_astro_verbose_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	_astro_verbose("%s: %s", what, msg);
}
