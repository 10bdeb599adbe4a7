/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * starpu_sched_display: the scheduling policies STARPU_SCHED can name, one a
 * line, as StarPU's prints them. Here the policies are plugins: the runtime
 * is started (one CPU worker, no device probed) so that it loads them, and
 * the list is read before it stops.
 */
#include <starpu.h>
#include "tool_options.h"
#include <starpu_scheduler.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROGNAME "starpu_sched_display"

static void usage(FILE *out)
{
	fprintf(out, "Display the scheduling policies STARPU_SCHED can name, one a line.\n\n"
		     "Usage: %s [OPTION]\n\n"
		     "Options:\n"
		     "  -h, --help       display this help and exit\n"
		     "  -v, --version    output version information and exit\n"
		     "  -l, --long       also display what each policy does (as STARPU_SCHED=help)\n",
		PROGNAME);
}

int main(int argc, char **argv)
{
	int described;
	int status = tool_options(argc, argv, PROGNAME, usage, 'l', "long", &described);
	if (status >= 0)
		return status;

	/* The least runtime that loads the policy plugins: one CPU worker, whatever the environment says. */
	struct starpu_conf conf;
	starpu_conf_init(&conf);
	conf.ncpus = 1;
	conf.ncuda = 0;
	conf.nopencl = 0;
	conf.sched_policy_name = "lws"; /* the default: STARPU_SCHED=help or a wrong name would print here */
	conf.precedence_over_environment_variables = 1;
	int ret = starpu_init(&conf);
	if (ret != 0) {
		fprintf(stderr, "%s: starpu_init failed (%s): check STARPU_PLUGIN_PATH\n", PROGNAME, strerror(-ret));
		return EXIT_FAILURE;
	}
	for (struct starpu_sched_policy **p = starpu_sched_get_predefined_policies(); *p; p++) {
		if (described)
			printf("%-20s\t-> %s\n", (*p)->policy_name, (*p)->policy_description ? (*p)->policy_description : "");
		else
			printf("%s\n", (*p)->policy_name);
	}
	starpu_shutdown();
	return EXIT_SUCCESS;
}
