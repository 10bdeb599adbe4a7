/* SPDX-License-Identifier: LGPL-2.1-or-later */
// Helpers shared by the GoogleTest suites: scoped environment variables,
// temporary plugin directories, starting the runtime with N CPU workers,
// holding workers busy (Gate), bounded waits, stderr capture, and a per-test watchdog that turns a hang
// into a failure.
#ifndef ASTRO_TESTS_HELPERS_H
#define ASTRO_TESTS_HELPERS_H

#include <gtest/gtest.h>
#include <starpu.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <dlfcn.h>
#include <ftw.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

namespace astro_test {

// ------------------------------------------------------------------ strings

inline bool contains(const std::string &haystack, const std::string &needle)
{
	return haystack.find(needle) != std::string::npos;
}

// The lines of text, without their newlines.
inline std::vector<std::string> lines_of(const std::string &text)
{
	std::vector<std::string> lines;
	size_t start = 0;
	while (start < text.size()) {
		size_t end = text.find('\n', start);
		if (end == std::string::npos)
			end = text.size();
		lines.push_back(text.substr(start, end - start));
		start = end + 1;
	}
	return lines;
}

// Runs f with stderr captured and returns what it printed.
template <typename F> std::string stderr_of(F &&f)
{
	testing::internal::CaptureStderr();
	f();
	return testing::internal::GetCapturedStderr();
}

// What a FILE * receives from f.
template <typename F> std::string printed(F &&f)
{
	char *buf = nullptr;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);
	f(out);
	fclose(out);
	std::string text(buf, len);
	free(buf);
	return text;
}

// ----------------------------------------------------------------- timing

inline void sleep_ms(unsigned ms)
{
	std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// Polls pred until it holds or timeout_ms passed; returns its last value.
template <typename Pred> bool wait_until(Pred pred, unsigned timeout_ms = 5000)
{
	auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
	while (!pred()) {
		if (std::chrono::steady_clock::now() >= deadline)
			return pred();
		std::this_thread::sleep_for(std::chrono::microseconds(200));
	}
	return true;
}

// ------------------------------------------------------------- environment

// Sets (or, with nullptr, unsets) a variable for the life of the object, then restores it.
class ScopedEnv
{
public:
	ScopedEnv(const char *name, const char *value) : name_(name)
	{
		const char *old = getenv(name);
		had_ = old != nullptr;
		if (had_)
			old_ = old;
		if (value)
			setenv(name, value, 1);
		else
			unsetenv(name);
	}
	ScopedEnv(const char *name, const std::string &value) : ScopedEnv(name, value.c_str()) {}
	~ScopedEnv()
	{
		if (had_)
			setenv(name_.c_str(), old_.c_str(), 1);
		else
			unsetenv(name_.c_str());
	}
	ScopedEnv(const ScopedEnv &) = delete;
	ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
	std::string name_;
	std::string old_;
	bool had_ = false;
};

// The variables the suites read: each test states what it needs.
inline std::string env_or(const char *name, const char *fallback)
{
	const char *v = getenv(name);
	return v ? v : fallback;
}

// STARPU_PLUGIN_PATH as given by the test harness: the build-tree plugin folders.
inline std::string build_plugin_path()
{
	return env_or("STARPU_PLUGIN_PATH", "");
}

// Where the test plugins (sched_wrong_abi.so...) were built.
inline std::string test_plugin_dir()
{
	return env_or("ASTRO_TEST_PLUGIN_DIR", "");
}

inline std::string test_plugin(const std::string &file)
{
	return test_plugin_dir() + "/" + file;
}

// A file's whole content ("" when it cannot be read).
inline std::string read_file(const std::string &path)
{
	std::ifstream in(path, std::ios::binary);
	std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
	return text;
}

// Starts wait() on a thread of its own and returns the thread once it sleeps
// in the kernel (its state in /proc 'S' three looks in a row, 10 ms apart;
// at most 30 s): a test then knows the call blocks, however busy the machine.
template <typename F> std::thread blocked_thread(F &&wait)
{
	std::atomic<long> tid{ 0 };
	std::thread t([&tid, wait]() mutable {
		tid = (long)syscall(SYS_gettid);
		wait();
	});
	while (!tid)
		sleep_ms(1);
	std::string path = "/proc/self/task/" + std::to_string(tid.load()) + "/stat";
	int in_a_row = 0;
	for (int i = 0; i < 3000 && in_a_row < 3; i++) {
		sleep_ms(10);
		std::string stat = read_file(path);
		size_t end = stat.rfind(')');
		char state = end != std::string::npos && end + 2 < stat.size() ? stat[end + 2] : '?';
		in_a_row = state == 'S' ? in_a_row + 1 : 0;
	}
	EXPECT_EQ(in_a_row, 3) << "the thread never blocked";
	return t;
}

// Runs cmd through the shell: its exit status (-1 when it did not exit), its stdout appended to *out.
inline int run_command(const std::string &cmd, std::string *out)
{
	FILE *p = popen(cmd.c_str(), "r");
	if (!p)
		return -1;
	char buf[4096];
	size_t got;
	while ((got = fread(buf, 1, sizeof(buf), p)) > 0)
		out->append(buf, got);
	int status = pclose(p);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The NEEDED entries (objdump -p) of the shared library that defines symbol, its path in *library.
inline std::string needed_libraries_of(const void *symbol, std::string *library)
{
	Dl_info info;
	if (!dladdr(symbol, &info) || !info.dli_fname)
		return "";
	*library = info.dli_fname;
	std::string needed;
	run_command("objdump -p '" + *library + "' | grep NEEDED", &needed);
	return needed;
}

// Built with AddressSanitizer or ThreadSanitizer (CI's sanitizer runs): a check that only
// compiles sources or reads files, the same in every build, is left to the plain run.
inline bool sanitizer_build()
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	return true;
#else
	return false;
#endif
}

// Is program in PATH?
inline bool have_program(const std::string &program)
{
	return system(("command -v '" + program + "' >/dev/null 2>&1").c_str()) == 0;
}

inline bool file_exists(const std::string &path)
{
	struct stat st;
	return stat(path.c_str(), &st) == 0;
}

// s quoted for a POSIX shell ('...', a quote inside as '\'').
inline std::string quote(const std::string &s)
{
	std::string out = "'";
	for (char c : s)
		out += c == '\'' ? std::string("'\\''") : std::string(1, c);
	return out + "'";
}

// The anchor file (.../traces.otf2) of a trace the recorder left: trace is the link named as StarPU's trace
// (prof_file_<user>_<id> -> .prof_file_<user>_<id>/traces.otf2) or the archive's folder; "" when there is none.
inline std::string trace_anchor(const std::string &trace)
{
	char *real = realpath(trace.c_str(), nullptr);
	std::string anchor = real ? real : "";
	free(real);
	struct stat st;
	if (!anchor.empty() && stat(anchor.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
		anchor += "/traces.otf2";
	return file_exists(anchor) ? anchor : "";
}

// The DOM headless Chromium builds from the page at url (file://... or with a #fragment;
// its scripts have run) into *dom; false when chromium is not installed.
inline bool dump_dom(const std::string &url, std::string *dom)
{
	const char *browser = have_program("chromium") ? "chromium" : have_program("chromium-browser") ? "chromium-browser" : nullptr;
	if (!browser)
		return false;
	char profile[] = "/tmp/astro-chromium-XXXXXX";
	if (!mkdtemp(profile))
		return false;
	run_command("timeout 300 " + std::string(browser) + " --headless --no-sandbox --disable-gpu --user-data-dir=" + profile +
			    " --dump-dom '" + url + "' 2>/dev/null",
		    dom);
	return system(("rm -rf " + std::string(profile)).c_str()) == 0;
}

// ------------------------------------------------------------ temporary dir

// A fresh directory under $TMPDIR, removed with all it holds at the end (links as links): a
// runtime given it as STARPU_HOME leaves folders there (.starpu/sampling/bus).
class TempDir
{
public:
	TempDir()
	{
		std::string tmpl = env_or("TMPDIR", "/tmp") + "/astro-test-XXXXXX";
		std::vector<char> buf(tmpl.begin(), tmpl.end());
		buf.push_back('\0');
		if (!mkdtemp(buf.data())) {
			ADD_FAILURE() << "mkdtemp(" << tmpl << ") failed: " << strerror(errno);
			return;
		}
		path_ = buf.data();
	}
	~TempDir()
	{
		if (!path_.empty())
			nftw(path_.c_str(), [](const char *p, const struct stat *, int, struct FTW *) { return remove(p); }, 16,
			     FTW_DEPTH | FTW_PHYS);
	}
	TempDir(const TempDir &) = delete;
	TempDir &operator=(const TempDir &) = delete;

	const std::string &path() const { return path_; }
	std::string file(const std::string &name) const { return path_ + "/" + name; }

	// Places a symbolic link name -> target in the directory.
	bool link(const std::string &target, const std::string &name) const
	{
		if (symlink(target.c_str(), file(name).c_str()) != 0) {
			ADD_FAILURE() << "symlink(" << target << ", " << file(name) << "): " << strerror(errno);
			return false;
		}
		return true;
	}
	// Links the test plugin `plugin` (e.g. "sched_testfifo.so") under the same name.
	bool link_test_plugin(const std::string &plugin) const
	{
		std::string target = test_plugin(plugin);
		if (!file_exists(target)) {
			ADD_FAILURE() << "test plugin " << target << " is missing: is ASTRO_TEST_PLUGIN_DIR set (make check sets it)?";
			return false;
		}
		return link(target, plugin);
	}
	bool write(const std::string &name, const std::string &content) const
	{
		std::ofstream out(file(name), std::ios::binary);
		out << content;
		return static_cast<bool>(out);
	}

private:
	std::string path_;
};

// ------------------------------------------------------------------ runtime

// A conf asking for ncpus CPU workers, winning over STARPU_NCPU.
inline starpu_conf conf_with_ncpus(int ncpus)
{
	starpu_conf conf;
	starpu_conf_init(&conf);
	conf.ncpus = ncpus;
	conf.precedence_over_environment_variables = 1;
	return conf;
}

inline int init_with_ncpus(int ncpus)
{
	starpu_conf conf = conf_with_ncpus(ncpus);
	return starpu_init(&conf);
}

// Starts the runtime for the life of the object (shut down only if it started).
class Runtime
{
public:
	explicit Runtime(int ncpus) : ret_(init_with_ncpus(ncpus)) {}
	explicit Runtime(starpu_conf *conf) : ret_(starpu_init(conf)) {}
	~Runtime()
	{
		if (ret_ == 0)
			starpu_shutdown();
	}
	Runtime(const Runtime &) = delete;
	Runtime &operator=(const Runtime &) = delete;
	int ret() const { return ret_; }
	bool ok() const { return ret_ == 0; }

private:
	int ret_;
};

// The policy in use, "" when none.
inline std::string policy_name()
{
	struct starpu_sched_policy *p = starpu_sched_get_sched_policy();
	return p && p->policy_name ? p->policy_name : "";
}

inline bool policy_registered(const std::string &name)
{
	for (struct starpu_sched_policy **p = starpu_sched_get_predefined_policies(); p && *p; p++)
		if ((*p)->policy_name && name == (*p)->policy_name)
			return true;
	return false;
}

// A codelet with one CPU implementation and the given buffers.
inline starpu_codelet cpu_codelet(starpu_cpu_func_t f, int nbuffers = 0, const char *name = nullptr)
{
	starpu_codelet cl;
	starpu_codelet_init(&cl);
	cl.cpu_funcs[0] = f;
	cl.nbuffers = nbuffers;
	cl.name = name;
	return cl;
}

// Submits a detached task of cl with arg; returns starpu_task_submit()'s result.
inline int submit_detached(starpu_codelet *cl, void *arg = nullptr, int priority = 0)
{
	struct starpu_task *t = starpu_task_create();
	t->cl = cl;
	t->cl_arg = arg;
	t->priority = priority;
	int ret = starpu_task_submit(t);
	if (ret)
		starpu_task_destroy(t);
	return ret;
}

// Submits t to scheduling context ctx; destroys it when refused. Returns
// starpu_task_submit_to_ctx()'s result.
inline int submit_to_ctx(struct starpu_task *t, unsigned ctx)
{
	int ret = starpu_task_submit_to_ctx(t, ctx);
	if (ret)
		starpu_task_destroy(t);
	return ret;
}

// A scheduling context of the n workers ids with no policy (its tasks go to
// its workers as they ask, as StarPU does for a context created without one).
inline unsigned create_ctx_without_policy(int *ids, int n, const char *name)
{
	return starpu_sched_ctx_create(ids, n, name, STARPU_SCHED_CTX_POLICY_NAME, "", 0);
}

// Submits one task of cl on handle h (the mode from the codelet) with arg, on
// worker when it is not -1; returns starpu_task_submit()'s result.
inline int submit_on_handle(starpu_codelet *cl, starpu_data_handle_t h, void *arg = nullptr, int worker = -1)
{
	struct starpu_task *t = starpu_task_create();
	t->cl = cl;
	t->handles[0] = h;
	t->cl_arg = arg;
	if (worker >= 0) {
		t->execute_on_a_specific_worker = 1;
		t->workerid = (unsigned)worker;
	}
	int ret = starpu_task_submit(t);
	if (ret)
		starpu_task_destroy(t);
	return ret;
}

// Holds workers in a task until open(), so that what is submitted meanwhile
// stays queued (ready, never started): one blocking task pinned to each worker.
class Gate
{
public:
	// Workers 0 .. nworkers-1.
	explicit Gate(unsigned nworkers)
	{
		for (unsigned w = 0; w < nworkers; w++)
			workers_.push_back((int)w);
	}
	explicit Gate(std::vector<int> workers) : workers_(std::move(workers)) {}
	// Gate g({id}) holds worker id: without this, the braces chose Gate(unsigned) and held none.
	Gate(std::initializer_list<int> workers) : workers_(workers) {}
	// Opens, then waits for every blocker to leave: they still touch the gate as they go.
	~Gate()
	{
		open();
		wait_until([&] { return left_.load() == submitted_; }, 60000);
	}
	Gate(const Gate &) = delete;
	Gate &operator=(const Gate &) = delete;

	// Submits the blocking tasks and returns once all of them run (false if one did not in time).
	bool close()
	{
		static starpu_codelet cl = cpu_codelet(blocker, 0, "gate");
		for (int w : workers_) {
			struct starpu_task *t = starpu_task_create();
			t->cl = &cl;
			t->cl_arg = this;
			t->execute_on_a_specific_worker = 1;
			t->workerid = (unsigned)w;
			if (starpu_task_submit(t) != 0) {
				starpu_task_destroy(t);
				return false;
			}
			submitted_++;
		}
		return wait_until([&] { return running_.load() == submitted_; }, 20000);
	}
	void open()
	{
		std::lock_guard<std::mutex> lock(mutex_);
		open_ = true;
		cond_.notify_all();
	}

private:
	static void blocker(void **, void *arg)
	{
		Gate *gate = static_cast<Gate *>(arg);
		gate->running_++;
		{
			std::unique_lock<std::mutex> lock(gate->mutex_);
			gate->cond_.wait(lock, [&] { return gate->open_; });
		}
		gate->left_++; // the last touch: the gate may go right after
	}
	std::vector<int> workers_;
	int submitted_ = 0;
	std::atomic<int> running_{0};
	std::atomic<int> left_{0};
	std::mutex mutex_;
	std::condition_variable cond_;
	bool open_ = false;
};

// ----------------------------------------------------------------- watchdog

// Aborts the process when one test runs longer than ASTRO_TEST_TIMEOUT seconds
// (default 60): a hang then fails the suite with the test's name instead of
// blocking `make check` forever. On a machine busier than its cores (load
// average above the number of CPUs), the limit stretches by that ratio, up to
// 5 times: a test that waits for CPU time is not a hang.
class Watchdog : public testing::EmptyTestEventListener
{
public:
	Watchdog()
	{
		timeout_s_ = atoi(env_or("ASTRO_TEST_TIMEOUT", "60").c_str());
		if (timeout_s_ <= 0)
			timeout_s_ = 60;
		// State is never freed: the detached thread may outlive static destructors.
		state_ = new State;
		std::thread(&Watchdog::run, state_, timeout_s_).detach();
	}
	void OnTestStart(const testing::TestInfo &info) override
	{
		std::lock_guard<std::mutex> lock(state_->mutex);
		state_->name = std::string(info.test_suite_name()) + "." + info.name();
		state_->start = std::chrono::steady_clock::now();
		state_->deadline = state_->start + std::chrono::seconds(timeout_s_);
		state_->armed = true;
		state_->cond.notify_all();
	}
	void OnTestEnd(const testing::TestInfo &) override
	{
		std::lock_guard<std::mutex> lock(state_->mutex);
		state_->armed = false;
		state_->cond.notify_all();
	}

private:
	struct State
	{
		std::mutex mutex;
		std::condition_variable cond;
		bool armed = false;
		std::chrono::steady_clock::time_point start, deadline;
		std::string name;
	};
	// How much longer than timeout_s a test may take now: the load average
	// over the CPUs, between 1 and 5.
	static double load_stretch()
	{
		double load = 0;
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);
		if (getloadavg(&load, 1) != 1 || cpus <= 0)
			return 1;
		double r = load / (double)cpus;
		return r < 1 ? 1 : r > 5 ? 5 : r;
	}
	static void run(State *s, int timeout_s)
	{
		std::unique_lock<std::mutex> lock(s->mutex);
		for (;;) {
			if (!s->armed) {
				s->cond.wait(lock);
				continue;
			}
			if (s->cond.wait_until(lock, s->deadline) == std::cv_status::timeout && s->armed &&
			    std::chrono::steady_clock::now() >= s->deadline) {
				double stretch = load_stretch();
				auto allowed = s->start + std::chrono::milliseconds((long long)(timeout_s * stretch * 1000));
				if (allowed > s->deadline) {
					s->deadline = allowed;
					continue;
				}
				fprintf(stderr, "\n[watchdog] test %s still running after %.0f s: aborting (ASTRO_TEST_TIMEOUT=%d, stretched %.1fx by the machine's load)\n",
					s->name.c_str(), timeout_s * stretch, timeout_s, stretch);
				fflush(stderr);
				_exit(124);
			}
		}
	}
	State *state_;
	int timeout_s_;
};

inline bool install_watchdog()
{
	testing::UnitTest::GetInstance()->listeners().Append(new Watchdog);
	return true;
}

// One watchdog per test program (each suite is one translation unit).
static const bool watchdog_installed = install_watchdog();

// Submits n detached tasks of cl whose sched_data is value (the application's,
// STARPU_TASK_SCHED_DATA), waits for them, and returns how many saw another
// value in their function or their callback: 0 when the policy left it alone.
inline int sched_data_changes(starpu_codelet *cl, int n, void *value)
{
	static std::atomic<int> changed;
	changed = 0;
	for (int i = 0; i < n; i++) {
		struct starpu_task *t = starpu_task_create();
		t->cl = cl;
		t->cl_arg = value;
		t->sched_data = value;
		t->priority = i % 5 - 2;
		t->callback_func = [](void *arg) {
			if (starpu_task_get_current()->sched_data != arg)
				changed++;
		};
		t->callback_arg = value;
		if (starpu_task_submit(t) != 0) {
			starpu_task_destroy(t);
			return -1;
		}
	}
	if (starpu_task_wait_for_all() != 0)
		return -1;
	return changed.load();
}

// A codelet function for sched_data_changes(): fails the test when its task's sched_data is not its cl_arg.
inline void sched_data_kept(void **, void *arg)
{
	EXPECT_EQ(starpu_task_get_current()->sched_data, arg) << "the policy overwrote the application's sched_data";
}

} // namespace astro_test

#endif // ASTRO_TESTS_HELPERS_H
