/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The sampler's model (the APAPI model): what one sampled event keeps and how
 * its values and statistics are computed, the event-list and event-operation
 * files, and the timer thread that samples components at their intervals.
 * Free of the runtime, so the plugin, atime and the tests share it.
 *
 * Per event, each sample gives a raw value. The last two raw values give
 * value0: for an accumulating event (maximal raw value not 0) their
 * difference, corrected when the counter wrapped at its maximal value; else
 * the last raw value (a counter as wide as 63 or 64 bits is taken to have
 * restarted from 0 when it goes down: it cannot wrap in a run's lifetime).
 * The last two value0 and their times give value1 with
 * the event's APAPI_OP1_* operation. Statistics (min, max, time-weighted
 * average, accumulated sum) are kept on value0 and value1 as the event's
 * APAPI_STAT_* flags ask. Times are in nanoseconds.
 */
#ifndef __ASTRO_SAMPLER_APAPI_MODEL_H__
#define __ASTRO_SAMPLER_APAPI_MODEL_H__

#include "apapi.h"

#include <astrolabe/thread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The operations (enum APAPI_op1) and the statistics flags (enum APAPI_stats)
 * are APAPI's public ones (apapi.h): APAPI_OP1_NOP gives no value1. */

/** The name of op ("APAPI_OP1_..."), or NULL. */
const char *apapi_op1_name(enum APAPI_op1 op);

/** One line of an event-operation file: how an event is computed and printed. */
struct apapi_eventop
{
	char *name;
	enum APAPI_op1 op1;
	unsigned stats[2];       /**< APAPI_STAT_* flags for value0, value1 */
	uint64_t max_raw;        /**< maximal raw value of an accumulating event; 0: not accumulating */
	char *type[2];           /**< names of what value0, value1 are */
	char *unit[2];
	double factor[2];        /**< a value is printed as value / factor, in unit */
};

/** A list of event operations, as read from files. */
struct apapi_eventops
{
	struct apapi_eventop *ops;
	unsigned n;
};

/** The operation named name in ops, or NULL. */
const struct apapi_eventop *apapi_eventops_find(const struct apapi_eventops *ops, const char *name);
/**
 * Reads the event-operation file path into ops (appended; a later definition
 * of a name replaces the earlier). Every malformed line is reported with its
 * line number and skipped. Returns the number of malformed lines, or a
 * negative errno (with a message) when the file cannot be read.
 */
int apapi_eventops_read(const char *path, struct apapi_eventops *ops);
/**
 * Parses one event definition, 11 fields separated by delimiter, in place:
 * op's strings point into line. A malformed line is said (origin:lineno:
 * what is wrong) and gives -1; else 0.
 */
int apapi_eventop_parse(char *line, char delimiter, const char *origin, unsigned lineno, struct apapi_eventop *op);
/** The text of file path (malloc'ed, NUL-terminated; *size its length when size is not NULL), or NULL with errno set and a message. */
char *apapi_read_text(const char *path, size_t *size);
/**
 * Cuts text into lines in place and calls take(line, origin, lineno, arg)
 * for each line that is neither empty nor a comment ('#'), its line break
 * (and carriage return) cut. Returns the sum of what take returned.
 */
int apapi_for_each_line(char *text, const char *origin, int (*take)(char *line, const char *origin, unsigned lineno, void *arg),
			void *arg);
void apapi_eventops_clear(struct apapi_eventops *ops);
/** Copies src into dst (strings duplicated); apapi_eventop_clear() frees dst's. */
void apapi_eventop_copy(struct apapi_eventop *dst, const struct apapi_eventop *src);
void apapi_eventop_clear(struct apapi_eventop *op);

/** Event names, as read from event-list files. */
struct apapi_eventlist
{
	char **names;
	unsigned n;
};

/**
 * Reads the event-list file path into list (appended, duplicates dropped).
 * A line with whitespace inside is reported with its line number and skipped. Returns the number of malformed
 * lines, or a negative errno (with a message).
 */
int apapi_eventlist_read(const char *path, struct apapi_eventlist *list);
void apapi_eventlist_clear(struct apapi_eventlist *list);
/** PAPI's CPU component: the one of event names without "component:::" (PAPI_TOT_INS, perf::...). */
#define APAPI_CPU_COMPONENT "perf_event"
/** Whether name belongs to component cmp ("cmp:::...", or APAPI_CPU_COMPONENT for a name without component). */
int apapi_event_in_component(const char *name, const char *cmp);

/** A raw value: an integer count, or a floating value for floating events. */
union apapi_raw
{
	uint64_t u;
	double d;
};

struct apapi_stats
{
	double min, max, acc;
	double weighted;         /**< sum of value * period */
	double period;           /**< sum of periods (ns) */
	uint64_t count;
};

/** The time-weighted average of s (0 without any value). */
double apapi_stats_avg(const struct apapi_stats *s);

/** One sampled event. */
struct apapi_event
{
	struct apapi_eventop op;
	int floating;            /**< raw values are doubles */
	union apapi_raw raw[2];  /**< the last two raw values: [1] is the last */
	uint64_t raw_time[2];
	unsigned nraw;           /**< raw values seen (saturates at 2) */
	double value0[2];        /**< the last two value0: [1] is the last */
	uint64_t value0_time[2];
	unsigned nvalue0;
	double value1;           /**< the last value1 (valid once nvalue0 is 2) */
	struct apapi_stats stats[2]; /**< of value0, value1 */
};

/** Prepares e for op (copied). */
void apapi_event_init(struct apapi_event *e, const struct apapi_eventop *op, int floating);
void apapi_event_clear(struct apapi_event *e);
/** Takes the raw value read at time_ns: updates value0, value1 and the statistics. */
void apapi_event_sample(struct apapi_event *e, union apapi_raw raw, uint64_t time_ns);
/** Forgets e's values and statistics (its definition kept): the next sample is a first one. */
void apapi_event_restart(struct apapi_event *e);
/** value0 from the last two raw values of an accumulating integer event, the wrap at max corrected. */
uint64_t apapi_raw_diff(uint64_t previous, uint64_t last, uint64_t max_raw);

/* ------------------------------------------------------------ sampling */

struct apapi_component;

/** Reads the current raw values of c's events, in order, into raw. Returns 0 or a negative errno. */
typedef int (*apapi_read_fn)(struct apapi_component *c, union apapi_raw *raw);
/** Called after each sample of c (last: 1 for the one taken at the stop), lock not held. */
typedef void (*apapi_sampled_fn)(struct apapi_component *c, int last, void *arg);

/** A set of events sampled together at one interval. */
struct apapi_component
{
	char *name;
	uint64_t interval_ns;
	struct apapi_event *events;
	unsigned nevents;
	apapi_read_fn read;
	void *arg;               /**< the source's own state */
	apapi_sampled_fn sampled; /**< NULL, or called after each sample, even of a component without events */
	void *sampled_arg;
	/* Sampling state, guarded by the sampler's lock. */
	union apapi_raw *scratch;
	uint64_t next_ns;        /**< the next deadline: start + k * interval */
	uint64_t deadline_ns;    /**< the deadline the sample being taken answers (read() may look): start_ns
				  *   for the start's, 0 for the stop's (off the schedule) */
	uint64_t nsamples;
	uint64_t nscheduled;     /**< samples taken for a deadline of the schedule (neither the start's nor the stop's) */
	uint64_t nlate;          /**< of them, taken more than a tenth of the interval after their deadline */
	uint64_t nmissed;        /**< deadlines skipped: the timer thread woke up too late for them */
};

/**
 * The timer's schedule, free of any clock: a component whose next deadline
 * is *next woke up at now (not before *next). Its sample answers the latest
 * deadline of the schedule (start + k * interval) not after now, returned;
 * the deadlines before it that no sample answered are missed (added to
 * *missed); *next becomes the first deadline after now. However late the
 * wake-ups, the deadlines stay on the schedule: it never drifts.
 */
uint64_t apapi_schedule_advance(uint64_t *next, uint64_t interval, uint64_t now, uint64_t *missed);

/**
 * The scheduling the timer thread asks for (ASTROLABE_SAMPLER_PRIORITY), so
 * that it wakes up at its deadlines on a loaded machine: a real-time policy
 * (SCHED_FIFO, SCHED_RR) with its priority, or a nice value.
 */
struct apapi_priority
{
	int asked;               /**< 0: the thread keeps the process's scheduling */
	int policy;              /**< SCHED_FIFO, SCHED_RR, or SCHED_OTHER for a nice value */
	int level;               /**< the real-time priority (1..99) or the nice value (-20..19) */
};

/** The environment variable apapi_priority_parse() is meant for. */
#define APAPI_PRIORITY_ENV "ASTROLABE_SAMPLER_PRIORITY"

/**
 * Parses spec ("fifo", "fifo:N", "rr", "rr:N" with N in 1..99, default 1;
 * "nice:N" with N in -20..19; NULL, "" or "default": nothing asked) into p.
 * Returns 0, or -EINVAL with one message naming the accepted forms.
 */
int apapi_priority_parse(const char *spec, struct apapi_priority *p);

/** The components and the timer thread that samples them. */
struct apapi_sampler
{
	struct apapi_component **components;
	unsigned ncomponents;
	starpu_pthread_mutex_t lock;    /**< guards the events' values and the state below */
	starpu_pthread_cond_t cond;
	starpu_pthread_t thread;
	int running, stopping;
	uint64_t start_ns, stop_ns;
	/** Set before apapi_sampler_start(): the timer thread's scheduling. */
	struct apapi_priority priority;
	/** Once apapi_sampler_start() returned: 0 when the priority asked for was
	 *  given (or none was asked), else the errno that refused it (said once). */
	int priority_error;
	/** Set before apapi_sampler_start(): the timer thread's timer slack, how
	 *  late the kernel may end its waits to group wake-ups (PR_SET_TIMERSLACK).
	 *  apapi_sampler_init() sets 1 ns, the finest; 0 keeps the slack the
	 *  thread inherits (50 us by default). */
	unsigned long timer_slack_ns;
	pid_t thread_id;         /**< the timer thread's kernel id, once started */
	int skip_last;           /**< set before stopping: no last sample (APAPI_destroy_timer's interruption) */
	int thread_ready;        /**< guarded by lock */
};

/** The timer thread's name (top -H, /proc/PID/task/TID/comm). */
#define APAPI_THREAD_NAME "astro-sampler"

/** The monotonic clock, in nanoseconds. */
uint64_t apapi_now_ns(void);

/** Adds component name to s, read by read (arg: its own state); NULL when out of memory. */
struct apapi_component *apapi_sampler_add(struct apapi_sampler *s, const char *name, uint64_t interval_ns,
					  apapi_read_fn read, void *arg);
/** A component of no sampler yet (apapi_sampler_attach()); NULL when out of memory. */
struct apapi_component *apapi_component_new(const char *name, uint64_t interval_ns, apapi_read_fn read, void *arg);
/** Frees c and its events. */
void apapi_component_free(struct apapi_component *c);
/** Adds c to s (s owns it from then on). Returns 0 or -ENOMEM. */
int apapi_sampler_attach(struct apapi_sampler *s, struct apapi_component *c);
/** Adds an event to c (before the sampler starts). */
int apapi_component_add_event(struct apapi_component *c, const struct apapi_eventop *op, int floating);

void apapi_sampler_init(struct apapi_sampler *s);
/** Takes a first sample of every component, then starts the timer thread that samples each at its interval. Returns 0 or -errno. */
int apapi_sampler_start(struct apapi_sampler *s);
/** Takes a last sample of every component and stops the thread (apapi_sampler_join()). */
void apapi_sampler_stop(struct apapi_sampler *s);
/** Asks the timer thread to take its last samples and end, without waiting for it (libms_common's ms_stop_measurement). */
void apapi_sampler_request_stop(struct apapi_sampler *s);
/** Asks the timer thread to stop (if not yet) and waits for it (libms_common's ms_join_measurement); stop_ns is then set. */
void apapi_sampler_join(struct apapi_sampler *s);
/** Frees the components (the sampler stopped). */
void apapi_sampler_clear(struct apapi_sampler *s);

/**
 * Parses intervals "cmp:ns:cmp:ns..." or a bare "ns" for every component (atime's -t) and returns the interval
 * of cmp, or fallback when not given. *bad is set to 1 when spec is malformed.
 */
uint64_t apapi_interval_for(const char *spec, const char *cmp, uint64_t fallback, int *bad);
/** Checks an interval specification; returns 0, or -EINVAL with a message. */
int apapi_intervals_check(const char *spec);

/** Whether statistic stat (0 min, 1 max, 2 avg, 3 acc) of value (0, 1) of ev is asked for and has a value. */
int apapi_stat_shown(const struct apapi_event *ev, int value, int stat);
/** That statistic as printed: divided by the value's factor (0 without any value). */
double apapi_stat_printed(const struct apapi_event *ev, int value, int stat);
/** Prints the statistics of every event as a table (locks s), then, once
 *  the timer ran, how many of its deadlines were sampled within 10% of their
 *  interval (what remains are late or skipped ones: a loaded machine). */
void apapi_sampler_print_table(struct apapi_sampler *s, FILE *out);
/** Writes the statistics as CSV with a header line (locks s). Returns 0 or -errno. */
int apapi_sampler_write_csv(struct apapi_sampler *s, FILE *out);

/* -------------------------------------------------------- configuration */

/** Components used when APAPI_CMPLIST is not set: APAPI's, PAPI's Linux powercap, the runtime's own counters. */
#define APAPI_DEFAULT_CMPLIST "rapl:powercap:nvml:maxeler:micknc:ipmi:astrolabe"
/** Interval of a component that the intervals do not name: 100 ms. */
#define APAPI_DEFAULT_INTERVAL_NS 100000000u

/** What the environment and the files ask for. */
struct apapi_config
{
	struct apapi_eventlist user_list;    /**< APAPI_EVENTLIST */
	struct apapi_eventlist default_list; /**< default_eventlist.txt */
	struct apapi_eventops ops;           /**< default_eventops.txt, then APAPI_EVENTOPS over it */
	char **components;                   /**< APAPI_CMPLIST, or the default list */
	unsigned ncomponents;
	int verbose;                         /**< APAPI_VERBOSE */
	int softfail;                        /**< APAPI_SOFTFAIL */
	int default_components;              /**< APAPI_CMPLIST unset: the default list, whose components may well be absent */
};

/**
 * Reads APAPI_EVENTLIST, APAPI_EVENTOPS, APAPI_CMPLIST, APAPI_VERBOSE,
 * APAPI_SOFTFAIL and the default files of datadir (default_eventlist.txt,
 * default_eventops.txt). Malformed lines are reported and skipped. Returns 0,
 * or a negative errno when a file named by the environment cannot be read.
 */
int apapi_config_load(struct apapi_config *cfg, const char *datadir);
void apapi_config_clear(struct apapi_config *cfg);
/**
 * The events to sample for component cmp: those of APAPI_EVENTLIST when it
 * names some of cmp, else those of the default list; returns how many, and
 * 0 when neither names any (then every event of the component is used).
 * names[i] point into cfg; *names is malloc'ed (free it).
 */
unsigned apapi_config_events(const struct apapi_config *cfg, const char *cmp, const char ***names);
/**
 * The definition of event name: APAPI_EVENTOPS's, the default file's, or
 * the fallback for an event without one: accumulating (max_raw) or not,
 * value0 in unit, value1 its rate per second (accumulating) or its change
 * between samples, every statistic on both. Written into op (free with
 * apapi_eventop_clear()).
 */
void apapi_config_op(const struct apapi_config *cfg, const char *name, uint64_t max_raw, const char *unit,
		     struct apapi_eventop *op);
/** Whether messages about skipped components and events are shown (APAPI_SOFTFAIL hides them). */
#define apapi_config_tells(cfg) (!(cfg)->softfail)

#ifdef __cplusplus
}
#endif

#endif /* __ASTRO_SAMPLER_APAPI_MODEL_H__ */
