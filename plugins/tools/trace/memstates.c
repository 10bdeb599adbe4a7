/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * starpu_fxt_tool -memory-states: what StarPU 1.4 adds to paje.trace with
 * that option (the project's notes on traces, 1.2, 1.4 and 1.8): the
 * definition of event 22, the memory managers' event types, and on each
 * memory manager (Mm) the MSI state changes of the handles' copies (SI, SS,
 * SO), starpu_data_wont_use (WU), and event 22 lines with the details of
 * allocations, frees, write-backs, copies and requests: Value, Handle (hex),
 * Info, Size and, in StarPU's "Tid" field, the other memory manager.
 * Fields are separated by one TAB as everywhere in this writer (StarPU's
 * spaces read the same for pj_dump and ViTE).
 */
#include <inttypes.h>
#include "memstates.h"

const char *const memstates_event_def[] = {
	"PajeNewEvent 22", "Time date", "Type string", "Container string", "Value string", "Handle string", "Info string",
	"Size string", "Tid string", NULL,
};

void memstates_event_types(FILE *f)
{
	static const char *const types[][2] = {
		{ "SI", "data state invalid" }, { "SS", "data state shared" }, { "SO", "data state owner" },
		{ "WU", "data wont use" }, { "Al", "Allocating Start" }, { "rc", "Request Created" },
		{ "AlE", "Allocating End" }, { "Alr", "Allocating Async Start" }, { "AlrE", "Allocating Async End" },
		{ "Fe", "Free Start" }, { "FeE", "Free End" }, { "Wb", "WritingBack Start" }, { "WbE", "WritingBack End" },
		{ "DCo", "DriverCopy Start" }, { "DCoE", "DriverCopy End" }, { "DCoA", "DriverCopyAsync Start" },
		{ "DCoAE", "DriverCopyAsync End" },
	};
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		fprintf(f, "2\t%s\tMm\t\"%s\"\t\"1.0 1.0 1.0\"\n", types[i][0], types[i][1]);
}

void memstates_event(FILE *f, double date_ms, const char *pre, unsigned node, const char *what, uint64_t value,
		     uint64_t handle, uint64_t info, int64_t size, unsigned other)
{
	fprintf(f, "22\t%.9f\t%s\t%smm%u\t%" PRIx64 "\t%" PRIx64 "\t%" PRIu64 "\t%" PRId64 "\t%smm%u\n", date_ms, what, pre, node,
		value, handle, info, size, pre, other);
}

void memstates_data_state(FILE *f, double date_ms, const char *pre, unsigned node, unsigned state, uint64_t handle)
{
	static const char *const msi[] = { "SI", "SS", "SO" };
	if (state < 3)
		fprintf(f, "9\t%.9f\t%s\t%smm%u\t%" PRIx64 "\n", date_ms, msi[state], pre, node, handle);
}

void memstates_wont_use(FILE *f, double date_ms, const char *pre, uint64_t handle)
{
	fprintf(f, "9\t%.9f\tWU\t%smm0\t%" PRIx64 "\n", date_ms, pre, handle);
}
