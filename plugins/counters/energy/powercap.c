/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Linux powercap zones through sysfs: every intel-rapl:N zone (a package,
 * named "package-K", or the platform, "psys") and its intel-rapl:N:M
 * sub-zones ("core", "uncore", "dram"). Only intel-rapl zones are read:
 * intel-rapl-mmio repeats the packages' energy.
 */
#include "powercap.h"
#include <astrolabe/env.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CLASS "class/powercap"

const char *powercap_sysfs_root(void)
{
	const char *root = astro_env_string("ASTROLABE_SYSFS_ROOT", ASTRO_ENV_PATH_MAX, NULL);
	return root && *root ? root : "/sys";
}

/* Reads the first line of path into buf, without its newline: 0 or a negative errno. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -errno;
	int ret = fgets(buf, (int)len, f) ? 0 : -EIO;
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return ret;
}

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(s, &end, 10);
	if (end == s || errno || (*end && *end != '\n'))
		return -EINVAL;
	*v = x;
	return 0;
}

int powercap_read(const struct powercap *pc, unsigned z, uint64_t *raw)
{
	if (pc->zones[z].fd < 0)
		return papi_rapl_read(pc->zones[z].papi_index, raw);
	char buf[32];
	ssize_t n = pread(pc->zones[z].fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return n < 0 ? -errno : -EIO;
	buf[n] = '\0';
	return parse_u64(buf, raw);
}

/* "intel-rapl:N" (sub = -1) or "intel-rapl:N:M": 0, or -1 for any other name. */
static int zone_index(const char *name, int *top, int *sub)
{
	int end = 0;
	*sub = -1;
	if (sscanf(name, "intel-rapl:%d%n", top, &end) == 1 && name[end] == '\0')
		return 0;
	end = 0;
	if (sscanf(name, "intel-rapl:%d:%d%n", top, sub, &end) == 2 && name[end] == '\0')
		return 0;
	return -1;
}

/* Opens zone dir (top-level zone top, sub-zone sub or -1); 1 when added, else 0 with the reason noted. */
static int add_zone(struct powercap *pc, const char *root, const char *dir, int top, int sub, char *why, size_t whylen)
{
	char path[4096], name[64], parent[64] = "";
	snprintf(path, sizeof(path), "%s/" CLASS "/%s/name", root, dir);
	if (read_line(path, name, sizeof(name)))
		return 0;
	if (sub >= 0) {
		snprintf(path, sizeof(path), "%s/" CLASS "/intel-rapl:%d/name", root, top);
		if (read_line(path, parent, sizeof(parent)))
			return 0;
	}
	const char *package_name = sub >= 0 ? parent : name;
	int package = -1, end = 0;
	if (sscanf(package_name, "package-%d%n", &package, &end) != 1 || package_name[end] != '\0')
		package = -1;
	if (pc->nzones == ASTRO_ENERGY_MAX_ZONES) {
		snprintf(why, whylen, "more than %d zones: %s is not read", ASTRO_ENERGY_MAX_ZONES, dir);
		return 0;
	}
	struct powercap_zone *z = &pc->zones[pc->nzones];
	memset(z, 0, sizeof(*z));
	if (sub >= 0)
		snprintf(z->name, sizeof(z->name), "%s.%s", parent, name);
	else
		snprintf(z->name, sizeof(z->name), "%s", name);
	z->package = package;
	z->in_package = package >= 0 && (sub < 0 || strcmp(name, "dram") == 0);
	char range[32];
	snprintf(path, sizeof(path), "%s/" CLASS "/%s/max_energy_range_uj", root, dir);
	if (read_line(path, range, sizeof(range)) || parse_u64(range, &z->range))
		z->range = 0;
	z->per_joule = 1e6;
	snprintf(path, sizeof(path), "%s/" CLASS "/%s/energy_uj", root, dir);
	z->fd = open(path, O_RDONLY | O_CLOEXEC);
	uint64_t raw;
	int err = z->fd < 0 ? -errno : 0;
	if (!err && (err = powercap_read(pc, pc->nzones, &raw)) != 0)
		close(z->fd);
	if (err) {
		snprintf(why, whylen, "%s/" CLASS "/%s/energy_uj cannot be read (%s%s)", root, dir, strerror(-err),
			 err == -EACCES || err == -EPERM ? ": since Linux 5.10 only root may read it" : "");
		return 0;
	}
	pc->nzones++;
	return 1;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

unsigned powercap_open(struct powercap *pc, const char *root, char *why, size_t whylen)
{
	memset(pc, 0, sizeof(*pc));
	char path[4096];
	snprintf(path, sizeof(path), "%s/" CLASS, root);
	snprintf(why, whylen, "%s has no intel-rapl zone", path);
	struct dirent **entries;
	int n = scandir(path, &entries, NULL, by_name);
	if (n < 0) {
		snprintf(why, whylen, "there is no %s (%s)", path, strerror(errno));
		return 0;
	}
	for (int i = 0; i < n; i++) {
		int top, sub;
		if (zone_index(entries[i]->d_name, &top, &sub) == 0)
			add_zone(pc, root, entries[i]->d_name, top, sub, why, whylen);
		free(entries[i]);
	}
	free(entries);
	return pc->nzones;
}

void powercap_close(struct powercap *pc)
{
	int papi = 0;
	for (unsigned z = 0; z < pc->nzones; z++) {
		if (pc->zones[z].fd >= 0)
			close(pc->zones[z].fd);
		papi |= pc->zones[z].fd < 0;
	}
	if (papi)
		papi_rapl_close();
	pc->nzones = 0;
}

int powercap_cpu_package(const char *root, int cpu)
{
	char path[4096], line[32];
	uint64_t id;
	snprintf(path, sizeof(path), "%s/devices/system/cpu/cpu%d/topology/physical_package_id", root, cpu);
	if (cpu < 0 || read_line(path, line, sizeof(line)) || parse_u64(line, &id) || id > 4096)
		return -1;
	return (int)id;
}
