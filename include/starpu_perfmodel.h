/* Performance models of the StarPU API (the struct a codelet points to). */
#ifndef __STARPU_PERFMODEL_H__
#define __STARPU_PERFMODEL_H__

#include <stdint.h>
#include <stdio.h>
#include <starpu_config.h>

#ifdef __cplusplus
extern "C" {
#endif

struct starpu_task;
struct starpu_codelet;

/** Kinds of performance model. */
enum starpu_perfmodel_type
{
	STARPU_PERFMODEL_INVALID = 0,
	STARPU_PER_WORKER,
	STARPU_PER_ARCH,
	STARPU_COMMON,
	STARPU_HISTORY_BASED,
	STARPU_REGRESSION_BASED,
	STARPU_NL_REGRESSION_BASED,
	STARPU_MULTIPLE_REGRESSION_BASED
};

/** One processing-unit type of an architecture. */
struct starpu_perfmodel_device
{
	int type;
	int devid;
	int ncores;
};

/** An architecture a model keeps measurements for. */
struct starpu_perfmodel_arch
{
	int ndevices;
	struct starpu_perfmodel_device *devices;
};

struct _starpu_perfmodel_state;
typedef struct _starpu_perfmodel_state *starpu_perfmodel_state_t;

/** A performance model, usually a static struct named by its symbol. */
struct starpu_perfmodel
{
	enum starpu_perfmodel_type type;
	double (*cost_function)(struct starpu_task *, unsigned nimpl);
	double (*arch_cost_function)(struct starpu_task *, struct starpu_perfmodel_arch *arch, unsigned nimpl);
	double (*worker_cost_function)(struct starpu_task *, unsigned workerid, unsigned nimpl);
	size_t (*size_base)(struct starpu_task *, unsigned nimpl);
	uint32_t (*footprint)(struct starpu_task *);
	/** Name under which measurements are stored. */
	const char *symbol;
	unsigned is_loaded;
	unsigned benchmarking;
	unsigned is_init;
	void (*parameters)(struct starpu_task *task, double *parameters);
	const char **parameters_names;
	unsigned nparameters;
	unsigned **combinations;
	unsigned ncombinations;
	starpu_perfmodel_state_t state;
	void *reserved[8];
};

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_PERFMODEL_H__ */
