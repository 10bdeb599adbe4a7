/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The API half of the heteroprio plugin: the policy's set-up
 * (astrolabe/heteroprio.h) and the application's calls that write it
 * (starpu_heteroprio.h). Built as this folder's libapi.la, they are in
 * libastrolabe, where applications link, in every build, whether the plugin
 * loads or not; the policy itself is heteroprio.c, whose head says where
 * every part of heteroprio lives.
 */
#include <errno.h>
#include <math.h>
#include <astrolabe/thread.h>
#include <stdlib.h>
#include <string.h>
#include <astrolabe/heteroprio.h>
#include <astrolabe/plugin.h>

enum setup_state
{
	SETUP_NONE,
	/* init_sched is running: the set_* calls write the set-up. */
	SETUP_OPEN,
	/* The policy runs with it. */
	SETUP_CLOSED,
};

struct setup_slot
{
	enum setup_state state;
	struct astro_heteroprio_setup setup;
	/* Prints the locality mode's worker groups (set by the policy). */
	void (*print)(FILE *stream, void *arg);
	void *print_arg;
};

/* Set-ups are written from the thread creating a context, read by tests; the lock is never on the task path. */
static starpu_pthread_mutex_t setups_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;
static struct setup_slot *setups[STARPU_NMAX_SCHED_CTXS];

#define HINT_CALLBACK "call it from the policy's callback (starpu_conf.sched_policy_callback, or STARPU_SCHED_CTX_POLICY_INIT of starpu_sched_ctx_create)"

static const char *arch_name(unsigned arch)
{
	const char *name = starpu_worker_get_type_as_string((enum starpu_worker_archtype)arch);
	return name ? name : "?";
}

static void setup_empty(struct astro_heteroprio_setup *setup)
{
	memset(setup, 0, sizeof(*setup));
	for (unsigned b = 0; b < STARPU_HETEROPRIO_MAX_PRIO; b++)
		setup->buckets[b].faster_arch = ASTRO_HETEROPRIO_NO_FASTER_ARCH;
}

static void setup_fill_default(struct astro_heteroprio_setup *setup)
{
	setup_empty(setup);
	for (unsigned arch = 0; arch < STARPU_NARCH; arch++)
	{
		if (starpu_worker_get_count_by_type((enum starpu_worker_archtype)arch) <= 0)
			continue;
		setup->nb_prios[arch] = STARPU_HETEROPRIO_MAX_PRIO;
		for (unsigned b = 0; b < STARPU_HETEROPRIO_MAX_PRIO; b++)
		{
			setup->mapping[arch][b] = b;
			setup->mapped[arch][b] = 1;
			setup->buckets[b].archs |= 1u << arch;
		}
	}
}

/*
 * The open set-up of sched_ctx_id for the set_* call fn with architecture
 * arch (-1: none) and bucket (-1: none), with setups_lock held; NULL (error
 * printed, lock released) when the call is refused.
 */
static struct astro_heteroprio_setup *open_setup(const char *fn, unsigned sched_ctx_id, long arch, long bucket)
{
	struct setup_slot *slot;

	if (arch >= STARPU_NARCH)
	{
		astro_log_error("heteroprio", "%s: %ld is no worker architecture (use STARPU_CPU_WORKER, STARPU_CUDA_WORKER, STARPU_OPENCL_WORKER...)", fn, arch);
		return NULL;
	}
	if (bucket >= STARPU_HETEROPRIO_MAX_PRIO)
	{
		astro_log_error("heteroprio", "%s: bucket %ld does not exist (buckets are 0 to %d, STARPU_HETEROPRIO_MAX_PRIO - 1)", fn, bucket, STARPU_HETEROPRIO_MAX_PRIO - 1);
		return NULL;
	}
	starpu_pthread_mutex_lock(&setups_lock);
	slot = sched_ctx_id < STARPU_NMAX_SCHED_CTXS ? setups[sched_ctx_id] : NULL;
	if (!slot || slot->state != SETUP_OPEN)
	{
		starpu_pthread_mutex_unlock(&setups_lock);
		if (slot)
			astro_log_error("heteroprio", "%s: context %u already runs its heteroprio policy, whose buckets are fixed: " HINT_CALLBACK, fn, sched_ctx_id);
		else
			astro_log_error("heteroprio", "%s: context %u is not starting a heteroprio policy: select it (STARPU_SCHED=heteroprio, or STARPU_SCHED_CTX_POLICY_NAME \"heteroprio\") and " HINT_CALLBACK, fn, sched_ctx_id);
		return NULL;
	}
	return &slot->setup;
}

void starpu_heteroprio_set_nb_prios(unsigned sched_ctx_id, enum starpu_worker_archtype arch, unsigned max_prio)
{
	struct astro_heteroprio_setup *setup;

	if (max_prio > STARPU_HETEROPRIO_MAX_PRIO)
	{
		astro_log_error("heteroprio", "%s: %u buckets asked, there are %d (STARPU_HETEROPRIO_MAX_PRIO)", __func__, max_prio, STARPU_HETEROPRIO_MAX_PRIO);
		return;
	}
	if (!(setup = open_setup(__func__, sched_ctx_id, (long)(unsigned)arch, -1)))
		return;
	setup->nb_prios[arch] = max_prio;
	starpu_pthread_mutex_unlock(&setups_lock);
}

void starpu_heteroprio_set_mapping(unsigned sched_ctx_id, enum starpu_worker_archtype arch, unsigned source_prio, unsigned dest_bucket_id)
{
	struct astro_heteroprio_setup *setup;

	if (source_prio >= STARPU_HETEROPRIO_MAX_PRIO)
	{
		astro_log_error("heteroprio", "%s: position %u is beyond the %d buckets an architecture may look at", __func__, source_prio, STARPU_HETEROPRIO_MAX_PRIO);
		return;
	}
	if (!(setup = open_setup(__func__, sched_ctx_id, (long)(unsigned)arch, dest_bucket_id)))
		return;
	if (setup->mapped[arch][source_prio])
	{
		/* The bucket given before: arch no longer looks at it from this position. */
		unsigned old = setup->mapping[arch][source_prio];
		int elsewhere = 0;

		for (unsigned i = 0; i < STARPU_HETEROPRIO_MAX_PRIO; i++)
			elsewhere |= i != source_prio && setup->mapped[arch][i] && setup->mapping[arch][i] == old;
		if (!elsewhere)
			setup->buckets[old].archs &= ~(1u << arch);
	}
	setup->mapping[arch][source_prio] = dest_bucket_id;
	setup->mapped[arch][source_prio] = 1;
	setup->buckets[dest_bucket_id].archs |= 1u << arch;
	starpu_pthread_mutex_unlock(&setups_lock);
}

void starpu_heteroprio_set_faster_arch(unsigned sched_ctx_id, enum starpu_worker_archtype arch, unsigned bucket_id)
{
	struct astro_heteroprio_setup *setup;

	if (!(setup = open_setup(__func__, sched_ctx_id, (long)(unsigned)arch, bucket_id)))
		return;
	setup->buckets[bucket_id].faster_arch = (int)arch;
	setup->buckets[bucket_id].slow_factor[arch] = 0;
	starpu_pthread_mutex_unlock(&setups_lock);
}

void starpu_heteroprio_set_arch_slow_factor(unsigned sched_ctx_id, enum starpu_worker_archtype arch, unsigned bucket_id, float slow_factor)
{
	struct astro_heteroprio_setup *setup;

	if (!(slow_factor >= 0.0f) || isinf(slow_factor))
	{
		astro_log_error("heteroprio", "%s: slow factor %g for bucket %u: it must be a finite number, 0 or more", __func__, (double)slow_factor, bucket_id);
		return;
	}
	if (!(setup = open_setup(__func__, sched_ctx_id, (long)(unsigned)arch, bucket_id)))
		return;
	setup->buckets[bucket_id].slow_factor[arch] = slow_factor;
	starpu_pthread_mutex_unlock(&setups_lock);
}

void starpu_heteroprio_set_use_locality(unsigned sched_ctx_id, unsigned use_locality)
{
	struct astro_heteroprio_setup *setup;

	if (use_locality > 1)
	{
		astro_log_error("heteroprio", "%s: %u is neither 0 nor 1", __func__, use_locality);
		return;
	}
	if (!(setup = open_setup(__func__, sched_ctx_id, -1, -1)))
		return;
	setup->use_locality = (unsigned char)use_locality;
	starpu_pthread_mutex_unlock(&setups_lock);
}

void starpu_heteroprio_map_wgroup_memory_nodes(unsigned sched_ctx_id)
{
	struct astro_heteroprio_setup *setup;
	int on;

	if (!(setup = open_setup(__func__, sched_ctx_id, -1, -1)))
		return;
	on = setup->use_locality;
	starpu_pthread_mutex_unlock(&setups_lock);
	/* The policy maps the groups to the memory nodes as it starts, from the buckets the callback set. */
	if (!on)
		astro_log_error("heteroprio", "%s (context %u): worker groups belong to the data locality mode, which is off: "
				"call starpu_heteroprio_set_use_locality(ctx, 1) first (or set STARPU_HETEROPRIO_USE_LA=1)", __func__, sched_ctx_id);
}

void starpu_heteroprio_print_wgroups(FILE *stream, unsigned sched_ctx_id)
{
	struct setup_slot *slot;

	starpu_pthread_mutex_lock(&setups_lock);
	slot = sched_ctx_id < STARPU_NMAX_SCHED_CTXS ? setups[sched_ctx_id] : NULL;
	if (slot && slot->print && stream)
	{
		slot->print(stream, slot->print_arg);
		starpu_pthread_mutex_unlock(&setups_lock);
		return;
	}
	starpu_pthread_mutex_unlock(&setups_lock);
	astro_log_error("heteroprio", "%s (context %u): %s", __func__, sched_ctx_id,
			!stream ? "no stream to print to" : "the context runs no heteroprio policy in the data locality mode "
			"(starpu_heteroprio_set_use_locality(ctx, 1) in its callback, or STARPU_HETEROPRIO_USE_LA=1)");
}

/* ----------------------------------------------------- the policy's side */

int astro_heteroprio_setup_open(unsigned sched_ctx_id)
{
	struct setup_slot *slot;

	if (sched_ctx_id >= STARPU_NMAX_SCHED_CTXS)
		return -EINVAL;
	starpu_pthread_mutex_lock(&setups_lock);
	slot = setups[sched_ctx_id];
	if (slot && slot->state == SETUP_OPEN)
	{
		starpu_pthread_mutex_unlock(&setups_lock);
		return -EBUSY;
	}
	if (!slot && !(slot = setups[sched_ctx_id] = malloc(sizeof(*slot))))
	{
		starpu_pthread_mutex_unlock(&setups_lock);
		return -ENOMEM;
	}
	slot->state = SETUP_OPEN;
	slot->print = NULL;
	slot->print_arg = NULL;
	setup_empty(&slot->setup);
	starpu_pthread_mutex_unlock(&setups_lock);
	return 0;
}

void astro_heteroprio_setup_default(unsigned sched_ctx_id)
{
	starpu_pthread_mutex_lock(&setups_lock);
	if (sched_ctx_id < STARPU_NMAX_SCHED_CTXS && setups[sched_ctx_id] && setups[sched_ctx_id]->state == SETUP_OPEN)
		setup_fill_default(&setups[sched_ctx_id]->setup);
	starpu_pthread_mutex_unlock(&setups_lock);
}

/* Why setup cannot run, in why; 0 when it can. */
static int setup_check(const struct astro_heteroprio_setup *setup, char *why, size_t len)
{
	for (unsigned arch = 0; arch < STARPU_NARCH; arch++)
	{
		unsigned char seen[STARPU_HETEROPRIO_MAX_PRIO] = { 0 };

		for (unsigned i = 0; i < STARPU_HETEROPRIO_MAX_PRIO; i++)
		{
			unsigned b = setup->mapping[arch][i];

			if (i < setup->nb_prios[arch] && !setup->mapped[arch][i])
			{
				snprintf(why, len, "%s workers look at %u buckets (starpu_heteroprio_set_nb_prios) but their bucket number %u was never given "
					 "(starpu_heteroprio_set_mapping(ctx, arch, %u, bucket))", arch_name(arch), setup->nb_prios[arch], i, i);
				return -EINVAL;
			}
			if (i >= setup->nb_prios[arch] && setup->mapped[arch][i])
			{
				snprintf(why, len, "%s workers were given bucket %u at position %u, beyond the %u buckets they look at (starpu_heteroprio_set_nb_prios)",
					 arch_name(arch), b, i, setup->nb_prios[arch]);
				return -EINVAL;
			}
			if (!setup->mapped[arch][i])
				continue;
			if (seen[b])
			{
				snprintf(why, len, "%s workers were given bucket %u twice (positions %u and %u)", arch_name(arch), b, seen[b] - 1u, i);
				return -EINVAL;
			}
			seen[b] = (unsigned char)(i + 1);
		}
	}
	return 0;
}

int astro_heteroprio_setup_close(unsigned sched_ctx_id, struct astro_heteroprio_setup *setup)
{
	char why[512];
	int ret;
	struct setup_slot *slot;

	starpu_pthread_mutex_lock(&setups_lock);
	slot = sched_ctx_id < STARPU_NMAX_SCHED_CTXS ? setups[sched_ctx_id] : NULL;
	if (!slot || slot->state != SETUP_OPEN)
	{
		starpu_pthread_mutex_unlock(&setups_lock);
		setup_fill_default(setup);
		return -ENOENT;
	}
	ret = setup_check(&slot->setup, why, sizeof(why));
	if (ret)
	{
		unsigned char use_locality = slot->setup.use_locality;

		setup_fill_default(&slot->setup);
		slot->setup.use_locality = use_locality;
	}
	slot->state = SETUP_CLOSED;
	*setup = slot->setup;
	starpu_pthread_mutex_unlock(&setups_lock);
	if (ret)
		astro_log_error("heteroprio", "context %u: the buckets set by the policy's callback cannot be used: %s; heteroprio uses its default "
				"(every architecture looks at every bucket, bucket 0 first)", sched_ctx_id, why);
	return ret;
}

int astro_heteroprio_setup_get(unsigned sched_ctx_id, struct astro_heteroprio_setup *setup)
{
	int ret = -ENOENT;

	starpu_pthread_mutex_lock(&setups_lock);
	if (sched_ctx_id < STARPU_NMAX_SCHED_CTXS && setups[sched_ctx_id] && setups[sched_ctx_id]->state == SETUP_CLOSED)
	{
		*setup = setups[sched_ctx_id]->setup;
		ret = 0;
	}
	starpu_pthread_mutex_unlock(&setups_lock);
	return ret;
}

void astro_heteroprio_setup_set_printer(unsigned sched_ctx_id, void (*print)(FILE *stream, void *arg), void *arg)
{
	starpu_pthread_mutex_lock(&setups_lock);
	if (sched_ctx_id < STARPU_NMAX_SCHED_CTXS && setups[sched_ctx_id])
	{
		setups[sched_ctx_id]->print = print;
		setups[sched_ctx_id]->print_arg = arg;
	}
	starpu_pthread_mutex_unlock(&setups_lock);
}

void astro_heteroprio_setup_release(unsigned sched_ctx_id)
{
	struct setup_slot *slot = NULL;

	starpu_pthread_mutex_lock(&setups_lock);
	if (sched_ctx_id < STARPU_NMAX_SCHED_CTXS)
	{
		slot = setups[sched_ctx_id];
		setups[sched_ctx_id] = NULL;
	}
	starpu_pthread_mutex_unlock(&setups_lock);
	free(slot);
}
