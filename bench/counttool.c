/* The tool counting every event, for bench/stress: the one tests/test_stress loads. */
#include "../tests/plugins/proftool_count.c"
