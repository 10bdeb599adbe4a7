/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The registry of the trace converter's output formats
 * (astrolabe/trace_format.h): the trace plugin's public API half. It is
 * built as libapi.la and linked into libastrolabe in every build, OTF2 or
 * not, so that a format plugin's init finds astro_trace_format_register()
 * both in starpu_fxt_tool (a program linked with libastrolabe) and in an
 * application converting at starpu_shutdown() (STARPU_GENERATE_TRACE=1);
 * the kernel's loader loads the format_* plugins for it. Formats stay
 * registered for the process: the converter may run several times (one per
 * starpu_shutdown()).
 */
#include "core/core.h"
#include <astrolabe/trace_format.h>

struct registered_format
{
	const struct astro_trace_format *format;
	char *origin; /* the plugin's file, or "built in" */
};

static starpu_pthread_mutex_t formats_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static GPtrArray *formats; /* struct registered_format, registration order; never shrinks */

static bool valid_name(const char *name)
{
	if (!name || !*name)
		return false;
	for (const char *s = name; *s; s++)
		if (!g_ascii_isalnum(*s) && *s != '_' && *s != '-')
			return false;
	return true;
}

int astro_trace_format_register(const struct astro_trace_format *format)
{
	char *from = _astro_plugin_initialising(false);
	const char *who = from ? from : "astro_trace_format_register()";
	int ret = 0;
	if (!format || format->abi_version != ASTRO_TRACE_FORMAT_ABI_VERSION) {
		_astro_error("trace format %s%s%s(%s) was built for trace-format ABI %u, this converter speaks ABI %u: rebuild it; it is ignored",
			     format && format->name ? "'" : "", format && format->name ? format->name : "", format && format->name ? "' " : "",
			     who, format ? format->abi_version : 0, ASTRO_TRACE_FORMAT_ABI_VERSION);
		ret = -EINVAL;
	} else if (!valid_name(format->name)) {
		_astro_error("a trace format of %s has %s%s%s: name it (struct astro_trace_format's name) with letters, digits, '_' and '-'; it is ignored",
			     who, format->name ? "the name '" : "no name", format->name ? format->name : "", format->name ? "'" : "");
		ret = -EINVAL;
	} else if (!format->begin || !format->end) {
		_astro_error("trace format '%s' (%s) has no %s: a format needs begin and end; it is ignored", format->name, who,
			     format->begin ? "end" : "begin");
		ret = -EINVAL;
	}
	if (ret) {
		g_free(_astro_plugin_initialising(true));
		g_free(from);
		return ret;
	}
	starpu_pthread_mutex_lock(&formats_lock);
	if (!formats)
		formats = g_ptr_array_new();
	for (guint i = 0; i < formats->len; i++) {
		const struct registered_format *r = g_ptr_array_index(formats, i);
		if (r->format == format)
			break; /* the same, again (a built-in format at each conversion): nothing to do */
		if (strcmp(r->format->name, format->name) == 0) {
			starpu_pthread_mutex_unlock(&formats_lock);
			_astro_error("trace format '%s' of %s is registered already (%s): the second one is ignored; rename one of them",
				     format->name, who, r->origin);
			g_free(_astro_plugin_initialising(true));
			g_free(from);
			return -EEXIST;
		}
	}
	bool known = false;
	for (guint i = 0; i < formats->len; i++)
		known |= ((const struct registered_format *)g_ptr_array_index(formats, i))->format == format;
	if (!known) {
		struct registered_format *r = g_new(struct registered_format, 1);
		r->format = format;
		r->origin = from ? g_strndup(strstr(from, " (") + 2, strlen(strstr(from, " (") + 2) - 1) : g_strdup("built in"); /* the path alone */
		g_ptr_array_add(formats, r);
	}
	starpu_pthread_mutex_unlock(&formats_lock);
	if (!known)
		_astro_verbose("  trace format %s: %s", format->name, format->description ? format->description : "");
	g_free(from);
	return 0;
}

int astro_trace_formats_load(void)
{
	_astro_format_plugins_load();
	starpu_pthread_mutex_lock(&formats_lock);
	int n = formats ? (int)formats->len : 0;
	starpu_pthread_mutex_unlock(&formats_lock);
	return n;
}

static const struct registered_format *nth(unsigned n)
{
	starpu_pthread_mutex_lock(&formats_lock);
	const struct registered_format *r = formats && n < formats->len ? g_ptr_array_index(formats, n) : NULL;
	starpu_pthread_mutex_unlock(&formats_lock);
	return r;
}

const struct astro_trace_format *astro_trace_format_nth(unsigned n)
{
	const struct registered_format *r = nth(n);
	return r ? r->format : NULL;
}

const char *astro_trace_format_origin(unsigned n)
{
	const struct registered_format *r = nth(n);
	return r ? r->origin : NULL;
}
