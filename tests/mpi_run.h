/* SPDX-License-Identifier: LGPL-2.1-or-later */
// The two roles of an MPI test program: started by make check, its MpiRun
// tests start it again under `mpirun -np N` and check that every rank
// passed; under mpirun (OMPI_COMM_WORLD_SIZE set) each rank runs the rank
// tests, the same ones in the same order. Header-only, for test_mpi*.cc.
#ifndef ASTRO_TEST_MPI_RUN_H
#define ASTRO_TEST_MPI_RUN_H

#include "helpers.h"

#include <memory>
#include <mpi.h>
#include <set>
#include <starpu_mpi.h>

namespace astro_test {

inline bool under_mpirun()
{
	return getenv("OMPI_COMM_WORLD_SIZE") != nullptr;
}

// A rank's test: StarPU-MPI started with ncpus CPU workers (MPI already initialised), stopped after.
class MpiRankTest : public testing::Test
{
protected:
	explicit MpiRankTest(unsigned ncpus = 1) : ncpus_(ncpus) {}
	void SetUp() override
	{
		conf_ = conf_with_ncpus(ncpus_);
		ASSERT_EQ(0, starpu_mpi_init_conf(nullptr, nullptr, 0, MPI_COMM_WORLD, &conf_));
		started_ = true;
		ASSERT_EQ(0, starpu_mpi_comm_rank(MPI_COMM_WORLD, &rank_));
		ASSERT_EQ(0, starpu_mpi_comm_size(MPI_COMM_WORLD, &size_));
		ASSERT_GE(size_, 2) << "run under mpirun -np 2 or more";
	}
	void TearDown() override
	{
		if (started_) {
			EXPECT_EQ(0, starpu_mpi_shutdown());
		}
	}
	// A variable owned by rank owner (its buffer mem there, none elsewhere), registered with tag on every rank.
	starpu_data_handle_t owned_variable(int64_t *mem, int owner, starpu_mpi_tag_t tag)
	{
		starpu_data_handle_t h;
		if (rank_ == owner)
			starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)mem, sizeof(*mem));
		else
			starpu_variable_data_register(&h, -1, 0, sizeof(*mem));
		starpu_mpi_data_register(h, tag, owner);
		return h;
	}
	unsigned ncpus_;
	starpu_conf conf_;
	bool started_ = false;
	int rank_ = -1, size_ = 0;
};

// The value of an int64_t variable handle, read from the application (acquired, then released).
inline int64_t read_var(starpu_data_handle_t h)
{
	EXPECT_EQ(0, starpu_data_acquire(h, STARPU_R));
	int64_t v = *(int64_t *)starpu_data_get_local_ptr(h);
	starpu_data_release(h);
	return v;
}

// mpirun, before -np: as many ranks as asked whatever the cores, on this machine only, 300 s at most.
inline std::string mpirun_command()
{
	std::string cmd = "timeout 300 mpirun --oversubscribe";
	if (getuid() == 0)
		cmd += " --allow-run-as-root";
	// The loopback and shared memory only: no network is needed (or wanted) on one machine.
	return cmd + " --mca btl self,vader --mca btl_vader_single_copy_mechanism none";
}

// While it lives, under ASan, Open MPI's own leaks are suppressed (mpi-lsan.supp, which says why;
// the suppression file goes in dir).
class MpiSanitizerEnv
{
public:
	explicit MpiSanitizerEnv(TempDir &dir)
	{
		std::string srcdir = env_or("ASTRO_TEST_SRCDIR", ".");
		dir.write("lsan.supp", read_file(srcdir + "/lsan.supp") + read_file(srcdir + "/mpi-lsan.supp"));
		lsan_.reset(new ScopedEnv("LSAN_OPTIONS", "suppressions=" + dir.file("lsan.supp") + " print_suppressions=0"));
		asan_.reset(new ScopedEnv("ASAN_OPTIONS", env_or("ASAN_OPTIONS", "") + " fast_unwind_on_malloc=0"));
	}

private:
	std::unique_ptr<ScopedEnv> lsan_, asan_;
};

// Runs this program under mpirun with np ranks and filter; every rank must pass.
inline void run_ranks(int np, const std::string &filter)
{
	if (!have_program("mpirun"))
		GTEST_SKIP() << "mpirun not found: install openmpi-bin";
	char self[4096];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	ASSERT_GT(len, 0);
	self[len] = '\0';
	TempDir out;
	std::string cmd = mpirun_command();
	cmd += " --output-filename " + out.path() + "/ranks -np " + std::to_string(np) + " '" + self +
	       "' --gtest_color=no --gtest_filter='" + filter + "' " + env_or("ASTRO_MPI_TEST_ARGS", "") + " 2>&1";
	MpiSanitizerEnv sanitizers(out);
	std::string output;
	int status = run_command(cmd, &output);
	int passed = 0;
	std::string failures;
	std::set<long> counts;
	for (int r = 0; r < np; r++) {
		std::string text = read_file(out.path() + "/ranks/1/rank." + std::to_string(r) + "/stdout");
		std::string errtext = read_file(out.path() + "/ranks/1/rank." + std::to_string(r) + "/stderr");
		// "[  PASSED  ] N tests." with N > 0, and no failure.
		size_t at = text.find("\n[  PASSED  ] ");
		long count = at == std::string::npos ? 0 : strtol(text.c_str() + at + 14, nullptr, 10);
		if (count > 0 && !contains(text, "[  FAILED  ]")) {
			passed++;
			counts.insert(count);
		}
		else
			failures += "--- rank " + std::to_string(r) + " stdout:\n" + text + "--- rank " + std::to_string(r) + " stderr:\n" + errtext;
	}
	// The ranks' files hold gtest's lines: rm them so that the outer log stays ours.
	std::string ignored;
	run_command("rm -rf '" + out.path() + "/ranks'", &ignored);
	EXPECT_EQ(0, status) << cmd << "\n" << output;
	EXPECT_EQ(np, passed) << "ranks that failed:\n" << failures;
	EXPECT_EQ(1u, counts.size()) << "the ranks ran different numbers of tests";
}

// main(): the launcher's tests (MpiRun.*) outside mpirun, rank_filter's under it.
// MPI is initialised here, once per process, unless the filter names
// own_init_suite, whose test lets starpu_mpi_init_conf() do it.
inline int mpi_test_main(int argc, char **argv, const char *rank_filter, const char *own_init_suite)
{
	testing::InitGoogleTest(&argc, argv);
	std::string filter = testing::GTEST_FLAG(filter);
	// A filter that only leaves tests out (GTEST_FILTER=-*DeathTest*, as CI's ThreadSanitizer run) keeps the
	// default's tests: "-x" means "*-x" to GoogleTest, which would run the ranks' tests without mpirun.
	auto by_default = [&](const std::string &tests) { return filter == "*" ? tests : filter[0] == '-' ? tests + filter : filter; };
	if (!under_mpirun()) {
		testing::GTEST_FLAG(filter) = by_default("MpiRun.*");
		return RUN_ALL_TESTS();
	}
	testing::GTEST_FLAG(filter) = by_default(rank_filter);
	bool init_here = !own_init_suite || filter.find(own_init_suite) == std::string::npos;
	if (init_here) {
		int provided;
		MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	}
	int ret = RUN_ALL_TESTS();
	if (init_here)
		MPI_Finalize();
	return ret;
}

} // namespace astro_test

#endif
