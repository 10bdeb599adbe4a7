// SPDX-License-Identifier: LGPL-2.1-or-later
// Environment parsing, timing and CRC32C utilities of the StarPU API; the thread layer's short lock.
#include <gtest/gtest.h>
#include <starpu.h>
#include <astrolabe/thread.h>

#include "helpers.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <sys/mman.h>

namespace {

const char *const kVar = "ASTROLABE_TEST_ENV_VALUE";

// Sets kVar (or unsets it for nullptr) for one test.
class Env : public ::testing::Test
{
protected:
	void TearDown() override { unsetenv(kVar); }
	static void set(const char *value)
	{
		if (value)
			setenv(kVar, value, 1);
		else
			unsetenv(kVar);
	}
};

// Number of lines written to stderr while running f.
template <typename F> std::string stderr_of(F f)
{
	testing::internal::CaptureStderr();
	f();
	return testing::internal::GetCapturedStderr();
}

size_t count_lines(const std::string &s)
{
	size_t n = 0;
	for (char c : s)
		n += c == '\n';
	return n;
}

} // namespace

// ------------------------------------------------------------------ getenv

TEST_F(Env, GetenvIsPlainGetenv)
{
	set(nullptr);
	EXPECT_EQ(starpu_getenv(kVar), nullptr);
	set("hello");
	ASSERT_NE(starpu_getenv(kVar), nullptr);
	EXPECT_STREQ(starpu_getenv(kVar), "hello");
}

TEST_F(Env, NumberUnsetIsMinusOne)
{
	set(nullptr);
	std::string err = stderr_of([] { EXPECT_EQ(starpu_get_env_number(kVar), -1); });
	EXPECT_EQ(err, "");
	EXPECT_EQ(starpu_get_env_number_default(kVar, 17), 17);
}

TEST_F(Env, NumberGoodValues)
{
	set("42");
	EXPECT_EQ(starpu_get_env_number(kVar), 42);
	EXPECT_EQ(starpu_get_env_number_default(kVar, 5), 42);
	set("0");
	EXPECT_EQ(starpu_get_env_number(kVar), 0);
	set("-7");
	EXPECT_EQ(starpu_get_env_number(kVar), -7);
	set(" 12 ");
	EXPECT_EQ(starpu_get_env_number(kVar), 12);
}

TEST_F(Env, NumberBadValuesAreReportedOnceAndIgnored)
{
	for (const char *bad : { "abc", "12x", "", "1.5", "99999999999999" })
	{
		SCOPED_TRACE(bad);
		set(bad);
		std::string err = stderr_of([] { EXPECT_EQ(starpu_get_env_number(kVar), -1); });
		EXPECT_EQ(count_lines(err), 1u) << err;
		EXPECT_NE(err.find(std::string(kVar) + "='" + bad + "' is not a number: ignored, as if it were unset"), std::string::npos) << err;

		err = stderr_of([] { EXPECT_EQ(starpu_get_env_number_default(kVar, 33), 33); });
		EXPECT_EQ(count_lines(err), 1u) << err;
		EXPECT_NE(err.find(std::string(kVar) + "='" + bad + "' is not a number: ignored, using 33"), std::string::npos) << err;
	}
}

TEST_F(Env, FloatValues)
{
	set(nullptr);
	EXPECT_FLOAT_EQ(starpu_get_env_float_default(kVar, 1.25f), 1.25f);
	set("2.5");
	EXPECT_FLOAT_EQ(starpu_get_env_float_default(kVar, 1.25f), 2.5f);
	set("-3");
	EXPECT_FLOAT_EQ(starpu_get_env_float_default(kVar, 1.25f), -3.0f);
	for (const char *bad : { "x", "2.5y", "" })
	{
		SCOPED_TRACE(bad);
		set(bad);
		std::string err = stderr_of([] { EXPECT_FLOAT_EQ(starpu_get_env_float_default(kVar, 1.25f), 1.25f); });
		EXPECT_EQ(count_lines(err), 1u) << err;
		EXPECT_NE(err.find("is not a number"), std::string::npos) << err;
	}
}

// StarPU 1.4's signature: an int of bytes, the unit K when no suffix is given.
static_assert(std::is_same<decltype(&starpu_get_env_size_default), int (*)(const char *, int)>::value,
	      "starpu_get_env_size_default(const char *, int) returns int, as in StarPU 1.4");
static_assert(std::is_same<decltype(&starpu_get_env_string_var_default), int (*)(const char *, const char **, int)>::value,
	      "starpu_get_env_string_var_default(const char *, const char *[], int) returns int, as in StarPU 1.4");

TEST_F(Env, SizeSuffixes)
{
	struct { const char *text; int bytes; } cases[] = {
		{ "123", 123 * 1024 },
		{ " 12 ", 12 * 1024 },
		{ "7B", 7 },
		{ "7b", 7 },
		{ "4K", 4096 },
		{ "4k", 4096 },
		{ "4KB", 4096 },
		{ "4kB", 4096 },
		{ "2M", 2 << 20 },
		{ "2mb", 2 << 20 },
		{ "5 MB", 5 << 20 },
		{ "1G", 1 << 30 },
		{ "1 g", 1 << 30 },
		{ "0", 0 },
	};
	for (auto &c : cases)
	{
		SCOPED_TRACE(c.text);
		set(c.text);
		std::string err = stderr_of([&] { EXPECT_EQ(starpu_get_env_size_default(kVar, -5), c.bytes); });
		EXPECT_EQ(err, "");
	}
	set(nullptr);
	EXPECT_EQ(starpu_get_env_size_default(kVar, 999), 999);
	set("");
	EXPECT_EQ(starpu_get_env_size_default(kVar, 998), 998) << "empty is unset";
	set("  ");
	EXPECT_EQ(starpu_get_env_size_default(kVar, 997), 997) << "blank is unset";
}

TEST_F(Env, SizeBadValuesKeepTheDefault)
{
	// Beyond an int (what the call returns, as in StarPU) is said too, the default kept.
	struct { const char *text, *said; } cases[] = {
		{ "12Q", "is not a size" }, { "K", "is not a size" }, { "-1", "is not a size" }, { "1.5G", "is not a size" },
		{ "4KK", "is not a size" }, { "4BB", "is not a size" }, { "9999999999999T", "is not a size" },
		{ "abc", "is not a size" }, { "2G", "is more than this call returns" }, { "3T", "is more than this call returns" },
		{ "4194304", "is more than this call returns" },
	};
	for (auto &c : cases)
	{
		SCOPED_TRACE(c.text);
		set(c.text);
		std::string err = stderr_of([] { EXPECT_EQ(starpu_get_env_size_default(kVar, 999), 999); });
		EXPECT_EQ(count_lines(err), 1u) << err;
		EXPECT_NE(err.find(std::string(kVar) + "='" + c.text + "' " + c.said), std::string::npos) << err;
	}
}

TEST_F(Env, StringVarGivesThePositionOfTheValue)
{
	const char *choices[] = { "fifo", "lifo", "random", nullptr };
	set(nullptr);
	EXPECT_EQ(starpu_get_env_string_var_default(kVar, choices, 7), 7);
	set("lifo");
	EXPECT_EQ(starpu_get_env_string_var_default(kVar, choices, 7), 1);
	set("FIFO");
	EXPECT_EQ(starpu_get_env_string_var_default(kVar, choices, 7), 0) << "compared without case";
	set("Random");
	EXPECT_EQ(starpu_get_env_string_var_default(kVar, choices, -1), 2);
	for (const char *bad : { "fif", "lifo2", "", "fifo " })
	{
		SCOPED_TRACE(bad);
		set(bad);
		std::string err = stderr_of([&] { EXPECT_EQ(starpu_get_env_string_var_default(kVar, choices, 7), 7); });
		EXPECT_EQ(count_lines(err), 1u) << err;
		EXPECT_NE(err.find(std::string(kVar) + "='" + bad + "' is none of the accepted values (fifo, lifo, random)"),
			  std::string::npos) << err;
	}
	set("fifo");
	std::string err = stderr_of([] { EXPECT_EQ(starpu_get_env_string_var_default(kVar, nullptr, 3), 3); });
	EXPECT_NE(err.find("NULL strings"), std::string::npos) << err;
}

// ------------------------------------------------------------------ timing

TEST(Timing, NowIsMonotonicMicroseconds)
{
	double a = starpu_timing_now();
	double b = starpu_timing_now();
	EXPECT_GT(a, 0.0);
	EXPECT_GE(b, a);
}

TEST(Timing, NowKeepsPaceWithTheMonotonicClock)
{
	// Past the clock's calibration (the first 20 ms of the process), the
	// time-stamp counter must advance as CLOCK_MONOTONIC does.
	auto mono_us = [] {
		timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
	};
	// Each reading is bracketed by two of CLOCK_MONOTONIC: the thread may be
	// preempted between two readings on a loaded machine, never outside the bracket.
	struct Reading
	{
		double before, now, after;
	};
	auto read = [&] {
		Reading r;
		r.before = mono_us();
		r.now = starpu_timing_now();
		r.after = mono_us();
		return r;
	};
	starpu_timing_now();
	starpu_usleep(30000);
	starpu_timing_now();
	Reading a = read();
	for (int i = 0; i < 5; i++) {
		starpu_usleep(10000);
		Reading b = read();
		EXPECT_GE(b.now, a.now);
		double drift = 0.005 * (b.after - a.before) + 50.0;
		EXPECT_GE(b.now - a.now, b.before - a.after - drift) << "starpu_timing_now() drifts from CLOCK_MONOTONIC";
		EXPECT_LE(b.now - a.now, b.after - a.before + drift) << "starpu_timing_now() drifts from CLOCK_MONOTONIC";
		// Both clocks count from the same origin.
		EXPECT_GE(b.now, b.before - 1000.0);
		EXPECT_LE(b.now, b.after + 1000.0);
	}
}

// The clock is chosen at the first reading of the process: a fresh process each.
TEST(TimingDeathTest, ClockChoiceIsCheckedAndBothClocksWork)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	auto keeps_pace = [] {
		auto mono_us = [] {
			timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			return ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
		};
		double a = starpu_timing_now();
		starpu_usleep(30000);
		// Bracketed by CLOCK_MONOTONIC: a preemption in between widens the bracket, never fails it.
		double before = mono_us();
		double b = starpu_timing_now();
		double after = mono_us();
		return b - a >= 29000.0 && b - a < 1e6 && b >= before - 1000.0 && b <= after + 1000.0;
	};
	EXPECT_EXIT(
		{
			setenv("ASTROLABE_TIMING", "sundial", 1);
			exit(keeps_pace() ? 0 : 1);
		},
		::testing::ExitedWithCode(0), "ASTROLABE_TIMING='sundial' is not a clock: use tsc \\(the default\\) or clock_gettime");
	EXPECT_EXIT(
		{
			setenv("ASTROLABE_TIMING", "clock_gettime", 1);
			exit(keeps_pace() ? 0 : 1);
		},
		::testing::ExitedWithCode(0), "^$");
}

TEST(Timing, UsleepWaitsAtLeastTheGivenTime)
{
	double start = starpu_timing_now();
	starpu_usleep(20000);
	double elapsed = starpu_timing_now() - start;
	EXPECT_GE(elapsed, 19900.0);
	EXPECT_LT(elapsed, 2e6);
}

TEST(Timing, SleepTakesSeconds)
{
	double start = starpu_timing_now();
	starpu_sleep(0.03f);
	double elapsed = starpu_timing_now() - start;
	EXPECT_GE(elapsed, 29900.0);
	EXPECT_LT(elapsed, 2e6);
}

TEST(Timing, NonPositiveDurationsReturnAtOnce)
{
	double start = starpu_timing_now();
	starpu_usleep(0);
	starpu_usleep(-100);
	starpu_sleep(-1.0f);
	EXPECT_LT(starpu_timing_now() - start, 1e6);
}

// ---------------------------------------------------------------- prefetch

// astro_prefetch_for_writing() is a hint: the task path gives it addresses it reads from other
// structures without checking them (a queued task's job, the recycler's next block), so it must
// never fault, nor change what it asks for.
TEST(Prefetch, AskingForLinesNeitherFaultsNorWrites)
{
	std::vector<unsigned char> buffer(1000);
	for (size_t i = 0; i < buffer.size(); i++)
		buffer[i] = (unsigned char)(i * 7);
	astro_prefetch_for_writing(buffer.data() + 3, buffer.size() - 3);
	for (size_t i = 0; i < buffer.size(); i++)
		ASSERT_EQ(buffer[i], (unsigned char)(i * 7)) << "byte " << i;
	astro_prefetch_for_writing(nullptr, 256);
	astro_prefetch_for_writing(buffer.data(), 0);
	long page = sysconf(_SC_PAGESIZE);
	void *unmapped = mmap(nullptr, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(unmapped, MAP_FAILED);
	astro_prefetch_for_writing(unmapped, (size_t)page);
	ASSERT_EQ(munmap(unmapped, (size_t)page), 0);
	astro_prefetch_for_writing(unmapped, (size_t)page); /* no longer mapped at all */
}

// ------------------------------------------------------------------ crc32c

namespace {

// Bitwise reference: CRC32C polynomial, most significant bit first, no
// initial or final inversion (what StarPU's footprints use).
uint32_t reference_crc(const void *data, size_t n, uint32_t crc)
{
	const unsigned char *p = static_cast<const unsigned char *>(data);
	for (size_t i = 0; i < n; i++)
	{
		crc ^= uint32_t(p[i]) << 24;
		for (int bit = 0; bit < 8; bit++)
			crc = (crc << 1) ^ ((crc & 0x80000000u) ? 0x1EDC6F41u : 0);
	}
	return crc;
}

} // namespace

// First so that the table is built while several threads race for it.
TEST(Crc32c, ThreadsAgreeOnFirstUse)
{
	const uint32_t expected = reference_crc("footprint", 9, 7);
	std::vector<std::thread> threads;
	std::vector<uint32_t> results(8);
	for (size_t t = 0; t < results.size(); t++)
		threads.emplace_back([&results, t] { results[t] = starpu_hash_crc32c_string("footprint", 7); });
	for (auto &th : threads)
		th.join();
	for (uint32_t r : results)
		EXPECT_EQ(r, expected);
}

// Values StarPU 1.4.12 wrote in a performance-model file: a vector of
// nx = 204800 floats has footprint crc(nx, 0); its handle footprint chains
// it on the vector interface id (2); the task footprint chains that on 0.
TEST(Crc32c, MatchesStarPUFootprints)
{
	uint32_t vector_fp = starpu_hash_crc32c_be(204800, 0);
	EXPECT_EQ(vector_fp, 0xe7195059u);
	uint32_t handle_fp = starpu_hash_crc32c_be(vector_fp, 2);
	EXPECT_EQ(handle_fp, 0x04b25255u);
	EXPECT_EQ(starpu_hash_crc32c_be(handle_fp, 0), 0xd0c0d6c6u);
}

TEST(Crc32c, MatchesBitwiseReference)
{
	unsigned char bytes[300];
	for (size_t i = 0; i < sizeof(bytes); i++)
		bytes[i] = (unsigned char)(i * 37 + 11);
	for (uint32_t init : { 0u, 1u, 0xffffffffu, 0x12345678u })
		for (size_t n : { 0, 1, 3, 4, 17, 300 })
			EXPECT_EQ(starpu_hash_crc32c_be_n(bytes, n, init), reference_crc(bytes, n, init)) << n << " " << init;
	EXPECT_EQ(starpu_hash_crc32c_be_n("123456789", 9, 0), reference_crc("123456789", 9, 0));
}

TEST(Crc32c, NoInputKeepsTheCrc)
{
	EXPECT_EQ(starpu_hash_crc32c_be_n("", 0, 0xabcdef01u), 0xabcdef01u);
	EXPECT_EQ(starpu_hash_crc32c_string("", 0x55u), 0x55u);
	EXPECT_EQ(starpu_hash_crc32c_be_n("x", 0, 0), 0u);
	// A zero crc fed zero bytes stays zero: there is no initial inversion.
	uint32_t zero = 0;
	EXPECT_EQ(starpu_hash_crc32c_be(zero, 0), 0u);
}

TEST(Crc32c, WordIsItsBytesInMemoryOrder)
{
	for (uint32_t v : { 0u, 1u, 204800u, 0xdeadbeefu })
	{
		EXPECT_EQ(starpu_hash_crc32c_be(v, 0), starpu_hash_crc32c_be_n(&v, sizeof(v), 0));
		EXPECT_EQ(starpu_hash_crc32c_be(v, 99), starpu_hash_crc32c_be_n(&v, sizeof(v), 99));
	}
}

TEST(Crc32c, StringIsItsCharacters)
{
	const char *s = "starpu footprint";
	EXPECT_EQ(starpu_hash_crc32c_string(s, 0), starpu_hash_crc32c_be_n(s, strlen(s), 0));
	EXPECT_EQ(starpu_hash_crc32c_string(s, 1234), starpu_hash_crc32c_be_n(s, strlen(s), 1234));
	uint32_t bytewise = 5;
	for (const char *p = s; *p; p++)
		bytewise = starpu_hash_crc32c_be_n(p, 1, bytewise);
	EXPECT_EQ(starpu_hash_crc32c_string(s, 5), bytewise);
}

TEST(Crc32c, PointerIsItsValue)
{
	int object;
	void *p = &object;
	EXPECT_EQ(starpu_hash_crc32c_be_ptr(p, 0), starpu_hash_crc32c_be_n(&p, sizeof(p), 0));
	EXPECT_NE(starpu_hash_crc32c_be_ptr(p, 0), starpu_hash_crc32c_be_ptr((char *)p + 1, 0));
}

TEST(Crc32c, ChainingEqualsOneRun)
{
	const char data[] = "abcdefghijklmnopqrstuvwxyz";
	uint32_t whole = starpu_hash_crc32c_be_n(data, 26, 3);
	uint32_t chained = starpu_hash_crc32c_be_n(data + 10, 16, starpu_hash_crc32c_be_n(data, 10, 3));
	EXPECT_EQ(whole, chained);

	uint32_t a = 10, b = 20;
	uint32_t words[2] = { a, b };
	EXPECT_EQ(starpu_hash_crc32c_be(b, starpu_hash_crc32c_be(a, 0)), starpu_hash_crc32c_be_n(words, sizeof(words), 0));
}

TEST(Crc32c, DifferentInputsDiffer)
{
	EXPECT_NE(starpu_hash_crc32c_be(1, 0), starpu_hash_crc32c_be(2, 0));
	EXPECT_NE(starpu_hash_crc32c_be(1, 0), starpu_hash_crc32c_be(1, 1));
	EXPECT_NE(starpu_hash_crc32c_string("ab", 0), starpu_hash_crc32c_string("ba", 0));
	// Order matters: crc(a then b) differs from crc(b then a).
	EXPECT_NE(starpu_hash_crc32c_be(2, starpu_hash_crc32c_be(1, 0)), starpu_hash_crc32c_be(1, starpu_hash_crc32c_be(2, 0)));
}

// starpu-1.4.pc gives programs the CUDA toolkit's libraries when starpu_config.h
// says STARPU_USE_CUDA (StarPU's examples call cuBLAS themselves), none otherwise;
// starpumpi-1.4.pc the same through its Requires.
TEST(PkgConfig, LibsNameTheCudaLibrariesWhenStarpuUseCuda)
{
	if (!astro_test::have_program("pkg-config"))
		GTEST_SKIP() << "pkg-config not found: install pkgconf";
	// The build tree's .pc files, next to its examples folder.
	std::string top = astro_test::env_or("ASTRO_TEST_EXAMPLES_DIR", "../examples") + "/..";
	std::vector<std::string> packages = { "starpu-1.4" };
	if (!astro_test::read_file(top + "/starpumpi-1.4.pc").empty())
		packages.push_back("starpumpi-1.4");
	for (const std::string &package : packages) {
		std::string libs;
		ASSERT_EQ(0, astro_test::run_command("PKG_CONFIG_PATH='" + top + "' pkg-config --libs " + package + " 2>&1", &libs)) << libs;
#ifdef STARPU_USE_CUDA
		for (const char *lib : { "-lcudart", "-lcublas", "/lib64", "-Wl,--push-state,--as-needed" })
			EXPECT_TRUE(astro_test::contains(libs, lib)) << package << " lacks " << lib << ": " << libs;
		EXPECT_LT(libs.find("--as-needed"), libs.find("-lcublas")) << libs;
#else
		EXPECT_FALSE(astro_test::contains(libs, "-lcudart")) << package << ": " << libs;
#endif
	}
}

// StarPU's MPI stencil example prints through a macro that names the function with __starpu_func__.
TEST(ConfigMacros, StarpuFuncNamesTheEnclosingFunction)
{
	EXPECT_STREQ(__starpu_func__, __func__);
	EXPECT_STRNE(__starpu_func__, "");
}

// The toolbox macros of <starpu_util.h> that StarPU 1.4 has (issue 40): the ADD ones
// give the new value, the OR and EXCHANGE ones the previous one.
TEST(ToolboxMacros, AtomicsGiveWhatStarPUsGive)
{
	uint64_t big = 5;
	EXPECT_EQ(STARPU_ATOMIC_ADD64(&big, 3), 8u);
	unsigned flags = 1;
	EXPECT_EQ(STARPU_ATOMIC_OR(&flags, 4u), 1u);
	EXPECT_EQ(flags, 5u);
	unsigned long lflags = 2;
	EXPECT_EQ(STARPU_ATOMIC_ORL(&lflags, 8ul), 2ul);
	uint64_t bits = 1;
	EXPECT_EQ(STARPU_ATOMIC_OR64(&bits, (uint64_t)1 << 40), 1u);
	EXPECT_EQ(bits, ((uint64_t)1 << 40) | 1);
	uint32_t word = 7;
	EXPECT_TRUE(STARPU_BOOL_COMPARE_AND_SWAP32(&word, 7u, 9u));
	EXPECT_FALSE(STARPU_BOOL_COMPARE_AND_SWAP64(&big, 1u, 2u));
	EXPECT_EQ(STARPU_VAL_COMPARE_AND_SWAP32(&word, 9u, 10u), 9u);
	EXPECT_EQ(STARPU_VAL_COMPARE_AND_SWAP64(&big, 8u, 11u), 8u);
	EXPECT_EQ(STARPU_VAL_EXCHANGE(&word, 12u), 10u);
	EXPECT_EQ(STARPU_VAL_EXCHANGE64(&big, 13u), 11u);
	EXPECT_EQ(word, 12u);
	EXPECT_EQ(big, 13u);
}

TEST(ToolboxMacros, StrerrorIntoABuffer)
{
	char buf[128];
	starpu_strerror_r(EINVAL, buf, sizeof(buf));
	EXPECT_STREQ(buf, strerror(EINVAL));
	char small[4];
	starpu_strerror_r(EINVAL, small, sizeof(small));
	EXPECT_EQ(strlen(small), 3u) << "cut to the buffer";
	EXPECT_EQ(STARPU_BACKTRACE_LENGTH, 32);
}

void *allocate_sized(size_t n) STARPU_ATTRIBUTE_ALLOC_SIZE(1);
void *allocate_sized(size_t n)
{
	return malloc(n);
}

TEST(ToolboxMacros, BacktraceIsPrintedOnStderr)
{
	void *p = allocate_sized(8);
	free(p);
	std::string err = stderr_of([] { STARPU_DUMP_BACKTRACE(); });
#ifdef __GLIBC__
	EXPECT_FALSE(err.empty());
#endif
}

TEST(InterfaceCheckDeathTest, ChecksAbortOnAnotherInterface)
{
	struct starpu_vector_interface v = {};
	v.id = STARPU_VECTOR_INTERFACE_ID;
	STARPU_VECTOR_CHECK(&v);
	struct starpu_matrix_interface m = {};
	m.id = STARPU_MATRIX_INTERFACE_ID;
	STARPU_MATRIX_CHECK(&m);
	EXPECT_DEATH(STARPU_MATRIX_CHECK(&v), "the data is not a matrix");
	EXPECT_DEATH(STARPU_VARIABLE_CHECK(&m), "the data is not a variable");
	EXPECT_DEATH(STARPU_BLOCK_CHECK(&m), "the data is not a block");
	EXPECT_DEATH(STARPU_TENSOR_CHECK(&m), "the data is not a tensor");
	EXPECT_DEATH(STARPU_NDIM_CHECK(&m), "the data is not a ndim");
	EXPECT_DEATH(STARPU_VECTOR_CHECK(&m), "the data is not a vector");
}

// The thread layer's short lock (astrolabe/thread.h), on which the policies' queues and the jobs rely:
// no increment is lost among contenders, one of which sometimes holds it long enough for the others
// to stop spinning and sleep on its futex.
TEST(ThreadLayer, ShortLockExcludesContenders)
{
	astro_lock_t lock = ASTRO_LOCK_INITIALIZER;
	long counter = 0; // plain: only touched under the lock
	const int kThreads = 4, kRounds = 20000;
	std::vector<std::thread> threads;
	for (int t = 0; t < kThreads; t++)
		threads.emplace_back([&lock, &counter, t, kRounds] {
			for (int i = 0; i < kRounds; i++) {
				astro_lock_acquire(&lock);
				long seen = counter;
				if (t == 0 && i % 2000 == 0)
					std::this_thread::sleep_for(std::chrono::milliseconds(2));
				counter = seen + 1;
				astro_lock_release(&lock);
			}
		});
	for (auto &thread : threads)
		thread.join();
	EXPECT_EQ(counter, long(kThreads) * kRounds);
	EXPECT_EQ(__atomic_load_n(&lock.state, __ATOMIC_RELAXED), 0) << "a lock given back by everyone is free";
}

// A contender that finds the lock held marks it contended (2) before it sleeps; giving the lock back
// then wakes it, and it takes the lock. No timing: the test waits for the mark itself.
TEST(ThreadLayer, ShortLockWakesASleepingContender)
{
	astro_lock_t lock;
	astro_lock_init(&lock);
	astro_lock_acquire(&lock);
	EXPECT_EQ(__atomic_load_n(&lock.state, __ATOMIC_RELAXED), 1) << "taken without contention";
	int got = 0;
	std::thread contender([&lock, &got] {
		astro_lock_acquire(&lock);
		__atomic_store_n(&got, 1, __ATOMIC_RELEASE);
		astro_lock_release(&lock);
	});
	while (__atomic_load_n(&lock.state, __ATOMIC_ACQUIRE) != 2)
		astro_thread_yield();
	EXPECT_EQ(__atomic_load_n(&got, __ATOMIC_ACQUIRE), 0) << "the contender took a held lock";
	astro_lock_release(&lock);
	contender.join();
	EXPECT_EQ(__atomic_load_n(&got, __ATOMIC_ACQUIRE), 1);
	EXPECT_EQ(__atomic_load_n(&lock.state, __ATOMIC_RELAXED), 0);
}
