/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The disk back-ends StarPU 1.4 declares whatever its build, over libraries
 * this runtime does not use: HDF5 (one HDF5 file holding every object) and
 * LevelDB (a key-value store). A program that names them links, and
 * starpu_disk_register() refuses them with a message saying so and naming the
 * back-ends that exist here. Their methods stay NULL: nothing can call them.
 */
#include "memory/memory.h"

struct starpu_disk_ops starpu_disk_hdf5_ops;
struct starpu_disk_ops starpu_disk_leveldb_ops;

const char *_astro_disk_unbuilt(const struct starpu_disk_ops *ops)
{
	if (ops == &starpu_disk_hdf5_ops)
		return "starpu_disk_hdf5_ops (HDF5)";
	if (ops == &starpu_disk_leveldb_ops)
		return "starpu_disk_leveldb_ops (LevelDB)";
	return NULL;
}
