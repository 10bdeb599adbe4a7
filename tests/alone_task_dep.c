/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A program that includes only <starpu_task_dep.h>, the header StarPU 1.4
 * installs for explicit dependencies (issue 40), has the tag and task
 * dependency calls; the other headers StarPU installs and this runtime adds
 * compile alone too (the other alone_*.c). */
#include <starpu_task_dep.h>

#include "alone_headers.h"

/* The empty task of tag `last` depends on tag `first`, which the application notifies:
 * 0 once the task is done. */
int astro_alone_tag_chain(unsigned long long first, unsigned long long last)
{
	starpu_tag_t dep = (starpu_tag_t)first;
	starpu_tag_declare_deps_array((starpu_tag_t)last, 1, &dep);
	struct starpu_task *task = starpu_task_create();
	task->use_tag = 1;
	task->tag_id = (starpu_tag_t)last;
	int ret = starpu_task_submit(task);
	if (ret)
		return ret;
	starpu_tag_notify_from_apps((starpu_tag_t)first);
	ret = starpu_tag_wait((starpu_tag_t)last);
	starpu_tag_remove((starpu_tag_t)last);
	starpu_tag_remove((starpu_tag_t)first);
	return ret;
}
