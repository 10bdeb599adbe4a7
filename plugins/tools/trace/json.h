/* trace.json, the Chrome / Perfetto trace-event format: a format of the converter built into it (json.c). */
#ifndef __ASTRO_TRACE_JSON_H__
#define __ASTRO_TRACE_JSON_H__

#include <stdio.h>
#include <astrolabe/trace_format.h>

extern const struct astro_trace_format trace_json_format;

/** s as a JSON string, quotes included ('<' escaped too, so that it may sit in an HTML script). */
void trace_json_string(FILE *f, const char *s);

#endif
