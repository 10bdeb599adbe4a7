/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * StarPU-MPI's checkpoints (fault tolerance), the StarPU 1.4 names. They
 * exist in StarPU-MPI only when it is built with its fault tolerance
 * (STARPU_USE_MPI_FT, --enable-mpi-ft), which this runtime does not
 * provide: each call says so on stderr and returns -ENOSYS, so that a
 * program relying on checkpoints learns that none is taken (a StarPU
 * build without the option returns 0 and takes none).
 */
#ifndef __STARPU_MPI_FT_H__
#define __STARPU_MPI_FT_H__

#include <starpu.h>

#ifdef __cplusplus
extern "C" {
#endif

struct _starpu_mpi_checkpoint_template;
/** A checkpoint template: the data and values a checkpoint saves. */
typedef struct _starpu_mpi_checkpoint_template *starpu_mpi_checkpoint_template_t;

/** Starts the checkpoint mechanism: -ENOSYS here (said). */
int starpu_mpi_checkpoint_init(void);
/** Stops it: -ENOSYS here (said). */
int starpu_mpi_checkpoint_shutdown(void);
/** Creates, fills (STARPU_R handle and backup rank, STARPU_VALUE pointer, size, tag and backup
 * function, then 0) and freezes a template: -ENOSYS here (said), *cp_template set to NULL. */
int starpu_mpi_checkpoint_template_register(starpu_mpi_checkpoint_template_t *cp_template, int cp_id, int cp_domain, ...);
/** Creates an empty template: -ENOSYS here (said), *cp_template set to NULL. */
int starpu_mpi_checkpoint_template_create(starpu_mpi_checkpoint_template_t *cp_template, int cp_id, int cp_domain);
/** Adds entries to a template: -ENOSYS here (said). */
int starpu_mpi_checkpoint_template_add_entry(starpu_mpi_checkpoint_template_t *cp_template, ...);
/** Freezes a template: -ENOSYS here (said). */
int starpu_mpi_checkpoint_template_freeze(starpu_mpi_checkpoint_template_t *cp_template);
/** Submits a checkpoint of a frozen template: -ENOSYS here (said). */
int starpu_mpi_checkpoint_template_submit(starpu_mpi_checkpoint_template_t cp_template, int prio);
/** Prints a template: -ENOSYS here (said). */
int starpu_mpi_checkpoint_template_print(starpu_mpi_checkpoint_template_t cp_template);
/** Turns fault tolerance on: -ENOSYS here (said). */
int starpu_mpi_ft_turn_on(void);
/** Turns it off: -ENOSYS here (said). */
int starpu_mpi_ft_turn_off(void);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_MPI_FT_H__ */
