// SPDX-License-Identifier: LGPL-2.1-or-later
// What a user reads before writing a line: the table of environment variables
// (doc/environment.md, checked against the variables the sources read), the
// README's length and the handbook's links, in the sources and as installed,
// the API reference's warning check (doc/check-warnings), and every installed
// program's --help and manual page.
#include "helpers.h"

#include <sstream>
#include <unistd.h>

using namespace astro_test;

namespace {

std::string top_srcdir()
{
	return env_or("ASTRO_TEST_SRCDIR", "..") + "/..";
}

// The top of the build tree: the parent of tools/ (make check sets ASTRO_TEST_TOOLS_DIR).
std::string top_builddir()
{
	std::string tools = env_or("ASTRO_TEST_TOOLS_DIR", "");
	return tools.empty() ? "" : tools + "/..";
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

// The programs a build folder installs, from its Makefile (build-aux/help2man.am).
std::vector<std::string> installed_programs(const std::string &dir)
{
	std::string out;
	// MAKEFLAGS of the make running the tests would point at its job server.
	int rc = run_command("env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C " + sh_quoted(dir) + " installed-programs", &out);
	EXPECT_EQ(rc, 0) << dir << ": " << out;
	std::vector<std::string> programs;
	std::istringstream words(out);
	for (std::string w; words >> w;)
		programs.push_back(w);
	return programs;
}

// Runs program p of the build folder dir with args (stderr with stdout into *out); its exit status.
// The trace tools' module is installed only at make install: here, from the sources.
int run_program(const std::string &dir, const std::string &p, const std::string &args, std::string *out)
{
	return run_command("cd " + sh_quoted(dir) + " && PYTHONPATH=" + sh_quoted(top_srcdir() + "/tools") + " timeout 60 ./" + p + " " + args + " 2>&1",
			   out);
}

// The folders whose Makefile installs programs (starpu_fxt_tool, when the trace plugin is built, is one of tools/).
std::vector<std::string> program_dirs()
{
	return { top_builddir() + "/tools" };
}

} // namespace

// ------------------------------------------------------- environment table

TEST(EnvironmentTable, EveryVariableTheSourcesReadIsInTheTable)
{
	std::string out;
	EXPECT_EQ(run_environment("check " + sh_quoted(top_srcdir() + "/doc/environment.md") + " " + sh_quoted(top_srcdir()), &out), 0) << out;
	EXPECT_TRUE(contains(out, "0 missing, 0 stale")) << out;
}

TEST(EnvironmentTable, AVariableMissingFromTheTableFailsTheCheck)
{
	ScratchDir tmp;
	std::string page = read_file(top_srcdir() + "/doc/environment.md"), kept;
	ASSERT_TRUE(contains(page, "| `STARPU_SCHED` |"));
	for (const std::string &line : lines_of(page))
		if (line.rfind("| `STARPU_SCHED` |", 0) != 0)
			kept += line + "\n";
	ASSERT_TRUE(tmp.dir.write("environment.md", kept));
	std::string out;
	EXPECT_EQ(run_environment("check " + sh_quoted(tmp.dir.file("environment.md")) + " " + sh_quoted(top_srcdir()), &out), 1) << out;
	EXPECT_TRUE(contains(out, "kernel/sched/policies.c:")) << "names where the variable is read: " << out;
	EXPECT_TRUE(contains(out, "STARPU_SCHED is read but missing")) << out;
}

TEST(EnvironmentTable, AVariableNoSourceReadsFailsTheCheck)
{
	ScratchDir tmp;
	std::string page = read_file(top_srcdir() + "/doc/environment.md");
	size_t row = page.find("| `STARPU_SCHED` |");
	ASSERT_NE(row, std::string::npos);
	page.insert(row, "| `STARPU_NO_SUCH_VARIABLE` | read by nobody |\n");
	ASSERT_TRUE(tmp.dir.write("environment.md", page));
	std::string out;
	EXPECT_EQ(run_environment("check " + sh_quoted(tmp.dir.file("environment.md")) + " " + sh_quoted(top_srcdir()), &out), 1) << out;
	EXPECT_TRUE(contains(out, "STARPU_NO_SUCH_VARIABLE is in the table")) << out;
}

TEST(EnvironmentTable, APageWithoutTheTableIsSaid)
{
	ScratchDir tmp;
	ASSERT_TRUE(tmp.dir.write("environment.md", "# Something else {#other}\n\n| `STARPU_SCHED` | x |\n"));
	std::string out;
	EXPECT_NE(run_environment("check " + sh_quoted(tmp.dir.file("environment.md")) + " " + sh_quoted(top_srcdir()), &out), 0) << out;
	EXPECT_TRUE(contains(out, "no table under a heading \"Environment variables\"")) << out;
}

// ------------------------------------------------------ README and handbook

namespace {

// The targets of the Markdown links and images of a page ([text](target),
// ![alt](target)) outside its code blocks and code spans, without their
// #fragment; web addresses and in-page anchors left out.
std::vector<std::string> local_links(const std::string &page)
{
	std::vector<std::string> targets;
	bool fenced = false;
	for (const std::string &line : lines_of(page)) {
		if (line.rfind("```", 0) == 0) {
			fenced = !fenced;
			continue;
		}
		if (fenced)
			continue;
		bool code = false;
		for (size_t i = 0; i + 1 < line.size(); i++) {
			if (line[i] == '`')
				code = !code;
			if (code || line[i] != ']' || line[i + 1] != '(')
				continue;
			size_t end = line.find(')', i + 2);
			if (end == std::string::npos)
				break;
			std::string target = line.substr(i + 2, end - i - 2);
			target = target.substr(0, target.find('#'));
			if (!target.empty() && target.find("://") == std::string::npos && target.rfind("mailto:", 0) != 0)
				targets.push_back(target);
		}
	}
	return targets;
}

// The links of the page at dir/name that lead to no file: "name: target" lines.
std::string broken_links(const std::string &dir, const std::string &name)
{
	std::string broken;
	for (const std::string &target : local_links(read_file(dir + "/" + name)))
		if (access((dir + "/" + target).c_str(), F_OK) != 0)
			broken += "  " + name + ": " + target + "\n";
	return broken;
}

// The handbook's pages in the source folder doc/.
std::vector<std::string> handbook_pages()
{
	std::string out;
	run_command("cd " + sh_quoted(top_srcdir() + "/doc") + " && ls *.md", &out);
	return lines_of(out);
}

} // namespace

// Issue 38: the README was 1,341 lines, the reference of every feature; it
// says what Astrolabe is, how to build it and where to read on.
TEST(Readme, IsAReadmeUnder250Lines)
{
	std::string readme = read_file(top_srcdir() + "/README.md");
	size_t n = lines_of(readme).size();
	EXPECT_GT(n, 20u);
	EXPECT_LT(n, 250u) << "README.md has " << n << " lines: move the reference into a page of the handbook (doc/)";
	EXPECT_TRUE(contains(readme, "./build.sh demo")) << "the Quick start's commands";
	EXPECT_TRUE(contains(readme, "./build.sh test")) << "the Quick start's commands";
	EXPECT_TRUE(contains(readme, "](doc/index.md)")) << "where to read on";
}

TEST(Handbook, EveryLinkOfTheReadmeAndThePagesLeadsToAFile)
{
	std::string broken = broken_links(top_srcdir(), "README.md");
	std::vector<std::string> pages = handbook_pages();
	EXPECT_GT(pages.size(), 20u);
	for (const std::string &page : pages)
		if (!page.empty())
			broken += broken_links(top_srcdir() + "/doc", page);
	EXPECT_TRUE(broken.empty()) << "links to no file:\n" << broken;
}

TEST(Handbook, ALinkToNoFileIsFound)
{
	ScratchDir tmp;
	ASSERT_TRUE(tmp.dir.write("there.md", "x\n"));
	ASSERT_TRUE(tmp.dir.write("page.md", "See [there](there.md#part), [gone](gone.md), ![a picture](images/none.png),\n"
					     "[the web](https://example.org/x.md) and `a[i](j)`.\n```\nf[0](1);\n```\n"));
	EXPECT_EQ(broken_links(tmp.path(), "page.md"), "  page.md: gone.md\n  page.md: images/none.png\n");
}

// make install puts every page (and picture) the index leads to beside it, and
// every link of an installed page holds there (environment.md was made only by
// make doc, and never installed).
TEST(Handbook, TheInstallShipsEveryPageTheIndexLinksTo)
{
	if (top_builddir().empty())
		GTEST_SKIP() << "ASTRO_TEST_TOOLS_DIR is not set: run through make check";
	ScratchDir dest;
	std::string out;
	ASSERT_EQ(run_command("env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C " + sh_quoted(top_builddir() + "/doc") +
				      " install-data DESTDIR=" + sh_quoted(dest.path()) + " 2>&1", &out), 0) << out;
	std::string found;
	run_command("find " + sh_quoted(dest.path()) + " -name index.md", &found);
	ASSERT_EQ(lines_of(found).size(), 1u) << "one index.md installed: " << found;
	std::string docdir = lines_of(found)[0].substr(0, lines_of(found)[0].rfind('/'));
	std::vector<std::string> linked = local_links(read_file(docdir + "/index.md"));
	EXPECT_GT(linked.size(), 20u);
	std::string broken = broken_links(docdir, "index.md");
	for (const std::string &page : handbook_pages()) {
		if (page.empty())
			continue;
		EXPECT_EQ(access((docdir + "/" + page).c_str(), F_OK), 0) << page << " is not installed: add it to HANDBOOK in doc/Makefile.am";
		if (access((docdir + "/" + page).c_str(), F_OK) == 0)
			for (const std::string &target : local_links(read_file(docdir + "/" + page)))
				if (target.rfind("../", 0) != 0 && access((docdir + "/" + target).c_str(), F_OK) != 0)
					broken += "  " + page + ": " + target + "\n";
	}
	EXPECT_TRUE(broken.empty()) << "installed pages link to what the install lacks:\n" << broken;
}

// make doc reads every page with the headers; a warning on a page (Doxygen
// took sde:::STARPU:: for a link request) failed it, and the packages with it,
// where no test looked.
TEST(Handbook, MakeDocReadsEveryPageWithoutAWarning)
{
	if (top_builddir().empty())
		GTEST_SKIP() << "ASTRO_TEST_TOOLS_DIR is not set: run through make check";
	if (!have_program("doxygen"))
		GTEST_SKIP() << "doxygen is not installed: make doc cannot run (apt-get install doxygen, then configure again)";
	if (sanitizer_build())
		GTEST_SKIP() << "Doxygen reads the same pages in every build: the plain build runs it";
	std::string out;
	EXPECT_EQ(run_command("env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C " + sh_quoted(top_builddir() + "/doc") + " doc 2>&1", &out), 0)
		<< out;
	EXPECT_TRUE(contains(out, "every public function documented")) << out;
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

// ------------------------------------------------ programs and man pages

TEST(InstalledPrograms, EachAnswersHelpWithItsOptions)
{
	if (top_builddir().empty())
		GTEST_SKIP() << "ASTRO_TEST_TOOLS_DIR is not set: run through make check";
	unsigned n = 0;
	for (const std::string &dir : program_dirs())
		for (const std::string &p : installed_programs(dir)) {
			std::string out;
			EXPECT_EQ(run_program(dir, p, "--help", &out), 0) << p << ": " << out;
			EXPECT_FALSE(contains(out, "Traceback")) << p << ": " << out;
			EXPECT_TRUE(contains(out, p)) << p << ": the help names the program: " << out;
			EXPECT_TRUE(contains(out, "-h") || contains(out, "--help")) << p << ": the help lists its options: " << out;
			n++;
		}
	EXPECT_GE(n, 10u) << "the tools folder alone installs more programs";
}

// Issue 38: every program answers --version with one line naming it and the API it implements (atime ran a
// program named --version; others took it for an unknown option or an input file).
TEST(InstalledPrograms, EachAnswersVersionWithOneLine)
{
	if (top_builddir().empty())
		GTEST_SKIP() << "ASTRO_TEST_TOOLS_DIR is not set: run through make check";
	unsigned n = 0;
	for (const std::string &dir : program_dirs())
		for (const std::string &p : installed_programs(dir)) {
			std::string out;
			EXPECT_EQ(run_program(dir, p, "--version", &out), 0) << p << ": " << out;
			EXPECT_EQ(lines_of(out).size(), 1u) << p << ": " << out;
			EXPECT_TRUE(contains(out, p)) << p << ": the version names the program: " << out;
			EXPECT_TRUE(contains(out, "StarPU")) << p << ": the version names the StarPU API: " << out;
			n++;
		}
	EXPECT_GE(n, 10u) << "the tools folder alone installs more programs";
}

TEST(InstalledPrograms, EachHasAManualPageInstalledInMan1)
{
	if (top_builddir().empty())
		GTEST_SKIP() << "ASTRO_TEST_TOOLS_DIR is not set: run through make check";
	if (!have_program("help2man"))
		GTEST_SKIP() << "help2man is not installed: no manual page is made (install help2man and run configure again)";
	ScratchDir dest;
	for (const std::string &dir : program_dirs()) {
		std::string out;
		ASSERT_EQ(run_command("env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C " + sh_quoted(dir) +
					      " install-man DESTDIR=" + sh_quoted(dest.path()) + " 2>&1", &out), 0) << out;
		for (const std::string &p : installed_programs(dir)) {
			std::string found;
			run_command("find " + sh_quoted(dest.path()) + " -path '*/man1/" + p + ".1'", &found);
			ASSERT_FALSE(found.empty()) << p << ": no man1/" << p << ".1 installed";
			std::string page = read_file(lines_of(found)[0]);
			EXPECT_TRUE(contains(page, ".TH")) << p << ": not a manual page";
			EXPECT_FALSE(contains(page, "manual page for")) << p << ": give it a description in build-aux/man-names";
			EXPECT_TRUE(contains(page, ".SH \"SEE ALSO\"") && contains(page, ".BR ")) << p << ": no SEE ALSO naming related programs (build-aux/man-names)";
			EXPECT_FALSE(contains(page, "Traceback")) << p << ": the page was made from a failing --help";
			if (have_program("groff")) {
				std::string warnings;
				EXPECT_EQ(run_command("groff -man -Tutf8 -ww -z " + sh_quoted(lines_of(found)[0]) + " 2>&1", &warnings), 0);
				EXPECT_TRUE(warnings.empty()) << p << ": groff: " << warnings;
			}
		}
	}
}

// ------------------------------------------------------------ Spack recipe

namespace {

int check_recipe(const std::string &recipe, std::string *out)
{
	return run_command("python3 " + sh_quoted(top_srcdir() + "/packaging/spack/check-recipe") + " " + sh_quoted(recipe) + " " +
				   sh_quoted(top_srcdir() + "/configure") + " 2>&1",
			   out);
}

} // namespace

TEST(SpackRecipe, EveryVariantMapsToAConfigureOption)
{
	std::string out;
	EXPECT_EQ(check_recipe(top_srcdir() + "/packaging/spack/package.py", &out), 0) << out;
	EXPECT_TRUE(contains(out, "all found in configure --help")) << out;
}

TEST(SpackRecipe, AnOptionConfigureLacksOrAnUnmappedVariantFails)
{
	ScratchDir tmp;
	std::string recipe = read_file(top_srcdir() + "/packaging/spack/package.py");
	ASSERT_TRUE(contains(recipe, "\"--disable-plugin-trace\""));
	std::string wrong = recipe;
	wrong.replace(wrong.find("\"--disable-plugin-trace\""), 24, "\"--disable-plugin-tracer\"");
	ASSERT_TRUE(tmp.dir.write("wrong_option.py", wrong));
	std::string out;
	EXPECT_EQ(check_recipe(tmp.dir.file("wrong_option.py"), &out), 1) << out;
	EXPECT_TRUE(contains(out, "--disable-plugin-tracer is not an option of configure")) << out;

	std::string unmapped = recipe;
	size_t at = unmapped.find("    variant(\"doc\"");
	ASSERT_NE(at, std::string::npos);
	unmapped.insert(at, "    variant(\"hip\", default=False, description=\"HIP driver\")\n");
	ASSERT_TRUE(tmp.dir.write("unmapped.py", unmapped));
	out.clear();
	EXPECT_EQ(check_recipe(tmp.dir.file("unmapped.py"), &out), 1) << out;
	EXPECT_TRUE(contains(out, "variant hip has no entry")) << out;

	ASSERT_TRUE(tmp.dir.write("broken.py", "class Astrolabe(:\n"));
	out.clear();
	EXPECT_EQ(check_recipe(tmp.dir.file("broken.py"), &out), 1) << out;
	EXPECT_TRUE(contains(out, "broken.py:1")) << out;
}

// Issue 38: ~papi left the energy and sampler plugins free to pick up a system
// PAPI, and +mpi pinned Open MPI instead of Spack's virtual mpi.
TEST(SpackRecipe, NoPapiMeansNoPapiAndMpiIsTheVirtualPackage)
{
	std::string recipe = read_file(top_srcdir() + "/packaging/spack/package.py");
	size_t papi = recipe.find("\"papi\": (");
	ASSERT_NE(papi, std::string::npos) << recipe;
	std::string entry = recipe.substr(papi, recipe.find("),", papi) - papi);
	EXPECT_TRUE(contains(entry, "\"--without-papi\"")) << entry;
	EXPECT_TRUE(contains(recipe, "depends_on(\"mpi\", when=\"+mpi\")")) << "the virtual mpi";
	EXPECT_FALSE(contains(recipe, "depends_on(\"openmpi\"")) << "the virtual mpi, not one implementation";
	std::string out;
	run_command("sh " + sh_quoted(top_srcdir() + "/configure") + " --help", &out);
	EXPECT_TRUE(contains(out, "--without-papi")) << "configure has the option the recipe passes";
}

// ---------------------------------------------------------------- licence

namespace {

const char kSpdx[] = "SPDX-License-Identifier: LGPL-2.1-or-later";

bool ends_with(const std::string &s, const char *suffix)
{
	size_t n = strlen(suffix);
	return s.size() >= n && s.compare(s.size() - n, n, suffix) == 0;
}

// Is path (relative to the top source folder) a source file, where the
// licence line belongs: code, build files and scripts; not the test data,
// the fuzz seeds or the documents.
bool is_source(const std::string &top, const std::string &path)
{
	if (path.rfind("tests/data/", 0) == 0 || path.find("/corpus/") != std::string::npos)
		return false;
	for (const char *ext : { ".c", ".h", ".cc", ".cu", ".cl", ".map", ".am", ".ac", ".m4", ".in", ".sh", ".py", ".gp", ".supp" })
		if (ends_with(path, ext))
			return true;
	// Makefiles, debian/control and the manual pages' names (build-aux/man-names): no extension to tell.
	std::string base = path.substr(path.rfind('/') + 1);
	for (const char *name : { "Makefile", "control", "man-names" })
		if (base == name)
			return true;
	return read_file(top + "/" + path).rfind("#!", 0) == 0; // a script
}

// Does the file name the licence in its first three lines?
bool names_licence(const std::string &file)
{
	std::vector<std::string> lines = lines_of(read_file(file));
	for (size_t i = 0; i < lines.size() && i < 3; i++)
		if (contains(lines[i], kSpdx))
			return true;
	return false;
}

} // namespace

TEST(Licence, EverySourceFileNamesItInItsFirstLines)
{
	std::string top = top_srcdir(), out;
	if (run_command("git -C " + sh_quoted(top) + " ls-files 2>/dev/null", &out) != 0 || out.empty())
		GTEST_SKIP() << "not a git checkout (a release tarball): the repository's files are checked there";
	std::string missing;
	size_t checked = 0;
	for (const std::string &path : lines_of(out)) {
		if (path.empty() || !is_source(top, path))
			continue;
		checked++;
		if (!names_licence(top + "/" + path))
			missing += "  " + path + "\n";
	}
	EXPECT_GT(checked, 400u);
	EXPECT_TRUE(missing.empty()) << "give these files a line \"" << kSpdx
				     << "\" in their first three lines (a comment; after the #! line of a script):\n" << missing;
}

TEST(Licence, AFileWithoutTheLineIsFound)
{
	ScratchDir tmp;
	ASSERT_TRUE(tmp.dir.write("bare.c", "/* a file */\nint x;\n"));
	ASSERT_TRUE(tmp.dir.write("late.c", "/* a file */\n\n\n/* SPDX-License-Identifier: LGPL-2.1-or-later */\n"));
	ASSERT_TRUE(tmp.dir.write("ok.sh", "#!/bin/sh\n# SPDX-License-Identifier: LGPL-2.1-or-later\n"));
	ASSERT_TRUE(tmp.dir.write("seed", "#!not a script really\n"));
	EXPECT_FALSE(names_licence(tmp.dir.file("bare.c")));
	EXPECT_FALSE(names_licence(tmp.dir.file("late.c")));
	EXPECT_TRUE(names_licence(tmp.dir.file("ok.sh")));
	EXPECT_TRUE(is_source(tmp.path(), "seed"));
	EXPECT_FALSE(is_source(tmp.path(), "tests/data/x.c"));
	EXPECT_FALSE(is_source(tmp.path(), "bench/fuzz/corpus/env_int/plain"));
	EXPECT_TRUE(is_source(tmp.path(), "examples/scheduler_plugin/Makefile"));
	EXPECT_TRUE(is_source(tmp.path(), "debian/control"));
}

TEST(Licence, CopyingDebianAndSpackSayLgpl21OrLater)
{
	std::string copying = read_file(top_srcdir() + "/COPYING");
	EXPECT_TRUE(contains(copying, "GNU LESSER GENERAL PUBLIC LICENSE")) << "COPYING";
	EXPECT_TRUE(contains(copying, "Version 2.1, February 1999")) << "COPYING";
	std::string copyright = read_file(top_srcdir() + "/debian/copyright");
	EXPECT_TRUE(contains(copyright, "\nLicense: LGPL-2.1+\n")) << copyright;
	EXPECT_TRUE(contains(copyright, "/usr/share/common-licenses/LGPL-2.1")) << copyright;
	EXPECT_FALSE(contains(copyright, "unspecified")) << copyright;
	EXPECT_TRUE(contains(read_file(top_srcdir() + "/packaging/spack/package.py"), "license(\"LGPL-2.1-or-later\")"));
}

// ---------------------------------------------------------- sanitizer reports

// Every folder whose suites make check runs gives each sanitizer configure's
// SAN_REPORT_OPTIONS (halt_on_error=1 exitcode=86), and this suite runs under
// them: a report in a child process, a plugin or an MPI rank ends that process
// with a status of its own, which fails the test that checks it, even one
// expecting a tool's failure (status 1, ASan's own default).
TEST(SanitizerReports, EverySuiteStopsAtAReportWithAStatusOfItsOwn)
{
	for (const char *name : { "ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS" }) {
		std::string options = " " + env_or(name, "") + " ";
		EXPECT_TRUE(contains(options, " halt_on_error=1 ") && contains(options, " exitcode=86 ")) << name << "=" << options;
	}
	std::string top = top_srcdir(), out;
	if (run_command("git -C " + sh_quoted(top) + " ls-files '*Makefile.am' 2>/dev/null", &out) != 0 || out.empty())
		GTEST_SKIP() << "not a git checkout (a release tarball): the repository's files are checked there";
	std::string missing;
	size_t checked = 0;
	for (const std::string &path : lines_of(out)) {
		std::string text = path.empty() ? "" : read_file(top + "/" + path);
		if (!contains(text, "AM_TESTS_ENVIRONMENT"))
			continue;
		checked++;
		for (const char *name : { "ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS" })
			if (!contains(text, std::string(name) + "='$(SAN_REPORT_OPTIONS)"))
				missing += "  " + path + ": " + name + "\n";
	}
	EXPECT_GE(checked, 6u);
	EXPECT_TRUE(missing.empty()) << "give these variables of AM_TESTS_ENVIRONMENT '$(SAN_REPORT_OPTIONS) ...' first:\n" << missing;
#ifdef __SANITIZE_ADDRESS__
	// A child reading past its block: its status says that it wrote a report.
	pid_t child = fork();
	if (child == 0) {
		volatile char *block = static_cast<volatile char *>(malloc(8));
		_exit(block[8] == 42 ? 0 : 1);
	}
	int status = 0;
	ASSERT_EQ(waitpid(child, &status, 0), child);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 86) << status;
#endif
}

// ------------------------------------------------------- the architecture's rules

// dev/layers on a small tree of its own: src/ (the sources, by room) and build/ (their objects).
class Layers : public ::testing::Test
{
protected:
	ScratchDir tmp;

	// Writes src/path and compiles it into build/ (as a build tree holds objects).
	void source(const std::string &path, const std::string &code)
	{
		std::string dir = path.substr(0, path.rfind('/'));
		std::string out;
		ASSERT_EQ(run_command("mkdir -p " + sh_quoted(tmp.path() + "/src/" + dir) + " " + sh_quoted(tmp.path() + "/build/" + dir), &out), 0) << out;
		ASSERT_TRUE(tmp.dir.write("src/" + path, code));
		std::string object = tmp.path() + "/build/" + path.substr(0, path.size() - 2) + ".o";
		ASSERT_EQ(run_command("cd " + sh_quoted(tmp.path() + "/src") + " && cc -g -c " + sh_quoted(path) + " -o " + sh_quoted(object) + " 2>&1", &out), 0) << out;
	}

	// A file of the common room calling one of the core room: an upward call.
	void upward_call()
	{
		source("kernel/core/high.c", "int high(int x) { return x * 2; }\n");
		source("kernel/common/low.c", "int high(int x);\nint low(int x) { return high(x) + 1; }\n");
	}

	int layers(const std::string &extra, std::string *out)
	{
		return run_command("python3 " + sh_quoted(top_srcdir() + "/dev/layers") + " --src " + sh_quoted(tmp.path() + "/src") + " --build " +
				   sh_quoted(tmp.path() + "/build") + " " + extra + " 2>&1", out);
	}
};

TEST_F(Layers, ATreeThatKeepsTheRulesPasses)
{
	source("kernel/common/low.c", "int low(int x) { return x + 1; }\n");
	source("kernel/core/high.c", "int low(int x);\nint high(int x) { return low(x) * 2; }\n");
	std::string out;
	EXPECT_EQ(layers("", &out), 0) << out;
	EXPECT_TRUE(contains(out, "layers: 0 findings")) << out;
}

TEST_F(Layers, ARoomUsingARoomAboveItIsNamed)
{
	upward_call();
	std::string out;
	EXPECT_EQ(layers("", &out), 1) << out;
	EXPECT_TRUE(contains(out, "upward: kernel/common/low.c (kernel/common) uses high of kernel/core/high.c (kernel/core)")) << out;
}

TEST_F(Layers, ACircleOfFourFilesIsNamedAndOfThreeIsNot)
{
	const char *names[] = { "a", "b", "c", "d" };
	for (int i = 0; i < 4; i++) {
		std::string me = names[i], next = names[(i + 1) % 4];
		source("kernel/tasks/" + me + ".c", "int " + next + "_fn(int x);\nint " + me + "_fn(int x) { return x ? " + next + "_fn(x - 1) : 0; }\n");
	}
	std::string out;
	EXPECT_EQ(layers("", &out), 1) << out;
	EXPECT_TRUE(contains(out, "circle: 4 files call each other: kernel/tasks/a.c kernel/tasks/b.c kernel/tasks/c.c kernel/tasks/d.c")) << out;

	// Three files closing the circle (d gone, c calls a): allowed.
	ASSERT_EQ(run_command("rm " + sh_quoted(tmp.path() + "/src/kernel/tasks/d.c") + " " + sh_quoted(tmp.path() + "/build/kernel/tasks/d.o"), &out), 0);
	source("kernel/tasks/c.c", "int a_fn(int x);\nint c_fn(int x) { return x ? a_fn(x - 1) : 0; }\n");
	out.clear();
	EXPECT_EQ(layers("", &out), 0) << out;
}

TEST_F(Layers, SizesThreadCallsAndStrayFilesAreNamed)
{
	std::string body = "int long_one(int x)\n{\n";
	for (int i = 0; i < 125; i++)
		body += "\tx = x * 3 + " + std::to_string(i) + ";\n";
	body += "\treturn x;\n}\n";
	source("kernel/data/long.c", body);
	source("plugins/tools/sleepy.c", "#include <unistd.h>\nvoid nap(void) { usleep(10); } /* usleep(1) in a comment is not a call */\n");
	source("kernel/stray.c", "int stray(void) { return 0; }\n");
	std::string out;
	EXPECT_EQ(layers("", &out), 1) << out;
	EXPECT_TRUE(contains(out, "size: kernel/data/long.c:1: long_one() has 129 lines (at most 120)")) << out;
	EXPECT_TRUE(contains(out, "thread: plugins/tools/sleepy.c:2: usleep outside the thread layer")) << out;
	EXPECT_TRUE(contains(out, "room: kernel/stray.c is in no room of the kernel")) << out;
	EXPECT_TRUE(contains(out, "layers: 3 findings")) << out;
}

TEST_F(Layers, AnAllowedFindingPassesAndAFixedOneIsTold)
{
	upward_call();
	ASSERT_TRUE(tmp.dir.write("allow", "# tolerated\nupward kernel/common/low.c kernel/core/high.c\nsize-file kernel/gone.c\n"));
	std::string out;
	EXPECT_EQ(layers("--allow " + sh_quoted(tmp.dir.file("allow")), &out), 0) << out;
	EXPECT_TRUE(contains(out, "(allowed) upward: kernel/common/low.c")) << out;
	EXPECT_TRUE(contains(out, "fixed: 'size-file kernel/gone.c' is no longer found")) << out;
	EXPECT_TRUE(contains(out, "layers: 1 findings, 0 not allowed")) << out;
}
