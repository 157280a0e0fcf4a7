// A binned local fit's derivative from the grid's moments (gradient.h).
#include "methods/grid/gradient.h"

#include <algorithm>
#include <limits>

#include "base/scratch.h"
#include "engine/local_solve.h"
#include "methods/grid/query.h"

namespace ka {

Result grid_gradient(const Fit& f, const Axis* axis, const double* moments, double total, double total_sq,
                     const GradientOut& out, int64_t* exact, int64_t* exact_count) {
  const Problem& p = f.problem;
  const int64_t I = p.queries.rows, width = p.values.cols, dims = p.queries.cols;
  const bool linear = f.estimator == Estimator::LocalLinear;
  const int64_t np = 1 + dims;
  const NodeMoments layout(true, dims, width, true);  // the model's local-linear moments with B (model.cpp)
  const int64_t stride = layout.stride();
  const bool by_fft = axis[0].fft || (dims == 2 && axis[1].fft);
  const double share = served_share(by_fft, linear);
  const bool laplacian = p.kernel.kind == KernelKind::Laplacian, compact = is_compact(p.kernel.kind);
  Scratch<double> v(stride), a(np * np), l(np * np), g(np * np);
  if (!v.ok() || !a.ok() || !l.ok() || !g.ok()) return {Status::OutOfMemory};
  *exact_count = 0;
  for (int64_t i = 0; i < I; ++i) {
    const GridQuery at = locate(p.queries.row(i), axis, dims, laplacian, compact);
    if (!at.finite || !at.on_grid || !at.inside || at.kink) {
      exact[(*exact_count)++] = i;
      continue;
    }
    moments_at(at, moments, axis, dims, layout, v.get());
    const double* S = v.get();
    const double* B = S + layout.b();
    if (!(S[0] > share * total) || (by_fft && !(B[0] > share * total_sq))) {
      exact[(*exact_count)++] = i;
      continue;
    }
    double* grad = out.gradient + i * dims * width;
    double* ss = out.sum_sq_weights ? out.sum_sq_weights + i * dims : nullptr;
    if (linear) {  // g_c = A⁻¹e_c for every column c of the guarded factor, as local_gradient's invert
      for (int64_t r = 0; r < np; ++r)
        for (int64_t c = 0; c < np; ++c) a.get()[r * np + c] = S[product_power(r, c, dims)];
      guarded_factor(a.get(), np, l.get());
      for (int64_t c = 0; c < np; ++c) solve_factored(l.get(), np, c, g.get() + c * np);
      for (int64_t col = 0; col < width; ++col) {
        if (out.mean) out.mean[i * width + col] = fitted_value(g.get(), S + layout.t(col), np, 1);
        for (int64_t d = 0; d < dims; ++d)
          grad[d * width + col] = fitted_value(g.get() + (d + 1) * np, S + layout.t(col), np, 1) / axis[d].h;
      }
      for (int64_t d = 0; ss && d < dims; ++d) {
        const double* gd = g.get() + (d + 1) * np;
        double q = 0;
        for (int64_t r = 0; r < np; ++r)
          for (int64_t c = 0; c < np; ++c) q += gd[r] * gd[c] * B[product_power(r, c, dims)];
        ss[d] = std::max(q / (axis[d].h * axis[d].h), 0.0);
      }
      continue;
    }
    // Nadaraya–Watson with the Gaussian: ∂ln K/∂q_d = u_d/h_d, so the sums it weighs keys by are S's and T's
    // first moments.
    const double s0 = S[0];
    for (int64_t col = 0; col < width; ++col) {
      const double* t = S + layout.t(col);
      const double fit = t[0] / s0;
      if (out.mean) out.mean[i * width + col] = fit;
      for (int64_t d = 0; d < dims; ++d) grad[d * width + col] = (t[1 + d] - fit * S[1 + d]) / (axis[d].h * s0);
    }
    for (int64_t d = 0; ss && d < dims; ++d) {
      const double mean = S[1 + d] / s0, second = B[product_power(d + 1, d + 1, dims)];
      const double q = second - 2 * mean * B[1 + d] + mean * mean * B[0];
      ss[d] = std::max(q / (axis[d].h * axis[d].h * s0 * s0), 0.0);
    }
  }
  return {};
}

}  // namespace ka
