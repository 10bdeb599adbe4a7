/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Utilities of the StarPU API that are not about tasks: environment
 * variables, timing, sleeping, and the CRC32C hash behind data footprints.
 * Written against the public headers only. */
#include "common/common.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <astrolabe/thread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ------------------------------------------------------------ environment */

char *starpu_getenv(const char *str)
{
	return str ? getenv(str) : NULL;
}

static void report_bad_value(const char *name, const char *value, const char *what)
{
	_astro_error("%s='%s' is not %s: ignored, using the default", name, value, what);
}

int _astro_env_int(const char *name, int min, int max, const int *fallback, int *out)
{
	const char *value = starpu_getenv(name);

	if (!value)
		return 0;
	int v;
	bool number = _astro_parse_int(value, &v) == 0;
	if (number && v >= min && v <= max) {
		*out = v;
		return 1;
	}
	char why[64], instead[48];
	if (!number)
		snprintf(why, sizeof(why), "not a number");
	else if (min == 0 && max == INT_MAX)
		snprintf(why, sizeof(why), "negative");
	else if (max == INT_MAX)
		snprintf(why, sizeof(why), "below %d", min);
	else
		snprintf(why, sizeof(why), "not between %d and %d", min, max);
	if (fallback)
		snprintf(instead, sizeof(instead), "using %d", *fallback);
	else
		snprintf(instead, sizeof(instead), "as if it were unset");
	_astro_error("%s='%s' is %s: ignored, %s", name, value, why, instead);
	return -1;
}

int starpu_get_env_number(const char *str)
{
	int v;
	return _astro_env_int(str, INT_MIN, INT_MAX, NULL, &v) == 1 ? v : -1;
}

int starpu_get_env_number_default(const char *str, int defvalue)
{
	int v;
	return _astro_env_int(str, INT_MIN, INT_MAX, &defvalue, &v) == 1 ? v : defvalue;
}

/* StarPU 1.4's names of the same helpers. */
int starpu_getenv_number(const char *str)
{
	return starpu_get_env_number(str);
}

int starpu_getenv_number_default(const char *str, int defvalue)
{
	return starpu_get_env_number_default(str, defvalue);
}

float starpu_getenv_float_default(const char *str, float defvalue)
{
	return starpu_get_env_float_default(str, defvalue);
}

int _astro_env_int_in(const char *name, int min, int max, int fallback)
{
	int v;
	return _astro_env_int(name, min, max, &fallback, &v) == 1 ? v : fallback;
}

float starpu_get_env_float_default(const char *str, float defvalue)
{
	const char *value = starpu_getenv(str);
	float v;

	if (!value)
		return defvalue;
	if (_astro_parse_float(value, &v) != 0) {
		report_bad_value(str, value, "a number");
		return defvalue;
	}
	return v;
}

/* StarPU 1.4: a size whose unit is K when it has no suffix; blanks are ignored and an empty value is the default. */
int starpu_get_env_size_default(const char *str, int defval)
{
	const char *value = starpu_getenv(str);
	if (!value)
		return defval;
	char packed[64];
	size_t len = 0;
	for (const char *c = value; *c && len < sizeof(packed) - 1; c++)
		if (!isspace((unsigned char)*c))
			packed[len++] = *c;
	packed[len] = '\0';
	if (len == 0)
		return defval;
	bool bare = strspn(packed, "0123456789") == len;
	int64_t bytes;
	if (len == sizeof(packed) - 1 || _astro_parse_size(packed, &bytes) != 0 || (bare && bytes > INT64_MAX / 1024)) {
		report_bad_value(str, value, "a size (a number of KiB, or with a B, K, M, G or T suffix)");
		return defval;
	}
	if (bare)
		bytes *= 1024;
	if (bytes > INT_MAX) {
		_astro_error("%s='%s' is more than this call returns: %lld bytes, where an int holds at most %d; ignored, using the "
			     "default", str, value, (long long)bytes, INT_MAX);
		return defval;
	}
	return (int)bytes;
}

int starpu_get_env_string_var_default(const char *str, const char *strings[], int defvalue)
{
	const char *value = starpu_getenv(str);
	if (!value)
		return defvalue;
	if (!strings) {
		_astro_error("starpu_get_env_string_var_default: NULL strings for %s: give a NULL-terminated array of the accepted "
			     "values; using the default", str);
		return defvalue;
	}
	for (int i = 0; strings[i]; i++)
		if (strcasecmp(value, strings[i]) == 0)
			return i;
	GString *accepted = g_string_new(NULL);
	for (int i = 0; strings[i]; i++)
		g_string_append_printf(accepted, "%s%s", i ? ", " : "", strings[i]);
	_astro_error("%s='%s' is none of the accepted values (%s): ignored, using the default", str, value, accepted->str);
	g_string_free(accepted, TRUE);
	return defvalue;
}

/* ------------------------------------------------ bounded variables */

/* The one message of a refused value: what it is, what is accepted, and the
 * default used instead. */
static void refuse_value(const char *name, const char *value, const char *why, const char *instead)
{
	char shown[96];
	_astro_error("%s=%s is %s: ignored, %s", name, _astro_env_shown(value, shown, sizeof(shown)), why, instead);
}

static const char *unit_text(const char *unit, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", unit ? " (" : "", unit ? unit : "", unit ? ")" : "");
	return buf;
}

int astro_env_int(const char *name, int min, int max, int def, const char *unit)
{
	const char *value = starpu_getenv(name);
	char why[128], instead[48], u[40];
	int v;
	int ret = value ? _astro_parse_int_in(value, min, max, &v) : 1;

	if (ret == 0)
		return v;
	if (ret < 0) {
		if (ret == -EINVAL)
			snprintf(why, sizeof(why), "not a number (give %d..%d%s)", min, max, unit_text(unit, u, sizeof(u)));
		else
			snprintf(why, sizeof(why), "out of range %d..%d%s", min, max, unit_text(unit, u, sizeof(u)));
		snprintf(instead, sizeof(instead), "using %d", def);
		refuse_value(name, value, why, instead);
	}
	return def;
}

float astro_env_float(const char *name, float min, float max, float def, const char *unit)
{
	const char *value = starpu_getenv(name);
	char why[160], instead[48], u[40];
	float v;
	int ret = value ? _astro_parse_float_in(value, min, max, &v) : 1;

	if (ret == 0)
		return v;
	if (ret < 0) {
		if (ret == -EINVAL)
			snprintf(why, sizeof(why), "not a number (give %g..%g%s)", (double)min, (double)max, unit_text(unit, u, sizeof(u)));
		else
			snprintf(why, sizeof(why), "out of range %g..%g%s", (double)min, (double)max, unit_text(unit, u, sizeof(u)));
		if (isnan(def))
			snprintf(instead, sizeof(instead), "as if it were unset");
		else
			snprintf(instead, sizeof(instead), "using %g", (double)def);
		refuse_value(name, value, why, instead);
	}
	return def;
}

/* "using 'lws'", or "as if it were unset" without a default. */
static void string_instead(const char *def, char *buf, size_t len)
{
	char shown[96];
	if (def)
		snprintf(buf, len, "using %s", _astro_env_shown(def, shown, sizeof(shown)));
	else
		snprintf(buf, len, "as if it were unset");
}

const char *astro_env_string(const char *name, size_t max_len, const char *def)
{
	const char *value = starpu_getenv(name);
	char why[80], instead[128];

	if (!value)
		return def;
	if (_astro_check_length(value, max_len) == 0)
		return value;
	snprintf(why, sizeof(why), "too long (at most %zu characters)", max_len);
	string_instead(def, instead, sizeof(instead));
	refuse_value(name, value, why, instead);
	return def;
}

const char *astro_env_names(const char *name, const char *separators, size_t max_name_len, const char *def)
{
	const char *value = starpu_getenv(name);
	struct _astro_parse_error err = { 0, 0, NULL };
	char why[200], instead[128], shown[96];

	if (!value)
		return def;
	if (_astro_check_list_names(value, separators, max_name_len, &err) == 0)
		return value;
	char *bad = g_strndup(value + err.at, err.len);
	snprintf(why, sizeof(why), "refused: its name %s is too long (at most %zu characters a name)",
		 _astro_env_shown(bad, shown, sizeof(shown)), max_name_len);
	g_free(bad);
	string_instead(def, instead, sizeof(instead));
	refuse_value(name, value, why, instead);
	return def;
}

/* ----------------------------------------------------------------- timing */

/*
 * starpu_timing_now() stamps every observed moment (several per task while
 * profiling, counters or a tool are on), so it reads the CPU's time-stamp
 * counter when the kernel itself trusts it as its clock source (invariant and
 * synchronised across cores): rdtsc costs a fraction of clock_gettime(). The
 * counter is converted with a rate measured against CLOCK_MONOTONIC over the
 * first CALIBRATION_US microseconds of the process, which read clock_gettime();
 * the switch is continuous. ASTROLABE_TIMING=clock_gettime keeps
 * clock_gettime() throughout. The conversion is inline (_astro_now() in
 * kernel.h); this file decides, calibrates, and reads clock_gettime().
 */
#define CALIBRATION_US 20000.0

static double monotonic_us(void)
{
	return (double)astro_clock_monotonic_ns() * 1e-3;
}

#ifdef _ASTRO_HAVE_TSC

struct _astro_tsc_clock _astro_tsc_clock;
static starpu_pthread_mutex_t tsc_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;

/* A CLOCK_MONOTONIC reading and the counter at the same moment: the tightest of three tries. */
static void tsc_pair(double *us, uint64_t *tsc)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 3; i++) {
		uint64_t before = __builtin_ia32_rdtsc();
		double now = monotonic_us();
		uint64_t after = __builtin_ia32_rdtsc();
		if (after - before < best) {
			best = after - before;
			*us = now;
			*tsc = before + (after - before) / 2;
		}
	}
}

/* Does the kernel use the counter as its own clock? Then it is invariant and synchronised. */
static bool kernel_clock_is_tsc(void)
{
	char name[32] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	if (!f)
		return false;
	bool tsc = fgets(name, sizeof(name), f) && strcmp(name, "tsc\n") == 0;
	fclose(f);
	return tsc;
}

/* Before the rate is known: decides which clock to use, calibrates, reads clock_gettime(). */
static double timing_calibrate(void)
{
	struct _astro_tsc_clock *c = &_astro_tsc_clock;
	static double start_us;
	static uint64_t start_tsc;
	double now_us = 0.0;
	uint64_t now_tsc = 0;
	tsc_pair(&now_us, &now_tsc);
	starpu_pthread_mutex_lock(&tsc_lock);
	switch (c->state) {
	case _ASTRO_CLOCK_UNDECIDED: {
		const char *choice = getenv("ASTROLABE_TIMING");
		bool gettime = choice && strcmp(choice, "clock_gettime") == 0;
		if (choice && !gettime && strcmp(choice, "tsc") != 0)
			_astro_error("ASTROLABE_TIMING='%s' is not a clock: use tsc (the default) or clock_gettime; using the default", choice);
		if (gettime || !kernel_clock_is_tsc()) {
			__atomic_store_n(&c->state, _ASTRO_CLOCK_GETTIME, __ATOMIC_RELEASE);
		} else {
			start_us = now_us;
			start_tsc = now_tsc;
			__atomic_store_n(&c->state, _ASTRO_CLOCK_CALIBRATING, __ATOMIC_RELEASE);
		}
		break;
	}
	case _ASTRO_CLOCK_CALIBRATING:
		if (now_us - start_us >= CALIBRATION_US && now_tsc > start_tsc) {
			c->us_per_tick = (now_us - start_us) / (double)(now_tsc - start_tsc);
			c->base_us = now_us;
			c->base_tsc = now_tsc;
			__atomic_store_n(&c->state, _ASTRO_CLOCK_TSC, __ATOMIC_RELEASE);
		}
		break;
	default:
		break;
	}
	starpu_pthread_mutex_unlock(&tsc_lock);
	return now_us;
}

/* _astro_now() when the counter is not (yet) the clock. */
double _astro_timing_slow(void)
{
	int state = __atomic_load_n(&_astro_tsc_clock.state, __ATOMIC_ACQUIRE);
	if (state == _ASTRO_CLOCK_TSC)
		return _astro_tsc_now();
	if (state == _ASTRO_CLOCK_GETTIME)
		return monotonic_us();
	return timing_calibrate();
}

#else

double _astro_timing_slow(void)
{
	return monotonic_us();
}

#endif

double starpu_timing_now(void)
{
	return _astro_now();
}

static void sleep_for(double seconds)
{
	if (!(seconds > 0.0)) /* also rejects NaN */
		return;
	astro_sleep_ns(seconds < 1e9 ? (uint64_t)(seconds * 1e9) : UINT64_MAX / 2);
}

void starpu_sleep(float nb_sec)
{
	sleep_for(nb_sec);
}

void starpu_usleep(float nb_micro_sec)
{
	sleep_for(nb_micro_sec * 1e-6);
}

/* ----------------------------------------------------------------- CRC32C */

/* StarPU's footprints are a CRC32C (polynomial 0x1EDC6F41) computed most
 * significant bit first, with no initial or final inversion, over bytes in
 * memory order. Performance-model files key their entries on these values,
 * so they must match StarPU's bit for bit. */
#define CRC32C_POLY 0x1EDC6F41u

static uint32_t crc32c_table[256];
static starpu_pthread_once_t crc32c_table_once = STARPU_PTHREAD_ONCE_INIT;

static void crc32c_table_fill(void)
{
	for (uint32_t byte = 0; byte < 256; byte++)
	{
		uint32_t crc = byte << 24;
		for (int bit = 0; bit < 8; bit++)
			crc = (crc << 1) ^ ((crc & 0x80000000u) ? CRC32C_POLY : 0);
		crc32c_table[byte] = crc;
	}
}

static uint32_t crc32c_bytes(const unsigned char *p, size_t n, uint32_t crc)
{
	starpu_pthread_once(&crc32c_table_once, crc32c_table_fill);
	while (n--)
		crc = (crc << 8) ^ crc32c_table[(crc >> 24) ^ *p++];
	return crc;
}

uint32_t starpu_hash_crc32c_be_n(const void *input, size_t n, uint32_t inputcrc)
{
	return crc32c_bytes(input, n, inputcrc);
}

uint32_t starpu_hash_crc32c_be(uint32_t input, uint32_t inputcrc)
{
	return crc32c_bytes((const unsigned char *)&input, sizeof(input), inputcrc);
}

uint32_t starpu_hash_crc32c_string(const char *str, uint32_t inputcrc)
{
	return str ? crc32c_bytes((const unsigned char *)str, strlen(str), inputcrc) : inputcrc;
}

uint32_t starpu_hash_crc32c_be_ptr(void *input, uint32_t inputcrc)
{
	return crc32c_bytes((const unsigned char *)&input, sizeof(input), inputcrc);
}
