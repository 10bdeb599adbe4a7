/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * The heteroprio policy's set-up, kept by libastrolabe for the policy plugin
 * (schedulers/heteroprio): the application's starpu_heteroprio_set_* calls
 * (starpu_heteroprio.h) write it while the policy starts, the policy reads
 * it once they are done.
 *
 * In init_sched the policy calls astro_heteroprio_setup_open(), then the
 * application's callback (or astro_heteroprio_setup_default() without one),
 * then astro_heteroprio_setup_close(), which checks what the callback set
 * and gives the set-up the policy runs with. The set_* calls are refused
 * outside that window. astro_heteroprio_setup_release() ends it at deinit.
 */
#ifndef __ASTROLABE_HETEROPRIO_H__
#define __ASTROLABE_HETEROPRIO_H__

#include <starpu.h>
#include <starpu_heteroprio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** No architecture runs a bucket's tasks fastest: every worker looking at it takes them. */
#define ASTRO_HETEROPRIO_NO_FASTER_ARCH (-1)

/** One bucket. */
struct astro_heteroprio_bucket_setup
{
	/** Architectures (bit 1 << arch) that look at the bucket. */
	unsigned archs;
	/** The architecture that runs its tasks fastest, or ASTRO_HETEROPRIO_NO_FASTER_ARCH. */
	int faster_arch;
	/** How much slower each architecture is than the fastest (used only with a faster_arch). */
	float slow_factor[STARPU_NARCH];
};

/** The set-up of one context's heteroprio policy. */
struct astro_heteroprio_setup
{
	/** How many buckets workers of each architecture look at. */
	unsigned nb_prios[STARPU_NARCH];
	/** The buckets each architecture looks at, in order: mapping[arch][0] first. */
	unsigned mapping[STARPU_NARCH][STARPU_HETEROPRIO_MAX_PRIO];
	/** 1 where starpu_heteroprio_set_mapping() gave mapping[arch][i]. */
	unsigned char mapped[STARPU_NARCH][STARPU_HETEROPRIO_MAX_PRIO];
	struct astro_heteroprio_bucket_setup buckets[STARPU_HETEROPRIO_MAX_PRIO];
	/** 1 when starpu_heteroprio_set_use_locality() asked for the data locality mode. */
	unsigned char use_locality;
};

/** Opens ctx's set-up (empty: no architecture looks at any bucket) to the set_* calls. Returns 0, or -EBUSY if it is open already. */
int astro_heteroprio_setup_open(unsigned sched_ctx_id);

/** The default set-up, what heteroprio runs with when the application gives no callback: every architecture with workers looks at every bucket, bucket 0 first. */
void astro_heteroprio_setup_default(unsigned sched_ctx_id);

/**
 * Closes ctx's set-up to the set_* calls, checks it and copies it into
 * setup. Returns 0, or -EINVAL when it is inconsistent (an architecture
 * looks at a bucket it was given no mapping for, or at the same bucket
 * twice, or a mapping lies beyond its count): the error is printed and setup
 * holds the default set-up instead.
 */
int astro_heteroprio_setup_close(unsigned sched_ctx_id, struct astro_heteroprio_setup *setup);

/** The set-up ctx's heteroprio policy started with (after close; the automatic mode then changes its own copy). Returns 0, or -ENOENT when ctx runs no heteroprio policy. */
int astro_heteroprio_setup_get(unsigned sched_ctx_id, struct astro_heteroprio_setup *setup);

/**
 * The function starpu_heteroprio_print_wgroups() calls for ctx (the locality
 * mode's worker groups, printed by the policy, which knows them), with arg;
 * NULL removes it. Call it after astro_heteroprio_setup_close().
 */
void astro_heteroprio_setup_set_printer(unsigned sched_ctx_id, void (*print)(FILE *stream, void *arg), void *arg);

/** Forgets ctx's set-up (the policy's deinit_sched). */
void astro_heteroprio_setup_release(unsigned sched_ctx_id);

#ifdef __cplusplus
}
#endif

#endif /* __ASTROLABE_HETEROPRIO_H__ */
