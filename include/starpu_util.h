/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Utilities of the StarPU API: assertions, environment, timing. */
#ifndef __STARPU_UTIL_H__
#define __STARPU_UTIL_H__

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <starpu_config.h>
#ifdef STARPU_HAVE_HWLOC
#include <hwloc.h>
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define STARPU_GNUC_PREREQ(maj, min) \
	((__GNUC__ > (maj)) || (__GNUC__ == (maj) && __GNUC_MINOR__ >= (min)))
#define STARPU_UNLIKELY(expr) (__builtin_expect(!!(expr), 0))
#define STARPU_LIKELY(expr) (__builtin_expect(!!(expr), 1))
#define STARPU_ATTRIBUTE_UNUSED __attribute__((unused))
#define STARPU_ATTRIBUTE_NORETURN __attribute__((noreturn))
#define STARPU_ATTRIBUTE_MALLOC __attribute__((malloc))
#define STARPU_ATTRIBUTE_INTERNAL __attribute__((visibility("internal")))
#define STARPU_ATTRIBUTE_MALLOC __attribute__((malloc))
#define STARPU_ATTRIBUTE_WARN_UNUSED_RESULT __attribute__((warn_unused_result))
#define STARPU_ATTRIBUTE_PURE __attribute__((pure))
#define STARPU_ATTRIBUTE_ALIGNED(size) __attribute__((aligned(size)))
#define STARPU_ATTRIBUTE_FORMAT(type, string, first) __attribute__((format(type, string, first)))
#define STARPU_WARN_UNUSED_RESULT __attribute__((warn_unused_result))
#define STARPU_DEPRECATED __attribute__((__deprecated__))
#define STARPU_INLINE static inline

#define STARPU_MIN(a, b) ((a) < (b) ? (a) : (b))
#define STARPU_MAX(a, b) ((a) < (b) ? (b) : (a))
#define STARPU_POISON_PTR ((void *)0xdeadbeef)

#define STARPU_ABORT() do { \
	fprintf(stderr, "[starpu][abort][%s()@%s:%d]\n", __func__, __FILE__, __LINE__); \
	abort(); } while (0)

#define STARPU_ABORT_MSG(msg, ...) do { \
	fprintf(stderr, "[starpu][abort][%s()@%s:%d] " msg "\n", __func__, __FILE__, __LINE__, ## __VA_ARGS__); \
	abort(); } while (0)

#ifdef STARPU_NO_ASSERT
#define STARPU_ASSERT(x) do { if (0) { (void)(x); } } while (0)
#define STARPU_ASSERT_MSG(x, msg, ...) do { if (0) { (void)(x); } } while (0)
#else
#define STARPU_ASSERT(x) do { if (STARPU_UNLIKELY(!(x))) { \
	fprintf(stderr, "[starpu] assertion failed: %s (%s()@%s:%d)\n", #x, __func__, __FILE__, __LINE__); \
	abort(); } } while (0)
#define STARPU_ASSERT_MSG(x, msg, ...) do { if (STARPU_UNLIKELY(!(x))) { \
	fprintf(stderr, "[starpu] assertion failed: %s (%s()@%s:%d): " msg "\n", #x, __func__, __FILE__, __LINE__, ## __VA_ARGS__); \
	abort(); } } while (0)
#endif
#define STARPU_ASSERT_ACCESSIBLE(ptr) do { volatile char __c STARPU_ATTRIBUTE_UNUSED = *(const char *)(ptr); } while (0)

#define STARPU_CHECK_RETURN_VALUE(err, message, ...) do { if (STARPU_UNLIKELY(err != 0)) { \
	fprintf(stderr, "[starpu] unexpected value <%d> returned for " message "\n", err, ## __VA_ARGS__); \
	STARPU_ABORT(); } } while (0)
#define STARPU_CHECK_RETURN_VALUE_IS(err, value, message, ...) do { if (STARPU_UNLIKELY(err != value)) { \
	fprintf(stderr, "[starpu] unexpected value <%d != %d> returned for " message "\n", err, value, ## __VA_ARGS__); \
	STARPU_ABORT(); } } while (0)

#ifdef __GNUC__
/** Marks a symbol as exported from a library built with hidden visibility. */
#define STARPU_ATTRIBUTE_VISIBILITY_DEFAULT __attribute__((visibility("default")))
#else
#define STARPU_ATTRIBUTE_VISIBILITY_DEFAULT
#endif
/** How many frames STARPU_DUMP_BACKTRACE() prints at most. */
#define STARPU_BACKTRACE_LENGTH 32
#ifdef __GLIBC__
#include <execinfo.h>
/** Prints the calling thread's stack on stderr (glibc; nothing elsewhere). */
#define STARPU_DUMP_BACKTRACE() do { \
	void *__starpu_frames[STARPU_BACKTRACE_LENGTH]; \
	backtrace_symbols_fd(__starpu_frames, backtrace(__starpu_frames, STARPU_BACKTRACE_LENGTH), 2); } while (0)
#else
#define STARPU_DUMP_BACKTRACE() do { } while (0)
#endif
/** An assertion for SimGrid's model checker, which this runtime does not run under: nothing. */
#define STARPU_SIMGRID_ASSERT(x) do { } while (0)
/** strerror_r() into buf (buflen bytes), whichever of its GNU and XSI forms the C library has. */
#define starpu_strerror_r(errnum, buf, buflen) do { \
	char *__starpu_buf = (buf); \
	size_t __starpu_len = (buflen); \
	if (__starpu_len) \
		snprintf(__starpu_buf, __starpu_len, "%s", strerror(errnum)); } while (0)
#if defined(__GNUC__) && (__GNUC__ > 4 || (__GNUC__ == 4 && __GNUC_MINOR__ >= 3))
#define STARPU_ATTRIBUTE_ALLOC_SIZE(size) __attribute__((alloc_size(size)))
#define STARPU_ATTRIBUTE_CALLOC_SIZE(num, size) __attribute__((alloc_size(num, size)))
#else
#define STARPU_ATTRIBUTE_ALLOC_SIZE(size)
#define STARPU_ATTRIBUTE_CALLOC_SIZE(num, size)
#endif

#define STARPU_RMB() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define STARPU_WMB() __atomic_thread_fence(__ATOMIC_RELEASE)
#define STARPU_SYNCHRONIZE() __atomic_thread_fence(__ATOMIC_SEQ_CST)
/** The size of a cache line on this processor, in bytes (to keep data
 * threads write apart on lines of their own). */
#if defined(__i386__) || defined(__x86_64__)
#define STARPU_CACHELINE_SIZE 64
#elif defined(__ppc__) || defined(__ppc64__) || defined(__powerpc64__) || defined(__ia64__)
#define STARPU_CACHELINE_SIZE 128
#elif defined(__s390__) || defined(__s390x__)
#define STARPU_CACHELINE_SIZE 256
#else
#define STARPU_CACHELINE_SIZE 64
#endif

/* The ADD ones give the new value, the OR ones the previous one, as StarPU's. */
#define STARPU_ATOMIC_ADD(ptr, value) (__atomic_add_fetch((ptr), (value), __ATOMIC_SEQ_CST))
#define STARPU_ATOMIC_ADDL(ptr, value) (__atomic_add_fetch((ptr), (value), __ATOMIC_SEQ_CST))
#define STARPU_ATOMIC_ADD64(ptr, value) (__atomic_add_fetch((ptr), (value), __ATOMIC_SEQ_CST))
#define STARPU_ATOMIC_OR(ptr, value) (__atomic_fetch_or((ptr), (value), __ATOMIC_SEQ_CST))
#define STARPU_ATOMIC_ORL(ptr, value) (__atomic_fetch_or((ptr), (value), __ATOMIC_SEQ_CST))
#define STARPU_ATOMIC_OR64(ptr, value) (__atomic_fetch_or((ptr), (value), __ATOMIC_SEQ_CST))
#define STARPU_BOOL_COMPARE_AND_SWAP(ptr, old, value) (__sync_bool_compare_and_swap((ptr), (old), (value)))
#define STARPU_BOOL_COMPARE_AND_SWAP32(ptr, old, value) STARPU_BOOL_COMPARE_AND_SWAP(ptr, old, value)
#define STARPU_BOOL_COMPARE_AND_SWAP64(ptr, old, value) STARPU_BOOL_COMPARE_AND_SWAP(ptr, old, value)
#define STARPU_VAL_COMPARE_AND_SWAP(ptr, old, value) (__sync_val_compare_and_swap((ptr), (old), (value)))
#define STARPU_VAL_COMPARE_AND_SWAP32(ptr, old, value) STARPU_VAL_COMPARE_AND_SWAP(ptr, old, value)
#define STARPU_VAL_COMPARE_AND_SWAP64(ptr, old, value) STARPU_VAL_COMPARE_AND_SWAP(ptr, old, value)
/** Stores value at ptr and gives the previous value. */
#define STARPU_VAL_EXCHANGE(ptr, value) (__atomic_exchange_n((ptr), (value), __ATOMIC_SEQ_CST))
#define STARPU_VAL_EXCHANGEL(ptr, value) STARPU_VAL_EXCHANGE(ptr, value)
#define STARPU_VAL_EXCHANGE32(ptr, value) STARPU_VAL_EXCHANGE(ptr, value)
#define STARPU_VAL_EXCHANGE64(ptr, value) STARPU_VAL_EXCHANGE(ptr, value)
#define STARPU_TEST_AND_SET(ptr, value) (__sync_lock_test_and_set((ptr), (value)))
#define STARPU_RELEASE(ptr) (__sync_lock_release((ptr)))

/** getenv(), kept as a function so a runtime may filter variables. */
char *starpu_getenv(const char *str);
/** Value of the integer variable str, or -1 when unset. A value that does not parse is reported and ignored (-1). */
int starpu_get_env_number(const char *str);
/** As starpu_get_env_number(), returning defvalue when unset. */
int starpu_get_env_number_default(const char *str, int defvalue);
/** Float variant of starpu_get_env_number_default(). */
float starpu_get_env_float_default(const char *str, float defvalue);
/** StarPU 1.4's name of starpu_get_env_number(). */
int starpu_getenv_number(const char *str);
/** StarPU 1.4's name of starpu_get_env_number_default(). */
int starpu_getenv_number_default(const char *str, int defvalue);
/** StarPU 1.4's name of starpu_get_env_float_default(). */
float starpu_getenv_float_default(const char *str, float defvalue);
/**
 * The size in bytes the environment variable str gives: a number of KiB, or a
 * number with a suffix B, K, M, G or T (any case, optionally followed by B:
 * "4M", "4mb"); blanks are ignored. defval when str is unset or empty, or (said
 * in one line) when its value is no size or does not fit in an int.
 */
int starpu_get_env_size_default(const char *str, int defval);
/**
 * The position in strings (a NULL-terminated array) of the value of the
 * environment variable str, compared without case; defvalue when str is
 * unset, or (said in one line, with the accepted values) when its value is
 * none of them.
 */
int starpu_get_env_string_var_default(const char *str, const char *strings[], int defvalue);

/** Current time in microseconds (monotonic clock). */
double starpu_timing_now(void);
/** Sleeps for sec seconds. */
void starpu_sleep(float nb_sec);
/** Sleeps for nb_micro_sec microseconds. */
void starpu_usleep(float nb_micro_sec);

#ifdef STARPU_HAVE_HWLOC
/** The hwloc topology of the machine, as loaded by starpu_init() (NULL before and after): read it, do not change it.
 * (StarPU 1.4 declares it in starpu_helper.h, whose helpers live here.) */
hwloc_topology_t starpu_get_hwloc_topology(void);
#endif

/** The OS index of the processing unit of hwloc logical index logical_index (-1, said, before
 * starpu_init() or for a unit that does not exist). */
int starpu_get_pu_os_index(unsigned logical_index);
/** Prints on stdout where the runtime bound its threads: each worker's processing unit (logical
 * and OS index), then the program's threads bound with starpu_bind_thread_on(). (StarPU runs
 * hwloc-ps for it.) */
void starpu_display_bindings(void);

/** Calls func(arg) on every worker of the given type (where: STARPU_CPU ...), waiting until done. */
void starpu_execute_on_each_worker(void (*func)(void *), void *arg, uint32_t where);
/** Runs func(arg) once on each worker whose kind is in where (a STARPU_CPU|... mask), waiting for all; name labels the tasks. */
void starpu_execute_on_each_worker_ex(void (*func)(void *), void *arg, uint32_t where, const char *name);
/** Runs func(arg) on each of the num_workers workers listed in workers, waiting for all; name labels the tasks. */
void starpu_execute_on_specific_workers(void (*func)(void *), void *arg, unsigned num_workers, unsigned *workers, const char *name);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_UTIL_H__ */
