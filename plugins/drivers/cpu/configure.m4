dnl SPDX-License-Identifier: LGPL-2.1-or-later
dnl driver_cpu runs codelets on the cores; a simulation build (--enable-simgrid)
dnl has plugins/drivers/simgrid's simulated CPU workers instead.
AC_DEFUN([ASTRO_PLUGIN_CHECK_driver_cpu], [
  AS_IF([test "x$enable_simgrid" = xyes], [
    astro_want=no
    AC_MSG_NOTICE([simulation build: plugins/drivers/simgrid simulates the CPU workers instead of plugins/drivers/cpu])])
])
