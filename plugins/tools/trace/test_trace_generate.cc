// SPDX-License-Identifier: LGPL-2.1-or-later
// starpu_fxt_generate_trace() and its options (starpu_fxt.h, issue 40): a
// program converts the trace a run left as starpu_fxt_tool does.
#include "helpers.h"
#include <starpu_fxt.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

using namespace astro_test;

namespace {

void noop_task(void **, void *) {}

// PATH with the folder of the starpu_fxt_tool the suite runs first, for the life of the object.
class ToolInPath
{
public:
	ToolInPath()
	{
		std::string tool = env_or("ASTRO_TRACE_TOOL", "./starpu_fxt_tool");
		std::string dir = tool.substr(0, tool.rfind('/'));
		path_.reset(new ScopedEnv("PATH", dir + ":" + env_or("PATH", "/usr/bin:/bin")));
	}

private:
	std::unique_ptr<ScopedEnv> path_;
};

TEST(FxtOptions, InitGivesStarPUsDefaults)
{
	struct starpu_fxt_options o;
	memset(&o, 0xff, sizeof(o));
	starpu_fxt_options_init(&o);
	EXPECT_EQ(o.ninputfiles, 0u);
	EXPECT_EQ(o.no_events, 0u);
	EXPECT_EQ(o.dir, nullptr);
	EXPECT_STREQ(o.out_paje_path, "paje.trace");
	EXPECT_STREQ(o.dag_path, "dag.dot");
	EXPECT_STREQ(o.tasks_path, "tasks.rec");
	EXPECT_EQ(o.dumped_codelets, nullptr);
	starpu_fxt_options_shutdown(&o);
	std::string err = stderr_of([] { starpu_fxt_options_init(nullptr); });
	EXPECT_TRUE(contains(err, "starpu_fxt_options_init: NULL options")) << err;
}

TEST(FxtOptions, IsEnabledFollowsTheVariable)
{
	{
		ScopedEnv trace("STARPU_FXT_TRACE", "1");
		EXPECT_EQ(starpu_fxt_is_enabled(), 1);
	}
	ScopedEnv trace("STARPU_FXT_TRACE", nullptr);
	EXPECT_EQ(starpu_fxt_is_enabled(), 0);
}

TEST(FxtGenerate, ConvertsTheArchiveARunLeft)
{
	TempDir dir;
	{
		ScopedEnv trace("STARPU_FXT_TRACE", "1");
		ScopedEnv prefix("STARPU_FXT_PREFIX", dir.path());
		Runtime rt(1);
		ASSERT_TRUE(rt.ok());
		static starpu_codelet cl = cpu_codelet(noop_task, 0, "noop_task");
		for (int i = 0; i < 3; i++)
			ASSERT_EQ(submit_detached(&cl), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
	}
	ToolInPath path;
	std::string archive = dir.path() + "/prof_file_" + env_or("USER", "") + "_0", out = dir.path() + "/out";
	struct starpu_fxt_options o;
	starpu_fxt_options_init(&o);
	o.ninputfiles = 1;
	o.filenames[0] = (char *)archive.c_str();
	o.dir = (char *)out.c_str();
	o.no_events = 1;
	std::string err = stderr_of([&] { starpu_fxt_generate_trace(&o); });
	starpu_fxt_options_shutdown(&o);
	EXPECT_TRUE(file_exists(out + "/paje.trace")) << err;
	EXPECT_TRUE(file_exists(out + "/tasks.rec")) << err;
	EXPECT_TRUE(contains(read_file(out + "/tasks.rec"), "noop_task")) << err;
	EXPECT_FALSE(contains(err, "starpu_fxt_generate_trace")) << err;
	std::string ignored;
	run_command("rm -rf '" + dir.path() + "'/*", &ignored); // the archive and the output are trees
}

TEST(FxtGenerate, BadInputIsSaid)
{
	struct starpu_fxt_options o;
	starpu_fxt_options_init(&o);
	std::string err = stderr_of([&] { starpu_fxt_generate_trace(&o); });
	EXPECT_TRUE(contains(err, "starpu_fxt_generate_trace: no trace given")) << err;
	ToolInPath path;
	TempDir dir;
	std::string missing = dir.path() + "/no-such-trace";
	o.ninputfiles = 1;
	o.filenames[0] = (char *)missing.c_str();
	o.dir = (char *)dir.path().c_str();
	err = stderr_of([&] { starpu_fxt_generate_trace(&o); });
	EXPECT_TRUE(contains(err, "starpu_fxt_generate_trace: starpu_fxt_tool failed converting")) << err;
	ScopedEnv nopath("PATH", dir.path());
	err = stderr_of([&] { starpu_fxt_generate_trace(&o); });
	EXPECT_TRUE(contains(err, "starpu_fxt_tool cannot be run")) << err;
}

} // namespace
