/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * comms.rec: StarPU's record of the StarPU-MPI messages (GNU recutils, one
 * record per message: source and destination ranks, tag, send and receive
 * dates in ms, handles, size), written through the trace format API
 * (astrolabe/trace_format.h) from the messages the converter matched when
 * several archives are converted together; empty for a single archive, as
 * StarPU's. Built into the converter.
 */
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include "builtin_formats.h"
#include "format_common.h"

static void *comms_rec_begin(const struct astro_trace_format_options *options)
{
	return trace_format_open(options, "comms.rec");
}

static void comms_rec_message(void *state, const struct astro_trace_message *m)
{
	fprintf(state,
		"Src: %d\nDst: %d\nTag: %" PRIu64 "\nSendTime: %.9f\nRecvTime: %.9f\nSendHandle: 0x%" PRIx64 "\nRecvHandle: 0x%" PRIx64
		"\nSize: %" PRIu64 "\nPriority: 0\nType: PointToPoint\n\n",
		m->src, m->dst, m->tag, (double)m->send_date / 1e6, (double)m->recorded_recv_date / 1e6, m->send_handle, m->recv_handle,
		m->size);
}

static int comms_rec_end(void *state)
{
	return trace_format_close(state);
}

const struct astro_trace_format trace_comms_rec_format = {
	.abi_version = ASTRO_TRACE_FORMAT_ABI_VERSION,
	.name = "comms_rec",
	.description = "comms.rec: StarPU's record of the StarPU-MPI messages (recutils), of several archives converted together",
	.begin = comms_rec_begin,
	.message = comms_rec_message,
	.end = comms_rec_end,
};
