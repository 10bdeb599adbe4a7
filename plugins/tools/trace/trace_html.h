/* trace.html: the animation of the task flow between the components of a modular scheduler (trace_html.c). */
#ifndef __ASTRO_TRACE_HTML_H__
#define __ASTRO_TRACE_HTML_H__

#include <stdint.h>
#include <stdio.h>

struct trace_html;

/** Starts trace.html in f (kept open by the caller): its head, then the steps as they come. */
struct trace_html *trace_html_begin(FILE *f);
/** Component id (unique in the conversion) is named name; worker >= 0 for a worker component. */
void trace_html_component(struct trace_html *h, uint64_t id, const char *name, int worker);
/** Component child is below component parent. */
void trace_html_connect(struct trace_html *h, uint64_t parent, uint64_t child);
/** At date ms, job goes from component from into component to (0: the policy, for a task it pushes or gets back); pull: to took it. */
void trace_html_move(struct trace_html *h, double ms, const char *job, uint64_t from, uint64_t to, int pull);
/** At date ms, worker takes job out of the tree (its worker component), to run it. */
void trace_html_pop(struct trace_html *h, double ms, const char *job, int worker);
/** Writes the components and the player, and frees h. */
void trace_html_end(struct trace_html *h);

#endif
