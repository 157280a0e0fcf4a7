// The gradient search of the CV bandwidth: L-BFGS on the exact gradient of leave-one-out CV (Nadaraya–Watson).
#include <algorithm>
#include <cmath>
#include <limits>

#include "gradients/backward.h"
#include "stats/lbfgs.h"
#include "base/scratch.h"
#include "stats/bandwidth_detail.h"

namespace ka {

using bandwidth_detail::kInf;

namespace {

// The objective of one gradient search: CV and its gradient at θ (log h, or the transform L), the curve it records
// or replays, the best θ evaluated and the first failure.
struct Objective {
  const Problem& p;
  const SearchProgress& progress;
  CvCurve* const curve;
  const int64_t n, dims, width, rank, params;
  Scratch<double> best, lse, shown_now;
  Scratch<float> xt, hf, out, dout, dq, dk, dtheta;
  Problem q;
  const int32_t recorded;
  int32_t evaluations = 0;
  double best_score = kInf;
  Result failure;

  Objective(const Problem& p_, const SearchProgress& progress_, CvCurve* curve_, int64_t rank_)
      : p(p_),
        progress(progress_),
        curve(curve_),
        n(p_.queries.rows),
        dims(p_.queries.cols),
        width(p_.values.cols),
        rank(rank_),
        params(rank_ ? rank_ * dims : dims),
        best(params),
        lse(n),
        shown_now(params),
        xt(rank ? n * rank : 0),
        hf(rank ? rank : dims),
        out(n * width),
        dout(n * width),
        dq(rank ? n * rank : 0),
        dk(rank ? n * rank : 0),
        dtheta(rank ? rank : dims),
        q(p_),
        recorded(curve_ ? std::clamp(curve_->count, 0, curve_->capacity) : 0) {
    q.masks.leave_one_out = true;
    q.empty = EmptyPolicy::NaN;
    q.kernel.bandwidth = hf.get();
    if (rank && xt.ok() && hf.ok()) {
      q.queries = q.keys = ConstMatrix{xt.get(), n, rank, rank};
      std::fill(hf.get(), hf.get() + rank, 1.0f);
    }
  }
  bool ok() const {
    return best.ok() && lse.ok() && shown_now.ok() && xt.ok() && hf.ok() && out.ok() && dout.ok() && dq.ok() &&
           dk.ok() && dtheta.ok();
  }

  // What the curve records of θ: the bandwidths (rank 0), or L itself.
  void shown(const double* t, double* into) const {
    for (int64_t a = 0; a < params; ++a) into[a] = rank ? t[a] : std::exp(t[a]);
  }

  // CV at θ by the forward pass, and its gradient by the backward pass when CV <= threshold; +inf where a float32
  // bandwidth cannot hold h or a point has no neighbour; NaN stops the minimiser (a failure or a cancellation).
  double cv_at(const double* t, double threshold, double* grad) {
    if (rank == 0) {
      for (int64_t d = 0; d < dims; ++d) {
        const double hd = std::exp(t[d]);
        if (!(hd <= double(std::numeric_limits<float>::max())) || !(float(hd) > 0)) return kInf;
        hf.get()[d] = float(hd);
      }
    } else {
      for (int64_t i = 0; i < n; ++i)
        for (int64_t r = 0; r < rank; ++r) {
          double v = 0;
          for (int64_t d = 0; d < dims; ++d) v += t[r * dims + d] * double(p.keys.row(i)[d]);
          if (!(std::fabs(v) <= double(std::numeric_limits<float>::max()))) return kInf;
          xt.get()[i * rank + r] = float(v);
        }
    }
    const Matrix fit{out.get(), n, width, width};
    if (const Result r = attention_forward(q, fit, lse.get()); r.status != Status::Ok) {
      failure = r;
      return std::numeric_limits<double>::quiet_NaN();
    }
    double sum = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t c = 0; c < width; ++c) {
        const double e = double(out.get()[i * width + c]) - double(p.values.row(i)[c]);
        sum += e * e;
        dout.get()[i * width + c] = float(2 * e / double(n));
      }
    const double cv = std::isfinite(sum) ? sum / double(n) : kInf;  // NaN rows: a point without neighbours
    if (!(cv <= threshold)) return cv;
    Gradients g{{dq.get(), rank ? n : 0, rank, rank}, {dk.get(), rank ? n : 0, rank, rank}, {}, dtheta.get()};
    if (const Result r = attention_backward(q, lse.get(), {dout.get(), n, width, width}, g); r.status != Status::Ok) {
      failure = r;
      return std::numeric_limits<double>::quiet_NaN();
    }
    if (rank == 0) {
      for (int64_t d = 0; d < dims; ++d) grad[d] = double(dtheta.get()[d]);
    } else {
      std::fill(grad, grad + params, 0.0);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t r = 0; r < rank; ++r) {
          const double s = double(dq.get()[i * rank + r]) + double(dk.get()[i * rank + r]);
          for (int64_t d = 0; d < dims; ++d) grad[r * dims + d] += s * double(p.keys.row(i)[d]);
        }
    }
    return cv;
  }

  // One evaluation: replayed from the curve (resuming, as select_cv) or computed and recorded; then the hook.
  double evaluate(const double* t, double threshold, double* grad) {
    shown(t, shown_now.get());
    double f;
    if (evaluations < recorded) {
      const double* was = curve->bandwidths + int64_t(evaluations) * params;
      const double* was_grad = curve->gradients + int64_t(evaluations) * params;
      f = curve->scores[evaluations++];
      if (!std::equal(shown_now.get(), shown_now.get() + params, was) || (f <= threshold && std::isnan(was_grad[0]))) {
        failure = {Status::BadArgument};  // not the same search: the curve is of other inputs
        return std::numeric_limits<double>::quiet_NaN();
      }
      if (f <= threshold) std::copy(was_grad, was_grad + params, grad);
    } else {
      f = cv_at(t, threshold, grad);
      if (std::isnan(f)) return f;
      if (curve && curve->count < curve->capacity) {
        const int64_t at = int64_t(curve->count) * params;
        std::copy(shown_now.get(), shown_now.get() + params, curve->bandwidths + at);
        if (curve->gradients) {
          if (f <= threshold)
            std::copy(grad, grad + params, curve->gradients + at);
          else
            std::fill(curve->gradients + at, curve->gradients + at + params, std::numeric_limits<double>::quiet_NaN());
        }
        curve->scores[curve->count++] = f;
      }
      ++evaluations;
    }
    if (f < best_score) {
      best_score = f;
      std::copy(t, t + params, best.get());
    }
    if (evaluations > recorded && progress.after_evaluation &&
        !progress.after_evaluation(progress.context, evaluations)) {
      failure = {Status::Cancelled};
      return std::numeric_limits<double>::quiet_NaN();
    }
    return f;
  }
};

// θ's start and box: log h (box of ±log kBandwidthBox around the start), or L (unbounded), starting at diag(1/h).
void start_theta(const double* h, int64_t dims, int64_t rank, double* theta, double* lower, double* upper) {
  const int64_t params = rank ? rank * dims : dims;
  for (int64_t a = 0; a < params; ++a) {
    if (rank == 0) {
      theta[a] = std::log(h[a]);
      lower[a] = theta[a] - std::log(kBandwidthBox);
      upper[a] = theta[a] + std::log(kBandwidthBox);
    } else {
      theta[a] = a / dims == a % dims ? 1 / h[a % dims] : 0;
      lower[a] = -kInf;
      upper[a] = kInf;
    }
  }
}

// The best θ as the search's result: h (and, with a rank, the transform L).
void write_result(const double* best, int64_t dims, int64_t rank, double* h, GradientSearch* search) {
  if (rank == 0) {
    for (int64_t d = 0; d < dims; ++d) h[d] = std::exp(best[d]);
  } else {
    std::copy(best, best + rank * dims, search->transform);
    for (int64_t d = 0; d < dims; ++d) {
      double norm = 0;
      for (int64_t r = 0; r < rank; ++r) norm += best[r * dims + d] * best[r * dims + d];
      h[d] = norm > 0 ? 1 / std::sqrt(norm) : kInf;
    }
  }
}

}  // namespace

Result select_cv_gradient(const Problem& p, double* h, double* score, CvCurve* curve, const Criterion& criterion,
                          const SearchProgress& progress, GradientSearch* search) {
  const int64_t n = p.queries.rows, dims = p.queries.cols;
  if (p.heads != 1 || p.keys.rows != n || p.keys.cols != dims || p.values.rows != n) return {Status::BadShape};
  if (!search || search->rank < 0 || (search->rank > 0 && !search->transform)) return {Status::BadArgument};
  if (criterion.estimator != Estimator::NadarayaWatson || criterion.score != Score::LeaveOneOut ||
      criterion.observation_weights || criterion.exclude != 0 || p.kernel.kind == KernelKind::Uniform ||
      p.kernel.kind == KernelKind::Softmax)
    return {Status::BadArgument};
  for (int64_t d = 0; d < dims; ++d)
    if (!(h[d] > 0) || !std::isfinite(h[d])) return {Status::BadArgument};
  const int64_t rank = search->rank;
  const int64_t params = rank ? rank * dims : dims;
  Scratch<double> theta(params), lower(params), upper(params);
  Objective obj(p, progress, curve, rank);
  if (!theta.ok() || !lower.ok() || !upper.ok() || !obj.ok()) return {Status::OutOfMemory};
  start_theta(h, dims, rank, theta.get(), lower.get(), upper.get());
  if (obj.recorded > 0 && !curve->gradients) return {Status::BadArgument};  // a replay needs the recorded gradients
  const auto evaluate = [&](const double* t, double threshold, double* grad) {
    return obj.evaluate(t, threshold, grad);
  };
  LbfgsOptions o;
  o.max_iterations = search->max_iterations;
  o.gradient_tolerance = search->gradient_tolerance;
  o.improvement_tolerance = search->improvement_tolerance;
  double f = kInf;
  LbfgsStop stop = lbfgs_box(params, theta.get(), lower.get(), upper.get(), evaluate, o, &f, &search->iterations);
  // A start where some point has no neighbour (a compact kernel, small h): widen it by factors of 2 (up to 2^10).
  for (int widen = 0; stop == LbfgsStop::Failed && widen < 10; ++widen) {
    for (int64_t a = 0; a < params; ++a) theta.get()[a] += rank ? -0.5 * theta.get()[a] : std::log(2.0);
    stop = lbfgs_box(params, theta.get(), lower.get(), upper.get(), evaluate, o, &f, &search->iterations);
  }
  if (obj.failure.status != Status::Ok) return obj.failure;
  if (stop == LbfgsStop::OutOfMemory) return {Status::OutOfMemory};
  if (obj.best_score == kInf)
    std::copy(theta.get(), theta.get() + params, obj.best.get());  // nothing finite: h stays finite
  // h is written only now: a cancelled search leaves it as the start, so that it can be resumed.
  write_result(obj.best.get(), dims, rank, h, search);
  *score = obj.best_score;
  return {};
}

}  // namespace ka
