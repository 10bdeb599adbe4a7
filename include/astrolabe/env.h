/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Bounded environment variables, for the runtime and its plugins. Each reader
 * states, in its one call, the variable's range (a number) or its maximum
 * length (a string) and its default; doc/environment.md's table of environment
 * variables documents the same bounds. A value that is not a number, is out of
 * range or is too long is said in one error naming the variable, the value,
 * what is accepted and the default used, and the default is used: a value
 * never reaches the runtime unchecked.
 */
#ifndef ASTROLABE_ENV_H
#define ASTROLABE_ENV_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bounds several readers share (doc/environment.md's table gives each variable's). */
#define ASTRO_ENV_PRIO_BOUND 1000000	/**< STARPU_MIN_PRIO, STARPU_MAX_PRIO: within -this..this */
#define ASTRO_ENV_POWER_MAX 1e6f	/**< STARPU_IDLE_POWER: 0..this W */
#define ASTRO_ENV_NAME_MAX 255		/**< a name (policy, host, tool...): at most this many characters */
#define ASTRO_ENV_PATH_MAX 4095		/**< a folder or a file: PATH_MAX - 1 characters */
#define ASTRO_ENV_LIST_MAX 65535	/**< a list of folders or names, or options: at most this many characters */

/** The integer variable name within [min, max], else def (unset: silently).
 * unit (NULL for none) is shown after the range in the message: "MiB". */
int astro_env_int(const char *name, int min, int max, int def, const char *unit);

/** The number (as strtof() reads it) variable name within [min, max], else def. */
float astro_env_float(const char *name, float min, float max, float def, const char *unit);

/** The string variable name when at most max_len characters long, else def
 * (which may be NULL: the caller then acts as if it were unset). */
const char *astro_env_string(const char *name, size_t max_len, const char *def);

/** A list of names (separated by any character of separators) whose names are
 * each at most max_name_len characters long, else def. */
const char *astro_env_names(const char *name, const char *separators, size_t max_name_len, const char *def);

#ifdef __cplusplus
}
#endif

#endif /* ASTROLABE_ENV_H */
