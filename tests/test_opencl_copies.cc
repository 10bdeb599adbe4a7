// SPDX-License-Identifier: LGPL-2.1-or-later
// Scattered blocks between main memory and an OpenCL device (PoCL here): a
// tile of a larger matrix (leading dimension above its height) goes to the
// device and back as one rectangle command each way
// (clEnqueueWriteBufferRect / clEnqueueReadBufferRect), not one command per
// column, and lands where it belongs, the rest of the matrix untouched; the
// same for starpu_interface_copy2d() and copy3d(). The suite counts the
// driver's OpenCL calls by defining them in front of the ICD loader (the
// program exports them: -export-dynamic). Every test skips where no OpenCL device
// exists.
#include <gtest/gtest.h>
#include <starpu.h>
#include <atomic>
#include <dlfcn.h>
#include <numeric>
#include <vector>
#include "opencl_helpers.h"

using namespace astro_test;

#ifdef STARPU_USE_OPENCL

namespace {

std::atomic<int> writes{0}, reads{0}, rect_writes{0}, rect_reads{0};

template <typename F> F next_definition(const char *name)
{
	F f = (F)dlsym(RTLD_NEXT, name);
	if (!f)
		abort();
	return f;
}

} // namespace

// The loader's functions, counted, then called.
extern "C" {
CL_API_ENTRY cl_int CL_API_CALL clEnqueueWriteBuffer(cl_command_queue q, cl_mem b, cl_bool blocking, size_t offset, size_t size,
						     const void *ptr, cl_uint n, const cl_event *wait, cl_event *event)
{
	static auto next = next_definition<decltype(&clEnqueueWriteBuffer)>("clEnqueueWriteBuffer");
	writes++;
	return next(q, b, blocking, offset, size, ptr, n, wait, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueReadBuffer(cl_command_queue q, cl_mem b, cl_bool blocking, size_t offset, size_t size,
						    void *ptr, cl_uint n, const cl_event *wait, cl_event *event)
{
	static auto next = next_definition<decltype(&clEnqueueReadBuffer)>("clEnqueueReadBuffer");
	reads++;
	return next(q, b, blocking, offset, size, ptr, n, wait, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueWriteBufferRect(cl_command_queue q, cl_mem b, cl_bool blocking, const size_t *buffer_origin,
							 const size_t *host_origin, const size_t *region, size_t buffer_row_pitch,
							 size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch,
							 const void *ptr, cl_uint n, const cl_event *wait, cl_event *event)
{
	static auto next = next_definition<decltype(&clEnqueueWriteBufferRect)>("clEnqueueWriteBufferRect");
	rect_writes++;
	return next(q, b, blocking, buffer_origin, host_origin, region, buffer_row_pitch, buffer_slice_pitch, host_row_pitch,
		    host_slice_pitch, ptr, n, wait, event);
}

CL_API_ENTRY cl_int CL_API_CALL clEnqueueReadBufferRect(cl_command_queue q, cl_mem b, cl_bool blocking, const size_t *buffer_origin,
							const size_t *host_origin, const size_t *region, size_t buffer_row_pitch,
							size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch,
							void *ptr, cl_uint n, const cl_event *wait, cl_event *event)
{
	static auto next = next_definition<decltype(&clEnqueueReadBufferRect)>("clEnqueueReadBufferRect");
	rect_reads++;
	return next(q, b, blocking, buffer_origin, host_origin, region, buffer_row_pitch, buffer_slice_pitch, host_row_pitch,
		    host_slice_pitch, ptr, n, wait, event);
}
}

namespace {

class Copies : public testing::Test
{
protected:
	void SetUp() override
	{
		if (!start_with_opencl_worker(1, &started_))
			GTEST_SKIP() << ASTRO_NO_OPENCL_DEVICE;
		int worker = starpu_worker_get_by_type(STARPU_OPENCL_WORKER, 0);
		node_ = starpu_worker_get_memory_node((unsigned)worker);
		starpu_opencl_get_queue(starpu_worker_get_devid(worker), &queue_);
		reset();
	}
	void TearDown() override
	{
		if (started_)
			starpu_shutdown();
	}
	static void reset() { writes = reads = rect_writes = rect_reads = 0; }

	bool started_ = false;
	unsigned node_ = 0;
	cl_command_queue queue_ = nullptr;
};

// A 5 x 6 tile (rows 2 to 6, columns 1 to 6) of a 9 x 8 column-major matrix: one rectangle to the device and one
// back, the device's values landing in the tile and nowhere else.
TEST_F(Copies, ATileOfALargerMatrixTravelsAsOneRectangleEachWay)
{
	const unsigned ld = 9, nx = 5, ny = 6;
	std::vector<int> matrix(9 * 8);
	std::iota(matrix.begin(), matrix.end(), 0);
	const std::vector<int> before = matrix;
	starpu_data_handle_t h;
	starpu_matrix_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&matrix[2 + 1 * ld], ld, nx, ny, sizeof(int));

	ASSERT_EQ(starpu_data_fetch_on_node(h, node_, 0), 0);
	EXPECT_EQ(rect_writes.load(), 1) << "the tile went to the device in " << rect_writes << " rectangle(s)";
	EXPECT_EQ(writes.load(), 0) << "the tile went to the device in " << writes << " plain write(s)";

	// On the device, the tile becomes -(its value): written there, the copy in main memory invalidated.
	ASSERT_EQ(starpu_data_acquire_on_node(h, (int)node_, STARPU_RW), 0);
	auto *dev = (starpu_matrix_interface *)starpu_data_get_interface_on_node(h, node_);
	std::vector<int> packed(dev->ld * ny);
	for (unsigned j = 0; j < ny; j++)
		for (unsigned i = 0; i < nx; i++)
			packed[i + j * dev->ld] = -before[2 + i + (1 + j) * ld];
	ASSERT_EQ(clEnqueueWriteBuffer(queue_, (cl_mem)dev->dev_handle, CL_TRUE, dev->offset, packed.size() * sizeof(int),
				       packed.data(), 0, NULL, NULL),
		  CL_SUCCESS);
	starpu_data_release_on_node(h, (int)node_);
	reset();

	ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
	EXPECT_EQ(rect_reads.load(), 1) << "the tile came back in " << rect_reads << " rectangle(s)";
	EXPECT_EQ(reads.load(), 0) << "the tile came back in " << reads << " plain read(s)";
	for (unsigned j = 0; j < 8; j++)
		for (unsigned i = 0; i < ld; i++) {
			bool in_tile = i >= 2 && i < 2 + nx && j >= 1 && j < 1 + ny;
			EXPECT_EQ(matrix[i + j * ld], in_tile ? -before[i + j * ld] : before[i + j * ld]) << "row " << i << ", column " << j;
		}
	starpu_data_release(h);
	starpu_data_unregister(h);
}

// starpu_interface_copy2d() and copy3d() between main memory and the device: a rectangle per 2D copy (copy3d: one
// per layer), blocks ld apart on both sides, the gaps between them left alone.
TEST_F(Copies, Copy2dAndCopy3dGoAsRectanglesAndLeaveTheGaps)
{
	const size_t block = 5, nblocks = 4, ld_host = 7, ld_dev = 6, layers = 2, host_layer = ld_host * nblocks + 3,
		     dev_layer = ld_dev * nblocks;
	std::vector<int> host(host_layer * layers), back(host.size(), -1);
	std::iota(host.begin(), host.end(), 100);
	uintptr_t buffer = starpu_malloc_on_node(node_, dev_layer * layers * sizeof(int));
	ASSERT_NE(buffer, 0u);
	const size_t e = sizeof(int);

	ASSERT_EQ(starpu_interface_copy2d((uintptr_t)host.data(), 0, STARPU_MAIN_RAM, buffer, 0, node_, block * e, nblocks,
					  ld_host * e, ld_dev * e, NULL),
		  0);
	EXPECT_EQ(rect_writes.load(), 1);
	EXPECT_EQ(writes.load(), 0);
	ASSERT_EQ(starpu_interface_copy3d((uintptr_t)host.data(), 0, STARPU_MAIN_RAM, buffer, 0, node_, block * e, nblocks,
					  ld_host * e, ld_dev * e, layers, host_layer * e, dev_layer * e, NULL),
		  0);
	EXPECT_EQ(rect_writes.load(), 1 + (int)layers);
	EXPECT_EQ(writes.load(), 0);
	ASSERT_EQ(starpu_interface_copy3d(buffer, 0, node_, (uintptr_t)back.data(), 0, STARPU_MAIN_RAM, block * e, nblocks,
					  ld_dev * e, ld_host * e, layers, dev_layer * e, host_layer * e, NULL),
		  0);
	EXPECT_EQ(rect_reads.load(), (int)layers);
	EXPECT_EQ(reads.load(), 0);
	for (size_t i = 0; i < back.size(); i++) {
		size_t in_layer = i % host_layer;
		bool in_block = in_layer < ld_host * nblocks && in_layer % ld_host < block;
		EXPECT_EQ(back[i], in_block ? host[i] : -1) << "element " << i;
	}
	starpu_free_on_node(node_, buffer, dev_layer * layers * sizeof(int));
}

} // namespace

#endif

int main(int argc, char **argv)
{
	return opencl_test_main(argc, argv, "opencl_copies");
}
