/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A simulation build's main() (configure --enable-simgrid): starpu.h renames
 * the program's main() to starpu_main() (starpu_simgrid_wrap.h); this one
 * loads the simulated machine, STARPU_HOSTNAME's platform file in the sampling
 * folder, and runs starpu_main() in it as the actor "main". Each actor runs on
 * a system thread of its own (SimGrid's "thread" contexts), so that the
 * kernel's thread-locals stay per thread.
 */
#include "common/common.h"
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <xbt/log.h>

/* The simulated machine's description: <sampling>/bus/<host>.platform.v4.xml, or .platform.xml. */
static bool platform_path(char *path, size_t len, char *host, size_t hostlen)
{
	char dir[PATH_MAX - 300];
	_astro_sampling_dir(dir, sizeof(dir));
	_astro_host_name(host, hostlen);
	static const char *const suffixes[] = { "platform.v4.xml", "platform.xml" };
	for (unsigned i = 0; i < 2; i++) {
		snprintf(path, len, "%s/bus/%s.%s", dir, host, suffixes[i]);
		if (access(path, R_OK) == 0)
			return true;
	}
	return false;
}

struct main_call
{
	int argc;
	char **argv;
	int ret;
};

extern int starpu_main(int argc, char **argv) __attribute__((weak));

static void main_actor(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	struct main_call *call = sg_actor_self_get_data();
	call->ret = starpu_main(call->argc, call->argv);
}

int main(int argc, char **argv)
{
	if (!starpu_main) {
		fprintf(stderr, "[astrolabe] simulation: this program has no starpu_main(): include <starpu.h> in the file that "
			"defines main(), which it renames so that the simulation runs it\n");
		return 1;
	}
	xbt_log_control_set("xbt_cfg.thres:warning");
	/* Each actor on a system thread of its own, so that the kernel's thread-locals stay per thread:
	 * set before SimGrid reads its options, which may still override it. */
	char **args = calloc((size_t)argc + 2, sizeof(char *));
	if (!args)
		return 1;
	args[0] = argv[0];
	args[1] = (char *)"--cfg=contexts/factory:thread";
	for (int i = 1; i < argc; i++)
		args[i + 1] = argv[i];
	int nargs = argc + 1;
	simgrid_init(&nargs, args);
	argc = nargs;
	argv = args;
	char path[PATH_MAX], host[256];
	if (!platform_path(path, sizeof(path), host, sizeof(host))) {
		char dir[PATH_MAX - 300];
		_astro_sampling_dir(dir, sizeof(dir));
		fprintf(stderr, "[astrolabe] simulation: no description of the machine '%s' in %s/bus (%s.platform.xml): "
			"set STARPU_HOSTNAME to a described machine and STARPU_PERF_MODEL_DIR to its sampling folder "
			"(those shipped: %s), or run the program natively on that machine first to record it\n",
			host, dir, host, ASTRO_SIMGRID_DATA_DIR);
		return 1;
	}
	simgrid_load_platform(path);
	sg_host_t where = sg_host_by_name("MAIN");
	if (!where)
		where = sg_host_list()[0];
	struct main_call call = { argc, argv, 0 };
	sg_actor_t actor = sg_actor_init("main", where);
	sg_actor_set_data(actor, &call);
	sg_actor_start(actor, main_actor, 0, NULL);
	simgrid_run();
	return call.ret;
}
