/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where the runtime keeps what it measured (common/paths.h): the sampling
 * directory of performance models and bus figures, and the host name their
 * files carry.
 */
#include "common/common.h"
#include <string.h>
#include <unistd.h>

const char *_astro_home_dir(void)
{
	static const char *const vars[] = { "XDG_CACHE_HOME", "STARPU_HOME", "HOME", "TMPDIR", "TEMP", "TMP" };
	for (unsigned i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = astro_env_string(vars[i], ASTRO_ENV_PATH_MAX, NULL);
		if (v && v[0])
			return v;
	}
	return "/tmp";
}

void _astro_host_name(char *host, size_t len)
{
	static int warned;
	const char *v = astro_env_string("STARPU_HOSTNAME", ASTRO_ENV_NAME_MAX, NULL);
	/* The name ends file names of the sampling directory: a '/' or a ".." would write them outside it. */
	bool unsafe = v && (strchr(v, '/') || strstr(v, ".."));
	if (v && v[0] && !unsafe) {
		snprintf(host, len, "%s", v);
		return;
	}
	if (gethostname(host, len) != 0)
		snprintf(host, len, "unknown");
	host[len - 1] = '\0';
	char *dot = strchr(host, '.');
	if (dot)
		*dot = '\0';
	if (unsafe && !__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		_astro_warn("STARPU_HOSTNAME=%s holds a '/' or '..': model and bus files would be written outside the sampling "
			    "directory; using the host name %s instead (set STARPU_HOSTNAME to a plain name)", v, host);
}

void _astro_sampling_dir(char *path, size_t len)
{
	const char *dir = astro_env_string("STARPU_PERF_MODEL_DIR", ASTRO_ENV_PATH_MAX, NULL);
	if (dir && dir[0])
		snprintf(path, len, "%s", dir);
	else
		snprintf(path, len, "%s/.starpu/sampling", _astro_home_dir());
}
