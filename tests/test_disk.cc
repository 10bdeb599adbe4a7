// SPDX-License-Identifier: LGPL-2.1-or-later
// Disk memory nodes (starpu_disk.h, issue 23): registering a disk with each
// file back-end, data written out to it and read back right (by offsets, and
// packed for an interface without copy method), eviction of main memory's
// copies to it under STARPU_LIMIT_CPU_MEM, files the program opens there,
// the swap disk of STARPU_DISK_SWAP, and bad input refused in one line.
#include "helpers.h"
#include "held_transfers.h"

#include <starpu_disk.h>

#include <string>
#include <vector>

#include <dirent.h>

using namespace astro_test;

namespace {

struct Backend
{
	const char *name;
	starpu_disk_ops *ops;
};

std::string backend_name(const testing::TestParamInfo<Backend> &info)
{
	return info.param.name;
}

const Backend backends[] = {
	{ "stdio", &starpu_disk_stdio_ops },
	{ "unistd", &starpu_disk_unistd_ops },
	{ "unistd_o_direct", &starpu_disk_unistd_o_direct_ops },
};

// The files in folder ("" entries and subfolders left out), -1 when it does not exist.
int files_in(const std::string &folder)
{
	DIR *d = opendir(folder.c_str());
	if (!d)
		return -1;
	int n = 0;
	while (struct dirent *e = readdir(d))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

// Writes n ints, factor * i, to file name of tmp: what the program gives the disk to open.
std::vector<int> write_ints(const TempDir &tmp, const char *name, unsigned n, int factor)
{
	std::vector<int> v(n);
	for (unsigned i = 0; i < n; i++)
		v[i] = factor * (int)i;
	EXPECT_TRUE(tmp.write(name, std::string((const char *)v.data(), n * sizeof(int))));
	return v;
}

void add_one(void **buffers, void *)
{
	int *v = (int *)STARPU_VECTOR_GET_PTR(buffers[0]);
	for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); i++)
		v[i]++;
}

void fill_with_arg(void **buffers, void *arg)
{
	int *v = (int *)STARPU_VECTOR_GET_PTR(buffers[0]);
	for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); i++)
		v[i] = (int)(intptr_t)arg + (int)i;
}

starpu_codelet add_cl = [] {
	starpu_codelet cl = cpu_codelet(add_one, 1, "disk_add");
	cl.modes[0] = STARPU_RW;
	return cl;
}();

starpu_codelet fill_cl = [] {
	starpu_codelet cl = cpu_codelet(fill_with_arg, 1, "disk_fill");
	cl.modes[0] = STARPU_W;
	return cl;
}();

// The vector interface without copy method: it moves to and from disks packed.
const starpu_data_copy_methods no_copy_methods = {};

// Made once: the workers read it while later handles register.
starpu_data_interface_ops *packed_vector_ops()
{
	static starpu_data_interface_ops ops = [] {
		starpu_data_interface_ops o = starpu_interface_vector_ops;
		o.copy_methods = &no_copy_methods;
		return o;
	}();
	return &ops;
}

void packed_vector_register(starpu_data_handle_t *h, int home, uintptr_t ptr, uint32_t nx)
{
	starpu_vector_interface v = {};
	v.id = STARPU_VECTOR_INTERFACE_ID;
	v.ptr = v.dev_handle = ptr;
	v.nx = nx;
	v.elemsize = sizeof(int);
	v.allocsize = nx * sizeof(int);
	starpu_data_register(h, home, &v, packed_vector_ops());
}

class DiskBackend : public testing::TestWithParam<Backend>
{
protected:
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
	}
	TempDir tmp;
};

// The disk is one more memory node, of its kind and size, in a folder made for it and removed after.
TEST_P(DiskBackend, RegisterGivesADiskNodeOfItsSize)
{
	ASSERT_EQ(init_with_ncpus(1), 0);
	std::string folder = tmp.file("disk");
	int node = starpu_disk_register(GetParam().ops, (void *)folder.c_str(), 2 * STARPU_DISK_SIZE_MIN);
	ASSERT_GT(node, 0);
	EXPECT_EQ(starpu_node_get_kind(node), STARPU_DISK_RAM);
	EXPECT_EQ(starpu_memory_nodes_get_count(), (unsigned)node + 1);
	EXPECT_EQ(starpu_memory_get_total(node), 2 * STARPU_DISK_SIZE_MIN);
	EXPECT_EQ(starpu_memory_get_available(node), 2 * STARPU_DISK_SIZE_MIN);
	EXPECT_EQ(starpu_memory_nodes_get_count_by_kind(STARPU_DISK_RAM), 1u);
	EXPECT_EQ(files_in(folder), 0);
	starpu_shutdown();
	EXPECT_EQ(files_in(folder), -1) << "the folder the disk made is removed at shutdown";
}

// Data moved to the disk (the RAM copy then invalid) comes back right, with
// offsets (any_to_any) and packed (no copy method); the disk's files go with the handle.
TEST_P(DiskBackend, DataWrittenOutComesBackRight)
{
	ASSERT_EQ(init_with_ncpus(1), 0);
	std::string folder = tmp.file("disk");
	int node = starpu_disk_register(GetParam().ops, (void *)folder.c_str(), STARPU_DISK_SIZE_MIN);
	ASSERT_GT(node, 0);
	const unsigned n = 10007; /* not a page multiple: O_DIRECT goes through its bounce buffer */
	for (bool packed : { false, true }) {
		SCOPED_TRACE(packed ? "packed" : "by offsets");
		std::vector<int> data(n);
		for (unsigned i = 0; i < n; i++)
			data[i] = (int)i * 3;
		starpu_data_handle_t h;
		if (packed)
			packed_vector_register(&h, STARPU_MAIN_RAM, (uintptr_t)data.data(), n);
		else
			starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)data.data(), n, sizeof(int));
		ASSERT_EQ(starpu_data_acquire_on_node(h, node, STARPU_RW), 0);
		starpu_data_release_on_node(h, node);
		EXPECT_EQ(files_in(folder), 1);
		/* Only the disk holds the data now: wipe the program's buffer to be sure it comes from there. */
		std::vector<int> expected = data;
		std::fill(data.begin(), data.end(), -1);
		ASSERT_EQ(starpu_task_insert(&add_cl, STARPU_RW, h, 0), 0);
		starpu_data_unregister(h);
		for (unsigned i = 0; i < n; i++)
			ASSERT_EQ(data[i], expected[i] + 1) << "element " << i;
		EXPECT_EQ(files_in(folder), 0) << "the disk copy is deleted with its handle";
	}
}

// A file the program wrote is opened on the disk, computed on, and holds the result after close.
TEST_P(DiskBackend, OpenUsesAnExistingFile)
{
	ASSERT_EQ(init_with_ncpus(1), 0);
	const unsigned n = 4096;
	write_ints(tmp, "input", n, 1);
	int node = starpu_disk_register(GetParam().ops, (void *)tmp.path().c_str(), STARPU_DISK_SIZE_MIN);
	ASSERT_GT(node, 0);
	void *obj = starpu_disk_open(node, (void *)"input", n * sizeof(int));
	ASSERT_NE(obj, nullptr);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, node, (uintptr_t)obj, n, sizeof(int));
	ASSERT_EQ(starpu_task_insert(&add_cl, STARPU_RW, h, 0), 0);
	ASSERT_EQ(starpu_task_insert(&add_cl, STARPU_RW, h, 0), 0);
	starpu_data_unregister(h);
	starpu_disk_close(node, obj, n * sizeof(int));
	std::string out = read_file(tmp.file("input"));
	ASSERT_EQ(out.size(), n * sizeof(int));
	const int *v = (const int *)out.data();
	for (unsigned i = 0; i < n; i++)
		ASSERT_EQ(v[i], (int)i + 2) << "element " << i;
}

INSTANTIATE_TEST_SUITE_P(Disk, DiskBackend, testing::ValuesIn(backends), backend_name);

class Disk : public testing::Test
{
protected:
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
	}
	TempDir tmp;
};

// Main memory limited to 1 MiB holds 2 MiB of data by evicting to the disk:
// every value is right, and the disk held some of it meanwhile.
TEST_F(Disk, EvictsToDiskUnderTheMemoryLimit)
{
	ScopedEnv limit("STARPU_LIMIT_CPU_MEM", "1");
	ASSERT_EQ(init_with_ncpus(2), 0);
	std::string folder = tmp.file("swap");
	int node = starpu_disk_register(&starpu_disk_unistd_ops, (void *)folder.c_str(), STARPU_DISK_SIZE_MIN);
	ASSERT_GT(node, 0);
	const unsigned ndata = 8, nx = 256 * 1024 / sizeof(int);
	for (bool packed : { false, true }) {
		SCOPED_TRACE(packed ? "packed" : "by offsets");
		starpu_data_handle_t h[ndata];
		for (unsigned d = 0; d < ndata; d++) {
			if (packed)
				packed_vector_register(&h[d], -1, 0, nx);
			else
				starpu_vector_data_register(&h[d], -1, 0, nx, sizeof(int));
			starpu_task *t = starpu_task_create();
			t->cl = &fill_cl;
			t->handles[0] = h[d];
			t->cl_arg = (void *)(intptr_t)(d * 1000);
			ASSERT_EQ(starpu_task_submit(t), 0);
		}
		for (unsigned round = 0; round < 2; round++)
			for (unsigned d = 0; d < ndata; d++)
				ASSERT_EQ(starpu_task_insert(&add_cl, STARPU_RW, h[d], 0), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		EXPECT_LT(starpu_memory_get_available(node), STARPU_DISK_SIZE_MIN) << "nothing went to the disk";
		EXPECT_GT(files_in(folder), 0);
		for (unsigned d = 0; d < ndata; d++) {
			ASSERT_EQ(starpu_data_acquire(h[d], STARPU_R), 0);
			const int *v = (const int *)starpu_data_get_local_ptr(h[d]);
			ASSERT_NE(v, nullptr);
			for (unsigned i = 0; i < nx; i += 997)
				ASSERT_EQ(v[i], (int)(d * 1000 + i + 2)) << "handle " << d << " element " << i;
			starpu_data_release(h[d]);
			starpu_data_unregister(h[d]);
		}
		EXPECT_EQ(files_in(folder), 0) << "the evicted copies are deleted with their handles";
	}
}

// ------------------------------------------------------------ victim selector

// What the test's victim selector answers, and what it was asked.
struct Victims
{
	int no_victim_first = 0;                  // STARPU_DATA_NO_VICTIM for this many calls first...
	starpu_data_handle_t choose = nullptr;    // ... then this handle once, then NULL (the runtime chooses)
	bool no_victim_always = false;
	std::atomic<int> calls{0};
	starpu_data_handle_t first_toload = nullptr;
	unsigned first_node = 99;
	int first_kind = -1;
	void *data_seen = nullptr;
	std::vector<starpu_data_handle_t> refused;
};

starpu_data_handle_t select_victim(starpu_data_handle_t toload, unsigned node, enum starpu_is_prefetch kind, void *data)
{
	auto *v = static_cast<Victims *>(data);
	if (v->calls++ == 0) {
		v->first_toload = toload;
		v->first_node = node;
		v->first_kind = kind;
		v->data_seen = data;
	}
	if (v->no_victim_always || v->calls <= v->no_victim_first)
		return STARPU_DATA_NO_VICTIM;
	starpu_data_handle_t chosen = v->choose;
	v->choose = nullptr;
	return chosen;
}

void victim_refused(starpu_data_handle_t victim, void *data)
{
	static_cast<Victims *>(data)->refused.push_back(victim);
}

bool in_main_memory(starpu_data_handle_t h)
{
	int allocated = -1, valid = -1, requested = -1;
	starpu_data_query_status(h, STARPU_MAIN_RAM, &allocated, &valid, &requested);
	return allocated == 1;
}

// Main memory limited to 1 MiB and a disk: writes 128 KiB handles from the program, one
// after the other, until the selector is asked for room; returns how many were written.
class DiskVictims : public testing::Test
{
protected:
	static constexpr unsigned kHandles = 16, kNx = 128 * 1024 / sizeof(int);
	void SetUp() override
	{
		ASSERT_EQ(init_with_ncpus(1), 0);
		node = starpu_disk_register(&starpu_disk_unistd_ops, (void *)tmp.file("swap").c_str(), STARPU_DISK_SIZE_MIN);
		ASSERT_GT(node, 0);
		for (unsigned d = 0; d < kHandles; d++)
			starpu_vector_data_register(&h[d], -1, 0, kNx, sizeof(int));
		starpu_data_register_victim_selector(select_victim, victim_refused, &victims);
	}
	void TearDown() override
	{
		starpu_data_register_victim_selector(nullptr, nullptr, nullptr);
		if (starpu_is_initialized()) {
			for (unsigned d = 0; d < kHandles; d++)
				starpu_data_unregister(h[d]);
			starpu_shutdown();
		}
	}
	// Writes handle d (the value d * 1000 + i) from the program: 0, or the acquire's error.
	int write(unsigned d)
	{
		int ret = starpu_data_acquire(h[d], STARPU_W);
		if (ret)
			return ret;
		int *v = (int *)starpu_data_get_local_ptr(h[d]);
		for (unsigned i = 0; i < kNx; i++)
			v[i] = (int)(d * 1000 + i);
		starpu_data_release(h[d]);
		return 0;
	}
	unsigned write_until_asked(unsigned from = 0)
	{
		unsigned d = from;
		for (; d < kHandles && victims.calls.load() == 0; d++)
			EXPECT_EQ(write(d), 0) << "handle " << d;
		return d;
	}
	void expect_values()
	{
		starpu_data_register_victim_selector(nullptr, nullptr, nullptr);
		for (unsigned d = 0; d < kHandles; d++) {
			ASSERT_EQ(starpu_data_acquire(h[d], STARPU_R), 0);
			const int *v = (const int *)starpu_data_get_local_ptr(h[d]);
			for (unsigned i = 0; i < kNx; i += 501)
				ASSERT_EQ(v[i], (int)(d * 1000 + i)) << "handle " << d;
			starpu_data_release(h[d]);
		}
	}
	ScopedEnv limit{"STARPU_LIMIT_CPU_MEM", "1"};
	TempDir tmp;
	int node = -1;
	starpu_data_handle_t h[kHandles];
	Victims victims;
};

// starpu_data_register_victim_selector (issue 40): asked when main memory is full, with the
// handle to load, the node and the urgency; the copy it chooses is the one evicted (not the
// least recently used), and the data comes back right from the disk.
TEST_F(DiskVictims, SelectorChoosesTheVictim)
{
	victims.choose = h[1];
	unsigned written = write_until_asked();
	ASSERT_GE(written, 3u) << "main memory was full before two handles were written";
	ASSERT_LT(written, kHandles) << "the selector was never asked";
	EXPECT_EQ(victims.first_toload, h[written - 1]);
	EXPECT_EQ(victims.first_node, (unsigned)STARPU_MAIN_RAM);
	EXPECT_EQ(victims.first_kind, (int)STARPU_FETCH);
	EXPECT_EQ(victims.data_seen, &victims);
	EXPECT_FALSE(in_main_memory(h[1])) << "the chosen handle was not evicted";
	EXPECT_TRUE(in_main_memory(h[0])) << "the least recently used handle was evicted instead of the chosen one";
	EXPECT_TRUE(victims.refused.empty());
	for (unsigned d = written; d < kHandles; d++)
		ASSERT_EQ(write(d), 0);
	expect_values();
}

// A victim that cannot be evicted (the program holds it) is refused: the callback is told,
// and the selector, asked again, lets the runtime choose among the others.
TEST_F(DiskVictims, RefusedVictimIsReported)
{
	ASSERT_EQ(write(0), 0);
	ASSERT_EQ(starpu_data_acquire(h[0], STARPU_R), 0);
	victims.choose = h[0];
	unsigned written = write_until_asked(1);
	ASSERT_LT(written, kHandles) << "the selector was never asked";
	ASSERT_EQ(victims.refused.size(), 1u);
	EXPECT_EQ(victims.refused[0], h[0]);
	EXPECT_GE(victims.calls.load(), 2) << "not asked again after the refusal";
	EXPECT_TRUE(in_main_memory(h[0])) << "a handle the program holds was evicted";
	starpu_data_release(h[0]);
	for (unsigned d = written; d < kHandles; d++)
		ASSERT_EQ(write(d), 0);
	expect_values();
}

// STARPU_DATA_NO_VICTIM: nothing is evicted, the allocation waits and asks again; answered
// always, the allocation fails (said) with everything still in place.
TEST_F(DiskVictims, NoVictimIsHonoured)
{
	victims.no_victim_first = 3;
	victims.choose = h[2];
	unsigned written = write_until_asked();
	ASSERT_GE(written, 4u);
	ASSERT_LT(written, kHandles);
	EXPECT_EQ(victims.calls.load(), 4);
	EXPECT_FALSE(in_main_memory(h[2]));
	EXPECT_TRUE(in_main_memory(h[0]));
	EXPECT_TRUE(in_main_memory(h[1]));

	victims.no_victim_always = true;
	int calls = victims.calls.load();
	unsigned d = written;
	int ret = 0;
	std::string err = stderr_of([&] {
		for (; d < kHandles && (ret = write(d)) == 0; d++) {}
	});
	ASSERT_LT(d, kHandles) << "room was found without an eviction";
	EXPECT_NE(ret, 0);
	EXPECT_GT(victims.calls.load(), calls + 1) << "asked once only: the allocation did not wait";
	EXPECT_TRUE(contains(err, "no room for")) << err;
	for (unsigned k = 0; k < written; k++)
		if (k != 2)
			EXPECT_TRUE(in_main_memory(h[k])) << "handle " << k << " was evicted though the selector said no victim";
	victims.no_victim_always = false;
}

std::atomic<int> g_status_in_callback{-1};

void note_status(void *)
{
	g_status_in_callback = starpu_task_get_current()->status;
}

// Main memory limited to 1 MiB, no disk to evict to, a task writing 2 MiB: the
// task fails (its status, in its callback and after, is STARPU_TASK_STOPPED;
// one error names the data and the fix) and the program goes on. In a child, so
// that the abort() of old ends only it.
void memory_limit_without_disk()
{
	ScopedEnv limit("STARPU_LIMIT_CPU_MEM", "1");
	if (init_with_ncpus(1) != 0)
		exit(2);
	starpu_data_handle_t big, small;
	starpu_vector_data_register(&big, -1, 0, 2 * 1024 * 1024 / sizeof(int), sizeof(int));
	starpu_vector_data_register(&small, -1, 0, 16, sizeof(int));
	starpu_task *t = starpu_task_create();
	t->cl = &fill_cl;
	t->handles[0] = big;
	t->detach = 0;
	t->destroy = 0;
	t->callback_func = note_status;
	if (starpu_task_submit(t) != 0 || starpu_task_wait(t) != 0)
		exit(3);
	if (g_status_in_callback != STARPU_TASK_STOPPED || t->status != STARPU_TASK_STOPPED)
		exit(4);
	starpu_task_destroy(t);
	starpu_task *next = starpu_task_create();
	next->cl = &fill_cl;
	next->handles[0] = small;
	next->cl_arg = (void *)(intptr_t)7;
	if (starpu_task_submit(next) != 0)
		exit(5);
	if (starpu_task_wait_for_all() != 0 || starpu_data_acquire(small, STARPU_R) != 0)
		exit(6);
	int first = ((const int *)starpu_data_get_local_ptr(small))[0];
	starpu_data_release(small);
	starpu_data_unregister(small);
	starpu_data_unregister(big);
	starpu_shutdown();
	fprintf(stderr, "went on: %d\n", first);
	exit(0);
}

TEST(DiskDeathTest, MemoryLimitWithoutADiskFailsTheTask)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	EXPECT_EXIT(memory_limit_without_disk(), testing::ExitedWithCode(0),
		    "no room for the first buffer of a STARPU_VECTOR_INTERFACE handle registered on no node \\(2097152 bytes on node 0\\)(.|\n)*"
		    "task 'disk_fill' \\(job [0-9]+\\) failed: its data could not be brought to memory node 0(.|\n)*went on: 7\n");
}

// A sum by reduction: the neutral value 0, contributions of 1 per element, added.
void redux_zero(void **buffers, void *)
{
	memset((void *)STARPU_VECTOR_GET_PTR(buffers[0]), 0, STARPU_VECTOR_GET_NX(buffers[0]) * sizeof(int));
}

void redux_add(void **buffers, void *)
{
	int *dst = (int *)STARPU_VECTOR_GET_PTR(buffers[0]);
	const int *src = (const int *)STARPU_VECTOR_GET_PTR(buffers[1]);
	for (unsigned i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); i++)
		dst[i] += src[i];
}

starpu_codelet zero_cl = cpu_codelet(redux_zero, 1, "redux_zero");
starpu_codelet sum_cl = [] {
	starpu_codelet cl = cpu_codelet(redux_add, 2, "redux_add");
	cl.modes[0] = STARPU_RW;
	cl.modes[1] = STARPU_R;
	return cl;
}();
starpu_codelet contribute_cl = [] {
	starpu_codelet cl = cpu_codelet(add_one, 1, "redux_contribute");
	cl.modes[0] = STARPU_REDUX;
	return cl;
}();

// Submits a task of cl on h and waits for it: its status.
int run_one(starpu_codelet *cl, starpu_data_handle_t h)
{
	starpu_task *t = starpu_task_create();
	t->cl = cl;
	t->handles[0] = h;
	t->detach = 0;
	t->destroy = 0;
	if (starpu_task_submit(t) != 0 || starpu_task_wait(t) != 0)
		exit(10);
	int status = t->status;
	starpu_task_destroy(t);
	return status;
}

// Main memory limited to 1 MiB: a reduction on 2 MiB of application data finds no
// room for its worker's buffer. The task fails (STARPU_TASK_STOPPED), the data keeps
// its value, the program goes on. In a child: abort() ended the program before.
void no_room_for_a_reduction_buffer()
{
	ScopedEnv limit("STARPU_LIMIT_CPU_MEM", "1");
	if (init_with_ncpus(1) != 0)
		exit(2);
	std::vector<int> data(2 * 1024 * 1024 / sizeof(int), 5);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)data.data(), (uint32_t)data.size(), sizeof(int));
	starpu_data_set_reduction_methods(h, &sum_cl, &zero_cl);
	if (run_one(&contribute_cl, h) != STARPU_TASK_STOPPED)
		exit(3);
	if (starpu_data_acquire(h, STARPU_R) != 0)
		exit(4);
	int first = data[0];
	starpu_data_release(h);
	starpu_data_unregister(h);
	starpu_shutdown();
	fprintf(stderr, "went on: %d\n", first);
	exit(0);
}

TEST(ReductionDeathTest, NoRoomForAReductionBufferFailsTheTask)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	EXPECT_EXIT(no_room_for_a_reduction_buffer(), testing::ExitedWithCode(0),
		    "no room on NUMA 0 for a per-worker buffer of a STARPU_VECTOR_INTERFACE handle \\(2097152 bytes\\)(.|\n)*"
		    "task 'redux_contribute' \\(job [0-9]+\\) failed: its data could not be brought to memory node 0(.|\n)*went on: 5\n");
}

// Main memory limited to 1 MiB: 512 KiB of other data and a reduction buffer of
// 384 KiB leave no room for the 384 KiB main copy the combination needs (768 KiB
// of data, gone since, kept the handle from getting one when its methods were
// set). A task reading it fails, so does an acquire (-ENOMEM); the contribution
// stays pending and, once the other data is gone, the next access combines it:
// nothing lost.
void no_room_to_combine_a_reduction()
{
	ScopedEnv limit("STARPU_LIMIT_CPU_MEM", "1");
	if (init_with_ncpus(1) != 0)
		exit(2);
	starpu_data_handle_t first_other, other, h;
	starpu_vector_data_register(&first_other, -1, 0, 768 * 1024 / sizeof(int), sizeof(int));
	starpu_vector_data_register(&other, -1, 0, 512 * 1024 / sizeof(int), sizeof(int));
	starpu_vector_data_register(&h, -1, 0, 384 * 1024 / sizeof(int), sizeof(int));
	starpu_data_set_name(h, "sum");
	if (run_one(&fill_cl, first_other) != STARPU_TASK_FINISHED)
		exit(3);
	starpu_data_set_reduction_methods(h, &sum_cl, &zero_cl);
	starpu_data_unregister(first_other);
	if (run_one(&fill_cl, other) != STARPU_TASK_FINISHED)
		exit(4);
	if (run_one(&contribute_cl, h) != STARPU_TASK_FINISHED)
		exit(5);
	if (run_one(&add_cl, h) != STARPU_TASK_STOPPED)
		exit(6);
	if (starpu_data_acquire(h, STARPU_R) != -ENOMEM)
		exit(7);
	starpu_data_unregister(other);
	if (starpu_data_acquire(h, STARPU_R) != 0)
		exit(8);
	int first = ((const int *)starpu_data_get_local_ptr(h))[0];
	starpu_data_release(h);
	starpu_data_unregister(h);
	starpu_shutdown();
	fprintf(stderr, "went on: %d\n", first);
	exit(0);
}

TEST(ReductionDeathTest, NoRoomToCombineAReductionFailsTheAccessAndKeepsTheContributions)
{
	GTEST_FLAG_SET(death_test_style, "threadsafe");
	EXPECT_EXIT(no_room_to_combine_a_reduction(), testing::ExitedWithCode(0),
		    "the reduction of STARPU_REDUX handle sum could not be combined: its main-memory copy cannot be made; its "
		    "contributions not folded yet are kept(.|\n)*"
		    "task 'disk_add' \\(job [0-9]+\\) failed: its data could not be brought to memory node 0(.|\n)*"
		    "starpu_data_acquire: the data of handle sum could not be brought to memory node 0 \\(see above\\): the acquire "
		    "fails and holds nothing(.|\n)*went on: 1\n");
}

// StarPU's disk programs limit main memory with STARPU_LIMIT_CPU_NUMA_MEM.
TEST_F(Disk, NumaMemoryLimitVariableLimitsMainMemory)
{
	ScopedEnv limit("STARPU_LIMIT_CPU_NUMA_MEM", "3");
	ASSERT_EQ(init_with_ncpus(1), 0);
	EXPECT_EQ(starpu_memory_get_total(STARPU_MAIN_RAM), 3 << 20);
}

// Data on one disk moves to another (through main memory) and back.
TEST_F(Disk, CopiesFromDiskToDisk)
{
	ASSERT_EQ(init_with_ncpus(1), 0);
	const unsigned n = 3000;
	std::vector<int> init = write_ints(tmp, "data", n, 7);
	int a = starpu_disk_register(&starpu_disk_unistd_ops, (void *)tmp.path().c_str(), STARPU_DISK_SIZE_MIN);
	std::string other = tmp.file("other");
	int b = starpu_disk_register(&starpu_disk_stdio_ops, (void *)other.c_str(), STARPU_DISK_SIZE_MIN);
	ASSERT_GT(a, 0);
	ASSERT_GT(b, a);
	void *obj = starpu_disk_open(a, (void *)"data", n * sizeof(int));
	ASSERT_NE(obj, nullptr);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, a, (uintptr_t)obj, n, sizeof(int));
	ASSERT_EQ(starpu_data_acquire_on_node(h, b, STARPU_RW), 0); /* only b valid now */
	starpu_data_release_on_node(h, b);
	ASSERT_EQ(starpu_data_acquire_on_node(h, a, STARPU_RW), 0);
	starpu_data_release_on_node(h, a);
	ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
	const int *v = (const int *)starpu_data_get_local_ptr(h);
	for (unsigned i = 0; i < n; i++)
		ASSERT_EQ(v[i], 7 * (int)i);
	starpu_data_release(h);
	starpu_data_unregister(h);
	starpu_disk_close(a, obj, n * sizeof(int));
	EXPECT_EQ(read_file(tmp.file("data")), std::string((const char *)init.data(), n * sizeof(int)));
}

// The program evicts copies itself (starpu_data_evict_from_node, issue 40): a clean copy on the
// disk goes at once; the only valid one is written back first; the program's own buffer stays.
TEST_F(Disk, ProgramEvictsCopies)
{
	ASSERT_EQ(init_with_ncpus(1), 0);
	std::string folder = tmp.file("disk");
	int node = starpu_disk_register(&starpu_disk_unistd_ops, (void *)folder.c_str(), STARPU_DISK_SIZE_MIN);
	ASSERT_GT(node, 0);
	const unsigned n = 1000;
	std::vector<int> data(n);
	for (unsigned i = 0; i < n; i++)
		data[i] = (int)i;
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)data.data(), n, sizeof(int));
	ASSERT_EQ(starpu_data_acquire_on_node(h, node, STARPU_R), 0);
	starpu_data_release_on_node(h, node);
	int allocated = 0, valid = 0, loading = -1, requested = -1;
	starpu_data_query_status2(h, node, &allocated, &valid, &loading, &requested);
	EXPECT_EQ(allocated, 1);
	EXPECT_EQ(valid, 1);
	EXPECT_EQ(loading, 0);
	EXPECT_EQ(requested, 0);
	EXPECT_EQ(starpu_data_can_evict(h, node, STARPU_IDLEFETCH), 1) << "a clean copy: main memory has the value";
	EXPECT_EQ(starpu_data_can_evict(h, STARPU_MAIN_RAM, STARPU_FETCH), 0) << "the program's buffer";
	EXPECT_EQ(starpu_data_evict_from_node(h, STARPU_MAIN_RAM), -1);
	EXPECT_EQ(starpu_data_evict_from_node(h, node), 0);
	EXPECT_EQ(starpu_data_test_if_allocated_on_node(h, node), 0u);
	EXPECT_EQ(files_in(folder), 0);
	EXPECT_EQ(starpu_data_evict_from_node(h, node), -1) << "nothing left there";
	// Written on the disk only: a prefetch would not pay the write-back, an eviction does it.
	ASSERT_EQ(starpu_data_acquire_on_node(h, node, STARPU_RW), 0);
	starpu_data_release_on_node(h, node);
	std::fill(data.begin(), data.end(), -1);
	EXPECT_EQ(starpu_data_is_on_node(h, STARPU_MAIN_RAM), 0u);
	EXPECT_EQ(starpu_data_can_evict(h, node, STARPU_PREFETCH), 0);
	EXPECT_EQ(starpu_data_can_evict(h, node, STARPU_FETCH), 1);
	EXPECT_EQ(starpu_data_evict_from_node(h, node), 0);
	EXPECT_EQ(starpu_data_is_on_node(h, STARPU_MAIN_RAM), 1u);
	for (unsigned i = 0; i < n; i++)
		ASSERT_EQ(data[i], (int)i) << "written back from the disk";
	starpu_data_unregister(h);
}

// starpu_data_set_ooc_flag(h, 0) (issue 40) keeps main memory's copy of h out of the disks: the
// program's eviction is refused, so is the reclaimer's; with the flag back, both may take it.
TEST_F(Disk, OocFlagKeepsMainMemorysCopyOffTheDisks)
{
	ScopedEnv limit("STARPU_LIMIT_CPU_MEM", "1");
	ASSERT_EQ(init_with_ncpus(1), 0);
	int node = starpu_disk_register(&starpu_disk_unistd_ops, (void *)tmp.file("disk").c_str(), STARPU_DISK_SIZE_MIN);
	ASSERT_GT(node, 0);
	const unsigned n = 768 * 1024 / sizeof(int);
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, -1, 0, n, sizeof(int));
	ASSERT_EQ(starpu_data_acquire(h, STARPU_W), 0); // the runtime's own buffer in main memory
	int *v = (int *)starpu_data_get_local_ptr(h);
	for (unsigned i = 0; i < n; i++)
		v[i] = (int)i;
	starpu_data_release(h);
	EXPECT_EQ(starpu_data_get_ooc_flag(h), 1u);
	starpu_data_set_ooc_flag(h, 0);
	EXPECT_EQ(starpu_data_get_ooc_flag(h), 0u);
	EXPECT_EQ(starpu_data_can_evict(h, STARPU_MAIN_RAM, STARPU_FETCH), 0);
	EXPECT_EQ(starpu_data_evict_from_node(h, STARPU_MAIN_RAM), -1);
	// The reclaimer skips it too: 512 KiB more under the 1 MiB limit finds no room.
	void *p = nullptr;
	EXPECT_EQ(starpu_malloc_flags(&p, 512 * 1024, STARPU_MALLOC_COUNT), -ENOMEM);
	EXPECT_EQ(starpu_data_is_on_node(h, STARPU_MAIN_RAM), 1u);
	// With the flag back, the same allocation evicts it to the disk.
	starpu_data_set_ooc_flag(h, 1);
	EXPECT_EQ(starpu_data_can_evict(h, STARPU_MAIN_RAM, STARPU_FETCH), 1);
	ASSERT_EQ(starpu_malloc_flags(&p, 512 * 1024, STARPU_MALLOC_COUNT), 0);
	EXPECT_EQ(starpu_data_is_on_node(h, STARPU_MAIN_RAM), 0u);
	EXPECT_EQ(starpu_data_is_on_node(h, (unsigned)node), 1u) << "written to the disk first";
	starpu_free_flags(p, 512 * 1024, STARPU_MALLOC_COUNT);
	ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
	v = (int *)starpu_data_get_local_ptr(h);
	EXPECT_EQ(v[n - 1], (int)n - 1);
	starpu_data_release(h);
	starpu_data_unregister(h);
	std::string err = stderr_of([] {
		starpu_data_set_ooc_flag(nullptr, 0);
		EXPECT_EQ(starpu_data_get_ooc_flag(nullptr), 0u);
	});
	EXPECT_TRUE(contains(err, "starpu_data_set_ooc_flag: NULL handle")) << err;
	EXPECT_TRUE(contains(err, "starpu_data_get_ooc_flag: NULL handle")) << err;
}

// starpu_data_cpy of an interface without copy method (as StarPU's disk_pack makes): packed, then unpacked.
TEST_F(Disk, DataCpyPacksAnInterfaceWithoutCopyMethod)
{
	ASSERT_EQ(init_with_ncpus(1), 0);
	const unsigned n = 100;
	std::vector<int> src(n), dst(n, 0);
	for (unsigned i = 0; i < n; i++)
		src[i] = 5 * (int)i + 1;
	starpu_data_handle_t hs, hd;
	packed_vector_register(&hs, STARPU_MAIN_RAM, (uintptr_t)src.data(), n);
	packed_vector_register(&hd, STARPU_MAIN_RAM, (uintptr_t)dst.data(), n);
	ASSERT_EQ(starpu_data_cpy(hd, hs, 0, nullptr, nullptr), 0);
	starpu_data_unregister(hs);
	starpu_data_unregister(hd);
	EXPECT_EQ(dst, src);
}

// STARPU_DISK_SWAP registers a swap disk at starpu_init with the back-end and size asked.
TEST_F(Disk, SwapDiskFromTheEnvironment)
{
	std::string folder = tmp.file("swap");
	ScopedEnv swap("STARPU_DISK_SWAP", folder);
	ScopedEnv backend("STARPU_DISK_SWAP_BACKEND", "stdio");
	ScopedEnv size("STARPU_DISK_SWAP_SIZE", "32");
	ASSERT_EQ(init_with_ncpus(1), 0);
	ASSERT_GT(starpu_disk_swap_node, 0);
	EXPECT_EQ(starpu_node_get_kind(starpu_disk_swap_node), STARPU_DISK_RAM);
	EXPECT_EQ(starpu_memory_get_total(starpu_disk_swap_node), 32 << 20);
	EXPECT_EQ(files_in(folder), 0);
	starpu_shutdown();
	EXPECT_EQ(starpu_disk_swap_node, -1);
}

TEST_F(Disk, SwapWithAnUnknownBackendIsSaidAndSkipped)
{
	ScopedEnv swap("STARPU_DISK_SWAP", tmp.file("swap"));
	ScopedEnv backend("STARPU_DISK_SWAP_BACKEND", "tape");
	std::string err = stderr_of([] { ASSERT_EQ(init_with_ncpus(1), 0); });
	EXPECT_TRUE(contains(err, "STARPU_DISK_SWAP_BACKEND=tape")) << err;
	EXPECT_EQ(starpu_disk_swap_node, -1);
	EXPECT_EQ(starpu_memory_nodes_get_count(), 1u);
}

// A swap disk (STARPU_DISK_SWAP) exists from starpu_init() on: the transfer thread serves its requests.
int init_with_swap_disk(const TempDir &tmp)
{
	ScopedEnv swap("STARPU_DISK_SWAP", tmp.file("swap"));
	ScopedEnv size("STARPU_DISK_SWAP_SIZE", "32");
	int ret = init_with_ncpus(1);
	return ret ? ret : starpu_disk_swap_node;
}

// starpu_data_is_on_node (issue 40) counts a request queued to bring the data there, as
// StarPU: the data is or will be there; its _excluding_prefetch form counts a queued fetch
// only. The transfer thread is held on another request meanwhile (no timing involved).
TEST_F(Disk, IsOnNodeCountsQueuedRequests)
{
	int node = init_with_swap_disk(tmp);
	ASSERT_GT(node, 0);
	const unsigned n = 256;
	std::vector<std::vector<int>> data(3, std::vector<int>(n, 7));
	starpu_data_handle_t h[3];
	for (unsigned i = 0; i < 3; i++)
		starpu_vector_data_register(&h[i], STARPU_MAIN_RAM, (uintptr_t)data[i].data(), n, sizeof(int));
	HeldTransfers held;
	held.blocker = h[0];
	int id = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_DATA_REQUEST), HeldTransfers::observe, &held);
	ASSERT_GE(id, 0);
	ASSERT_EQ(starpu_data_prefetch_on_node(h[0], node, 1), 0);
	ASSERT_TRUE(wait_until([&] { return held.holding.load(); }));
	EXPECT_EQ(starpu_data_is_on_node(h[1], node), 0u) << "nothing there, nothing asked";
	ASSERT_EQ(starpu_data_prefetch_on_node(h[1], node, 1), 0);
	ASSERT_EQ(starpu_data_fetch_on_node(h[2], node, 1), 0);
	int valid = -1;
	starpu_data_query_status(h[1], node, nullptr, &valid, nullptr);
	EXPECT_EQ(valid, 0) << "still queued";
	EXPECT_EQ(starpu_data_is_on_node(h[1], node), 1u) << "a queued prefetch: the data will be there";
	EXPECT_EQ(starpu_data_is_on_node_excluding_prefetch(h[1], node), 0u);
	EXPECT_EQ(starpu_data_is_on_node(h[2], node), 1u);
	EXPECT_EQ(starpu_data_is_on_node_excluding_prefetch(h[2], node), 1u) << "a queued fetch counts";
	EXPECT_EQ(starpu_data_is_on_node(h[1], STARPU_MAIN_RAM), 1u) << "main memory's copy stays valid";
	held.released = true;
	EXPECT_TRUE(wait_until([&] {
		return starpu_data_is_on_node_excluding_prefetch(h[1], node) && starpu_data_is_on_node_excluding_prefetch(h[0], node);
	}));
	starpu_data_query_status(h[1], node, nullptr, &valid, nullptr);
	EXPECT_EQ(valid, 1) << "the prefetch done, the copy is valid";
	astro_observe_unsubscribe(id);
	// A hint: a NULL handle or a node out of range is not there (quietly, as policies call it).
	EXPECT_EQ(starpu_data_is_on_node(nullptr, node), 0u);
	EXPECT_EQ(starpu_data_is_on_node(h[0], STARPU_MAXNODES), 0u);
	for (unsigned i = 0; i < 3; i++)
		starpu_data_unregister(h[i]);
}

// Counts the buffers the runtime allocates on node.
struct Allocations
{
	unsigned node;
	std::atomic<int> count{0};
	static void observe(const astro_event *ev, void *arg)
	{
		Allocations *a = (Allocations *)arg;
		if (ev->dst_node == a->node)
			a->count++;
	}
};

// starpu_data_request_allocation (issue 40) makes the buffer on the node ahead, without the
// data (asynchronously, by the transfer thread, as StarPU): the node's memory used grows by its
// size, and a later fetch there allocates nothing more. Bad input is refused and said.
TEST_F(Disk, RequestAllocationAllocatesAhead)
{
	int node = init_with_swap_disk(tmp);
	ASSERT_GT(node, 0);
	const unsigned n = 1000;
	std::vector<int> data(n);
	for (unsigned i = 0; i < n; i++)
		data[i] = (int)i;
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)data.data(), n, sizeof(int));
	size_t used = starpu_memory_get_used(node);
	EXPECT_EQ(starpu_data_test_if_allocated_on_node(h, node), 0u);
	ASSERT_EQ(starpu_data_request_allocation(h, node), 0);
	ASSERT_TRUE(wait_until([&] { return starpu_data_test_if_allocated_on_node(h, node) != 0; }));
	EXPECT_EQ(starpu_memory_get_used(node), used + n * sizeof(int));
	EXPECT_EQ(starpu_data_is_on_node(h, node), 0u) << "allocated, but the data is not there";
	Allocations allocs;
	allocs.node = (unsigned)node;
	int id = astro_observe_subscribe(ASTRO_MOMENT_BIT(ASTRO_MOMENT_DATA_ALLOCATED), Allocations::observe, &allocs);
	ASSERT_GE(id, 0);
	ASSERT_EQ(starpu_data_acquire_on_node(h, node, STARPU_R), 0);
	starpu_data_release_on_node(h, node);
	astro_observe_unsubscribe(id);
	EXPECT_EQ(allocs.count.load(), 0) << "the fetch allocated again";
	EXPECT_EQ(starpu_data_is_on_node(h, node), 1u);
	EXPECT_EQ(starpu_memory_get_used(node), used + n * sizeof(int));
	// Asked again where it is allocated: nothing more.
	ASSERT_EQ(starpu_data_request_allocation(h, node), 0);
	ASSERT_EQ(starpu_data_request_allocation(h, STARPU_MAIN_RAM), 0);
	starpu_data_unregister(h); // after the requests (held by them)
	EXPECT_EQ(starpu_memory_get_used(node), used);
	for (unsigned i = 0; i < n; i++)
		ASSERT_EQ(data[i], (int)i);
	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_data_request_allocation(nullptr, node), -EINVAL);
		EXPECT_EQ(starpu_data_request_allocation(h, node), -EINVAL) << "unregistered";
		starpu_data_handle_t other;
		starpu_variable_data_register(&other, STARPU_MAIN_RAM, (uintptr_t)&data[0], sizeof(int));
		EXPECT_EQ(starpu_data_request_allocation(other, 99), -EINVAL);
		starpu_data_unregister(other);
	});
	EXPECT_TRUE(contains(err, "starpu_data_request_allocation: NULL handle")) << err;
	EXPECT_TRUE(contains(err, "starpu_data_request_allocation: no memory node 99")) << err;
}

// Bad input: one line naming the problem, an error code, no node added.
TEST_F(Disk, BadInputIsRefusedClearly)
{
	std::string err = stderr_of([&] {
		EXPECT_EQ(starpu_disk_register(&starpu_disk_unistd_ops, (void *)tmp.path().c_str(), STARPU_DISK_SIZE_MIN), -EINVAL);
	});
	EXPECT_TRUE(contains(err, "starpu_init")) << err;
	ASSERT_EQ(init_with_ncpus(1), 0);
	err = stderr_of([&] { EXPECT_EQ(starpu_disk_register(nullptr, (void *)tmp.path().c_str(), STARPU_DISK_SIZE_MIN), -EINVAL); });
	EXPECT_TRUE(contains(err, "NULL ops")) << err;
	err = stderr_of([&] {
		EXPECT_EQ(starpu_disk_register(&starpu_disk_unistd_ops, (void *)tmp.path().c_str(), STARPU_DISK_SIZE_MIN - 1), -EINVAL);
	});
	EXPECT_TRUE(contains(err, "STARPU_DISK_SIZE_MIN")) << err;
	starpu_disk_ops no_read = starpu_disk_stdio_ops;
	no_read.read = nullptr;
	err = stderr_of([&] { EXPECT_EQ(starpu_disk_register(&no_read, (void *)tmp.path().c_str(), -1), -EINVAL); });
	EXPECT_TRUE(contains(err, "no read")) << err;
	err = stderr_of([&] {
		EXPECT_EQ(starpu_disk_register(&starpu_disk_unistd_ops, (void *)"/proc/astro-no-such-folder/disk", STARPU_DISK_SIZE_MIN), -ENOENT);
	});
	EXPECT_TRUE(contains(err, "/proc/astro-no-such-folder/disk")) << err;
	EXPECT_EQ(lines_of(err).size(), 1u) << err;
	EXPECT_EQ(starpu_memory_nodes_get_count(), 1u);

	err = stderr_of([&] { EXPECT_EQ(starpu_disk_open(STARPU_MAIN_RAM, (void *)"x", 4), nullptr); });
	EXPECT_TRUE(contains(err, "not a disk node")) << err;
	int node = starpu_disk_register(&starpu_disk_unistd_ops, (void *)tmp.path().c_str(), -1);
	ASSERT_GT(node, 0);
	err = stderr_of([&] { EXPECT_EQ(starpu_disk_open(node, (void *)"missing", 4), nullptr); });
	EXPECT_TRUE(contains(err, "missing")) << err;
	err = stderr_of([&] { starpu_disk_close(node, nullptr, 4); });
	EXPECT_TRUE(contains(err, "NULL object")) << err;
}

} // namespace
