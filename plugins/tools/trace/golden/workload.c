/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The workload behind the golden archive (golden/archive): a small run with
 * every kind of thing starpu_fxt_tool converts from a single process: two
 * named data, tasks that depend on each other through them and through a
 * tag, priorities, flops, an iteration, a user event and a string event.
 * test_trace's Golden tests convert the archive and compare each output
 * with golden/expected, byte for byte. To record it again (after a change
 * of the archive's content) and remake the expected outputs, see
 * golden/README.
 */
#include <starpu.h>
#include <stdio.h>

static void scale(void *buffers[], void *arg)
{
	(void)arg;
	double *v = (double *)STARPU_VECTOR_GET_PTR(buffers[0]);
	unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
	for (unsigned i = 0; i < n; i++)
		v[i] *= 2.0;
}

static void add(void *buffers[], void *arg)
{
	(void)arg;
	double *x = (double *)STARPU_VECTOR_GET_PTR(buffers[0]);
	const double *y = (const double *)STARPU_VECTOR_GET_PTR(buffers[1]);
	unsigned n = STARPU_VECTOR_GET_NX(buffers[0]);
	for (unsigned i = 0; i < n; i++)
		x[i] += y[i];
}

static void mark(void *buffers[], void *arg)
{
	(void)buffers;
	(void)arg;
}

static struct starpu_codelet mark_cl = { .cpu_funcs = { mark }, .nbuffers = 0, .name = "mark" };
static struct starpu_codelet scale_cl = { .cpu_funcs = { scale }, .nbuffers = 1, .modes = { STARPU_RW }, .name = "scale" };
static struct starpu_codelet add_cl = {
	.cpu_funcs = { add }, .nbuffers = 2, .modes = { STARPU_RW, STARPU_R }, .name = "add", .color = 0x3366ff
};

int main(void)
{
	static double x[256], y[256];
	for (unsigned i = 0; i < 256; i++)
		x[i] = y[i] = i;
	if (starpu_init(NULL) != 0)
		return 77;
	starpu_data_handle_t hx, hy;
	starpu_vector_data_register(&hx, STARPU_MAIN_RAM, (uintptr_t)x, 256, sizeof(double));
	starpu_vector_data_register(&hy, STARPU_MAIN_RAM, (uintptr_t)y, 256, sizeof(double));
	starpu_data_set_name(hx, "x");
	starpu_data_set_name(hy, "y");
	starpu_fxt_trace_user_event_string("golden-begin");
	starpu_iteration_push(1);
	for (int round = 0; round < 3; round++) {
		if (starpu_task_insert(&scale_cl, STARPU_RW, hy, STARPU_PRIORITY, round, STARPU_FLOPS, 256.0, 0) != 0 ||
		    starpu_task_insert(&add_cl, STARPU_RW, hx, STARPU_R, hy, STARPU_FLOPS, 256.0, 0) != 0)
			return 1;
	}
	starpu_iteration_pop();
	/* Two tasks without data chained by tags, the second submitted first. */
	struct starpu_task *first = starpu_task_create(), *second = starpu_task_create();
	first->cl = &mark_cl;
	first->use_tag = 1;
	first->tag_id = 0x10;
	second->cl = &mark_cl;
	second->use_tag = 1;
	second->tag_id = 0x11;
	starpu_tag_declare_deps((starpu_tag_t)0x11, 1, (starpu_tag_t)0x10);
	if (starpu_task_submit(second) != 0 || starpu_task_submit(first) != 0)
		return 1;
	starpu_fxt_trace_user_event(42);
	starpu_task_wait_for_all();
	starpu_data_unregister(hx);
	starpu_data_unregister(hy);
	starpu_shutdown();
	printf("x[3] = %g\n", x[3]);
	return 0;
}
