/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Monte-Carlo estimate of pi: each task throws its share of darts at the unit
 * square and counts those inside the quarter disc. The work of a task is its
 * number of darts, which its data (one counter) does not tell: the model's
 * size_base gives it, so that the history-based model keeps one entry per
 * number of darts (the seed's examples/pi, size_base).
 *
 *   pi [-ntasks T] [-nshot S]    S darts in all, S / T per task
 */
#include <starpu.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct shots
{
	unsigned long n;	/* darts of this task */
	uint64_t seed;		/* its own random sequence */
};

/* xorshift64*: a fixed sequence per seed, the same on every worker. */
static double uniform(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return (double)((*s * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

static void throw_darts(void *buffers[], void *arg)
{
	struct shots s;
	starpu_codelet_unpack_args(arg, &s);
	unsigned long *inside = (unsigned long *)STARPU_VARIABLE_GET_PTR(buffers[0]);
	unsigned long count = 0;
	for (unsigned long i = 0; i < s.n; i++) {
		double x = uniform(&s.seed), y = uniform(&s.seed);
		count += x * x + y * y <= 1.0;
	}
	*inside = count;
}

/* The model's size: the darts the task throws (its counter's 8 bytes say nothing). */
static size_t darts(struct starpu_task *task, unsigned nimpl)
{
	(void)nimpl;
	struct shots s;
	starpu_codelet_unpack_args(task->cl_arg, &s);
	return s.n;
}

static struct starpu_perfmodel pi_model = {
	.type = STARPU_HISTORY_BASED,
	.symbol = "monte_carlo_pi",
	.size_base = darts,
};

static struct starpu_codelet pi_cl = {
	.cpu_funcs = { throw_darts },
	.cpu_funcs_name = { "throw_darts" },
	.nbuffers = 1,
	.modes = { STARPU_W },
	.model = &pi_model,
	.name = "pi",
};

static int count_option(const char *prog, int argc, char **argv, int *i, unsigned long *out)
{
	char *end;
	errno = 0;
	unsigned long v = *i + 1 < argc ? strtoul(argv[*i + 1], &end, 10) : 0;
	if (*i + 1 >= argc || errno || *end || end == argv[*i + 1] || v == 0) {
		fprintf(stderr, "%s: %s takes a positive integer\n", prog, argv[*i]);
		return -1;
	}
	*out = v;
	(*i)++;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long ntasks = 16, nshot = 1UL << 20;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-ntasks") || !strcmp(argv[i], "-nshot")) {
			if (count_option(argv[0], argc, argv, &i, !strcmp(argv[i], "-ntasks") ? &ntasks : &nshot))
				return 2;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			printf("usage: %s [-ntasks T] [-nshot S]\n", argv[0]);
			return 0;
		} else {
			fprintf(stderr, "%s: unknown option '%s' (usage: %s [-ntasks T] [-nshot S])\n", argv[0], argv[i], argv[0]);
			return 2;
		}
	}
	if (nshot < ntasks) {
		fprintf(stderr, "%s: -nshot %lu is fewer darts than -ntasks %lu: every task throws at least one\n", argv[0], nshot, ntasks);
		return 2;
	}
	int ret = starpu_init(NULL);
	if (ret == -ENODEV)
		return 77;
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_init");

	unsigned long *inside = calloc(ntasks, sizeof(*inside));
	starpu_data_handle_t *h = calloc(ntasks, sizeof(*h));
	if (!inside || !h) {
		fprintf(stderr, "%s: out of memory for %lu tasks\n", argv[0], ntasks);
		starpu_shutdown();
		return 1;
	}
	int status = 0;
	for (unsigned long t = 0; t < ntasks && status == 0; t++) {
		starpu_variable_data_register(&h[t], STARPU_MAIN_RAM, (uintptr_t)&inside[t], sizeof(inside[t]));
		struct shots s = { .n = nshot / ntasks + (t < nshot % ntasks), .seed = 0x9E3779B97F4A7C15ULL * (t + 1) };
		ret = starpu_task_insert(&pi_cl, STARPU_W, h[t], STARPU_VALUE, &s, sizeof(s), 0);
		if (ret) {
			fprintf(stderr, "%s: a task could not be submitted: %s\n", argv[0], strerror(-ret));
			status = ret == -ENODEV ? 77 : 1;
			starpu_data_unregister(h[t]);
			ntasks = t;
		}
	}
	starpu_task_wait_for_all();
	unsigned long total = 0;
	for (unsigned long t = 0; t < ntasks; t++) {
		starpu_data_unregister(h[t]);
		total += inside[t];
	}
	if (status == 0) {
		double pi = 4.0 * (double)total / (double)nshot;
		printf("Pi approximation : %f (%lu / %lu)\n", pi, total, nshot);
		printf("Error : %e\n", fabs(pi - M_PI));
	}
	free(inside);
	free(h);
	starpu_shutdown();
	return status;
}
