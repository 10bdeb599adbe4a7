/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libapapi: APAPI's public interface, a wrapper over PAPI (installed as
 * astrolabe/apapi.h; pkg-config apapi). A timer thread reads the counters of
 * a PAPI event set at its interval, fixes counter overflows and keeps
 * statistics (minimum, maximum, time-weighted average, accumulated sum) of
 * value0 (the raw value, or its change for an accumulating counter) and of
 * value1 (value0 through the event's APAPI_OP1_* operation); a callback is
 * called after every reading. Event definitions come from comma-separated
 * files (APAPI_EVENTOPS), event lists from APAPI_EVENTLIST, components from
 * APAPI_CMPLIST; APAPI_VERBOSE=1 says more, APAPI_SOFTFAIL=1 hides the
 * messages about events and components left out.
 *
 * Every function returning int returns 0 (PAPI_OK) on success, except
 * APAPI_init (PAPI_library_init's answer); a failure returns a negative
 * value and says why on stderr, in one line naming the problem and its fix.
 * The timer and event set structures are allocated by the library: read
 * their fields, never allocate or copy them. Times are in nanoseconds of
 * the monotonic clock.
 */
#ifndef APAPI_H
#define APAPI_H

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#ifdef __cplusplus
extern "C" {
#endif

extern char **environ;

/** The components applications use by default (NULL-terminated): APAPI's
 *  rapl, nvml, maxeler, micknc, ipmi, and PAPI's Linux powercap. */
extern char *APAPI_default_components[];

/** How value1 is computed from the last two value0 (sample0 at time0,
 *  sample1 at time1). */
enum APAPI_op1
{
	APAPI_OP1_NOP,                     /**< no value1 */
	APAPI_OP1_SAMPLE_DIFF,             /**< sample1 - sample0 */
	APAPI_OP1_DIV_DIFF_TIME,           /**< sample1 / (time1 - time0) */
	APAPI_OP1_SAMPLE1_MUL_DIFF_TIME,   /**< sample1 * (time1 - time0) */
	APAPI_OP1_AVG_SAMPLE_MUL_DIFF_TIME /**< (sample0 + sample1) / 2 * (time1 - time0) */
};

/** The statistics kept of a value: flags, combined with |. */
enum APAPI_stats
{
	APAPI_STAT_NO = 0,
	APAPI_STAT_MIN = 1,
	APAPI_STAT_MAX = 2,
	APAPI_STAT_AVG = 4,
	APAPI_STAT_ACC = 8,
	APAPI_STAT_ALL = -1
};

/** Where each statistic lies in the APAPI_FIELDS doubles an event has in
 *  apapi_eventset's values0 and values1. */
enum APAPI_stats_field
{
	APAPI_MIN = 0,
	APAPI_MAX = 1,
	APAPI_AVG = 2,
	APAPI_ACC = 3,
	APAPI_FIELDS = 4
};

/** An event's definition: one line of an event-operation file. */
struct apapi_event_ops
{
	char *event_name;           /**< PAPI's name of the event */
	enum APAPI_op1 op1;         /**< how value1 is computed */
	enum APAPI_stats value0;    /**< statistics kept of value0 */
	enum APAPI_stats value1;    /**< statistics kept of value1 */
	long long max_sample;       /**< the counter's largest value before it wraps; 0: not accumulating */
	char *value0_type;          /**< what value0 is, e.g. "energy" */
	char *value0_unit;          /**< its unit once divided by value0_prefix, e.g. "Ws" */
	double value0_prefix;       /**< value0 is shown as value0 / value0_prefix */
	char *value1_type;          /**< what value1 is, e.g. "power" */
	char *value1_unit;          /**< its unit once divided by value1_prefix, e.g. "W" */
	double value1_prefix;       /**< value1 is shown as value1 / value1_prefix */
};

/** The events of one PAPI component, read together, and their values. The
 *  arrays hold num_events entries (values0, values1: APAPI_FIELDS each);
 *  they are updated at each reading of a timer. */
struct apapi_eventset
{
	int EventSet;                  /**< PAPI's event set */
	const char *cmp_name;          /**< the component's name, as PAPI_get_component_index() takes it */
	int num_events;                /**< the events PAPI took */
	long long *current_counters;   /**< the last raw values */
	long long *previous_counters;  /**< the raw values before them */
	long long *max_counters;       /**< each event's max_sample */
	long long *current_samples;    /**< the last value0, overflow fixed */
	long long *previous_samples;   /**< the value0 before them */
	long long count;               /**< readings taken */
	long long current_time;        /**< time of the last reading */
	long long previous_time;       /**< time of the reading before */
	long long first_time;          /**< time of the first reading */
	long long last_time;           /**< time of the last reading */
	double *last_values1;          /**< the last value1 */
	double *values0;               /**< statistics of value0, indexed by enum APAPI_stats_field */
	double *values1;               /**< statistics of value1 */
	enum APAPI_op1 *values_op1;    /**< each event's op1 */
	enum APAPI_stats *values0_stats; /**< each event's statistics of value0 */
	enum APAPI_stats *values1_stats; /**< each event's statistics of value1 */
	struct apapi_event_ops *event_ops; /**< each event's definition */
};

/** A timer's states: READY once created or reset, STARTED, DONE once stopped. */
enum APAPI_timer_state
{
	APAPI_TIMER_STATE_READY,
	APAPI_TIMER_STATE_STARTED,
	APAPI_TIMER_STATE_DONE
};

/** A thread reading an event set (if any) at an interval, then calling measure. */
struct apapi_timer
{
	enum APAPI_timer_state state; /**< where the timer is */
	pthread_t thread;            /**< the thread reading, while started */
	struct timespec interval;    /**< the time between two readings */
	pthread_mutex_t mutex;       /**< APAPI's field, unused by this implementation */
	int interrupt;               /**< set when destroyed running: no last reading */
	/** Called after each reading with measure_arg, and 1 for the last reading
	 *  (at the stop), else 0. */
	void (*measure)(void **, int);
	void **measure_arg;          /**< measure's first argument */
	struct apapi_eventset *set;  /**< NULL: measure is called alone */
};

/** Initialises PAPI and reads APAPI_VERBOSE, APAPI_SOFTFAIL and the default
 *  event files. Returns PAPI_library_init's answer (PAPI_VER_CURRENT on
 *  success), or a negative value when PAPI is unusable (said). */
int APAPI_init(void);

/** Frees what APAPI_init read; PAPI stays initialised for the process (libpapi
 *  can crash when initialised again after PAPI_shutdown). */
void APAPI_destroy(void);

/** Creates a PAPI event set of component cidx with the NULL-terminated
 *  events: *num_events of them were added (an event PAPI cannot count is
 *  said and left out). */
int APAPI_create_eventset_list(char **events, int cidx, int *EventSet, int *num_events);

/** Creates a PAPI event set of component cidx with every event it has. */
int APAPI_create_eventset_cmp_all(int cidx, int *EventSet, int *num_events);

/** Creates a timer reading set (NULL: none) every tv_sec s + tv_nsec ns and
 *  calling measure(measure_arg, last) after each reading (NULL: none). */
int APAPI_create_timer(struct apapi_timer **timer, time_t tv_sec, long tv_nsec, void(measure)(void **, int),
		       void **measure_arg, struct apapi_eventset *set);

/** Changes a READY timer's parameters (the set's statistics start again). */
int APAPI_change_timer(struct apapi_timer *timer, time_t tv_sec, long tv_nsec, void(measure)(void **, int),
		       void **measure_arg, struct apapi_eventset *set);

/** Makes a DONE timer READY again with these parameters (the set's statistics start again). */
int APAPI_reset_timer(struct apapi_timer *timer, time_t tv_sec, long tv_nsec, void(measure)(void **, int),
		      void **measure_arg, struct apapi_eventset *set);

/** Starts counting the timer's event set (PAPI_start): call it before APAPI_start_timer. */
int APAPI_initstart_timer(struct apapi_timer *timer);

/** Takes the first reading and starts the timer's thread. */
int APAPI_start_timer(struct apapi_timer *timer);

/** Asks the timer to take its last reading and end, without waiting: call APAPI_join_timer next. */
int APAPI_callstop_timer(struct apapi_timer *timer);

/** Waits for the timer asked to stop, then stops counting (PAPI_stop): the timer is DONE. */
int APAPI_join_timer(struct apapi_timer *timer);

/** APAPI_callstop_timer then APAPI_join_timer. */
int APAPI_stop_timer(struct apapi_timer *timer);

/** Frees the timer (a running one is stopped without a last reading); *timer becomes NULL. */
int APAPI_destroy_timer(struct apapi_timer **timer);

/** Creates an event set of component cidx (PAPI_get_component_index) with
 *  the NULL-terminated names, or with NULL the component's events of
 *  APAPI_EVENTLIST, else of the default list, else every event it has. An
 *  event's definition is event_defaults' (NULL-terminated by event_name,
 *  may be NULL), else APAPI_EVENTOPS', else the default file's, else one
 *  derived from what PAPI says of the event. A component PAPI lacks or has
 *  disabled is refused (said, *set NULL). */
int APAPI_init_apapi_eventset_cmp(struct apapi_eventset **set, int cidx, char **names, struct apapi_event_ops *event_defaults);

/** Frees an event set no timer is using; *set becomes NULL. */
int APAPI_destroy_apapi_eventset(struct apapi_eventset **set);

/** Prints the set's statistics as a table on stdout. */
void APAPI_print_apapi_eventset(struct apapi_eventset *set);

/** Parses input, lines of 11 fields separated by delimiter (name, op1,
 *  value0 stats, value1 stats, max_sample, value0 type, unit, prefix, value1
 *  type, unit, prefix; '#' lines and empty lines skipped), in place: the
 *  strings of *events_out point into input. *events_out (free it) holds
 *  *num_events_out definitions and a last one with a NULL event_name. Any
 *  malformed line (each said with its number) fails the whole input. */
int APAPI_read_event_ops_csv(char *input, char delimiter, struct apapi_event_ops **events_out, int *num_events_out);

/** The index of event name in set, or -1. */
int APAPI_apapi_eventset_find_event(struct apapi_eventset *set, char *name);

/** Reads the file APAPI_EVENTOPS names into *buffer (free it) and parses it
 *  with APAPI_read_event_ops_csv (','). Returns -1 when APAPI_EVENTOPS is
 *  not set (nothing said) or the file is unreadable or malformed (said). */
int APAPI_read_env_eventops(char **buffer, struct apapi_event_ops **events_out, int *num_events_out);

/** Reads the event list APAPI_EVENTLIST names (one event a line) into
 *  *buffer, sorted by the components of the NULL-terminated cmp_list:
 *  (*sorted_list)[i] holds the events (NULL-terminated, pointing into
 *  *buffer) of component (*used_cmp)[i], the components with events, both
 *  NULL-terminated. Free each (*sorted_list)[i], *sorted_list, *used_cmp and
 *  *buffer. Returns -1 when APAPI_EVENTLIST is not set or the file cannot
 *  be read (said). */
int APAPI_read_env_eventlist(char **cmp_list, char **buffer, char ****sorted_list, char ***used_cmp);

/** Splits APAPI_CMPLIST ("rapl:nvml") into *cmplist (NULL-terminated,
 *  pointing into *buffer; free both). Returns -1 when it is not set. */
int APAPI_read_env_cmplist(char **buffer, char ***cmplist);

/** The index of cmp in the NULL-terminated cmplist, or -1. */
int APAPI_cmp_cmplist_index(const char *cmp, char **cmplist);

#ifdef __cplusplus
}
#endif

#endif /* APAPI_H */
