/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * libms_common's interface (libmeasure 0.7, the EXCESS project's measuring
 * library, whose tool is hettime), as libms_common_apapi offers it: the same
 * calls, flags and result fields, measured with APAPI (PAPI components
 * sampled by a timer thread) instead of libmeasure's drivers.
 *
 * A program measures this way:
 *
 *     MS_VERSION v = { MS_MAJOR_VERSION, MS_MINOR_VERSION, MS_REVISION_VERSION };
 *     MS_SYSTEM *ms = ms_init(&v, CPU_GOVERNOR_ONDEMAND, 0, 0, GPU_FREQUENCY_CUR,
 *                             IPMI_SET_TIMEOUT, SKIP_PERIODIC, VARIANT_FULL);
 *     MS_LIST *m = ms_alloc_measurement(ms);
 *     ms_set_timer(m, CPU, 0, 100000000, 10);    // sample every 100 ms
 *     ms_init_measurement(ms, m, ALL);
 *     ms_start_measurement(ms);
 *     ...                                        // the work measured
 *     ms_stop_measurement(ms);
 *     ms_join_measurement(ms);                   // the results are in m from here
 *     printf("%f Ws\n", cpu_energy_total_pkg(m, 0));
 *     ms_fini_measurement(ms);
 *     ms_free_measurement(m);
 *     ms_fini(ms);
 *
 * Each resource is measured by one PAPI component: CPU by rapl, GPU by nvml,
 * FPGA by maxeler, SYSTEM by ipmi, MIC by micknc. APAPI_CMPLIST chooses a
 * subset of them (any other component it names is said and left out);
 * APAPI_EVENTLIST and APAPI_EVENTOPS choose the events and how they are
 * computed, as for atime. MS_SYSTEM's config says which resources are
 * measured here: a resource whose component PAPI lacks or disables (no RAPL
 * access, no NVIDIA driver) is not, said once; its results stay 0 and the
 * runtimes still give the measured time.
 *
 * Units, as libmeasure's: in the structures, energies in mWs, powers in mW,
 * runtimes in s; the query functions (cpu_energy_total_pkg()...) return Ws,
 * W and s. Bad calls (a NULL system or list, an unknown resource flag, calls
 * out of order) print one line on stderr naming the problem and the right
 * call, and do nothing else.
 */
#ifndef __MS_MEASUREMENT_H__
#define __MS_MEASUREMENT_H__

#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The libmeasure version whose interface this is; ms_init() refuses another major.minor. */
#define MS_MAJOR_VERSION 0
#define MS_MINOR_VERSION 7
#define MS_REVISION_VERSION 4
#define MS_VERSION_STRING "0.7.4"

typedef struct __ms_version
{
	uint32_t major;
	uint32_t minor;
	uint32_t revision;
} MS_VERSION;

/** Resource flags (ms_set_timer(), ms_init_measurement(), getMeasurement()). */
#define CPU 0x01
#define GPU 0x02
#define FPGA 0x04
#define SYSTEM 0x08
#define MIC 0x10
#define ALL (CPU | GPU | FPGA | SYSTEM | MIC)

/** The measurement of each resource, one list node each. */
typedef struct __ms_list
{
	int32_t resource_id;
	void *ms_measurement;
	struct __ms_list *next;
} MS_LIST;

/** Adds the measurement of resource id to *ms_list (once). */
void appendList(MS_LIST **ms_list, int id);
/** The measurement structure of resource id (MS_MEASUREMENT_CPU... as id says), or NULL. */
void *getMeasurement(MS_LIST **ms_list, int id);
/** Frees the list and its measurements. */
void deleteList(MS_LIST **ms_list);

/** Settings libmeasure applies to the machine; libms_common_apapi only measures (see ms_init()). */
enum cpu_governor
{
	CPU_GOVERNOR_POWERSAVE,
	CPU_GOVERNOR_ONDEMAND,
	CPU_GOVERNOR_CONSERVATIVE,
	CPU_GOVERNOR_PERFORMANCE,
	CPU_GOVERNORS
};

enum gpu_frequency
{
	GPU_FREQUENCY_MIN,
	GPU_FREQUENCY_CUR,
	GPU_FREQUENCY_MAX,
	GPU_FREQUENCIES
};

enum ipmi_timeout_setting
{
	IPMI_SET_TIMEOUT,
	IPMI_SET_AND_LOCK_TIMEOUT,
	IPMI_TIMEOUT_SETTINGS
};

enum skip_ms_rate
{
	SKIP_PERIODIC,
	SKIP_NEVER,
	SKIP_MS_RATES
};

enum lib_variant
{
	VARIANT_LIGHT,
	VARIANT_FULL,
	VARIANTS
};

/** Which resources this machine measures (set by ms_init()). */
typedef struct __ms_config
{
	int32_t cpu_enabled;
	int32_t gpu_enabled;
	int32_t fpga_enabled;
	int32_t mic_enabled;
	int32_t sys_enabled;
} MS_CONFIG;

typedef struct __ms_system
{
	void *mgmt;
	MS_CONFIG *config;
} MS_SYSTEM;

/* ------------------------------------------------------------ results */

/** CPU packages measured (rapl:::..._ENERGY:PACKAGEn, n below CPUS). */
#define CPUS 2
/** Power domains of a package: msr_energy_acc[package][PKG]... */
enum msr_power
{
	PKG,
	PP0,
	DRAM
};

typedef struct __ms_measurement_cpu
{
	struct timespec msr_time_wait;  /**< the sampling interval (ms_set_timer()) */
	double msr_time_runtime;     /**< s */
	double msr_power_cur[CPUS][3];
	double msr_power_avg[CPUS][3];
	double msr_energy_acc[CPUS][3];
} MS_MEASUREMENT_CPU;

typedef struct __ms_measurement_gpu
{
	struct timespec nvml_time_wait;
	double nvml_time_runtime;
	uint32_t nvml_power_cur;
	double nvml_power_avg;
	double nvml_energy_acc;
} MS_MEASUREMENT_GPU;

/** The FPGA's total is [POWER] (maxeler's power usage), the sum of its energy events. */
enum fpga_power
{
	VCC1V0_CORE,
	VCC1V5_DDR,
	VCC2V5_AUX,
	IMGT_1V0,
	IMGT_1V2,
	MGT_1V0,
	MGT_1V2,
	POWER,
	MAX_NUM_POWER
};

typedef struct __ms_measurement_fpga
{
	struct timespec maxeler_time_wait;
	double maxeler_time_runtime;
	double maxeler_power_cur[MAX_NUM_POWER];
	double maxeler_power_avg[MAX_NUM_POWER];
	double maxeler_energy_acc[MAX_NUM_POWER];
} MS_MEASUREMENT_FPGA;

/** The MIC's total is [MIC_POWER], the sum of its energy events. */
enum mic_power
{
	MIC_PCIE,
	MIC_C2X3,
	MIC_C2X4,
	MIC_VCCP,
	MIC_VDDG,
	MIC_VDDQ,
	MIC_POWER,
	MIC_NUM_POWER
};

typedef struct __ms_measurement_mic
{
	struct timespec mic_time_wait;
	double mic_time_runtime;
	uint32_t mic_power_cur[MIC_NUM_POWER];
	double mic_power_avg[MIC_NUM_POWER];
	double mic_energy_acc[MIC_NUM_POWER];
} MS_MEASUREMENT_MIC;

typedef struct __ms_measurement_sys
{
	struct timespec ipmi_time_wait;
	double ipmi_time_runtime;
	uint32_t ipmi_power_server_cur;
	double ipmi_power_server_avg;
	uint32_t ipmi_energy_server_acc;
} MS_MEASUREMENT_SYS;

/* ---------------------------------------------------------- the calls */

/**
 * Starts the library for a program built against version (another
 * major.minor: NULL and a message). libmeasure sets the CPU governor and
 * frequencies, the GPU frequency and the IPMI timeout; this library only
 * measures: any setting but CPU_GOVERNOR_ONDEMAND, 0, 0 and
 * GPU_FREQUENCY_CUR is said to be left as the machine has it. Finds which
 * resources can be measured (config). NULL on error, with a message.
 */
MS_SYSTEM *ms_init(MS_VERSION *version, enum cpu_governor cpu_gov, uint64_t cpu_freq_min, uint64_t cpu_freq_max,
		   enum gpu_frequency gpu_freq, enum ipmi_timeout_setting timeout_setting, enum skip_ms_rate skip_ms,
		   enum lib_variant variant);
void ms_fini(MS_SYSTEM *ms_system);

/** A list with a measurement of each resource (results 0, intervals 100 ms). */
MS_LIST *ms_alloc_measurement(MS_SYSTEM *ms_system);
void ms_free_measurement(MS_LIST *ms_list);

/**
 * Sets the sampling interval of resource flag (one of CPU, GPU, FPGA,
 * SYSTEM, MIC) to sec s + nsec ns. check_for_exit_interrupts is libmeasure's
 * way of waking its threads at stop; APAPI's timer thread is woken at once,
 * so it is accepted and not needed.
 */
void ms_set_timer(MS_LIST *ms_list, int flag, uint64_t sec, uint64_t nsec, uint32_t check_for_exit_interrupts);

/** Prepares the measurement of the resources of flags (those config enables) into ms_list. */
void ms_init_measurement(MS_SYSTEM *ms_system, MS_LIST *ms_list, int flags);
/** Frees what ms_init_measurement() prepared; the results stay in the list. */
void ms_fini_measurement(MS_SYSTEM *ms_system);
/** Takes the first samples and starts the timer thread. */
void ms_start_measurement(MS_SYSTEM *ms_system);
/** Asks the timer thread to take the last samples and stop. */
void ms_stop_measurement(MS_SYSTEM *ms_system);
/** Waits for the timer thread and writes the results into the list. */
void ms_join_measurement(MS_SYSTEM *ms_system);

/* Results, from the list once ms_join_measurement() returned: Ws, W, s. */
double cpu_time_total(MS_LIST *ms_list);
double cpu_energy_total_pkg(MS_LIST *ms_list, int cpu);
double cpu_energy_total_pp0(MS_LIST *ms_list, int cpu);
double cpu_energy_total_dram(MS_LIST *ms_list, int cpu);
double cpu_power_avg_pkg(MS_LIST *ms_list, int cpu);
double cpu_power_avg_pp0(MS_LIST *ms_list, int cpu);
double cpu_power_avg_dram(MS_LIST *ms_list, int cpu);
double gpu_time_total(MS_LIST *ms_list);
double gpu_energy_total(MS_LIST *ms_list);
double gpu_power_avg(MS_LIST *ms_list);
double fpga_time_total(MS_LIST *ms_list);
double fpga_energy_total_power_usage(MS_LIST *ms_list);
double fpga_power_avg_power_usage(MS_LIST *ms_list);
double mic_time_total(MS_LIST *ms_list);
double mic_energy_total_power_usage(MS_LIST *ms_list);
double mic_power_avg_power_usage(MS_LIST *ms_list);
double system_time_total(MS_LIST *ms_list);
double system_energy_total(MS_LIST *ms_list);
double system_power_avg(MS_LIST *ms_list);

#ifdef __cplusplus
}
#endif

#endif /* __MS_MEASUREMENT_H__ */
