/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * starpu_lp2paje: a solved bound (starpu_bound_print_lp with dependencies) as
 * a Paje trace, one container per worker, for ViTE or pj_dump.
 *
 *   glpsol --lp bound.lp -o bound.sol && starpu_lp2paje bound.sol > paje.trace
 *   lp_solve bound.lp | starpu_lp2paje > paje.trace
 *
 * It reads the values of the variables t<job>s (start), t<job>e (end) and
 * t<job>w<worker> (the task's share of the worker) from either solver's
 * report: a line holding such a name, then its value as the next number (in
 * glpsol's report, a name too long for its column puts the rest of the line
 * on the next one). A task goes to the worker with the largest share.
 */
#include <starpu_config.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct task
{
	unsigned long job;
	double start, end;
	bool has_start, has_end;
	int worker;
	double share;
};

static struct task *tasks;
static size_t ntasks, capacity;
static int nworkers;

static struct task *task_of(unsigned long job)
{
	for (size_t i = ntasks; i-- > 0;)
		if (tasks[i].job == job)
			return &tasks[i];
	if (ntasks == capacity) {
		capacity = capacity ? capacity * 2 : 64;
		struct task *grown = realloc(tasks, capacity * sizeof(*tasks));
		if (!grown) {
			fprintf(stderr, "starpu_lp2paje: out of memory\n");
			exit(1);
		}
		tasks = grown;
	}
	tasks[ntasks] = (struct task){ .job = job, .worker = -1 };
	return &tasks[ntasks++];
}

/* Parses t<job>s, t<job>e or t<job>w<worker>: returns the letter ('s', 'e', 'w'), 0 for another name. */
static char variable(const char *tok, unsigned long *job, int *worker)
{
	char *end;
	if (tok[0] != 't' || tok[1] < '0' || tok[1] > '9')
		return 0;
	*job = strtoul(tok + 1, &end, 10);
	if ((end[0] == 's' || end[0] == 'e') && end[1] == '\0')
		return end[0];
	if (end[0] == 'w' && end[1] >= '0' && end[1] <= '9') {
		char *wend;
		long w = strtol(end + 1, &wend, 10);
		if (*wend == '\0' && w >= 0 && w < 4096) {
			*worker = (int)w;
			return 'w';
		}
	}
	return 0;
}

static bool number(const char *tok, double *value)
{
	char *end;
	errno = 0;
	*value = strtod(tok, &end);
	return end != tok && *end == '\0' && errno == 0;
}

static void assign(char what, unsigned long job, int worker, double value)
{
	struct task *t = task_of(job);
	if (what == 's') {
		t->start = value;
		t->has_start = true;
	} else if (what == 'e') {
		t->end = value;
		t->has_end = true;
	} else if (value > t->share) {
		t->share = value;
		t->worker = worker;
	}
	if (what == 'w' && worker + 1 > nworkers)
		nworkers = worker + 1;
}

static void read_solution(FILE *in)
{
	char line[4096];
	char pending = 0;	/* a name whose value is on the next line */
	unsigned long job = 0;
	int worker = -1;
	while (fgets(line, sizeof(line), in)) {
		char *save = NULL;
		for (char *tok = strtok_r(line, " \t\r\n", &save); tok; tok = strtok_r(NULL, " \t\r\n", &save)) {
			double value;
			if (pending) {
				if (number(tok, &value)) {
					assign(pending, job, worker, value);
					pending = 0;
					break;
				}
				continue;
			}
			pending = variable(tok, &job, &worker);
		}
	}
}

static int by_time(const void *a, const void *b)
{
	const double *x = a, *y = b;
	/* time, then ends (kind 0) before starts (kind 1) at the same time */
	return x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : (x[1] > y[1]) - (x[1] < y[1]);
}

static void write_paje(void)
{
	static const char header[] =
		"%EventDef PajeDefineContainerType 1\n%\tAlias string\n%\tType string\n%\tName string\n%EndEventDef\n"
		"%EventDef PajeDefineStateType 2\n%\tAlias string\n%\tType string\n%\tName string\n%EndEventDef\n"
		"%EventDef PajeDefineEntityValue 3\n%\tAlias string\n%\tType string\n%\tName string\n%\tColor color\n%EndEventDef\n"
		"%EventDef PajeCreateContainer 4\n%\tTime date\n%\tAlias string\n%\tType string\n%\tContainer string\n%\tName string\n%EndEventDef\n"
		"%EventDef PajeDestroyContainer 5\n%\tTime date\n%\tType string\n%\tName string\n%EndEventDef\n"
		"%EventDef PajeSetState 6\n%\tTime date\n%\tType string\n%\tContainer string\n%\tValue string\n%EndEventDef\n";
	fputs(header, stdout);
	printf("1 W 0 Worker\n2 S W \"Worker State\"\n3 F S Idle \"1.0 0.0 0.0\"\n");
	double last = 0;
	size_t nevents = 0;
	double *events = malloc(sizeof(double) * 4 * (ntasks * 2 + 1));	/* time, kind, worker, task index */
	for (size_t i = 0; i < ntasks; i++) {
		struct task *t = &tasks[i];
		if (!t->has_start || !t->has_end || t->worker < 0)
			continue;
		printf("3 Rt%lu S Running_t%lu \"0.0 1.0 0.0\"\n", t->job, t->job);
		double start[4] = { t->start, 1, t->worker, (double)i }, end[4] = { t->end, 0, t->worker, (double)i };
		memcpy(events + 4 * nevents++, start, sizeof(start));
		memcpy(events + 4 * nevents++, end, sizeof(end));
		if (t->end > last)
			last = t->end;
	}
	for (int w = 0; w < nworkers; w++)
		printf("4 0 W%d W 0 \"Worker %d\"\n6 0 S W%d F\n", w, w, w);
	qsort(events, nevents, sizeof(double) * 4, by_time);
	for (size_t e = 0; e < nevents; e++) {
		const double *ev = events + 4 * e;
		if (ev[1] == 1)
			printf("6 %.9f S W%d Rt%lu\n", ev[0], (int)ev[2], tasks[(size_t)ev[3]].job);
		else
			printf("6 %.9f S W%d F\n", ev[0], (int)ev[2]);
	}
	for (int w = 0; w < nworkers; w++)
		printf("5 %.9f W W%d\n", last, w);
	free(events);
}

int main(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("Usage: %s [SOLUTION...]\n"
		       "Turns the solution of the program starpu_bound_print_lp() wrote (recorded with dependencies)\n"
		       "into a Paje trace on stdout. SOLUTION: glpsol's report (glpsol --lp bound.lp -o SOLUTION)\n"
		       "or lp_solve's output; stdin when none is given.\n\n"
		       "  -h, --help     display this help and exit\n"
		       "  -v, --version  output version information and exit\n", "starpu_lp2paje");
		return 0;
	}
	if (argc > 1 && (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--version"))) {
		printf("starpu_lp2paje (Astrolabe, StarPU %d.%d.%d API)\n", STARPU_MAJOR_VERSION, STARPU_MINOR_VERSION, STARPU_RELEASE_VERSION);
		return 0;
	}
	if (argc == 1)
		read_solution(stdin);
	for (int i = 1; i < argc; i++) {
		FILE *in = fopen(argv[i], "r");
		if (!in) {
			fprintf(stderr, "starpu_lp2paje: cannot open %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
		read_solution(in);
		fclose(in);
	}
	size_t scheduled = 0;
	for (size_t i = 0; i < ntasks; i++)
		scheduled += tasks[i].has_start && tasks[i].has_end && tasks[i].worker >= 0;
	if (!scheduled) {
		fprintf(stderr, "starpu_lp2paje: the solution gives no task a start, an end and a worker (variables t<job>s, t<job>e, "
				"t<job>w<worker>): solve a program recorded with dependencies (starpu_bound_start(1, prio)) and pass "
				"the solver's report (glpsol -o FILE, or lp_solve's output)\n");
		free(tasks);
		return 1;
	}
	write_paje();
	free(tasks);
	return 0;
}
