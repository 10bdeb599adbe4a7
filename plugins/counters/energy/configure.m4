dnl SPDX-License-Identifier: LGPL-2.1-or-later
dnl counters_energy reads Linux powercap through sysfs (always built); with
dnl libpapi-dev it also reads PAPI's rapl component where powercap cannot be read.
AC_DEFUN([ASTRO_PLUGIN_CHECK_counters_energy], [
  astro_energy_papi=no
  AS_IF([test "x$with_papi" != xno],
        [AC_CHECK_HEADER([papi.h], [AC_CHECK_LIB([papi], [PAPI_library_init], [astro_energy_papi=yes])])])
  AS_IF([test "x$astro_energy_papi" = xyes],
        [ENERGY_PAPI_CFLAGS=-DHAVE_PAPI ENERGY_PAPI_LIBS=-lpapi],
        [AS_IF([test "x$with_papi" = xno],
               [AC_MSG_NOTICE([--without-papi: energy is read from Linux powercap only])],
               [AC_MSG_NOTICE([PAPI not found (install libpapi-dev): energy is read from Linux powercap only])])])
  dnl The test reads package energy events of its own through PAPI's sde component (libsde).
  AS_IF([test "x$astro_energy_papi" = xyes],
        [AC_CHECK_HEADER([sde_lib.h], [AC_CHECK_LIB([sde], [papi_sde_init], [ENERGY_SDE_CFLAGS=-DHAVE_SDE ENERGY_SDE_LIBS=-lsde])])])
  AC_SUBST([ENERGY_PAPI_CFLAGS])
  AC_SUBST([ENERGY_PAPI_LIBS])
  AC_SUBST([ENERGY_SDE_CFLAGS])
  AC_SUBST([ENERGY_SDE_LIBS])
])
