// SPDX-License-Identifier: LGPL-2.1-or-later
// The built-in least-squares solver multiple-regression models are fitted with
// (models/lsq.c; configure's --enable-mlr-system-blas uses LAPACKE_dgels
// instead): exact fits, random well-conditioned problems against LAPACKE_dgels
// when the build has LAPACKE, and the problems it must refuse.
#include "helpers.h"

extern "C" {
#include "lsq.h"
}
#ifdef ASTRO_TEST_LAPACKE
#include <lapacke.h>
#endif
#include <gtest/gtest.h>

#include <cerrno>
#include <cmath>
#include <random>
#include <vector>

using namespace astro_test;

namespace
{

int solve(std::vector<double> a, std::vector<double> &y, unsigned m, unsigned n, std::string *why = nullptr)
{
	char buf[256] = "";
	int ret = _astro_lsq_solve(a.data(), y.data(), m, n, buf, sizeof(buf));
	if (why)
		*why = buf;
	return ret;
}

// A term matrix as the models build it: the intercept, then products of powers of parameters.
TEST(Lsq, ExactFitOfAModelsTermsIsRecovered)
{
	const double coeff[4] = { 5.0, 0.25, 1e-3, 2e-7 };
	unsigned m = 30, n = 4;
	std::vector<double> a, y;
	for (unsigned i = 0; i < m; i++) {
		double M = 8 + 7 * i, N = 3 + (i * 5) % 11;
		double row[4] = { 1, M, M * N, M * M * N * N };
		double t = 0;
		for (unsigned k = 0; k < n; k++) {
			a.push_back(row[k]);
			t += coeff[k] * row[k];
		}
		y.push_back(t);
	}
	ASSERT_EQ(solve(a, y, m, n), 0);
	for (unsigned k = 0; k < n; k++)
		EXPECT_NEAR(y[k], coeff[k], 1e-8 * std::fabs(coeff[k])) << "coefficient " << k;
}

// The least-squares solution of an overdetermined, inconsistent system: the residual is orthogonal to
// every column (the normal equations hold), whatever solver is at hand.
TEST(Lsq, ResidualIsOrthogonalToTheColumns)
{
	std::mt19937 gen(7);
	std::uniform_real_distribution<double> u(-1, 1);
	unsigned m = 25, n = 3;
	std::vector<double> a(m * n), y(m);
	for (auto &v : a)
		v = u(gen);
	for (auto &v : y)
		v = u(gen);
	std::vector<double> x = y;
	ASSERT_EQ(solve(a, x, m, n), 0);
	for (unsigned j = 0; j < n; j++) {
		double dot = 0;
		for (unsigned i = 0; i < m; i++) {
			double r = y[i];
			for (unsigned k = 0; k < n; k++)
				r -= a[i * n + k] * x[k];
			dot += r * a[i * n + j];
		}
		EXPECT_NEAR(dot, 0, 1e-12) << "column " << j;
	}
}

#ifdef ASTRO_TEST_LAPACKE
// Random well-conditioned problems (columns of scales 1e-3 to 1e3, as the terms of a model differ),
// square and overdetermined: the same solution as LAPACKE_dgels, to 1e-9 relative.
TEST(Lsq, AgreesWithLapackeDgels)
{
	std::mt19937 gen(2026);
	std::uniform_real_distribution<double> u(-1, 1);
	for (int trial = 0; trial < 200; trial++) {
		unsigned n = 1 + trial % 6, m = n + (trial * 7) % 40;
		std::vector<double> scale(n), a(m * n), y(m);
		for (auto &s : scale)
			s = std::pow(10.0, 6 * (u(gen) + 1) / 2 - 3);
		for (unsigned i = 0; i < m; i++)
			for (unsigned k = 0; k < n; k++)
				a[i * n + k] = (u(gen) + (i == k ? 2 : 0)) * scale[k];
		for (auto &v : y)
			v = 10 * u(gen);
		std::vector<double> ours = y, theirs = y, la = a;
		ASSERT_EQ(solve(a, ours, m, n), 0) << "trial " << trial;
		ASSERT_EQ(LAPACKE_dgels(LAPACK_ROW_MAJOR, 'N', m, n, 1, la.data(), n, theirs.data(), 1), 0);
		for (unsigned k = 0; k < n; k++)
			EXPECT_NEAR(ours[k], theirs[k], 1e-9 * (std::fabs(theirs[k]) + 1e-12)) << "trial " << trial << " (" << m << "x" << n
												    << "), coefficient " << k;
	}
}
#endif

// What it cannot solve: each refused with its reason (the model's fit prints it).
TEST(Lsq, DependentTermsAndTooFewSamplesAreRefused)
{
	std::string why;
	// Column 2 = 3 * column 1.
	std::vector<double> a, y;
	for (unsigned i = 0; i < 10; i++) {
		a.insert(a.end(), { 1.0, double(i + 1), 3.0 * (i + 1) });
		y.push_back(i);
	}
	EXPECT_EQ(solve(a, y, 10, 3, &why), -EDOM);
	EXPECT_TRUE(contains(why, "linearly dependent")) << why;
	// A column of zeros (a parameter that never varied from 0).
	std::vector<double> z(20, 0.0), yz(10, 1.0);
	for (unsigned i = 0; i < 10; i++)
		z[i * 2] = 1;
	EXPECT_EQ(solve(z, yz, 10, 2, &why), -EDOM);
	std::vector<double> small = { 1, 2, 3, 4, 5, 6 }, ys = { 1, 2 };
	EXPECT_EQ(solve(small, ys, 2, 3, &why), -EINVAL);
	EXPECT_TRUE(contains(why, "2 samples for 3 coefficients")) << why;
	EXPECT_EQ(solve({}, ys, 2, 0, &why), -EINVAL);
}

} // namespace
