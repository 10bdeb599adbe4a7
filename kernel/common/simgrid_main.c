/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A simulation build's main() (configure --enable-simgrid): starpu.h renames
 * the program's main() to starpu_main() (starpu_simgrid_wrap.h); this one
 * loads the simulated machine, STARPU_HOSTNAME's platform file in the sampling
 * folder, and runs starpu_main() in it as the actor "main". Each actor runs on
 * a system thread of its own (SimGrid's "thread" contexts), so that the
 * kernel's thread-locals stay per thread.
 */
#include "common/simgrid.h"
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>
#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <xbt/log.h>

/* The simulated machine's description in the sampling folder dir: bus/<host>.platform.v4.xml, or .platform.xml. */
static bool platform_path(const char *dir, const char *host, char *path, size_t len)
{
	static const char *const suffixes[] = { "platform.v4.xml", "platform.xml" };
	for (unsigned i = 0; i < 2; i++) {
		snprintf(path, len, "%s/bus/%s.%s", dir, host, suffixes[i]);
		if (access(path, R_OK) == 0)
			return true;
	}
	return false;
}

extern int starpu_main(int argc, char **argv) __attribute__((weak));

int main(int argc, char **argv)
{
	if (!starpu_main) {
		fprintf(stderr, "[astrolabe] simulation: this program has no starpu_main(): include <starpu.h> in the file that "
			"defines main(), which it renames so that the simulation runs it\n");
		return 1;
	}
	/* smpirun calls main() in each rank's actor: the simulation, and its platform, are SMPI's. */
	if (sg_actor_self())
		return _astro_sim_run_rank(starpu_main, argc, argv);
	xbt_log_control_set("xbt_cfg.thres:warning");
	simgrid_init(&argc, argv);
	char dir[PATH_MAX - 300], host[256], path[PATH_MAX];
	_astro_sampling_dir(dir, sizeof(dir));
	_astro_host_name(host, sizeof(host));
	if (!platform_path(dir, host, path, sizeof(path))) {
		fprintf(stderr, "[astrolabe] simulation: no description of the machine '%s' in %s/bus (%s.platform.xml): "
			"set STARPU_HOSTNAME to a described machine and STARPU_PERF_MODEL_DIR to its sampling folder "
			"(those shipped: %s), or run the program natively on that machine first to record it\n",
			host, dir, host, ASTRO_SIMGRID_DATA_DIR);
		return 1;
	}
	simgrid_load_platform(path);
	return _astro_sim_run_main(starpu_main, argc, argv, "MAIN");
}
