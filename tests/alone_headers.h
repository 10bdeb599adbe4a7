/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Functions of C files that each include one public header alone (issue 40). */
#ifndef ASTRO_TEST_ALONE_HEADERS_H
#define ASTRO_TEST_ALONE_HEADERS_H

#ifdef __cplusplus
extern "C" {
#endif

int astro_alone_interface_copies(int *src, int *dst1, int *dst2, int *dst3, int *dst4);
int astro_alone_tag_chain(unsigned long long first, unsigned long long last);
/* The values of a few macros of the headers compiled alone (alone_headers.c): STARPU_MAX(3, 4). */
int astro_alone_helper_max(void);

#ifdef __cplusplus
}
#endif

#endif
