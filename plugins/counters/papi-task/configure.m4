dnl SPDX-License-Identifier: LGPL-2.1-or-later
dnl counters_papi_task counts STARPU_PROF_PAPI_EVENTS per task with PAPI
dnl (libpapi-dev); with it, starpu_config.h defines STARPU_PAPI and the
dnl profiling info has papi_values, as in StarPU 1.4.
AC_DEFUN([ASTRO_PLUGIN_CHECK_counters_papi_task], [
  AS_IF([test "x$with_papi" = xno], [astro_plugin_ok=no; AC_MSG_NOTICE([--without-papi: STARPU_PROF_PAPI_EVENTS is not available])],
        [AC_CHECK_HEADER([papi.h], [], [astro_plugin_ok=no])])
  AS_IF([test "x$astro_plugin_ok" = xyes],
        [AC_CHECK_LIB([papi], [PAPI_library_init], [PAPI_LIBS=-lpapi], [astro_plugin_ok=no])])
  dnl Its test counts a software-defined event of its own (libsde, also from libpapi-dev).
  AS_IF([test "x$astro_plugin_ok" = xyes],
        [AC_CHECK_LIB([sde], [papi_sde_init], [PAPI_TASK_SDE_LIBS=-lsde], [astro_plugin_ok=no])])
  AS_IF([test "x$astro_plugin_ok" = xyes || test "x$with_papi" = xno], [], [AC_MSG_NOTICE([PAPI not found (install libpapi-dev): STARPU_PROF_PAPI_EVENTS is not available])])
  AC_SUBST([PAPI_LIBS])
  AC_SUBST([PAPI_TASK_SDE_LIBS])
])
