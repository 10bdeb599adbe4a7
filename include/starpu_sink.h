/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * The header StarPU 1.4 installs for the main loop of a sink process of its MPI and
 * TCP/IP master-slave modes (starpu_sink_common_worker()). This runtime has no
 * master-slave mode, so the header declares nothing: a program that calls that
 * function is not one this runtime can run. */
#ifndef __STARPU_SINK_H__
#define __STARPU_SINK_H__

#endif /* __STARPU_SINK_H__ */
