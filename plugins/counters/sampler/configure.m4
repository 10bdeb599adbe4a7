dnl SPDX-License-Identifier: LGPL-2.1-or-later
dnl counters_sampler reads PAPI components when libpapi-dev is installed;
dnl without it, it samples the runtime's own counters only.
AC_DEFUN([ASTRO_PLUGIN_CHECK_counters_sampler], [
  astro_sampler_papi=no
  AS_IF([test "x$with_papi" != xno],
        [AC_CHECK_HEADER([papi.h], [AC_CHECK_LIB([papi], [PAPI_library_init], [astro_sampler_papi=yes])])])
  AS_IF([test "x$astro_sampler_papi" = xyes],
        [SAMPLER_PAPI_CFLAGS=-DHAVE_PAPI SAMPLER_PAPI_LIBS=-lpapi],
        [AS_IF([test "x$with_papi" = xno],
               [AC_MSG_NOTICE([--without-papi: the sampler and atime read no PAPI component])],
               [AC_MSG_NOTICE([PAPI not found (install libpapi-dev): the sampler and atime read no PAPI component])])])
  AC_SUBST([SAMPLER_PAPI_CFLAGS])
  AC_SUBST([SAMPLER_PAPI_LIBS])
])
