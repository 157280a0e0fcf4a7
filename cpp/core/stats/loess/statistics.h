// The statistics of a loess fit as R reports them (Cleveland & Grosse 1991, §5; Cleveland, Grosse & Shyu 1992,
// "Local regression models", in Statistical Models in S, ch. 8): the trace of the operator L and
// δ1 = tr (I − L)ᵀ(I − L), δ2 = tr ((I − L)ᵀ(I − L))², exactly from L or by R's approximations.
#pragma once
#include <cstdint>

#include "base/status.h"

namespace ka::loess {

// R's ehg196 (trace.hat = "approximate"): the trace of a degree-1 and a degree-2 fit by Cleveland & Grosse's rule
// dk·(1 + max(0, (g − f)/f)), g = (−0.08125·d + 0.13)·d + 1.05, dk the degree's number of columns, mixed
// linearly by where tau (the fit's number of columns, d + 1 for degrees 0 and 1) lies between the two dk.
double approximate_trace(int32_t tau, int32_t dims, double span);

// R's lowesa: δ1 and δ2 from the trace by Cleveland & Grosse's fitted formula
// δ = n − trace·exp(c1·z^c2·(1 − z)^c3·e^{g(z)}), z = (√(tau/trace) − √(tau/n))/(1 − √(tau/n)) clamped to [0, 1],
// with R's table of (c1, c2, c3) per degree, dimension and δ and its interpolated correction g (ehg141, ehg176),
// mixed between degrees 1 and 2 as approximate_trace mixes them. dims > 4 extrapolates the table as R does.
void approximate_deltas(double trace, int64_t n, int32_t dims, int32_t tau, double* delta1, double* delta2);

// R's lowesc: the trace of the n × n operator L (row-major) and the exact δ1 = ‖I − L‖²_F and
// δ2 = ‖(I − L)(I − L)ᵀ‖²_F; O(n³) time, n² doubles of scratch (OutOfMemory when they cannot be had).
Status exact_statistics(const double* L, int64_t n, double* trace, double* delta1, double* delta2);

// The p-quantile of Student's t with df > 0 degrees of freedom (not necessarily whole), 0 < p < 1; NaN otherwise.
// By the regularised incomplete beta function (continued fraction) and bisection to full precision.
double student_t_quantile(double p, double df);

}  // namespace ka::loess
