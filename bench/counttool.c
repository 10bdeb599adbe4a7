/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The tool counting every event, for bench/stress: the one tests/test_stress loads. */
#include "../tests/plugins/proftool_count.c"
