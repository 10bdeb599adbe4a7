/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hettime: libmeasure's tool. Runs a program and reports its time (real,
 * user, system) and the energy and average power of each resource measured
 * meanwhile, all through the libms_common interface (ms_measurement.h).
 * Astrolabe's libms_common is libms_common_apapi (APAPI over PAPI), which
 * hettime is linked with; "LD_PRELOAD=.../libms_common_apapi.so hettime"
 * as APAPI's documentation writes it names that same library.
 *
 * Options are libmeasure hettime's: -e EXECUTABLE -a "ARGS", the sampling
 * intervals in ms (-c CPU, -g GPU, -f FPGA, -m MIC, -s SYSTEM), -o and -v
 * for the result and CSV files, -C/-G/-L/-H passed to ms_init() (which
 * only measures and says so). Astrolabe's additions: the program may also
 * follow the options (hettime [options] program [args]); --help, --version.
 */
#include "ms_measurement.h"

#include <astrolabe/thread.h>
#include <starpu_config.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEFAULT_RATE_MS 100u

struct settings
{
	char **argv;           /* the program and its arguments */
	char **split;          /* -e and -a's words, owned */
	const char *ostream_file, *csv_file;
	unsigned rate_ms[5];   /* CPU, GPU, FPGA, MIC, SYSTEM */
	enum cpu_governor cpu_gov;
	enum gpu_frequency gpu_freq;
	uint64_t cpu_freq_min, cpu_freq_max;
};

static const struct
{
	char option;
	int flag;
	const char *name;
	unsigned recommended_ms;
} rates[5] = {
	{ 'c', CPU, "CPU", 20 }, { 'g', GPU, "GPU", 30 }, { 'f', FPGA, "FPGA", 50 }, { 'm', MIC, "MIC", 20 }, { 's', SYSTEM, "System", 100 },
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: hettime [options] -e EXECUTABLE [-a \"ARGS\"]\n"
		"  or:  hettime [options] PROGRAM [ARGS...]\n"
		"Runs a program and reports its time and the energy and average power of each resource\n"
		"(CPU, GPU, FPGA, MIC, SYSTEM) measured meanwhile through libms_common, here\n"
		"libms_common_apapi: PAPI's rapl, nvml, maxeler, micknc and ipmi components, as\n"
		"APAPI_CMPLIST chooses among them.\n"
		"  -e EXECUTABLE   the program to run\n"
		"  -a \"ARGS\"       its arguments, separated by spaces (after -e)\n"
		"  -c MS           CPU sampling interval in ms (default %u, recommended at least 20)\n"
		"  -g MS           GPU sampling interval in ms (default %u, recommended at least 30)\n"
		"  -f MS           FPGA sampling interval in ms (default %u, recommended at least 50)\n"
		"  -m MS           MIC sampling interval in ms (default %u, recommended at least 20)\n"
		"  -s MS           system sampling interval in ms (default %u, recommended at least 100)\n"
		"  -o FILE         append the results to FILE instead of printing them\n"
		"  -v FILE         append the results to the CSV table FILE (a header line when it is new)\n"
		"  -C GOVERNOR     libmeasure's CPU governor (save, dmnd, cons, perf): this library only\n"
		"                  measures and leaves it as the machine has it (said)\n"
		"  -G FREQUENCY    likewise the GPU frequency (min, cur, max)\n"
		"  -L MHZ, -H MHZ  likewise the lowest and highest CPU frequencies\n"
		"  -h, -?, --help  display this help and exit\n"
		"  --version       output version information and exit\n"
		"Exit status: 0 when the program succeeded, 1 when it failed or could not run, 2 for a bad option.\n"
		"Environment: APAPI_CMPLIST (a subset of rapl:nvml:maxeler:micknc:ipmi), APAPI_EVENTLIST,\n"
		"  APAPI_EVENTOPS, APAPI_VERBOSE, APAPI_SOFTFAIL, as for atime.\n",
		DEFAULT_RATE_MS, DEFAULT_RATE_MS, DEFAULT_RATE_MS, DEFAULT_RATE_MS, DEFAULT_RATE_MS);
}

static int bad(const char *fmt, const char *arg)
{
	fprintf(stderr, "hettime: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (hettime --help lists the options)\n");
	return 2;
}

static int parse_ms(const char *arg, unsigned *ms)
{
	char *end;
	errno = 0;
	unsigned long v = strtoul(arg, &end, 10);
	if (!isdigit((unsigned char)*arg) || *end || errno || v == 0 || v > 3600000ul)
		return -1;
	*ms = (unsigned)v;
	return 0;
}

/* One of words (index = the enum value), or -1. */
static int word_index(const char *arg, const char *const *words, int n)
{
	for (int i = 0; i < n; i++)
		if (strcasecmp(arg, words[i]) == 0)
			return i;
	return -1;
}

/* argv of -e and -a: the executable then ARGS split at spaces. */
static char **split_args(const char *exe, const char *args)
{
	size_t n = 1, cap = 8;
	char **v = malloc(cap * sizeof(*v));
	char *copy = args ? strdup(args) : NULL, *save = NULL;
	if (!v || (args && !copy)) {
		free(v);
		free(copy);
		return NULL;
	}
	v[0] = strdup(exe);
	for (char *w = copy ? strtok_r(copy, " \t", &save) : NULL; w; w = strtok_r(NULL, " \t", &save)) {
		if (n + 2 > cap) {
			char **grown = realloc(v, (cap *= 2) * sizeof(*v));
			if (!grown)
				break;
			v = grown;
		}
		v[n++] = strdup(w);
	}
	v[n] = NULL;
	free(copy);
	return v;
}

static void free_split(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

static int parse(int argc, char **argv, struct settings *st)
{
	static const char *const govs[] = { "save", "dmnd", "cons", "perf" };
	static const char *const govs_long[] = { "powersave", "ondemand", "conservative", "performance" };
	static const char *const freqs[] = { "min", "cur", "max" };
	static const char *const freqs_long[] = { "minimum", "current", "maximum" };
	const char *exe = NULL, *args = NULL;
	memset(st, 0, sizeof(*st));
	st->cpu_gov = CPU_GOVERNOR_ONDEMAND;
	st->gpu_freq = GPU_FREQUENCY_CUR;
	for (int i = 0; i < 5; i++)
		st->rate_ms[i] = DEFAULT_RATE_MS;
	int opt;
	opterr = 0;
	/* optopt stays 0 for -?, which getopt returns as it returns an unknown option. */
	while ((optopt = 0, opt = getopt(argc, argv, "+h?c:g:f:m:s:e:a:G:C:L:H:o:v:ui")) != -1) {
		int k;
		switch (opt) {
		case 'e': exe = optarg; break;
		case 'a':
			if (!exe)
				return bad("-a '%s' must come after -e EXECUTABLE", optarg);
			args = optarg;
			break;
		case 'c': case 'g': case 'f': case 'm': case 's':
			for (k = 0; rates[k].option != opt; k++)
				;
			if (parse_ms(optarg, &st->rate_ms[k]))
				return bad("the sampling interval '%s' is not a number of milliseconds (1 to 3600000)", optarg);
			break;
		case 'C':
			if ((k = word_index(optarg, govs, 4)) < 0 && (k = word_index(optarg, govs_long, 4)) < 0)
				return bad("unknown CPU governor '%s': give save, dmnd, cons or perf", optarg);
			st->cpu_gov = (enum cpu_governor)k;
			break;
		case 'G':
			if ((k = word_index(optarg, freqs, 3)) < 0 && (k = word_index(optarg, freqs_long, 3)) < 0)
				return bad("unknown GPU frequency '%s': give min, cur or max", optarg);
			st->gpu_freq = (enum gpu_frequency)k;
			break;
		case 'L': case 'H': {
			unsigned mhz;
			if (parse_ms(optarg, &mhz))
				return bad("the CPU frequency '%s' is not a number of MHz", optarg);
			*(opt == 'L' ? &st->cpu_freq_min : &st->cpu_freq_max) = (uint64_t)mhz * 1000;
			break;
		}
		case 'o': st->ostream_file = optarg; break;
		case 'v': st->csv_file = optarg; break;
		case 'u':
			return bad("%s: libmeasure's -u talks to msmonitor, which Astrolabe does not have", "-u");
		case 'i':
			return bad("%s: libmeasure's -i idles a Maxeler FPGA; this library only measures", "-i");
		case 'h':
			usage(stdout);
			return 1;
		default:
			if (optopt == 0 || optopt == '?') {
				usage(stdout);
				return 1;
			}
			if (strchr("cgfmseaGCLHov", optopt)) {
				char o[3] = { '-', (char)optopt, 0 };
				return bad("option %s needs a value", o);
			}
			{
				char o[3] = { '-', (char)optopt, 0 };
				return bad("unknown option %s", o);
			}
		}
	}
	if (exe && optind < argc)
		return bad("give the program either with -e or after the options, not both ('%s')", argv[optind]);
	if (exe) {
		st->split = split_args(exe, args);
		if (!st->split)
			return bad("%s", "out of memory");
		st->argv = st->split;
	} else if (optind < argc) {
		st->argv = argv + optind;
	} else {
		fprintf(stderr, "hettime: no program to run: give -e EXECUTABLE or the program after the options\n");
		usage(stderr);
		return 2;
	}
	for (int i = 0; i < 5; i++)
		if (st->rate_ms[i] < rates[i].recommended_ms)
			fprintf(stderr, "hettime: warning: %s sampling interval should be at least %u ms\n", rates[i].name,
				rates[i].recommended_ms);
	return 0;
}

static double seconds(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec / 1e6;
}

struct times
{
	double real, user, sys;
	int status;
};

/* The values of one line: a label, then the value and unit, or an empty CSV field when not measured. */
struct result
{
	const char *label, *csv;
	double value;
	const char *unit;
	int measured;
};

static size_t results_of(MS_SYSTEM *ms, MS_LIST *m, struct result *r)
{
	static const char *const pkg[CPUS][6] = {
		{ "CPU 0 package energy", "cpu0_pkg_energy_Ws", "CPU 0 package power", "cpu0_pkg_power_W", "CPU 0 DRAM energy", "cpu0_dram_energy_Ws" },
		{ "CPU 1 package energy", "cpu1_pkg_energy_Ws", "CPU 1 package power", "cpu1_pkg_power_W", "CPU 1 DRAM energy", "cpu1_dram_energy_Ws" },
	};
	size_t n = 0;
	const MS_CONFIG *c = ms->config;
#define ADD(lbl, col, val, u, on) r[n++] = (struct result){ lbl, col, (on) ? (val) : 0.0, u, on }
	for (int p = 0; p < CPUS; p++) {
		ADD(pkg[p][0], pkg[p][1], cpu_energy_total_pkg(m, p), "Ws", c->cpu_enabled);
		ADD(pkg[p][2], pkg[p][3], cpu_power_avg_pkg(m, p), "W", c->cpu_enabled);
		ADD(pkg[p][4], pkg[p][5], cpu_energy_total_dram(m, p), "Ws", c->cpu_enabled);
	}
	ADD("GPU energy", "gpu_energy_Ws", gpu_energy_total(m), "Ws", c->gpu_enabled);
	ADD("GPU power", "gpu_power_W", gpu_power_avg(m), "W", c->gpu_enabled);
	ADD("FPGA energy", "fpga_energy_Ws", fpga_energy_total_power_usage(m), "Ws", c->fpga_enabled);
	ADD("FPGA power", "fpga_power_W", fpga_power_avg_power_usage(m), "W", c->fpga_enabled);
	ADD("MIC energy", "mic_energy_Ws", mic_energy_total_power_usage(m), "Ws", c->mic_enabled);
	ADD("MIC power", "mic_power_W", mic_power_avg_power_usage(m), "W", c->mic_enabled);
	ADD("System energy", "sys_energy_Ws", system_energy_total(m), "Ws", c->sys_enabled);
	ADD("System power", "sys_power_W", system_power_avg(m), "W", c->sys_enabled);
#undef ADD
	return n;
}

static void print_results(FILE *out, const struct settings *st, const struct times *t, const struct result *r, size_t n)
{
	fprintf(out, "hettime results\n");
	fprintf(out, "  %-22s %s\n", "executable", st->argv[0]);
	if (WIFEXITED(t->status))
		fprintf(out, "  %-22s %d\n", "exit status", WEXITSTATUS(t->status));
	else
		fprintf(out, "  %-22s %d\n", "killed by signal", WTERMSIG(t->status));
	fprintf(out, "  %-22s %.6f s\n", "real time", t->real);
	fprintf(out, "  %-22s %.6f s\n", "user time", t->user);
	fprintf(out, "  %-22s %.6f s\n", "system time", t->sys);
	for (size_t i = 0; i < n; i++)
		if (r[i].measured)
			fprintf(out, "  %-22s %.6f %s\n", r[i].label, r[i].value, r[i].unit);
}

static int write_csv(const char *path, const struct settings *st, const struct times *t, const struct result *r, size_t n)
{
	FILE *f = fopen(path, "a");
	if (!f) {
		fprintf(stderr, "hettime: cannot write the CSV file %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (ftell(f) == 0) {
		fputs("executable,exit_status,real_time_s,user_time_s,system_time_s", f);
		for (size_t i = 0; i < n; i++)
			fprintf(f, ",%s", r[i].csv);
		fputc('\n', f);
	}
	/* The executable quoted as CSV wants it. */
	fputc('"', f);
	for (const char *p = st->argv[0]; *p; p++)
		fprintf(f, *p == '"' ? "\"\"" : "%c", *p);
	fprintf(f, "\",%d,%.6f,%.6f,%.6f", WIFEXITED(t->status) ? WEXITSTATUS(t->status) : 128 + WTERMSIG(t->status), t->real,
		t->user, t->sys);
	for (size_t i = 0; i < n; i++) {
		if (r[i].measured)
			fprintf(f, ",%.6f", r[i].value);
		else
			fputc(',', f);
	}
	fputc('\n', f);
	int err = ferror(f);
	if (fclose(f) || err) {
		fprintf(stderr, "hettime: cannot write the CSV file %s\n", path);
		return -1;
	}
	return 0;
}

/* Runs the program between start and stop; returns -1 when it cannot be started. */
static int run_program(const struct settings *st, MS_SYSTEM *ms, struct times *t)
{
	int go[2];
	if (pipe(go)) {
		fprintf(stderr, "hettime: cannot start %s: %s\n", st->argv[0], strerror(errno));
		return -1;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "hettime: cannot start %s: %s\n", st->argv[0], strerror(errno));
		return -1;
	}
	if (pid == 0) {
		char c;
		close(go[1]);
		/* Started once the measurement is. */
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		close(go[0]);
		execvp(st->argv[0], st->argv);
		fprintf(stderr, "hettime: cannot run %s: %s\n", st->argv[0], strerror(errno));
		_exit(127);
	}
	close(go[0]);
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	ms_start_measurement(ms);
	uint64_t t0 = astro_clock_monotonic_ns();
	close(go[1]);
	struct rusage ru;
	memset(&ru, 0, sizeof(ru));
	while (wait4(pid, &t->status, 0, &ru) < 0 && errno == EINTR)
		;
	uint64_t t1 = astro_clock_monotonic_ns();
	ms_stop_measurement(ms);
	ms_join_measurement(ms);
	t->real = (double)(t1 - t0) / 1e9;
	t->user = seconds(&ru.ru_utime);
	t->sys = seconds(&ru.ru_stime);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return 0;
	}
	if (argc > 1 && strcmp(argv[1], "--version") == 0) {
		printf("hettime (Astrolabe, StarPU %d.%d.%d API; libms_common %s interface over APAPI)\n", STARPU_MAJOR_VERSION,
		       STARPU_MINOR_VERSION, STARPU_RELEASE_VERSION, MS_VERSION_STRING);
		return 0;
	}
	struct settings st;
	int ret = parse(argc, argv, &st);
	if (ret)
		return ret == 1 ? 0 : 2;

	MS_VERSION version = { MS_MAJOR_VERSION, MS_MINOR_VERSION, MS_REVISION_VERSION };
	MS_SYSTEM *ms = ms_init(&version, st.cpu_gov, st.cpu_freq_min, st.cpu_freq_max, st.gpu_freq, IPMI_SET_TIMEOUT,
				SKIP_PERIODIC, VARIANT_FULL);
	if (!ms) {
		free_split(st.split);
		return 1;
	}
	MS_LIST *m = ms_alloc_measurement(ms);
	for (int i = 0; i < 5; i++)
		ms_set_timer(m, rates[i].flag, st.rate_ms[i] / 1000, (uint64_t)(st.rate_ms[i] % 1000) * 1000000u, 10);
	ms_init_measurement(ms, m, ALL);

	struct times t = { 0 };
	int status = 1;
	if (run_program(&st, ms, &t) == 0) {
		struct result r[3 * CPUS + 8];
		size_t n = results_of(ms, m, r);
		FILE *out = stdout;
		if (st.ostream_file && !(out = fopen(st.ostream_file, "a")))
			fprintf(stderr, "hettime: cannot write the results to %s: %s\n", st.ostream_file, strerror(errno));
		if (out) {
			print_results(out, &st, &t, r, n);
			if (out != stdout)
				fclose(out);
		}
		int written = st.csv_file ? write_csv(st.csv_file, &st, &t, r, n) : 0;
		status = WIFEXITED(t.status) && WEXITSTATUS(t.status) == 0 && out && written == 0 ? 0 : 1;
	}
	ms_fini_measurement(ms);
	ms_free_measurement(m);
	ms_fini(ms);
	free_split(st.split);
	return status;
}
