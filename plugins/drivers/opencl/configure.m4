dnl SPDX-License-Identifier: LGPL-2.1-or-later
dnl driver_opencl needs the OpenCL headers and the ICD loader (Debian:
dnl opencl-headers, ocl-icd-opencl-dev); a platform (pocl-opencl-icd, a GPU
dnl driver) is only needed at run time. Its starpu_opencl_* helpers go into
dnl libastrolabe, which then links -lOpenCL (ASTRO_HAVE_OPENCL).
AC_DEFUN([ASTRO_PLUGIN_CHECK_driver_opencl], [
  dnl A simulation build needs no toolkit: plugins/drivers/simgrid simulates the OpenCL workers.
  AS_IF([test "x$enable_simgrid" = xyes], [
    astro_want=no
    astro_opencl_why="a simulation build: plugins/drivers/simgrid simulates the OpenCL workers"
    AC_MSG_NOTICE([simulation build: plugins/drivers/simgrid simulates the OpenCL workers instead of plugins/drivers/opencl])
  ], [
  AC_CHECK_HEADER([CL/cl.h], [], [astro_plugin_ok=no])
  AS_IF([test "x$astro_plugin_ok" = xyes],
        [AC_CHECK_LIB([OpenCL], [clGetPlatformIDs], [OPENCL_LIBS=-lOpenCL], [astro_plugin_ok=no])])
  AS_IF([test "x$astro_plugin_ok" = xyes], [],
        [AC_MSG_NOTICE([OpenCL not found (install opencl-headers and ocl-icd-opencl-dev): plugins/drivers/opencl is not built])])
  AC_SUBST([OPENCL_LIBS])
  ])
])
