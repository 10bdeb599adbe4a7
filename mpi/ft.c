/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * starpu_mpi_ft.h: StarPU-MPI's checkpoints need its fault-tolerance build
 * (--enable-mpi-ft), which this runtime does not provide. Every call says
 * so, naming itself, and returns -ENOSYS; nothing is saved.
 */
#include "mpi_private.h"
#include "starpu_mpi_ft.h"

#include <errno.h>
#include <stddef.h>

static int declined(const char *fn)
{
	_astro_mpi_error("%s: checkpoints need StarPU-MPI built with its fault tolerance (--enable-mpi-ft), which this runtime does not "
			 "provide: no checkpoint is taken; drop the call, or run on a StarPU built with that option",
			 fn);
	return -ENOSYS;
}

int starpu_mpi_checkpoint_init(void)
{
	return declined("starpu_mpi_checkpoint_init");
}

int starpu_mpi_checkpoint_shutdown(void)
{
	return declined("starpu_mpi_checkpoint_shutdown");
}

int starpu_mpi_checkpoint_template_register(starpu_mpi_checkpoint_template_t *cp_template, int cp_id, int cp_domain, ...)
{
	(void)cp_id;
	(void)cp_domain;
	if (cp_template)
		*cp_template = NULL;
	return declined("starpu_mpi_checkpoint_template_register");
}

int starpu_mpi_checkpoint_template_create(starpu_mpi_checkpoint_template_t *cp_template, int cp_id, int cp_domain)
{
	(void)cp_id;
	(void)cp_domain;
	if (cp_template)
		*cp_template = NULL;
	return declined("starpu_mpi_checkpoint_template_create");
}

int starpu_mpi_checkpoint_template_add_entry(starpu_mpi_checkpoint_template_t *cp_template, ...)
{
	(void)cp_template;
	return declined("starpu_mpi_checkpoint_template_add_entry");
}

int starpu_mpi_checkpoint_template_freeze(starpu_mpi_checkpoint_template_t *cp_template)
{
	(void)cp_template;
	return declined("starpu_mpi_checkpoint_template_freeze");
}

int starpu_mpi_checkpoint_template_submit(starpu_mpi_checkpoint_template_t cp_template, int prio)
{
	(void)cp_template;
	(void)prio;
	return declined("starpu_mpi_checkpoint_template_submit");
}

int starpu_mpi_checkpoint_template_print(starpu_mpi_checkpoint_template_t cp_template)
{
	(void)cp_template;
	return declined("starpu_mpi_checkpoint_template_print");
}

int starpu_mpi_ft_turn_on(void)
{
	return declined("starpu_mpi_ft_turn_on");
}

int starpu_mpi_ft_turn_off(void)
{
	return declined("starpu_mpi_ft_turn_off");
}
