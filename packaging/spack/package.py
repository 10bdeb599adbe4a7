# SPDX-License-Identifier: LGPL-2.1-or-later
# Spack recipe for Astrolabe (https://spack.io). No release is published yet:
# build it from a checkout with
#     spack dev-build -d /path/to/astrolabe astrolabe@1.4.12 +opencl ~cuda
# Each variant turns a plugin (or an optional library) on or off through the
# configure option CONFIGURE_OPTIONS names (tests/test_docs checks that every
# option exists in configure).

from spack.package import *

# variant: (configure option when on, configure option when off)
CONFIGURE_OPTIONS = {
    "opencl": ("--enable-plugin-opencl", "--disable-plugin-opencl"),
    "cuda": ("--enable-plugin-cuda", "--disable-plugin-cuda"),
    # ~papi: no PAPI plugin, and the energy and sampler plugins built without
    # PAPI (powercap, the runtime's counters) even when the system has one.
    "papi": (["--with-papi", "--enable-plugin-papi-sde", "--enable-plugin-papi-task"],
             ["--without-papi", "--disable-plugin-papi-sde", "--disable-plugin-papi-task"]),
    "otf2": ("--enable-plugin-trace", "--disable-plugin-trace"),
    "mpi": ("--with-mpi", "--without-mpi"),
    "glpk": ("--with-glpk", "--without-glpk"),
    "blas": ("--with-lapacke", "--without-lapacke"),
    "static_plugins": ("--enable-static-plugins", "--disable-static-plugins"),
    "instrumentation": ("--enable-instrumentation", "--disable-instrumentation"),
}


class Astrolabe(AutotoolsPackage):
    """A task-based runtime for heterogeneous machines that speaks the StarPU
    1.4 C API: a small kernel (tasks, dependencies, data, workers, the plugin
    loader) plus plugins: the CPU, OpenCL and CUDA drivers, the scheduling
    policies, profiling tools and counter modules. StarPU programs build
    unchanged against it (pkg-config starpu-1.4)."""

    maintainers = []

    license("LGPL-2.1-or-later")

    version("1.4.12")

    variant("opencl", default=True, description="OpenCL driver (one worker per OpenCL device)")
    variant("cuda", default=False, description="CUDA driver (one worker per CUDA device)")
    variant("papi", default=True, description="PAPI counter modules: software-defined events, per-task PAPI events")
    variant("otf2", default=True, description="Execution traces as OTF2 archives, and starpu_fxt_tool")
    variant("mpi", default=True, description="StarPU-MPI (libstarpumpi-1.4) over MPI")
    variant("glpk", default=True, description="Solve the theoretical lower bound (starpu_bound_compute) with GLPK")
    variant("blas", default=True, description="Fit multiple-regression models (LAPACKE); linear-algebra examples (OpenBLAS)")
    variant("static_plugins", default=False, description="Link the plugins into libastrolabe instead of loadable modules")
    variant("instrumentation", default=True, description="Instrumentation states and bursts (off: ASTRO_INSTRUMENT code compiles out)")
    variant("doc", default=False, description="Build and install the handbook and the API reference (Doxygen)")

    depends_on("autoconf", type="build")
    depends_on("automake", type="build")
    depends_on("libtool", type=("build", "link"))
    depends_on("pkgconfig", type="build")
    depends_on("help2man", type="build")
    depends_on("doxygen", type="build", when="+doc")
    depends_on("python@3:", type=("build", "run"))
    depends_on("glib@2.66:")
    depends_on("json-glib@1.6:")
    depends_on("hwloc@2:")
    depends_on("opencl", when="+opencl")
    depends_on("cuda", when="+cuda")
    depends_on("papi", when="+papi")
    depends_on("otf2", when="+otf2")
    depends_on("mpi", when="+mpi")
    depends_on("glpk", when="+glpk")
    depends_on("openblas", when="+blas")
    depends_on("googletest", type="test")

    def autoreconf(self, spec, prefix):
        Executable("./autogen.sh")()

    def setup_build_environment(self, env):
        if self.spec.satisfies("+cuda"):
            env.set("CUDA_HOME", self.spec["cuda"].prefix)

    def configure_args(self):
        args = []
        for name, (on, off) in CONFIGURE_OPTIONS.items():
            chosen = on if self.spec.satisfies("+" + name) else off
            args.extend(chosen if isinstance(chosen, list) else [chosen])
        return args

    @run_after("build")
    def build_reference(self):
        if self.spec.satisfies("+doc"):
            make("doc")
