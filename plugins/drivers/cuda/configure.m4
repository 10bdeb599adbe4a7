dnl SPDX-License-Identifier: LGPL-2.1-or-later
dnl driver_cuda needs the CUDA toolkit in $CUDA_HOME (default /usr/local/cuda):
dnl the runtime headers and libcudart, linked into the plugin only. cuBLAS and
dnl cuSOLVER are opened by starpu_cublas_init()/starpu_cusolver_init() when a
dnl program calls them. nvcc, when there, compiles the kernels of the tests.
dnl The starpu_cublas_*/starpu_cusolver_* entry points are in libastrolabe in
dnl every build (they do nothing without a CUDA worker, as StarPU's).
AC_DEFUN([ASTRO_PLUGIN_CHECK_driver_cuda], [
  dnl A simulation build needs no toolkit: plugins/drivers/simgrid simulates the CUDA workers.
  AS_IF([test "x$enable_simgrid" = xyes], [
    astro_want=no
    astro_cuda_why="a simulation build: plugins/drivers/simgrid simulates the CUDA workers"
    AC_MSG_NOTICE([simulation build: plugins/drivers/simgrid simulates the CUDA workers instead of plugins/drivers/cuda])
  ], [
  AC_ARG_VAR([CUDA_HOME], [where the CUDA toolkit is (default /usr/local/cuda)])
  astro_cuda_home=${CUDA_HOME:-/usr/local/cuda}
  astro_cuda_why=
  astro_save_CPPFLAGS=$CPPFLAGS
  astro_save_LIBS=$LIBS
  CPPFLAGS="$CPPFLAGS -isystem $astro_cuda_home/include"
  AC_CHECK_HEADERS([cuda_runtime.h cublas_v2.h cusolverDn.h cusolverSp.h], [],
                   [astro_plugin_ok=no; astro_cuda_why="no CUDA headers in $astro_cuda_home/include"])
  AS_IF([test "x$astro_plugin_ok" = xyes], [
    LIBS="-L$astro_cuda_home/lib64 $LIBS"
    AC_CHECK_LIB([cudart], [cudaGetDeviceCount],
                 [CUDA_LIBS="-L$astro_cuda_home/lib64 -Wl,-rpath,$astro_cuda_home/lib64 -lcudart"],
                 [astro_plugin_ok=no; astro_cuda_why="no libcudart in $astro_cuda_home/lib64"])])
  CPPFLAGS=$astro_save_CPPFLAGS
  LIBS=$astro_save_LIBS
  AS_IF([test "x$astro_plugin_ok" = xyes], [
    CUDA_CPPFLAGS="-isystem $astro_cuda_home/include"
    AC_PATH_PROG([NVCC], [nvcc], [], [$astro_cuda_home/bin])
  ], [
    AC_MSG_NOTICE([CUDA toolkit not found ($astro_cuda_why; set CUDA_HOME): plugins/drivers/cuda is not built])])
  AC_SUBST([CUDA_LIBS])
  ])
])
