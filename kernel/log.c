/* Runtime messages: one line each, on stderr, prefixed so users can grep them. */
#include "kernel.h"
#include <stdarg.h>

int _astro_verbose_level;

static void vlog(const char *prefix, const char *fmt, va_list ap)
{
	char line[1024];
	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "[astrolabe] %s%s\n", prefix, line);
}

void _astro_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vlog("error: ", fmt, ap);
	va_end(ap);
}

void _astro_warn(const char *fmt, ...)
{
	va_list ap;
	if (getenv("STARPU_SILENT") && atoi(getenv("STARPU_SILENT")) > 0)
		return;
	va_start(ap, fmt);
	vlog("warning: ", fmt, ap);
	va_end(ap);
}

void _astro_verbose(const char *fmt, ...)
{
	va_list ap;
	if (!_astro_verbose_level)
		return;
	va_start(ap, fmt);
	vlog("", fmt, ap);
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
