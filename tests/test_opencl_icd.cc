// SPDX-License-Identifier: LGPL-2.1-or-later
// Counting OpenCL devices by default loads no platform that cannot give one
// of the wanted types (issue 41: PoCL's LLVM cost more than the rest of
// starpu_init()): the pre-check on fake vendor folders, then on this
// machine, where PoCL's CPU device is still found when asked for.
#include "helpers.h"
#include <dlfcn.h>
#include <fstream>
#include <sys/stat.h>
#include <sys/wait.h>

#ifdef STARPU_USE_OPENCL
extern "C" bool astro_opencl_platforms_may_offer(cl_device_type types);
#endif

using namespace astro_test;

namespace {

#ifdef STARPU_USE_OPENCL

const cl_device_type kDefault = CL_DEVICE_TYPE_GPU | CL_DEVICE_TYPE_ACCELERATOR;

// A vendors folder and a library folder with a PoCL of the given drivers (none: no pocl folder).
class FakeVendors : public ::testing::Test
{
protected:
	std::string root, vendors, lib;

	void SetUp() override
	{
		std::string tmpl = env_or("TMPDIR", "/tmp") + "/astro-icd-XXXXXX";
		std::vector<char> buf(tmpl.begin(), tmpl.end());
		buf.push_back('\0');
		ASSERT_NE(mkdtemp(buf.data()), nullptr);
		root = buf.data();
		vendors = root + "/vendors";
		lib = root + "/lib";
		ASSERT_EQ(mkdir(vendors.c_str(), 0755), 0);
		ASSERT_EQ(mkdir(lib.c_str(), 0755), 0);
		touch(lib + "/libpocl.so.2");
	}
	void TearDown() override { EXPECT_EQ(system(("rm -rf '" + root + "'").c_str()), 0); }

	static void touch(const std::string &path, const std::string &text = "")
	{
		std::ofstream(path) << text;
	}
	void icd(const std::string &name, const std::string &library) { touch(vendors + "/" + name, library + "\n"); }
	void pocl_drivers(std::initializer_list<const char *> drivers)
	{
		mkdir((lib + "/pocl").c_str(), 0755);
		for (const char *d : drivers)
			touch(lib + "/pocl/libpocl-devices-" + d + ".so");
	}
	bool may(cl_device_type types = kDefault)
	{
		ScopedEnv dir("OCL_ICD_VENDORS", vendors);
		ScopedEnv names("OCL_ICD_FILENAMES", nullptr);
		return astro_opencl_platforms_may_offer(types);
	}
};

TEST_F(FakeVendors, PoclWithCpuDriversOnlyGivesNoGpu)
{
	icd("pocl.icd", lib + "/libpocl.so.2");
	pocl_drivers({ "pthread", "basic" });
	EXPECT_FALSE(may());
	// Asked for CPU devices, it must be loaded.
	EXPECT_TRUE(may(kDefault | CL_DEVICE_TYPE_CPU));
	EXPECT_TRUE(may(CL_DEVICE_TYPE_CPU));
}

TEST_F(FakeVendors, NoVendorGivesNothing)
{
	EXPECT_FALSE(may());
}

TEST_F(FakeVendors, WhatIsNotKnownIsLoaded)
{
	icd("pocl.icd", lib + "/libpocl.so.2");
	pocl_drivers({ "pthread", "cuda" });
	EXPECT_TRUE(may()) << "a GPU driver of PoCL";
	EXPECT_EQ(system(("rm -rf '" + lib + "/pocl'").c_str()), 0);
	EXPECT_TRUE(may()) << "drivers built into PoCL";
	pocl_drivers({ "pthread" });
	EXPECT_FALSE(may());
	icd("other.icd", "/opt/vendor/libvendorcl.so");
	EXPECT_TRUE(may()) << "another vendor";
	unlink((vendors + "/other.icd").c_str());
	icd("missing.icd", lib + "/missing/libpocl.so.2");
	EXPECT_TRUE(may()) << "a PoCL not found where its file says";
	unlink((vendors + "/missing.icd").c_str());
	touch(vendors + "/empty.icd");
	EXPECT_TRUE(may()) << "an unreadable ICD file";
	unlink((vendors + "/empty.icd").c_str());
	EXPECT_FALSE(may());
}

TEST_F(FakeVendors, LoaderSettingsNamingLibrariesAreLoaded)
{
	icd("pocl.icd", lib + "/libpocl.so.2");
	pocl_drivers({ "pthread" });
	{
		ScopedEnv dir("OCL_ICD_VENDORS", vendors);
		ScopedEnv names("OCL_ICD_FILENAMES", lib + "/libpocl.so.2");
		EXPECT_TRUE(astro_opencl_platforms_may_offer(kDefault));
	}
	{
		ScopedEnv file("OCL_ICD_VENDORS", vendors + "/pocl.icd");
		EXPECT_TRUE(astro_opencl_platforms_may_offer(kDefault)) << "a file, not a folder";
	}
	{
		ScopedEnv vendors_unset("OCL_ICD_VENDORS", nullptr);
		ScopedEnv names_unset("OCL_ICD_FILENAMES", nullptr); /* a machine's own (the H200 machines set it) */
		ScopedEnv path("OPENCL_VENDOR_PATH", vendors);
		EXPECT_FALSE(astro_opencl_platforms_may_offer(kDefault)) << "ocl-icd's other variable";
	}
}

// The exit status of body run in a fresh process (this suite starts no runtime itself).
// The status body returns, run in a fresh process (gtest's threadsafe death-test style re-executes
// the suite: a fork of this multi-threaded process may not start threads under ThreadSanitizer).
#define EXPECT_IN_CHILD(body, message)                                                                    \
	do {                                                                                              \
		GTEST_FLAG_SET(death_test_style, "threadsafe");                                           \
		EXPECT_EXIT(_exit((body)()), testing::ExitedWithCode(0), "") << message;                   \
	} while (0)

bool pocl_loaded()
{
	void *h = dlopen("libpocl.so.2", RTLD_LAZY | RTLD_NOLOAD);
	if (h)
		dlclose(h);
	return h != nullptr;
}

// On this machine: where the pre-check says no platform can give a GPU, a default
// starpu_init() loads none and starts no OpenCL worker; asked for CPU devices, it
// still finds PoCL's (when PoCL is installed).
TEST(OpenCLProbe, DefaultInitLoadsNoUselessPlatform)
{
	ScopedEnv nopencl("STARPU_NOPENCL", nullptr);
	ScopedEnv ncuda("STARPU_NCUDA", "0");
	ScopedEnv on_cpus("STARPU_OPENCL_ON_CPUS", nullptr);
	if (astro_opencl_platforms_may_offer(kDefault))
		GTEST_SKIP() << "an installed OpenCL platform may give a GPU or an accelerator here";
	EXPECT_IN_CHILD(([] {
		if (init_with_ncpus(1) != 0)
			return 1;
		int workers = (int)starpu_opencl_worker_get_count();
		starpu_shutdown();
		return workers != 0 ? 2 : pocl_loaded() ? 3 : 0;
	}), "status 1: init failed, 2: OpenCL workers started, 3: PoCL loaded");

	ScopedEnv cpus("STARPU_OPENCL_ON_CPUS", "1");
	TempDir models; // the bus figures measured for the device
	ScopedEnv dir("STARPU_PERF_MODEL_DIR", models.path());
	EXPECT_IN_CHILD(([] {
		void *icd = dlopen("libpocl.so.2", RTLD_LAZY);
		if (!icd)
			return 0; /* no PoCL here: nothing to find */
		dlclose(icd);
		if (init_with_ncpus(1) != 0)
			return 1;
		int workers = (int)starpu_opencl_worker_get_count();
		starpu_shutdown();
		return workers >= 1 ? 0 : 2;
	}), "status 1: init failed, 2: PoCL's CPU device not found");
}

#else

TEST(OpenCLProbe, NotBuilt)
{
	GTEST_SKIP() << "built without OpenCL";
}

#endif

} // namespace
