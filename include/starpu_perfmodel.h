/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * Performance models of the StarPU 1.4 API: the struct a codelet points to,
 * the architectures models are kept for, the history and regression data,
 * and the functions that load, feed, save and print models (models/).
 * All times are in µs.
 */
#ifndef __STARPU_PERFMODEL_H__
#define __STARPU_PERFMODEL_H__

#include <stdint.h>
#include <stdio.h>
#include <stddef.h>
#include <starpu_config.h>
/* Before starpu_worker.h, whose prototypes name it. */
struct starpu_task;
#include <starpu_worker.h>

#ifdef __cplusplus
extern "C" {
#endif

struct starpu_task;
struct starpu_codelet;

/** Kinds of performance model. */
enum starpu_perfmodel_type
{
	STARPU_PERFMODEL_INVALID = 0,
	STARPU_PER_WORKER,              /**< worker_cost_function(task, workerid, nimpl) */
	STARPU_PER_ARCH,                /**< arch_cost_function, or the per-devices functions */
	STARPU_COMMON,                  /**< cost_function(task, nimpl) / the arch's relative speedup */
	STARPU_HISTORY_BASED,           /**< the mean of past executions with the same footprint */
	STARPU_REGRESSION_BASED,        /**< alpha·size^beta, fitted on-line */
	STARPU_NL_REGRESSION_BASED,     /**< a·size^b + c, fitted when the model is saved */
	STARPU_MULTIPLE_REGRESSION_BASED /**< coeff[0] + sum_i coeff[i+1]·prod_k param[k]^combinations[i][k], fitted (least squares) when saved */
};

/** One processing-unit type of an architecture. */
struct starpu_perfmodel_device
{
	enum starpu_worker_archtype type;
	int devid;
	int ncores;
};

/** An architecture a model keeps measurements for (a "combination" of devices). */
struct starpu_perfmodel_arch
{
	int ndevices;
	struct starpu_perfmodel_device *devices;
};

/** One footprint's measurements. */
struct starpu_perfmodel_history_entry
{
	double mean;
	double deviation;               /**< population standard deviation */
	double sum;
	double sum2;
	unsigned nsample;
	unsigned nerror;                /**< samples rejected as outliers (not saved) */
	uint32_t footprint;
	size_t size;
	double flops;
	double duration;
	uint64_t tag;
	double *parameters;
};

/** The entries of one architecture, in file order. */
struct starpu_perfmodel_history_list
{
	struct starpu_perfmodel_history_list *next;
	struct starpu_perfmodel_history_entry *entry;
};

struct starpu_perfmodel_history_table;

/** Regression state of one architecture: running log-log sums and fitted parameters. */
struct starpu_perfmodel_regression_model
{
	double sumlny;
	double sumlnx;
	double sumlnx2;
	unsigned long minx;
	unsigned long maxx;
	double sumlnxlny;
	double alpha;
	double beta;
	unsigned valid;
	double a, b, c;
	unsigned nl_valid;
	unsigned nsample;
	double *coeff;
	unsigned ncoeff;
	unsigned multi_valid;
};

typedef double (*starpu_perfmodel_per_arch_cost_function)(struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned nimpl);
typedef size_t (*starpu_perfmodel_per_arch_size_base)(struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned nimpl);

/** What a model knows for one architecture and implementation. */
struct starpu_perfmodel_per_arch
{
	starpu_perfmodel_per_arch_cost_function cost_function;
	starpu_perfmodel_per_arch_size_base size_base;
	struct starpu_perfmodel_history_table *history;
	struct starpu_perfmodel_history_list *list;
	struct starpu_perfmodel_regression_model regression;
	char debug_path[256];
};

struct _starpu_perfmodel_state;
typedef struct _starpu_perfmodel_state *starpu_perfmodel_state_t;

/** A performance model, usually a zero-initialised static struct naming its type and symbol. */
struct starpu_perfmodel
{
	enum starpu_perfmodel_type type;
	double (*cost_function)(struct starpu_task *, unsigned nimpl);
	double (*arch_cost_function)(struct starpu_task *, struct starpu_perfmodel_arch *arch, unsigned nimpl);
	double (*worker_cost_function)(struct starpu_task *, unsigned workerid, unsigned nimpl);
	size_t (*size_base)(struct starpu_task *, unsigned nimpl);
	uint32_t (*footprint)(struct starpu_task *);
	/** Name under which measurements are stored (required by history and regression models). */
	const char *symbol;
	/** The file the model was loaded from (set by the runtime). */
	char *path;
	unsigned is_loaded;
	/** Non-zero while executions are recorded into the model (STARPU_CALIBRATE at load, or forced). */
	unsigned benchmarking;
	unsigned is_init;
	void (*parameters)(struct starpu_task *task, double *parameters);
	const char **parameters_names;
	unsigned nparameters;
	unsigned **combinations;
	unsigned ncombinations;
	starpu_perfmodel_state_t state;
};

/** Prepares model (idempotent; needs no file access). */
void starpu_perfmodel_init(struct starpu_perfmodel *model);
/** Frees what the runtime holds for model (it may be initialised again). Returns 0. */
int starpu_perfmodel_deinit(struct starpu_perfmodel *model);
/** Loads the model file filename into model. Returns 0, or -ENOENT / -EINVAL (with a message). */
int starpu_perfmodel_load_file(const char *filename, struct starpu_perfmodel *model);
/** Finds the file of symbol (STARPU_PERF_MODEL_DIR, $STARPU_HOME/.starpu/sampling, STARPU_PERF_MODEL_PATH) and loads it. Returns 0, or 1 if there is none. */
int starpu_perfmodel_load_symbol(const char *symbol, struct starpu_perfmodel *model);
/** Undoes starpu_perfmodel_load_symbol(): frees the symbol it copied and the model's data. */
int starpu_perfmodel_unload_model(struct starpu_perfmodel *model);
/** Saves model now (merged with what the file holds, under a lock, atomically). */
void starpu_save_history_based_model(struct starpu_perfmodel *model);
/** The path of symbol's existing model file, or "" when there is none. */
void starpu_perfmodel_get_model_path(const char *symbol, char *path, size_t maxlen);
/** Prints the directories searched for model files, one per line. */
void starpu_perfmodel_directory(FILE *output);
/** Lists the model files: "codelet directory: <dir>" for each directory searched, then "file: <name>" per file. Returns 0, or -errno. */
int starpu_perfmodel_list(FILE *output);
/** Prints what model holds for arch and impl nimpl as starpu_perfmodel_display does: a header, the regressions and the
 *  history table; or only parameter ("a", "b", "c", "alpha", "beta", "mean", "stddev", "path-file-debug"); only the
 *  entries of *footprint when footprint is not NULL. */
void starpu_perfmodel_print(struct starpu_perfmodel *model, struct starpu_perfmodel_arch *arch, unsigned nimpl, char *parameter, uint32_t *footprint, FILE *output);
/** starpu_perfmodel_print() for every combination and implementation of model, or only those of arch ("cpu", "cpu:K",
 *  "cuda", "cudaN", "cuda_N", ...). Returns 0, or -EINVAL (one message) for an unknown arch or parameter. */
int starpu_perfmodel_print_all(struct starpu_perfmodel *model, char *arch, char *parameter, uint32_t *footprint, FILE *output);
/** Prints, for each worker, the implementation-0 history mean of footprint on its architecture ("inf" when unknown), space separated. Returns 0. */
int starpu_perfmodel_print_estimations(struct starpu_perfmodel *model, uint32_t footprint, FILE *output);
/** Prints "Model <symbol>" and the combinations (devices) model has data for. Returns 0. */
int starpu_perfmodel_list_combs(FILE *output, struct starpu_perfmodel *model);
/** Writes model as XML (StarPU's starpu-perfmodel.dtd). */
void starpu_perfmodel_dump_xml(FILE *output, struct starpu_perfmodel *model);

/** The architecture of workerid (NULL for an unknown worker). */
struct starpu_perfmodel_arch *starpu_worker_get_perf_archtype(int workerid, unsigned sched_ctx_id);
/** Number of architecture combinations known to the process. */
int starpu_perfmodel_get_narch_combs(void);
/** Adds (or finds) the combination of these devices; returns its id, or -ENOSPC / -EINVAL. */
int starpu_perfmodel_arch_comb_add(int ndevices, struct starpu_perfmodel_device *devices);
/** The id of the combination of these devices, -1 if none. */
int starpu_perfmodel_arch_comb_get(int ndevices, struct starpu_perfmodel_device *devices);
/** The architecture of combination comb, NULL if none. */
struct starpu_perfmodel_arch *starpu_perfmodel_arch_comb_fetch(int comb);
/** What model holds for arch and impl (created empty when absent; NULL on bad arguments). */
struct starpu_perfmodel_per_arch *starpu_perfmodel_get_model_per_arch(struct starpu_perfmodel *model, struct starpu_perfmodel_arch *arch, unsigned impl);
/** As starpu_perfmodel_get_model_per_arch() for the devices given as (type, devid, ncores) triples ended by -1. */
struct starpu_perfmodel_per_arch *starpu_perfmodel_get_model_per_devices(struct starpu_perfmodel *model, int impl, ...);
/** Sets the cost function of a STARPU_PER_ARCH model for the devices given as (type, devid, ncores) triples ended by -1. Returns 0 or -EINVAL. */
int starpu_perfmodel_set_per_devices_cost_function(struct starpu_perfmodel *model, int impl, starpu_perfmodel_per_arch_cost_function func, ...);
/** Sets the size function for the devices given as (type, devid, ncores) triples ended by -1. Returns 0 or -EINVAL. */
int starpu_perfmodel_set_per_devices_size_base(struct starpu_perfmodel *model, int impl, starpu_perfmodel_per_arch_size_base func, ...);
/** "cpu", "cuda", "opencl", ... */
const char *starpu_perfmodel_get_archtype_name(enum starpu_worker_archtype archtype);
/** "cpu0_impl0 (Comb0)": the name of arch and implementation nimpl. */
void starpu_perfmodel_get_arch_name(struct starpu_perfmodel_arch *arch, char *archname, size_t maxlen, unsigned nimpl);
/** Prints on f the files that keep the bus figures of this host ("bandwidth: " and the path, then latency and config,
 * one a line): bus/HOST.KIND in the sampling directory. They exist once a run with a device (or STARPU_USE_NUMA=1 on
 * several NUMA nodes) measured the bus. */
void starpu_bus_print_filenames(FILE *f);
/** Prints on f the bus bandwidth (MB/s) and latency (us) between each pair of memory nodes, one row per
 * source node ("-" where nothing was measured). Refused, with a message, before starpu_init(). */
void starpu_bus_print_bandwidth(FILE *f);
/** Prints on f, for each device, the main-memory (NUMA) nodes from the best connected to it (highest
 * measured bandwidth both ways) to the worst. Refused, with a message, before starpu_init(). */
void starpu_bus_print_affinity(FILE *f);
/** Bandwidth (MB/s) from memory node src_node to dst_node, measured on the transfers seen so far. */
double starpu_transfer_bandwidth(unsigned src_node, unsigned dst_node);
/** Latency (µs) of a transfer from src_node to dst_node. */
double starpu_transfer_latency(unsigned src_node, unsigned dst_node);
/** Predicted time (µs) to move size bytes from src_node to dst_node (through main memory between two devices). */
double starpu_transfer_predict(unsigned src_node, unsigned dst_node, size_t size);
/** The mean time recorded for footprint in a history-based model on arch, NaN when none was recorded. */
double starpu_perfmodel_history_based_expected_perf(struct starpu_perfmodel *model, struct starpu_perfmodel_arch *arch, uint32_t footprint);
/** Records one execution of task on arch (µs), as calibration does; the model is then saved at shutdown. */
void starpu_perfmodel_update_history(struct starpu_perfmodel *model, struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned cpuid, unsigned nimpl, double measured);
/** Records number executions whose mean is average_measured. */
void starpu_perfmodel_update_history_n(struct starpu_perfmodel *model, struct starpu_task *task, struct starpu_perfmodel_arch *arch, unsigned cpuid, unsigned nimpl, double average_measured, unsigned number);

/** StarPU's debug file of model on arch and implementation nimpl: "<dir>/debug/<symbol>.<host><arch name>" (this runtime writes none). */
void starpu_perfmodel_debugfilepath(struct starpu_perfmodel *model, struct starpu_perfmodel_arch *arch, char *path, size_t maxlen, unsigned nimpl);
/** For tools that read models without starpu_init(): nothing to prepare here, kept for StarPU programs. */
void starpu_perfmodel_initialize(void);
/** Frees the data of every model loaded or initialised (not saved); a model used again is reloaded. */
void starpu_perfmodel_free_sampling(void);

/**
 * Starts measuring the energy of workerid (-1: all CPU workers, which CPU
 * energy needs: the packages' energy cannot be told apart per worker) of
 * type archi, with the energy meter a plugin registered (counters_energy:
 * Linux powercap, PAPI's powercap or rapl component). Returns 0; -ENODEV
 * with an error line when nothing measures energy here or for archi;
 * -EINVAL for a CPU workerid other than -1.
 */
int starpu_energy_start(int workerid, enum starpu_worker_archtype archi);
/**
 * Records the energy measured since starpu_energy_start() as ntasks
 * executions of task (a specimen: its footprint) in model, each of
 * energy / ntasks Joules, on the architecture of archi's first worker.
 * Returns 0; -EINVAL (no model, task or ntasks, no measurement started,
 * workerid not -1 for CPUs) or -ENODEV (nothing measures energy), each with
 * an error line.
 */
int starpu_energy_stop(struct starpu_perfmodel *model, struct starpu_task *task, unsigned nimpl, unsigned ntasks, int workerid, enum starpu_worker_archtype archi);

/** A PER_ARCH model that predicts 1e-6 µs, for tasks that do nothing. */
extern struct starpu_perfmodel starpu_perfmodel_nop;

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_PERFMODEL_H__ */
