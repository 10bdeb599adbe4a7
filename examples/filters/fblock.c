/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A 3D block (NX x NY x NZ ints) partitioned along x into PARTS sub-blocks
 * (starpu_block_filter_block); one task per sub-block multiplies its
 * elements by a factor; before unpartitioning, starpu_data_display_memory_stats()
 * prints the handles' memory statistics (seed 004 section 4.10: run with
 * STARPU_MEMORY_STATS=1). The block is checked after unpartitioning: exit
 * status 0 when every element is the factor times its starting value.
 */
#include <starpu.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NX 5
#define NY 4
#define NZ 3
#define PARTS 2
#define FACTOR 2

static void scale_block(void *buffers[], void *arg)
{
	int factor;
	starpu_codelet_unpack_args(arg, &factor);
	int *b = (int *)STARPU_BLOCK_GET_PTR(buffers[0]);
	unsigned nx = STARPU_BLOCK_GET_NX(buffers[0]), ny = STARPU_BLOCK_GET_NY(buffers[0]), nz = STARPU_BLOCK_GET_NZ(buffers[0]);
	unsigned ldy = STARPU_BLOCK_GET_LDY(buffers[0]), ldz = STARPU_BLOCK_GET_LDZ(buffers[0]);
	for (unsigned z = 0; z < nz; z++)
		for (unsigned y = 0; y < ny; y++)
			for (unsigned x = 0; x < nx; x++)
				b[x + y * ldy + z * ldz] *= factor;
}

static struct starpu_codelet scale_cl = {
	.cpu_funcs = { scale_block },
	.cpu_funcs_name = { "scale_block" },
	.nbuffers = 1,
	.modes = { STARPU_RW },
	.name = "block_scal",
};

int main(void)
{
	int block[NX * NY * NZ];
	for (int i = 0; i < NX * NY * NZ; i++)
		block[i] = i;

	int ret = starpu_init(NULL);
	if (ret == -ENODEV)
		return 77;
	STARPU_CHECK_RETURN_VALUE(ret, "starpu_init");

	starpu_data_handle_t handle;
	starpu_block_data_register(&handle, STARPU_MAIN_RAM, (uintptr_t)block, NX, NX * NY, NX, NY, NZ, sizeof(int));
	struct starpu_data_filter f = { .filter_func = starpu_block_filter_block, .nchildren = PARTS };
	starpu_data_partition(handle, &f);
	printf("%u sub-blocks\n", starpu_data_get_nb_children(handle));

	int status = 0, factor = FACTOR;
	for (unsigned p = 0; p < PARTS && status == 0; p++) {
		starpu_data_handle_t sub = starpu_data_get_sub_data(handle, 1, p);
		ret = starpu_task_insert(&scale_cl, STARPU_RW, sub, STARPU_VALUE, &factor, sizeof(factor), 0);
		if (ret) {
			fprintf(stderr, "fblock: a task could not be submitted: %s\n", strerror(-ret));
			status = ret == -ENODEV ? 77 : 1;
		}
	}
	starpu_task_wait_for_all();
	starpu_data_display_memory_stats();
	starpu_data_unpartition(handle, STARPU_MAIN_RAM);
	starpu_data_unregister(handle);
	starpu_shutdown();

	for (int i = 0; status == 0 && i < NX * NY * NZ; i++)
		if (block[i] != FACTOR * i) {
			fprintf(stderr, "fblock: element %d is %d, not %d\n", i, block[i], FACTOR * i);
			status = 1;
		}
	if (status == 0)
		printf("every element scaled by %d\n", FACTOR);
	return status;
}
