// SPDX-License-Identifier: LGPL-2.1-or-later
// Performance models (models/): footprints and sizes as StarPU computes them,
// architectures per worker, every model type's prediction and trust rules,
// calibration from executed tasks, outliers (injected spikes), and the model
// files: StarPU's real files round-tripped byte for byte, corrupt and
// truncated files set aside, two processes calibrating one model at once.
// Each test gets its own STARPU_HOME and STARPU_HOSTNAME=vm.
#include "helpers.h"

#include <astrolabe/counters.h>
#include <astrolabe/observe.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <thread>
#include <sstream>

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <signal.h>
#include <sys/prctl.h>
#include <spawn.h>
#include <sys/wait.h>

using namespace astro_test;

namespace {

// StarPU 1.4.12's vector_scal.vm (notes/perfmodels.md §4), both impl blocks written out.
const char *const kRegNone =
	"# sumlnx\tsumlnx2\t\tsumlny\t\tsumlnxlny\talpha\t\tbeta\t\tn\tminx\t\tmaxx\n"
	"0.000000e+00   \t0.000000e+00   \t0.000000e+00   \t0.000000e+00   \tnan            \tnan            \t0\t0              \t0              \n"
	"# a\t\tb\t\tc\n"
	"nan            \tnan            \tnan            \n"
	"# not multiple-regression-base\n"
	"0\n";

std::string header(unsigned nimpls)
{
	return "##################\n# Performance Model Version\n45\n\n"
	       "####################\n# COMBs\n# number of combinations\n1\n"
	       "####################\n# COMB_0\n# number of types devices\n1\n"
	       "####################\n# DEV_0\n# device type (CPU - 0, CUDA - 1, OPENCL - 2, MPI_MS - 5, TCPIP_MS - 6)\n0\n"
	       "####################\n# DEV_0\n# device id \n0\n"
	       "####################\n# DEV_0\n# number of cores \n1\n"
	       "##########\n# number of implementations\n" +
	       std::to_string(nimpls) + "\n";
}

const std::string kHashHeader = "# hash\t\tsize\t\tflops\t\tmean (us or J)\tdev (us or J)\tsum\t\tsum2\t\tn\n";

const std::string kVectorScal =
	header(2) + "#####\n# Model for cpu0_impl0 (Comb0)\n# number of entries\n1\n" + kRegNone + kHashHeader +
	"d0c0d6c6\t819200         \t0.000000e+00   \t8.613960e+01   \t1.132575e+01   \t8.613960e+02   \t7.548303e+04   \t10\n\n"
	"#####\n# Model for cpu0_impl1 (Comb0)\n# number of entries\n1\n" + kRegNone + kHashHeader +
	"d0c0d6c6\t819200         \t0.000000e+00   \t4.184525e+01   \t4.015112e+00   \t3.347620e+02   \t1.413717e+04   \t8\n\n";

// The NL model of the notes (pn_nlreg, after 3 runs).
const std::string kNlReg =
	header(1) + "#####\n# Model for cpu0_impl0 (Comb0)\n# number of entries\n5\n"
	"# sumlnx\tsumlnx2\t\tsumlny\t\tsumlnxlny\talpha\t\tbeta\t\tn\tminx\t\tmaxx\n"
	"8.299979e+02   \t9.473559e+03   \t4.454493e+02   \t5.257465e+03   \t1.298877e-03   \t1.137254e+00   \t75\t4000           \t1024000        \n"
	"# a\t\tb\t\tc\n"
	"1.285260e-04   \t1.302875e+00   \t2.023245e+01   \n"
	"# not multiple-regression-base\n0\n" + kHashHeader +
	"220e2244\t1024000        \t0.000000e+00   \t1.057835e+04   \t2.279753e+03   \t1.269402e+05   \t1.405184e+09   \t12\n"
	"571f8f18\t256000         \t0.000000e+00   \t1.010320e+03   \t2.359985e+01   \t9.092878e+03   \t9.191727e+06   \t9\n"
	"0d153cd6\t64000          \t0.000000e+00   \t2.494211e+02   \t1.486397e+01   \t3.491895e+03   \t8.740453e+05   \t14\n"
	"0d370ae5\t16000          \t0.000000e+00   \t6.069736e+01   \t3.792429e-01   \t8.497630e+02   \t5.158038e+04   \t14\n"
	"e40d1b6c\t4000           \t0.000000e+00   \t1.580764e+01   \t1.635263e+00   \t2.213070e+02   \t3.535779e+03   \t14\n\n";

int remove_entry(const char *path, const struct stat *, int, struct FTW *)
{
	return remove(path);
}

void noop(void *[], void *) {}

// A private STARPU_HOME (removed with its tree) and the host name "vm".
class Models : public ::testing::Test
{
public:
	void SetUp() override
	{
		std::string tmpl = env_or("TMPDIR", "/tmp") + "/astro-models-XXXXXX";
		std::vector<char> buf(tmpl.begin(), tmpl.end());
		buf.push_back('\0');
		ASSERT_NE(mkdtemp(buf.data()), nullptr);
		home_ = buf.data();
		env_.emplace_back(new ScopedEnv("STARPU_HOME", home_));
		env_.emplace_back(new ScopedEnv("XDG_CACHE_HOME", nullptr));
		env_.emplace_back(new ScopedEnv("STARPU_HOSTNAME", "vm"));
		env_.emplace_back(new ScopedEnv("STARPU_PERF_MODEL_DIR", nullptr));
		env_.emplace_back(new ScopedEnv("STARPU_PERF_MODEL_PATH", nullptr));
		env_.emplace_back(new ScopedEnv("STARPU_CALIBRATE", nullptr));
		env_.emplace_back(new ScopedEnv("STARPU_CALIBRATE_MINIMUM", nullptr));
		env_.emplace_back(new ScopedEnv("STARPU_SCHED", "eager"));
	}
	void TearDown() override
	{
		env_.clear();
		if (!home_.empty())
			nftw(home_.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	}
	std::string dir() const { return home_ + "/.starpu/sampling/codelets/45"; }
	std::string model_file(const std::string &symbol) const { return dir() + "/" + symbol + ".vm"; }
	void put(const std::string &symbol, const std::string &content) const
	{
		ASSERT_EQ(system(("mkdir -p " + dir()).c_str()), 0);
		std::ofstream(model_file(symbol), std::ios::binary) << content;
	}
	std::vector<std::string> listing() const
	{
		std::vector<std::string> names;
		if (DIR *d = opendir(dir().c_str())) {
			while (struct dirent *e = readdir(d))
				if (e->d_name[0] != '.')
					names.push_back(e->d_name);
			closedir(d);
		}
		return names;
	}

	std::string home_;
	std::vector<std::unique_ptr<ScopedEnv>> env_;
};

// A task on one vector of nx floats (not submitted: predictions and update_history only read it).
struct VectorTask
{
	explicit VectorTask(starpu_perfmodel *model, unsigned nx, enum starpu_data_access_mode mode = STARPU_R) : data(nx)
	{
		cl.cpu_funcs[0] = noop;
		cl.nbuffers = 1;
		cl.modes[0] = mode;
		cl.model = model;
		starpu_vector_data_register(&handle, STARPU_MAIN_RAM, (uintptr_t)data.data(), nx, sizeof(float));
		task = starpu_task_create();
		task->cl = &cl;
		task->handles[0] = handle;
		task->destroy = 0;
	}
	~VectorTask()
	{
		starpu_task_destroy(task);
		starpu_data_unregister(handle);
	}
	std::vector<float> data;
	starpu_codelet cl{};
	starpu_data_handle_t handle;
	starpu_task *task;
};

starpu_perfmodel_arch *cpu_arch()
{
	return starpu_worker_get_perf_archtype(0, 0);
}

// In a running runtime: records n runs of us microseconds of a history-based
// model named symbol on a 204800-float vector (footprint d0c0d6c6) on CPU 0, and saves it.
void record_and_save(const char *symbol, double us, unsigned n)
{
	starpu_perfmodel model{};
	model.type = STARPU_HISTORY_BASED;
	model.symbol = symbol;
	VectorTask t(&model, 204800);
	starpu_perfmodel_update_history_n(&model, t.task, cpu_arch(), 0, 0, us, n);
	starpu_save_history_based_model(&model);
	starpu_perfmodel_deinit(&model);
}

// ---------------------------------------------------------- footprints

TEST(ModelsHash, Crc32cMatchesStarPUValues)
{
	// From StarPU's own file: a vector of 204800 floats has footprint d0c0d6c6.
	EXPECT_EQ(starpu_hash_crc32c_be(204800, 0), 0xe7195059u);
	EXPECT_EQ(starpu_hash_crc32c_be(0xe7195059u, 2), 0x04b25255u);
	EXPECT_EQ(starpu_hash_crc32c_be(0x04b25255u, 0), 0xd0c0d6c6u);
	uint32_t word = 204800;
	EXPECT_EQ(starpu_hash_crc32c_be_n(&word, sizeof(word), 0), 0xe7195059u);
	EXPECT_EQ(starpu_hash_crc32c_string("ab", 0), starpu_hash_crc32c_be_n("ab", 2, 0));
}

size_t fixed_size(starpu_task *, unsigned) { return 12345; }
uint32_t fixed_footprint(starpu_task *) { return 0xabcdef; }

TEST_F(Models, FootprintsFollowStarPUPrecedence)
{
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	starpu_perfmodel model{};
	model.type = STARPU_HISTORY_BASED;
	model.symbol = "fp";
	VectorTask t(&model, 204800);
	EXPECT_EQ(starpu_task_data_footprint(t.task), 0xd0c0d6c6u);
	EXPECT_EQ(starpu_task_footprint(&model, t.task, cpu_arch(), 0), 0xd0c0d6c6u);
	model.size_base = fixed_size;
	size_t size = 12345;
	EXPECT_EQ(starpu_task_footprint(&model, t.task, cpu_arch(), 0), starpu_hash_crc32c_be_n(&size, sizeof(size), 0));
	model.footprint = fixed_footprint;
	EXPECT_EQ(starpu_task_footprint(&model, t.task, cpu_arch(), 0), 0xabcdefu);

	VectorTask skipped(nullptr, 204800, (enum starpu_data_access_mode)(STARPU_R | STARPU_NOFOOTPRINT));
	EXPECT_EQ(starpu_task_data_footprint(skipped.task), 0u);
	starpu_perfmodel_deinit(&model);
}

// -------------------------------------------------------- architectures

TEST_F(Models, EveryWorkerHasAnArchitecture)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	for (int w = 0; w < 2; w++) {
		starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(w, 0);
		ASSERT_NE(arch, nullptr);
		ASSERT_EQ(arch->ndevices, 1);
		EXPECT_EQ(arch->devices[0].type, STARPU_CPU_WORKER);
		EXPECT_EQ(arch->devices[0].devid, 0); // CPUs share one model by default
		EXPECT_EQ(arch->devices[0].ncores, 1);
		EXPECT_EQ(arch, starpu_worker_get_perf_archtype(0, 0));
	}
	EXPECT_EQ(starpu_worker_get_perf_archtype(99, 0), nullptr);
	char name[64];
	starpu_perfmodel_get_arch_name(cpu_arch(), name, sizeof(name), 1);
	EXPECT_STREQ(name, "cpu0_impl1 (Comb0)");
	EXPECT_STREQ(starpu_perfmodel_get_archtype_name(STARPU_CUDA_WORKER), "cuda");

	starpu_perfmodel_device gpu[2] = { { STARPU_CUDA_WORKER, 1, 1 }, { STARPU_CPU_WORKER, 0, 2 } };
	int comb = starpu_perfmodel_arch_comb_add(2, gpu);
	ASSERT_GE(comb, 1);
	EXPECT_EQ(starpu_perfmodel_arch_comb_get(2, gpu), comb);
	EXPECT_EQ(starpu_perfmodel_arch_comb_fetch(comb)->devices[1].ncores, 2);
	starpu_perfmodel_get_arch_name(starpu_perfmodel_arch_comb_fetch(comb), name, sizeof(name), 0);
	EXPECT_EQ(std::string(name), "cuda1_cpu0_impl0 (Comb" + std::to_string(comb) + ")");
	starpu_perfmodel_device bad = { STARPU_CPU_WORKER, 0, 0 };
	std::string err = stderr_of([&] { EXPECT_EQ(starpu_perfmodel_arch_comb_add(1, &bad), -EINVAL); });
	EXPECT_TRUE(contains(err, "ncores >= 1")) << err;
	EXPECT_EQ(starpu_perfmodel_arch_comb_fetch(-1), nullptr);
}

TEST_F(Models, PerCoreCpuModelsWhenNotHomogeneous)
{
	ScopedEnv homogeneous("STARPU_PERF_MODEL_HOMOGENEOUS_CPU", "0");
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	EXPECT_EQ(starpu_worker_get_perf_archtype(0, 0)->devices[0].devid, 0);
	EXPECT_EQ(starpu_worker_get_perf_archtype(1, 0)->devices[0].devid, 1);
}

// ------------------------------------------------------------ cost models

double common_cost(starpu_task *, unsigned nimpl) { return 100.0 + nimpl; }
double arch_cost(starpu_task *, starpu_perfmodel_arch *arch, unsigned) { return 7.0 * arch->devices[0].ncores; }
double worker_cost(starpu_task *, unsigned workerid, unsigned) { return 3.0 + workerid; }

TEST_F(Models, CostFunctionTypesPredict)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	VectorTask none(nullptr, 10);
	EXPECT_EQ(starpu_task_expected_length(none.task, cpu_arch(), 0), 0.0); // no model: 0, not NaN

	starpu_perfmodel common{};
	common.type = STARPU_COMMON;
	common.cost_function = common_cost;
	VectorTask c(&common, 10);
	EXPECT_DOUBLE_EQ(starpu_task_expected_length(c.task, cpu_arch(), 1), 101.0 / 0.5); // a CPU core's speedup is 0.5

	starpu_perfmodel per_arch{};
	per_arch.type = STARPU_PER_ARCH;
	starpu_perfmodel_init(&per_arch);
	ASSERT_EQ(starpu_perfmodel_set_per_devices_cost_function(&per_arch, 0, arch_cost, STARPU_CPU_WORKER, 0, 1, -1), 0);
	VectorTask a(&per_arch, 10);
	EXPECT_DOUBLE_EQ(starpu_task_expected_length(a.task, cpu_arch(), 0), 7.0);
	std::string err = stderr_of([&] { EXPECT_TRUE(std::isnan(starpu_task_expected_length(a.task, cpu_arch(), 1))); });
	EXPECT_TRUE(contains(err, "set_per_devices_cost_function")) << err;
	err = stderr_of([&] {
		EXPECT_EQ(starpu_perfmodel_set_per_devices_cost_function(&per_arch, 0, arch_cost, STARPU_CPU_WORKER, 0, 0, -1), -EINVAL);
	});
	EXPECT_TRUE(contains(err, "triples ended by -1")) << err;

	starpu_perfmodel per_worker{};
	per_worker.type = STARPU_PER_WORKER;
	per_worker.worker_cost_function = worker_cost;
	VectorTask w(&per_worker, 10);
	EXPECT_DOUBLE_EQ(starpu_task_worker_expected_length(w.task, 1, 0, 0), 4.0);
	err = stderr_of([&] { EXPECT_TRUE(std::isnan(starpu_task_expected_length(w.task, cpu_arch(), 0))); });
	EXPECT_TRUE(contains(err, "starpu_task_worker_expected_length")) << err;

	VectorTask nop(&starpu_perfmodel_nop, 1);
	EXPECT_DOUBLE_EQ(starpu_task_expected_length(nop.task, cpu_arch(), 0), 1e-6);
	for (starpu_perfmodel *m : { &common, &per_arch, &per_worker })
		starpu_perfmodel_deinit(m);
}

// ---------------------------------------------------- history and trust

// Issue 38: the warning of an entry flushed for its outliers is written for a person: "1 sample" (not "1 samples"),
// the worker's architecture as the tools name it ("CPU 0"), not the combination's index ("Comb0").
TEST_F(Models, FlushedEntryIsSaidInWords)
{
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	starpu_perfmodel model{};
	model.type = STARPU_HISTORY_BASED;
	model.symbol = "hist_flush";
	VectorTask t(&model, 1000);
	starpu_perfmodel_update_history(&model, t.task, cpu_arch(), 0, 0, 999.0); // dropped: a new entry's first run
	starpu_perfmodel_update_history(&model, t.task, cpu_arch(), 0, 0, 10.0);
	std::string err = stderr_of([&] { starpu_perfmodel_update_history(&model, t.task, cpu_arch(), 0, 0, 1000.0); });
	EXPECT_TRUE(contains(err, "model hist_flush on CPU 0 (implementation 0): 1 sample rejected against 1 kept")) << err;
	EXPECT_FALSE(contains(err, "Comb")) << err;
	EXPECT_FALSE(contains(err, "1 samples")) << err;
	EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
	starpu_perfmodel_deinit(&model);
}

TEST_F(Models, HistoryIsTrustedFromCalibrateMinimumSamples)
{
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	starpu_perfmodel model{};
	model.type = STARPU_HISTORY_BASED;
	model.symbol = "hist_trust";
	VectorTask t(&model, 1000);
	// The first measurement of a new entry is dropped (a cold run), as StarPU does.
	starpu_perfmodel_update_history(&model, t.task, cpu_arch(), 0, 0, 999.0);
	for (int i = 0; i < 9; i++)
		starpu_perfmodel_update_history(&model, t.task, cpu_arch(), 0, 0, 10.0 + (i % 2));
	double v = 0;
	std::string err = stderr_of([&] { v = starpu_task_expected_length(t.task, cpu_arch(), 0); });
	EXPECT_TRUE(std::isnan(v)) << "9 samples < STARPU_CALIBRATE_MINIMUM";
	EXPECT_TRUE(contains(err, "not calibrated enough")) << err;
	starpu_perfmodel_update_history(&model, t.task, cpu_arch(), 0, 0, 10.0);
	EXPECT_NEAR(starpu_task_expected_length(t.task, cpu_arch(), 0), 104.0 / 10, 1e-9);
	EXPECT_NEAR(starpu_perfmodel_history_based_expected_perf(&model, cpu_arch(), starpu_task_data_footprint(t.task)), 10.4, 1e-9);

	starpu_perfmodel_per_arch *pa = starpu_perfmodel_get_model_per_arch(&model, cpu_arch(), 0);
	ASSERT_NE(pa, nullptr);
	ASSERT_NE(pa->list, nullptr);
	EXPECT_EQ(pa->list->entry->nsample, 10u);
	EXPECT_EQ(pa->list->entry->size, 4000u);
	EXPECT_NEAR(pa->list->entry->deviation, std::sqrt(0.24), 1e-9); // population deviation

	VectorTask other(&model, 2000);
	EXPECT_TRUE(std::isnan(starpu_task_expected_length(other.task, cpu_arch(), 0)));
	starpu_perfmodel_deinit(&model);
}

TEST_F(Models, CalibrateMinimumComesFromTheEnvironment)
{
	ScopedEnv minimum("STARPU_CALIBRATE_MINIMUM", "2");
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	starpu_perfmodel model{};
	model.type = STARPU_HISTORY_BASED;
	model.symbol = "hist_min";
	VectorTask t(&model, 1000);
	starpu_perfmodel_update_history_n(&model, t.task, cpu_arch(), 0, 0, 5.0, 2);
	EXPECT_DOUBLE_EQ(starpu_task_expected_length(t.task, cpu_arch(), 0), 5.0);
	starpu_perfmodel_deinit(&model);
}

TEST_F(Models, SpikesDoNotPoisonTheMean)
{
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	starpu_perfmodel model{};
	model.type = STARPU_HISTORY_BASED;
	model.symbol = "spikes";
	VectorTask t(&model, 1000);
	// A spike right after the dropped first sample, then 25% spikes of 20x to 200x among noisy normal samples.
	unsigned seed = 12345;
	std::vector<double> samples = { 100.0, 5000.0 };
	for (int i = 0; i < 400; i++) {
		seed = seed * 1103515245 + 12345;
		double noise = 0.9 + 0.2 * ((seed >> 8) % 1000) / 1000.0;
		bool spike = (seed >> 20) % 4 == 0;
		samples.push_back(spike ? 100.0 * (20 + (seed >> 12) % 180) : 100.0 * noise);
	}
	std::string err = stderr_of([&] {
		for (double s : samples)
			starpu_perfmodel_update_history(&model, t.task, cpu_arch(), 0, 0, s);
	});
	double mean = starpu_task_expected_length(t.task, cpu_arch(), 0);
	EXPECT_NEAR(mean, 100.0, 2.0) << "spikes leaked into the mean";
	starpu_perfmodel_per_arch *pa = starpu_perfmodel_get_model_per_arch(&model, cpu_arch(), 0);
	EXPECT_GT(pa->list->entry->nsample, 250u);
	EXPECT_LT(pa->list->entry->deviation, 10.0);
	starpu_perfmodel_deinit(&model);
}

TEST_F(Models, RegressionFitsPowerLawWithinItsRange)
{
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	starpu_perfmodel model{};
	model.type = STARPU_REGRESSION_BASED;
	model.symbol = "reg";
	std::vector<unsigned> sizes = { 1000, 2000, 4000, 8000, 16000 };
	for (int round = 0; round < 2; round++)
		for (unsigned nx : sizes) {
			VectorTask t(&model, nx);
			starpu_perfmodel_update_history(&model, t.task, cpu_arch(), 0, 0, 0.5 * std::pow(4.0 * nx, 1.2));
			if (round == 0 && nx == 1000) {
				std::string err = stderr_of([&] { EXPECT_TRUE(std::isnan(starpu_task_expected_length(t.task, cpu_arch(), 0))); });
				EXPECT_TRUE(contains(err, "model reg is not calibrated enough for CPU 0 (implementation 0)")) << err;
			}
		}
	starpu_perfmodel_per_arch *pa = starpu_perfmodel_get_model_per_arch(&model, cpu_arch(), 0);
	EXPECT_EQ(pa->regression.nsample, 10u);
	EXPECT_NEAR(pa->regression.alpha, 0.5, 1e-6);
	EXPECT_NEAR(pa->regression.beta, 1.2, 1e-9);
	VectorTask mid(&model, 3000);
	EXPECT_NEAR(starpu_task_expected_length(mid.task, cpu_arch(), 0), 0.5 * std::pow(12000.0, 1.2), 1e-6);
	VectorTask big(&model, 20000); // 80000 bytes > 1.1 * maxx (64000)
	EXPECT_TRUE(std::isnan(starpu_task_expected_length(big.task, cpu_arch(), 0)));
	starpu_perfmodel_deinit(&model);
}

TEST_F(Models, RegressionNeedsSpreadSizes)
{
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	starpu_perfmodel model{};
	model.type = STARPU_REGRESSION_BASED;
	model.symbol = "reg_narrow";
	VectorTask t(&model, 1000);
	for (int i = 0; i < 20; i++)
		starpu_perfmodel_update_history(&model, t.task, cpu_arch(), 0, 0, 10.0);
	std::string err = stderr_of([&] { EXPECT_TRUE(std::isnan(starpu_task_expected_length(t.task, cpu_arch(), 0))); });
	starpu_perfmodel_deinit(&model);
}

TEST_F(Models, NonLinearRegressionIsFittedAtSaveAndUsedAfterReload)
{
	auto truth = [](double size) { return 2e-3 * std::pow(size, 1.3) + 20.0; };
	std::vector<unsigned> sizes = { 1000, 4000, 16000, 64000, 256000 };
	{
		starpu_conf conf = conf_with_ncpus(1);
		conf.calibrate = 1;
		Runtime rt(&conf);
		ASSERT_TRUE(rt.ok());
		starpu_perfmodel model{};
		model.type = STARPU_NL_REGRESSION_BASED;
		model.symbol = "nlreg";
		for (unsigned nx : sizes) {
			VectorTask t(&model, nx);
			for (int i = 0; i < 12; i++)
				starpu_perfmodel_update_history(&model, t.task, cpu_arch(), 0, 0, truth(4.0 * nx));
			// Before a save: the history mean answers.
			EXPECT_NEAR(starpu_task_expected_length(t.task, cpu_arch(), 0), truth(4.0 * nx), 1e-6 * truth(4.0 * nx));
		}
	}
	ASSERT_TRUE(file_exists(model_file("nlreg")));
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	starpu_perfmodel model{};
	model.type = STARPU_NL_REGRESSION_BASED;
	model.symbol = "nlreg";
	VectorTask t(&model, 8000); // a size never measured: only a, b, c can answer
	double v = starpu_task_expected_length(t.task, cpu_arch(), 0);
	EXPECT_NEAR(v, truth(32000.0), 0.05 * truth(32000.0));
	starpu_perfmodel_per_arch *pa = starpu_perfmodel_get_model_per_arch(&model, cpu_arch(), 0);
	EXPECT_TRUE(pa->regression.nl_valid);
	starpu_perfmodel_deinit(&model);
}

// ------------------------------------------------- multiple regression

// The parameters (M, N, K) of a task are the doubles its cl_arg points to.
void mlr_parameters(starpu_task *task, double *parameters)
{
	memcpy(parameters, task->cl_arg, 3 * sizeof(double));
}

const char *kMlrNames[] = { "M", "N", "K" };
unsigned kMlrTerm0[] = { 2, 1, 0 }, kMlrTerm1[] = { 0, 3, 1 };
unsigned *kMlrTerms[] = { kMlrTerm0, kMlrTerm1 };

// time = 5 + 0.5·M²·N + 0.01·N³·K
double mlr_truth(const double *p)
{
	return 5.0 + 0.5 * p[0] * p[0] * p[1] + 0.01 * p[1] * p[1] * p[1] * p[2];
}

double mlr_truth3(double m, double n, double k)
{
	double p[3] = { m, n, k };
	return mlr_truth(p);
}

starpu_perfmodel mlr_model(const char *symbol)
{
	starpu_perfmodel model{};
	model.type = STARPU_MULTIPLE_REGRESSION_BASED;
	model.symbol = symbol;
	model.parameters = mlr_parameters;
	model.nparameters = 3;
	model.parameters_names = kMlrNames;
	model.ncombinations = 2;
	model.combinations = kMlrTerms;
	return model;
}

// Records n samples of the true law (parameters varying with i), starting at first.
void mlr_feed(starpu_perfmodel *model, int first, int n)
{
	VectorTask t(model, 10);
	for (int i = first; i < first + n; i++) {
		double p[3] = { 1.0 + i % 7, 2.0 + i % 5, 1.0 + i % 3 };
		t.task->cl_arg = p;
		starpu_perfmodel_update_history(model, t.task, cpu_arch(), 0, 0, mlr_truth(p));
	}
}

double mlr_predict(starpu_perfmodel *model, double m, double n, double k)
{
	VectorTask t(model, 10);
	double p[3] = { m, n, k };
	t.task->cl_arg = p;
	return starpu_task_expected_length(t.task, cpu_arch(), 0);
}

std::string mlr_samples_file(const std::string &home, const std::string &symbol)
{
	return home + "/.starpu/sampling/codelets/tmp/" + symbol + ".out";
}

// Multiple-regression models are fitted unless configure was given --disable-mlr.
bool mlr_fitted()
{
#ifdef ASTRO_TEST_MLR_MODEL
	return true;
#else
	return false;
#endif
}

// Whether the process mapped a library whose name holds name.
bool library_loaded(const char *name)
{
	return contains(read_file("/proc/self/maps"), name);
}

TEST_F(Models, MultipleRegressionRecoversKnownCoefficients)
{
	if (!mlr_fitted())
		GTEST_SKIP() << "configured with --disable-mlr: multiple-regression models are not fitted";
	{
		Runtime rt(1);
		ASSERT_TRUE(rt.ok());
		starpu_perfmodel model = mlr_model("mlr_fit");
		std::string err = stderr_of([&] { EXPECT_TRUE(std::isnan(mlr_predict(&model, 2, 3, 4))); });
		EXPECT_TRUE(contains(err, "not calibrated enough")) << "not fitted yet: NaN, calibration forced\n" << err;
		mlr_feed(&model, 0, 40);
		EXPECT_TRUE(std::isnan(mlr_predict(&model, 2, 3, 4))) << "coefficients are fitted when the model is saved";
		err = stderr_of([&] { starpu_save_history_based_model(&model); });
		EXPECT_EQ(err, "");
		double p[3] = { 9, 4, 7 }; // never measured
		EXPECT_NEAR(mlr_predict(&model, 9, 4, 7), mlr_truth(p), 1e-6 * mlr_truth(p));
#ifdef ASTRO_TEST_MLR_SYSTEM_BLAS
		EXPECT_TRUE(library_loaded("liblapacke")) << "--enable-mlr-system-blas: fitted by LAPACKE_dgels";
#else
		EXPECT_FALSE(library_loaded("liblapacke")) << "fitted by the built-in solver: LAPACKE is not loaded";
#endif
		starpu_perfmodel_per_arch *pa = starpu_perfmodel_get_model_per_arch(&model, cpu_arch(), 0);
		ASSERT_EQ(pa->regression.ncoeff, 3u);
		EXPECT_NEAR(pa->regression.coeff[0], 5.0, 1e-6);
		EXPECT_NEAR(pa->regression.coeff[1], 0.5, 1e-9);
		EXPECT_NEAR(pa->regression.coeff[2], 0.01, 1e-9);
		starpu_perfmodel_deinit(&model);
	}
	std::string text = read_file(model_file("mlr_fit"));
	EXPECT_TRUE(contains(text, "# n\tintercept\tM^2*N\t\tN^3*K\t\t\n3\t5.000000e+00   \t5.000000e-01   \t1.000000e-02   \n")) << text;
	std::string samples = read_file(mlr_samples_file(home_, "mlr_fit"));
	EXPECT_EQ(samples.substr(0, 18), "Duration, M, N, K\n") << samples;
	EXPECT_EQ(std::count(samples.begin(), samples.end(), '\n'), 40) << "header, then one line per sample, no final newline";
	EXPECT_TRUE(contains(samples, "\n" + std::to_string(mlr_truth3(1, 2, 1)).substr(0, 8))) << samples;

	// The file round-trips: another run loads the coefficients and predicts with them.
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	starpu_perfmodel model = mlr_model("mlr_fit");
	EXPECT_NEAR(mlr_predict(&model, 3, 3, 3), mlr_truth3(3, 3, 3), 1e-5);
	std::string err = stderr_of([&] { starpu_save_history_based_model(&model); });
	EXPECT_EQ(read_file(model_file("mlr_fit")), text) << "loaded and saved with nothing new: the same bytes";
	starpu_perfmodel loaded{};
	ASSERT_EQ(starpu_perfmodel_load_symbol("mlr_fit", &loaded), 0);
	EXPECT_EQ(loaded.type, STARPU_MULTIPLE_REGRESSION_BASED) << "guessed from the coefficients";
	starpu_perfmodel_unload_model(&loaded);
	starpu_perfmodel_deinit(&model);
}

// StarPU 1.4.12's file of the mlr example (built without --enable-mlr: zero coefficients), notes §4.
const std::string kMlrStarPU =
	header(1) + "#####\n# Model for cpu0_impl0 (Comb0)\n# number of entries\n0\n" +
	"# sumlnx\tsumlnx2\t\tsumlny\t\tsumlnxlny\talpha\t\tbeta\t\tn\tminx\t\tmaxx\n"
	"0.000000e+00   \t0.000000e+00   \t0.000000e+00   \t0.000000e+00   \tnan            \tnan            \t0\t0              \t0              \n"
	"# a\t\tb\t\tc\n"
	"nan            \tnan            \tnan            \n"
	"# n\tintercept\tM^2*N\t\tN^3*K\t\t\n"
	"3\t0.000000e+00   \t0.000000e+00   \t0.000000e+00   \n" + kHashHeader + "\n";

TEST_F(Models, MultipleRegressionStarPUFileRoundTrips)
{
	put("mlr_golden", kMlrStarPU);
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	starpu_perfmodel model = mlr_model("mlr_golden");
	EXPECT_EQ(mlr_predict(&model, 2, 3, 4), 0.0) << "zero coefficients predict 0";
	starpu_perfmodel_per_arch *pa = starpu_perfmodel_get_model_per_arch(&model, cpu_arch(), 0);
	EXPECT_EQ(pa->regression.ncoeff, 3u);
	EXPECT_TRUE(pa->regression.multi_valid);
	std::string err = stderr_of([&] { starpu_save_history_based_model(&model); });
	EXPECT_EQ(read_file(model_file("mlr_golden")), kMlrStarPU);
	starpu_perfmodel_deinit(&model);

	// The same file read for a model that describes other terms: no prediction, one warning.
	starpu_perfmodel other = mlr_model("mlr_golden");
	other.ncombinations = 1;
	double v = 0;
	err = stderr_of([&] { v = mlr_predict(&other, 2, 3, 4); });
	EXPECT_TRUE(std::isnan(v));
	EXPECT_TRUE(contains(err, "its file has 3 coefficients, the model describes 1 combinations")) << err;
	starpu_perfmodel_deinit(&other);
}

TEST_F(Models, MultipleRegressionUsesTheSamplesOfEarlierRuns)
{
	if (!mlr_fitted())
		GTEST_SKIP() << "configured with --disable-mlr: multiple-regression models are not fitted";
	for (int run = 0; run < 2; run++) {
		starpu_conf conf = conf_with_ncpus(1);
		conf.calibrate = 1;
		Runtime rt(&conf);
		ASSERT_TRUE(rt.ok());
		starpu_perfmodel model = mlr_model("mlr_runs");
		// Two samples per run: too few for three coefficients alone, enough with the earlier run's.
		mlr_feed(&model, 2 * run, 2);
		std::string err = stderr_of([&] { starpu_save_history_based_model(&model); });
		if (run == 0) {
			EXPECT_TRUE(contains(err, "2 samples for 3 coefficients")) << err;
			EXPECT_TRUE(std::isnan(mlr_predict(&model, 2, 3, 4))) << "too few samples: not calibrated";
		} else {
			EXPECT_EQ(err, "");
			EXPECT_FALSE(std::isnan(mlr_predict(&model, 2, 3, 4)));
		}
		starpu_perfmodel_deinit(&model);
	}
	std::string samples = read_file(mlr_samples_file(home_, "mlr_runs"));
	EXPECT_EQ(std::count(samples.begin(), samples.end(), '\n'), 4) << samples;

	// STARPU_CALIBRATE=2 starts the samples again.
	starpu_conf conf = conf_with_ncpus(1);
	conf.calibrate = 2;
	{
		Runtime rt(&conf);
		ASSERT_TRUE(rt.ok());
		starpu_perfmodel model = mlr_model("mlr_runs");
		mlr_feed(&model, 0, 1);
		stderr_of([&] { starpu_save_history_based_model(&model); });
		starpu_perfmodel_deinit(&model);
	}
	samples = read_file(mlr_samples_file(home_, "mlr_runs"));
	EXPECT_EQ(std::count(samples.begin(), samples.end(), '\n'), 1) << samples;
}

TEST_F(Models, MultipleRegressionWithoutTermsOnlyCollectsSamples)
{
	{
		Runtime rt(1);
		ASSERT_TRUE(rt.ok());
		starpu_perfmodel model = mlr_model("mlr_collect");
		model.ncombinations = 0;
		model.combinations = nullptr;
		model.parameters_names = nullptr;
		std::string err = stderr_of([&] { mlr_feed(&model, 0, 3); });
		EXPECT_EQ(err, "") << "no terms is a valid description: samples for an analysis";
		EXPECT_TRUE(std::isnan(mlr_predict(&model, 1, 2, 3)));
		err = stderr_of([&] { starpu_save_history_based_model(&model); });
		EXPECT_EQ(err, "");
		starpu_perfmodel_deinit(&model);
	}
	std::string samples = read_file(mlr_samples_file(home_, "mlr_collect"));
	EXPECT_EQ(samples.substr(0, 21), "Duration, P0, P1, P2\n") << samples;
	EXPECT_EQ(std::count(samples.begin(), samples.end(), '\n'), 3) << samples;
	EXPECT_TRUE(contains(read_file(model_file("mlr_collect")), "# n\tintercept\t\n1\tnan            \n"));
}

TEST_F(Models, MultipleRegressionRecordsExecutedTasks)
{
	{
		starpu_conf conf = conf_with_ncpus(1);
		conf.calibrate = 1;
		Runtime rt(&conf);
		ASSERT_TRUE(rt.ok());
		starpu_perfmodel model = mlr_model("mlr_exec");
		VectorTask t(&model, 10);
		double p[7][3];
		for (int i = 0; i < 7; i++) {
			p[i][0] = 1 + i, p[i][1] = 2, p[i][2] = 3 + i % 2;
			ASSERT_EQ(starpu_task_insert(&t.cl, STARPU_R, t.handle, STARPU_CL_ARGS_NFREE, p[i], sizeof(p[i]), 0), 0);
		}
		starpu_task_wait_for_all();
	}
	std::string samples = read_file(mlr_samples_file(home_, "mlr_exec"));
	EXPECT_EQ(std::count(samples.begin(), samples.end(), '\n'), 7) << samples;
	EXPECT_TRUE(contains(samples, ", 1.000000, 2.000000, 3.000000")) << samples;
}

TEST_F(Models, MultipleRegressionBadDescriptionIsOneClearError)
{
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	struct Case
	{
		const char *symbol;
		void (*spoil)(starpu_perfmodel *);
		const char *says;
	} cases[] = {
		{ "mlr_no_terms", [](starpu_perfmodel *m) { m->combinations = nullptr; }, "ncombinations is 2 but combinations is NULL" },
		{ "mlr_null_term", [](starpu_perfmodel *m) { static unsigned *terms[] = { kMlrTerm0, nullptr }; m->combinations = terms; },
		  "combinations[1] is NULL" },
		{ "mlr_no_function", [](starpu_perfmodel *m) { m->parameters = nullptr; }, "parameters is NULL" },
		{ "mlr_no_parameters", [](starpu_perfmodel *m) { m->nparameters = 0; }, "nparameters is 0" },
	};
	for (const Case &c : cases) {
		starpu_perfmodel model = mlr_model(c.symbol);
		c.spoil(&model);
		std::string err = stderr_of([&] {
			EXPECT_TRUE(std::isnan(mlr_predict(&model, 1, 2, 3)));
			EXPECT_TRUE(std::isnan(mlr_predict(&model, 1, 2, 3)));
			mlr_feed(&model, 0, 3);
		});
		EXPECT_TRUE(contains(err, std::string("multiple-regression model ") + c.symbol + ": " + c.says)) << err;
		EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << "one line, once:\n" << err;
		starpu_perfmodel_deinit(&model);
	}
}

// ------------------------------------------------------------- energy

TEST_F(Models, EnergyModelsAreFedAndPredictJoules)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	starpu_perfmodel energy{};
	energy.type = STARPU_HISTORY_BASED;
	energy.symbol = "en_fed";
	VectorTask t(nullptr, 1000);
	t.cl.energy_model = &energy;
	EXPECT_EQ(starpu_task_expected_length(t.task, cpu_arch(), 0), 0.0) << "no time model";
	starpu_perfmodel_update_history_n(&energy, t.task, cpu_arch(), 0, 0, 0.25, 10);
	EXPECT_DOUBLE_EQ(starpu_task_expected_energy(t.task, cpu_arch(), 0), 0.25);
	EXPECT_DOUBLE_EQ(starpu_task_worker_expected_energy(t.task, 1, 0, 0), 0.25);
	EXPECT_DOUBLE_EQ(starpu_task_expected_energy_average(t.task, 0), 0.25);
	starpu_perfmodel_deinit(&energy);
}

TEST_F(Models, EnergyCountersAreNotAvailableHere)
{
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	std::string err = stderr_of([] { EXPECT_EQ(starpu_energy_start(-1, STARPU_CPU_WORKER), -ENODEV); });
	EXPECT_TRUE(contains(err, "starpu_energy_start: no energy counter")) << err;
	EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
	starpu_perfmodel model{};
	err = stderr_of([&] { EXPECT_EQ(starpu_energy_stop(&model, nullptr, 0, 10, -1, STARPU_CPU_WORKER), -ENODEV); });
	EXPECT_TRUE(contains(err, "starpu_energy_stop: no energy counter")) << err;
}

// A measuring plugin's part: it fills the task's energy by the end of its execution.
void fill_energy(const struct astro_event *ev, void *)
{
	if (ev->task && ev->task->profiling_info)
		ev->task->profiling_info->energy_consumed = 0.125;
}

TEST_F(Models, EnergyMeasuredByAPluginCalibratesTheEnergyModel)
{
	starpu_conf conf = conf_with_ncpus(1);
	conf.calibrate = 1;
	Runtime rt(&conf);
	ASSERT_TRUE(rt.ok());
	ASSERT_EQ(starpu_profiling_status_set(STARPU_PROFILING_ENABLE), STARPU_PROFILING_DISABLE);
	// Subscribed after the models: the energy must be read whatever the order of the observers.
	int sub = astro_observe_subscribe(ASTRO_OBSERVE_UNTIMED | ASTRO_MOMENT_BIT(ASTRO_MOMENT_TASK_ENDED), fill_energy, nullptr);
	ASSERT_GE(sub, 0);
	starpu_perfmodel energy{};
	energy.type = STARPU_HISTORY_BASED;
	energy.symbol = "en_measured";
	VectorTask t(nullptr, 1000);
	t.cl.energy_model = &energy;
	for (int i = 0; i < 11; i++) // the first one of a new entry is dropped
		ASSERT_EQ(starpu_task_insert(&t.cl, STARPU_R, t.handle, 0), 0);
	starpu_task_wait_for_all();
	EXPECT_DOUBLE_EQ(starpu_task_expected_energy(t.task, cpu_arch(), 0), 0.125);
	astro_observe_unsubscribe(sub);
	starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
}

// ------------------------------------------------- the rest of the API

TEST_F(Models, AveragesAndTransferPredictions)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	starpu_perfmodel model{};
	model.type = STARPU_HISTORY_BASED;
	model.symbol = "average";
	VectorTask t(&model, 1000);
	VectorTask none(nullptr, 1000);
	EXPECT_EQ(starpu_task_expected_length_average(none.task, 0), 0.0) << "no model: 0";
	std::string err = stderr_of([&] { EXPECT_TRUE(std::isnan(starpu_task_expected_length_average(t.task, 0))); });
	starpu_perfmodel_update_history_n(&model, t.task, cpu_arch(), 0, 0, 40.0, 10);
	EXPECT_DOUBLE_EQ(starpu_task_expected_length_average(t.task, 0), 40.0) << "two CPU workers, one architecture";
	t.cl.cpu_funcs[1] = noop; // impl 1 is faster: each worker's best counts
	starpu_perfmodel_update_history_n(&model, t.task, cpu_arch(), 0, 1, 10.0, 10);
	EXPECT_DOUBLE_EQ(starpu_task_expected_length_average(t.task, 0), 10.0);

	// One memory node: what a task reads is already there.
	EXPECT_EQ(starpu_task_expected_data_transfer_time(STARPU_MAIN_RAM, t.task), 0.0);
	EXPECT_EQ(starpu_task_expected_data_transfer_time_for(t.task, 1), 0.0);
	EXPECT_EQ(starpu_data_expected_transfer_time(t.handle, STARPU_MAIN_RAM, STARPU_RW), 0.0);
	EXPECT_EQ(starpu_task_expected_conversion_time(t.task, cpu_arch(), 0), 0.0);
	err = stderr_of([&] { EXPECT_TRUE(std::isnan(starpu_task_expected_data_transfer_time_for(t.task, 99))); });
	EXPECT_TRUE(contains(err, "no worker 99")) << err;
	err = stderr_of([&] { EXPECT_TRUE(std::isnan(starpu_data_expected_transfer_time(nullptr, STARPU_MAIN_RAM, STARPU_R))); });
	EXPECT_TRUE(contains(err, "NULL handle")) << err;

	char path[PATH_MAX];
	starpu_perfmodel_debugfilepath(&model, cpu_arch(), path, sizeof(path), 1);
	EXPECT_EQ(std::string(path), home_ + "/.starpu/sampling/debug/average.vmcpu0_impl1 (Comb0)");
	starpu_perfmodel_deinit(&model);
}

TEST_F(Models, FreeSamplingForgetsLoadedModels)
{
	put("vector_scal", kVectorScal);
	starpu_perfmodel_initialize();
	starpu_perfmodel model{};
	ASSERT_EQ(starpu_perfmodel_load_symbol("vector_scal", &model), 0);
	EXPECT_EQ(model.is_init, 1u);
	starpu_perfmodel_free_sampling();
	EXPECT_EQ(model.is_init, 0u);
	EXPECT_EQ(model.state, nullptr);
	free((char *)model.symbol);
}

// ---------------------------------------------------- quality counters

struct QualityIds
{
	int samples, predicted, calibrated, last_error, mean_error;
};

QualityIds quality_ids()
{
	auto id = [](const char *name) { return starpu_perf_counter_name_to_id(starpu_perf_counter_scope_per_codelet, name); };
	return { id("starpu.model.c_samples"), id("starpu.model.c_predicted"), id("starpu.model.c_calibrated"),
		 id("starpu.model.c_last_relative_error"), id("starpu.model.c_mean_relative_error") };
}

std::atomic<int64_t> listened_predicted{ -1 };
std::atomic<starpu_codelet *> listened_codelet{ nullptr };

void quality_listener(starpu_perf_counter_listener *, starpu_perf_counter_sample *sample, void *context)
{
	int64_t v = starpu_perf_counter_sample_get_int64_value(sample, quality_ids().predicted);
	if (context == listened_codelet.load())
		listened_predicted = v;
}

TEST_F(Models, QualityCountersFollowPredictions)
{
	// Without STARPU_CALIBRATE: executions are only compared, not recorded.
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	QualityIds ids = quality_ids();
	for (int id : { ids.samples, ids.predicted, ids.calibrated, ids.last_error, ids.mean_error })
		ASSERT_GE(id, 0);
	EXPECT_EQ(starpu_perf_counter_get_type_id(ids.calibrated), starpu_perf_counter_type_int32);
	EXPECT_EQ(starpu_perf_counter_get_type_id(ids.mean_error), starpu_perf_counter_type_double);

	starpu_perfmodel model{};
	model.type = STARPU_HISTORY_BASED;
	model.symbol = "quality";
	VectorTask t(&model, 1000);
	starpu_codelet plain{};
	plain.cpu_funcs[0] = noop;

	starpu_perf_counter_set *set = starpu_perf_counter_set_alloc(starpu_perf_counter_scope_per_codelet);
	for (int id : { ids.samples, ids.predicted, ids.calibrated, ids.last_error, ids.mean_error })
		starpu_perf_counter_set_enable_id(set, id);
	starpu_perf_counter_listener *listener = starpu_perf_counter_listener_init(set, quality_listener, nullptr);
	listened_codelet = &t.cl;
	starpu_perf_counter_set_per_codelet_listener(&t.cl, listener);
	starpu_perf_counter_set_per_codelet_listener(&plain, listener);

	// 10 samples of 1 s: trusted, and far from what a task doing nothing lasts.
	starpu_perfmodel_update_history_n(&model, t.task, cpu_arch(), 0, 0, 1e6, 10);
	for (int i = 0; i < 5; i++) {
		ASSERT_EQ(starpu_task_insert(&t.cl, STARPU_R, t.handle, 0), 0);
		ASSERT_EQ(starpu_task_insert(&plain, 0), 0);
	}
	starpu_task_wait_for_all();

	auto read = [](int id, starpu_codelet *cl) {
		union astro_counter_value v;
		EXPECT_EQ(astro_counter_read(id, cl, &v), 0);
		return v;
	};
	EXPECT_EQ(read(ids.samples, &t.cl).int64_val, 10) << "the 10 fed; executions not recorded without STARPU_CALIBRATE";
	EXPECT_EQ(read(ids.predicted, &t.cl).int64_val, 5);
	EXPECT_EQ(read(ids.calibrated, &t.cl).int32_val, 1);
	double last = read(ids.last_error, &t.cl).double_val, mean = read(ids.mean_error, &t.cl).double_val;
	EXPECT_GT(last, 10.0) << "a 1 s prediction for a task of microseconds";
	EXPECT_GT(mean, 10.0);
	EXPECT_TRUE(std::isfinite(mean));
	// The refresh that follows an execution may run before the models compare it (the counters' observer
	// came first): the listener sees the values at most one execution late.
	EXPECT_GE(listened_predicted.load(), 4);
	EXPECT_LE(listened_predicted.load(), 5);
	// A codelet without a model: nothing predicted.
	EXPECT_EQ(read(ids.predicted, &plain).int64_val, 0);
	EXPECT_EQ(read(ids.calibrated, &plain).int32_val, 0);
	EXPECT_TRUE(std::isnan(read(ids.mean_error, &plain).double_val));

	starpu_perf_counter_unset_per_codelet_listener(&t.cl);
	starpu_perf_counter_unset_per_codelet_listener(&plain);
	starpu_perf_counter_listener_exit(listener);
	starpu_perf_counter_set_free(set);
	starpu_perfmodel_deinit(&model);
}

TEST_F(Models, QualityCountersSayWhenTheModelIsNotCalibrated)
{
	starpu_conf conf = conf_with_ncpus(1);
	conf.calibrate = 1;
	Runtime rt(&conf);
	ASSERT_TRUE(rt.ok());
	QualityIds ids = quality_ids();
	starpu_perfmodel model{};
	model.type = STARPU_HISTORY_BASED;
	model.symbol = "quality_cal";
	VectorTask t(&model, 1000);
	starpu_perf_counter_set *set = starpu_perf_counter_set_alloc(starpu_perf_counter_scope_per_codelet);
	starpu_perf_counter_set_enable_id(set, ids.predicted);
	starpu_perf_counter_listener *listener = starpu_perf_counter_listener_init(set, quality_listener, nullptr);
	starpu_perf_counter_set_per_codelet_listener(&t.cl, listener);
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(starpu_task_insert(&t.cl, STARPU_R, t.handle, 0), 0);
	starpu_task_wait_for_all();
	union astro_counter_value v;
	ASSERT_EQ(astro_counter_read(ids.samples, &t.cl, &v), 0);
	EXPECT_EQ(v.int64_val, 3) << "calibrating: each execution is a sample";
	ASSERT_EQ(astro_counter_read(ids.predicted, &t.cl, &v), 0);
	EXPECT_EQ(v.int64_val, 0) << "fewer than STARPU_CALIBRATE_MINIMUM samples: no prediction";
	ASSERT_EQ(astro_counter_read(ids.calibrated, &t.cl, &v), 0);
	EXPECT_EQ(v.int32_val, 0);
	ASSERT_EQ(astro_counter_read(ids.last_error, &t.cl, &v), 0);
	EXPECT_TRUE(std::isnan(v.double_val));
	starpu_perf_counter_unset_per_codelet_listener(&t.cl);
	starpu_perf_counter_listener_exit(listener);
	starpu_perf_counter_set_free(set);
	starpu_perfmodel_deinit(&model);
}

// ---------------------------------------------- calibration by execution

// Seed 003 section 3.3: a history model's symbol is mandatory. Without one, the task still runs, one
// error says why the model is neither calibrated nor saved, and no file is written.
TEST_F(Models, HistoryModelWithoutSymbolIsSaidAndNotSaved)
{
	starpu_perfmodel model{};
	model.type = STARPU_HISTORY_BASED;
	std::string err = stderr_of([&] {
		starpu_conf conf = conf_with_ncpus(1);
		conf.calibrate = 1;
		Runtime rt(&conf);
		ASSERT_TRUE(rt.ok());
		VectorTask t(&model, 64);
		for (int i = 0; i < 3; i++)
			ASSERT_EQ(starpu_task_insert(&t.cl, STARPU_R, t.handle, 0), 0);
		starpu_task_wait_for_all();
	});
	EXPECT_TRUE(contains(err, "has no symbol: it cannot be calibrated nor saved; set model->symbol")) << err;
	size_t first = err.find("has no symbol");
	EXPECT_EQ(err.find("has no symbol", first + 1), std::string::npos) << "said once:\n" << err;
	DIR *d = opendir(dir().c_str());
	int files = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		files += e->d_name[0] != '.';
	if (d)
		closedir(d);
	EXPECT_EQ(files, 0) << "no model file in " << dir();
}

// starpu_task_get_model_name(): the symbol of the codelet's model, NULL without one;
// starpu_task_get_name(): the task's name, else the codelet's, else the model's symbol.
TEST_F(Models, TaskModelNameAndName)
{
	starpu_perfmodel model{};
	model.type = STARPU_HISTORY_BASED;
	model.symbol = "named_model";
	starpu_codelet cl{}, bare{};
	cl.cpu_funcs[0] = bare.cpu_funcs[0] = noop;
	cl.model = &model;
	starpu_task *t = starpu_task_create();
	t->destroy = 0;
	t->cl = &cl;
	EXPECT_STREQ(starpu_task_get_model_name(t), "named_model");
	EXPECT_STREQ(starpu_task_get_name(t), "named_model") << "no task nor codelet name: the model's symbol";
	cl.name = "codelet_name";
	EXPECT_STREQ(starpu_task_get_name(t), "codelet_name");
	t->name = "task_name";
	EXPECT_STREQ(starpu_task_get_name(t), "task_name");
	EXPECT_STREQ(starpu_task_get_model_name(t), "named_model") << "the name does not change the model's";
	t->cl = &bare;
	EXPECT_EQ(starpu_task_get_model_name(t), nullptr);
	t->name = nullptr;
	EXPECT_EQ(starpu_task_get_name(t), nullptr);
	t->cl = nullptr;
	EXPECT_EQ(starpu_task_get_model_name(t), nullptr);
	EXPECT_EQ(starpu_task_get_model_name(nullptr), nullptr);
	EXPECT_EQ(starpu_task_get_name(nullptr), nullptr);
	starpu_task_destroy(t);
}

TEST_F(Models, CalibrateOneRecordsExecutedTasksAndSavesAtShutdown)
{
	starpu_perfmodel model{};
	model.type = STARPU_HISTORY_BASED;
	model.symbol = "exec_hist";
	{
		// Empty tasks last a few ns, noisy beyond any outlier test: here every sample must count.
		ScopedEnv tolerant("STARPU_HISTORY_MAX_ERROR", "2000000000");
		starpu_conf conf = conf_with_ncpus(2);
		conf.calibrate = 1;
		Runtime rt(&conf);
		ASSERT_TRUE(rt.ok());
		VectorTask t(&model, 500);
		starpu_codelet plain{};
		plain.cpu_funcs[0] = noop;
		for (int i = 0; i < 12; i++) {
			ASSERT_EQ(starpu_task_insert(&t.cl, STARPU_R, t.handle, 0), 0);
			ASSERT_EQ(starpu_task_insert(&plain, 0), 0);
		}
		starpu_task_wait_for_all();
	}
	EXPECT_EQ(model.is_init, 0u);
	std::string text = read_file(model_file("exec_hist"));
	ASSERT_FALSE(text.empty());
	// 12 executions, the first dropped; the plain codelet has no model and leaves no trace.
	EXPECT_TRUE(contains(text, "\t11\n")) << text;
	EXPECT_TRUE(contains(text, "# Model for cpu0_impl0 (Comb0)")) << text;

	// Without STARPU_CALIBRATE, a calibrated model is used and the file is left alone.
	std::string before = read_file(model_file("exec_hist"));
	{
		Runtime rt(1);
		ASSERT_TRUE(rt.ok());
		VectorTask t(&model, 500);
		EXPECT_GT(starpu_task_expected_length(t.task, cpu_arch(), 0), 0.0);
		ASSERT_EQ(starpu_task_insert(&t.cl, STARPU_R, t.handle, 0), 0);
		starpu_task_wait_for_all();
	}
	EXPECT_EQ(read_file(model_file("exec_hist")), before);
}

TEST_F(Models, CalibrateTwoRestartsTheModel)
{
	put("restart", kVectorScal);
	starpu_conf conf = conf_with_ncpus(1);
	conf.calibrate = 2;
	{
		Runtime rt(&conf);
		ASSERT_TRUE(rt.ok());
		starpu_perfmodel model{};
		model.type = STARPU_HISTORY_BASED;
		model.symbol = "restart";
		VectorTask t(&model, 204800);
		starpu_perfmodel_update_history_n(&model, t.task, cpu_arch(), 0, 0, 50.0, 3);
	}
	std::string text = read_file(model_file("restart"));
	EXPECT_TRUE(contains(text, "d0c0d6c6\t819200         \t0.000000e+00   \t5.000000e+01   \t0.000000e+00   \t1.500000e+02   \t7.500000e+03   \t3\n")) << text;
	EXPECT_FALSE(contains(text, "impl1")) << text;
}

// ------------------------------------------------------------- the files

TEST_F(Models, StarPUFilesRoundTripByteForByte)
{
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	for (auto &golden : { std::make_pair("vector_scal", &kVectorScal), std::make_pair("pn_nlreg", &kNlReg) }) {
		put(golden.first, *golden.second);
		starpu_perfmodel model{};
		ASSERT_EQ(starpu_perfmodel_load_symbol(golden.first, &model), 0);
		EXPECT_EQ(model.type, std::string(golden.first) == "pn_nlreg" ? STARPU_NL_REGRESSION_BASED : STARPU_HISTORY_BASED);
		starpu_perfmodel_per_arch *pa = starpu_perfmodel_get_model_per_arch(&model, cpu_arch(), 0);
		ASSERT_NE(pa, nullptr);
		ASSERT_NE(pa->list, nullptr);
		if (std::string(golden.first) == "vector_scal") {
			EXPECT_DOUBLE_EQ(pa->list->entry->mean, 86.1396);
			EXPECT_EQ(pa->list->entry->nsample, 10u);
			EXPECT_DOUBLE_EQ(starpu_perfmodel_history_based_expected_perf(&model, cpu_arch(), 0xd0c0d6c6), 86.1396);
		} else {
			EXPECT_TRUE(pa->regression.nl_valid);
			EXPECT_DOUBLE_EQ(pa->regression.c, 20.23245);
		}
		char path[PATH_MAX];
		starpu_perfmodel_get_model_path(golden.first, path, sizeof(path));
		EXPECT_EQ(std::string(path), model_file(golden.first));
		std::string err = stderr_of([&] { starpu_save_history_based_model(&model); });
		std::string saved = read_file(model_file(golden.first));
		EXPECT_EQ(saved, *golden.second); // nothing new measured: the same bytes
		EXPECT_EQ(starpu_perfmodel_unload_model(&model), 0);
		EXPECT_EQ(model.symbol, nullptr);
	}
	starpu_perfmodel missing{};
	std::string err = stderr_of([&] { EXPECT_EQ(starpu_perfmodel_load_symbol("no_such_model", &missing), 1); });
	EXPECT_TRUE(contains(err, "There is no performance model for symbol no_such_model")) << err;
	std::string folder = model_file("no_such_model");
	folder = folder.substr(0, folder.rfind('/'));
	EXPECT_TRUE(contains(err, " in " + folder + " ")) << "the folder looked in, not a function's name: " << err;
	EXPECT_FALSE(contains(err, "looked in starpu_perfmodel_directory()")) << err;
}

TEST_F(Models, SavingAddsToWhatTheFileHolds)
{
	put("vector_scal", kVectorScal);
	{
		starpu_conf conf = conf_with_ncpus(1);
		conf.calibrate = 1;
		Runtime rt(&conf);
		ASSERT_TRUE(rt.ok());
		starpu_perfmodel model{};
		model.type = STARPU_HISTORY_BASED;
		model.symbol = "vector_scal";
		VectorTask t(&model, 204800);
		EXPECT_DOUBLE_EQ(starpu_task_expected_length(t.task, cpu_arch(), 0), 86.1396);
		starpu_perfmodel_update_history_n(&model, t.task, cpu_arch(), 0, 1, 41.84525, 2);
		// Meanwhile another process added samples to impl0.
		std::string other = kVectorScal;
		other.replace(other.find("8.613960e+02   \t7.548303e+04   \t10"), 34, "9.475356e+02   \t8.290301e+04   \t11");
		put("vector_scal", other);
	}
	std::string text = read_file(model_file("vector_scal"));
	EXPECT_TRUE(contains(text, "9.475356e+02   \t8.290301e+04   \t11\n")) << text;	// theirs kept
	EXPECT_TRUE(contains(text, "\t10\n\n")) << text;					// ours added to impl1: 8 + 2
	EXPECT_EQ(listing().size(), 2u) << "the model and its lock file, no temporary left";
}

void expect_set_aside(Models *t, const std::string &symbol, const std::string &content, const std::string &line)
{
	t->put(symbol, content);
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	starpu_perfmodel model{};
	model.type = STARPU_HISTORY_BASED;
	model.symbol = symbol.c_str();
	VectorTask task(&model, 204800);
	double v = 0;
	std::string err = stderr_of([&] { v = starpu_task_expected_length(task.task, cpu_arch(), 0); });
	EXPECT_TRUE(std::isnan(v)) << "the run goes on with an empty model";
	EXPECT_TRUE(contains(err, t->model_file(symbol) + ", line " + line)) << err;
	EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 2) << "one warning for the file, one for the uncalibrated model:\n" << err;
	EXPECT_FALSE(file_exists(t->model_file(symbol)));
	std::string aside = t->model_file(symbol) + ".corrupt-" + std::to_string(getpid());
	EXPECT_EQ(read_file(aside), content) << "set aside, not deleted";
	starpu_perfmodel_deinit(&model);
}

TEST_F(Models, CorruptFileIsSetAsideWithOneWarning)
{
	std::string corrupt = kVectorScal;
	corrupt.replace(corrupt.find("8.613960e+01"), 12, "eighty-six");
	expect_set_aside(this, "corrupt", corrupt, "39: malformed history entry");
}

TEST_F(Models, TruncatedFileIsSetAsideWithOneWarning)
{
	expect_set_aside(this, "truncated", kVectorScal.substr(0, kVectorScal.size() / 2), "");
}

TEST_F(Models, ForeignVersionIsSetAside)
{
	std::string v44 = kVectorScal;
	v44.replace(v44.find("\n45\n"), 4, "\n44\n");
	expect_set_aside(this, "foreign", v44, "3: format version 44");
}

// ------------------------------------------------- values of the files

size_t occurrences(const std::string &text, const std::string &what)
{
	size_t n = 0;
	for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size()))
		n++;
	return n;
}

// A history entry line: hash, size, flops, mean, deviation, sum, sum2, n.
std::string entry(const char *hash, const char *mean, const char *sum, const char *sum2, const char *n)
{
	return std::string(hash) + "\t819200\t0.000000e+00\t" + mean + "\t0.000000e+00\t" + sum + "\t" + sum2 + "\t" + n + "\n";
}

// A one-block history file: its entries start at line 39.
std::string history_file(const std::vector<std::string> &entries)
{
	std::string text = header(1) + "#####\n# Model for cpu0_impl0 (Comb0)\n# number of entries\n" + std::to_string(entries.size()) +
			   "\n" + kRegNone + kHashHeader;
	for (const std::string &e : entries)
		text += e;
	return text + "\n";
}

// The mean and the sample count of the entry of hash in a model file's text (-1, -1 when missing).
std::pair<double, double> entry_values(const std::string &text, const std::string &hash)
{
	for (const std::string &line : lines_of(text))
		if (line.compare(0, hash.size(), hash) == 0) {
			std::istringstream in(line);
			std::string f[8];
			for (std::string &field : f)
				in >> field;
			return { std::stod(f[3]), std::stod(f[7]) };
		}
	return { -1, -1 };
}

// A count that wraps, NaN, a negative mean, sums that overflow, a variance below zero: each bad entry is set
// aside, the rest of the file is used, and one warning names the file, the lines and the fix.
TEST_F(Models, BadValuesAreSetAsideEntryByEntry)
{
	put("values", history_file({
		entry("d0c0d6c6", "8.613960e+01", "8.613960e+02", "7.548303e+04", "10"),
		entry("00000001", "1.000000e+02", "4.294967e+11", "4.294967e+13", "4294967295"),
		entry("00000002", "nan", "nan", "0.000000e+00", "10"),
		entry("00000003", "-1.000000e+308", "-1.000000e+308", "0.000000e+00", "10"),
		entry("00000004", "1.700000e+307", "1.700000e+308", "1.700000e+308", "10"),
		entry("00000005", "1.000000e+02", "1.000000e+03", "1.000000e+00", "10"),
	}));
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	starpu_perfmodel model{};
	std::string err = stderr_of([&] { ASSERT_EQ(starpu_perfmodel_load_symbol("values", &model), 0); });
	EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
	EXPECT_TRUE(contains(err, model_file("values") + ": 5 entries or regressions set aside")) << err;
	EXPECT_TRUE(contains(err, "line 40: its sample count is over 2147483647")) << err;
	EXPECT_TRUE(contains(err, "line 41: its mean, deviation, sum and sum2 must be finite, non-negative")) << err;
	EXPECT_TRUE(contains(err, "correct or delete those lines")) << err;
	starpu_perfmodel_per_arch *pa = starpu_perfmodel_get_model_per_arch(&model, cpu_arch(), 0);
	ASSERT_NE(pa, nullptr);
	unsigned kept = 0;
	for (starpu_perfmodel_history_list *l = pa->list; l; l = l->next)
		kept++;
	EXPECT_EQ(kept, 1u) << "only the good entry";
	EXPECT_DOUBLE_EQ(starpu_perfmodel_history_based_expected_perf(&model, cpu_arch(), 0xd0c0d6c6), 86.1396);
	for (uint32_t footprint = 1; footprint <= 5; footprint++) {
		double v = starpu_perfmodel_history_based_expected_perf(&model, cpu_arch(), footprint);
		EXPECT_TRUE(std::isnan(v)) << std::hex << footprint << ": " << v;
	}
	EXPECT_TRUE(file_exists(model_file("values"))) << "the file stays: only a save rewrites it";
	starpu_perfmodel_unload_model(&model);
}

double cost_minus_five(struct starpu_task *, unsigned)
{
	return -5.0;
}

// A negative mean, a non-linear regression whose c makes it negative, a negative alpha, a cost function
// returning -5: what a policy gets is never negative nor infinite.
TEST_F(Models, PredictionsAreNeverNegativeNorInfinite)
{
	put("negative", history_file({ entry("d0c0d6c6", "-1.000000e+308", "-1.000000e+308", "0.000000e+00", "10") }));
	std::string nl = kNlReg;
	nl.replace(nl.find("2.023245e+01"), 12, "-1.000000e+06");
	put("nl_negative", nl);
	std::string reg = kNlReg;
	reg.replace(reg.find("1.298877e-03"), 12, "-1.298877e-03");
	put("reg_negative", reg);
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	struct Case { const char *symbol; starpu_perfmodel_type type; unsigned nx; } cases[] = {
		{ "negative", STARPU_HISTORY_BASED, 204800 },
		{ "nl_negative", STARPU_NL_REGRESSION_BASED, 1000 },
		{ "reg_negative", STARPU_REGRESSION_BASED, 1000 },
		{ "cost", STARPU_COMMON, 1000 },
	};
	for (const Case &c : cases) {
		starpu_perfmodel model{};
		model.type = c.type;
		model.symbol = c.symbol;
		model.cost_function = cost_minus_five;
		VectorTask t(&model, c.nx);
		double v = 0;
		std::string err = stderr_of([&] { v = starpu_task_expected_length(t.task, cpu_arch(), 0); });
		EXPECT_TRUE(std::isnan(v) || (v >= 0 && !std::isinf(v))) << c.symbol << ": " << v << "\n" << err;
		starpu_perfmodel_deinit(&model);
	}
}

// Adding samples to a file's entry never wraps its count: a count that cannot be is set aside, one near the
// limit is halved with its sums (the mean stays).
TEST_F(Models, CountsNeverWrapWhenSaved)
{
	put("wrap", history_file({ entry("d0c0d6c6", "1.000000e+02", "4.294967e+11", "4.294967e+13", "4294967295") }));
	put("full", history_file({ entry("d0c0d6c6", "1.000000e+02", "2.147484e+11", "2.147484e+13", "2147483645") }));
	std::string err = stderr_of([&] {
		starpu_conf conf = conf_with_ncpus(1);
		conf.calibrate = 1;
		Runtime rt(&conf);
		ASSERT_TRUE(rt.ok());
		for (const char *symbol : { "wrap", "full" })
			record_and_save(symbol, 100.0, 5);
	});
	for (const char *symbol : { "wrap", "full" }) {
		std::pair<double, double> v = entry_values(read_file(model_file(symbol)), "d0c0d6c6");
		EXPECT_NEAR(v.first, 100.0, 0.01) << symbol << "\n" << read_file(model_file(symbol));
		EXPECT_GE(v.second, 5.0) << symbol;
		EXPECT_LE(v.second, 2147483647.0) << symbol;
	}
	std::string kept = model_file("wrap") + ".corrupt-" + std::to_string(getpid());
	EXPECT_TRUE(contains(read_file(kept), "4294967295")) << "the file as it was is kept aside\n" << err;
	EXPECT_TRUE(contains(err, "this save drops them; the file as it was is kept as " + kept)) << err;
}

// A model file of 17 MiB is no model file: refused in one line, before it is read.
TEST_F(Models, HugeModelFileIsRefusedBeforeItIsRead)
{
	put("huge", "");
	ASSERT_EQ(truncate(model_file("huge").c_str(), 17 << 20), 0);
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	starpu_perfmodel model{};
	std::string err = stderr_of([&] { ASSERT_EQ(starpu_perfmodel_load_symbol("huge", &model), 0); });
	EXPECT_TRUE(contains(err, model_file("huge") + " is 17825792 bytes, more than the 16777216 such a file may have")) << err;
	EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
	starpu_perfmodel_unload_model(&model);
}

// A save removes the temporary files that saves killed between write and rename left, those of this model whose
// process is gone; a live process's are left alone.
TEST_F(Models, SavingRemovesWhatKilledSavesLeft)
{
	pid_t gone;
	char true_cmd[] = "true";
	char *argv[] = { true_cmd, nullptr };
	ASSERT_EQ(posix_spawnp(&gone, "true", nullptr, nullptr, argv, environ), 0);
	ASSERT_EQ(waitpid(gone, nullptr, 0), gone);
	put("stale", kVectorScal);
	std::string dead = model_file("stale") + ".tmp." + std::to_string(gone), live = model_file("stale") + ".tmp.1",
		    other = model_file("other") + ".tmp." + std::to_string(gone);
	for (const std::string &path : { dead, live, other })
		std::ofstream(path) << "half a model";
	{
		starpu_conf conf = conf_with_ncpus(1);
		conf.calibrate = 1;
		Runtime rt(&conf);
		ASSERT_TRUE(rt.ok());
		record_and_save("stale", 86.0, 2);
	}
	EXPECT_FALSE(file_exists(dead)) << "left by a process that is gone";
	EXPECT_TRUE(file_exists(live)) << "process 1 is alive: its save may be under way";
	EXPECT_TRUE(file_exists(other)) << "another model's";
}

// STARPU_HOSTNAME ends the model files' names: with a '/' or '..' it is refused, in one line, for the real name.
TEST_F(Models, HostNameCannotLeadOutOfTheSamplingDirectory)
{
	char host[256] = "";
	ASSERT_EQ(gethostname(host, sizeof(host)), 0);
	host[strcspn(host, ".")] = '\0';
	ScopedEnv bad("STARPU_HOSTNAME", "x/../../../../escaped");
	std::string err = stderr_of([&] {
		starpu_conf conf = conf_with_ncpus(1);
		conf.calibrate = 1;
		Runtime rt(&conf);
		ASSERT_TRUE(rt.ok());
		record_and_save("hosty", 10.0, 3);
	});
	EXPECT_TRUE(file_exists(dir() + "/hosty." + host)) << err;
	EXPECT_FALSE(file_exists(home_ + "/.starpu/escaped")) << err;
	EXPECT_FALSE(file_exists(home_ + "/escaped")) << err;
	EXPECT_EQ(occurrences(err, "STARPU_HOSTNAME=x/../../../../escaped holds a '/' or '..'"), 1u) << err;
	std::vector<std::string> names = listing();
	std::sort(names.begin(), names.end());
	EXPECT_EQ(names, (std::vector<std::string>{ std::string("hosty.") + host, std::string("hosty.") + host + ".lock" }));
}

TEST_F(Models, PathsFollowTheEnvironment)
{
	TempDir extra;
	ScopedEnv dir("STARPU_PERF_MODEL_DIR", home_ + "/elsewhere");
	ScopedEnv path("STARPU_PERF_MODEL_PATH", extra.path() + ":" + home_ + "/missing");
	std::string err = stderr_of([&] {
		std::string out;
		char buf[4096] = {};
		FILE *f = fmemopen(buf, sizeof(buf), "w");
		starpu_perfmodel_directory(f);
		fclose(f);
		EXPECT_EQ(std::string(buf), "directory: <" + home_ + "/elsewhere/codelets/45/>\n" + "directory: <" + home_ +
						     "/.starpu/sampling/codelets/45/>\n" + "directory: <" + extra.path() + "/codelets/45/>\n");
	});
	EXPECT_TRUE(contains(err, home_ + "/missing does not exist")) << err;
	put("found", kVectorScal); // in the second directory
	char p[PATH_MAX];
	stderr_of([&] { starpu_perfmodel_get_model_path("found", p, sizeof(p)); });
	EXPECT_EQ(std::string(p), model_file("found"));
	stderr_of([&] { starpu_perfmodel_get_model_path("absent", p, sizeof(p)); });
	EXPECT_STREQ(p, "");
}

// ------------------------------------------------------------ printing

const std::string kDisplayHash = "# hash\t\tsize\t\tflops\t\tmean (us or J)\tstddev (us or J)\t\tn\n";

// starpu_perfmodel_display -s vector_scal, as StarPU 1.4.12 printed it (notes/perfmodels.md §6).
const std::string kDisplayVectorScal =
	"# performance model for cpu0_impl0 (Comb0)\n" + kDisplayHash +
	"d0c0d6c6\t819200         \t0.000000e+00   \t8.613960e+01   \t1.132575e+01   \t10\n"
	"# performance model for cpu0_impl1 (Comb0)\n" + kDisplayHash +
	"d0c0d6c6\t819200         \t0.000000e+00   \t4.184525e+01   \t4.015112e+00   \t8\n";

const std::string kDisplayNlReg =
	"# performance model for cpu0_impl0 (Comb0)\n"
	"\tRegression : #sample = 75\n"
	"\tLinear: y = alpha size ^ beta\n\t\talpha = 1.298877e-03\n\t\tbeta = 1.137254e+00\n"
	"\tNon-Linear: y = a size ^b + c\n\t\ta = 1.285260e-04\n\t\tb = 1.302875e+00\n\t\tc = 2.023245e+01\n" + kDisplayHash +
	"220e2244\t1024000        \t0.000000e+00   \t1.057835e+04   \t2.279753e+03   \t12\n"
	"571f8f18\t256000         \t0.000000e+00   \t1.010320e+03   \t2.359985e+01   \t9\n"
	"0d153cd6\t64000          \t0.000000e+00   \t2.494211e+02   \t1.486397e+01   \t14\n"
	"0d370ae5\t16000          \t0.000000e+00   \t6.069736e+01   \t3.792429e-01   \t14\n"
	"e40d1b6c\t4000           \t0.000000e+00   \t1.580764e+01   \t1.635263e+00   \t14\n";

const std::string kXmlVectorScal =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<!DOCTYPE StarPUPerfmodel SYSTEM \"starpu-perfmodel.dtd\">\n"
	"<!-- symbol vector_scal -->\n"
	"<!-- All times in us -->\n"
	"<perfmodel version=\"45\">\n"
	"  <combination>\n"
	"    <device type=\"CPU\" id=\"0\" ncores=\"1\"/>\n"
	"    <implementation id=\"0\">\n"
	"      <!-- cpu0_impl0 (Comb0) -->\n"
	"      <entry footprint=\"d0c0d6c6\" size=\"819200\" flops=\"0.000000e+00\" mean=\"8.613960e+01\" deviation=\"1.132575e+01\" "
	"sum=\"8.613960e+02\" sum2=\"7.548303e+04\" nsample=\"10\"/>\n"
	"    </implementation>\n"
	"    <implementation id=\"1\">\n"
	"      <!-- cpu0_impl1 (Comb0) -->\n"
	"      <entry footprint=\"d0c0d6c6\" size=\"819200\" flops=\"0.000000e+00\" mean=\"4.184525e+01\" deviation=\"4.015112e+00\" "
	"sum=\"3.347620e+02\" sum2=\"1.413717e+04\" nsample=\"8\"/>\n"
	"    </implementation>\n"
	"  </combination>\n"
	"</perfmodel>\n";

TEST_F(Models, PrintFamilyWritesStarPUFormats)
{
	Runtime rt(2);
	ASSERT_TRUE(rt.ok());
	put("vector_scal", kVectorScal);
	put("pn_nlreg", kNlReg);
	starpu_perfmodel vs{}, nl{};
	ASSERT_EQ(starpu_perfmodel_load_symbol("vector_scal", &vs), 0);
	ASSERT_EQ(starpu_perfmodel_load_symbol("pn_nlreg", &nl), 0);
	EXPECT_EQ(printed([&](FILE *f) { EXPECT_EQ(starpu_perfmodel_print_all(&vs, nullptr, nullptr, nullptr, f), 0); }), kDisplayVectorScal);
	EXPECT_EQ(printed([&](FILE *f) { starpu_perfmodel_print_all(&nl, nullptr, nullptr, nullptr, f); }), kDisplayNlReg);
	EXPECT_EQ(printed([&](FILE *f) { starpu_perfmodel_dump_xml(f, &vs); }), kXmlVectorScal);
	char cpu[] = "cpu", mean[] = "mean", c[] = "c";
	EXPECT_EQ(printed([&](FILE *f) { starpu_perfmodel_print_all(&vs, cpu, mean, nullptr, f); }),
		  "# performance model for cpu0_impl0 (Comb0)\n8.613960e+01   \n# performance model for cpu0_impl1 (Comb0)\n4.184525e+01   \n");
	EXPECT_EQ(printed([&](FILE *f) { starpu_perfmodel_print(&nl, cpu_arch(), 0, c, nullptr, f); }),
		  "# performance model for cpu0_impl0 (Comb0)\n2.023245e+01\n");
	uint32_t fp = 0x0d153cd6;
	EXPECT_EQ(printed([&](FILE *f) { starpu_perfmodel_print(&nl, cpu_arch(), 0, mean, &fp, f); }),
		  "# performance model for cpu0_impl0 (Comb0)\n2.494211e+02   \n");
	// One value per worker (2 CPU workers here), "inf" where the footprint is unknown.
	EXPECT_EQ(printed([&](FILE *f) { EXPECT_EQ(starpu_perfmodel_print_estimations(&vs, 0xd0c0d6c6, f), 0); }), "8.613960e+01 8.613960e+01");
	EXPECT_EQ(printed([&](FILE *f) { starpu_perfmodel_print_estimations(&vs, 0x1234, f); }), "inf inf");
	EXPECT_EQ(printed([&](FILE *f) { EXPECT_EQ(starpu_perfmodel_list_combs(f, &vs), 0); }),
		  "Model <vector_scal>\n\tComb 0: 1 device\n\t\tDevice 0: type: cpu - devid: 0 - ncores: 1\n");
	// Nothing for an architecture the model has no data for.
	char cuda[] = "cuda1";
	EXPECT_EQ(printed([&](FILE *f) { EXPECT_EQ(starpu_perfmodel_print_all(&vs, cuda, nullptr, nullptr, f), 0); }), "");
	// Errors: -EINVAL, nothing printed on the stream, one line on stderr.
	char gpu[] = "gpu", bogus[] = "bogus";
	std::string err = stderr_of([&] {
		EXPECT_EQ(printed([&](FILE *f) { EXPECT_EQ(starpu_perfmodel_print_all(&vs, gpu, nullptr, nullptr, f), -EINVAL); }), "");
	});
	EXPECT_TRUE(contains(err, "Unknown architecture requested: gpu")) << err;
	EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
	err = stderr_of([&] {
		EXPECT_EQ(printed([&](FILE *f) { EXPECT_EQ(starpu_perfmodel_print_all(&vs, nullptr, bogus, nullptr, f), -EINVAL); }), "");
	});
	EXPECT_TRUE(contains(err, "Unknown parameter requested: bogus")) << err;
	EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
	// The listing, as StarPU's: directory, then its files in order.
	EXPECT_EQ(printed([&](FILE *f) { EXPECT_EQ(starpu_perfmodel_list(f), 0); }),
		  "codelet directory: <" + dir() + "/>\nfile: <pn_nlreg.vm>\nfile: <vector_scal.vm>\n");
	starpu_perfmodel_unload_model(&vs);
	starpu_perfmodel_unload_model(&nl);
}

TEST_F(Models, XmlOfRegressionModels)
{
	put("pn_nlreg", kNlReg);
	starpu_perfmodel nl{}, reg{};
	ASSERT_EQ(starpu_perfmodel_load_symbol("pn_nlreg", &nl), 0);
	std::string xml = printed([&](FILE *f) { starpu_perfmodel_dump_xml(f, &nl); });
	EXPECT_TRUE(contains(xml, "      <!-- cpu0_impl0 (Comb0) -->\n      <!-- time = a size ^b + c -->\n"
				  "      <nl_regression a=\"1.285260e-04\" b=\"1.302875e+00\" c=\"2.023245e+01\"/>\n"
				  "      <entry footprint=\"220e2244\" size=\"1024000\" ")) << xml;
	starpu_perfmodel_unload_model(&nl);
	std::string text = kNlReg;
	text.replace(text.find("1.285260e-04   \t1.302875e+00   \t2.023245e+01"), 44, "nan            \tnan            \tnan            ");
	put("pn_reg", text);
	ASSERT_EQ(starpu_perfmodel_load_symbol("pn_reg", &reg), 0);
	EXPECT_EQ(reg.type, STARPU_REGRESSION_BASED);
	xml = printed([&](FILE *f) { starpu_perfmodel_dump_xml(f, &reg); });
	EXPECT_TRUE(contains(xml, "      <!-- time = alpha size ^ beta -->\n      <l_regression sumlnx=\"8.299979e+02\" sumlnx2=\"9.473559e+03\" "
				  "sumlny=\"4.454493e+02\" sumlnxlny=\"5.257465e+03\" alpha=\"1.298877e-03\" beta=\"1.137254e+00\" "
				  "nsample=\"75\" minx=\"4000\" maxx=\"1024000\"/>\n")) << xml;
	starpu_perfmodel_unload_model(&reg);
}

// ---------------------------------------------------------------- tools

struct ToolRun
{
	int status = -1;
	std::string out, err;
};

// Runs an installed tool of the build (ASTRO_TEST_TOOLS_DIR) with args from dir cwd.
ToolRun run_tool(const std::string &home, const std::string &tool, const std::string &args, const std::string &cwd = "")
{
	ToolRun r;
	std::string err_file = home + "/tool.err";
	std::string cmd = (cwd.empty() ? "" : "cd '" + cwd + "' && ") + env_or("ASTRO_TEST_TOOLS_DIR", "") + "/" + tool + " " + args +
			  " 2>'" + err_file + "'";
	r.status = run_command(cmd, &r.out);
	r.err = read_file(err_file);
	unlink(err_file.c_str());
	return r;
}

// The notes' real files (tests/data) in a private STARPU_HOME, host "vm".
class ModelTools : public Models
{
public:
	void SetUp() override
	{
		Models::SetUp();
		ASSERT_FALSE(env_or("ASTRO_TEST_TOOLS_DIR", "").empty()) << "ASTRO_TEST_TOOLS_DIR is not set: run through make check";
		ASSERT_EQ(system(("mkdir -p " + dir()).c_str()), 0);
		for (const char *name : { "vector_scal.vm", "pn_nlreg.vm", "pn_reg.vm" }) {
			std::string data = read_file(env_or("ASTRO_TEST_SRCDIR", ".") + "/data/" + name);
			ASSERT_FALSE(data.empty()) << "tests/data/" << name << " is missing (ASTRO_TEST_SRCDIR)";
			std::ofstream(dir() + "/" + name, std::ios::binary) << data;
		}
	}
	ToolRun run(const std::string &tool, const std::string &args, const std::string &cwd = "") { return run_tool(home_, tool, args, cwd); }
	// A failing run: exit status 1, nothing on stdout, one line on stderr naming what.
	void expect_refused(const std::string &tool, const std::string &args, const std::string &what)
	{
		ToolRun r = run(tool, args);
		EXPECT_EQ(r.status, 1) << tool << " " << args;
		EXPECT_EQ(r.out, "") << tool << " " << args;
		EXPECT_TRUE(contains(r.err, what)) << tool << " " << args << ": " << r.err;
		EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << tool << " " << args << ": " << r.err;
	}
};

TEST_F(ModelTools, TheDataFilesAreTheNotesFiles)
{
	EXPECT_EQ(read_file(model_file("vector_scal")), kVectorScal);
	EXPECT_EQ(read_file(model_file("pn_nlreg")), kNlReg);
}

TEST_F(ModelTools, DisplayPrintsAsStarPU)
{
	ToolRun r = run("starpu_perfmodel_display", "-s vector_scal");
	EXPECT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(r.out, kDisplayVectorScal);
	EXPECT_EQ(r.err, "");
	r = run("starpu_perfmodel_display", "-s vector_scal -a cpu -p mean");
	EXPECT_EQ(r.out, "# performance model for cpu0_impl0 (Comb0)\n8.613960e+01   \n# performance model for cpu0_impl1 (Comb0)\n4.184525e+01   \n");
	r = run("starpu_perfmodel_display", "-s pn_nlreg");
	EXPECT_EQ(r.out, kDisplayNlReg);
	r = run("starpu_perfmodel_display", "-s pn_nlreg -f 0d370ae5 -p stddev");
	EXPECT_EQ(r.out, "# performance model for cpu0_impl0 (Comb0)\n3.792429e-01   \n");
	r = run("starpu_perfmodel_display", "-s pn_reg -a cpu:1 -p beta");
	EXPECT_EQ(r.out, "# performance model for cpu0_impl0 (Comb0)\n1.157653e+00\n");
	r = run("starpu_perfmodel_display", "-s pn_reg");
	EXPECT_EQ(r.out, "# performance model for cpu0_impl0 (Comb0)\n\tRegression : #sample = 60\n"
			 "\tLinear: y = alpha size ^ beta\n\t\talpha = 8.556585e-04\n\t\tbeta = 1.157653e+00\n");
	r = run("starpu_perfmodel_display", "-x -s vector_scal");
	EXPECT_EQ(r.out, kXmlVectorScal);
	r = run("starpu_perfmodel_display", "-l");
	EXPECT_EQ(r.out, "codelet directory: <" + dir() + "/>\nfile: <pn_nlreg.vm>\nfile: <pn_reg.vm>\nfile: <vector_scal.vm>\n");
	r = run("starpu_perfmodel_display", "-d");
	EXPECT_EQ(r.out, "directory: <" + dir() + "/>\n");
	EXPECT_EQ(r.status, 0);
}

// A FIFO or a link to /dev/zero in place of a model file: starpu_perfmodel_display says so in one line at once,
// instead of waiting for a writer forever or reading until the memory runs out (it runs under timeout, and
// under a 1 GB address space limit when not under a sanitizer, whose shadow memory needs far more, so that a
// regression fails quickly).
TEST_F(ModelTools, FifoOrDeviceInPlaceOfAModelIsRefusedAtOnce)
{
	ASSERT_EQ(mkfifo(model_file("fifo").c_str(), 0644), 0);
	ASSERT_EQ(symlink("/dev/zero", model_file("zero").c_str()), 0);
	std::string limit;
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
	limit = "ulimit -v 1000000; ";
#endif
	for (const std::string symbol : { "fifo", "zero" }) {
		std::string err_file = home_ + "/tool.err", out;
		int status = run_command("(" + limit + "exec timeout 20 " + env_or("ASTRO_TEST_TOOLS_DIR", "") + "/starpu_perfmodel_display -s " +
					 symbol + ") 2>'" + err_file + "'", &out);
		std::string err = read_file(err_file);
		EXPECT_NE(status, 124) << symbol << ": the tool hung";
		std::string kind = symbol == "fifo" ? "a FIFO" : "a character device";
		EXPECT_EQ(occurrences(err, model_file(symbol) + " is " + kind + ", not a regular file"), 1u) << symbol << ": " << err;
	}
}

TEST_F(ModelTools, DisplayRefusesBadOptionsWithOneMessage)
{
	expect_refused("starpu_perfmodel_display", "-s no_such_model", "There is no performance model for symbol no_such_model");
	expect_refused("starpu_perfmodel_display", "-z", "unknown option -z");
	expect_refused("starpu_perfmodel_display", "-s", "option -s needs a value");
	expect_refused("starpu_perfmodel_display", "", "give -s <symbol>, -l or -d");
	expect_refused("starpu_perfmodel_display", "-s vector_scal -p median", "Unknown parameter requested: median");
	expect_refused("starpu_perfmodel_display", "-s vector_scal -a gpu", "Unknown architecture requested: gpu");
	expect_refused("starpu_perfmodel_display", "-s vector_scal -f xyz", "-f xyz is not a footprint");
	expect_refused("starpu_perfmodel_display", "-s vector_scal extra", "unexpected argument 'extra'");
}

TEST_F(ModelTools, PlotWritesScriptAndDataThatGnuplotRenders)
{
	std::string out = home_ + "/plot";
	ToolRun r = run("starpu_perfmodel_plot", "-s pn_nlreg -o " + out);
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(r.out, "");
	EXPECT_EQ(read_file(out + "/starpu_pn_nlreg.gp"),
		  "#!/usr/bin/gnuplot -persist\n\n"
		  "set term postscript eps enhanced color\n"
		  "set output \"" + out + "/starpu_pn_nlreg.eps\"\n"
		  "set title \"Model for codelet pn-nlreg on vm\"\n"
		  "set xlabel \"Total data size\"\n"
		  "set ylabel \"Time (ms)\"\n\n"
		  "set key top left\n"
		  "set logscale x\nset logscale y\n\n"
		  "set xrange [1 < * < 10**9 : 1 < * < 10**9]\n\n"
		  // The plot line of StarPU's own script for this model (notes §6), with our directory.
		  "plot\t0.001 * 0.000128526 * x ** 1.30288 + 0.001 * 20.2325 title \"Non-Linear Regression cpu0_impl0 (Comb0)\",\\\n"
		  "\t\"" + out + "/starpu_pn_nlreg_avg.data\" using 1:2:3 with errorlines title \"Average cpu0-impl0 (Comb0)\"\n\n"
		  "set term png\n"
		  "set output \"" + out + "/starpu_pn_nlreg.png\"\n"
		  "replot\n");
	struct stat st;
	ASSERT_EQ(stat((out + "/starpu_pn_nlreg.gp").c_str(), &st), 0);
	EXPECT_TRUE(st.st_mode & S_IXUSR) << "the script is executable, as StarPU's";
	// Sizes in order, mean and deviation in ms.
	EXPECT_EQ(read_file(out + "/starpu_pn_nlreg_avg.data"),
		  "4000           \t1.580764e-02   \t1.635263e-03   \n"
		  "16000          \t6.069736e-02   \t3.792429e-04   \n"
		  "64000          \t2.494211e-01   \t1.486397e-02   \n"
		  "256000         \t1.010320e+00   \t2.359985e-02   \n"
		  "1024000        \t1.057835e+01   \t2.279753e+00   \n");
	// Two implementations: two pairs of columns; -e keeps Joules as they are.
	r = run("starpu_perfmodel_plot", "-e -s vector_scal", home_);
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(read_file(home_ + "/starpu_vector_scal_avg.data"), "819200         \t8.613960e+01   \t1.132575e+01   \t4.184525e+01   \t4.015112e+00   \n");
	std::string gp = read_file(home_ + "/starpu_vector_scal.gp");
	EXPECT_TRUE(contains(gp, "set ylabel \"Energy (J)\"\n")) << gp;
	EXPECT_TRUE(contains(gp, "plot\t\"starpu_vector_scal_avg.data\" using 1:2:3 with errorlines title \"Average cpu0-impl0 (Comb0)\",\\\n"
				 "\t\"starpu_vector_scal_avg.data\" using 1:4:5 with errorlines title \"Average cpu0-impl1 (Comb0)\"\n")) << gp;
	r = run("starpu_perfmodel_plot", "-lc -s vector_scal");
	EXPECT_EQ(r.out, "Model <vector_scal>\n\tComb 0: 1 device\n\t\tDevice 0: type: cpu - devid: 0 - ncores: 1\n");

	if (!have_program("gnuplot"))
		GTEST_SKIP() << "gnuplot is not installed: the script is not rendered";
	ASSERT_EQ(system(("cd '" + home_ + "' && gnuplot '" + out + "/starpu_pn_nlreg.gp' 2>/dev/null").c_str()), 0);
	std::string png = read_file(out + "/starpu_pn_nlreg.png");
	ASSERT_GT(png.size(), 1000u);
	EXPECT_EQ(png.substr(0, 4), "\x89PNG");
	EXPECT_GT(read_file(out + "/starpu_pn_nlreg.eps").size(), 1000u);
}

// Issue 38: a multiple-regression model's file holds its coefficients: -s prints them (it printed nothing).
TEST_F(ModelTools, DisplayPrintsTheCoefficientsOfAMultipleRegression)
{
	std::string file = kMlrStarPU;
	const std::string zeros = "3\t0.000000e+00   \t0.000000e+00   \t0.000000e+00   \n";
	ASSERT_TRUE(contains(file, zeros));
	file.replace(file.find(zeros), zeros.size(), "3\t1.500000e+00   \t2.000000e-01   \t3.000000e-03   \n");
	put("mlr_shown", file);
	ToolRun r = run("starpu_perfmodel_display", "-s mlr_shown");
	EXPECT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(r.err, "");
	EXPECT_EQ(r.out, "# performance model for cpu0_impl0 (Comb0)\n"
			 "\tMultiple regression: y = constant + c1 * term1 + c2 * term2 (3 coefficients)\n"
			 "\t\tconstant = 1.500000e+00\n\t\tc1 = 2.000000e-01\n\t\tc2 = 3.000000e-03\n");
}

// Issue 38: -l with no model file says so and where it looked, instead of printing nothing.
TEST_F(ModelTools, ListWithoutModelsSaysWhereItLooked)
{
	for (const char *name : { "vector_scal", "pn_nlreg", "pn_reg" })
		ASSERT_EQ(unlink(model_file(name).c_str()), 0);
	ToolRun r = run("starpu_perfmodel_display", "-l");
	EXPECT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(r.out, "");
	EXPECT_EQ(r.err, "starpu_perfmodel_display: no performance model found in " + dir() +
				 "/ (a run with STARPU_CALIBRATE=1 records them there)\n");
	EXPECT_FALSE(contains(r.err, "starpu_perfmodel_directory")) << r.err;
}

TEST_F(ModelTools, PlotGflopsPowerAndCombinations)
{
	// impl0 with flops: GFlop/s = flops / (mean µs * 1000); impl1 without: missing ("").
	std::string flops = kVectorScal;
	flops.replace(flops.find("0.000000e+00   \t8.613960e+01"), 12, "1.000000e+06");
	put("vs_flops", flops);
	ToolRun r = run("starpu_perfmodel_plot", "-f -s vs_flops", home_);
	ASSERT_EQ(r.status, 0) << r.err;
	char line[256];
	double gflops = 1e6 / (86.1396 * 1000);
	snprintf(line, sizeof(line), "819200         \t%-15e\t%-15e\t\"\"\t\"\"\n", gflops, gflops * 11.32575 / 86.1396);
	EXPECT_EQ(read_file(home_ + "/starpu_vs_flops_avg.data"), line);
	std::string gp = read_file(home_ + "/starpu_gflops_vs_flops.gp");
	EXPECT_TRUE(contains(gp, "set ylabel \"GFlop/s\"\n")) << gp;
	EXPECT_TRUE(contains(gp, "set output \"starpu_gflops_vs_flops.png\"\n")) << gp;
	// Power: the energy model's Joules over the time model's µs, per size.
	std::string energy = kVectorScal;
	energy.replace(energy.find("8.613960e+01   \t1.132575e+01   \t8.613960e+02   \t7.548303e+04"), 62,
		       "2.000000e-03   \t0.000000e+00   \t2.000000e-02   \t4.000000e-05");
	put("vs_energy", energy);
	r = run("starpu_perfmodel_plot", "-se vector_scal vs_energy", home_);
	ASSERT_EQ(r.status, 0) << r.err;
	std::string data = read_file(home_ + "/starpu_vector_scal_avg.data");
	snprintf(line, sizeof(line), "819200         \t%-15e\t", 2e-3 / (86.1396e-6));
	EXPECT_EQ(data.substr(0, strlen(line)), line) << data;
	gp = read_file(home_ + "/starpu_power_vector_scal.gp");
	EXPECT_TRUE(contains(gp, "set ylabel \"Power (W)\"\n")) << gp;
	// -c keeps the combinations asked for: comb 0 is the CPU here.
	r = run("starpu_perfmodel_plot", "-s pn_reg -c 0 -o " + home_ + "/c0");
	ASSERT_EQ(r.status, 0) << r.err;
	gp = read_file(home_ + "/c0/starpu_pn_reg.gp");
	// StarPU's %g: 8.556585e-04 prints 0.000855658 (its double is just below the half).
	EXPECT_TRUE(contains(gp, "plot\t0.001 * 0.000855658 * x ** 1.15765 title \"Linear Regression cpu0_impl0 (Comb0)\"\n\n")) << gp;
	EXPECT_FALSE(file_exists(home_ + "/c0/starpu_pn_reg_avg.data")) << "no entries, no sizes";
}

TEST_F(ModelTools, PlotRefusesBadOptionsWithOneMessage)
{
	expect_refused("starpu_perfmodel_plot", "-s no_such_model", "There is no performance model for symbol no_such_model");
	expect_refused("starpu_perfmodel_plot", "-q", "unknown option -q");
	expect_refused("starpu_perfmodel_plot", "", "give -s <symbol>");
	expect_refused("starpu_perfmodel_plot", "-s vector_scal -i", "option -i needs a trace");
	expect_refused("starpu_perfmodel_plot", "-f -s vector_scal -i trace", "-i adds the measured lengths of the tasks, which only a time plot shows");
	expect_refused("starpu_perfmodel_plot", "-f -s vector_scal -o " + home_, "model vector_scal has no flops to plot");
	expect_refused("starpu_perfmodel_plot", "-s vector_scal -c 7 -o " + home_, "has no data for the chosen combinations");
}

const char *const kRecdump =
	"%rec: timing\n\n"
	"Model: pn_nlreg\nArchitecture: cpu0\nFootprint: 220e2244\nSize: 1024000\nFlops: 0.000000\nMean: 10578.350000\nStddev: 2279.753000\nSamples: 12\n\n"
	"Model: pn_nlreg\nArchitecture: cpu0\nFootprint: 571f8f18\nSize: 256000\nFlops: 0.000000\nMean: 1010.320000\nStddev: 23.599850\nSamples: 9\n\n"
	"Model: pn_nlreg\nArchitecture: cpu0\nFootprint: 0d153cd6\nSize: 64000\nFlops: 0.000000\nMean: 249.421100\nStddev: 14.863970\nSamples: 14\n\n"
	"Model: pn_nlreg\nArchitecture: cpu0\nFootprint: 0d370ae5\nSize: 16000\nFlops: 0.000000\nMean: 60.697360\nStddev: 0.379243\nSamples: 14\n\n"
	"Model: pn_nlreg\nArchitecture: cpu0\nFootprint: e40d1b6c\nSize: 4000\nFlops: 0.000000\nMean: 15.807640\nStddev: 1.635263\nSamples: 14\n\n"
	"Model: vector_scal\nArchitecture: cpu0\nFootprint: d0c0d6c6\nSize: 819200\nFlops: 0.000000\nMean: 86.139600\nStddev: 11.325750\nSamples: 10\n\n";

TEST_F(ModelTools, RecdumpWritesRecordsThatRecselReads)
{
	ToolRun r = run("starpu_perfmodel_recdump", "");
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(r.out, kRecdump);
	r = run("starpu_perfmodel_recdump", "-o " + home_ + "/models.rec");
	EXPECT_EQ(r.status, 0) << r.err;
	EXPECT_EQ(r.out, "");
	EXPECT_EQ(read_file(home_ + "/models.rec"), kRecdump) << "-o writes the file";
	// With tasks: only the (model, footprint) pairs they use, after the machine's description.
	{
		std::ofstream(home_ + "/tasks.rec") << "Name: scal\nModel: vector_scal\nFootprint: d0c0d6c6\n\nName: other\nModel: pn_nlreg\n"
						       "Footprint: 0d153cd6\n\nName: nomodel\n\n";
	}
	ScopedEnv ncpu("STARPU_NCPU", "2");
	r = run("starpu_perfmodel_recdump", home_ + "/tasks.rec");
	ASSERT_EQ(r.status, 0) << r.err;
	EXPECT_TRUE(contains(r.out, "%rec: worker_count\n\nArchitecture: cpu0\nNbWorkers: 2\n\n%rec: memory_workers\n\nMemoryNode: 0\n")) << r.out;
	std::string timing = r.out.substr(r.out.find("%rec: timing\n\n"));
	EXPECT_EQ(timing, "%rec: timing\n\n"
			  "Model: vector_scal\nArchitecture: cpu0\nFootprint: d0c0d6c6\nSize: 819200\nFlops: 0.000000\nMean: 86.139600\nStddev: 11.325750\nSamples: 10\n\n"
			  "Model: pn_nlreg\nArchitecture: cpu0\nFootprint: 0d153cd6\nSize: 64000\nFlops: 0.000000\nMean: 249.421100\nStddev: 14.863970\nSamples: 14\n\n");
	expect_refused("starpu_perfmodel_recdump", "-x", "unknown option -x");
	expect_refused("starpu_perfmodel_recdump", home_ + "/missing.rec", "cannot read " + home_ + "/missing.rec");

	if (!have_program("recsel"))
		GTEST_SKIP() << "recutils is not installed: recsel does not read the records";
	FILE *p = popen(("recsel -t timing -e \"Footprint = '0d370ae5'\" -P Mean '" + home_ + "/models.rec'").c_str(), "r");
	ASSERT_NE(p, nullptr);
	char buf[256] = {};
	size_t n = fread(buf, 1, sizeof(buf) - 1, p);
	EXPECT_EQ(pclose(p), 0);
	EXPECT_EQ(std::string(buf, n), "60.697360\n");
	p = popen(("recsel -t timing -c '" + home_ + "/models.rec'").c_str(), "r");
	ASSERT_NE(p, nullptr);
	n = fread(buf, 1, sizeof(buf) - 1, p);
	EXPECT_EQ(pclose(p), 0);
	EXPECT_EQ(std::string(buf, n), "6\n");
}

// ------------------------------------------------- killed while saving

const unsigned kKillEntries = 3000;
uint32_t kill_footprint;
uint32_t current_footprint(starpu_task *) { return kill_footprint; }

// The saving process of the test below (run again from this binary): adds two
// samples to each of kKillEntries entries, saves, and so on until it is killed.
// After its first save it writes a byte to the pipe named by ASTRO_MODELS_SAVING.
TEST(ModelsChild, SaveInALoopUntilKilled)
{
	const char *fd = getenv("ASTRO_MODELS_SAVING");
	if (!fd)
		GTEST_SKIP() << "run by Models.KilledWhileSavingLeavesAParsableFile";
	int wfd = atoi(fd);
	// Never outlive the test: dies with it, and stops by itself after 30 s.
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	auto stop = std::chrono::steady_clock::now() + std::chrono::seconds(30);
	starpu_conf conf = conf_with_ncpus(1);
	conf.calibrate = 1;
	Runtime rt(&conf);
	ASSERT_TRUE(rt.ok());
	starpu_perfmodel model{};
	model.type = STARPU_HISTORY_BASED;
	model.symbol = "killed";
	model.footprint = current_footprint;
	VectorTask t(&model, 10);
	for (unsigned round = 0; std::chrono::steady_clock::now() < stop; round++) {
		for (unsigned e = 0; e < kKillEntries; e++) {
			kill_footprint = e * 2654435761u;
			starpu_perfmodel_update_history_n(&model, t.task, cpu_arch(), 0, 0, 10.0 + e, 2);
		}
		starpu_save_history_based_model(&model);
		if (round == 0) {
			ASSERT_EQ(write(wfd, "s", 1), 1);
		}
	}
}

// A process killed (SIGKILL) at random points of saving a large model leaves
// the old or the new file, never a torn one: every time, the file parses and
// all its entries hold the same number of samples, never fewer than before.
TEST_F(Models, KilledWhileSavingLeavesAParsableFile)
{
	const int kKills = 12;
	unsigned seed = (unsigned)time(nullptr);
	std::mt19937 rng(seed);
	SCOPED_TRACE("seed " + std::to_string(seed));
	std::string self = "/proc/self/exe";
	char filter[] = "--gtest_filter=ModelsChild.SaveInALoopUntilKilled";
	char *argv[] = { self.data(), filter, nullptr };
	unsigned before = 0;
	for (int kill_no = 0; kill_no < kKills; kill_no++) {
		int saving[2];
		ASSERT_EQ(pipe(saving), 0);
		std::string fd = std::to_string(saving[1]);
		ScopedEnv child("ASTRO_MODELS_SAVING", fd.c_str());
		pid_t kid;
		ASSERT_EQ(posix_spawn(&kid, "/proc/self/exe", nullptr, nullptr, argv, environ), 0);
		close(saving[1]);
		char c;
		// The child saves within seconds, or has failed (then read returns 0).
		ASSERT_EQ(read(saving[0], &c, 1), 1) << "the saving process did not save";
		close(saving[0]);
		std::this_thread::sleep_for(std::chrono::microseconds(rng() % 30000));
		ASSERT_EQ(kill(kid, SIGKILL), 0);
		int status = 0;
		ASSERT_EQ(waitpid(kid, &status, 0), kid);
		ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;

		starpu_perfmodel model{};
		std::string err = stderr_of([&] { ASSERT_EQ(starpu_perfmodel_load_file(model_file("killed").c_str(), &model), 0); });
		EXPECT_EQ(err, "") << "kill " << kill_no << ": the file does not parse";
		starpu_perfmodel_device cpu = { STARPU_CPU_WORKER, 0, 1 };
		starpu_perfmodel_arch arch = { 1, &cpu };
		starpu_perfmodel_per_arch *pa = starpu_perfmodel_get_model_per_arch(&model, &arch, 0);
		ASSERT_NE(pa, nullptr);
		unsigned entries = 0, nsample = 0;
		bool same = true;
		for (starpu_perfmodel_history_list *l = pa->list; l; l = l->next, entries++) {
			if (entries == 0)
				nsample = l->entry->nsample;
			same &= l->entry->nsample == nsample;
		}
		EXPECT_EQ(entries, kKillEntries) << "kill " << kill_no;
		EXPECT_TRUE(same) << "kill " << kill_no << ": entries from two different saves";
		EXPECT_GE(nsample, before + 2) << "kill " << kill_no << ": the child saved at least once more";
		EXPECT_EQ(nsample % 2, 0u);
		before = nsample;
		starpu_perfmodel_deinit(&model);
	}
}

// starpu_init on two NUMA nodes (a synthetic topology), so that it reads the bus files: run by the test below
// (this binary again, ASTRO_MODELS_BUS set), which watches that it ends.
TEST(ModelsChild, InitReadingTheBusFiles)
{
	if (!getenv("ASTRO_MODELS_BUS"))
		GTEST_SKIP() << "run by Models.FifoInPlaceOfABusFileDoesNotHangInit";
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	ScopedEnv numa("STARPU_USE_NUMA", "1");
	ScopedEnv synthetic("HWLOC_SYNTHETIC", "pack:2 numa:1 core:1 pu:1");
	Runtime rt(2);
	ASSERT_EQ(rt.ret(), 0);
	ASSERT_EQ((int)starpu_memory_nodes_get_numa_count(), 2) << "one memory node: the bus files are not read";
}

// A FIFO in place of the bus figures' configuration file: starpu_init says so in one line and measures the bus
// again, instead of waiting forever for a writer.
TEST_F(Models, FifoInPlaceOfABusFileDoesNotHangInit)
{
	std::string bus = home_ + "/.starpu/sampling/bus";
	ASSERT_EQ(system(("mkdir -p " + bus).c_str()), 0);
	std::string config = bus + "/vm.config", err_file = home_ + "/init.err";
	ASSERT_EQ(mkfifo(config.c_str(), 0644), 0);
	ScopedEnv child("ASTRO_MODELS_BUS", "1");
	std::string self = "/proc/self/exe";
	char filter[] = "--gtest_filter=ModelsChild.InitReadingTheBusFiles";
	char *argv[] = { self.data(), filter, nullptr };
	posix_spawn_file_actions_t actions;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_addopen(&actions, 2, err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	pid_t kid;
	ASSERT_EQ(posix_spawn(&kid, "/proc/self/exe", &actions, nullptr, argv, environ), 0);
	posix_spawn_file_actions_destroy(&actions);
	int status = 0;
	bool ended = false;
	for (int i = 0; i < 200 && !ended; i++) {
		ended = waitpid(kid, &status, WNOHANG) == kid;
		if (!ended)
			std::this_thread::sleep_for(std::chrono::milliseconds(100));
	}
	if (!ended) {
		kill(kid, SIGKILL);
		waitpid(kid, &status, 0);
	}
	std::string err = read_file(err_file);
	ASSERT_TRUE(ended) << "starpu_init hung on a FIFO bus file\n" << err;
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << err;
	EXPECT_EQ(occurrences(err, "the bus file " + config + " cannot be read (a FIFO, not a regular file"), 1u) << err;
	struct stat st;
	EXPECT_TRUE(stat(config.c_str(), &st) == 0 && S_ISREG(st.st_mode)) << "measured again and saved";
}

const int kConcurrentRuns = 4, kConcurrentCalls = 25;

// One of the calibrating processes of the test below, which runs this binary
// again for it (a fork would inherit the test's threads, which
// ThreadSanitizer refuses): it inherits STARPU_HOME and the host name, and
// waits on the pipe named by ASTRO_MODELS_GO until both may start.
TEST(ModelsChild, CalibrateTheSharedModel)
{
	const char *go = getenv("ASTRO_MODELS_GO");
	if (!go)
		GTEST_SKIP() << "run by Models.ConcurrentCalibrationsLoseNoSample";
	int rfd = -1, wfd = -1;
	ASSERT_EQ(sscanf(go, "%d,%d", &rfd, &wfd), 2);
	close(wfd);
	char c;
	ASSERT_EQ(read(rfd, &c, 1), 0);
	for (int run = 0; run < kConcurrentRuns; run++) {
		starpu_conf conf = conf_with_ncpus(1);
		conf.calibrate = 1;
		ASSERT_EQ(starpu_init(&conf), 0);
		starpu_perfmodel model{};
		model.type = STARPU_HISTORY_BASED;
		model.symbol = "shared";
		{
			VectorTask t(&model, 1000);
			for (int i = 0; i < kConcurrentCalls; i++)
				starpu_perfmodel_update_history_n(&model, t.task, starpu_worker_get_perf_archtype(0, 0), 0, 0, 30.0, 2);
		}
		starpu_shutdown();
	}
}

// Two processes calibrate one model at the same time, several runs each: no sample is lost.
TEST_F(Models, ConcurrentCalibrationsLoseNoSample)
{
	int go[2];
	ASSERT_EQ(pipe(go), 0);
	std::string fds = std::to_string(go[0]) + "," + std::to_string(go[1]);
	ScopedEnv child("ASTRO_MODELS_GO", fds.c_str());
	std::string self = "/proc/self/exe";
	char filter[] = "--gtest_filter=ModelsChild.CalibrateTheSharedModel";
	char *argv[] = { self.data(), filter, nullptr };
	pid_t kids[2];
	for (pid_t &kid : kids) {
		ASSERT_EQ(posix_spawn(&kid, "/proc/self/exe", nullptr, nullptr, argv, environ), 0);
	}
	close(go[0]);
	close(go[1]); // both start now
	for (pid_t kid : kids) {
		int status = 0;
		ASSERT_EQ(waitpid(kid, &status, 0), kid);
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
	}
	std::string text = read_file(model_file("shared"));
	const int total = 2 * kConcurrentRuns * kConcurrentCalls * 2;
	EXPECT_TRUE(contains(text, "\t" + std::to_string(total) + "\n")) << text;
	char sum[32];
	snprintf(sum, sizeof(sum), "%-15e", 30.0 * total);
	EXPECT_TRUE(contains(text, std::string("3.000000e+01   \t0.000000e+00   \t") + sum)) << text;
}

} // namespace

// ------------------------------------------------------------ fault tolerance

namespace {

std::atomic<int> g_ft_model_runs{0};
int g_ft_model_failures = 0;

void ft_model_work(void **buffers, void *)
{
	int *y = (int *)STARPU_VARIABLE_GET_PTR(buffers[1]);
	*y = *(int *)STARPU_VARIABLE_GET_PTR(buffers[0]) + 1;
	if (g_ft_model_runs++ < g_ft_model_failures)
		starpu_task_ft_failed(starpu_task_get_current());
}

} // namespace

// A try marked failed (starpu_task_ft_failed) is not a duration to learn from:
// only the successful executions reach the model.
TEST_F(Models, FailedTriesAreNotRecorded)
{
	ScopedEnv calibrate("STARPU_CALIBRATE", "1");
	// Sub-microsecond runs vary by far more than 50%: no sample may be rejected as an outlier here.
	ScopedEnv max_error("STARPU_HISTORY_MAX_ERROR", "2000000000");
	Runtime rt(1);
	ASSERT_TRUE(rt.ok());
	starpu_perfmodel model{};
	model.type = STARPU_HISTORY_BASED;
	model.symbol = "ft_not_recorded";
	starpu_codelet cl;
	starpu_codelet_init(&cl);
	cl.cpu_funcs[0] = ft_model_work;
	cl.nbuffers = 2;
	cl.modes[0] = STARPU_R;
	cl.modes[1] = STARPU_W;
	cl.model = &model;
	int x = 1, y = 0;
	starpu_data_handle_t hx, hy;
	starpu_variable_data_register(&hx, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	starpu_variable_data_register(&hy, STARPU_MAIN_RAM, (uintptr_t)&y, sizeof(y));
	g_ft_model_runs = 0;
	g_ft_model_failures = 4;
	ASSERT_EQ(starpu_task_insert(&cl, STARPU_PROLOGUE_CALLBACK, starpu_task_ft_prologue, STARPU_R, hx, STARPU_W, hy, 0), 0);
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(starpu_task_insert(&cl, STARPU_R, hx, STARPU_W, hy, 0), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(g_ft_model_runs, 7);
	starpu_perfmodel_per_arch *pa = starpu_perfmodel_get_model_per_arch(&model, cpu_arch(), 0);
	ASSERT_NE(pa, nullptr);
	ASSERT_NE(pa->list, nullptr);
	// 3 successful executions, the first dropped as a cold run (as StarPU does); 6 if the failures counted.
	EXPECT_EQ(pa->list->entry->nsample, 2u);
	starpu_data_unregister(hx);
	starpu_data_unregister(hy);
	EXPECT_EQ(y, 2);
}

// ------------------------------------------------- the seed's tests/perfmodels/

// The programs seed 004 points to for online performance feedback, run as a user runs them (the
// fixture's STARPU_HOME keeps their model files).
std::string perfmodels_program(const std::string &name)
{
	return test_plugin_dir() + "/../perfmodels/" + name;
}

// feed.c: measurements given with starpu_perfmodel_update_history() are what the models predict.
TEST_F(Models, SeedFeedProgramPredictsWhatItFed)
{
	std::string out;
	ASSERT_TRUE(file_exists(perfmodels_program("feed"))) << perfmodels_program("feed");
	ASSERT_EQ(run_command(perfmodels_program("feed") + " 2>&1", &out), 0) << out;
	EXPECT_TRUE(contains(out, "feed_history: 1024 bytes: expected length 99.50 us\n")) << out;
	EXPECT_TRUE(contains(out, "feed_history: 2048 bytes: expected length 199.00 us\n")) << out;
	EXPECT_TRUE(contains(out, "feed_regression: 1024 bytes: expected length ")) << out;
	EXPECT_TRUE(contains(out, "feed_regression: 2048 bytes: expected length ")) << out;
}

// regression_based.c: memset calibrated on a (non-)linear regression model, then estimates without execution.
TEST_F(Models, SeedRegressionBasedProgramEstimatesWithoutRunning)
{
	std::string out;
	ASSERT_TRUE(file_exists(perfmodels_program("regression_based"))) << perfmodels_program("regression_based");
	ASSERT_EQ(run_command(perfmodels_program("regression_based") + " 2>&1", &out), 0) << out;
	int linear = 0, non_linear = 0;
	for (const std::string &line : lines_of(out)) {
		if (line.rfind("memset_regression_based\t", 0) == 0)
			linear++;
		if (line.rfind("non_linear_memset_regression_based\t", 0) == 0)
			non_linear++;
	}
	EXPECT_EQ(linear, 8) << out;
	EXPECT_EQ(non_linear, 8) << out;
	EXPECT_TRUE(contains(out, "memset_regression_based\t16384 bytes\tfootprint ")) << out;
	for (const char *symbol : { "memset_regression_based", "non_linear_memset_regression_based", "memset_regression_based_energy",
				    "non_linear_memset_regression_based_energy" })
		EXPECT_TRUE(file_exists(model_file(symbol))) << symbol;
}
