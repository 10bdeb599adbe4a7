/* SPDX-License-Identifier: LGPL-2.1-or-later */
/** @file
 * CRC32C hashing, used for data footprints. */
#ifndef __STARPU_HASH_H__
#define __STARPU_HASH_H__

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/** CRC32C (polynomial 0x1EDC6F41, MSB first, no inversion, as StarPU) of the n bytes at input in memory order, chained on inputcrc. */
uint32_t starpu_hash_crc32c_be_n(const void *input, size_t n, uint32_t inputcrc);
/** CRC32C of the 32-bit word input, chained on inputcrc. */
uint32_t starpu_hash_crc32c_be(uint32_t input, uint32_t inputcrc);
/** CRC32C of the NUL-terminated string str, chained on inputcrc. */
uint32_t starpu_hash_crc32c_string(const char *str, uint32_t inputcrc);
/** CRC32C of the pointer value, chained on inputcrc. */
uint32_t starpu_hash_crc32c_be_ptr(void *input, uint32_t inputcrc);

#ifdef __cplusplus
}
#endif

#endif /* __STARPU_HASH_H__ */
