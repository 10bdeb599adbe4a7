// SPDX-License-Identifier: LGPL-2.1-or-later
// The data interfaces beyond variable/vector/matrix/block: tensor, ndim,
// CSR, BCSR, COO and an interface the application defines (with
// starpu_data_interface_get_next_id). For each: registration and accessors,
// partitioning with each filter (the pieces checked element by element),
// tasks reading and writing through the interface on a CPU worker and on
// the OpenCL worker (skipped without an OpenCL device), pack/unpack round
// trips, footprints, and bad input.
#include "helpers.h"
#include <atomic>
#include <numeric>
#include <vector>

using namespace astro_test;

namespace {

class Interfaces : public ::testing::Test
{
protected:
	void SetUp() override { ASSERT_EQ(init_with_ncpus(2), 0); }
	void TearDown() override
	{
		if (starpu_is_initialized())
			starpu_shutdown();
	}
};

// Visits every element of a dense strided layout (dimension 0 contiguous).
template <typename F> void for_each_dense(size_t ndim, const uint32_t *nn, const uint32_t *ld, F &&f)
{
	size_t count = 1;
	for (size_t d = 0; d < ndim; d++)
		count *= nn[d];
	std::vector<uint32_t> idx(ndim ? ndim : 1, 0);
	for (size_t k = 0; k < count; k++) {
		size_t at = 0;
		for (size_t d = 0; d < ndim; d++)
			at += (size_t)idx[d] * ld[d];
		f(at);
		for (size_t d = 0; d < ndim && ++idx[d] == nn[d]; d++)
			idx[d] = 0;
	}
}

// Adds *(int *)arg (1 without arg) to every element of the interface of buffers[0], whatever its kind.
void add_cpu(void **buffers, void *arg)
{
	int what = arg ? *(int *)arg : 1;
	void *i = buffers[0];
	switch (*(enum starpu_data_interface_id *)i) {
	case STARPU_TENSOR_INTERFACE_ID: {
		uint32_t nn[4] = { STARPU_TENSOR_GET_NX(i), STARPU_TENSOR_GET_NY(i), STARPU_TENSOR_GET_NZ(i), STARPU_TENSOR_GET_NT(i) };
		uint32_t ld[4] = { 1, STARPU_TENSOR_GET_LDY(i), STARPU_TENSOR_GET_LDZ(i), STARPU_TENSOR_GET_LDT(i) };
		int *p = (int *)STARPU_TENSOR_GET_PTR(i);
		for_each_dense(4, nn, ld, [&](size_t at) { p[at] += what; });
		break;
	}
	case STARPU_NDIM_INTERFACE_ID: {
		int *p = (int *)STARPU_NDIM_GET_PTR(i);
		for_each_dense(STARPU_NDIM_GET_NDIM(i), STARPU_NDIM_GET_NN(i), STARPU_NDIM_GET_LDN(i), [&](size_t at) { p[at] += what; });
		break;
	}
	case STARPU_CSR_INTERFACE_ID:
		for (uint32_t k = 0; k < STARPU_CSR_GET_NNZ(i); k++)
			((int *)STARPU_CSR_GET_NZVAL(i))[k] += what;
		break;
	case STARPU_BCSR_INTERFACE_ID:
		for (uint32_t k = 0; k < STARPU_BCSR_GET_NNZ(i) * STARPU_BCSR_GET_R(i) * STARPU_BCSR_GET_C(i); k++)
			((int *)STARPU_BCSR_GET_NZVAL(i))[k] += what;
		break;
	case STARPU_COO_INTERFACE_ID:
		for (uint32_t k = 0; k < STARPU_COO_GET_NVALUES(i); k++)
			((int *)STARPU_COO_GET_VALUES(i))[k] += what;
		break;
	case STARPU_VECTOR_INTERFACE_ID:
		for (uint32_t k = 0; k < STARPU_VECTOR_GET_NX(i); k++)
			((int *)STARPU_VECTOR_GET_PTR(i))[k] += what;
		break;
	case STARPU_MATRIX_INTERFACE_ID:
		for (uint32_t y = 0; y < STARPU_MATRIX_GET_NY(i); y++)
			for (uint32_t x = 0; x < STARPU_MATRIX_GET_NX(i); x++)
				((int *)STARPU_MATRIX_GET_PTR(i))[y * STARPU_MATRIX_GET_LD(i) + x] += what;
		break;
	default:
		ADD_FAILURE() << "unexpected interface " << *(int *)i;
	}
}

// The codelet of add_cpu, static: a worker may still read it after the task's data is released.
starpu_codelet &add_codelet()
{
	static starpu_codelet cl = [] {
		starpu_codelet c = cpu_codelet(add_cpu, 1, "add");
		c.modes[0] = STARPU_RW;
		return c;
	}();
	return cl;
}

int submit_add(starpu_codelet *cl, starpu_data_handle_t h)
{
	starpu_task *t = starpu_task_create();
	t->cl = cl;
	t->handles[0] = h;
	return starpu_task_submit(t);
}

// Packs h, checks the size, and unpacks into h2 (same layout); returns the packed bytes.
std::vector<char> pack_round_trip(starpu_data_handle_t h, starpu_data_handle_t h2)
{
	starpu_ssize_t size = -2;
	EXPECT_EQ(starpu_data_pack(h, nullptr, &size), 0);
	EXPECT_EQ((size_t)size, starpu_data_get_size(h));
	void *buf = nullptr;
	starpu_ssize_t count = 0;
	EXPECT_EQ(starpu_data_acquire(h, STARPU_R), 0);
	EXPECT_EQ(starpu_data_pack(h, &buf, &count), 0);
	starpu_data_release(h);
	EXPECT_EQ(count, size);
	std::vector<char> copy((char *)buf, (char *)buf + count);
	EXPECT_EQ(starpu_data_acquire(h2, STARPU_W), 0);
	EXPECT_EQ(starpu_data_peek(h2, buf, (size_t)count), 0);
	EXPECT_EQ(starpu_data_unpack(h2, buf, (size_t)count), 0); // frees buf
	starpu_data_release(h2);
	return copy;
}

std::string describe(starpu_data_handle_t h)
{
	char buf[128];
	starpu_data_get_interface_ops(h)->describe(starpu_data_get_interface_on_node(h, STARPU_MAIN_RAM), buf, sizeof(buf));
	return buf;
}

std::string display(starpu_data_handle_t h)
{
	char *text = nullptr;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	starpu_data_get_interface_ops(h)->display(h, f);
	fclose(f);
	std::string s(text);
	free(text);
	return s;
}

// ------------------------------------------------------------------ tensor

const uint32_t NX = 5, NY = 4, NZ = 3, NT = 2, LDY = 6, LDZ = LDY * NY + 1, LDT = LDZ * NZ;

// A padded tensor whose element (x, y, z, t) is x + 10y + 100z + 1000t.
std::vector<int> tensor_data()
{
	std::vector<int> v(LDT * NT, -1);
	for (uint32_t t = 0; t < NT; t++)
		for (uint32_t z = 0; z < NZ; z++)
			for (uint32_t y = 0; y < NY; y++)
				for (uint32_t x = 0; x < NX; x++)
					v[x + y * LDY + z * LDZ + t * LDT] = (int)(x + 10 * y + 100 * z + 1000 * t);
	return v;
}

int tensor_at(uint32_t x, uint32_t y, uint32_t z, uint32_t t)
{
	return (int)(x + 10 * y + 100 * z + 1000 * t);
}

TEST_F(Interfaces, TensorRegisterAccessorsAndTask)
{
	std::vector<int> v = tensor_data();
	starpu_data_handle_t h = nullptr;
	starpu_tensor_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), LDY, LDZ, LDT, NX, NY, NZ, NT, sizeof(int));
	ASSERT_NE(h, nullptr);
	EXPECT_EQ(starpu_data_get_interface_id(h), STARPU_TENSOR_INTERFACE_ID);
	EXPECT_EQ(starpu_tensor_get_nx(h), NX);
	EXPECT_EQ(starpu_tensor_get_ny(h), NY);
	EXPECT_EQ(starpu_tensor_get_nz(h), NZ);
	EXPECT_EQ(starpu_tensor_get_nt(h), NT);
	EXPECT_EQ(starpu_tensor_get_local_ldy(h), LDY);
	EXPECT_EQ(starpu_tensor_get_local_ldz(h), LDZ);
	EXPECT_EQ(starpu_tensor_get_local_ldt(h), LDT);
	EXPECT_EQ(starpu_tensor_get_local_ptr(h), (uintptr_t)v.data());
	EXPECT_EQ(starpu_tensor_get_elemsize(h), sizeof(int));
	EXPECT_EQ(starpu_data_get_size(h), NX * NY * NZ * NT * sizeof(int));
	EXPECT_EQ(describe(h), "T5x4x3x2x4");
	EXPECT_EQ(display(h), "5\t4\t3\t2\t");
	starpu_codelet &cl = add_codelet();
	ASSERT_EQ(submit_add(&cl, h), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_unregister(h);
	std::vector<int> want = tensor_data();
	for (size_t k = 0; k < v.size(); k++)
		EXPECT_EQ(v[k], want[k] == -1 ? -1 : want[k] + 1) << "element " << k << " (padding must stay untouched)";
}

TEST_F(Interfaces, TensorFootprintDependsOnTheShapeOnly)
{
	std::vector<int> a(NX * NY * NZ * NT), b(LDT * NT), c(NX * NY * NZ * NT);
	starpu_data_handle_t ha, hb, hc;
	starpu_tensor_data_register(&ha, STARPU_MAIN_RAM, (uintptr_t)a.data(), NX, NX * NY, NX * NY * NZ, NX, NY, NZ, NT, sizeof(int));
	starpu_tensor_data_register(&hb, STARPU_MAIN_RAM, (uintptr_t)b.data(), LDY, LDZ, LDT, NX, NY, NZ, NT, sizeof(int));
	starpu_tensor_data_register(&hc, STARPU_MAIN_RAM, (uintptr_t)c.data(), NZ, NZ * NY, NZ * NY * NX, NZ, NY, NX, NT, sizeof(int));
	EXPECT_EQ(starpu_data_get_footprint(ha), starpu_data_get_footprint(hb));
	EXPECT_NE(starpu_data_get_footprint(ha), starpu_data_get_footprint(hc));
	starpu_data_unregister(ha);
	starpu_data_unregister(hb);
	starpu_data_unregister(hc);
}

// Checks that child i of h is the sub-tensor starting at (x0, y0, z0, t0) of the given sizes.
void expect_subtensor(starpu_data_handle_t child, uint32_t x0, uint32_t y0, uint32_t z0, uint32_t t0, uint32_t nx, uint32_t ny,
		      uint32_t nz, uint32_t nt)
{
	auto *t = (starpu_tensor_interface *)starpu_data_get_interface_on_node(child, STARPU_MAIN_RAM);
	ASSERT_EQ(t->id, STARPU_TENSOR_INTERFACE_ID);
	ASSERT_EQ(t->nx, nx);
	ASSERT_EQ(t->ny, ny);
	ASSERT_EQ(t->nz, nz);
	ASSERT_EQ(t->nt, nt);
	int *p = (int *)t->ptr;
	for (uint32_t l = 0; l < nt; l++)
		for (uint32_t z = 0; z < nz; z++)
			for (uint32_t y = 0; y < ny; y++)
				for (uint32_t x = 0; x < nx; x++)
					ASSERT_EQ(p[x + y * t->ldy + z * t->ldz + l * t->ldt], tensor_at(x0 + x, y0 + y, z0 + z, t0 + l));
}

TEST_F(Interfaces, TensorFiltersCutEachAxis)
{
	std::vector<int> v = tensor_data();
	starpu_data_handle_t h;
	starpu_tensor_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), LDY, LDZ, LDT, NX, NY, NZ, NT, sizeof(int));
	struct Case
	{
		void (*func)(void *, void *, starpu_data_filter *, unsigned, unsigned);
		unsigned axis;
	} cases[] = { { starpu_tensor_filter_block, 0 }, { starpu_tensor_filter_vertical_block, 1 },
		      { starpu_tensor_filter_depth_block, 2 }, { starpu_tensor_filter_time_block, 3 } };
	uint32_t dims[4] = { NX, NY, NZ, NT };
	for (const Case &c : cases) {
		SCOPED_TRACE(c.axis);
		starpu_data_filter f = {};
		f.filter_func = c.func;
		f.nchildren = 2;
		starpu_data_partition(h, &f);
		ASSERT_EQ(starpu_data_get_nb_children(h), 2);
		uint32_t first = (dims[c.axis] + 1) / 2;
		for (unsigned i = 0; i < 2; i++) {
			uint32_t start[4] = { 0, 0, 0, 0 }, size[4] = { NX, NY, NZ, NT };
			start[c.axis] = i ? first : 0;
			size[c.axis] = i ? dims[c.axis] - first : first;
			expect_subtensor(starpu_data_get_child(h, i), start[0], start[1], start[2], start[3], size[0], size[1], size[2], size[3]);
		}
		starpu_data_unpartition(h, STARPU_MAIN_RAM);
	}
	// A shadow of 1 along x: 3 interior elements in 1 part, extended by 1 on each side.
	starpu_data_filter f = {};
	f.filter_func = starpu_tensor_filter_block_shadow;
	f.nchildren = 1;
	f.filter_arg_ptr = (void *)(uintptr_t)1;
	starpu_data_partition(h, &f);
	expect_subtensor(starpu_data_get_child(h, 0), 0, 0, 0, 0, NX, NY, NZ, NT);
	starpu_data_unpartition(h, STARPU_MAIN_RAM);
	starpu_data_unregister(h);
}

TEST_F(Interfaces, TensorPartsRunTasks)
{
	std::vector<int> v = tensor_data();
	starpu_data_handle_t h;
	starpu_tensor_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), LDY, LDZ, LDT, NX, NY, NZ, NT, sizeof(int));
	starpu_data_filter f = {};
	f.filter_func = starpu_tensor_filter_time_block;
	f.nchildren = NT;
	starpu_data_partition(h, &f);
	starpu_codelet &cl = add_codelet();
	for (unsigned i = 0; i < NT; i++)
		ASSERT_EQ(submit_add(&cl, starpu_data_get_child(h, i)), 0);
	starpu_data_unpartition(h, STARPU_MAIN_RAM);
	starpu_data_unregister(h);
	EXPECT_EQ(v[0], 1);
	EXPECT_EQ(v[(NX - 1) + (NY - 1) * LDY + (NZ - 1) * LDZ + (NT - 1) * LDT], tensor_at(NX - 1, NY - 1, NZ - 1, NT - 1) + 1);
}

TEST_F(Interfaces, TensorPicks)
{
	std::vector<int> v = tensor_data();
	starpu_data_handle_t h;
	starpu_tensor_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), LDY, LDZ, LDT, NX, NY, NZ, NT, sizeof(int));
	// Blocks along t, z and y: the block keeps the other axes in order.
	struct Case
	{
		void (*func)(void *, void *, starpu_data_filter *, unsigned, unsigned);
		unsigned axis, from;
	} cases[] = { { starpu_tensor_filter_pick_block_t, 3, 1 }, { starpu_tensor_filter_pick_block_z, 2, 1 },
		      { starpu_tensor_filter_pick_block_y, 1, 2 } };
	for (const Case &c : cases) {
		SCOPED_TRACE(c.axis);
		starpu_data_filter f = {};
		f.filter_func = c.func;
		f.nchildren = 1;
		f.get_child_ops = starpu_tensor_filter_pick_block_child_ops;
		f.filter_arg_ptr = (void *)(uintptr_t)c.from;
		starpu_data_partition(h, &f);
		auto *b = (starpu_block_interface *)starpu_data_get_interface_on_node(starpu_data_get_child(h, 0), STARPU_MAIN_RAM);
		ASSERT_EQ(b->id, STARPU_BLOCK_INTERFACE_ID);
		int *p = (int *)b->ptr;
		for (uint32_t k = 0; k < b->nz; k++)
			for (uint32_t j = 0; j < b->ny; j++)
				for (uint32_t x = 0; x < b->nx; x++) {
					uint32_t pos[4] = { x, 0, 0, 0 }, rest[2] = { j, k };
					for (unsigned a = 1, r = 0; a < 4; a++)
						pos[a] = a == c.axis ? c.from : rest[r++];
					ASSERT_EQ(p[x + j * b->ldy + k * b->ldz], tensor_at(pos[0], pos[1], pos[2], pos[3]));
				}
		starpu_data_unpartition(h, STARPU_MAIN_RAM);
	}
	uint32_t pos[4] = { 2, 3, 1, 0 };
	starpu_data_filter f = {};
	f.filter_func = starpu_tensor_filter_pick_variable;
	f.nchildren = NT;
	f.get_child_ops = starpu_tensor_filter_pick_variable_child_ops;
	f.filter_arg_ptr = pos;
	starpu_data_partition(h, &f);
	for (unsigned i = 0; i < NT; i++)
		EXPECT_EQ(*(int *)starpu_variable_get_local_ptr(starpu_data_get_child(h, i)), tensor_at(2, 3, 1, i));
	starpu_data_unpartition(h, STARPU_MAIN_RAM);
	starpu_data_unregister(h);
}

// A block's planes along y and z as matrices, and its elements as variables (issue 40).
TEST_F(Interfaces, BlockPicks)
{
	const uint32_t nx = 4, ny = 3, nz = 5, ldy = 5, ldz = 16;
	std::vector<int> v(ldz * nz, -1);
	auto at = [](uint32_t x, uint32_t y, uint32_t z) { return (int)(100 * z + 10 * y + x); };
	for (uint32_t z = 0; z < nz; z++)
		for (uint32_t y = 0; y < ny; y++)
			for (uint32_t x = 0; x < nx; x++)
				v[x + y * ldy + z * ldz] = at(x, y, z);
	starpu_data_handle_t h;
	starpu_block_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), ldy, ldz, nx, ny, nz, sizeof(int));
	struct Pick
	{
		void (*func)(void *, void *, starpu_data_filter *, unsigned, unsigned);
		uint32_t from, nchildren;
		bool along_y;
	};
	for (const Pick &c : { Pick{ starpu_block_filter_pick_matrix_y, 1, 2, true }, Pick{ starpu_block_filter_pick_matrix_z, 2, 3, false } }) {
		SCOPED_TRACE(c.along_y ? "along y" : "along z");
		starpu_data_filter f = {};
		f.filter_func = c.func;
		f.nchildren = c.nchildren;
		f.get_child_ops = starpu_block_filter_pick_matrix_child_ops;
		f.filter_arg_ptr = (void *)(uintptr_t)c.from;
		starpu_data_partition(h, &f);
		for (unsigned i = 0; i < c.nchildren; i++) {
			starpu_data_handle_t child = starpu_data_get_child(h, i);
			ASSERT_EQ(starpu_matrix_get_nx(child), nx);
			ASSERT_EQ(starpu_matrix_get_ny(child), c.along_y ? nz : ny);
			ASSERT_EQ(starpu_matrix_get_local_ld(child), c.along_y ? ldz : ldy);
			const int *p = (const int *)starpu_matrix_get_local_ptr(child);
			for (uint32_t r = 0; r < starpu_matrix_get_ny(child); r++)
				for (uint32_t x = 0; x < nx; x++)
					ASSERT_EQ(p[x + r * starpu_matrix_get_local_ld(child)],
						  c.along_y ? at(x, c.from + i, r) : at(x, r, c.from + i));
		}
		starpu_data_unpartition(h, STARPU_MAIN_RAM);
	}
	uint32_t pos[3] = { 3, 2, 1 };
	starpu_data_filter f = {};
	f.filter_func = starpu_block_filter_pick_variable;
	f.nchildren = 2;
	f.get_child_ops = starpu_block_filter_pick_variable_child_ops;
	f.filter_arg_ptr = pos;
	starpu_data_partition(h, &f);
	for (unsigned i = 0; i < 2; i++) {
		starpu_data_handle_t child = starpu_data_get_child(h, i);
		EXPECT_EQ(starpu_variable_get_elemsize(child), sizeof(int));
		EXPECT_EQ(*(int *)starpu_variable_get_local_ptr(child), at(3, 2, 1 + i));
	}
	starpu_data_unpartition(h, STARPU_MAIN_RAM);
	starpu_data_unregister(h);
}

TEST_F(Interfaces, TensorPackUnpackRoundTrip)
{
	std::vector<int> v = tensor_data(), w(NX * NY * NZ * NT, 0);
	starpu_data_handle_t h, h2;
	starpu_tensor_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), LDY, LDZ, LDT, NX, NY, NZ, NT, sizeof(int));
	starpu_tensor_data_register(&h2, STARPU_MAIN_RAM, (uintptr_t)w.data(), NX, NX * NY, NX * NY * NZ, NX, NY, NZ, NT, sizeof(int));
	std::vector<char> packed = pack_round_trip(h, h2);
	ASSERT_EQ(packed.size(), w.size() * sizeof(int));
	starpu_data_unregister(h);
	starpu_data_unregister(h2);
	for (uint32_t t = 0; t < NT; t++)
		for (uint32_t z = 0; z < NZ; z++)
			for (uint32_t y = 0; y < NY; y++)
				for (uint32_t x = 0; x < NX; x++)
					ASSERT_EQ(w[x + NX * (y + NY * (z + NZ * t))], tensor_at(x, y, z, t));
}

TEST_F(Interfaces, TensorBadInputIsRefused)
{
	std::vector<int> v(1000);
	starpu_data_handle_t h = reinterpret_cast<starpu_data_handle_t>(0x1);
	std::string err = stderr_of([&] { starpu_tensor_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), 2, 10, 30, 3, 2, 2, 2, 4); });
	EXPECT_EQ(h, nullptr);
	EXPECT_TRUE(contains(err, "ldy")) << err;
	h = reinterpret_cast<starpu_data_handle_t>(0x1);
	err = stderr_of([&] { starpu_tensor_data_register(&h, STARPU_MAIN_RAM, 0, 3, 6, 12, 3, 2, 2, 2, 4); });
	EXPECT_EQ(h, nullptr);
	EXPECT_TRUE(contains(err, "NULL pointer")) << err;
	uint32_t nx = 7;
	err = stderr_of([&] { nx = starpu_tensor_get_nx(nullptr); });
	EXPECT_EQ(nx, 0u);
	EXPECT_TRUE(contains(err, "NULL handle")) << err;
	// Unpacking a buffer of the wrong size into a tensor.
	starpu_tensor_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), 3, 6, 12, 3, 2, 2, 2, sizeof(int));
	int small[4] = {};
	int ret = 0;
	err = stderr_of([&] { ret = starpu_data_peek(h, small, sizeof(small)); });
	EXPECT_EQ(ret, -EINVAL);
	EXPECT_TRUE(contains(err, "16 bytes")) << err;
	starpu_data_unregister(h);
}

// -------------------------------------------------------------------- ndim

// A 3-dimensional 4 x 3 x 2 array with padding (ldn 1, 5, 16); element (i, j, k) is i + 10j + 100k.
struct Ndim3
{
	uint32_t nn[3] = { 4, 3, 2 };
	uint32_t ldn[3] = { 1, 5, 16 };
	std::vector<int> v = std::vector<int>(32, -1);
	Ndim3()
	{
		for (uint32_t k = 0; k < 2; k++)
			for (uint32_t j = 0; j < 3; j++)
				for (uint32_t i = 0; i < 4; i++)
					v[i + 5 * j + 16 * k] = (int)(i + 10 * j + 100 * k);
	}
	starpu_data_handle_t reg()
	{
		starpu_data_handle_t h = nullptr;
		starpu_ndim_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), ldn, nn, 3, sizeof(int));
		return h;
	}
};

TEST_F(Interfaces, NdimRegisterAccessorsAndTask)
{
	Ndim3 a;
	starpu_data_handle_t h = a.reg();
	ASSERT_NE(h, nullptr);
	// The runtime keeps its own copies of the arrays.
	a.nn[0] = 99;
	a.ldn[1] = 99;
	EXPECT_EQ(starpu_data_get_interface_id(h), STARPU_NDIM_INTERFACE_ID);
	EXPECT_EQ(starpu_ndim_get_ndim(h), 3u);
	EXPECT_EQ(starpu_ndim_get_ni(h, 0), 4u);
	EXPECT_EQ(starpu_ndim_get_nn(h)[2], 2u);
	EXPECT_EQ(starpu_ndim_get_local_ldi(h, 1), 5u);
	EXPECT_EQ(starpu_ndim_get_local_ldn(h)[2], 16u);
	EXPECT_EQ(starpu_ndim_get_local_ptr(h), (uintptr_t)a.v.data());
	EXPECT_EQ(starpu_ndim_get_elemsize(h), sizeof(int));
	EXPECT_EQ(starpu_data_get_size(h), 24 * sizeof(int));
	EXPECT_EQ(describe(h), "N4x3x2x4");
	EXPECT_EQ(display(h), "4\t3\t2\t");
	starpu_codelet &cl = add_codelet();
	ASSERT_EQ(submit_add(&cl, h), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_unregister(h);
	Ndim3 want;
	for (size_t k = 0; k < a.v.size(); k++)
		EXPECT_EQ(a.v[k], want.v[k] == -1 ? -1 : want.v[k] + 1) << k;
}

TEST_F(Interfaces, NdimFootprintAndOtherInterfaces)
{
	Ndim3 a, b;
	starpu_data_handle_t ha = a.reg(), hb = b.reg(), hc;
	uint32_t nn[3] = { 3, 4, 2 }, ldn[3] = { 1, 3, 12 };
	std::vector<int> c(24);
	starpu_ndim_data_register(&hc, STARPU_MAIN_RAM, (uintptr_t)c.data(), ldn, nn, 3, sizeof(int));
	EXPECT_EQ(starpu_data_get_footprint(ha), starpu_data_get_footprint(hb));
	EXPECT_NE(starpu_data_get_footprint(ha), starpu_data_get_footprint(hc));
	size_t n = 9;
	std::string err = stderr_of([&] { n = starpu_ndim_get_ndim(nullptr); });
	EXPECT_EQ(n, 0u);
	EXPECT_TRUE(contains(err, "NULL handle")) << err;
	uint32_t ni = 9;
	err = stderr_of([&] { ni = starpu_ndim_get_ni(ha, 3); });
	EXPECT_EQ(ni, 0u);
	EXPECT_TRUE(contains(err, "dimension 3")) << err;
	starpu_data_unregister(ha);
	starpu_data_unregister(hb);
	starpu_data_unregister(hc);
}

TEST_F(Interfaces, NdimBadInputIsRefused)
{
	uint32_t nn[3] = { 4, 3, 2 }, ldn[3] = { 1, 3, 12 }, big[17] = {};
	std::vector<int> v(32);
	auto refused = [&](auto &&call, const char *what) {
		starpu_data_handle_t h = reinterpret_cast<starpu_data_handle_t>(0x1);
		std::string err = stderr_of([&] { call(&h); });
		EXPECT_EQ(h, nullptr) << what;
		EXPECT_TRUE(contains(err, what)) << err;
	};
	refused([&](starpu_data_handle_t *h) { starpu_ndim_data_register(h, STARPU_MAIN_RAM, (uintptr_t)v.data(), ldn, nn, 3, 4); }, "overlap");
	refused([&](starpu_data_handle_t *h) { starpu_ndim_data_register(h, STARPU_MAIN_RAM, (uintptr_t)v.data(), ldn, nullptr, 3, 4); }, "NULL nn");
	refused([&](starpu_data_handle_t *h) { starpu_ndim_data_register(h, STARPU_MAIN_RAM, (uintptr_t)v.data(), big, big, 17, 4); }, "at most 16");
	uint32_t ok[3] = { 1, 4, 12 };
	refused([&](starpu_data_handle_t *h) { starpu_ndim_data_register(h, STARPU_MAIN_RAM, 0, ok, nn, 3, 4); }, "NULL pointer");
}

// Expects the ndim child to be the piece of a starting at (i0, j0, k0) of sizes nn.
void expect_subndim(starpu_data_handle_t child, const uint32_t *start, const uint32_t *nn, int added)
{
	ASSERT_EQ(starpu_ndim_get_ndim(child), 3u);
	auto *n = (starpu_ndim_interface *)starpu_data_get_interface_on_node(child, STARPU_MAIN_RAM);
	for (unsigned d = 0; d < 3; d++)
		ASSERT_EQ(n->nn[d], nn[d]) << d;
	int *p = (int *)n->ptr;
	for (uint32_t k = 0; k < nn[2]; k++)
		for (uint32_t j = 0; j < nn[1]; j++)
			for (uint32_t i = 0; i < nn[0]; i++)
				ASSERT_EQ(p[i * n->ldn[0] + j * n->ldn[1] + k * n->ldn[2]],
					  (int)((start[0] + i) + 10 * (start[1] + j) + 100 * (start[2] + k)) + added);
}

TEST_F(Interfaces, NdimFilterBlockAlongEachDimension)
{
	Ndim3 a;
	starpu_data_handle_t h = a.reg();
	for (unsigned dim = 0; dim < 3; dim++) {
		SCOPED_TRACE(dim);
		starpu_data_filter f = {};
		f.filter_func = starpu_ndim_filter_block;
		f.nchildren = 2;
		f.filter_arg = dim;
		starpu_data_partition(h, &f);
		uint32_t first = (a.nn[dim] + 1) / 2;
		for (unsigned i = 0; i < 2; i++) {
			uint32_t start[3] = { 0, 0, 0 }, nn[3] = { 4, 3, 2 };
			start[dim] = i ? first : 0;
			nn[dim] = i ? (dim == 0 ? 4 : dim == 1 ? 3 : 2) - first : first;
			expect_subndim(starpu_data_get_child(h, i), start, nn, (int)dim); // one task per earlier round
		}
		// The pieces are handles of their own: a task on each.
		starpu_codelet &cl = add_codelet();
		for (unsigned i = 0; i < 2; i++)
			ASSERT_EQ(submit_add(&cl, starpu_data_get_child(h, i)), 0);
		starpu_data_unpartition(h, STARPU_MAIN_RAM);
	}
	starpu_data_unregister(h);
	EXPECT_EQ(a.v[1 + 5 * 2 + 16], 1 + 20 + 100 + 3);
	EXPECT_EQ(a.v[4], -1) << "padding untouched";
}

TEST_F(Interfaces, NdimToDedicatedInterfaces)
{
	Ndim3 a;
	starpu_data_handle_t h = a.reg();
	// 3 dimensions cut along z: two 4 x 3 blocks.
	starpu_data_filter f = {};
	f.filter_func = starpu_ndim_filter_to_block;
	f.get_child_ops = starpu_ndim_filter_to_block_child_ops;
	f.nchildren = 2;
	f.filter_arg = 2;
	starpu_data_partition(h, &f);
	for (unsigned i = 0; i < 2; i++) {
		starpu_data_handle_t c = starpu_data_get_child(h, i);
		ASSERT_EQ(starpu_data_get_interface_id(c), STARPU_BLOCK_INTERFACE_ID);
		EXPECT_EQ(starpu_block_get_nx(c), 4u);
		EXPECT_EQ(starpu_block_get_ny(c), 3u);
		EXPECT_EQ(starpu_block_get_nz(c), 1u);
		EXPECT_EQ(starpu_block_get_local_ldy(c), 5u);
		EXPECT_EQ(*(int *)starpu_block_get_local_ptr(c), (int)(100 * i));
	}
	starpu_data_unpartition(h, STARPU_MAIN_RAM);
	// Picks of plane k = 1 as a matrix, along the third dimension.
	f = {};
	f.filter_func = starpu_ndim_filter_3d_pick_matrix;
	f.get_child_ops = starpu_ndim_filter_pick_matrix_child_ops;
	f.nchildren = 1;
	f.filter_arg = 2;
	f.filter_arg_ptr = (void *)(uintptr_t)1;
	starpu_data_partition(h, &f);
	starpu_data_handle_t m = starpu_data_get_child(h, 0);
	ASSERT_EQ(starpu_data_get_interface_id(m), STARPU_MATRIX_INTERFACE_ID);
	EXPECT_EQ(starpu_matrix_get_nx(m), 4u);
	EXPECT_EQ(starpu_matrix_get_ny(m), 3u);
	EXPECT_EQ(starpu_matrix_get_local_ld(m), 5u);
	EXPECT_EQ(((int *)starpu_matrix_get_local_ptr(m))[2 + 5 * 2], 2 + 20 + 100);
	starpu_codelet &cl = add_codelet();
	ASSERT_EQ(submit_add(&cl, m), 0);
	starpu_data_unpartition(h, STARPU_MAIN_RAM);
	EXPECT_EQ(a.v[3 + 5 + 16], 3 + 10 + 100 + 1);
	EXPECT_EQ(a.v[3 + 5], 3 + 10) << "the other plane untouched";
	// pick_ndim: the 2-dimensional slice j = 2 (along the second dimension).
	f = {};
	f.filter_func = starpu_ndim_filter_pick_ndim;
	f.nchildren = 1;
	f.filter_arg = 1;
	f.filter_arg_ptr = (void *)(uintptr_t)2;
	starpu_data_partition(h, &f);
	starpu_data_handle_t s = starpu_data_get_child(h, 0);
	ASSERT_EQ(starpu_ndim_get_ndim(s), 2u);
	EXPECT_EQ(starpu_ndim_get_ni(s, 0), 4u);
	EXPECT_EQ(starpu_ndim_get_ni(s, 1), 2u);
	EXPECT_EQ(starpu_ndim_get_local_ldi(s, 1), 16u);
	EXPECT_EQ(((int *)starpu_ndim_get_local_ptr(s))[1 + 16], 1 + 20 + 100 + 1);
	starpu_data_unpartition(h, STARPU_MAIN_RAM);
	// pick_variable: elements (3, 1, 0) and (3, 1, 1).
	uint32_t pos[3] = { 3, 1, 0 };
	f = {};
	f.filter_func = starpu_ndim_filter_pick_variable;
	f.get_child_ops = starpu_ndim_filter_pick_variable_child_ops;
	f.nchildren = 2;
	f.filter_arg_ptr = pos;
	starpu_data_partition(h, &f);
	EXPECT_EQ(*(int *)starpu_variable_get_local_ptr(starpu_data_get_child(h, 0)), 3 + 10);
	EXPECT_EQ(*(int *)starpu_variable_get_local_ptr(starpu_data_get_child(h, 1)), 3 + 10 + 100 + 1);
	starpu_data_unpartition(h, STARPU_MAIN_RAM);
	starpu_data_unregister(h);
}

TEST_F(Interfaces, NdimLowerDimensionsToTheirInterfaces)
{
	// 4 dimensions to tensors, 2 to matrices, 1 to vectors, 0 to a variable; 5d picks to tensors, 2d to vectors, 1d to variables.
	std::vector<int> v(64);
	std::iota(v.begin(), v.end(), 0);
	uint32_t nn4[4] = { 2, 2, 2, 8 }, ld4[4] = { 1, 2, 4, 8 };
	starpu_data_handle_t h4;
	starpu_ndim_data_register(&h4, STARPU_MAIN_RAM, (uintptr_t)v.data(), ld4, nn4, 4, sizeof(int));
	starpu_data_filter f = {};
	f.filter_func = starpu_ndim_filter_to_tensor;
	f.get_child_ops = starpu_ndim_filter_to_tensor_child_ops;
	f.nchildren = 4;
	f.filter_arg = 3;
	starpu_data_partition(h4, &f);
	starpu_data_handle_t t = starpu_data_get_child(h4, 3);
	ASSERT_EQ(starpu_data_get_interface_id(t), STARPU_TENSOR_INTERFACE_ID);
	EXPECT_EQ(starpu_tensor_get_nt(t), 2u);
	EXPECT_EQ(*(int *)starpu_tensor_get_local_ptr(t), 48);
	starpu_data_unpartition(h4, STARPU_MAIN_RAM);
	starpu_data_unregister(h4);

	uint32_t nn5[5] = { 2, 2, 2, 2, 4 }, ld5[5] = { 1, 2, 4, 8, 16 };
	starpu_data_handle_t h5;
	starpu_ndim_data_register(&h5, STARPU_MAIN_RAM, (uintptr_t)v.data(), ld5, nn5, 5, sizeof(int));
	f = {};
	f.filter_func = starpu_ndim_filter_5d_pick_tensor;
	f.get_child_ops = starpu_ndim_filter_pick_tensor_child_ops;
	f.nchildren = 2;
	f.filter_arg = 4;
	f.filter_arg_ptr = (void *)(uintptr_t)2;
	starpu_data_partition(h5, &f);
	EXPECT_EQ(*(int *)starpu_tensor_get_local_ptr(starpu_data_get_child(h5, 1)), 48);
	EXPECT_EQ(starpu_tensor_get_nt(starpu_data_get_child(h5, 1)), 2u);
	starpu_data_unpartition(h5, STARPU_MAIN_RAM);
	starpu_data_unregister(h5);

	uint32_t nn2[2] = { 8, 8 }, ld2[2] = { 1, 8 };
	starpu_data_handle_t h2;
	starpu_ndim_data_register(&h2, STARPU_MAIN_RAM, (uintptr_t)v.data(), ld2, nn2, 2, sizeof(int));
	f = {};
	f.filter_func = starpu_ndim_filter_to_matrix;
	f.get_child_ops = starpu_ndim_filter_to_matrix_child_ops;
	f.nchildren = 2;
	f.filter_arg = 1;
	starpu_data_partition(h2, &f);
	EXPECT_EQ(starpu_matrix_get_ny(starpu_data_get_child(h2, 1)), 4u);
	EXPECT_EQ(*(int *)starpu_matrix_get_local_ptr(starpu_data_get_child(h2, 1)), 32);
	starpu_data_unpartition(h2, STARPU_MAIN_RAM);
	f = {};
	f.filter_func = starpu_ndim_filter_2d_pick_vector;
	f.get_child_ops = starpu_ndim_filter_pick_vector_child_ops;
	f.nchildren = 1;
	f.filter_arg = 1;
	f.filter_arg_ptr = (void *)(uintptr_t)5;
	starpu_data_partition(h2, &f);
	EXPECT_EQ(starpu_vector_get_nx(starpu_data_get_child(h2, 0)), 8u);
	EXPECT_EQ(*(int *)starpu_vector_get_local_ptr(starpu_data_get_child(h2, 0)), 40);
	starpu_data_unpartition(h2, STARPU_MAIN_RAM);
	starpu_data_unregister(h2);

	uint32_t nn1[1] = { 64 }, ld1[1] = { 1 };
	starpu_data_handle_t h1;
	starpu_ndim_data_register(&h1, STARPU_MAIN_RAM, (uintptr_t)v.data(), ld1, nn1, 1, sizeof(int));
	f = {};
	f.filter_func = starpu_ndim_filter_to_vector;
	f.get_child_ops = starpu_ndim_filter_to_vector_child_ops;
	f.nchildren = 4;
	starpu_data_partition(h1, &f);
	EXPECT_EQ(starpu_vector_get_nx(starpu_data_get_child(h1, 2)), 16u);
	EXPECT_EQ(*(int *)starpu_vector_get_local_ptr(starpu_data_get_child(h1, 2)), 32);
	starpu_data_unpartition(h1, STARPU_MAIN_RAM);
	f = {};
	f.filter_func = starpu_ndim_filter_1d_pick_variable;
	f.get_child_ops = starpu_ndim_filter_pick_variable_child_ops;
	f.nchildren = 3;
	f.filter_arg_ptr = (void *)(uintptr_t)10;
	starpu_data_partition(h1, &f);
	EXPECT_EQ(*(int *)starpu_variable_get_local_ptr(starpu_data_get_child(h1, 2)), 12);
	starpu_data_unpartition(h1, STARPU_MAIN_RAM);
	starpu_data_unregister(h1);

	starpu_data_handle_t h0;
	starpu_ndim_data_register(&h0, STARPU_MAIN_RAM, (uintptr_t)&v[7], nullptr, nullptr, 0, sizeof(int));
	ASSERT_NE(h0, nullptr);
	EXPECT_EQ(starpu_data_get_size(h0), sizeof(int));
	f = {};
	f.filter_func = starpu_ndim_filter_to_variable;
	f.get_child_ops = starpu_ndim_filter_to_variable_child_ops;
	f.nchildren = 1;
	starpu_data_partition(h0, &f);
	EXPECT_EQ(*(int *)starpu_variable_get_local_ptr(starpu_data_get_child(h0, 0)), 7);
	starpu_data_unpartition(h0, STARPU_MAIN_RAM);
	starpu_data_unregister(h0);
}

TEST_F(Interfaces, NdimPackUnpackRoundTrip)
{
	Ndim3 a;
	starpu_data_handle_t h = a.reg(), h2;
	std::vector<int> w(24, 0);
	uint32_t nn[3] = { 4, 3, 2 }, ldn[3] = { 1, 4, 12 };
	starpu_ndim_data_register(&h2, STARPU_MAIN_RAM, (uintptr_t)w.data(), ldn, nn, 3, sizeof(int));
	pack_round_trip(h, h2);
	starpu_data_unregister(h);
	starpu_data_unregister(h2);
	for (uint32_t k = 0; k < 2; k++)
		for (uint32_t j = 0; j < 3; j++)
			for (uint32_t i = 0; i < 4; i++)
				ASSERT_EQ(w[i + 4 * j + 12 * k], (int)(i + 10 * j + 100 * k));
}

TEST_F(Interfaces, NdimAllocatedByTheRuntime)
{
	uint32_t nn[2] = { 3, 5 }, ldn[2] = { 1, 7 };
	starpu_data_handle_t h;
	starpu_ndim_data_register(&h, -1, 0, ldn, nn, 2, sizeof(int));
	ASSERT_NE(h, nullptr);
	starpu_codelet &cl = add_codelet();
	ASSERT_EQ(submit_add(&cl, h), 0);
	ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
	int *p = (int *)starpu_ndim_get_local_ptr(h);
	ASSERT_NE(p, nullptr);
	EXPECT_EQ(starpu_ndim_get_local_ldi(h, 1), 3u) << "a runtime buffer is packed";
	starpu_data_release(h);
	starpu_data_unregister(h);
}

// ----------------------------------------------------------- CSR and BCSR

// |1 0 2|
// |0 0 3|
// |4 5 0|
struct Csr
{
	int nzval[5] = { 1, 2, 3, 4, 5 };
	uint32_t colind[5] = { 0, 2, 2, 0, 1 };
	uint32_t rowptr[4] = { 0, 2, 3, 5 };
};

TEST_F(Interfaces, CsrRegisterAccessorsTaskAndFilter)
{
	Csr m;
	starpu_data_handle_t h = nullptr;
	starpu_csr_data_register(&h, STARPU_MAIN_RAM, 5, 3, (uintptr_t)m.nzval, m.colind, m.rowptr, 0, sizeof(int));
	ASSERT_NE(h, nullptr);
	EXPECT_EQ(starpu_csr_get_nnz(h), 5u);
	EXPECT_EQ(starpu_csr_get_nrow(h), 3u);
	EXPECT_EQ(starpu_csr_get_firstentry(h), 0u);
	EXPECT_EQ(starpu_csr_get_elemsize(h), sizeof(int));
	EXPECT_EQ(starpu_csr_get_local_nzval(h), (uintptr_t)m.nzval);
	EXPECT_EQ(starpu_csr_get_local_colind(h), m.colind);
	EXPECT_EQ(starpu_csr_get_local_rowptr(h), m.rowptr);
	EXPECT_EQ(starpu_data_get_size(h), 5 * sizeof(int) + 5 * 4 + 4 * 4);
	EXPECT_EQ(describe(h), "C5x3x4");
	EXPECT_EQ(display(h), "5\t3\t");
	starpu_codelet &cl = add_codelet();
	ASSERT_EQ(submit_add(&cl, h), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(m.nzval[4], 6);

	// Bands of rows: {0, 1} and {2}.
	starpu_data_filter f = {};
	f.filter_func = starpu_csr_filter_vertical_block;
	f.nchildren = 2;
	starpu_data_partition(h, &f);
	starpu_data_handle_t top = starpu_data_get_child(h, 0), bottom = starpu_data_get_child(h, 1);
	EXPECT_EQ(starpu_csr_get_nrow(top), 2u);
	EXPECT_EQ(starpu_csr_get_nnz(top), 3u);
	EXPECT_EQ(starpu_csr_get_nrow(bottom), 1u);
	EXPECT_EQ(starpu_csr_get_nnz(bottom), 2u);
	EXPECT_EQ(starpu_csr_get_firstentry(bottom), 3u);
	EXPECT_EQ(starpu_csr_get_local_nzval(bottom), (uintptr_t)&m.nzval[3]);
	EXPECT_EQ(starpu_csr_get_local_colind(bottom)[1], 1u);
	ASSERT_EQ(submit_add(&cl, bottom), 0);
	starpu_data_unpartition(h, STARPU_MAIN_RAM);
	starpu_data_unregister(h);
	EXPECT_EQ(m.nzval[2], 4);
	EXPECT_EQ(m.nzval[3], 6);
	EXPECT_EQ(m.nzval[4], 7);
}

TEST_F(Interfaces, CsrPackFootprintAndBadInput)
{
	Csr m, n;
	std::fill(std::begin(n.nzval), std::end(n.nzval), 0);
	std::fill(std::begin(n.colind), std::end(n.colind), 9u);
	starpu_data_handle_t h, h2;
	starpu_csr_data_register(&h, STARPU_MAIN_RAM, 5, 3, (uintptr_t)m.nzval, m.colind, m.rowptr, 0, sizeof(int));
	starpu_csr_data_register(&h2, STARPU_MAIN_RAM, 5, 3, (uintptr_t)n.nzval, n.colind, n.rowptr, 0, sizeof(int));
	EXPECT_EQ(starpu_data_get_footprint(h), starpu_data_get_footprint(h2));
	pack_round_trip(h, h2);
	EXPECT_EQ(std::vector<int>(n.nzval, n.nzval + 5), std::vector<int>(m.nzval, m.nzval + 5));
	EXPECT_EQ(std::vector<uint32_t>(n.colind, n.colind + 5), std::vector<uint32_t>(m.colind, m.colind + 5));
	starpu_data_unregister(h);
	starpu_data_unregister(h2);

	starpu_data_handle_t bad = reinterpret_cast<starpu_data_handle_t>(0x1);
	std::string err = stderr_of([&] { starpu_csr_data_register(&bad, STARPU_MAIN_RAM, 4, 3, (uintptr_t)m.nzval, m.colind, m.rowptr, 0, 4); });
	EXPECT_EQ(bad, nullptr);
	EXPECT_TRUE(contains(err, "rowptr[nrow]")) << err;
	err = stderr_of([&] { starpu_csr_data_register(&bad, STARPU_MAIN_RAM, 5, 3, (uintptr_t)m.nzval, nullptr, m.rowptr, 0, 4); });
	EXPECT_EQ(bad, nullptr);
	EXPECT_TRUE(contains(err, "NULL colind")) << err;
	uint32_t nnz = 7;
	err = stderr_of([&] { nnz = starpu_bcsr_get_nnz(nullptr); });
	EXPECT_EQ(nnz, 0u);
	EXPECT_TRUE(contains(err, "NULL handle")) << err;
}

// The BCSR example of StarPU's documentation: 2 x 2 blocks
// |0 1 0 0|
// |2 3 0 0|
// |4 5 8 9|
// |6 7 10 11|
struct Bcsr
{
	int nzval[12] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11 };
	uint32_t colind[3] = { 0, 0, 1 };
	uint32_t rowptr[3] = { 0, 1, 3 };
};

TEST_F(Interfaces, BcsrRegisterTaskFiltersAndPack)
{
	Bcsr m;
	starpu_data_handle_t h = nullptr;
	starpu_bcsr_data_register(&h, STARPU_MAIN_RAM, 3, 2, (uintptr_t)m.nzval, m.colind, m.rowptr, 0, 2, 2, sizeof(int));
	ASSERT_NE(h, nullptr);
	EXPECT_EQ(starpu_bcsr_get_nnz(h), 3u);
	EXPECT_EQ(starpu_bcsr_get_nrow(h), 2u);
	EXPECT_EQ(starpu_bcsr_get_r(h), 2u);
	EXPECT_EQ(starpu_bcsr_get_c(h), 2u);
	EXPECT_EQ(starpu_bcsr_get_elemsize(h), sizeof(int));
	EXPECT_EQ(starpu_bcsr_get_local_rowptr(h), m.rowptr);
	EXPECT_EQ(starpu_data_get_size(h), 12 * sizeof(int) + 3 * 4 + 3 * 4);
	starpu_codelet &cl = add_codelet();
	ASSERT_EQ(submit_add(&cl, h), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(m.nzval[11], 12);

	// Each block as a 2 x 2 matrix.
	starpu_data_filter f = {};
	f.filter_func = starpu_bcsr_filter_canonical_block;
	f.get_nchildren = starpu_bcsr_filter_canonical_block_get_nchildren;
	f.get_child_ops = starpu_bcsr_filter_canonical_block_child_ops;
	starpu_data_partition(h, &f);
	ASSERT_EQ(starpu_data_get_nb_children(h), 3);
	starpu_data_handle_t b2 = starpu_data_get_child(h, 2);
	EXPECT_EQ(starpu_matrix_get_nx(b2), 2u);
	EXPECT_EQ(starpu_matrix_get_ny(b2), 2u);
	EXPECT_EQ(starpu_matrix_get_local_ld(b2), 2u);
	EXPECT_EQ(starpu_matrix_get_local_ptr(b2), (uintptr_t)&m.nzval[8]);
	ASSERT_EQ(submit_add(&cl, b2), 0);
	starpu_data_unpartition(h, STARPU_MAIN_RAM);
	EXPECT_EQ(m.nzval[8], 10);
	EXPECT_EQ(m.nzval[7], 8);

	// Bands of block rows.
	f = {};
	f.filter_func = starpu_bcsr_filter_vertical_block;
	f.nchildren = 2;
	starpu_data_partition(h, &f);
	starpu_data_handle_t lower = starpu_data_get_child(h, 1);
	EXPECT_EQ(starpu_bcsr_get_nnz(lower), 2u);
	EXPECT_EQ(starpu_bcsr_get_nrow(lower), 1u);
	EXPECT_EQ(starpu_bcsr_get_firstentry(lower), 1u);
	EXPECT_EQ(starpu_bcsr_get_local_nzval(lower), (uintptr_t)&m.nzval[4]);
	starpu_data_unpartition(h, STARPU_MAIN_RAM);

	Bcsr n = {};
	starpu_data_handle_t h2;
	starpu_bcsr_data_register(&h2, STARPU_MAIN_RAM, 3, 2, (uintptr_t)n.nzval, n.colind, m.rowptr, 0, 2, 2, sizeof(int));
	EXPECT_EQ(starpu_data_get_footprint(h), starpu_data_get_footprint(h2));
	pack_round_trip(h, h2);
	starpu_data_unregister(h);
	starpu_data_unregister(h2);
	EXPECT_EQ(std::vector<int>(n.nzval, n.nzval + 12), std::vector<int>(m.nzval, m.nzval + 12));

	starpu_data_handle_t bad = reinterpret_cast<starpu_data_handle_t>(0x1);
	std::string err = stderr_of([&] { starpu_bcsr_data_register(&bad, STARPU_MAIN_RAM, 3, 2, (uintptr_t)m.nzval, m.colind, m.rowptr, 0, 0, 2, 4); });
	EXPECT_EQ(bad, nullptr);
	EXPECT_TRUE(contains(err, "r and c")) << err;
}

// --------------------------------------------------------------------- COO

TEST_F(Interfaces, CooRegisterTaskPackAndBadInput)
{
	int values[3] = { 7, 8, 9 };
	uint32_t columns[3] = { 0, 3, 1 }, rows[3] = { 1, 1, 2 };
	starpu_data_handle_t h = nullptr;
	starpu_coo_data_register(&h, STARPU_MAIN_RAM, 4, 3, 3, columns, rows, (uintptr_t)values, sizeof(int));
	ASSERT_NE(h, nullptr);
	EXPECT_EQ(starpu_data_get_interface_id(h), STARPU_COO_INTERFACE_ID);
	auto *c = (starpu_coo_interface *)starpu_data_get_interface_on_node(h, STARPU_MAIN_RAM);
	EXPECT_EQ(STARPU_COO_GET_NX(c), 4u);
	EXPECT_EQ(STARPU_COO_GET_NY(c), 3u);
	EXPECT_EQ(STARPU_COO_GET_NVALUES(c), 3u);
	EXPECT_EQ(STARPU_COO_GET_COLUMNS(c), columns);
	EXPECT_EQ(starpu_data_get_size(h), 3 * sizeof(int) + 2 * 3 * 4);
	EXPECT_EQ(describe(h), "c4x3x3x4");
	starpu_codelet &cl = add_codelet();
	ASSERT_EQ(submit_add(&cl, h), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(values[2], 10);

	int values2[3] = {};
	uint32_t columns2[3] = {}, rows2[3] = {};
	starpu_data_handle_t h2;
	starpu_coo_data_register(&h2, STARPU_MAIN_RAM, 4, 3, 3, columns2, rows2, (uintptr_t)values2, sizeof(int));
	EXPECT_EQ(starpu_data_get_footprint(h), starpu_data_get_footprint(h2));
	pack_round_trip(h, h2);
	starpu_data_unregister(h);
	starpu_data_unregister(h2);
	EXPECT_EQ(values2[1], 9);
	EXPECT_EQ(columns2[1], 3u);
	EXPECT_EQ(rows2[2], 2u);

	starpu_data_handle_t bad = reinterpret_cast<starpu_data_handle_t>(0x1);
	rows[0] = 3;
	std::string err = stderr_of([&] { starpu_coo_data_register(&bad, STARPU_MAIN_RAM, 4, 3, 3, columns, rows, (uintptr_t)values, 4); });
	EXPECT_EQ(bad, nullptr);
	EXPECT_TRUE(contains(err, "outside the 4 x 3 matrix")) << err;
	err = stderr_of([&] { starpu_coo_data_register(&bad, STARPU_MAIN_RAM, 4, 3, 3, columns, rows, 0, 4); });
	EXPECT_EQ(bad, nullptr);
	EXPECT_TRUE(contains(err, "NULL values")) << err;
}

// ------------------------------------------------------- pack/unpack, generic

TEST_F(Interfaces, PackBadArguments)
{
	int x = 3;
	starpu_data_handle_t h;
	starpu_variable_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)&x, sizeof(x));
	starpu_ssize_t count = 0;
	std::string err = stderr_of([&] { EXPECT_EQ(starpu_data_pack(nullptr, nullptr, &count), -EINVAL); });
	EXPECT_TRUE(contains(err, "NULL handle")) << err;
	err = stderr_of([&] { EXPECT_EQ(starpu_data_pack(h, nullptr, nullptr), -EINVAL); });
	EXPECT_TRUE(contains(err, "NULL count")) << err;
	err = stderr_of([&] { EXPECT_EQ(starpu_data_unpack(h, nullptr, 4), -EINVAL); });
	EXPECT_TRUE(contains(err, "NULL buffer")) << err;
	err = stderr_of([&] { EXPECT_EQ(starpu_data_pack_node(h, 7, nullptr, &count), -EINVAL); });
	EXPECT_TRUE(contains(err, "not a CPU memory node")) << err;
	// A void handle packs to nothing, as StarPU's (StarPU-MPI sends it as an empty message).
	starpu_data_handle_t v;
	starpu_void_data_register(&v);
	void *packed = &x;
	count = 5;
	err = stderr_of([&] { EXPECT_EQ(0, starpu_data_pack(v, &packed, &count)); });
	EXPECT_EQ("", err);
	EXPECT_EQ(0, count);
	EXPECT_EQ(nullptr, packed);
	starpu_data_unregister(v);
	starpu_data_unregister(h);
}

// ------------------------------------------------ an interface of the program

// Two arrays of nx doubles (real and imaginary parts), as StarPU's own interface example.
struct complex_interface
{
	enum starpu_data_interface_id id;
	double *real;
	double *imaginary;
	int nx;
};

void complex_register(starpu_data_handle_t handle, int home_node, void *data_interface)
{
	auto *given = (complex_interface *)data_interface;
	for (unsigned node = 0; node < STARPU_MAXNODES; node++) {
		auto *local = (complex_interface *)starpu_data_get_interface_on_node(handle, node);
		local->id = given->id;
		local->nx = given->nx;
		local->real = (int)node == home_node ? given->real : nullptr;
		local->imaginary = (int)node == home_node ? given->imaginary : nullptr;
	}
}

starpu_ssize_t complex_allocate(void *data_interface, unsigned node)
{
	auto *c = (complex_interface *)data_interface;
	size_t bytes = c->nx * sizeof(double);
	c->real = (double *)starpu_malloc_on_node(node, bytes);
	c->imaginary = (double *)starpu_malloc_on_node(node, bytes);
	if (!c->real || !c->imaginary)
		return -ENOMEM;
	return 2 * bytes;
}

void complex_free(void *data_interface, unsigned node)
{
	auto *c = (complex_interface *)data_interface;
	starpu_free_on_node(node, (uintptr_t)c->real, c->nx * sizeof(double));
	starpu_free_on_node(node, (uintptr_t)c->imaginary, c->nx * sizeof(double));
}

int complex_copy(void *src, unsigned src_node, void *dst, unsigned dst_node, void *async)
{
	auto *s = (complex_interface *)src, *d = (complex_interface *)dst;
	int r1 = starpu_interface_copy((uintptr_t)s->real, 0, src_node, (uintptr_t)d->real, 0, dst_node, s->nx * sizeof(double), async);
	int r2 = starpu_interface_copy((uintptr_t)s->imaginary, 0, src_node, (uintptr_t)d->imaginary, 0, dst_node, s->nx * sizeof(double), async);
	return r1 == -EAGAIN || r2 == -EAGAIN ? -EAGAIN : 0;
}

size_t complex_size(starpu_data_handle_t h)
{
	return 2 * ((complex_interface *)starpu_data_get_interface_on_node(h, STARPU_MAIN_RAM))->nx * sizeof(double);
}

uint32_t complex_footprint(starpu_data_handle_t h)
{
	return starpu_hash_crc32c_be(((complex_interface *)starpu_data_get_interface_on_node(h, STARPU_MAIN_RAM))->nx, 0);
}

int complex_pack(starpu_data_handle_t h, unsigned node, void **ptr, starpu_ssize_t *count)
{
	auto *c = (complex_interface *)starpu_data_get_interface_on_node(h, node);
	*count = complex_size(h);
	if (ptr) {
		*ptr = (void *)starpu_malloc_on_node_flags(node, *count, 0);
		memcpy(*ptr, c->real, c->nx * sizeof(double));
		memcpy((char *)*ptr + c->nx * sizeof(double), c->imaginary, c->nx * sizeof(double));
	}
	return 0;
}

int complex_peek(starpu_data_handle_t h, unsigned node, void *ptr, size_t count)
{
	auto *c = (complex_interface *)starpu_data_get_interface_on_node(h, node);
	if (count != complex_size(h))
		return -EINVAL;
	memcpy(c->real, ptr, c->nx * sizeof(double));
	memcpy(c->imaginary, (char *)ptr + c->nx * sizeof(double), c->nx * sizeof(double));
	return 0;
}

int complex_unpack(starpu_data_handle_t h, unsigned node, void *ptr, size_t count)
{
	int ret = complex_peek(h, node, ptr, count);
	starpu_free_on_node_flags(node, (uintptr_t)ptr, count, 0);
	return ret;
}

const starpu_data_copy_methods complex_copy_methods = { .any_to_any = complex_copy };

starpu_data_interface_ops complex_ops()
{
	starpu_data_interface_ops ops = {};
	ops.register_data_handle = complex_register;
	ops.allocate_data_on_node = complex_allocate;
	ops.free_data_on_node = complex_free;
	ops.copy_methods = &complex_copy_methods;
	ops.get_size = complex_size;
	ops.footprint = complex_footprint;
	ops.pack_data = complex_pack;
	ops.peek_data = complex_peek;
	ops.unpack_data = complex_unpack;
	ops.interfaceid = STARPU_UNKNOWN_INTERFACE_ID;
	ops.interface_size = sizeof(complex_interface);
	ops.name = "COMPLEX_INTERFACE";
	return ops;
}

void conjugate(void **buffers, void *)
{
	auto *c = (complex_interface *)buffers[0];
	for (int i = 0; i < c->nx; i++)
		c->imaginary[i] = -c->imaginary[i];
}

TEST_F(Interfaces, ProgramDefinedInterface)
{
	int first = starpu_data_interface_get_next_id();
	EXPECT_GE(first, STARPU_MAX_INTERFACE_ID);
	EXPECT_GT(starpu_data_interface_get_next_id(), first);

	static starpu_data_interface_ops ops = complex_ops();
	double re[3] = { 1, 2, 3 }, im[3] = { 4, 5, 6 };
	complex_interface c = { STARPU_UNKNOWN_INTERFACE_ID, re, im, 3 };
	starpu_data_handle_t h = nullptr;
	starpu_data_register(&h, STARPU_MAIN_RAM, &c, &ops);
	ASSERT_NE(h, nullptr);
	// Registration gave the interface an id of its own, past the built-in ones.
	EXPECT_GT((int)ops.interfaceid, first);
	EXPECT_EQ(starpu_data_get_interface_id(h), (int)ops.interfaceid);
	EXPECT_EQ(starpu_data_get_size(h), 6 * sizeof(double));
	static starpu_codelet cl = cpu_codelet(conjugate, 1, "conjugate");
	cl.modes[0] = STARPU_RW;
	ASSERT_EQ(submit_add(&cl, h), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(im[2], -6);

	double re2[3] = {}, im2[3] = {};
	complex_interface c2 = { STARPU_UNKNOWN_INTERFACE_ID, re2, im2, 3 };
	starpu_data_handle_t h2;
	starpu_data_register(&h2, STARPU_MAIN_RAM, &c2, &ops);
	EXPECT_EQ(starpu_data_get_footprint(h), starpu_data_get_footprint(h2));
	pack_round_trip(h, h2);
	EXPECT_EQ(re2[1], 2);
	EXPECT_EQ(im2[0], -4);
	// Allocated by the runtime, copied there by a task's fetch.
	starpu_data_handle_t h3;
	starpu_data_register_same(&h3, h);
	ASSERT_NE(h3, nullptr);
	EXPECT_EQ(starpu_data_get_interface_id(h3), (int)ops.interfaceid);
	starpu_data_unregister(h);
	starpu_data_unregister(h2);
	starpu_data_unregister(h3);
}

} // namespace

// ------------------------------------------------------------- multiformat

// The CPU format: an array of points; the OpenCL one: all x, then all y.
struct point
{
	int x, y;
};

void y_plus_one(void **buffers, void *)
{
	auto *p = (point *)STARPU_MULTIFORMAT_GET_CPU_PTR(buffers[0]);
	for (uint32_t i = 0; i < STARPU_MULTIFORMAT_GET_NX(buffers[0]); i++)
		p[i].y += 1;
}

starpu_codelet &y_plus_one_codelet()
{
	static starpu_codelet cl = [] {
		starpu_codelet c = cpu_codelet(y_plus_one, 1, "y_plus_one");
		c.modes[0] = STARPU_RW;
		return c;
	}();
	return cl;
}

TEST_F(Interfaces, MultiformatOnTheCpu)
{
	static starpu_multiformat_data_interface_ops formats = {};
	formats.cpu_elemsize = sizeof(point);
	formats.opencl_elemsize = 2 * sizeof(int);
	point pts[4] = { { 1, 2 }, { 3, 4 }, { 5, 6 }, { 7, 8 } }, copy[4] = {};
	starpu_data_handle_t h = nullptr, h2;
	starpu_multiformat_data_register(&h, STARPU_MAIN_RAM, pts, 4, &formats);
	ASSERT_NE(h, nullptr);
	EXPECT_EQ(starpu_data_get_interface_id(h), STARPU_MULTIFORMAT_INTERFACE_ID);
	EXPECT_EQ(starpu_data_get_size(h), sizeof(pts));
	EXPECT_EQ(describe(h), "F4x8");
	auto *ops = starpu_data_get_interface_ops(h);
	EXPECT_TRUE(ops->is_multiformat);
	EXPECT_EQ(ops->get_mf_ops(starpu_data_get_interface_on_node(h, STARPU_MAIN_RAM)), &formats);
	ASSERT_EQ(submit_add(&y_plus_one_codelet(), h), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(pts[3].y, 9);
	starpu_multiformat_data_register(&h2, STARPU_MAIN_RAM, copy, 4, &formats);
	EXPECT_EQ(starpu_data_get_footprint(h), starpu_data_get_footprint(h2));
	pack_round_trip(h, h2);
	starpu_data_unregister(h);
	starpu_data_unregister(h2);
	EXPECT_EQ(copy[2].x, 5);
	EXPECT_EQ(copy[2].y, 7);

	starpu_data_handle_t bad = reinterpret_cast<starpu_data_handle_t>(0x1);
	std::string err = stderr_of([&] { starpu_multiformat_data_register(&bad, STARPU_MAIN_RAM, pts, 4, nullptr); });
	EXPECT_EQ(bad, nullptr);
	EXPECT_TRUE(contains(err, "NULL format_ops")) << err;
	err = stderr_of([&] { starpu_multiformat_data_register(&bad, STARPU_MAIN_RAM, nullptr, 4, &formats); });
	EXPECT_EQ(bad, nullptr);
	EXPECT_TRUE(contains(err, "NULL pointer")) << err;
}

// ----------------------------------------------------- registered on no node

void set_to_arg(void **buffers, void *arg)
{
	int *p = (int *)STARPU_VECTOR_GET_PTR(buffers[0]);
	for (uint32_t i = 0; i < STARPU_VECTOR_GET_NX(buffers[0]); i++)
		p[i] = *(int *)arg + (int)i;
}

starpu_codelet &set_codelet()
{
	static starpu_codelet cl = [] {
		starpu_codelet c = cpu_codelet(set_to_arg, 1, "set");
		c.modes[0] = STARPU_W;
		return c;
	}();
	return cl;
}

int submit_with_arg(starpu_codelet *cl, starpu_data_handle_t h, int *arg)
{
	starpu_task *t = starpu_task_create();
	t->cl = cl;
	t->handles[0] = h;
	t->cl_arg = arg;
	return starpu_task_submit(t);
}

TEST_F(Interfaces, NowhereHandleGetsItsBufferAtFirstUse)
{
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, -1, 0, 8, sizeof(int));
	ASSERT_NE(h, nullptr);
	EXPECT_EQ(starpu_data_get_home_node(h), -1);
	EXPECT_EQ(starpu_data_handle_to_pointer(h, STARPU_MAIN_RAM), nullptr) << "no buffer before the first use";
	EXPECT_EQ(starpu_data_get_local_ptr(h), nullptr);
	EXPECT_EQ(starpu_data_get_size(h), 8 * sizeof(int)) << "the layout is known already";
	starpu_ssize_t count;
	void *buf = nullptr;
	std::string err = stderr_of([&] { EXPECT_EQ(starpu_data_pack(h, &buf, &count), -EINVAL); });
	EXPECT_TRUE(contains(err, "no buffer")) << err;
	static int base = 40;
	ASSERT_EQ(submit_with_arg(&set_codelet(), h, &base), 0);
	ASSERT_EQ(submit_add(&add_codelet(), h), 0);
	ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
	int *p = (int *)starpu_data_handle_to_pointer(h, STARPU_MAIN_RAM);
	ASSERT_NE(p, nullptr);
	EXPECT_EQ(p[7], 48);
	starpu_data_release(h);
	starpu_data_unregister(h);
}

TEST_F(Interfaces, NowhereHandleAcquiredOrPartitionedFirst)
{
	// Acquired in write mode first: the buffer appears then.
	starpu_data_handle_t h;
	starpu_matrix_data_register(&h, -1, 0, 4, 4, 3, sizeof(int));
	ASSERT_EQ(starpu_data_handle_to_pointer(h, STARPU_MAIN_RAM), nullptr);
	ASSERT_EQ(starpu_data_acquire(h, STARPU_W), 0);
	int *p = (int *)starpu_matrix_get_local_ptr(h);
	ASSERT_NE(p, nullptr);
	for (int i = 0; i < 12; i++)
		p[i] = i;
	starpu_data_release(h);
	ASSERT_EQ(submit_add(&add_codelet(), h), 0);
	ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
	EXPECT_EQ(((int *)starpu_data_handle_to_pointer(h, STARPU_MAIN_RAM))[11], 12);
	starpu_data_release(h);
	starpu_data_unregister(h);

	// Partitioned first: the children are views into the buffer the partition gave it.
	starpu_data_handle_t t;
	starpu_tensor_data_register(&t, -1, 0, 2, 4, 8, 2, 2, 2, 2, sizeof(int));
	starpu_data_filter f = {};
	f.filter_func = starpu_tensor_filter_time_block;
	f.nchildren = 2;
	starpu_data_partition(t, &f);
	for (unsigned i = 0; i < 2; i++) {
		starpu_data_handle_t c = starpu_data_get_child(t, i);
		ASSERT_NE(starpu_tensor_get_local_ptr(c), 0u);
		ASSERT_EQ(starpu_data_acquire(c, STARPU_W), 0);
		int *q = (int *)starpu_tensor_get_local_ptr(c);
		for (int k = 0; k < 8; k++)
			q[k] = (int)(10 * i) + k;
		starpu_data_release(c);
	}
	starpu_data_unpartition(t, STARPU_MAIN_RAM);
	ASSERT_EQ(starpu_data_acquire(t, STARPU_R), 0);
	EXPECT_EQ(((int *)starpu_tensor_get_local_ptr(t))[15], 17);
	starpu_data_release(t);
	starpu_data_unregister(t);

	// Never used: unregistered without a buffer.
	starpu_data_handle_t unused;
	starpu_variable_data_register(&unused, -1, 0, sizeof(double));
	EXPECT_EQ(starpu_data_handle_to_pointer(unused, STARPU_MAIN_RAM), nullptr);
	starpu_data_unregister(unused);
}

// ------------------------------------------------------------------ OpenCL

#ifdef STARPU_USE_OPENCL
namespace {

const char *add_source = R"(
__kernel void add(__global int *v, unsigned first, unsigned n, int what)
{
	size_t i = get_global_id(0);
	if (i < n)
		v[first + i] += what;
}
__kernel void aos_to_soa(__global int *aos, __global int *soa, unsigned n)
{
	size_t i = get_global_id(0);
	if (i < n) {
		soa[i] = aos[2 * i];
		soa[n + i] = aos[2 * i + 1];
	}
}
__kernel void soa_to_aos(__global int *aos, __global int *soa, unsigned n)
{
	size_t i = get_global_id(0);
	if (i < n) {
		aos[2 * i] = soa[i];
		aos[2 * i + 1] = soa[n + i];
	}
}
)";

starpu_opencl_program add_program;

// Adds 1 to every value of buffers[0] on the OpenCL device, where the runtime's buffers are packed.
void add_opencl(void **buffers, void *)
{
	void *i = buffers[0];
	cl_mem mem;
	size_t offset = 0;
	unsigned n;
	switch (*(enum starpu_data_interface_id *)i) {
	case STARPU_TENSOR_INTERFACE_ID:
		mem = (cl_mem)STARPU_TENSOR_GET_DEV_HANDLE(i);
		offset = STARPU_TENSOR_GET_OFFSET(i);
		n = STARPU_TENSOR_GET_NX(i) * STARPU_TENSOR_GET_NY(i) * STARPU_TENSOR_GET_NZ(i) * STARPU_TENSOR_GET_NT(i);
		break;
	case STARPU_NDIM_INTERFACE_ID:
		mem = (cl_mem)STARPU_NDIM_GET_DEV_HANDLE(i);
		offset = STARPU_NDIM_GET_OFFSET(i);
		n = 1;
		for (size_t d = 0; d < STARPU_NDIM_GET_NDIM(i); d++)
			n *= STARPU_NDIM_GET_NN(i)[d];
		break;
	case STARPU_VECTOR_INTERFACE_ID:
		mem = (cl_mem)STARPU_VECTOR_GET_DEV_HANDLE(i);
		offset = STARPU_VECTOR_GET_OFFSET(i);
		n = STARPU_VECTOR_GET_NX(i);
		break;
	case STARPU_CSR_INTERFACE_ID:
		mem = (cl_mem)STARPU_CSR_GET_NZVAL_DEV_HANDLE(i);
		n = STARPU_CSR_GET_NNZ(i);
		break;
	case STARPU_BCSR_INTERFACE_ID:
		mem = (cl_mem)STARPU_BCSR_GET_NZVAL_DEV_HANDLE(i);
		n = STARPU_BCSR_GET_NNZ(i) * STARPU_BCSR_GET_R(i) * STARPU_BCSR_GET_C(i);
		break;
	case STARPU_COO_INTERFACE_ID:
		mem = (cl_mem)STARPU_COO_GET_VALUES_DEV_HANDLE(i);
		n = STARPU_COO_GET_NVALUES(i);
		break;
	default:
		ADD_FAILURE() << "unexpected interface";
		return;
	}
	cl_kernel kernel;
	cl_command_queue queue;
	int devid = starpu_worker_get_devid(starpu_worker_get_id());
	ASSERT_EQ(starpu_opencl_load_kernel(&kernel, &queue, &add_program, "add", devid), CL_SUCCESS);
	unsigned first = (unsigned)(offset / sizeof(int));
	int what = 1;
	clSetKernelArg(kernel, 0, sizeof(mem), &mem);
	clSetKernelArg(kernel, 1, sizeof(first), &first);
	clSetKernelArg(kernel, 2, sizeof(n), &n);
	clSetKernelArg(kernel, 3, sizeof(what), &what);
	size_t global = n ? n : 1;
	EXPECT_EQ(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL), CL_SUCCESS);
	clFinish(queue);
	starpu_opencl_release_kernel(kernel);
}

// Runs kernel name over the n points of the multiformat interface: (cpu_ptr, opencl_ptr, n).
void run_on_points(void **buffers, const char *name)
{
	cl_mem aos = (cl_mem)STARPU_MULTIFORMAT_GET_CPU_PTR(buffers[0]), soa = (cl_mem)STARPU_MULTIFORMAT_GET_OPENCL_PTR(buffers[0]);
	unsigned n = STARPU_MULTIFORMAT_GET_NX(buffers[0]);
	cl_kernel kernel;
	cl_command_queue queue;
	int devid = starpu_worker_get_devid(starpu_worker_get_id());
	ASSERT_EQ(starpu_opencl_load_kernel(&kernel, &queue, &add_program, name, devid), CL_SUCCESS);
	clSetKernelArg(kernel, 0, sizeof(aos), &aos);
	clSetKernelArg(kernel, 1, sizeof(soa), &soa);
	clSetKernelArg(kernel, 2, sizeof(n), &n);
	size_t global = n;
	EXPECT_EQ(clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL), CL_SUCCESS);
	clFinish(queue);
	starpu_opencl_release_kernel(kernel);
}

std::atomic<int> conversions_to_device{0}, conversions_to_cpu{0};

void to_soa(void **buffers, void *)
{
	conversions_to_device++;
	run_on_points(buffers, "aos_to_soa");
}

void to_aos(void **buffers, void *)
{
	conversions_to_cpu++;
	run_on_points(buffers, "soa_to_aos");
}

// Doubles every x of the points, in the OpenCL format (the x are the first n ints).
void double_x(void **buffers, void *)
{
	cl_mem soa = (cl_mem)STARPU_MULTIFORMAT_GET_OPENCL_PTR(buffers[0]);
	unsigned n = STARPU_MULTIFORMAT_GET_NX(buffers[0]);
	cl_command_queue queue;
	starpu_opencl_get_current_queue(&queue);
	std::vector<int> x(n);
	ASSERT_EQ(clEnqueueReadBuffer(queue, soa, CL_TRUE, 0, n * sizeof(int), x.data(), 0, NULL, NULL), CL_SUCCESS);
	for (unsigned i = 0; i < n; i++)
		x[i] = (int)(2u * (unsigned)x[i]); // wraps, no UB: a wrong value is for the EXPECTs to report
	ASSERT_EQ(clEnqueueWriteBuffer(queue, soa, CL_TRUE, 0, n * sizeof(int), x.data(), 0, NULL, NULL), CL_SUCCESS);
}

// The runtime with one CPU worker and one OpenCL worker (a CPU device through PoCL); skipped without one.
class InterfacesOpenCL : public ::testing::Test
{
protected:
	void SetUp() override
	{
		starpu_conf conf = conf_with_ncpus(1);
		conf.nopencl = 1;
		init_ret_ = starpu_init(&conf);
		ASSERT_EQ(init_ret_, 0);
		if (starpu_opencl_worker_get_count() == 0)
			GTEST_SKIP() << "no OpenCL device here (install pocl-opencl-icd for a CPU one)";
		ASSERT_EQ(starpu_opencl_load_opencl_from_string(add_source, &add_program, NULL), CL_SUCCESS);
		loaded_ = true;
	}
	void TearDown() override
	{
		if (loaded_)
			starpu_opencl_unload_opencl(&add_program);
		if (init_ret_ == 0)
			starpu_shutdown();
	}
	// Runs add_opencl on h on the OpenCL worker, then brings h home (unless stay).
	void add_on_device(starpu_data_handle_t h, bool stay = false)
	{
		static starpu_codelet cl = [] {
			starpu_codelet c;
			starpu_codelet_init(&c);
			c.opencl_funcs[0] = add_opencl;
			c.nbuffers = 1;
			c.modes[0] = STARPU_RW;
			c.name = "add_opencl";
			return c;
		}();
		ASSERT_EQ(submit_add(&cl, h), 0);
		ASSERT_EQ(starpu_task_wait_for_all(), 0);
		if (stay)
			return;
		ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
		starpu_data_release(h);
	}
	int init_ret_ = -1;
	bool loaded_ = false;
	ScopedEnv on_cpus_{ "STARPU_OPENCL_ON_CPUS", "1" };
};

TEST_F(InterfacesOpenCL, TensorAndItsPartsGoThroughTheDevice)
{
	std::vector<int> v = tensor_data();
	starpu_data_handle_t h;
	starpu_tensor_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)v.data(), LDY, LDZ, LDT, NX, NY, NZ, NT, sizeof(int));
	add_on_device(h);
	starpu_data_filter f = {};
	f.filter_func = starpu_tensor_filter_vertical_block;
	f.nchildren = 2;
	starpu_data_partition(h, &f);
	add_on_device(starpu_data_get_child(h, 1));
	starpu_data_unpartition(h, STARPU_MAIN_RAM);
	starpu_data_unregister(h);
	std::vector<int> want = tensor_data();
	for (uint32_t t = 0; t < NT; t++)
		for (uint32_t z = 0; z < NZ; z++)
			for (uint32_t y = 0; y < NY; y++)
				for (uint32_t x = 0; x < NX; x++) {
					size_t at = x + y * LDY + z * LDZ + t * LDT;
					ASSERT_EQ(v[at], want[at] + (y >= 2 ? 2 : 1)) << x << "," << y << "," << z << "," << t;
				}
	EXPECT_EQ(v[NX], -1) << "padding untouched";
}

TEST_F(InterfacesOpenCL, NdimGoesThroughTheDevice)
{
	Ndim3 a;
	starpu_data_handle_t h = a.reg();
	add_on_device(h);
	// The strides of main memory are the application's again.
	EXPECT_EQ(starpu_ndim_get_local_ldi(h, 2), 16u);
	starpu_data_unregister(h);
	Ndim3 want;
	for (size_t k = 0; k < a.v.size(); k++)
		ASSERT_EQ(a.v[k], want.v[k] == -1 ? -1 : want.v[k] + 1) << k;
}

TEST_F(InterfacesOpenCL, SparseMatricesGoThroughTheDevice)
{
	Csr m;
	starpu_data_handle_t csr;
	starpu_csr_data_register(&csr, STARPU_MAIN_RAM, 5, 3, (uintptr_t)m.nzval, m.colind, m.rowptr, 0, sizeof(int));
	add_on_device(csr);
	starpu_data_unregister(csr);
	EXPECT_EQ(std::vector<int>(m.nzval, m.nzval + 5), (std::vector<int>{ 2, 3, 4, 5, 6 }));
	EXPECT_EQ(std::vector<uint32_t>(m.colind, m.colind + 5), (std::vector<uint32_t>{ 0, 2, 2, 0, 1 }));

	Bcsr b;
	starpu_data_handle_t bcsr;
	starpu_bcsr_data_register(&bcsr, STARPU_MAIN_RAM, 3, 2, (uintptr_t)b.nzval, b.colind, b.rowptr, 0, 2, 2, sizeof(int));
	add_on_device(bcsr);
	starpu_data_unregister(bcsr);
	EXPECT_EQ(b.nzval[0], 1);
	EXPECT_EQ(b.nzval[11], 12);

	int values[3] = { 7, 8, 9 };
	uint32_t columns[3] = { 0, 3, 1 }, rows[3] = { 1, 1, 2 };
	starpu_data_handle_t coo;
	starpu_coo_data_register(&coo, STARPU_MAIN_RAM, 4, 3, 3, columns, rows, (uintptr_t)values, sizeof(int));
	add_on_device(coo);
	starpu_data_unregister(coo);
	EXPECT_EQ(values[2], 10);
	EXPECT_EQ(rows[2], 2u);
}

TEST_F(InterfacesOpenCL, NowhereHandleFirstUsedOnTheDevice)
{
	starpu_data_handle_t h;
	starpu_vector_data_register(&h, -1, 0, 16, sizeof(int));
	add_on_device(h, true);
	unsigned opencl_node = starpu_worker_get_memory_node((unsigned)starpu_worker_get_by_type(STARPU_OPENCL_WORKER, 0));
	EXPECT_TRUE(starpu_data_is_on_node(h, opencl_node));
	EXPECT_EQ(starpu_data_handle_to_pointer(h, STARPU_MAIN_RAM), nullptr) << "main memory never used it";
	ASSERT_EQ(starpu_data_acquire(h, STARPU_W), 0);
	int *p = (int *)starpu_data_handle_to_pointer(h, STARPU_MAIN_RAM);
	ASSERT_NE(p, nullptr);
	for (int i = 0; i < 16; i++)
		p[i] = i;
	starpu_data_release(h);
	add_on_device(h);
	EXPECT_EQ(((int *)starpu_vector_get_local_ptr(h))[15], 16);
	starpu_data_unregister(h);
}

// The multiformat tests' format: points stored as an array of structures on the CPU and as
// a structure of arrays on the device, the conversions between them, and a device kernel
// doubling x. Each test keeps one for the whole process (static: the runtime may still
// refer to the codelets after the test's data is gone).
struct SoaFormat
{
	starpu_codelet to_device_cl, to_cpu_cl, double_cl;
	starpu_multiformat_data_interface_ops formats = {};
	SoaFormat()
	{
		starpu_codelet_init(&to_device_cl);
		to_device_cl.opencl_funcs[0] = to_soa;
		to_device_cl.nbuffers = 1;
		to_device_cl.modes[0] = STARPU_RW;
		to_cpu_cl = to_device_cl;
		to_cpu_cl.opencl_funcs[0] = to_aos;
		double_cl = to_device_cl;
		double_cl.opencl_funcs[0] = double_x;
		double_cl.name = "double_x";
		formats.cpu_elemsize = sizeof(point);
		formats.opencl_elemsize = 2 * sizeof(int);
		formats.cpu_to_opencl_cl = &to_device_cl;
		formats.opencl_to_cpu_cl = &to_cpu_cl;
	}
};

TEST_F(InterfacesOpenCL, MultiformatIsConvertedOnTheDevice)
{
	static SoaFormat soa;
	starpu_codelet &to_device_cl = soa.to_device_cl, &double_cl = soa.double_cl;
	starpu_multiformat_data_interface_ops &formats = soa.formats;
	conversions_to_device = conversions_to_cpu = 0;
	std::vector<point> pts(16);
	for (int i = 0; i < 16; i++)
		pts[i] = { i, 100 + i };
	starpu_data_handle_t h;
	starpu_multiformat_data_register(&h, STARPU_MAIN_RAM, pts.data(), 16, &formats);
	ASSERT_EQ(submit_add(&double_cl, h), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(conversions_to_device, 1);
	EXPECT_EQ(conversions_to_cpu, 1);
	ASSERT_EQ(starpu_data_acquire(h, STARPU_R), 0);
	EXPECT_EQ(pts[5].x, 10);
	EXPECT_EQ(pts[5].y, 105);
	starpu_data_release(h);
	// The CPU changes y: the next device task converts the new CPU format again.
	ASSERT_EQ(submit_add(&y_plus_one_codelet(), h), 0);
	ASSERT_EQ(submit_add(&double_cl, h), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(conversions_to_device, 2);
	// Two readers on the device: the device format is made once, and nothing goes back.
	static starpu_codelet read_cl = [] {
		starpu_codelet c = to_device_cl;
		c.opencl_funcs[0] = [](void **, void *) {};
		c.modes[0] = STARPU_R;
		c.name = "read_points";
		return c;
	}();
	ASSERT_EQ(submit_add(&y_plus_one_codelet(), h), 0);
	ASSERT_EQ(submit_add(&read_cl, h), 0);
	ASSERT_EQ(submit_add(&read_cl, h), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	EXPECT_EQ(conversions_to_device, 3);
	EXPECT_EQ(conversions_to_cpu, 2);
	starpu_data_unregister(h);
	EXPECT_EQ(pts[7].x, 28);
	EXPECT_EQ(pts[7].y, 109);

	// A format without its conversion codelet: the task is refused at submission with one
	// clear message, rather than run on unconverted data; the data is left as it is.
	static starpu_multiformat_data_interface_ops incomplete = {};
	incomplete.cpu_elemsize = sizeof(point);
	incomplete.opencl_elemsize = 2 * sizeof(int);
	starpu_data_handle_t bad;
	starpu_multiformat_data_register(&bad, STARPU_MAIN_RAM, pts.data(), 16, &incomplete);
	starpu_task *t = starpu_task_create();
	t->cl = &double_cl;
	t->handles[0] = bad;
	std::string err = stderr_of([&] { EXPECT_EQ(starpu_task_submit(t), -EINVAL); });
	starpu_task_destroy(t);
	EXPECT_TRUE(contains(err, "cpu_to_opencl_cl")) << err;
	EXPECT_EQ(lines_of(err).size(), 1u) << err;
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	// The same format is fine for a task kept on the CPU.
	ASSERT_EQ(submit_add(&y_plus_one_codelet(), bad), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_unregister(bad);
	EXPECT_EQ(pts[7].x, 28);
	EXPECT_EQ(pts[7].y, 110);
}

// The format loses its conversion codelet after a task was accepted (it waits for
// a tag meanwhile): the task fails when its data cannot be converted (status
// STARPU_TASK_STOPPED, one error naming the codelet), the program goes on and,
// the format mended, the next task runs on the data as it was. abort() before.
TEST_F(InterfacesOpenCL, MultiformatFormatChangedSinceSubmissionFailsTheTask)
{
	static SoaFormat soa;
	starpu_codelet &to_device_cl = soa.to_device_cl, &double_cl = soa.double_cl;
	starpu_multiformat_data_interface_ops &formats = soa.formats;
	std::vector<point> pts(16);
	for (int i = 0; i < 16; i++)
		pts[i] = { i, 100 + i };
	starpu_data_handle_t h;
	starpu_multiformat_data_register(&h, STARPU_MAIN_RAM, pts.data(), 16, &formats);
	starpu_tag_declare_deps(9501, 1, (starpu_tag_t)9500);
	starpu_task *t = starpu_task_create();
	t->cl = &double_cl;
	t->handles[0] = h;
	t->use_tag = 1;
	t->tag_id = 9501;
	t->detach = 0;
	t->destroy = 0;
	ASSERT_EQ(starpu_task_submit(t), 0);
	formats.cpu_to_opencl_cl = nullptr;
	std::string err = stderr_of([&] {
		starpu_tag_notify_from_apps(9500);
		EXPECT_EQ(starpu_task_wait(t), 0);
	});
	EXPECT_EQ(t->status, STARPU_TASK_STOPPED);
	starpu_task_destroy(t);
	EXPECT_TRUE(contains(err, "its format has no cpu_to_opencl_cl codelet with an implementation for that device, so the task "
				  "that needs it fails (STARPU_TASK_STOPPED)")) << err;
	EXPECT_TRUE(contains(err, "task 'double_x' (job ")) << err;
	formats.cpu_to_opencl_cl = &to_device_cl;
	ASSERT_EQ(submit_add(&double_cl, h), 0);
	ASSERT_EQ(starpu_task_wait_for_all(), 0);
	starpu_data_unregister(h);
	EXPECT_EQ(pts[5].x, 10) << "doubled once";
	EXPECT_EQ(pts[5].y, 105);
}

} // namespace
#endif
