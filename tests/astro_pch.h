/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The system headers most suites include (GoogleTest, the C++ library), compiled
 * once per build into astro_pch.h.gch, which every suite's compile takes in
 * (-include astro_pch.h): about a fifth of a suite's compile time. The
 * project's own headers stay out, so the precompiled one never goes stale
 * while a build goes on. */
#ifndef ASTRO_PCH_H
#define ASTRO_PCH_H
#include <gtest/gtest.h>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>
#endif
