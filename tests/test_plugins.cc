// SPDX-License-Identifier: LGPL-2.1-or-later
// The plugin loader: each broken test plugin is shown to the runtime alone,
// from a temporary directory added to STARPU_PLUGIN_PATH, and the message it
// earns is matched; the runtime must start anyway. Then a good out-of-tree
// scheduler, STARPU_SCHED_LIB, bad paths and verbose output.
#include "helpers.h"
#include "plugins/crash.h"
#include <astrolabe/plugin.h>

#include <algorithm>

#include <csignal>

using namespace astro_test;

namespace {

std::atomic<int> g_runs{0};

void count_func(void **, void *)
{
	g_runs++;
}

// Runs n tasks and returns how many ran.
int run_tasks(int n)
{
	static starpu_codelet cl = cpu_codelet(count_func, 0, "count");
	int before = g_runs;
	for (int i = 0; i < n; i++)
		if (submit_detached(&cl) != 0)
			return -1;
	if (starpu_task_wait_for_all() != 0)
		return -1;
	return g_runs - before;
}

class Plugins : public ::testing::Test
{
protected:
	void SetUp() override
	{
		g_runs = 0;
		ASSERT_FALSE(test_plugin_dir().empty()) << "ASTRO_TEST_PLUGIN_DIR is not set: run through make check";
		ASSERT_FALSE(build_plugin_path().empty()) << "STARPU_PLUGIN_PATH is not set: run through make check";
	}
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
	}

	// starpu_init() with the build-tree plugins followed by extra_dirs; stderr goes to *err.
	int start(const std::vector<std::string> &extra_dirs, std::string *err, int ncpus = 1)
	{
		std::string path = base_path_;
		for (const std::string &d : extra_dirs)
			path += ":" + d;
		ScopedEnv plugin_path("STARPU_PLUGIN_PATH", path);
		int ret = -1;
		*err = stderr_of([&] { ret = init_with_ncpus(ncpus); });
		return ret;
	}
	// The runtime started with its usual plugins: CPU workers and the default policy.
	void expect_working_runtime(int ncpus = 1)
	{
		EXPECT_EQ(starpu_is_initialized(), 1);
		EXPECT_EQ(starpu_cpu_worker_get_count(), (unsigned)ncpus);
		EXPECT_EQ(run_tasks(10), 10);
	}

	std::string base_path_ = build_plugin_path();
	ScopedEnv builtin_{"ASTROLABE_PLUGIN_DIR", ""};
	ScopedEnv sched_{"STARPU_SCHED", nullptr};
	ScopedEnv sched_lib_{"STARPU_SCHED_LIB", nullptr};
	ScopedEnv verbose_{"STARPU_PLUGIN_VERBOSE", nullptr};
	ScopedEnv silent_{"STARPU_SILENT", nullptr};
	ScopedEnv ncpu_{"STARPU_NCPU", nullptr};
};

// Before starpu_init(), as in StarPU, the list of policies is there: the policy
// plugins' own (loaded once and set aside), the very ones init registers, so that
// conf.sched_policy may be set to one; quietly, and still there after shutdown.
TEST_F(Plugins, PredefinedPoliciesAreListedBeforeInit)
{
	ASSERT_FALSE(starpu_is_initialized());
	std::vector<starpu_sched_policy *> before;
	std::string err = stderr_of([&] {
		for (starpu_sched_policy **p = starpu_sched_get_predefined_policies(); p && *p; p++)
			before.push_back(*p);
	});
	EXPECT_EQ(err, "");
	ASSERT_FALSE(before.empty()) << "no policy listed before starpu_init";
	starpu_sched_policy *eager = nullptr;
	for (starpu_sched_policy *p : before) {
		ASSERT_NE(p->policy_name, nullptr);
		if (std::string(p->policy_name) == "eager")
			eager = p;
	}
	ASSERT_NE(eager, nullptr) << "eager is not listed";
	EXPECT_NE(eager->push_task, nullptr);

	starpu_conf conf = conf_with_ncpus(1);
	conf.sched_policy = eager;
	ASSERT_EQ(starpu_init(&conf), 0);
	EXPECT_EQ(policy_name(), "eager");
	EXPECT_EQ(run_tasks(10), 10);
	for (starpu_sched_policy *p : before)
		EXPECT_TRUE(policy_registered(p->policy_name)) << p->policy_name << " listed before init, not after";
	starpu_shutdown();
	starpu_sched_policy **after = starpu_sched_get_predefined_policies();
	ASSERT_NE(after[0], nullptr);
	EXPECT_EQ(after[0], before[0]);
}

TEST_F(Plugins, WrongAbi)
{
	TempDir dir;
	ASSERT_TRUE(dir.link_test_plugin("sched_wrong_abi.so"));
	std::string err;
	ASSERT_EQ(start({ dir.path() }, &err), 0) << err;
	EXPECT_TRUE(contains(err, "ABI")) << err;
	EXPECT_TRUE(contains(err, "999")) << err;
	EXPECT_TRUE(contains(err, dir.file("sched_wrong_abi.so"))) << err;
	EXPECT_FALSE(policy_registered("wrong_abi"));
	EXPECT_EQ(policy_name(), "lws");
	expect_working_runtime();
}

// The ABI version is bumped on any incompatible change: a plugin built for an
// older ABI is refused like one from a newer ABI, before its init runs.
TEST_F(Plugins, OlderAbiIsRefusedToo)
{
	static_assert(ASTRO_PLUGIN_ABI_VERSION >= 1, "sched_old_abi is built for ASTRO_PLUGIN_ABI_VERSION - 1");
	TempDir dir;
	ASSERT_TRUE(dir.link_test_plugin("sched_old_abi.so"));
	std::string err;
	ASSERT_EQ(start({ dir.path() }, &err), 0) << err;
	EXPECT_TRUE(contains(err, "ABI " + std::to_string(ASTRO_PLUGIN_ABI_VERSION - 1))) << err;
	EXPECT_TRUE(contains(err, "ABI " + std::to_string(ASTRO_PLUGIN_ABI_VERSION))) << err;
	EXPECT_TRUE(contains(err, "rebuild")) << err;
	EXPECT_TRUE(contains(err, dir.file("sched_old_abi.so"))) << err;
	EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
	EXPECT_FALSE(policy_registered("old_abi"));
	EXPECT_EQ(policy_name(), "lws");
	expect_working_runtime();
}

// Asked for by name, a policy refused for its ABI falls back to the default.
TEST_F(Plugins, PolicyOfAnOtherAbiIsNotSelectable)
{
	for (const char *file : { "sched_old_abi", "sched_wrong_abi" }) {
		SCOPED_TRACE(file);
		TempDir dir;
		ASSERT_TRUE(dir.link_test_plugin(std::string(file) + ".so"));
		ScopedEnv sched("STARPU_SCHED", std::string(file).substr(strlen("sched_")));
		std::string err;
		ASSERT_EQ(start({ dir.path() }, &err), 0) << err;
		EXPECT_TRUE(contains(err, "ABI")) << err;
		EXPECT_NE(policy_name(), std::string(file).substr(strlen("sched_")));
		expect_working_runtime();
		starpu_shutdown();
	}
}

TEST_F(Plugins, MissingDescriptor)
{
	TempDir dir;
	ASSERT_TRUE(dir.link_test_plugin("tool_no_descriptor.so"));
	std::string err;
	ASSERT_EQ(start({ dir.path() }, &err), 0) << err;
	EXPECT_TRUE(contains(err, "is not an Astrolabe plugin")) << err;
	EXPECT_TRUE(contains(err, "astrolabe_plugin_tool_no_descriptor")) << err;
	EXPECT_TRUE(contains(err, dir.file("tool_no_descriptor.so"))) << err;
	expect_working_runtime();
}

TEST_F(Plugins, Misnamed)
{
	TempDir dir;
	ASSERT_TRUE(dir.link_test_plugin("sched_misnamed.so"));
	std::string err;
	ASSERT_EQ(start({ dir.path() }, &err), 0) << err;
	EXPECT_TRUE(contains(err, "sched_other")) << err;
	EXPECT_TRUE(contains(err, "sched_misnamed")) << err;
	EXPECT_FALSE(policy_registered("misnamed"));
	expect_working_runtime();
}

TEST_F(Plugins, UnresolvedSymbol)
{
	TempDir dir;
	ASSERT_TRUE(dir.link_test_plugin("sched_unresolved.so"));
	std::string err;
	ASSERT_EQ(start({ dir.path() }, &err), 0) << err;
	EXPECT_TRUE(contains(err, "undefined symbol")) << err;
	EXPECT_TRUE(contains(err, "astro_test_function_nobody_defines")) << err;
	EXPECT_TRUE(contains(err, dir.file("sched_unresolved.so"))) << err;
	expect_working_runtime();
}

TEST_F(Plugins, DecliningPluginIsQuiet)
{
	TempDir dir;
	ASSERT_TRUE(dir.link_test_plugin("sched_declines.so"));
	std::string err;
	ASSERT_EQ(start({ dir.path() }, &err), 0) << err;
	EXPECT_EQ(err, "");
	EXPECT_FALSE(policy_registered("declines"));
	expect_working_runtime();
}

TEST_F(Plugins, DeclinedPolicyFallsBackWithWarning)
{
	TempDir dir;
	ASSERT_TRUE(dir.link_test_plugin("sched_declines.so"));
	ScopedEnv sched("STARPU_SCHED", "declines");
	std::string err;
	ASSERT_EQ(start({ dir.path() }, &err), 0) << err;
	EXPECT_TRUE(contains(err, "warning")) << err;
	EXPECT_TRUE(contains(err, "'declines'")) << err;
	EXPECT_FALSE(contains(err, "error")) << err;
	EXPECT_EQ(policy_name(), "lws");
	expect_working_runtime();
}

TEST_F(Plugins, DecliningPluginShownWhenVerbose)
{
	TempDir dir;
	ASSERT_TRUE(dir.link_test_plugin("sched_declines.so"));
	ScopedEnv verbose("STARPU_PLUGIN_VERBOSE", "1");
	std::string err;
	ASSERT_EQ(start({ dir.path() }, &err), 0) << err;
	EXPECT_TRUE(contains(err, "sched_declines")) << err;
	EXPECT_TRUE(contains(err, "not available here")) << err;
	EXPECT_FALSE(contains(err, "error")) << err;
}

TEST_F(Plugins, FileThatIsNotALibrary)
{
	TempDir dir;
	ASSERT_TRUE(dir.write("junk.so", "hello\n"));
	std::string err;
	ASSERT_EQ(start({ dir.path() }, &err), 0) << err;
	EXPECT_TRUE(contains(err, "cannot load plugin")) << err;
	EXPECT_TRUE(contains(err, dir.file("junk.so"))) << err;
	// The system loader's reason, not libltdl's catch-all for a file that exists.
	EXPECT_FALSE(contains(err, "file not found")) << err;
	expect_working_runtime();
}

TEST_F(Plugins, FoundTwice)
{
	TempDir one, two;
	ASSERT_TRUE(one.link_test_plugin("sched_testfifo.so"));
	ASSERT_TRUE(two.link_test_plugin("sched_testfifo.so"));
	ScopedEnv sched("STARPU_SCHED", "testfifo");
	std::string err;
	ASSERT_EQ(start({ one.path(), two.path() }, &err), 0) << err;
	EXPECT_TRUE(contains(err, "found twice")) << err;
	EXPECT_TRUE(contains(err, one.file("sched_testfifo.so"))) << err;
	EXPECT_TRUE(contains(err, two.file("sched_testfifo.so"))) << err;
	EXPECT_FALSE(contains(err, "registered twice")) << err;
	EXPECT_EQ(policy_name(), "testfifo");
	expect_working_runtime();
	err = stderr_of([] { starpu_shutdown(); });
	EXPECT_EQ(err, "testfifo: 10 tasks\n");
}

TEST_F(Plugins, OutOfTreeScheduler)
{
	TempDir dir;
	ASSERT_TRUE(dir.link_test_plugin("sched_testfifo.so"));
	ScopedEnv sched("STARPU_SCHED", "testfifo");
	std::string err;
	ASSERT_EQ(start({ dir.path() }, &err, 2), 0) << err;
	EXPECT_FALSE(contains(err, "testfifo' was not found")) << err;
	ASSERT_EQ(policy_name(), "testfifo");
	EXPECT_EQ(run_tasks(25), 25);
	// Tasks pinned to a worker bypass the policy: not counted.
	starpu_task task;
	starpu_task_init(&task);
	static starpu_codelet cl = cpu_codelet(count_func, 0, "pinned");
	task.cl = &cl;
	task.execute_on_a_specific_worker = 1;
	task.workerid = 1;
	task.synchronous = 1;
	ASSERT_EQ(starpu_task_submit(&task), 0);
	starpu_task_clean(&task);
	err = stderr_of([] { starpu_shutdown(); });
	EXPECT_TRUE(contains(err, "testfifo: 25 tasks\n")) << err;
	EXPECT_EQ(g_runs, 26);
}

TEST_F(Plugins, SchedLib)
{
	std::string lib = test_plugin("schedlib_test.so");
	ASSERT_TRUE(file_exists(lib)) << lib;
	ScopedEnv sched_lib("STARPU_SCHED_LIB", lib);
	ScopedEnv sched("STARPU_SCHED", "libfifo");
	std::string err;
	ASSERT_EQ(start({}, &err, 2), 0) << err;
	EXPECT_EQ(err, "");
	ASSERT_NE(starpu_sched_get_sched_policy(), nullptr);
	EXPECT_STREQ(starpu_sched_get_sched_policy()->policy_name, "libfifo");
	expect_working_runtime(2);
}

TEST_F(Plugins, SchedLibPoliciesAreListed)
{
	ScopedEnv sched_lib("STARPU_SCHED_LIB", test_plugin("schedlib_test.so"));
	ScopedEnv sched("STARPU_SCHED", "help");
	std::string err;
	ASSERT_EQ(start({}, &err), 0) << err;
	EXPECT_TRUE(contains(err, "libfifo")) << err;
	EXPECT_TRUE(contains(err, "lws")) << err;
	EXPECT_EQ(policy_name(), "lws");
}

TEST_F(Plugins, SchedLibMissing)
{
	const std::string missing = "/nonexistent/astro/libnothing.so";
	ScopedEnv sched_lib("STARPU_SCHED_LIB", missing);
	std::string err;
	ASSERT_EQ(start({}, &err), 0) << err;
	EXPECT_TRUE(contains(err, "STARPU_SCHED_LIB='" + missing + "' cannot be loaded: the file does not exist: fix the path")) << err;
	EXPECT_EQ(policy_name(), "lws");
	expect_working_runtime();
}

TEST_F(Plugins, SchedLibWithoutEntryPoint)
{
	std::string lib = test_plugin("tool_no_descriptor.so");
	ScopedEnv sched_lib("STARPU_SCHED_LIB", lib);
	std::string err;
	ASSERT_EQ(start({}, &err), 0) << err;
	EXPECT_TRUE(contains(err, "starpu_get_sched_lib_policy")) << err;
	EXPECT_TRUE(contains(err, lib)) << err;
	EXPECT_EQ(policy_name(), "lws");
	expect_working_runtime();
}

// What follows "(where it came from)" in the refusal of a policy without pop_task.
const char *const kNoPopRefusal = ") has no pop_task: a policy needs policy_name, push_task and pop_task; it is ignored";

TEST_F(Plugins, PolicyWithoutPopIsRefused)
{
	TempDir dir;
	ASSERT_TRUE(dir.link_test_plugin("sched_nopop.so"));
	ScopedEnv sched("STARPU_SCHED", "nopop");
	std::string err;
	ASSERT_EQ(start({ dir.path() }, &err), 0) << err;
	EXPECT_TRUE(contains(err, "scheduling policy 'nopop' (plugin sched_nopop, " + dir.file("sched_nopop.so") + kNoPopRefusal))
		<< err;
	// One line for the refusal: not a second one for the init that returned its error.
	EXPECT_FALSE(contains(err, "failed to initialise")) << err;
	EXPECT_TRUE(contains(err, "scheduling policy 'nopop' was not found")) << err;
	EXPECT_FALSE(policy_registered("nopop"));
	EXPECT_EQ(policy_name(), "lws");
	expect_working_runtime();
}

// A STARPU_SCHED_LIB policy goes through the same check, with the same message.
TEST_F(Plugins, SchedLibPolicyWithoutPopIsRefused)
{
	std::string lib = test_plugin("schedlib_bad.so");
	ScopedEnv sched_lib("STARPU_SCHED_LIB", lib);
	ScopedEnv sched("STARPU_SCHED", "libnopop");
	std::string err;
	ASSERT_EQ(start({}, &err), 0) << err;
	EXPECT_TRUE(contains(err, "scheduling policy 'libnopop' (STARPU_SCHED_LIB=" + lib + kNoPopRefusal)) << err;
	EXPECT_TRUE(contains(err, "scheduling policy 'libnopop' was not found")) << err;
	EXPECT_EQ(policy_name(), "lws");
	expect_working_runtime();
}

TEST_F(Plugins, SchedLibRefusedPolicyIsNotListed)
{
	ScopedEnv sched_lib("STARPU_SCHED_LIB", test_plugin("schedlib_bad.so"));
	ScopedEnv sched("STARPU_SCHED", "help");
	std::string err;
	ASSERT_EQ(start({}, &err), 0) << err;
	EXPECT_TRUE(contains(err, "\nlibcrash ")) << err;
	EXPECT_FALSE(contains(err, "\nlibnopop ")) << err;
	EXPECT_TRUE(contains(err, std::string("'libnopop' (STARPU_SCHED_LIB=") + test_plugin("schedlib_bad.so") + kNoPopRefusal)) << err;
}

TEST_F(Plugins, SchedLibThatIsNotALibrary)
{
	ScopedEnv sched_lib("STARPU_SCHED_LIB", "/etc/passwd");
	std::string err;
	ASSERT_EQ(start({}, &err), 0) << err;
	EXPECT_TRUE(contains(err, "STARPU_SCHED_LIB='/etc/passwd' cannot be loaded: it is not a shared library (no ELF header)"))
		<< err;
	EXPECT_FALSE(contains(err, "file not found")) << err;
	EXPECT_EQ(policy_name(), "lws");
	expect_working_runtime();
}

TEST_F(Plugins, SchedLibThatIsADirectory)
{
	TempDir dir;
	ScopedEnv sched_lib("STARPU_SCHED_LIB", dir.path());
	std::string err;
	ASSERT_EQ(start({}, &err), 0) << err;
	EXPECT_TRUE(contains(err, "'" + dir.path() + "' cannot be loaded: it is not a regular file")) << err;
	expect_working_runtime();
}

TEST_F(Plugins, SchedLibThatCannotBeRead)
{
	if (geteuid() == 0)
		GTEST_SKIP() << "root reads any file";
	TempDir dir;
	ASSERT_TRUE(dir.write("libsecret.so", "\177ELF"));
	ASSERT_EQ(chmod(dir.file("libsecret.so").c_str(), 0), 0);
	ScopedEnv sched_lib("STARPU_SCHED_LIB", dir.file("libsecret.so"));
	std::string err;
	ASSERT_EQ(start({}, &err), 0) << err;
	EXPECT_TRUE(contains(err, "cannot be loaded: it cannot be read (Permission denied): fix its permissions")) << err;
	expect_working_runtime();
}

TEST_F(Plugins, SchedLibThatIsAnObjectFile)
{
	// A relocatable ELF file: an ELF header, e_type ET_REL (1), little endian.
	TempDir dir;
	std::string header("\177ELF\2\1\1", 7);
	header.resize(16, '\0');
	header += std::string("\1\0", 2);
	header.resize(64, '\0');
	ASSERT_TRUE(dir.write("policy.o", header));
	ScopedEnv sched_lib("STARPU_SCHED_LIB", dir.file("policy.o"));
	std::string err;
	ASSERT_EQ(start({}, &err), 0) << err;
	EXPECT_TRUE(contains(err, "it is an ELF object file, not a shared library: link it with -shared")) << err;
	expect_working_runtime();
}

TEST_F(Plugins, PluginThatIsNotAnElfFile)
{
	TempDir dir;
	ASSERT_TRUE(dir.write("sched_text.so", "#!/bin/sh\n"));
	std::string err;
	ASSERT_EQ(start({ dir.path() }, &err), 0) << err;
	EXPECT_TRUE(contains(err, "cannot load plugin " + dir.file("sched_text.so") + ": it is not a shared library (no ELF header)"))
		<< err;
	expect_working_runtime();
}

// A crash inside a plugin or a policy names it (STARPU_CATCH_SIGNALS is on by default).
class PluginCrashes : public Plugins
{
protected:
	void SetUp() override
	{
		Plugins::SetUp();
		// Forked at the statement: the child uses the parent's temporary directory, which the parent removes.
		GTEST_FLAG_SET(death_test_style, "fast");
	}
	// starpu_init() with STARPU_PLUGIN_PATH as start() sets it, stderr left alone for the death test.
	static void init_with_dirs(const std::string &path)
	{
		setenv("STARPU_PLUGIN_PATH", path.c_str(), 1);
		if (init_with_ncpus(1) == 0)
			starpu_shutdown();
	}
	ScopedEnv catch_{"STARPU_CATCH_SIGNALS", nullptr};
};

TEST_F(PluginCrashes, InPluginInit)
{
	TempDir dir;
	ASSERT_TRUE(dir.link_test_plugin("sched_crash.so"));
	std::string path = base_path_ + ":" + dir.path();
	EXPECT_DEATH(init_with_dirs(path),
		     "\\[astrolabe\\] SIGSEGV while calling plugin sched_crash's init \\(" + dir.file("sched_crash.so") +
			     ", astrolabe_plugin_sched_crash\\): the plugin crashed; fix or remove it");
}

TEST_F(PluginCrashes, InPolicyInitSched)
{
	ScopedEnv sched_lib("STARPU_SCHED_LIB", test_plugin("schedlib_bad.so"));
	ScopedEnv sched("STARPU_SCHED", "libcrash");
	std::string path = base_path_;
	EXPECT_DEATH(init_with_dirs(path),
		     "\\[astrolabe\\] SIGSEGV while calling scheduling policy libcrash's init_sched \\(" +
			     test_plugin("schedlib_bad.so") + ", init_sched\\): the policy crashed; fix it or choose another one with STARPU_SCHED");
}

// Once the plugins' init returned, a crash is nobody's in particular.
TEST_F(PluginCrashes, AfterThePluginsReturned)
{
	// This child starts worker threads, which ThreadSanitizer refuses after a plain fork: re-executed instead (no temporary directory here).
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	std::string path = base_path_;
	EXPECT_DEATH(
		{
			setenv("STARPU_PLUGIN_PATH", path.c_str(), 1);
			if (init_with_ncpus(1) == 0)
				raise(SIGSEGV);
		},
		"\\[astrolabe\\] caught signal 11 \\(SIGSEGV\\): passing it on");
}

// ------------------------------------------- crashes on the task path

// A policy that crashes in the hook g_crash_in names, pushing to and popping from one list otherwise.
const char *g_crash_in = "";
starpu_task_list g_crash_queue;
starpu_pthread_mutex_t g_crash_lock = STARPU_PTHREAD_MUTEX_INITIALIZER;

void crash_if(const char *hook)
{
	if (strcmp(g_crash_in, hook) == 0)
		astro_test_crash();
}

int crash_push(struct starpu_task *task)
{
	crash_if("push_task");
	starpu_pthread_mutex_lock(&g_crash_lock);
	starpu_task_list_push_back(&g_crash_queue, task);
	starpu_pthread_mutex_unlock(&g_crash_lock);
	starpu_wake_worker_relax_light(0);
	return 0;
}

struct starpu_task *crash_pop(unsigned)
{
	starpu_pthread_mutex_lock(&g_crash_lock);
	struct starpu_task *task = starpu_task_list_empty(&g_crash_queue) ? nullptr : starpu_task_list_pop_front(&g_crash_queue);
	starpu_pthread_mutex_unlock(&g_crash_lock);
	if (task)
		crash_if("pop_task");
	return task;
}

void crash_pre_exec(struct starpu_task *, unsigned)
{
	crash_if("pre_exec_hook");
}

starpu_sched_policy crash_policy()
{
	starpu_sched_policy p;
	memset(&p, 0, sizeof(p));
	p.push_task = crash_push;
	p.pop_task = crash_pop;
	p.pre_exec_hook = crash_pre_exec;
	p.policy_name = "crashing";
	p.policy_description = "crashes in the hook g_crash_in names";
	return p;
}

void crash_task(void **, void *)
{
	crash_if("codelet");
}

// In the death-test child: the runtime with the crashing policy and one CPU worker; a task named "crasher" runs.
void run_crashing(const char *where)
{
	g_crash_in = where;
	starpu_task_list_init(&g_crash_queue);
	static starpu_sched_policy policy = crash_policy();
	starpu_conf conf = conf_with_ncpus(1);
	conf.sched_policy = &policy;
	if (starpu_init(&conf) != 0)
		_exit(3);
	static starpu_codelet cl = cpu_codelet(crash_task, 0, "crasher");
	struct starpu_task *task = starpu_task_create();
	task->cl = &cl;
	// The line the handler's must repeat the job of.
	fprintf(stderr, "plugins-test: job %lu\n", (unsigned long)starpu_task_get_job_id(task));
	fflush(stderr);
	int ret = starpu_task_submit(task);
	starpu_task_wait_for_all();
	_exit(4 + ret);
}

class TaskPathCrashes : public PluginCrashes
{
protected:
	// These children start worker threads: re-executed rather than forked.
	void SetUp() override
	{
		PluginCrashes::SetUp();
		GTEST_FLAG_SET(death_test_style, "threadsafe");
	}
};

TEST_F(TaskPathCrashes, InPolicyHooksTheyAreNamed)
{
	for (const char *hook : { "push_task", "pop_task", "pre_exec_hook" })
		EXPECT_DEATH(run_crashing(hook), std::string("\\[astrolabe\\] SIGSEGV while calling scheduling policy crashing's ") +
							  hook + " \\([^)]*\\): the policy crashed, not the runtime; fix it or "
								 "choose another one with STARPU_SCHED")
			<< hook;
}

// Matches a death test's stderr whose handler's line names the job the child printed before (run_crashing).
class NamesTheCrashingCodelet : public testing::MatcherInterface<const std::string &>
{
public:
	bool MatchAndExplain(const std::string &err, testing::MatchResultListener *listener) const override
	{
		unsigned long job = 0;
		size_t at = err.find("plugins-test: job ");
		if (at == std::string::npos || sscanf(err.c_str() + at, "plugins-test: job %lu", &job) != 1) {
			*listener << "the child printed no job";
			return false;
		}
		return contains(err, expected(std::to_string(job)));
	}
	void DescribeTo(std::ostream *os) const override { *os << "contains \"" << expected("<the job printed>") << "\""; }

private:
	static std::string expected(const std::string &job)
	{
		return "[astrolabe] caught signal 11 (SIGSEGV) in codelet 'crasher' (job " + job + ") on worker CPU 0: the codelet's code crashed, not the runtime";
	}
};

TEST_F(TaskPathCrashes, InACodeletItsTaskAndWorkerAreNamed)
{
	EXPECT_DEATH(run_crashing("codelet"), testing::Matcher<const std::string &>(new NamesTheCrashingCodelet));
}

void crash_init(void **, void *)
{
	astro_test_crash();
}

void redux_noop(void **, void *) {}

// In the death-test child: a STARPU_REDUX access whose handle's init codelet crashes.
void run_crashing_reduction_init()
{
	if (init_with_ncpus(1) != 0)
		_exit(3);
	static starpu_codelet init_cl = cpu_codelet(crash_init, 1, "crashing_init");
	static starpu_codelet redux_cl = cpu_codelet(redux_noop, 2, "sum");
	static starpu_codelet cl = cpu_codelet(redux_noop, 1, "accumulate");
	cl.modes[0] = STARPU_REDUX;
	init_cl.modes[0] = STARPU_W;
	redux_cl.modes[0] = STARPU_RW;
	redux_cl.modes[1] = STARPU_R;
	static int value;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&value, sizeof(value));
	starpu_data_set_name(h, "total");
	starpu_data_set_reduction_methods(h, &redux_cl, &init_cl);
	int ret = starpu_task_insert(&cl, STARPU_REDUX, h, 0);
	starpu_task_wait_for_all();
	_exit(4 + ret);
}

TEST_F(TaskPathCrashes, InAReductionsInitCodeletItIsNamed)
{
	EXPECT_DEATH(run_crashing_reduction_init(), "\\[astrolabe\\] SIGSEGV while calling the init codelet 'crashing_init' of "
						    "STARPU_REDUX handle total on worker CPU 0 \\([^)]*\\): the codelet's code "
						    "crashed, not the runtime");
}

TEST_F(Plugins, NonexistentPluginDirectory)
{
	const std::string missing = "/nonexistent/astro-plugin-dir";
	std::string err;
	ASSERT_EQ(start({ missing }, &err), 0) << err;
	EXPECT_TRUE(contains(err, "warning")) << err;
	EXPECT_TRUE(contains(err, missing)) << err;
	expect_working_runtime();
}

TEST_F(Plugins, VerboseListsLoadedPlugins)
{
	ScopedEnv verbose("STARPU_PLUGIN_VERBOSE", "1");
	std::string err;
	ASSERT_EQ(start({}, &err), 0) << err;
	EXPECT_TRUE(contains(err, "driver_cpu")) << err;
	EXPECT_TRUE(contains(err, "sched_lws")) << err;
	EXPECT_TRUE(contains(err, "scheduling policy: lws")) << err;
	expect_working_runtime();
}

TEST_F(Plugins, QuietByDefault)
{
	std::string err;
	ASSERT_EQ(start({}, &err), 0) << err;
	EXPECT_EQ(err, "");
}

// Plugins linked into libastrolabe (--enable-static-plugins) are there whatever the path says.
#define SKIP_IF_STATIC_PLUGINS(ret, err) \
	do { \
		if ((ret) == 0 && contains((err), "(built in)")) { \
			starpu_shutdown(); \
			GTEST_SKIP() << "the plugins are linked into libastrolabe"; \
		} \
	} while (0)

TEST_F(Plugins, NoPluginAtAll)
{
	base_path_.clear(); // STARPU_PLUGIN_PATH="" and no built-in directory
	ScopedEnv verbose("STARPU_PLUGIN_VERBOSE", "1");
	std::string err;
	int ret = start({}, &err);
	SKIP_IF_STATIC_PLUGINS(ret, err);
	EXPECT_EQ(ret, -ENODEV);
	EXPECT_EQ(starpu_is_initialized(), 0);
	EXPECT_TRUE(contains(err, "no scheduling policy")) << err;
	EXPECT_TRUE(contains(err, "STARPU_PLUGIN_VERBOSE")) << err;
}

TEST_F(Plugins, StartsAgainAfterAFailedStart)
{
	std::string base = base_path_;
	base_path_.clear();
	std::string err;
	{
		ScopedEnv verbose("STARPU_PLUGIN_VERBOSE", "1");
		int ret = start({}, &err);
		SKIP_IF_STATIC_PLUGINS(ret, err);
		EXPECT_EQ(ret, -ENODEV);
	}
	base_path_ = base;
	ASSERT_EQ(start({}, &err), 0) << err;
	EXPECT_EQ(policy_name(), "lws");
	expect_working_runtime();
}

} // namespace
