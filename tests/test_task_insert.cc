// SPDX-License-Identifier: LGPL-2.1-or-later
// starpu_task_insert() and the codelet-argument packing helpers.
//
// The first part needs no running runtime: packing, unpacking, and
// starpu_task_set() on a task on the stack (with fake handles, which
// starpu_task_set() never dereferences). The second part starts the runtime
// and checks what the codelets really receive.
#include <gtest/gtest.h>
#include <starpu.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

template <typename F> std::string stderr_of(F f)
{
	testing::internal::CaptureStderr();
	f();
	return testing::internal::GetCapturedStderr();
}

bool contains(const std::string &s, const std::string &part)
{
	return s.find(part) != std::string::npos;
}

struct Pod
{
	int i;
	double d;
	char text[12];
};

bool operator==(const Pod &a, const Pod &b)
{
	return a.i == b.i && a.d == b.d && std::memcmp(a.text, b.text, sizeof(a.text)) == 0;
}

const Pod kPod = { -3, 2.75, "astrolabe" };

starpu_data_handle_t fake_handle(uintptr_t n)
{
	return reinterpret_cast<starpu_data_handle_t>(0x1000 + 16 * n);
}

starpu_codelet make_codelet(const char *name, int nbuffers)
{
	starpu_codelet cl;
	std::memset(&cl, 0, sizeof(cl));
	cl.name = name;
	cl.nbuffers = nbuffers;
	return cl;
}

starpu_task blank_task()
{
	starpu_task t;
	std::memset(&t, 0, sizeof(t));
	t.where = -1;
	t.sequential_consistency = 1;
	t.detach = 1;
	return t;
}

// Frees what starpu_task_set() allocated in a task that is never submitted.
void release(starpu_task &t)
{
	if (t.cl_arg_free)
		std::free(t.cl_arg);
	std::free(t.dyn_handles);
	std::free(t.dyn_modes);
	t.cl_arg = nullptr;
	t.dyn_handles = nullptr;
	t.dyn_modes = nullptr;
}

void noop_callback(void *) {}
void other_callback(void *) {}

} // namespace

// ================================================================ packing

TEST(PackArgs, VariadicRoundTrip)
{
	int i = 42;
	double d = -1.5;
	char c = 'z';
	uint64_t u = 0x0123456789abcdefULL;
	int array[5] = { 1, 2, 3, 4, 5 };
	Pod pod = kPod;

	void *buffer = nullptr;
	size_t size = 0;
	starpu_codelet_pack_args(&buffer, &size, STARPU_VALUE, &i, sizeof(i), STARPU_VALUE, &d, sizeof(d),
				 STARPU_VALUE, &c, sizeof(c), STARPU_VALUE, &u, sizeof(u),
				 STARPU_VALUE, array, sizeof(array), STARPU_VALUE, &pod, sizeof(pod), 0);
	ASSERT_NE(buffer, nullptr);
	EXPECT_EQ(size, sizeof(int) + 6 * sizeof(size_t) + sizeof(i) + sizeof(d) + sizeof(c) + sizeof(u) + sizeof(array) + sizeof(pod));
	int nargs;
	std::memcpy(&nargs, buffer, sizeof(nargs));
	EXPECT_EQ(nargs, 6);

	int i2 = 0;
	double d2 = 0;
	char c2 = 0;
	uint64_t u2 = 0;
	int array2[5] = {};
	Pod pod2 = {};
	starpu_codelet_unpack_args(buffer, &i2, &d2, &c2, &u2, array2, &pod2, 0);
	EXPECT_EQ(i2, i);
	EXPECT_EQ(d2, d);
	EXPECT_EQ(c2, c);
	EXPECT_EQ(u2, u);
	EXPECT_EQ(std::memcmp(array, array2, sizeof(array)), 0);
	EXPECT_TRUE(pod2 == pod);
	std::free(buffer);
}

TEST(PackArgs, UnpackStopsAtNullPointer)
{
	int a = 1, b = 2;
	void *buffer;
	size_t size;
	starpu_codelet_pack_args(&buffer, &size, STARPU_VALUE, &a, sizeof(a), STARPU_VALUE, &b, sizeof(b), 0);
	int a2 = 0, b2 = -9;
	starpu_codelet_unpack_args(buffer, &a2, NULL);
	EXPECT_EQ(a2, 1);
	EXPECT_EQ(b2, -9);
	std::free(buffer);
}

TEST(PackArgs, IncrementalRoundTrip)
{
	int i = 7;
	double d = 3.25;
	Pod pod = kPod;
	const char text[] = "hello";

	starpu_codelet_pack_arg_data state;
	starpu_codelet_pack_arg_init(&state);
	starpu_codelet_pack_arg(&state, &i, sizeof(i));
	starpu_codelet_pack_arg(&state, &d, sizeof(d));
	starpu_codelet_pack_arg(&state, &pod, sizeof(pod));
	starpu_codelet_pack_arg(&state, text, sizeof(text));
	starpu_codelet_pack_arg(&state, &i, sizeof(i));
	void *buffer;
	size_t size;
	starpu_codelet_pack_arg_fini(&state, &buffer, &size);
	ASSERT_NE(buffer, nullptr);
	EXPECT_EQ(size, sizeof(int) + 5 * sizeof(size_t) + 2 * sizeof(i) + sizeof(d) + sizeof(pod) + sizeof(text));

	starpu_codelet_pack_arg_data in;
	starpu_codelet_unpack_arg_init(&in, buffer, size);
	int i2 = 0;
	starpu_codelet_unpack_arg(&in, &i2, sizeof(i2));
	EXPECT_EQ(i2, 7);

	void *dup = nullptr;
	size_t dup_size = 0;
	starpu_codelet_dup_arg(&in, &dup, &dup_size);
	ASSERT_NE(dup, nullptr);
	EXPECT_EQ(dup_size, sizeof(double));
	EXPECT_EQ(*static_cast<double *>(dup), 3.25);
	std::free(dup);

	void *picked = nullptr;
	size_t picked_size = 0;
	starpu_codelet_pick_arg(&in, &picked, &picked_size);
	ASSERT_EQ(picked_size, sizeof(Pod));
	Pod pod2;
	std::memcpy(&pod2, picked, sizeof(pod2));
	EXPECT_TRUE(pod2 == kPod);
	// pick_arg points into the buffer itself.
	EXPECT_GE(static_cast<char *>(picked), static_cast<char *>(buffer));
	EXPECT_LT(static_cast<char *>(picked), static_cast<char *>(buffer) + size);

	starpu_codelet_unpack_discard_arg(&in);
	int last = 0;
	starpu_codelet_unpack_arg(&in, &last, sizeof(last));
	EXPECT_EQ(last, 7);
	starpu_codelet_unpack_arg_fini(&in);
	std::free(buffer);
}

TEST(PackArgs, BothFormsWriteTheSameBytes)
{
	int i = 5;
	double d = 0.5;
	char s[3] = { 'a', 'b', 'c' };

	void *variadic;
	size_t variadic_size;
	starpu_codelet_pack_args(&variadic, &variadic_size, STARPU_VALUE, &i, sizeof(i), STARPU_VALUE, &d, sizeof(d),
				 STARPU_VALUE, s, sizeof(s), 0);

	starpu_codelet_pack_arg_data state;
	starpu_codelet_pack_arg_init(&state);
	starpu_codelet_pack_arg(&state, &i, sizeof(i));
	starpu_codelet_pack_arg(&state, &d, sizeof(d));
	starpu_codelet_pack_arg(&state, s, sizeof(s));
	void *incremental;
	size_t incremental_size;
	starpu_codelet_pack_arg_fini(&state, &incremental, &incremental_size);

	ASSERT_EQ(variadic_size, incremental_size);
	EXPECT_EQ(std::memcmp(variadic, incremental, variadic_size), 0);

	// Each form reads the other's output.
	int i2 = 0;
	double d2 = 0;
	char s2[3] = {};
	starpu_codelet_unpack_args(incremental, &i2, &d2, s2, 0);
	EXPECT_EQ(i2, 5);
	EXPECT_EQ(d2, 0.5);
	EXPECT_EQ(std::memcmp(s, s2, 3), 0);

	starpu_codelet_pack_arg_data in;
	starpu_codelet_unpack_arg_init(&in, variadic, variadic_size);
	i2 = 0;
	d2 = 0;
	starpu_codelet_unpack_arg(&in, &i2, sizeof(i2));
	starpu_codelet_unpack_arg(&in, &d2, sizeof(d2));
	starpu_codelet_unpack_arg(&in, s2, sizeof(s2));
	starpu_codelet_unpack_arg_fini(&in);
	EXPECT_EQ(i2, 5);
	EXPECT_EQ(d2, 0.5);

	std::free(variadic);
	std::free(incremental);
}

TEST(PackArgs, ZeroSizedValue)
{
	int a = 1, b = 2;
	void *buffer;
	size_t size;
	starpu_codelet_pack_args(&buffer, &size, STARPU_VALUE, &a, sizeof(a), STARPU_VALUE, NULL, (size_t)0,
				 STARPU_VALUE, &b, sizeof(b), 0);
	ASSERT_NE(buffer, nullptr);
	starpu_codelet_pack_arg_data in;
	starpu_codelet_unpack_arg_init(&in, buffer, size);
	int a2 = 0, b2 = 0;
	starpu_codelet_unpack_arg(&in, &a2, sizeof(a2));
	void *empty;
	size_t empty_size = 99;
	starpu_codelet_pick_arg(&in, &empty, &empty_size);
	EXPECT_EQ(empty_size, 0u);
	starpu_codelet_unpack_arg(&in, &b2, sizeof(b2));
	EXPECT_EQ(a2, 1);
	EXPECT_EQ(b2, 2);
	std::free(buffer);
}

TEST(PackArgs, NothingPackedGivesNoBuffer)
{
	void *buffer = &buffer;
	size_t size = 123;
	starpu_codelet_pack_args(&buffer, &size, 0);
	EXPECT_EQ(buffer, nullptr);
	EXPECT_EQ(size, 0u);

	starpu_codelet_pack_arg_data state;
	starpu_codelet_pack_arg_init(&state);
	buffer = &buffer;
	starpu_codelet_pack_arg_fini(&state, &buffer, &size);
	EXPECT_EQ(buffer, nullptr);
	EXPECT_EQ(size, 0u);

	// Unpacking nothing is harmless.
	int untouched = 4;
	starpu_codelet_unpack_args(NULL, &untouched, 0);
	EXPECT_EQ(untouched, 4);
}

TEST(PackArgs, PackArgsSkipsTheOtherKinds)
{
	int x = 11;
	double flops = 1e9;
	void *buffer;
	size_t size;
	starpu_codelet_pack_args(&buffer, &size, STARPU_PRIORITY, 3, STARPU_NAME, "n", STARPU_VALUE, &x, sizeof(x),
				 STARPU_FLOPS, flops, STARPU_RW, fake_handle(1), STARPU_TAG, (starpu_tag_t)5, 0);
	ASSERT_NE(buffer, nullptr);
	int nargs;
	std::memcpy(&nargs, buffer, sizeof(nargs));
	EXPECT_EQ(nargs, 1);
	int x2 = 0;
	starpu_codelet_unpack_args(buffer, &x2, 0);
	EXPECT_EQ(x2, 11);
	std::free(buffer);
}

TEST(PackArgs, PackArgsUnknownKindGivesNoBuffer)
{
	int x = 1;
	void *buffer = &buffer;
	size_t size = 5;
	std::string err = stderr_of([&] {
		starpu_codelet_pack_args(&buffer, &size, STARPU_VALUE, &x, sizeof(x), STARPU_SHIFTED_MODE_MAX, 0);
	});
	EXPECT_EQ(buffer, nullptr);
	EXPECT_EQ(size, 0u);
	EXPECT_TRUE(contains(err, "unknown argument kind")) << err;
}

TEST(PackArgs, CopyleftKeepsTheRestPacked)
{
	int a = 1;
	double b = 2.5;
	Pod c = kPod;
	void *buffer;
	size_t size;
	starpu_codelet_pack_args(&buffer, &size, STARPU_VALUE, &a, sizeof(a), STARPU_VALUE, &b, sizeof(b),
				 STARPU_VALUE, &c, sizeof(c), 0);

	int a2 = 0;
	std::vector<char> left(size);
	starpu_codelet_unpack_args_and_copyleft(buffer, left.data(), left.size(), &a2, 0);
	EXPECT_EQ(a2, 1);
	int nleft;
	std::memcpy(&nleft, left.data(), sizeof(nleft));
	EXPECT_EQ(nleft, 2);

	double b2 = 0;
	Pod c2 = {};
	starpu_codelet_unpack_args(left.data(), &b2, &c2, 0);
	EXPECT_EQ(b2, 2.5);
	EXPECT_TRUE(c2 == kPod);

	// Everything read: an empty packed buffer is left.
	int a3 = 0;
	double b3 = 0;
	Pod c3 = {};
	std::memset(left.data(), 0x7f, left.size());
	starpu_codelet_unpack_args_and_copyleft(buffer, left.data(), left.size(), &a3, &b3, &c3, 0);
	std::memcpy(&nleft, left.data(), sizeof(nleft));
	EXPECT_EQ(nleft, 0);
	EXPECT_TRUE(c3 == kPod);

	// A buffer too small for the rest is reported and holds nothing.
	char small[sizeof(int) + 2];
	std::string err = stderr_of([&] { starpu_codelet_unpack_args_and_copyleft(buffer, small, sizeof(small), &a2, 0); });
	EXPECT_TRUE(contains(err, "cannot hold")) << err;
	std::memcpy(&nleft, small, sizeof(nleft));
	EXPECT_EQ(nleft, 0);

	// A zero size means "do not copy".
	err = stderr_of([&] { starpu_codelet_unpack_args_and_copyleft(buffer, NULL, 0, &a2, 0); });
	EXPECT_EQ(err, "");
	std::free(buffer);
}

TEST(PackArgs, WrongSizeIsReported)
{
	int64_t big = 0x1122334455667788LL;
	void *buffer;
	size_t size;
	starpu_codelet_pack_args(&buffer, &size, STARPU_VALUE, &big, sizeof(big), 0);
	starpu_codelet_pack_arg_data in;
	starpu_codelet_unpack_arg_init(&in, buffer, size);
	int small = 0;
	std::string err = stderr_of([&] { starpu_codelet_unpack_arg(&in, &small, sizeof(small)); });
	EXPECT_TRUE(contains(err, "packed with 8 bytes but 4 are asked")) << err;
	starpu_codelet_unpack_arg_fini(&in);
	std::free(buffer);
}

TEST(PackArgs, ReadingPastTheEndIsReported)
{
	int a = 3;
	void *buffer;
	size_t size;
	starpu_codelet_pack_args(&buffer, &size, STARPU_VALUE, &a, sizeof(a), 0);
	starpu_codelet_pack_arg_data in;
	starpu_codelet_unpack_arg_init(&in, buffer, size);
	int a2 = 0, extra = 77;
	starpu_codelet_unpack_arg(&in, &a2, sizeof(a2));
	std::string err = stderr_of([&] { starpu_codelet_unpack_arg(&in, &extra, sizeof(extra)); });
	EXPECT_EQ(a2, 3);
	EXPECT_EQ(extra, 77);
	EXPECT_TRUE(contains(err, "no value left")) << err;

	void *dup = &dup;
	size_t dup_size = 5;
	err = stderr_of([&] { starpu_codelet_dup_arg(&in, &dup, &dup_size); });
	EXPECT_EQ(dup, nullptr);
	EXPECT_EQ(dup_size, 0u);
	starpu_codelet_unpack_arg_fini(&in);
	std::free(buffer);
}

TEST(PackArgs, TruncatedBufferIsReported)
{
	double d = 1.0;
	void *buffer;
	size_t size;
	starpu_codelet_pack_args(&buffer, &size, STARPU_VALUE, &d, sizeof(d), 0);
	starpu_codelet_pack_arg_data in;
	starpu_codelet_unpack_arg_init(&in, buffer, size - 1);
	double d2 = -4;
	std::string err = stderr_of([&] { starpu_codelet_unpack_arg(&in, &d2, sizeof(d2)); });
	EXPECT_EQ(d2, -4);
	EXPECT_TRUE(contains(err, "runs past the end")) << err;
	std::free(buffer);
}

TEST(PackArgs, NullValueWithSizeDropsTheBuffer)
{
	int a = 1;
	starpu_codelet_pack_arg_data state;
	starpu_codelet_pack_arg_init(&state);
	starpu_codelet_pack_arg(&state, &a, sizeof(a));
	std::string err = stderr_of([&] { starpu_codelet_pack_arg(&state, NULL, 8); });
	EXPECT_TRUE(contains(err, "NULL pointer")) << err;
	starpu_codelet_pack_arg(&state, &a, sizeof(a));
	void *buffer = &buffer;
	size_t size = 1;
	starpu_codelet_pack_arg_fini(&state, &buffer, &size);
	EXPECT_EQ(buffer, nullptr);
	EXPECT_EQ(size, 0u);
}

// ===================================================== starpu_task_set()

TEST(TaskSet, ScalarKinds)
{
	starpu_codelet cl = make_codelet("scalars", 0);
	starpu_profiling_task_info info;
	uint32_t workerids[2] = { 0x5, 0x0 };
	int sched_data;
	int callback_arg, prologue_arg, pop_arg, epilogue_arg;
	unsigned char seq_flags[1] = { 1 };

	starpu_task t = blank_task();
	int ret = starpu_task_set(&t, &cl,
				  STARPU_PRIORITY, 4,
				  STARPU_NAME, "my task",
				  STARPU_FLOPS, 2.5e9,
				  STARPU_TAG, (starpu_tag_t)0x100000001ULL,
				  STARPU_EXECUTE_ON_WORKER, 3,
				  STARPU_EXECUTE_WHERE, STARPU_CPU,
				  STARPU_WORKER_ORDER, 2u,
				  STARPU_SCHED_CTX, 0u,
				  STARPU_HYPERVISOR_TAG, 9,
				  STARPU_POSSIBLY_PARALLEL, 1u,
				  STARPU_TASK_COLOR, 0x00ff00,
				  STARPU_TASK_SYNCHRONOUS, 1,
				  STARPU_SEQUENTIAL_CONSISTENCY, 0u,
				  STARPU_TASK_NO_SUBMITORDER, 1u,
				  STARPU_TASK_PROFILING_INFO, &info,
				  STARPU_TASK_SCHED_DATA, &sched_data,
				  STARPU_TASK_FILE, "file.c",
				  STARPU_TASK_LINE, 77,
				  STARPU_TASK_WORKERIDS, 2u, workerids,
				  STARPU_CALLBACK_WITH_ARG_NFREE, noop_callback, &callback_arg,
				  STARPU_PROLOGUE_CALLBACK, other_callback,
				  STARPU_PROLOGUE_CALLBACK_ARG_NFREE, &prologue_arg,
				  STARPU_PROLOGUE_CALLBACK_POP, noop_callback,
				  STARPU_PROLOGUE_CALLBACK_POP_ARG_NFREE, &pop_arg,
				  STARPU_EPILOGUE_CALLBACK, other_callback,
				  STARPU_EPILOGUE_CALLBACK_ARG, &epilogue_arg,
				  STARPU_EXECUTE_ON_NODE, 1,
				  STARPU_EXECUTE_ON_DATA, fake_handle(0),
				  STARPU_NODE_SELECTION_POLICY, 0,
				  STARPU_HANDLES_SEQUENTIAL_CONSISTENCY, seq_flags,
				  0);
	ASSERT_EQ(ret, 0);
	EXPECT_EQ(t.cl, &cl);
	EXPECT_EQ(t.priority, 4);
	EXPECT_STREQ(t.name, "my task");
	EXPECT_EQ(t.flops, 2.5e9);
	EXPECT_EQ(t.tag_id, 0x100000001ULL);
	EXPECT_EQ(t.use_tag, 1u);
	EXPECT_EQ(t.execute_on_a_specific_worker, 1u);
	EXPECT_EQ(t.workerid, 3u);
	EXPECT_EQ(t.where, (int32_t)STARPU_CPU);
	EXPECT_EQ(t.workerorder, 2u);
	EXPECT_EQ(t.sched_ctx, 0u);
	EXPECT_EQ(t.hypervisor_tag, 9);
	EXPECT_EQ(t.possibly_parallel, 1u);
	EXPECT_EQ(t.color, 0x00ff00u);
	EXPECT_EQ(t.synchronous, 1u);
	EXPECT_EQ(t.sequential_consistency, 0u);
	EXPECT_EQ(t.no_submitorder, 1u);
	EXPECT_EQ(t.profiling_info, &info);
	EXPECT_EQ(t.sched_data, &sched_data);
	EXPECT_STREQ(t.file, "file.c");
	EXPECT_EQ(t.line, 77);
	EXPECT_EQ(t.workerids_len, 2u);
	ASSERT_NE(t.workerids, nullptr);
	EXPECT_EQ(t.workerids[0], 0x5u);
	EXPECT_EQ(t.callback_func, noop_callback);
	EXPECT_EQ(t.callback_arg, &callback_arg);
	EXPECT_EQ(t.callback_arg_free, 0u);
	EXPECT_EQ(t.prologue_callback_func, other_callback);
	EXPECT_EQ(t.prologue_callback_arg, &prologue_arg);
	EXPECT_EQ(t.prologue_callback_arg_free, 0u);
	EXPECT_EQ(t.prologue_callback_pop_func, noop_callback);
	EXPECT_EQ(t.prologue_callback_pop_arg, &pop_arg);
	EXPECT_EQ(t.prologue_callback_pop_arg_free, 0u);
	EXPECT_EQ(t.epilogue_callback_func, other_callback);
	EXPECT_EQ(t.epilogue_callback_arg, &epilogue_arg);
	EXPECT_EQ(t.cl_arg, nullptr);
	EXPECT_EQ(t.cl_arg_free, 0u);
	EXPECT_EQ(t.dyn_handles, nullptr);
}

TEST(TaskSet, FreeingKindsSetTheFreeFlags)
{
	starpu_codelet cl = make_codelet("free flags", 0);
	int a, b, c, d;
	starpu_task t = blank_task();
	ASSERT_EQ(starpu_task_set(&t, &cl, STARPU_CALLBACK, noop_callback, STARPU_CALLBACK_ARG, &a,
				  STARPU_PROLOGUE_CALLBACK_ARG, &b, STARPU_PROLOGUE_CALLBACK_POP_ARG, &c, 0), 0);
	EXPECT_EQ(t.callback_func, noop_callback);
	EXPECT_EQ(t.callback_arg, &a);
	EXPECT_EQ(t.callback_arg_free, 1u);
	EXPECT_EQ(t.prologue_callback_arg_free, 1u);
	EXPECT_EQ(t.prologue_callback_pop_arg_free, 1u);

	t = blank_task();
	ASSERT_EQ(starpu_task_set(&t, &cl, STARPU_CALLBACK_WITH_ARG, other_callback, &d, 0), 0);
	EXPECT_EQ(t.callback_func, other_callback);
	EXPECT_EQ(t.callback_arg, &d);
	EXPECT_EQ(t.callback_arg_free, 1u);

	ASSERT_EQ(starpu_task_set(&t, &cl, STARPU_CALLBACK_ARG_NFREE, &a, 0), 0);
	EXPECT_EQ(t.callback_arg, &a);
	EXPECT_EQ(t.callback_arg_free, 0u);
}

TEST(TaskSet, TagOnlyAndAnyWorker)
{
	starpu_codelet cl = make_codelet("tag only", 0);
	starpu_task t = blank_task();
	ASSERT_EQ(starpu_task_set(&t, &cl, STARPU_TAG_ONLY, (starpu_tag_t)12, STARPU_EXECUTE_ON_WORKER, -1, 0), 0);
	EXPECT_EQ(t.tag_id, 12u);
	EXPECT_EQ(t.use_tag, 0u);
	EXPECT_EQ(t.execute_on_a_specific_worker, 0u);
}

TEST(TaskSet, ValuesBecomeClArg)
{
	starpu_codelet cl = make_codelet("values", 0);
	int i = 12;
	Pod pod = kPod;
	starpu_task t = blank_task();
	ASSERT_EQ(starpu_task_set(&t, &cl, STARPU_VALUE, &i, sizeof(i), STARPU_VALUE, &pod, sizeof(pod), 0), 0);
	ASSERT_NE(t.cl_arg, nullptr);
	EXPECT_EQ(t.cl_arg_free, 1u);
	EXPECT_EQ(t.cl_arg_size, sizeof(int) + 2 * sizeof(size_t) + sizeof(i) + sizeof(pod));
	int i2 = 0;
	Pod pod2 = {};
	starpu_codelet_unpack_args(t.cl_arg, &i2, &pod2, 0);
	EXPECT_EQ(i2, 12);
	EXPECT_TRUE(pod2 == kPod);
	release(t);
}

TEST(TaskSet, ClArgs)
{
	starpu_codelet cl = make_codelet("cl args", 0);
	char raw[10] = "raw bytes";
	starpu_task t = blank_task();
	ASSERT_EQ(starpu_task_set(&t, &cl, STARPU_CL_ARGS_NFREE, raw, sizeof(raw), 0), 0);
	EXPECT_EQ(t.cl_arg, raw);
	EXPECT_EQ(t.cl_arg_size, sizeof(raw));
	EXPECT_EQ(t.cl_arg_free, 0u);

	void *owned = std::malloc(16);
	t = blank_task();
	ASSERT_EQ(starpu_task_set(&t, &cl, STARPU_CL_ARGS, owned, (size_t)16, 0), 0);
	EXPECT_EQ(t.cl_arg, owned);
	EXPECT_EQ(t.cl_arg_size, 16u);
	EXPECT_EQ(t.cl_arg_free, 1u);
	release(t);
}

TEST(TaskSet, ValueAndClArgsConflict)
{
	starpu_codelet cl = make_codelet("conflict", 0);
	int i = 1;
	char raw[4];
	starpu_task t = blank_task();
	starpu_task before;
	std::memcpy(&before, &t, sizeof(t));
	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_task_set(&t, &cl, STARPU_VALUE, &i, sizeof(i), STARPU_CL_ARGS_NFREE, raw, sizeof(raw), 0), -EINVAL);
	});
	EXPECT_TRUE(contains(err, "STARPU_VALUE and STARPU_CL_ARGS")) << err;
	EXPECT_EQ(std::memcmp(&t, &before, sizeof(t)), 0);

	err = stderr_of([&] {
		EXPECT_EQ(starpu_task_set(&t, &cl, STARPU_CL_ARGS_NFREE, raw, sizeof(raw), STARPU_VALUE, &i, sizeof(i), 0), -EINVAL);
	});
	EXPECT_TRUE(contains(err, "STARPU_VALUE and STARPU_CL_ARGS")) << err;
	EXPECT_EQ(std::memcmp(&t, &before, sizeof(t)), 0);
}

TEST(TaskSet, UnknownKindLeavesTheTaskAlone)
{
	starpu_codelet cl = make_codelet("my_codelet", 1);
	cl.modes[0] = STARPU_RW;
	int i = 3;
	starpu_task t = blank_task();
	starpu_task before;
	std::memcpy(&before, &t, sizeof(t));
	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_task_set(&t, &cl, STARPU_VALUE, &i, sizeof(i), STARPU_RW, fake_handle(0),
					  STARPU_PRIORITY, 2, 0x7f000000, 0), -EINVAL);
	});
	EXPECT_EQ(std::memcmp(&t, &before, sizeof(t)), 0);
	EXPECT_TRUE(contains(err, "[astrolabe] error: starpu_task_set: unknown argument kind 0x7f000000 after 3 arguments for codelet 'my_codelet': terminate the list with 0"))
		<< err;
	EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1);

	// A kind that mixes an access mode with a kind is not a mode.
	err = stderr_of([&] { EXPECT_EQ(starpu_task_set(&t, &cl, STARPU_VALUE | STARPU_R, &i, 0), -EINVAL); });
	EXPECT_TRUE(contains(err, "unknown argument kind")) << err;
}

TEST(TaskSet, FixedCodeletHandles)
{
	starpu_codelet cl = make_codelet("fixed", 3);
	cl.modes[0] = STARPU_R;
	cl.modes[1] = STARPU_RW;
	cl.modes[2] = (starpu_data_access_mode)(STARPU_RW | STARPU_COMMUTE);
	starpu_task t = blank_task();
	ASSERT_EQ(starpu_task_set(&t, &cl, STARPU_R, fake_handle(0), STARPU_RW, fake_handle(1),
				  STARPU_RW | STARPU_COMMUTE, fake_handle(2), 0), 0);
	EXPECT_EQ(STARPU_TASK_GET_NBUFFERS(&t), 3u);
	for (unsigned i = 0; i < 3; i++)
	{
		EXPECT_EQ(STARPU_TASK_GET_HANDLE(&t, i), fake_handle(i));
		EXPECT_EQ(STARPU_TASK_GET_MODE(&t, i), cl.modes[i]);
	}
	EXPECT_EQ(t.dyn_handles, nullptr);
}

TEST(TaskSet, FixedCodeletModeMismatch)
{
	starpu_codelet cl = make_codelet("scale", 2);
	cl.modes[0] = STARPU_R;
	cl.modes[1] = STARPU_RW;
	starpu_task t = blank_task();
	starpu_task before;
	std::memcpy(&before, &t, sizeof(t));
	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_task_set(&t, &cl, STARPU_R, fake_handle(0), STARPU_W, fake_handle(1), 0), -EINVAL);
	});
	EXPECT_EQ(std::memcmp(&t, &before, sizeof(t)), 0);
	EXPECT_TRUE(contains(err, "codelet 'scale' declares access mode STARPU_RW for buffer 1 but STARPU_W was given")) << err;
	EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1);
}

TEST(TaskSet, FixedCodeletCountMismatch)
{
	starpu_codelet cl = make_codelet("two", 2);
	cl.modes[0] = STARPU_R;
	cl.modes[1] = STARPU_R;
	starpu_task t = blank_task();
	std::string err = stderr_of([&] { EXPECT_EQ(starpu_task_set(&t, &cl, STARPU_R, fake_handle(0), 0), -EINVAL); });
	EXPECT_TRUE(contains(err, "nbuffers = 2 but 1 handles")) << err;
	err = stderr_of([&] {
		EXPECT_EQ(starpu_task_set(&t, &cl, STARPU_R, fake_handle(0), STARPU_R, fake_handle(1), STARPU_R, fake_handle(2), 0), -EINVAL);
	});
	EXPECT_TRUE(contains(err, "nbuffers = 2 but more handles")) << err;
}

TEST(TaskSet, CodeletWithoutModesAdoptsTheFirstOnes)
{
	starpu_codelet cl = make_codelet("modeless", 1);
	starpu_task t = blank_task();
	ASSERT_EQ(starpu_task_set(&t, &cl, STARPU_RW, fake_handle(0), 0), 0);
	EXPECT_EQ(cl.modes[0], STARPU_RW);
	std::string err = stderr_of([&] { EXPECT_EQ(starpu_task_set(&t, &cl, STARPU_R, fake_handle(0), 0), -EINVAL); });
	EXPECT_TRUE(contains(err, "modeless")) << err;
}

TEST(TaskSet, VariableCodeletTakesTheGivenModes)
{
	starpu_codelet cl = make_codelet("variable", STARPU_VARIABLE_NBUFFERS);
	starpu_data_descr descrs[2] = { { fake_handle(2), STARPU_W }, { fake_handle(3), STARPU_REDUX } };
	starpu_task t = blank_task();
	ASSERT_EQ(starpu_task_set(&t, &cl, STARPU_R, fake_handle(0), STARPU_SCRATCH, fake_handle(1),
				  STARPU_DATA_MODE_ARRAY, descrs, 2, 0), 0);
	EXPECT_EQ(t.nbuffers, 4);
	EXPECT_EQ(STARPU_TASK_GET_NBUFFERS(&t), 4u);
	const starpu_data_access_mode modes[4] = { STARPU_R, STARPU_SCRATCH, STARPU_W, STARPU_REDUX };
	for (unsigned i = 0; i < 4; i++)
	{
		EXPECT_EQ(STARPU_TASK_GET_HANDLE(&t, i), fake_handle(i));
		EXPECT_EQ(STARPU_TASK_GET_MODE(&t, i), modes[i]);
	}
}

TEST(TaskSet, DataArrayTakesTheCodeletModes)
{
	starpu_codelet cl = make_codelet("array", 3);
	cl.modes[0] = STARPU_R;
	cl.modes[1] = STARPU_W;
	cl.modes[2] = STARPU_RW;
	starpu_data_handle_t handles[2] = { fake_handle(1), fake_handle(2) };
	starpu_task t = blank_task();
	ASSERT_EQ(starpu_task_set(&t, &cl, STARPU_R, fake_handle(0), STARPU_DATA_ARRAY, handles, 2, 0), 0);
	for (unsigned i = 0; i < 3; i++)
	{
		EXPECT_EQ(STARPU_TASK_GET_HANDLE(&t, i), fake_handle(i));
		EXPECT_EQ(STARPU_TASK_GET_MODE(&t, i), cl.modes[i]);
	}

	// A variable codelet without modes cannot serve STARPU_DATA_ARRAY.
	starpu_codelet var = make_codelet("no modes", STARPU_VARIABLE_NBUFFERS);
	t = blank_task();
	std::string err = stderr_of([&] { EXPECT_EQ(starpu_task_set(&t, &var, STARPU_DATA_ARRAY, handles, 2, 0), -EINVAL); });
	EXPECT_TRUE(contains(err, "STARPU_DATA_MODE_ARRAY")) << err;

	// Empty arrays are fine; negative counts are not.
	starpu_codelet none = make_codelet("none", 0);
	EXPECT_EQ(starpu_task_set(&t, &none, STARPU_DATA_ARRAY, handles, 0, 0), 0);
	err = stderr_of([&] { EXPECT_EQ(starpu_task_set(&t, &none, STARPU_DATA_ARRAY, handles, -1, 0), -EINVAL); });
	EXPECT_FALSE(err.empty());
}

TEST(TaskSet, MoreThanNMaxBufsUsesDynamicArrays)
{
	const unsigned n = STARPU_NMAXBUFS + 5;
	starpu_codelet cl = make_codelet("many", STARPU_VARIABLE_NBUFFERS);
	std::vector<starpu_data_descr> descrs;
	for (unsigned i = 2; i < n; i++)
		descrs.push_back({ fake_handle(i), i % 2 ? STARPU_R : STARPU_RW });
	starpu_task t = blank_task();
	ASSERT_EQ(starpu_task_set(&t, &cl, STARPU_RW, fake_handle(0), STARPU_R, fake_handle(1),
				  STARPU_DATA_MODE_ARRAY, descrs.data(), (int)descrs.size(), 0), 0);
	EXPECT_EQ(t.nbuffers, (int)n);
	ASSERT_NE(t.dyn_handles, nullptr);
	ASSERT_NE(t.dyn_modes, nullptr);
	for (unsigned i = 0; i < n; i++)
	{
		EXPECT_EQ(t.dyn_handles[i], fake_handle(i));
		EXPECT_EQ(STARPU_TASK_GET_HANDLE(&t, i), fake_handle(i));
		EXPECT_EQ(STARPU_TASK_GET_MODE(&t, i), i % 2 ? STARPU_R : STARPU_RW);
	}
	release(t);

	// A fixed codelet with more than STARPU_NMAXBUFS buffers, modes in dyn_modes.
	std::vector<starpu_data_access_mode> cl_modes(n, STARPU_R);
	starpu_codelet fixed = make_codelet("many fixed", (int)n);
	fixed.dyn_modes = cl_modes.data();
	std::vector<starpu_data_handle_t> handles;
	for (unsigned i = 0; i < n; i++)
		handles.push_back(fake_handle(i));
	t = blank_task();
	ASSERT_EQ(starpu_task_set(&t, &fixed, STARPU_DATA_ARRAY, handles.data(), (int)n, 0), 0);
	ASSERT_NE(t.dyn_handles, nullptr);
	for (unsigned i = 0; i < n; i++)
	{
		EXPECT_EQ(STARPU_TASK_GET_HANDLE(&t, i), fake_handle(i));
		EXPECT_EQ(STARPU_TASK_GET_MODE(&t, i), STARPU_R);
	}
	release(t);
}

TEST(TaskSet, HandleErrors)
{
	starpu_task t = blank_task();
	std::string err = stderr_of([&] { EXPECT_EQ(starpu_task_set(&t, NULL, STARPU_R, fake_handle(0), 0), -EINVAL); });
	EXPECT_TRUE(contains(err, "without codelet")) << err;

	starpu_codelet cl = make_codelet("nullh", STARPU_VARIABLE_NBUFFERS);
	err = stderr_of([&] { EXPECT_EQ(starpu_task_set(&t, &cl, STARPU_R, (starpu_data_handle_t)NULL, 0), -EINVAL); });
	EXPECT_TRUE(contains(err, "NULL handle")) << err;

	starpu_data_descr bad = { fake_handle(0), STARPU_NONE };
	err = stderr_of([&] { EXPECT_EQ(starpu_task_set(&t, &cl, STARPU_DATA_MODE_ARRAY, &bad, 1, 0), -EINVAL); });
	EXPECT_TRUE(contains(err, "no valid access mode")) << err;

	// A task without codelet and without data is a valid synchronisation task.
	EXPECT_EQ(starpu_task_set(&t, NULL, STARPU_NAME, "sync", 0), 0);
	EXPECT_EQ(t.cl, nullptr);
}

// ==================================================== with the runtime

namespace {

class Runtime : public ::testing::Test
{
protected:
	void SetUp() override
	{
		int ret = starpu_init(NULL);
		if (ret == -ENODEV)
			GTEST_SKIP() << "no worker available";
		ASSERT_EQ(ret, 0);
		started_ = true;
	}
	void TearDown() override
	{
		if (started_)
		{
			EXPECT_EQ(starpu_task_wait_for_all(), 0);
			starpu_shutdown();
		}
	}
	bool started_ = false;
};

// *x = *x * factor + offset, factor and offset from STARPU_VALUE.
void scale_cpu(void *buffers[], void *cl_arg)
{
	int factor;
	double offset;
	starpu_codelet_unpack_args(cl_arg, &factor, &offset, 0);
	double *x = reinterpret_cast<double *>(STARPU_VARIABLE_GET_PTR(buffers[0]));
	*x = *x * factor + offset;
}

// What a codelet saw of its own task.
struct Seen
{
	std::atomic<int> runs{ 0 };
	int priority = -100;
	unsigned nbuffers = 0;
	int worker = -2;
	std::string name;
};

void observe_cpu(void *[], void *cl_arg)
{
	Seen *seen;
	starpu_codelet_unpack_args(cl_arg, &seen, 0);
	starpu_task *task = starpu_task_get_current();
	seen->priority = task->priority;
	seen->nbuffers = STARPU_TASK_GET_NBUFFERS(task);
	seen->worker = starpu_worker_get_id();
	seen->name = task->name ? task->name : "";
	seen->runs++;
}

// Adds i + 1 to the i-th variable (ints), whatever their count.
void add_index_cpu(void *buffers[], void *)
{
	starpu_task *task = starpu_task_get_current();
	unsigned n = STARPU_TASK_GET_NBUFFERS(task);
	for (unsigned i = 0; i < n; i++)
		*reinterpret_cast<int *>(STARPU_VARIABLE_GET_PTR(buffers[i])) += (int)i + 1;
}

void count_callback(void *arg)
{
	static_cast<std::atomic<int> *>(arg)->fetch_add(1);
}

std::atomic<int> g_freed_callback_runs{ 0 };
void freed_arg_callback(void *arg)
{
	EXPECT_EQ(*static_cast<int *>(arg), 1234);
	g_freed_callback_runs++;
}

std::atomic<int> g_order{ 0 };
void record_order_cpu(void *[], void *cl_arg)
{
	int *slot;
	starpu_codelet_unpack_args(cl_arg, &slot, 0);
	*slot = ++g_order;
}

void nothing_cpu(void *[], void *) {}

} // namespace

TEST_F(Runtime, ValuesReachTheCodelet)
{
	starpu_codelet cl = make_codelet("scale", 1);
	cl.cpu_funcs[0] = scale_cpu;
	cl.modes[0] = STARPU_RW;
	double x = 2.0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	int factor = 3;
	double offset = 0.5;
	ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, h, STARPU_VALUE, &factor, sizeof(factor),
				     STARPU_VALUE, &offset, sizeof(offset), 0), 0);
	ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, h, STARPU_VALUE, &factor, sizeof(factor),
				     STARPU_VALUE, &offset, sizeof(offset), 0), 0);
	EXPECT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_unregister(h);
	EXPECT_EQ(x, (2.0 * 3 + 0.5) * 3 + 0.5);
}

TEST_F(Runtime, SynchronousTaskHasRunWhenInsertReturns)
{
	starpu_codelet cl = make_codelet("scale", 1);
	cl.cpu_funcs[0] = scale_cpu;
	cl.modes[0] = STARPU_RW;
	double x = 1.0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	int factor = 5;
	double offset = 0;
	ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, h, STARPU_VALUE, &factor, sizeof(factor),
				     STARPU_VALUE, &offset, sizeof(offset), STARPU_TASK_SYNCHRONOUS, 1, 0), 0);
	ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
	EXPECT_EQ(x, 5.0);
	starpu_data_release(h);
	starpu_data_unregister(h);
}

TEST_F(Runtime, ClArgsReachTheCodelet)
{
	starpu_codelet cl = make_codelet("scale", 1);
	cl.cpu_funcs[0] = scale_cpu;
	cl.modes[0] = STARPU_RW;
	double x = 1.0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	int factor = 4;
	double offset = 1;
	void *arg;
	size_t arg_size;
	starpu_codelet_pack_args(&arg, &arg_size, STARPU_VALUE, &factor, sizeof(factor), STARPU_VALUE, &offset, sizeof(offset), 0);
	ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, h, STARPU_CL_ARGS, arg, arg_size, 0), 0); // freed with the task
	EXPECT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_unregister(h);
	EXPECT_EQ(x, 5.0);
}

TEST_F(Runtime, CallbacksAreCalled)
{
	starpu_codelet cl = make_codelet("nothing", 0);
	cl.cpu_funcs[0] = nothing_cpu;
	std::atomic<int> callbacks{ 0 }, prologues{ 0 }, pops{ 0 };
	g_freed_callback_runs = 0;
	for (int i = 0; i < 4; i++)
	{
		ASSERT_EQ(starpu_task_insert(&cl, STARPU_CALLBACK_WITH_ARG_NFREE, count_callback, &callbacks,
					     STARPU_PROLOGUE_CALLBACK, count_callback, STARPU_PROLOGUE_CALLBACK_ARG_NFREE, &prologues,
					     STARPU_PROLOGUE_CALLBACK_POP, count_callback, STARPU_PROLOGUE_CALLBACK_POP_ARG_NFREE, &pops,
					     0), 0);
		int *owned = static_cast<int *>(std::malloc(sizeof(int)));
		*owned = 1234;
		ASSERT_EQ(starpu_task_insert(&cl, STARPU_CALLBACK, freed_arg_callback, STARPU_CALLBACK_ARG, owned, 0), 0);
	}
	EXPECT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(callbacks.load(), 4);
	EXPECT_EQ(prologues.load(), 4);
	EXPECT_EQ(pops.load(), 4);
	EXPECT_EQ(g_freed_callback_runs.load(), 4);
}

TEST_F(Runtime, PriorityNameAndWorkerAreSeenByTheCodelet)
{
	starpu_codelet cl = make_codelet("observe", 0);
	cl.cpu_funcs[0] = observe_cpu;
	Seen seen;
	Seen *p = &seen;
	ASSERT_EQ(starpu_task_insert(&cl, STARPU_VALUE, &p, sizeof(p), STARPU_PRIORITY, 3, STARPU_NAME, "observed",
				     STARPU_EXECUTE_ON_WORKER, 0, 0), 0);
	EXPECT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(seen.runs.load(), 1);
	EXPECT_EQ(seen.priority, 3);
	EXPECT_EQ(seen.name, "observed");
	EXPECT_EQ(seen.worker, 0);
}

TEST_F(Runtime, DataArrayCounts)
{
	const int n = 3;
	int values[n] = { 0, 0, 0 };
	starpu_data_handle_t handles[n];
	for (int i = 0; i < n; i++)
		starpu_variable_data_register(&handles[i], STARPU_MAIN_RAM, (uintptr_t)&values[i], sizeof(int));

	// Fixed codelet: STARPU_DATA_ARRAY with the codelet's modes.
	starpu_codelet fixed = make_codelet("add fixed", n);
	fixed.cpu_funcs[0] = add_index_cpu;
	for (int i = 0; i < n; i++)
		fixed.modes[i] = STARPU_RW;
	ASSERT_EQ(starpu_task_insert(&fixed, STARPU_DATA_ARRAY, handles, n, 0), 0);

	// Variable codelet: STARPU_DATA_MODE_ARRAY; the task reports 2 buffers.
	starpu_codelet variable = make_codelet("add variable", STARPU_VARIABLE_NBUFFERS);
	variable.cpu_funcs[0] = add_index_cpu;
	starpu_data_descr descrs[2] = { { handles[2], STARPU_RW }, { handles[0], STARPU_RW } };
	ASSERT_EQ(starpu_task_insert(&variable, STARPU_DATA_MODE_ARRAY, descrs, 2, 0), 0);

	EXPECT_EQ(starpu_task_wait_for_all(), 0);
	for (int i = 0; i < n; i++)
		starpu_data_unregister(handles[i]);
	EXPECT_EQ(values[0], 1 + 2);
	EXPECT_EQ(values[1], 2);
	EXPECT_EQ(values[2], 3 + 1);
}

TEST_F(Runtime, MoreThanNMaxBufsHandles)
{
	const int n = STARPU_NMAXBUFS + 4;
	std::vector<int> values(n, 100);
	std::vector<starpu_data_handle_t> handles(n);
	for (int i = 0; i < n; i++)
		starpu_variable_data_register(&handles[i], STARPU_MAIN_RAM, (uintptr_t)&values[i], sizeof(int));

	starpu_codelet cl = make_codelet("add many", STARPU_VARIABLE_NBUFFERS);
	cl.cpu_funcs[0] = add_index_cpu;
	std::vector<starpu_data_descr> rest;
	for (int i = 2; i < n; i++)
		rest.push_back({ handles[i], STARPU_RW });

	starpu_task *built = starpu_task_build(&cl, STARPU_RW, handles[0], STARPU_RW, handles[1],
						STARPU_DATA_MODE_ARRAY, rest.data(), (int)rest.size(), 0);
	ASSERT_NE(built, nullptr);
	EXPECT_EQ(built->nbuffers, n);
	ASSERT_NE(built->dyn_handles, nullptr);
	EXPECT_EQ(built->dyn_handles[n - 1], handles[n - 1]);
	ASSERT_EQ(starpu_task_submit(built), 0);

	ASSERT_EQ(starpu_task_insert(&cl, STARPU_RW, handles[0], STARPU_RW, handles[1],
				     STARPU_DATA_MODE_ARRAY, rest.data(), (int)rest.size(), 0), 0);
	EXPECT_EQ(starpu_task_wait_for_all(), 0);
	for (int i = 0; i < n; i++)
	{
		starpu_data_unregister(handles[i]);
		EXPECT_EQ(values[i], 100 + 2 * (i + 1)) << i;
	}
}

TEST_F(Runtime, BuildFillsTheTaskWithoutSubmitting)
{
	starpu_codelet cl = make_codelet("observe", 0);
	cl.cpu_funcs[0] = observe_cpu;
	Seen seen;
	Seen *p = &seen;
	starpu_task *task = starpu_task_build(&cl, STARPU_VALUE, &p, sizeof(p), STARPU_PRIORITY, 2,
					      STARPU_FLOPS, 1e6, STARPU_NAME, "built", 0);
	ASSERT_NE(task, nullptr);
	EXPECT_EQ(task->cl, &cl);
	EXPECT_EQ(task->priority, 2);
	EXPECT_EQ(task->flops, 1e6);
	EXPECT_STREQ(task->name, "built");
	EXPECT_EQ(task->cl_arg_free, 1u);
	EXPECT_EQ(seen.runs.load(), 0);
	ASSERT_EQ(starpu_task_submit(task), 0);
	EXPECT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(seen.runs.load(), 1);
	EXPECT_EQ(seen.priority, 2);
}

TEST_F(Runtime, UnknownKindIsRefused)
{
	starpu_codelet cl = make_codelet("observe", 0);
	cl.cpu_funcs[0] = observe_cpu;
	Seen seen;
	Seen *p = &seen;
	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_task_insert(&cl, STARPU_VALUE, &p, sizeof(p), STARPU_SHIFTED_MODE_MAX, 1, 0), -EINVAL);
		EXPECT_EQ(starpu_task_build(&cl, STARPU_PRIORITY, 1, 0x40000000, 0), nullptr);
	});
	EXPECT_TRUE(contains(err, "starpu_task_insert: unknown argument kind 0x680000 after 1 arguments for codelet 'observe'")) << err;
	EXPECT_TRUE(contains(err, "starpu_task_build: unknown argument kind 0x40000000")) << err;
	EXPECT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(seen.runs.load(), 0);
}

std::atomic<int> g_bubble_calls{0};

int always_bubble(struct starpu_task *, void *)
{
	g_bubble_calls++;
	return 1;
}

void bubble_dag(struct starpu_task *, void *)
{
	g_bubble_calls++;
}

// Hierarchical DAGs are StarPU's --enable-bubble builds only: their insert arguments are refused with
// a message, their fields exist, start empty and are never called, and such a task runs whole.
TEST_F(Runtime, BubbleArgumentsAreRefusedAndBubbleFieldsRunTheTaskWhole)
{
	starpu_codelet cl = make_codelet("observe", 0);
	cl.cpu_funcs[0] = observe_cpu;
	Seen seen;
	Seen *p = &seen;
	const int kinds[] = { STARPU_BUBBLE_FUNC, STARPU_BUBBLE_FUNC_ARG, STARPU_BUBBLE_GEN_DAG_FUNC, STARPU_BUBBLE_GEN_DAG_FUNC_ARG,
			      STARPU_BUBBLE_PARENT };
	const char *names[] = { "STARPU_BUBBLE_FUNC", "STARPU_BUBBLE_FUNC_ARG", "STARPU_BUBBLE_GEN_DAG_FUNC", "STARPU_BUBBLE_GEN_DAG_FUNC_ARG",
				"STARPU_BUBBLE_PARENT" };
	for (int i = 0; i < 5; i++) {
		std::string err = stderr_of([&] {
			EXPECT_EQ(starpu_task_insert(&cl, STARPU_VALUE, &p, sizeof(p), kinds[i], nullptr, 0), -EINVAL);
		});
		EXPECT_TRUE(contains(err, std::string("starpu_task_insert: ") + names[i] + " for codelet 'observe': hierarchical DAGs (bubbles) need a StarPU built with --enable-bubble"))
			<< err;
	}
	EXPECT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(seen.runs.load(), 0);

	g_bubble_calls = 0;
	cl.bubble_func = always_bubble;
	cl.bubble_gen_dag_func = bubble_dag;
	starpu_task *task = starpu_task_create();
	EXPECT_EQ(task->bubble_func, nullptr);
	EXPECT_EQ(task->bubble_gen_dag_func, nullptr);
	EXPECT_EQ(task->bubble_func_arg, nullptr);
	EXPECT_EQ(task->bubble_gen_dag_func_arg, nullptr);
	EXPECT_EQ(task->bubble_parent, 0ul);
	task->cl = &cl;
	task->bubble_func = always_bubble;
	starpu_codelet_pack_args(&task->cl_arg, &task->cl_arg_size, STARPU_VALUE, &p, sizeof(p), 0);
	task->cl_arg_free = 1;
	ASSERT_EQ(starpu_task_submit(task), 0);
	EXPECT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(seen.runs.load(), 1) << "the task runs whole";
	EXPECT_EQ(g_bubble_calls.load(), 0) << "never called in a runtime without --enable-bubble";
}

TEST_F(Runtime, ModeMismatchIsRefused)
{
	starpu_codelet cl = make_codelet("scale", 1);
	cl.cpu_funcs[0] = scale_cpu;
	cl.modes[0] = STARPU_RW;
	double x = 1.0;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	int factor = 2;
	double offset = 0;
	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_task_insert(&cl, STARPU_R, h, STARPU_VALUE, &factor, sizeof(factor),
					     STARPU_VALUE, &offset, sizeof(offset), 0), -EINVAL);
	});
	EXPECT_TRUE(contains(err, "codelet 'scale' declares access mode STARPU_RW for buffer 0 but STARPU_R was given")) << err;
	EXPECT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_unregister(h);
	EXPECT_EQ(x, 1.0);
}

TEST_F(Runtime, NoWorkerGivesENODEV)
{
	if (starpu_cuda_worker_get_count() > 0)
		GTEST_SKIP() << "a CUDA worker exists";
	starpu_codelet cl = make_codelet("cuda only", 0);
	cl.where = STARPU_CUDA;
	cl.cuda_funcs[0] = nothing_cpu;
	EXPECT_EQ(starpu_task_insert(&cl, STARPU_PRIORITY, 1, 0), -ENODEV);
	EXPECT_EQ(starpu_task_wait_for_all(), 0);
}

TEST_F(Runtime, DepsArrayOrdersTasks)
{
	starpu_codelet cl = make_codelet("order", 0);
	cl.cpu_funcs[0] = record_order_cpu;
	int first_slot = 0, second_slot = 0;
	int *first_ptr = &first_slot, *second_ptr = &second_slot;
	g_order = 0;

	starpu_task *first = starpu_task_build(&cl, STARPU_VALUE, &first_ptr, sizeof(first_ptr), 0);
	ASSERT_NE(first, nullptr);
	starpu_task *deps[1] = { first };
	// The successor is submitted before its predecessor.
	ASSERT_EQ(starpu_task_insert(&cl, STARPU_VALUE, &second_ptr, sizeof(second_ptr), STARPU_TASK_DEPS_ARRAY, 1u, deps, 0), 0);
	starpu_usleep(20000);
	EXPECT_EQ(second_slot, 0);
	ASSERT_EQ(starpu_task_submit(first), 0);
	EXPECT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(first_slot, 1);
	EXPECT_EQ(second_slot, 2);
}

TEST_F(Runtime, TagCanBeWaitedFor)
{
	starpu_codelet cl = make_codelet("nothing", 0);
	cl.cpu_funcs[0] = nothing_cpu;
	std::atomic<int> done{ 0 };
	ASSERT_EQ(starpu_task_insert(&cl, STARPU_TAG, (starpu_tag_t)4242, STARPU_CALLBACK_WITH_ARG_NFREE, count_callback, &done, 0), 0);
	EXPECT_EQ(starpu_tag_wait(4242), 0);
	EXPECT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(done.load(), 1);
	starpu_tag_remove(4242);
}
