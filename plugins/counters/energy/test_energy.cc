// SPDX-License-Identifier: LGPL-2.1-or-later
// counters_energy on a synthetic sysfs tree (ASTROLABE_SYSFS_ROOT) whose
// energy_uj files the tests write: exact energies, wrap-arounds at
// max_energy_range_uj, starpu_energy_start/stop, the tasks' energy_consumed,
// energy models fed from it, the zones' counters and the sampler; and, with
// no source, one line and -ENODEV.
#include "helpers.h"

#include <astrolabe/counters.h>
#include <astrolabe/energy.h>
#include <cmath>
#include <map>
#include <thread>
#ifdef HAVE_SDE
#include <sde_lib.h>
#endif
#include <starpu_profiling.h>

#include <fcntl.h>
#include <filesystem>
#include <sys/stat.h>
#include <unistd.h>

extern "C" {
#include "powercap.h"
}

using namespace astro_test;
namespace fs = std::filesystem;

namespace {

const uint64_t RANGE = 262143328850ull; // a real package's max_energy_range_uj

// A sysfs tree: one package with core and dram sub-zones, psys, and an
// intel-rapl-mmio zone that repeats the package (never read).
class Sysfs
{
public:
	Sysfs()
	{
		root_ = fs::temp_directory_path() / ("astro-energy-" + std::to_string(getpid()) + "-" + std::to_string(counter_++));
		zone("intel-rapl:0", "package-0", 1000000);
		zone("intel-rapl:0:0", "core", 500000);
		zone("intel-rapl:0:1", "dram", 200000);
		zone("intel-rapl:1", "psys", 9000000);
		zone("intel-rapl-mmio:0", "package-0", 1000000);
		fs::create_directories(root_ / "devices/system/cpu/cpu0/topology");
		write(root_ / "devices/system/cpu/cpu0/topology/physical_package_id", "0\n");
	}
	~Sysfs()
	{
		std::error_code ec;
		fs::remove_all(root_, ec);
	}
	std::string root() const { return root_.string(); }
	fs::path dir(const std::string &zone) const { return root_ / "class/powercap" / zone; }
	void zone(const std::string &zone, const std::string &name, uint64_t uj)
	{
		fs::create_directories(dir(zone));
		write(dir(zone) / "name", name + "\n");
		write(dir(zone) / "max_energy_range_uj", std::to_string(RANGE) + "\n");
		set(zone, uj);
	}
	// Rewrites energy_uj in place: the plugin keeps it open.
	static void set_path(const fs::path &path, uint64_t uj)
	{
		write(path, std::to_string(uj) + "\n");
	}
	void set(const std::string &zone, uint64_t uj) const { set_path(dir(zone) / "energy_uj", uj); }

private:
	static void write(const fs::path &path, const std::string &content)
	{
		int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
		ASSERT_GE(fd, 0) << path;
		ASSERT_EQ(::write(fd, content.data(), content.size()), (ssize_t)content.size());
		close(fd);
	}
	static inline int counter_ = 0;
	fs::path root_;
};

// A private STARPU_HOME for the models the tests write.
class EnergyTest : public ::testing::Test
{
protected:
	void SetUp() override
	{
		ASSERT_FALSE(build_plugin_path().empty()) << "STARPU_PLUGIN_PATH is not set: run through make check";
	}
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
	}
	Sysfs sysfs_;
	ScopedEnv root_{"ASTROLABE_SYSFS_ROOT", sysfs_.root().c_str()};
	ScopedEnv home_{"STARPU_HOME", (sysfs_.root() + "/home").c_str()};
	ScopedEnv calibrate_{"STARPU_CALIBRATE", nullptr};
	ScopedEnv minimum_{"STARPU_CALIBRATE_MINIMUM", "1"};
	ScopedEnv profiling_{"STARPU_PROFILING", nullptr};
	ScopedEnv sampler_{"ASTROLABE_SAMPLER", nullptr};
	ScopedEnv sched_{"STARPU_SCHED", nullptr};
};

} // namespace

// ---------------------------------------------------------------- reader

TEST(PowercapReader, ZonesNamesPackagesAndRanges)
{
	Sysfs sysfs;
	struct powercap pc;
	char why[4400];
	ASSERT_EQ(powercap_open(&pc, sysfs.root().c_str(), why, sizeof(why)), 4u) << why;
	EXPECT_STREQ(pc.zones[0].name, "package-0");
	EXPECT_STREQ(pc.zones[1].name, "package-0.core");
	EXPECT_STREQ(pc.zones[2].name, "package-0.dram");
	EXPECT_STREQ(pc.zones[3].name, "psys");
	int packages[] = { 0, 0, 0, -1 }, in_package[] = { 1, 0, 1, 0 };
	for (unsigned z = 0; z < 4; z++) {
		EXPECT_EQ(pc.zones[z].package, packages[z]) << pc.zones[z].name;
		EXPECT_EQ(pc.zones[z].in_package, in_package[z]) << pc.zones[z].name;
		EXPECT_EQ(pc.zones[z].range, RANGE);
		EXPECT_EQ(pc.zones[z].per_joule, 1e6);
	}
	uint64_t uj = 0;
	ASSERT_EQ(powercap_read(&pc, 0, &uj), 0);
	EXPECT_EQ(uj, 1000000u);
	sysfs.set("intel-rapl:0", 123456789);
	ASSERT_EQ(powercap_read(&pc, 0, &uj), 0);
	EXPECT_EQ(uj, 123456789u);
	EXPECT_EQ(powercap_cpu_package(sysfs.root().c_str(), 0), 0);
	EXPECT_EQ(powercap_cpu_package(sysfs.root().c_str(), 7), -1);
	powercap_close(&pc);
}

TEST(PowercapReader, WrapAroundAtTheRange)
{
	EXPECT_EQ(astro_energy_raw_delta(100, 350, RANGE), 250u);
	EXPECT_EQ(astro_energy_raw_delta(RANGE - 1000, 500, RANGE), 1500u);
	EXPECT_EQ(astro_energy_raw_delta(RANGE, 0, RANGE), 0u);
	EXPECT_EQ(astro_energy_raw_delta(7, 7, RANGE), 0u);
	// Unknown range: a counter that went down counts from 0.
	EXPECT_EQ(astro_energy_raw_delta(5000, 300, 0), 300u);
}

TEST(PowercapReader, WhatCannotBeReadIsSaid)
{
	Sysfs sysfs;
	struct powercap pc;
	char why[4400];
	EXPECT_EQ(powercap_open(&pc, (sysfs.root() + "/nowhere").c_str(), why, sizeof(why)), 0u);
	EXPECT_TRUE(contains(why, "there is no ")) << why;

	// A zone whose energy_uj holds no number is left out, and said.
	{
		int fd = open((sysfs.dir("intel-rapl:1") / "energy_uj").c_str(), O_WRONLY | O_TRUNC);
		ASSERT_EQ(write(fd, "lots\n", 5), 5);
		close(fd);
	}
	ASSERT_EQ(powercap_open(&pc, sysfs.root().c_str(), why, sizeof(why)), 3u);
	EXPECT_TRUE(contains(why, "intel-rapl:1/energy_uj cannot be read (Invalid argument)")) << why;
	powercap_close(&pc);

	// Readable by root only, as since Linux 5.10 (root reads anyway).
	if (geteuid() == 0)
		return;
	chmod((sysfs.dir("intel-rapl:0") / "energy_uj").c_str(), 0);
	ASSERT_EQ(powercap_open(&pc, sysfs.root().c_str(), why, sizeof(why)), 2u);
	EXPECT_TRUE(contains(why, "only root may read it")) << why;
	powercap_close(&pc);
}

// ------------------------------------------------------------ PAPI rapl

// PAPI's rapl component: where it works (RAPL registers readable through
// /dev/cpu/N/msr, a PAPI with the component enabled), its package and DRAM
// energy events become zones read through PAPI; elsewhere (as here: no msr
// device) it declines with the reason. Checked whichever this machine gives.
TEST(PapiRapl, OpensPackageZonesOrSaysWhyNot)
{
	struct powercap pc = {};
	char why[400] = "";
	unsigned n = papi_rapl_open(&pc, why, sizeof(why));
	EXPECT_EQ(pc.nzones, n);
	if (n == 0) {
		EXPECT_STRNE(why, "") << "declined without a reason";
		EXPECT_TRUE(contains(why, "PAPI") || contains(why, "/dev/cpu/0/msr")) << why;
		// Nothing is left open: reading a PAPI zone fails cleanly.
		uint64_t raw = 0;
		EXPECT_LT(papi_rapl_read(0, &raw), 0);
		papi_rapl_close(); // harmless when nothing is open
		return;
	}
	for (unsigned z = 0; z < n; z++) {
		SCOPED_TRACE(pc.zones[z].name);
		EXPECT_EQ(pc.zones[z].fd, -1);
		EXPECT_EQ(pc.zones[z].papi_index, int(z));
		EXPECT_TRUE(pc.zones[z].in_package);
		EXPECT_GE(pc.zones[z].package, 0);
		EXPECT_EQ(pc.zones[z].per_joule, 1e9);
		EXPECT_EQ(pc.zones[z].range, 0u); // PAPI accumulates on 64 bits
		EXPECT_TRUE(contains(pc.zones[z].name, "package-")) << pc.zones[z].name;
		uint64_t a = 0, b = 0;
		ASSERT_EQ(powercap_read(&pc, z, &a), 0);
		ASSERT_EQ(powercap_read(&pc, z, &b), 0);
		EXPECT_GE(b, a) << "energy went down";
	}
	powercap_close(&pc);
	uint64_t raw = 0;
	EXPECT_LT(papi_rapl_read(0, &raw), 0) << "read after close";
}

// With neither source, the plugin steps aside: quietly, unless asked
// (STARPU_PLUGIN_VERBOSE), then in one line naming both reasons.
TEST_F(EnergyTest, WithoutPowercapOrRaplTheReasonsAreOneLine)
{
	ScopedEnv nowhere("ASTROLABE_SYSFS_ROOT", (sysfs_.root() + "/nowhere").c_str());
	struct powercap probe = {};
	char why[400];
	if (papi_rapl_open(&probe, why, sizeof(why))) {
		powercap_close(&probe);
		GTEST_SKIP() << "PAPI's rapl component works here: the plugin measures with it";
	}
	ScopedEnv verbose("STARPU_PLUGIN_VERBOSE", "1");
	starpu_conf conf = conf_with_ncpus(1);
	std::string err = stderr_of([&] { ASSERT_EQ(starpu_init(&conf), 0); });
	EXPECT_EQ(astro_energy_meter_get(), nullptr);
	std::string line;
	int said = 0;
	for (const std::string &l : lines_of(err))
		if (contains(l, "counters_energy: no energy is measured: ")) {
			line = l;
			said++;
		}
	EXPECT_EQ(said, 1) << err;
	EXPECT_TRUE(contains(line, "nowhere")) << line;  // powercap's reason: the tree it looked in
	EXPECT_TRUE(contains(line, why)) << line;        // PAPI rapl's reason
}

#ifdef HAVE_SDE
// The PAPI path end to end on a component that exists everywhere PAPI does:
// PAPI's sde component, with package energy events of this test's own (nJ,
// as the rapl component gives them), named as rapl names them.
namespace {
long long sde_package0_nj, sde_dram0_nj, sde_package1_nj, sde_pp0_nj;
}

TEST(PapiRapl, ReadsThePackageEventsOfAPapiComponent)
{
	static papi_handle_t handle = [] {
		papi_handle_t h = papi_sde_init("ENERGYTEST");
		papi_sde_register_counter(h, "PACKAGE_ENERGY:PACKAGE0", PAPI_SDE_RO | PAPI_SDE_INSTANT, PAPI_SDE_long_long, &sde_package0_nj);
		papi_sde_register_counter(h, "DRAM_ENERGY:PACKAGE0", PAPI_SDE_RO | PAPI_SDE_INSTANT, PAPI_SDE_long_long, &sde_dram0_nj);
		papi_sde_register_counter(h, "PACKAGE_ENERGY:PACKAGE1", PAPI_SDE_RO | PAPI_SDE_INSTANT, PAPI_SDE_long_long, &sde_package1_nj);
		// Within the package's energy, as in rapl: not a zone.
		papi_sde_register_counter(h, "PP0_ENERGY:PACKAGE0", PAPI_SDE_RO | PAPI_SDE_INSTANT, PAPI_SDE_long_long, &sde_pp0_nj);
		return h;
	}();
	ASSERT_NE(handle, nullptr);
	sde_package0_nj = 1000000000;
	sde_dram0_nj = 250000000;
	sde_package1_nj = 7;
	struct powercap pc = {};
	char why[400] = "";
	unsigned n = papi_energy_open(&pc, "sde", why, sizeof(why));
	if (n == 0 && contains(why, "sde component is disabled"))
		GTEST_SKIP() << why;
	ASSERT_EQ(n, 3u) << why;
	std::map<std::string, unsigned> zones;
	for (unsigned z = 0; z < n; z++) {
		zones[pc.zones[z].name] = z;
		EXPECT_EQ(pc.zones[z].fd, -1);
		EXPECT_TRUE(pc.zones[z].in_package);
		EXPECT_EQ(pc.zones[z].per_joule, 1e9);
		EXPECT_EQ(pc.zones[z].range, 0u);
	}
	ASSERT_EQ(zones.count("package-0"), 1u);
	ASSERT_EQ(zones.count("package-0.dram"), 1u);
	ASSERT_EQ(zones.count("package-1"), 1u);
	EXPECT_EQ(pc.zones[zones["package-1"]].package, 1);
	uint64_t raw = 0;
	ASSERT_EQ(powercap_read(&pc, zones["package-0"], &raw), 0);
	EXPECT_EQ(raw, 1000000000u);
	ASSERT_EQ(powercap_read(&pc, zones["package-0.dram"], &raw), 0);
	EXPECT_EQ(raw, 250000000u);
	// Read from another thread as a worker's would, while the counters move.
	sde_package0_nj += 2500000000;
	std::thread([&] {
		uint64_t v = 0;
		EXPECT_EQ(powercap_read(&pc, zones["package-0"], &v), 0);
		EXPECT_EQ(v, 3500000000u);
	}).join();
	// A second component at once is refused, said.
	struct powercap other = {};
	EXPECT_EQ(papi_energy_open(&other, "sde", why, sizeof(why)), 0u);
	EXPECT_TRUE(contains(why, "already")) << why;
	powercap_close(&pc);
	EXPECT_LT(papi_rapl_read(0, &raw), 0) << "read after close";
	// Nothing of the kind in a component: said.
	EXPECT_EQ(papi_energy_open(&other, "no_such_component", why, sizeof(why)), 0u);
	EXPECT_TRUE(contains(why, "this PAPI has no no_such_component component")) << why;
}
#endif

// ---------------------------------------------------------- batch energy

namespace {

void nop(void **, void *) {}

struct starpu_perfmodel batch_model = { .type = STARPU_HISTORY_BASED, .symbol = "astro_energy_batch" };
starpu_codelet batch_cl = [] {
	starpu_codelet cl = cpu_codelet(nop, 0, "batch");
	cl.energy_model = &batch_model;
	return cl;
}();

// A task that is never submitted: what energy models index (its footprint).
starpu_task *specimen(starpu_codelet *cl)
{
	starpu_task *task = starpu_task_create();
	task->cl = cl;
	task->destroy = 0;
	return task;
}

double expected_energy(starpu_codelet *cl)
{
	starpu_task *task = specimen(cl);
	double e = starpu_task_expected_energy(task, starpu_worker_get_perf_archtype(0, 0), 0);
	starpu_task_destroy(task);
	return e;
}

} // namespace

TEST_F(EnergyTest, StartStopRecordsThePackagesEnergyPerTask)
{
	starpu_conf conf = conf_with_ncpus(1);
	ASSERT_EQ(starpu_init(&conf), 0);
	sysfs_.set("intel-rapl:0", RANGE - 1000000); // the package wraps during the batch
	ASSERT_EQ(starpu_energy_start(-1, STARPU_CPU_WORKER), 0);
	sysfs_.set("intel-rapl:0", 7000000);          // + 8 J
	sysfs_.set("intel-rapl:0:1", 2200000);        // + 2 J of DRAM
	sysfs_.set("intel-rapl:0:0", 90000000);       // the cores: inside the package's 8 J
	sysfs_.set("intel-rapl:1", 99000000);         // the platform: not the packages'
	starpu_task *task = specimen(&batch_cl);
	ASSERT_EQ(starpu_energy_stop(&batch_model, task, 0, 4, -1, STARPU_CPU_WORKER), 0);
	starpu_task_destroy(task);
	EXPECT_DOUBLE_EQ(expected_energy(&batch_cl), 2.5); // 10 J over 4 tasks
}

TEST_F(EnergyTest, BadCallsAreRefusedWithOneLine)
{
	starpu_conf conf = conf_with_ncpus(1);
	ASSERT_EQ(starpu_init(&conf), 0);
	starpu_task *task = specimen(&batch_cl);
	struct Case
	{
		std::function<int()> call;
		int ret;
		const char *says;
	} cases[] = {
		{ [&] { return starpu_energy_stop(&batch_model, task, 0, 1, -1, STARPU_CPU_WORKER); }, -EINVAL, "no measurement was started" },
		{ [&] { return starpu_energy_start(0, STARPU_CPU_WORKER); }, -EINVAL, "give workerid -1" },
		{ [&] { return starpu_energy_start(-1, STARPU_CUDA_WORKER); }, -ENODEV, "the energy of CUDA workers cannot be measured here" },
		{ [&] { return starpu_energy_stop(&batch_model, task, 0, 0, -1, STARPU_CPU_WORKER); }, -EINVAL, "ntasks is missing" },
		{ [&] { return starpu_energy_stop(nullptr, task, 0, 1, -1, STARPU_CPU_WORKER); }, -EINVAL, "the model is missing" },
	};
	for (auto &c : cases) {
		int ret = 0;
		std::string err = stderr_of([&] { ret = c.call(); });
		EXPECT_EQ(ret, c.ret) << c.says;
		EXPECT_TRUE(contains(err, c.says)) << err;
		EXPECT_EQ(lines_of(err).size(), 1u) << err;
	}
	starpu_task_destroy(task);
}

TEST_F(EnergyTest, WithoutASourceOneLineAndENODEV)
{
	ScopedEnv nowhere("ASTROLABE_SYSFS_ROOT", (sysfs_.root() + "/nowhere").c_str());
	starpu_conf conf = conf_with_ncpus(1);
	std::string init_err = stderr_of([&] { ASSERT_EQ(starpu_init(&conf), 0); });
	EXPECT_EQ(init_err, ""); // nothing said until energy is asked for
	EXPECT_EQ(astro_energy_meter_get(), nullptr);
	EXPECT_LT(starpu_perf_counter_name_to_id(starpu_perf_counter_scope_global, "starpu.energy.g_package-0"), 0);
	int ret = 0;
	std::string err = stderr_of([&] { ret = starpu_energy_start(-1, STARPU_CPU_WORKER); });
	EXPECT_EQ(ret, -ENODEV);
	EXPECT_TRUE(contains(err, "starpu_energy_start: no energy counter here")) << err;
	EXPECT_EQ(lines_of(err).size(), 1u) << err;
	starpu_task *task = specimen(&batch_cl);
	err = stderr_of([&] { ret = starpu_energy_stop(&batch_model, task, 0, 1, -1, STARPU_CPU_WORKER); });
	EXPECT_EQ(ret, -ENODEV);
	EXPECT_EQ(lines_of(err).size(), 1u) << err;
	starpu_task_destroy(task);
}

// -------------------------------------------------------------- per task

namespace {

// The task "consumes" what its argument says: the package's and the DRAM's energy_uj move during its execution.
struct Consumption
{
	fs::path package, dram;
	uint64_t package_to, dram_to;
};

void consume(void **, void *arg)
{
	auto *c = static_cast<Consumption *>(arg);
	Sysfs::set_path(c->package, c->package_to);
	Sysfs::set_path(c->dram, c->dram_to);
}

struct starpu_perfmodel task_model = { .type = STARPU_HISTORY_BASED, .symbol = "astro_energy_per_task" };
starpu_codelet consume_cl = [] {
	starpu_codelet cl = cpu_codelet(consume, 0, "consume");
	cl.energy_model = &task_model;
	return cl;
}();

// Runs one consume task on c: its energy_consumed, -1 when it has no profiling info, -2 when it did not run.
double run_consume(Consumption *c)
{
	starpu_task *task = starpu_task_create();
	task->cl = &consume_cl;
	task->cl_arg = c;
	task->detach = 0;
	task->destroy = 0;
	double e = -2.0;
	if (starpu_task_submit(task) == 0 && starpu_task_wait(task) == 0)
		e = task->profiling_info ? task->profiling_info->energy_consumed : -1.0;
	starpu_task_destroy(task);
	return e;
}

} // namespace

TEST_F(EnergyTest, EachTaskGetsThePackagesEnergyOverItsExecution)
{
	ScopedEnv profiling("STARPU_PROFILING", "1");
	ScopedEnv calibrate("STARPU_CALIBRATE", "1");
	starpu_conf conf = conf_with_ncpus(1);
	ASSERT_EQ(starpu_init(&conf), 0);
	// 3 J each: 2.5 J of package, 0.5 J of DRAM; the second wraps the package counter.
	const uint64_t from[] = { 1000000, RANGE - 1000000 };
	for (uint64_t start : from) {
		sysfs_.set("intel-rapl:0", start);
		sysfs_.set("intel-rapl:0:1", 200000);
		static Consumption c;
		c = { sysfs_.dir("intel-rapl:0") / "energy_uj", sysfs_.dir("intel-rapl:0:1") / "energy_uj",
		      (start + 2500000) % RANGE, 700000 };
		EXPECT_DOUBLE_EQ(run_consume(&c), 3.0) << "from " << start;
	}
	// The energy model calibrated with the measured values.
	EXPECT_DOUBLE_EQ(expected_energy(&consume_cl), 3.0);
}

TEST_F(EnergyTest, WithoutASourceACalibratingEnergyModelSaysSoOnce)
{
	ScopedEnv nowhere("ASTROLABE_SYSFS_ROOT", (sysfs_.root() + "/nowhere").c_str());
	ScopedEnv profiling("STARPU_PROFILING", "1");
	ScopedEnv calibrate("STARPU_CALIBRATE", "1");
	starpu_conf conf = conf_with_ncpus(1);
	ASSERT_EQ(starpu_init(&conf), 0);
	static Consumption c;
	c = { sysfs_.dir("intel-rapl:0") / "energy_uj", sysfs_.dir("intel-rapl:0:1") / "energy_uj", 5000000, 300000 };
	std::string err = stderr_of([&] {
		for (int i = 0; i < 3; i++)
			EXPECT_EQ(run_consume(&c), 0.0);
	});
	EXPECT_TRUE(contains(err, "energy model astro_energy_per_task calibrates, but there is no energy counter here")) << err;
	EXPECT_EQ(lines_of(err).size(), 1u) << err;
}

TEST_F(EnergyTest, TasksAreMeasuredFromWhenProfilingIsTurnedOn)
{
	starpu_conf conf = conf_with_ncpus(1);
	ASSERT_EQ(starpu_init(&conf), 0);
	starpu_profiling_status_set(STARPU_PROFILING_DISABLE); // whatever an earlier test left
	static Consumption c;
	auto run = [&](uint64_t to) {
		sysfs_.set("intel-rapl:0", 1000000);
		sysfs_.set("intel-rapl:0:1", 200000);
		c = { sysfs_.dir("intel-rapl:0") / "energy_uj", sysfs_.dir("intel-rapl:0:1") / "energy_uj", to, 200000 };
		return run_consume(&c);
	};
	EXPECT_EQ(run(5000000), -1.0); // no profiling info without profiling
	starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
	EXPECT_DOUBLE_EQ(run(1750000), 0.75);
	starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
	EXPECT_EQ(run(5000000), -1.0);
}

// A worker's energy_consumed: the sum of the tasks it ended since the last
// starpu_profiling_worker_get_info(), which resets it as its other figures.
TEST_F(EnergyTest, EachWorkerGetsItsTasksEnergyAndResetsOnRead)
{
	ScopedEnv profiling("STARPU_PROFILING", "1");
	starpu_conf conf = conf_with_ncpus(1);
	ASSERT_EQ(starpu_init(&conf), 0);
	starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
	starpu_profiling_worker_info info;
	ASSERT_EQ(starpu_profiling_worker_get_info(0, nullptr), 0); // the interval starts now
	static Consumption c;
	auto run = [&](uint64_t package_from, uint64_t package_to, uint64_t dram_to) {
		sysfs_.set("intel-rapl:0", package_from);
		sysfs_.set("intel-rapl:0:1", 200000);
		c = { sysfs_.dir("intel-rapl:0") / "energy_uj", sysfs_.dir("intel-rapl:0:1") / "energy_uj", package_to, dram_to };
		return run_consume(&c);
	};
	// 3 J, then 1.25 J across the package counter's wrap.
	EXPECT_DOUBLE_EQ(run(1000000, 3500000, 700000), 3.0);
	EXPECT_DOUBLE_EQ(run(RANGE - 500000, 500000, 450000), 1.25);
	ASSERT_EQ(starpu_profiling_worker_get_info(0, &info), 0);
	EXPECT_DOUBLE_EQ(info.energy_consumed, 4.25);
	EXPECT_EQ(info.executed_tasks, 2);
	// Read again: reset.
	ASSERT_EQ(starpu_profiling_worker_get_info(0, &info), 0);
	EXPECT_EQ(info.energy_consumed, 0.0);
	EXPECT_DOUBLE_EQ(run(1000000, 1500000, 200000), 0.5);
	ASSERT_EQ(starpu_profiling_worker_get_info(0, &info), 0);
	EXPECT_DOUBLE_EQ(info.energy_consumed, 0.5);
	// Profiling off: tasks are not measured, and what was measured stays.
	EXPECT_DOUBLE_EQ(run(1000000, 1250000, 200000), 0.25);
	starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
	EXPECT_EQ(run(1000000, 9000000, 200000), -1.0);
	ASSERT_EQ(starpu_profiling_worker_get_info(0, &info), 0);
	EXPECT_DOUBLE_EQ(info.energy_consumed, 0.25);
}

TEST_F(EnergyTest, WithoutASourceWorkersConsumeNothing)
{
	ScopedEnv nowhere("ASTROLABE_SYSFS_ROOT", (sysfs_.root() + "/nowhere").c_str());
	ScopedEnv profiling("STARPU_PROFILING", "1");
	starpu_conf conf = conf_with_ncpus(1);
	ASSERT_EQ(starpu_init(&conf), 0);
	starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
	static Consumption c;
	c = { sysfs_.dir("intel-rapl:0") / "energy_uj", sysfs_.dir("intel-rapl:0:1") / "energy_uj", 5000000, 300000 };
	EXPECT_EQ(run_consume(&c), 0.0);
	starpu_profiling_worker_info info;
	ASSERT_EQ(starpu_profiling_worker_get_info(0, &info), 0);
	EXPECT_EQ(info.energy_consumed, 0.0);
	EXPECT_EQ(info.executed_tasks, 1);
	// Bad calls to the service are ignored, and harmless.
	astro_energy_worker_add(-1, 1.0);
	astro_energy_worker_add(STARPU_NMAXWORKERS, 1.0);
	astro_energy_worker_add(0, -1.0);
	astro_energy_worker_add(0, NAN);
	ASSERT_EQ(starpu_profiling_worker_get_info(0, &info), 0);
	EXPECT_EQ(info.energy_consumed, 0.0);
}

// -------------------------------------------------------------- counters

namespace {

double read_counter(const char *name)
{
	int id = starpu_perf_counter_name_to_id(starpu_perf_counter_scope_global, name);
	EXPECT_GE(id, 0) << name;
	union astro_counter_value v;
	if (id < 0 || astro_counter_read(id, nullptr, &v))
		return -1;
	return v.double_val;
}

} // namespace

TEST_F(EnergyTest, ZoneCountersCountJoulesAcrossWraps)
{
	starpu_conf conf = conf_with_ncpus(1);
	ASSERT_EQ(starpu_init(&conf), 0);
	EXPECT_DOUBLE_EQ(read_counter("starpu.energy.g_package-0"), 0.0);
	sysfs_.set("intel-rapl:0", RANGE - 500000);
	EXPECT_DOUBLE_EQ(read_counter("starpu.energy.g_package-0"), (double)(RANGE - 1500000) / 1e6);
	sysfs_.set("intel-rapl:0", 1500000); // wrapped: + 2 J
	EXPECT_DOUBLE_EQ(read_counter("starpu.energy.g_package-0"), (double)(RANGE + 500000) / 1e6);
	sysfs_.set("intel-rapl:1", 9000000 + 4250000);
	EXPECT_DOUBLE_EQ(read_counter("starpu.energy.g_psys"), 4.25);
	int id = starpu_perf_counter_name_to_id(starpu_perf_counter_scope_global, "starpu.energy.g_package-0.dram");
	ASSERT_GE(id, 0);
	EXPECT_STREQ(astro_counter_get_unit(id), "J");
	EXPECT_EQ(astro_counter_get_kind(id), ASTRO_COUNTER_MONOTONIC);
}

TEST_F(EnergyTest, TheSamplerSamplesTheEnergy)
{
	if (!have_program("python3"))
		GTEST_SKIP() << "python3 is needed to read the CSV back";
	std::string csv = sysfs_.root() + "/sampler.csv";
	ScopedEnv on("ASTROLABE_SAMPLER", "1");
	ScopedEnv cmps("APAPI_CMPLIST", "astrolabe");
	ScopedEnv list("APAPI_EVENTLIST", "/dev/null");
	ScopedEnv datadir("ASTROLABE_SAMPLER_DATADIR", "/nonexistent");
	ScopedEnv out("ASTROLABE_SAMPLER_CSV", csv.c_str());
	starpu_conf conf = conf_with_ncpus(1);
	ASSERT_EQ(starpu_init(&conf), 0);
	sysfs_.set("intel-rapl:0", 1000000 + 7000000); // 7 J while sampled
	std::string table = stderr_of([] { starpu_shutdown(); });
	EXPECT_TRUE(contains(table, "starpu.energy.g_package-0")) << table;
	std::string rows;
	std::string cmd = "python3 -c 'import csv,sys\n"
			  "for r in csv.DictReader(open(sys.argv[1])):\n"
			  "  if r[\"event\"] == \"astrolabe:::starpu.energy.g_package-0\" and r[\"value\"] == \"value0\": print(r[\"acc\"])' '" +
			  csv + "'";
	ASSERT_EQ(run_command(cmd, &rows), 0) << cmd;
	EXPECT_EQ(std::stod(rows), 7.0) << rows;
}
