dnl SPDX-License-Identifier: LGPL-2.1-or-later
dnl counters_papi_sde needs PAPI's software-defined-events library (libsde,
dnl from libpapi-dev); its test reads the events back through libpapi.
AC_DEFUN([ASTRO_PLUGIN_CHECK_counters_papi_sde], [
  AS_IF([test "x$with_papi" = xno], [astro_plugin_ok=no; AC_MSG_NOTICE([--without-papi: plugins/counters/papi-sde is not built])],
        [AC_CHECK_HEADER([sde_lib.h], [], [astro_plugin_ok=no])])
  AS_IF([test "x$astro_plugin_ok" = xyes],
        [AC_CHECK_LIB([sde], [papi_sde_init], [SDE_LIBS=-lsde], [astro_plugin_ok=no])])
  AS_IF([test "x$astro_plugin_ok" = xyes],
        [AC_CHECK_LIB([papi], [PAPI_library_init], [PAPI_LIBS=-lpapi], [astro_plugin_ok=no])])
  AS_IF([test "x$astro_plugin_ok" = xyes || test "x$with_papi" = xno], [], [AC_MSG_NOTICE([PAPI SDE not found (install libpapi-dev): plugins/counters/papi-sde is not built])])
  AC_SUBST([SDE_LIBS])
  AC_SUBST([PAPI_LIBS])
])
