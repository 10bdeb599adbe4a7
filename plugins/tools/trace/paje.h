/* paje.trace, StarPU's Pajé trace, as a trace format built into the converter (paje.c), and its writers' shared word. */
#ifndef __ASTRO_TRACE_PAJE_H__
#define __ASTRO_TRACE_PAJE_H__

#include <stdio.h>
#include <astrolabe/trace_format.h>

/** The format "paje": paje.trace (-o NAME), from the converter's stream. */
extern const struct astro_trace_format trace_paje_format;

/** Writes s as one word of paje.trace: quoted when empty or holding a space, a TAB or a quote (then made '). */
void paje_word(FILE *f, const char *s);

#endif
