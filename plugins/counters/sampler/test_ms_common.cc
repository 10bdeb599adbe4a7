// SPDX-License-Identifier: LGPL-2.1-or-later
// libms_common_apapi (libmeasure's interface over APAPI) and hettime: the
// calls on this machine (init, start, stop, join, results, bad input), the
// mapping of APAPI's statistics to libmeasure's results with known samples,
// and hettime run as a user would.
#include "helpers.h"

#include "ms_common_apapi.h"

#include <cmath>

using namespace astro_test;

namespace {

MS_VERSION this_version()
{
	return MS_VERSION{ MS_MAJOR_VERSION, MS_MINOR_VERSION, MS_REVISION_VERSION };
}

MS_SYSTEM *init_default()
{
	MS_VERSION v = this_version();
	return ms_init(&v, CPU_GOVERNOR_ONDEMAND, 0, 0, GPU_FREQUENCY_CUR, IPMI_SET_TIMEOUT, SKIP_PERIODIC, VARIANT_FULL);
}

bool any_enabled(const MS_SYSTEM *ms)
{
	const MS_CONFIG *c = ms->config;
	return c->cpu_enabled || c->gpu_enabled || c->fpga_enabled || c->mic_enabled || c->sys_enabled;
}

size_t count_of(const std::string &text, const std::string &what)
{
	size_t n = 0;
	for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
		n++;
	return n;
}

class MsCommon : public ::testing::Test
{
protected:
	ScopedEnv cmps_{"APAPI_CMPLIST", nullptr};
	ScopedEnv verbose_{"APAPI_VERBOSE", nullptr};
	ScopedEnv softfail_{"APAPI_SOFTFAIL", nullptr};
	ScopedEnv datadir_{"ASTROLABE_SAMPLER_DATADIR", SAMPLER_SRCDIR};
};

// The whole cycle on this machine: whatever it can measure, the time is there, the same for every resource, and the
// results of a resource it cannot measure are 0.
TEST_F(MsCommon, InitStartStopJoinGivesTheTime)
{
	MS_SYSTEM *ms = nullptr;
	std::string err = stderr_of([&] { ms = init_default(); });
	ASSERT_NE(ms, nullptr) << err;
	ASSERT_NE(ms->config, nullptr);
	MS_LIST *m = ms_alloc_measurement(ms);
	ASSERT_NE(m, nullptr);
	for (int flag : { CPU, GPU, FPGA, SYSTEM, MIC })
		EXPECT_NE(getMeasurement(&m, flag), nullptr) << flag;
	ms_set_timer(m, CPU, 0, 10000000, 10);
	ms_init_measurement(ms, m, ALL);
	ms_start_measurement(ms);
	volatile double x = 0;
	for (int i = 0; i < 2000000; i++)
		x = x + std::sqrt((double)i);
	ms_stop_measurement(ms);
	ms_join_measurement(ms);
	double t = cpu_time_total(m);
	EXPECT_GT(t, 0.0);
	EXPECT_EQ(gpu_time_total(m), t);
	EXPECT_EQ(fpga_time_total(m), t);
	EXPECT_EQ(mic_time_total(m), t);
	EXPECT_EQ(system_time_total(m), t);
	if (!ms->config->cpu_enabled) {
		EXPECT_EQ(cpu_energy_total_pkg(m, 0), 0.0);
		EXPECT_EQ(cpu_power_avg_pkg(m, 0), 0.0);
	} else {
		EXPECT_GE(cpu_energy_total_pkg(m, 0), 0.0);
	}
	if (!ms->config->gpu_enabled) {
		EXPECT_EQ(gpu_energy_total(m), 0.0);
	}
	// A second measurement with the same list: fresh results, the interval kept.
	ms_fini_measurement(ms);
	ms_init_measurement(ms, m, CPU);
	ms_start_measurement(ms);
	ms_stop_measurement(ms);
	ms_join_measurement(ms);
	EXPECT_GT(cpu_time_total(m), 0.0);
	const MS_MEASUREMENT_CPU *cpu = (const MS_MEASUREMENT_CPU *)getMeasurement(&m, CPU);
	EXPECT_EQ(cpu->msr_time_wait.tv_sec, 0);
	EXPECT_EQ(cpu->msr_time_wait.tv_nsec, 10000000);
	ms_fini_measurement(ms);
	ms_free_measurement(m);
	ms_fini(ms);
}

// No energy counter (no RAPL access, no NVML...): one short note at ms_init(), nothing more during the measurement.
TEST_F(MsCommon, NoEnergyCounterIsSaidOnce)
{
	MS_SYSTEM *ms = nullptr;
	MS_LIST *m = nullptr;
	std::string err = stderr_of([&] {
		ms = init_default();
		m = ms_alloc_measurement(ms);
		ms_init_measurement(ms, m, ALL);
		ms_start_measurement(ms);
		ms_stop_measurement(ms);
		ms_join_measurement(ms);
		ms_fini_measurement(ms);
	});
	ASSERT_NE(ms, nullptr);
	if (any_enabled(ms)) {
		EXPECT_EQ(count_of(err, "no energy counter"), 0u) << err;
	} else {
		EXPECT_EQ(count_of(err, "note: libms_common_apapi: no energy counter on this machine: only the time is measured"), 1u) << err;
		EXPECT_EQ(count_of(err, "energy"), 1u) << err;
		EXPECT_FALSE(contains(err, "error")) << err;
	}
	ms_free_measurement(m);
	ms_fini(ms);

	// APAPI_SOFTFAIL hides it.
	ScopedEnv soft("APAPI_SOFTFAIL", "1");
	err = stderr_of([&] { ms = init_default(); });
	ASSERT_NE(ms, nullptr);
	EXPECT_FALSE(contains(err, "no energy counter")) << err;
	ms_fini(ms);
}

// APAPI_CMPLIST chooses among libmeasure's components only: the others are named and left out.
TEST_F(MsCommon, CmplistIsASubsetOfTheResources)
{
	ScopedEnv cmps("APAPI_CMPLIST", "nvml:astrolabe:perf_event");
	MS_SYSTEM *ms = nullptr;
	std::string err = stderr_of([&] { ms = init_default(); });
	ASSERT_NE(ms, nullptr);
	EXPECT_TRUE(contains(err, "APAPI_CMPLIST names astrolabe, perf_event: libms_common measures only the components "
				  "rapl, nvml, maxeler, ipmi, micknc")) << err;
	// rapl, maxeler, ipmi, micknc were not asked for: never measured, whatever the machine has.
	EXPECT_EQ(ms->config->cpu_enabled, 0);
	EXPECT_EQ(ms->config->fpga_enabled, 0);
	EXPECT_EQ(ms->config->sys_enabled, 0);
	EXPECT_EQ(ms->config->mic_enabled, 0);
	ms_fini(ms);
	EXPECT_EQ(ms_apapi_resource_of("rapl"), CPU);
	EXPECT_EQ(ms_apapi_resource_of("nvml"), GPU);
	EXPECT_EQ(ms_apapi_resource_of("maxeler"), FPGA);
	EXPECT_EQ(ms_apapi_resource_of("ipmi"), SYSTEM);
	EXPECT_EQ(ms_apapi_resource_of("micknc"), MIC);
	EXPECT_EQ(ms_apapi_resource_of("astrolabe"), 0);
}

TEST_F(MsCommon, BadInputIsRefusedWithAMessage)
{
	MS_SYSTEM *ms = nullptr;
	MS_VERSION old = { 0, 6, 0 };
	std::string err = stderr_of([&] {
		ms = ms_init(&old, CPU_GOVERNOR_ONDEMAND, 0, 0, GPU_FREQUENCY_CUR, IPMI_SET_TIMEOUT, SKIP_PERIODIC, VARIANT_FULL);
	});
	EXPECT_EQ(ms, nullptr);
	EXPECT_TRUE(contains(err, "built for libmeasure 0.6.0, this library offers 0.7.4")) << err;
	err = stderr_of([&] { ms = ms_init(nullptr, CPU_GOVERNOR_ONDEMAND, 0, 0, GPU_FREQUENCY_CUR, IPMI_SET_TIMEOUT, SKIP_PERIODIC, VARIANT_FULL); });
	EXPECT_EQ(ms, nullptr);
	EXPECT_TRUE(contains(err, "NULL version")) << err;
	MS_VERSION v = this_version();
	err = stderr_of([&] { ms = ms_init(&v, (cpu_governor)9, 0, 0, GPU_FREQUENCY_CUR, IPMI_SET_TIMEOUT, SKIP_PERIODIC, VARIANT_FULL); });
	EXPECT_EQ(ms, nullptr);
	EXPECT_TRUE(contains(err, "out of its enum")) << err;
	{
		ScopedEnv ops("APAPI_EVENTOPS", "/nonexistent/ops.txt");
		err = stderr_of([&] { ms = init_default(); });
		EXPECT_EQ(ms, nullptr);
		EXPECT_TRUE(contains(err, "/nonexistent/ops.txt")) << err;
	}

	// Settings of the machine: said, not applied; the library still measures.
	err = stderr_of([&] { ms = ms_init(&v, CPU_GOVERNOR_PERFORMANCE, 0, 2000000, GPU_FREQUENCY_MAX, IPMI_SET_TIMEOUT, SKIP_PERIODIC, VARIANT_FULL); });
	ASSERT_NE(ms, nullptr);
	EXPECT_TRUE(contains(err, "it only measures: the CPU governor and frequencies and the GPU frequency asked for are left")) << err;

	MS_LIST *m = ms_alloc_measurement(ms);
	err = stderr_of([&] { ms_set_timer(m, 0x40, 0, 1000, 10); });
	EXPECT_TRUE(contains(err, "ms_set_timer: unknown resource flag")) << err;
	err = stderr_of([&] { ms_set_timer(nullptr, CPU, 0, 1000, 10); });
	EXPECT_TRUE(contains(err, "ms_set_timer: NULL list")) << err;
	err = stderr_of([&] { ms_set_timer(m, GPU, 0, 0, 10); });
	EXPECT_TRUE(contains(err, "an interval of 0 for GPU")) << err;
	ms_set_timer(m, SYSTEM, 1, 2500000000u, 10);
	const MS_MEASUREMENT_SYS *sys = (const MS_MEASUREMENT_SYS *)getMeasurement(&m, SYSTEM);
	EXPECT_EQ(sys->ipmi_time_wait.tv_sec, 3);
	EXPECT_EQ(sys->ipmi_time_wait.tv_nsec, 500000000);

	// Calls out of order.
	err = stderr_of([&] { ms_start_measurement(ms); });
	EXPECT_TRUE(contains(err, "ms_start_measurement: called out of order: call ms_init_measurement()")) << err;
	err = stderr_of([&] { ms_stop_measurement(ms); });
	EXPECT_TRUE(contains(err, "ms_stop_measurement: called out of order: call ms_start_measurement() first")) << err;
	err = stderr_of([&] { ms_join_measurement(ms); });
	EXPECT_TRUE(contains(err, "ms_join_measurement: called out of order: call ms_stop_measurement() first")) << err;
	err = stderr_of([&] { ms_fini_measurement(ms); });
	EXPECT_TRUE(contains(err, "no measurement is prepared")) << err;
	err = stderr_of([&] { ms_init_measurement(ms, m, 0x100); });
	EXPECT_TRUE(contains(err, "ms_init_measurement: bad flags")) << err;
	err = stderr_of([&] { ms_init_measurement(ms, nullptr, ALL); });
	EXPECT_TRUE(contains(err, "ms_init_measurement: NULL list")) << err;
	err = stderr_of([&] { ms_start_measurement(nullptr); });
	EXPECT_TRUE(contains(err, "NULL measuring system: pass what ms_init() returned")) << err;
	stderr_of([&] { ms_init_measurement(ms, m, CPU | GPU); });
	err = stderr_of([&] { ms_init_measurement(ms, m, CPU); });
	EXPECT_TRUE(contains(err, "a measurement is already prepared: call ms_fini_measurement() first")) << err;
	ms_start_measurement(ms);
	err = stderr_of([&] { ms_start_measurement(ms); });
	EXPECT_TRUE(contains(err, "called out of order")) << err;
	ms_stop_measurement(ms);
	ms_join_measurement(ms);

	// Queries.
	double e = -1;
	err = stderr_of([&] { e = cpu_energy_total_pkg(m, CPUS); });
	EXPECT_EQ(e, 0.0);
	EXPECT_TRUE(contains(err, "CPU package 2 does not exist: give 0 to 1")) << err;
	MS_LIST *empty = nullptr;
	err = stderr_of([&] { e = gpu_energy_total(empty); });
	EXPECT_TRUE(contains(err, "gpu_energy_total: the list has no GPU measurement")) << err;
	err = stderr_of([&] { appendList(&empty, 3); });
	EXPECT_TRUE(contains(err, "unknown resource")) << err;
	EXPECT_EQ(empty, nullptr);

	ms_fini(ms);  // also finishes the measurement
	ms_free_measurement(m);
}

// The statistics of known samples become libmeasure's results: rapl's energies (nJ counters, Ws and their rate in W
// by default_eventops.txt), nvml's power (mW, W and its integral in Ws); an event of another unit is left out.
TEST_F(MsCommon, StatisticsBecomeEnergyAndPower)
{
	apapi_eventops ops = {};
	ASSERT_EQ(apapi_eventops_read(SAMPLER_SRCDIR "/default_eventops.txt", &ops), 0);
	const apapi_eventop *pkg = apapi_eventops_find(&ops, "rapl:::PACKAGE_ENERGY:PACKAGE0");
	const apapi_eventop *dram = apapi_eventops_find(&ops, "rapl:::DRAM_ENERGY:PACKAGE0");
	const apapi_eventop *gpu_power = apapi_eventops_find(&ops, "nvml:::Tesla_K20m:power");
	ASSERT_TRUE(pkg && dram && gpu_power);
	apapi_eventop dram1;
	apapi_eventop_copy(&dram1, dram);
	free(dram1.name);
	dram1.name = strdup("rapl:::DRAM_ENERGY:PACKAGE1");
	// PP0 without a definition: the fallback of an accumulating event in PAPI's unit, nJ (its rate in nJ/s).
	apapi_config nocfg = {};
	apapi_eventop pp0;
	apapi_config_op(&nocfg, "rapl:::PP0_ENERGY:PACKAGE0", INT64_MAX, "nJ", &pp0);
	apapi_eventop count = *pkg;
	count.name = (char *)"rapl:::PACKAGE_ENERGY_CNT:PACKAGE0";
	count.unit[0] = count.unit[1] = (char *)"";

	apapi_sampler s;
	apapi_sampler_init(&s);
	auto never = [](apapi_component *, apapi_raw *) { return -1; };
	apapi_component *rapl = apapi_sampler_add(&s, "rapl", 1000, never, nullptr);
	apapi_component *nvml = apapi_sampler_add(&s, "nvml", 1000, never, nullptr);
	ASSERT_TRUE(rapl && nvml);
	ASSERT_EQ(apapi_component_add_event(rapl, pkg, 0), 0);
	ASSERT_EQ(apapi_component_add_event(rapl, &dram1, 0), 0);
	ASSERT_EQ(apapi_component_add_event(rapl, &count, 0), 0);
	ASSERT_EQ(apapi_component_add_event(rapl, &pp0, 0), 0);
	ASSERT_EQ(apapi_component_add_event(nvml, gpu_power, 0), 0);
	apapi_eventop_clear(&dram1);
	apapi_eventop_clear(&pp0);
	// Samples at 0, 1 and 2 s: the package used 1 then 2 Ws (nJ counter), DRAM 0.5 then 0.5, the GPU drew 100 W.
	const uint64_t t[3] = { 0, 1000000000u, 2000000000u };
	const uint64_t pkg_nj[3] = { 0, 1000000000u, 3000000000u }, dram_nj[3] = { 100, 500000100u, 1000000100u };
	for (int i = 0; i < 3; i++) {
		apapi_raw r;
		r.u = pkg_nj[i];
		apapi_event_sample(&rapl->events[0], r, t[i]);
		r.u = dram_nj[i];
		apapi_event_sample(&rapl->events[1], r, t[i]);
		r.u = pkg_nj[i] * 7;
		apapi_event_sample(&rapl->events[2], r, t[i]);
		r.u = pkg_nj[i] / 2;
		apapi_event_sample(&rapl->events[3], r, t[i]);
		r.u = 100000;
		apapi_event_sample(&nvml->events[0], r, t[i]);
	}
	s.start_ns = 0;
	s.stop_ns = 2000000000u;

	MS_LIST *m = nullptr;
	for (int flag : { CPU, GPU, FPGA, SYSTEM, MIC })
		appendList(&m, flag);
	ms_set_timer(m, CPU, 0, 5000000, 10);
	ms_apapi_fill(&s, m);
	EXPECT_DOUBLE_EQ(cpu_energy_total_pkg(m, 0), 3.0);   // 1 + 2 Ws
	EXPECT_DOUBLE_EQ(cpu_power_avg_pkg(m, 0), 2.0);      // the one rate: 2 Ws in the second second
	EXPECT_DOUBLE_EQ(cpu_energy_total_dram(m, 0), 0.0);
	EXPECT_DOUBLE_EQ(cpu_energy_total_dram(m, 1), 1.0);
	EXPECT_DOUBLE_EQ(cpu_power_avg_dram(m, 1), 0.5);
	EXPECT_DOUBLE_EQ(cpu_energy_total_pp0(m, 0), 1.5);
	EXPECT_NEAR(cpu_power_avg_pp0(m, 0), 1.0, 1e-12);    // its one rate: 1e9 nJ/s in the second second
	EXPECT_DOUBLE_EQ(cpu_energy_total_pp0(m, 1), 0.0);
	const MS_MEASUREMENT_CPU *cpu = (const MS_MEASUREMENT_CPU *)getMeasurement(&m, CPU);
	EXPECT_DOUBLE_EQ(cpu->msr_energy_acc[0][PKG], 3000.0);  // mWs in the structure
	EXPECT_DOUBLE_EQ(cpu->msr_power_cur[0][PKG], 2000.0);   // mW
	EXPECT_EQ(cpu->msr_time_wait.tv_nsec, 5000000);          // kept
	EXPECT_DOUBLE_EQ(gpu_power_avg(m), 100.0);
	EXPECT_DOUBLE_EQ(gpu_energy_total(m), 100.0);          // 100 W over the one interval of two samples
	EXPECT_EQ(((const MS_MEASUREMENT_GPU *)getMeasurement(&m, GPU))->nvml_power_cur, 100000u);
	for (double runtime : { cpu_time_total(m), gpu_time_total(m), fpga_time_total(m), mic_time_total(m), system_time_total(m) })
		EXPECT_DOUBLE_EQ(runtime, 2.0);
	EXPECT_EQ(fpga_energy_total_power_usage(m), 0.0);
	EXPECT_EQ(system_energy_total(m), 0.0);

	ms_free_measurement(m);
	apapi_sampler_clear(&s);
	apapi_eventops_clear(&ops);
}

// ------------------------------------------------------------- hettime

class Hettime : public MsCommon
{
protected:
	void SetUp() override
	{
		hettime_ = env_or("HETTIME", "");
		if (hettime_.empty() || !file_exists(hettime_))
			GTEST_SKIP() << "hettime is not built yet (make check builds it before the tests)";
	}
	std::string run(const std::string &args, int *status, const std::string &prefix = "")
	{
		std::string out;
		*status = run_command(prefix + "'" + hettime_ + "' " + args + " 2>&1", &out);
		return out;
	}
	std::string hettime_;
};

TEST_F(Hettime, ReportsTheTimeAndSaysOnceThereIsNoEnergy)
{
	int status = -1;
	std::string out = run("true", &status);
	EXPECT_EQ(status, 0) << out;
	EXPECT_TRUE(contains(out, "hettime results")) << out;
	EXPECT_TRUE(contains(out, "  executable             true\n")) << out;
	EXPECT_TRUE(contains(out, "  exit status            0\n")) << out;
	EXPECT_TRUE(contains(out, "  real time              ")) << out;
	EXPECT_TRUE(contains(out, "  user time              ")) << out;
	if (contains(out, "no energy counter")) {
		EXPECT_EQ(count_of(out, "no energy counter on this machine"), 1u) << out;
		EXPECT_EQ(count_of(out, "energy"), 1u) << "no energy line without a counter: " << out;
	}
	EXPECT_FALSE(contains(out, "error")) << out;
}

TEST_F(Hettime, RunsExecutableWithArgsAndPassesTheStatus)
{
	int status = -1;
	std::string out = run("-c 50 -e printf -a '<%s-%s> a b'", &status);
	EXPECT_EQ(status, 0) << out;
	EXPECT_TRUE(contains(out, "<a-b>")) << out;
	EXPECT_TRUE(contains(out, "  executable             printf\n")) << out;
	out = run("false", &status);
	EXPECT_EQ(status, 1) << out;
	EXPECT_TRUE(contains(out, "  exit status            1\n")) << out;
	out = run("/no/such/program", &status);
	EXPECT_EQ(status, 1) << out;
	EXPECT_TRUE(contains(out, "hettime: cannot run /no/such/program")) << out;
	out = run("sh -c 'exit 3'", &status);
	EXPECT_EQ(status, 1) << out;
	EXPECT_TRUE(contains(out, "  exit status            3\n")) << out;
	// The same library preloaded, as APAPI's documentation runs it.
	std::string lib = env_or("MS_COMMON_APAPI", "");
	if (file_exists(lib)) {
		// Under AddressSanitizer the preload comes before its runtime: let it (the check is ASan's, not ours).
		out = run("true", &status, "ASAN_OPTIONS=\"$ASAN_OPTIONS:verify_asan_link_order=0\" LD_PRELOAD='" + lib + "' ");
		EXPECT_EQ(status, 0) << out;
		EXPECT_TRUE(contains(out, "hettime results")) << out;
	}
}

TEST_F(Hettime, BadOptionsHelpAndVersion)
{
	int status = -1;
	std::string out = run("", &status);
	EXPECT_EQ(status, 2);
	EXPECT_TRUE(contains(out, "no program to run")) << out;
	EXPECT_TRUE(contains(out, "Usage: hettime")) << out;
	out = run("-x true", &status);
	EXPECT_EQ(status, 2);
	EXPECT_TRUE(contains(out, "hettime: unknown option -x")) << out;
	out = run("-c fast true", &status);
	EXPECT_EQ(status, 2);
	EXPECT_TRUE(contains(out, "'fast' is not a number of milliseconds")) << out;
	out = run("-c", &status);
	EXPECT_EQ(status, 2);
	EXPECT_TRUE(contains(out, "option -c needs a value")) << out;
	out = run("-a x -e true", &status);
	EXPECT_EQ(status, 2);
	EXPECT_TRUE(contains(out, "must come after -e")) << out;
	out = run("-e true false", &status);
	EXPECT_EQ(status, 2);
	EXPECT_TRUE(contains(out, "either with -e or after the options")) << out;
	out = run("-u true", &status);
	EXPECT_EQ(status, 2);
	EXPECT_TRUE(contains(out, "msmonitor")) << out;
	out = run("-G fastest true", &status);
	EXPECT_EQ(status, 2);
	EXPECT_TRUE(contains(out, "unknown GPU frequency 'fastest'")) << out;
	out = run("-C perf true", &status);
	EXPECT_EQ(status, 0) << out;
	EXPECT_TRUE(contains(out, "it only measures")) << out;
	out = run("-s 10 true", &status);
	EXPECT_EQ(status, 0) << out;
	EXPECT_TRUE(contains(out, "warning: System sampling interval should be at least 100 ms")) << out;
	for (const char *help : { "--help", "-h", "'-?'" }) {
		out = run(help, &status);
		EXPECT_EQ(status, 0) << help;
		EXPECT_EQ(out.rfind("Usage: hettime", 0), 0u) << help << ": " << out;
	}
	out = run("--version", &status);
	EXPECT_EQ(status, 0);
	EXPECT_EQ(out.rfind("hettime (Astrolabe, StarPU ", 0), 0u) << out;
}

// -o appends the results to a file, -v a CSV row (a header when the file is new), read back with Python's csv.
TEST_F(Hettime, ResultFileAndCsv)
{
	TempDir dir;
	int status = -1;
	std::string out = run("-o '" + dir.file("res.txt") + "' -v '" + dir.file("t.csv") + "' true", &status);
	EXPECT_EQ(status, 0) << out;
	EXPECT_FALSE(contains(out, "hettime results")) << out;
	EXPECT_TRUE(contains(read_file(dir.file("res.txt")), "hettime results")) << read_file(dir.file("res.txt"));
	out = run("-v '" + dir.file("t.csv") + "' false", &status);
	EXPECT_EQ(status, 1) << out;
	std::string csv = read_file(dir.file("t.csv"));
	EXPECT_EQ(csv.rfind("executable,exit_status,real_time_s,user_time_s,system_time_s,cpu0_pkg_energy_Ws,", 0), 0u) << csv;
	if (!have_program("python3"))
		GTEST_SKIP() << "python3 reads the CSV";
	std::string check;
	ASSERT_EQ(run_command("python3 -c \"import csv,sys; rows=list(csv.reader(open(sys.argv[1]))); "
			      "assert len(rows)==3, rows; assert all(len(r)==len(rows[0]) for r in rows), rows; "
			      "assert [r[1] for r in rows[1:]]==['0','1'], rows; assert float(rows[1][2])>=0; print('ok')\" '" +
				      dir.file("t.csv") + "' 2>&1",
			      &check),
		  0)
		<< check << csv;
	EXPECT_EQ(run_command("'" + hettime_ + "' -v /nonexistent/dir/t.csv true 2>&1", &out), 1);
	EXPECT_TRUE(contains(out, "cannot write the CSV file /nonexistent/dir/t.csv")) << out;
}

} // namespace
