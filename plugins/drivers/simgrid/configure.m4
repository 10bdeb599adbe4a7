dnl SPDX-License-Identifier: LGPL-2.1-or-later
dnl driver_simgrid: the simulated CPU, CUDA and OpenCL workers of a simulation
dnl build (configure --enable-simgrid), and only of one.
AC_DEFUN([ASTRO_PLUGIN_CHECK_driver_simgrid], [
  AS_IF([test "x$enable_simgrid" = xyes], [], [astro_want=no])
])
