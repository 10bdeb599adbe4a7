// What a user reads before writing a line: the table of environment variables
// (README.md, checked against the variables the sources read) and the API
// reference's warning check (doc/check-warnings).
#include "helpers.h"

using namespace astro_test;

namespace {

std::string top_srcdir()
{
	return env_or("ASTRO_TEST_SRCDIR", "..") + "/..";
}

std::string sh_quoted(const std::string &s)
{
	return "'" + s + "'";
}

// A temporary folder removed with what it holds.
struct ScratchDir {
	TempDir dir;
	~ScratchDir() { (void)!system(("rm -rf " + sh_quoted(dir.path()) + "/*").c_str()); }
	const std::string &path() const { return dir.path(); }
};

int run_environment(const std::string &args, std::string *out)
{
	return run_command("python3 " + sh_quoted(top_srcdir() + "/doc/environment") + " " + args + " 2>&1", out);
}

} // namespace

// ------------------------------------------------------- environment table

TEST(EnvironmentTable, EveryVariableTheSourcesReadIsInTheReadme)
{
	std::string out;
	EXPECT_EQ(run_environment("check " + sh_quoted(top_srcdir() + "/README.md") + " " + sh_quoted(top_srcdir()), &out), 0) << out;
	EXPECT_TRUE(contains(out, "0 missing, 0 stale")) << out;
}

TEST(EnvironmentTable, AVariableMissingFromTheTableFailsTheCheck)
{
	ScratchDir tmp;
	std::string readme = read_file(top_srcdir() + "/README.md"), kept;
	ASSERT_TRUE(contains(readme, "| `STARPU_SCHED` |"));
	for (const std::string &line : lines_of(readme))
		if (line.rfind("| `STARPU_SCHED` |", 0) != 0)
			kept += line + "\n";
	ASSERT_TRUE(tmp.dir.write("README.md", kept));
	std::string out;
	EXPECT_EQ(run_environment("check " + sh_quoted(tmp.dir.file("README.md")) + " " + sh_quoted(top_srcdir()), &out), 1) << out;
	EXPECT_TRUE(contains(out, "kernel/sched.c:")) << "names where the variable is read: " << out;
	EXPECT_TRUE(contains(out, "STARPU_SCHED is read but missing")) << out;
}

TEST(EnvironmentTable, AVariableNoSourceReadsFailsTheCheck)
{
	ScratchDir tmp;
	std::string readme = read_file(top_srcdir() + "/README.md");
	size_t row = readme.find("| `STARPU_SCHED` |");
	ASSERT_NE(row, std::string::npos);
	readme.insert(row, "| `STARPU_NO_SUCH_VARIABLE` | read by nobody |\n");
	ASSERT_TRUE(tmp.dir.write("README.md", readme));
	std::string out;
	EXPECT_EQ(run_environment("check " + sh_quoted(tmp.dir.file("README.md")) + " " + sh_quoted(top_srcdir()), &out), 1) << out;
	EXPECT_TRUE(contains(out, "STARPU_NO_SUCH_VARIABLE is in the table")) << out;
}

TEST(EnvironmentTable, TheHandbookPageHasEveryRow)
{
	std::string page, readme = read_file(top_srcdir() + "/README.md");
	ASSERT_EQ(run_environment("table " + sh_quoted(top_srcdir() + "/README.md"), &page), 0) << page;
	EXPECT_EQ(page.rfind("# Environment variables {#environment}", 0), 0u) << page.substr(0, 200);
	size_t start = readme.find("\n## Environment variables\n");
	ASSERT_NE(start, std::string::npos);
	std::string section = readme.substr(start + 1, readme.find("\n## ", start + 1) - start);
	unsigned rows = 0;
	for (const std::string &line : lines_of(section))
		if (line.rfind("| `", 0) == 0) {
			EXPECT_TRUE(contains(page, line)) << line;
			rows++;
		}
	EXPECT_GT(rows, 40u);
	EXPECT_FALSE(contains(page, "## Writing a scheduling policy")) << "only the section's text";
}

// -------------------------------------------------------- reference check

TEST(ReferenceWarnings, AnUndocumentedFunctionFailsAFieldDoesNot)
{
	ScratchDir tmp;
	std::string check = "sh " + sh_quoted(top_srcdir() + "/doc/check-warnings") + " ";
	ASSERT_TRUE(tmp.dir.write("fields.log",
				  "/x/include/starpu_task.h:70: warning: Member nx (variable) of struct s is not documented.\n"
				  "/x/include/starpu_task.h:71: warning: Member STARPU_X (macro definition) of file starpu_task.h is not documented.\n"));
	std::string out;
	EXPECT_EQ(run_command(check + sh_quoted(tmp.dir.file("fields.log")) + " 2>&1", &out), 0) << out;
	EXPECT_TRUE(contains(out, "every public function documented; 2 other members")) << out;
	EXPECT_EQ(read_file(tmp.dir.file("undocumented.log")).size(), read_file(tmp.dir.file("fields.log")).size());

	ASSERT_TRUE(tmp.dir.write("function.log",
				  "/x/include/starpu_task.h:72: warning: Member starpu_x(void) (function) of file starpu_task.h is not documented.\n"));
	out.clear();
	EXPECT_EQ(run_command(check + sh_quoted(tmp.dir.file("function.log")) + " 2>&1", &out), 1) << out;
	EXPECT_TRUE(contains(out, "starpu_x(void)")) << "names the function: " << out;

	ASSERT_TRUE(tmp.dir.write("tag.log", "/x/include/astrolabe/sched.h:532: warning: Unsupported xml/html tag <policy> found\n"));
	out.clear();
	EXPECT_EQ(run_command(check + sh_quoted(tmp.dir.file("tag.log")) + " 2>&1", &out), 1) << out;

	out.clear();
	EXPECT_EQ(run_command(check + sh_quoted(tmp.dir.file("absent.log")) + " 2>&1", &out), 2) << out;
	EXPECT_TRUE(contains(out, "make doc")) << out;
}

