#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Builds Astrolabe from scratch and runs the demo or the tests.
#   ./build.sh demo     installs the Debian dependencies, builds in ./build, runs examples/demo
#   ./build.sh test     installs the Debian dependencies, builds in ./build-test, runs the whole test suite
# Each command rebuilds only its own folder, so the tests never delete the demo's
# results (build/examples/astrolabe-demo). Extra configure options may follow
# (e.g. ./build.sh test --enable-asan). BUILD_DIR=build-NAME builds in
# ./build-NAME instead (e.g. BUILD_DIR=build-asan), so that several
# configurations can sit side by side.
set -e
cd "$(dirname "$0")"
what=${1:-demo}
[ $# -gt 0 ] && shift
default_build=build
[ "$what" = test ] && default_build=build-test
build=${BUILD_DIR:-$default_build}
case "$build" in
build-aux|*/*) echo "BUILD_DIR='$build': name a folder build-NAME beside build.sh (it is removed and made again)" >&2; exit 2 ;;
build|build-?*) ;;
*) echo "BUILD_DIR='$build': name a folder build-NAME beside build.sh (it is removed and made again)" >&2; exit 2 ;;
esac

DEPS="build-essential autoconf automake libtool libtool-bin libltdl-dev libglib2.0-dev libjson-glib-dev libhwloc-dev pkg-config libgtest-dev libpapi-dev clang libclang-rt-14-dev"
DEPS="$DEPS python3 gnuplot-nox pajeng recutils graphviz chromium"	# offline trace tools and their checks (dot renders dag.dot, headless Chromium reads the HTML pages)
DEPS="$DEPS liblapacke-dev libopenblas-dev"	# multiple-regression models, the linear-algebra examples and the demo
DEPS="$DEPS libotf2-trace-dev otf2-tools"	# execution traces (OTF2)
DEPS="$DEPS opencl-headers ocl-icd-opencl-dev pocl-opencl-icd"	# the OpenCL driver (PoCL runs its tests)
DEPS="$DEPS libglpk-dev glpk-utils"	# the theoretical lower bound (starpu_bound_compute) and glpsol for its checks
DEPS="$DEPS libopenmpi-dev openmpi-bin"	# StarPU-MPI (libstarpumpi-1.4) and mpirun for its tests
DEPS="$DEPS libsimgrid-dev"	# the simulation flavour (configure --enable-simgrid, built and tested by CI)
DEPS="$DEPS doxygen help2man"	# the API reference (make doc) and the programs' manual pages
DEPS="$DEPS debhelper dpkg-dev"	# the binary packages of debian/ (packaging/check-packages)
missing=
for p in $DEPS; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "Installing:$missing"
	SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

rm -rf "$build"
./autogen.sh >autogen.log 2>&1 || { tail -20 autogen.log; exit 1; }
mkdir "$build"
cd "$build"
../configure --prefix="$PWD/_install" "$@" >configure.log || { tail -30 configure.log; exit 1; }
sed -n '/^Astrolabe .* configured/,$p' configure.log
make -j"$(nproc)" >make.log 2>&1 || { tail -40 make.log; exit 1; }

case "$what" in
demo)
	make -s -C examples demo-run
	;;
test)
	exec ../tests/run-all
	;;
*)
	echo "usage: $0 demo|test [configure options]" >&2
	exit 2
	;;
esac
