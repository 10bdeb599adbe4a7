// SPDX-License-Identifier: LGPL-2.1-or-later
// The parsers of environment text (kernel/common/envparse.c, built into this test
// as into the fuzz targets of bench/fuzz/), and the worker lists
// STARPU_WORKERS_CPUID / STARPU_WORKERS_COREID applied by starpu_init().
#include "helpers.h"

#include <glib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>

extern "C" {
#include "envparse.h"
}
#include <astrolabe/env.h>

using namespace astro_test;

namespace {

// The entries of a path list, as a vector.
std::vector<std::string> path_list(const char *text, bool strip)
{
	char **entries = _astro_parse_path_list(text, strip);
	std::vector<std::string> out;
	for (char **e = entries; *e; e++)
		out.push_back(*e);
	g_strfreev(entries);
	return out;
}

// An id list parsed with room for 64 ids; the bad token on failure.
struct IdList
{
	int ret;
	std::vector<unsigned> ids;
	std::string bad, why;
};

IdList id_list(const char *text, unsigned limit, unsigned room = 64)
{
	std::vector<unsigned> ids(room + 1, 0xDEADBEEF);
	struct _astro_parse_error err = {0, 0, nullptr};
	IdList r;
	r.ret = _astro_parse_id_list(text, limit, ids.data(), room, &err);
	EXPECT_EQ(ids[room], 0xDEADBEEFu) << "wrote past the room for '" << text << "'";
	if (r.ret >= 0) {
		r.ids.assign(ids.begin(), ids.begin() + r.ret);
	} else {
		r.bad.assign(text + err.at, err.len);
		r.why = err.why ? err.why : "";
	}
	return r;
}

using Ids = std::vector<unsigned>;

} // namespace

// ----------------------------------------------------------------- numbers

TEST(EnvParse, Int)
{
	int v = 99;
	EXPECT_EQ(_astro_parse_int("42", &v), 0);
	EXPECT_EQ(v, 42);
	EXPECT_EQ(_astro_parse_int("  -7 \t", &v), 0);
	EXPECT_EQ(v, -7);
	EXPECT_EQ(_astro_parse_int("2147483647", &v), 0);
	EXPECT_EQ(v, INT_MAX);
	v = 99;
	for (const char *bad : {"", "   ", "abc", "12abc", "2147483648", "-2147483649", "1 2", "0x10", "99999999999999999999"}) {
		EXPECT_EQ(_astro_parse_int(bad, &v), -EINVAL) << "'" << bad << "'";
		EXPECT_EQ(v, 99) << "output changed by '" << bad << "'";
	}
	EXPECT_EQ(_astro_parse_int(nullptr, &v), -EINVAL);
}

TEST(EnvParse, Float)
{
	float v = 0.5f;
	EXPECT_EQ(_astro_parse_float("2.5", &v), 0);
	EXPECT_FLOAT_EQ(v, 2.5f);
	EXPECT_EQ(_astro_parse_float("-3e2 ", &v), 0);
	EXPECT_FLOAT_EQ(v, -300.0f);
	v = 0.5f;
	for (const char *bad : {"", "nan", "1.5x", "1e99", "x", "1 2"}) {
		EXPECT_EQ(_astro_parse_float(bad, &v), -EINVAL) << "'" << bad << "'";
		EXPECT_FLOAT_EQ(v, 0.5f);
	}
}

TEST(EnvParse, SizeSuffixes)
{
	struct { const char *text; int64_t bytes; } good[] = {
		{"512", 512}, {"7 b", 7}, {"64K", 64 << 10}, {"64kb", 64 << 10}, {"2 MB", 2 << 20},
		{"3G", int64_t(3) << 30}, {"1t", int64_t(1) << 40}, {"0", 0}, {" 5 ", 5},
	};
	for (auto &c : good) {
		int64_t v = -1;
		EXPECT_EQ(_astro_parse_size(c.text, &v), 0) << "'" << c.text << "'";
		EXPECT_EQ(v, c.bytes) << "'" << c.text << "'";
	}
	for (const char *bad : {"", "-1", "5KBB", "5X", "K", "5BB", "9223372036854775807K", "99999999999999999999", "1.5M"}) {
		int64_t v = -1;
		EXPECT_EQ(_astro_parse_size(bad, &v), -EINVAL) << "'" << bad << "'";
		EXPECT_EQ(v, -1);
	}
}

// ---------------------------------------------------------- bounded values

TEST(EnvParse, IntInRange)
{
	int v = 99;
	EXPECT_EQ(_astro_parse_int_in("1", 1, 1024, &v), 0);
	EXPECT_EQ(v, 1);
	EXPECT_EQ(_astro_parse_int_in(" 1024 ", 1, 1024, &v), 0);
	EXPECT_EQ(v, 1024);
	v = 99;
	for (const char *out : {"0", "-1", "1025", "1000000", "2147483647", "-2147483648"})
		EXPECT_EQ(_astro_parse_int_in(out, 1, 1024, &v), -ERANGE) << "'" << out << "'";
	for (const char *bad : {"abc", "", "8MiB", "99999999999999999999"})
		EXPECT_EQ(_astro_parse_int_in(bad, 1, 1024, &v), -EINVAL) << "'" << bad << "'";
	EXPECT_EQ(_astro_parse_int_in(nullptr, 1, 1024, &v), -EINVAL);
	EXPECT_EQ(v, 99) << "a refused value leaves the output alone";
}

TEST(EnvParse, FloatInRange)
{
	float v = 0.5f;
	EXPECT_EQ(_astro_parse_float_in("0", 0.0f, 1e6f, &v), 0);
	EXPECT_FLOAT_EQ(v, 0.0f);
	EXPECT_EQ(_astro_parse_float_in("1e6", 0.0f, 1e6f, &v), 0);
	v = 0.5f;
	for (const char *out : {"-0.001", "1e7", "inf", "-inf", "1e38"})
		EXPECT_EQ(_astro_parse_float_in(out, 0.0f, 1e6f, &v), -ERANGE) << "'" << out << "'";
	for (const char *bad : {"nan", "x", "1,5"})
		EXPECT_EQ(_astro_parse_float_in(bad, 0.0f, 1e6f, &v), -EINVAL) << "'" << bad << "'";
	EXPECT_FLOAT_EQ(v, 0.5f);
}

TEST(EnvParse, StringLength)
{
	EXPECT_EQ(_astro_check_length("lws", 3), 0);
	EXPECT_EQ(_astro_check_length("", 0), 0);
	EXPECT_EQ(_astro_check_length(nullptr, 0), 0);
	EXPECT_EQ(_astro_check_length("dmda", 3), -ENAMETOOLONG);
	std::string huge(10000, 'x');
	EXPECT_EQ(_astro_check_length(huge.c_str(), 4096), -ENAMETOOLONG);
}

TEST(EnvParse, ListNamesLength)
{
	struct _astro_parse_error err = {0, 0, nullptr};
	EXPECT_EQ(_astro_check_list_names("PAPI_TOT_INS, PAPI_L1_DCM", " ,", 12, &err), 0);
	EXPECT_EQ(_astro_check_list_names("", " ,", 1, &err), 0);
	EXPECT_EQ(_astro_check_list_names(nullptr, " ,", 1, &err), 0);
	const char *text = "A,BBBB CC";
	ASSERT_EQ(_astro_check_list_names(text, " ,", 3, &err), -ENAMETOOLONG);
	EXPECT_EQ(std::string(text + err.at, err.len), "BBBB");
	std::string huge(10000, 'E');
	ASSERT_EQ(_astro_check_list_names(huge.c_str(), " ,", 127, &err), -ENAMETOOLONG);
	EXPECT_EQ(err.at, 0u);
	EXPECT_EQ(err.len, 10000u);
}

TEST(EnvParse, ShownValueStaysReadable)
{
	char buf[96];
	EXPECT_STREQ(_astro_env_shown("abc", buf, sizeof(buf)), "'abc'");
	EXPECT_STREQ(_astro_env_shown(nullptr, buf, sizeof(buf)), "(unset)");
	std::string huge(10000, 'x');
	EXPECT_EQ(std::string(_astro_env_shown(huge.c_str(), buf, sizeof(buf))),
		  "'" + std::string(32, 'x') + "...' (10000 characters)");
}

// The public readers (astro/env.h): one message naming the variable, the
// value, the range and the default; the default then.
TEST(EnvBounded, IntOutOfRangeOrNotANumber)
{
	const char *kVar = "ASTRO_TEST_BOUNDED";
	{
		ScopedEnv v(kVar, nullptr);
		std::string err = stderr_of([&] { EXPECT_EQ(astro_env_int(kVar, 1, 1024, 8, "MiB"), 8); });
		EXPECT_EQ(err, "");
	}
	{
		ScopedEnv v(kVar, "16");
		std::string err = stderr_of([&] { EXPECT_EQ(astro_env_int(kVar, 1, 1024, 8, "MiB"), 16); });
		EXPECT_EQ(err, "");
	}
	for (const char *out : {"1000000", "0", "-1"}) {
		ScopedEnv v(kVar, out);
		std::string err = stderr_of([&] { EXPECT_EQ(astro_env_int(kVar, 1, 1024, 8, "MiB"), 8); });
		EXPECT_EQ(err, std::string("[astrolabe] error: ") + kVar + "='" + out +
				       "' is out of range 1..1024 (MiB): ignored, using 8\n");
	}
	ScopedEnv v(kVar, "abc");
	std::string err = stderr_of([&] { EXPECT_EQ(astro_env_int(kVar, 1, 1024, 8, "MiB"), 8); });
	EXPECT_EQ(err, std::string("[astrolabe] error: ") + kVar + "='abc' is not a number (give 1..1024 (MiB)): ignored, using 8\n");
}

TEST(EnvBounded, Float)
{
	const char *kVar = "ASTRO_TEST_BOUNDED";
	{
		ScopedEnv v(kVar, "1e30");
		std::string err = stderr_of([&] { EXPECT_FLOAT_EQ(astro_env_float(kVar, 0.0f, 1e6f, 1.0f, nullptr), 1.0f); });
		EXPECT_EQ(lines_of(err).size(), 1u) << err;
		EXPECT_TRUE(contains(err, "ASTRO_TEST_BOUNDED='1e30' is out of range 0..1e+06: ignored, using 1")) << err;
	}
	{
		ScopedEnv v(kVar, "0.25");
		EXPECT_FLOAT_EQ(astro_env_float(kVar, 0.0f, 1e6f, 1.0f, nullptr), 0.25f);
	}
}

TEST(EnvBounded, StringsHaveAMaximumLength)
{
	const char *kVar = "ASTRO_TEST_BOUNDED";
	std::string huge(10000, 'x');
	{
		ScopedEnv v(kVar, huge);
		const char *got = "unchanged";
		std::string err = stderr_of([&] { got = astro_env_string(kVar, 255, "lws"); });
		EXPECT_STREQ(got, "lws");
		EXPECT_EQ(err, std::string("[astrolabe] error: ") + kVar + "='" + std::string(32, 'x') +
				       "...' (10000 characters) is too long (at most 255 characters): ignored, using 'lws'\n");
		err = stderr_of([&] { got = astro_env_string(kVar, 255, nullptr); });
		EXPECT_EQ(got, nullptr);
		EXPECT_TRUE(contains(err, "ignored, as if it were unset")) << err;
	}
	{
		ScopedEnv v(kVar, "dmda");
		EXPECT_STREQ(astro_env_string(kVar, 255, "lws"), "dmda");
	}
	{
		std::string list = "PAPI_TOT_INS," + huge;
		ScopedEnv v(kVar, list);
		const char *got = "unchanged";
		std::string err = stderr_of([&] { got = astro_env_names(kVar, " ,", 127, nullptr); });
		EXPECT_EQ(got, nullptr);
		EXPECT_EQ(lines_of(err).size(), 1u) << err;
		EXPECT_TRUE(contains(err, "its name '" + std::string(32, 'x') + "...' (10000 characters) is too long "
					  "(at most 127 characters a name)")) << err;
	}
	{
		ScopedEnv v(kVar, "PAPI_TOT_INS, PAPI_L1_DCM");
		EXPECT_STREQ(astro_env_names(kVar, " ,", 127, nullptr), "PAPI_TOT_INS, PAPI_L1_DCM");
	}
}

// -------------------------------------------------------------- path lists

TEST(EnvParse, PathListDropsEmptyEntries)
{
	EXPECT_EQ(path_list("/a:/b", false), (std::vector<std::string>{"/a", "/b"}));
	EXPECT_EQ(path_list("::/a:::/b::", false), (std::vector<std::string>{"/a", "/b"}));
	EXPECT_EQ(path_list("", false), std::vector<std::string>{});
	EXPECT_EQ(path_list(":", false), std::vector<std::string>{});
	EXPECT_EQ(path_list(nullptr, false), std::vector<std::string>{});
	// Without stripping, blanks belong to the folder name (STARPU_PLUGIN_PATH).
	EXPECT_EQ(path_list(" /a : ", false), (std::vector<std::string>{" /a ", " "}));
}

TEST(EnvParse, PathListStripsBlanksWhenAsked)
{
	// STARPU_PROF_TOOL: "print : stats" names two tools, a blank entry none.
	EXPECT_EQ(path_list(" print : stats :", true), (std::vector<std::string>{"print", "stats"}));
	EXPECT_EQ(path_list(" : \t :", true), std::vector<std::string>{});
	// Found by fuzz_path_list: a vertical tab is a blank too (g_strstrip() kept it).
	EXPECT_EQ(path_list(" :\v: \v\tx\v :", true), (std::vector<std::string>{"x"}));
	EXPECT_EQ(path_list("./lib tool.so", true), (std::vector<std::string>{"./lib tool.so"}));
}

TEST(EnvParse, PathListVeryLong)
{
	std::string text;
	for (int i = 0; i < 20000; i++)
		text += "/dir" + std::to_string(i) + "::";
	auto entries = path_list(text.c_str(), true);
	ASSERT_EQ(entries.size(), 20000u);
	EXPECT_EQ(entries.back(), "/dir19999");
}

// ---------------------------------------------------------------- id lists

TEST(EnvParse, IdListValues)
{
	EXPECT_EQ(id_list("0 1 4 5", 8).ids, (Ids{0, 1, 4, 5}));
	EXPECT_EQ(id_list("3", 8).ids, (Ids{3}));
	EXPECT_EQ(id_list("5 1 5", 8).ids, (Ids{5, 1, 5}));
	EXPECT_EQ(id_list("7", 8).ret, 1);
}

TEST(EnvParse, IdListRanges)
{
	EXPECT_EQ(id_list("1-3 5", 8).ids, (Ids{1, 2, 3, 5}));
	EXPECT_EQ(id_list("2-2", 8).ids, (Ids{2}));
	// An open range runs to the last id of the machine.
	EXPECT_EQ(id_list("5-", 8).ids, (Ids{5, 6, 7}));
	EXPECT_EQ(id_list("0 6-", 8).ids, (Ids{0, 6, 7}));
	EXPECT_EQ(id_list("6-,0", 8).ids, (Ids{6, 7, 0}));
}

TEST(EnvParse, IdListSeparatorsAndEmptyEntries)
{
	EXPECT_EQ(id_list("0,1, 2 ,,3", 8).ids, (Ids{0, 1, 2, 3}));
	EXPECT_EQ(id_list("  \t0\n  1  ", 8).ids, (Ids{0, 1}));
	// No entry at all: nothing to apply, not an error.
	EXPECT_EQ(id_list("", 8).ret, 0);
	EXPECT_EQ(id_list(" , ,", 8).ret, 0);
}

TEST(EnvParse, IdListBadTokensAreNamed)
{
	struct { const char *text, *bad; } cases[] = {
		{"0 x 2", "x"}, {"0 1a", "1a"}, {"-1", "-1"}, {"1--3", "1--3"}, {"1-3-5", "1-3-5"},
		{"3-1", "3-1"}, {"0 8", "8"}, {"2-9", "2-9"}, {"99999999999999999999", "99999999999999999999"},
		{"0 1.5", "1.5"}, {"+1", "+1"}, {"0-x", "0-x"},
	};
	for (auto &c : cases) {
		IdList r = id_list(c.text, 8);
		EXPECT_EQ(r.ret, -EINVAL) << "'" << c.text << "'";
		EXPECT_EQ(r.bad, c.bad) << "'" << c.text << "'";
		EXPECT_FALSE(r.why.empty());
	}
	EXPECT_TRUE(contains(id_list("3-1", 8).why, "before its start"));
	EXPECT_TRUE(contains(id_list("9", 8).why, "beyond"));
	// No machine: every id is beyond it.
	EXPECT_EQ(id_list("0", 0).ret, -EINVAL);
	EXPECT_EQ(id_list("0-", 0).ret, -EINVAL);
}

TEST(EnvParse, IdListKeepsToItsRoom)
{
	// More ids than room: the first ones are kept, the rest still checked.
	IdList r = id_list("0-", 1000, 4);
	EXPECT_EQ(r.ids, (Ids{0, 1, 2, 3}));
	EXPECT_EQ(id_list("0-900 1000", 1000, 4).ret, -EINVAL);
	EXPECT_EQ(id_list("0 1", 8, 0).ret, 0);
	// The largest machine: an open range stops at the room, not at 4 billion.
	EXPECT_EQ(id_list("4294967290-", UINT_MAX, 64).ids, (Ids{4294967290u, 4294967291u, 4294967292u, 4294967293u, 4294967294u}));
}

TEST(EnvParse, IdListVeryLong)
{
	std::string text;
	for (int i = 0; i < 100000; i++)
		text += std::to_string(i % 8) + (i % 3 ? " " : ",");
	IdList r = id_list(text.c_str(), 8);
	ASSERT_EQ(r.ret, 64);
	EXPECT_EQ(r.ids[9], 1u);
	text += "8";
	r = id_list(text.c_str(), 8);
	EXPECT_EQ(r.ret, -EINVAL);
	EXPECT_EQ(r.bad, "8");
}

// ------------------------------------------------- STARPU_WORKERS_CPUID

namespace {

// The bind ids of the first n workers after starpu_init() (with NCPU=n).
std::vector<int> bindids_with(unsigned n, std::string *err = nullptr)
{
	ScopedEnv ncpu("STARPU_NCPU", std::to_string(n).c_str());
	ScopedEnv nobind("STARPU_WORKERS_NOBIND", nullptr);
	std::vector<int> ids;
	std::string out = stderr_of([&] {
		EXPECT_EQ(starpu_init(nullptr), 0);
		for (unsigned i = 0; i < starpu_worker_get_count(); i++)
			ids.push_back(starpu_worker_get_bindid((int)i));
		starpu_shutdown();
	});
	if (err)
		*err = out;
	return ids;
}

unsigned online_pus()
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

} // namespace

TEST(WorkersCpuid, ListBindsTheWorkersInOrder)
{
	if (online_pus() < 2)
		GTEST_SKIP() << "needs two processing units";
	{
		ScopedEnv list("STARPU_WORKERS_CPUID", "1 0");
		EXPECT_EQ(bindids_with(2), (std::vector<int>{1, 0}));
	}
	{
		ScopedEnv list("STARPU_WORKERS_CPUID", "1-");
		std::vector<int> ids = bindids_with(2);
		ASSERT_EQ(ids.size(), 2u);
		EXPECT_EQ(ids[0], 1);
		EXPECT_EQ(ids[1], online_pus() > 2 ? 2 : 1);	// repeated when the list is short
	}
}

TEST(WorkersCpuid, ShortListIsRepeated)
{
	ScopedEnv list("STARPU_WORKERS_CPUID", "0");
	EXPECT_EQ(bindids_with(3), (std::vector<int>{0, 0, 0}));
}

TEST(WorkersCpuid, WinsOverTheConfButNotOverItsPrecedence)
{
	if (online_pus() < 2)
		GTEST_SKIP() << "needs two processing units";
	ScopedEnv list("STARPU_WORKERS_CPUID", "1");
	ScopedEnv ncpu("STARPU_NCPU", "1");
	for (int precedence = 0; precedence < 2; precedence++) {
		struct starpu_conf conf;
		starpu_conf_init(&conf);
		conf.use_explicit_workers_bindid = 1;
		conf.workers_bindid[0] = 0;
		conf.precedence_over_environment_variables = precedence;
		ASSERT_EQ(starpu_init(&conf), 0);
		EXPECT_EQ(starpu_worker_get_bindid(0), precedence ? 0 : 1) << "precedence " << precedence;
		starpu_shutdown();
	}
}

TEST(WorkersCpuid, BadListIsReportedOnceAndIgnored)
{
	std::vector<int> dflt = bindids_with(2);
	struct { const char *value, *token; } cases[] = {
		{"0 x", "'x'"}, {"1-0", "'1-0'"}, {"100000", "'100000'"}, {"-1", "'-1'"},
	};
	for (auto &c : cases) {
		ScopedEnv list("STARPU_WORKERS_CPUID", c.value);
		std::string err;
		EXPECT_EQ(bindids_with(2, &err), dflt) << c.value;
		EXPECT_TRUE(contains(err, "[astrolabe]")) << err;
		EXPECT_TRUE(contains(err, "STARPU_WORKERS_CPUID")) << err;
		EXPECT_TRUE(contains(err, c.token)) << err;
		EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
	}
}

TEST(WorkersCpuid, EmptyListIsLikeUnset)
{
	std::vector<int> dflt = bindids_with(2);
	ScopedEnv list("STARPU_WORKERS_CPUID", " ");
	std::string err;
	EXPECT_EQ(bindids_with(2, &err), dflt);
	EXPECT_FALSE(contains(err, "STARPU_WORKERS_CPUID")) << err;
}

TEST(WorkersCoreid, BindsToTheFirstUnitOfEachCore)
{
	// Default binding: worker i on the first processing unit of core i.
	std::vector<int> dflt = bindids_with(2);
	ASSERT_EQ(dflt.size(), 2u);
	if (dflt[0] == dflt[1])
		GTEST_SKIP() << "needs two cores";
	ScopedEnv list("STARPU_WORKERS_COREID", "1 0");
	EXPECT_EQ(bindids_with(2), (std::vector<int>{dflt[1], dflt[0]}));
	{
		// CPUID wins, and says so.
		ScopedEnv cpuid("STARPU_WORKERS_CPUID", "0");
		std::string err;
		EXPECT_EQ(bindids_with(2, &err), (std::vector<int>{0, 0}));
		EXPECT_TRUE(contains(err, "STARPU_WORKERS_COREID is ignored")) << err;
	}
	ScopedEnv bad("STARPU_WORKERS_COREID", "0 1000");
	std::string err;
	EXPECT_EQ(bindids_with(2, &err), dflt);
	EXPECT_TRUE(contains(err, "STARPU_WORKERS_COREID: '1000'")) << err;
}

TEST(WorkersCpuid, NobindWins)
{
	ScopedEnv list("STARPU_WORKERS_CPUID", "0");
	ScopedEnv ncpu("STARPU_NCPU", "1");
	ScopedEnv nobind("STARPU_WORKERS_NOBIND", "1");
	ASSERT_EQ(starpu_init(nullptr), 0);
	EXPECT_EQ(starpu_worker_get_bindid(0), -1);
	starpu_shutdown();
}

// ------------------------------------------- other variables, same parsers

TEST(IdlePower, BadValueIsReportedNotTakenAsZero)
{
	ScopedEnv prof("STARPU_PROFILING", "1"), stats("STARPU_WORKER_STATS", "1"), to("STARPU_WORKER_STATS_FILE", nullptr);
	ScopedEnv ncpu("STARPU_NCPU", "1");
	auto summary = [] {
		return stderr_of([] {
			ASSERT_EQ(starpu_init(nullptr), 0);
			starpu_shutdown();
		});
	};
	{
		ScopedEnv power("STARPU_IDLE_POWER", "2.5");
		std::string out = summary();
		EXPECT_TRUE(contains(out, "Idle energy: ")) << out;
		EXPECT_FALSE(contains(out, "[astrolabe]")) << out;
	}
	{
		// atof() read "2,5" as 2 and "watts" as 0 without a word.
		ScopedEnv power("STARPU_IDLE_POWER", "2,5");
		std::string out = summary();
		EXPECT_TRUE(contains(out, "[astrolabe]")) << out;
		EXPECT_TRUE(contains(out, "STARPU_IDLE_POWER='2,5' is not a number")) << out;
		EXPECT_FALSE(contains(out, "Idle energy: ")) << out;
	}
	starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
}

// The runtime's own numeric and string variables, out of their documented
// range (doc/environment.md's table): each is said once, naming its range, and
// starpu_init() goes on with the default.
TEST(EnvBounded, RuntimeVariablesOutOfRangeAreSaidOnce)
{
	std::string long_name(300, 'p');
	struct Case
	{
		const char *var;
		std::string value, said;
	} cases[] = {
		{ "STARPU_MIN_PRIO", "-2000000", "STARPU_MIN_PRIO='-2000000' is out of range -1000000..1000000: ignored, using -5" },
		{ "STARPU_MAX_PRIO", "2147483647", "STARPU_MAX_PRIO='2147483647' is out of range -1000000..1000000: ignored, using 5" },
		{ "STARPU_CALIBRATE_MINIMUM", "0", "STARPU_CALIBRATE_MINIMUM='0' is out of range 1..1000000 (samples): ignored, using 10" },
		{ "STARPU_PLUGIN_VERBOSE", "7", "STARPU_PLUGIN_VERBOSE='7' is out of range 0..1: ignored, using 0" },
		{ "STARPU_WORKERS_NOBIND", "yes", "STARPU_WORKERS_NOBIND='yes' is not a number (give 0..1): ignored, using 0" },
		{ "STARPU_SCHED", long_name,
		  "STARPU_SCHED='" + std::string(32, 'p') + "...' (300 characters) is too long (at most 255 characters): ignored, as if it were unset" },
	};
	for (const Case &c : cases) {
		SCOPED_TRACE(c.var);
		ScopedEnv var(c.var, c.value);
		ScopedEnv ncpu("STARPU_NCPU", "1");
		std::string err = stderr_of([] {
			ASSERT_EQ(starpu_init(nullptr), 0);
			starpu_shutdown();
		});
		EXPECT_EQ(err, "[astrolabe] error: " + c.said + "\n");
	}
}

// A statistics file whose name is longer than a path can be: said once, and
// the summary goes to stderr as when the variable is unset.
TEST(EnvBounded, TooLongAStatisticsFileIsSaid)
{
	std::string path = "/tmp/" + std::string(5000, 'f');
	ScopedEnv prof("STARPU_PROFILING", "1"), stats("STARPU_WORKER_STATS", "1"), file("STARPU_WORKER_STATS_FILE", path);
	ScopedEnv ncpu("STARPU_NCPU", "1");
	std::string err = stderr_of([] {
		ASSERT_EQ(starpu_init(nullptr), 0);
		starpu_shutdown();
	});
	starpu_profiling_status_set(STARPU_PROFILING_DISABLE);
	EXPECT_TRUE(contains(err, "[astrolabe] error: STARPU_WORKER_STATS_FILE='/tmp/" + std::string(27, 'f') +
					  "...' (5005 characters) is too long (at most 4095 characters): ignored, as if it were unset\n")) << err;
	EXPECT_EQ(err.find("[astrolabe]"), err.rfind("[astrolabe]")) << "one message: " << err;
	EXPECT_TRUE(contains(err, "Worker stats")) << "the summary went to stderr: " << err;
}

// STARPU_SILENT is read when a warning comes: out of 0..1 it is said, and the
// warning is not silenced.
TEST(EnvBounded, SilentOutOfRangeLeavesTheWarning)
{
	ScopedEnv silent("STARPU_SILENT", "2"), ncpu("STARPU_NCPU", "1");
	ScopedEnv min("STARPU_MIN_PRIO", "3"), max("STARPU_MAX_PRIO", "1");	// a warning at starpu_init()
	std::string err = stderr_of([] {
		ASSERT_EQ(starpu_init(nullptr), 0);
		starpu_shutdown();
	});
	EXPECT_EQ(err, "[astrolabe] error: STARPU_SILENT='2' is out of range 0..1: ignored, using 0\n"
		       "[astrolabe] warning: minimum priority 3 exceeds maximum priority 1: using [-5, 5]\n");
}
