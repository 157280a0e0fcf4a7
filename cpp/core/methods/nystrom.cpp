// The Nyström method for softmax and distance-kernel attention; see nystrom.h.
#include "methods/nystrom.h"

#include <algorithm>
#include <cmath>

#include "base/counter_rng.h"
#include "engine/online_softmax.h"

namespace ka {

namespace {

constexpr uint64_t kLandmarkStream = 1000;
constexpr uint64_t kSampleStream = 2000;

double dist2(const double* a, const double* b, int64_t d) {
  double s = 0;
  for (int64_t c = 0; c < d; ++c) s += (a[c] - b[c]) * (a[c] - b[c]);
  return s;
}

double kernel(KernelKind kind, const double* a, const double* b, int64_t d) {
  if (kind == KernelKind::Laplacian) {
    double s = 0;
    for (int64_t c = 0; c < d; ++c) s += std::fabs(a[c] - b[c]);
    return std::exp(-s);
  }
  const double s = dist2(a, b, d);
  return kind == KernelKind::Cauchy ? 1 / (1 + s) : std::exp(-s / 2);
}

// Solves L Lᵀ x = b in place (L from cholesky()).
void cholesky_solve(const std::vector<double>& l, int64_t n, double* b) {
  for (int64_t i = 0; i < n; ++i) {
    double s = b[i];
    for (int64_t k = 0; k < i; ++k) s -= l[size_t(i * n + k)] * b[k];
    b[i] = s / l[size_t(i * n + i)];
  }
  for (int64_t i = n - 1; i >= 0; --i) {
    double s = b[i];
    for (int64_t k = i + 1; k < n; ++k) s -= l[size_t(k * n + i)] * b[k];
    b[i] = s / l[size_t(i * n + i)];
  }
}

// One head's Nyström model: landmarks, W's factor, and the per-key log weights log c_k.
struct Model {
  KernelKind kind;
  int64_t L = 0, d = 0;
  std::vector<double> land;   // L × d
  std::vector<double> chol;   // L × L
  std::vector<double> log_c;  // J
};

Status build(const HeadData& h, KernelKind kind, const std::vector<int64_t>& idx, Model* m) {
  m->kind = kind == KernelKind::Softmax ? KernelKind::Gaussian : kind;
  m->L = int64_t(idx.size());
  m->d = h.d;
  m->land.resize(size_t(m->L * h.d));
  for (int64_t a = 0; a < m->L; ++a) std::copy_n(&h.k[size_t(idx[size_t(a)] * h.d)], h.d, &m->land[size_t(a * h.d)]);
  m->log_c.assign(size_t(h.J), 0.0);
  if (kind == KernelKind::Softmax || kind == KernelKind::Gaussian) {
    for (int64_t j = 0; j < h.J; ++j) {
      const double* k = &h.k[size_t(j * h.d)];
      double sq = 0;
      for (int64_t c = 0; c < h.d; ++c) sq += k[c] * k[c];
      m->log_c[size_t(j)] = sq / 2 + h.bias[size_t(j)];
    }
  }
  for (double jitter = 1e-9 * double(m->L); jitter < 1e3; jitter *= 100) {
    m->chol.resize(size_t(m->L * m->L));
    for (int64_t a = 0; a < m->L; ++a)
      for (int64_t b = 0; b <= a; ++b)
        m->chol[size_t(a * m->L + b)] = kernel(m->kind, &m->land[size_t(a * h.d)], &m->land[size_t(b * h.d)], h.d);
    if (cholesky(m->chol, m->L, jitter)) return Status::Ok;
  }
  return Status::BadArgument;  // unreachable for positive-definite kernels
}

// Evaluates the model at the query rows `rows` (increasing) into f (rows.size() × D); rows it cannot serve go to
// *fallback (their f is left unspecified).
void evaluate(const HeadData& h, const Model& m, bool causal, const std::vector<int64_t>& rows, double* f,
              std::vector<size_t>* fallback) {
  const int64_t L = m.L, D = h.values.cols, d = h.d;
  // B (L × (D + 1)): Σ_k e^{log c_k − shift} K(l_a, k) [v_k, 1].
  std::vector<double> B(size_t(L * (D + 1)), 0.0), kl(static_cast<size_t>(L)), t(size_t(L * (D + 1)));
  ShiftedSums<double> shifted(B.data(), L * (D + 1));  // B under one running shift (shifted_sums.h)
  auto add = [&](int64_t first, int64_t last) {
    double top = -INFINITY;
    for (int64_t j = first; j < last; ++j) top = std::max(top, m.log_c[size_t(j)]);
    if (top > shifted.max) shifted.rescale_to(top);
    for (int64_t j = first; j < last; ++j) {
      const double e = std::exp(m.log_c[size_t(j)] - shifted.max);
      if (e == 0) continue;
      const float* v = h.values.row(j);
      const double* k = &h.k[size_t(j * d)];
      for (int64_t a = 0; a < L; ++a) {
        const double w = e * kernel(m.kind, &m.land[size_t(a * d)], k, d);
        double* b = &B[size_t(a * (D + 1))];
        for (int64_t c = 0; c < D; ++c) b[c] += w * double(v[c]);
        b[D] += w;
      }
    }
  };
  auto solve_columns = [&]() {  // t = W⁻¹ B, column by column
    std::vector<double> col(static_cast<size_t>(L));
    for (int64_t c = 0; c <= D; ++c) {
      for (int64_t a = 0; a < L; ++a) col[size_t(a)] = B[size_t(a * (D + 1) + c)];
      cholesky_solve(m.chol, L, col.data());
      for (int64_t a = 0; a < L; ++a) t[size_t(a * (D + 1) + c)] = col[size_t(a)];
    }
  };
  if (!causal) {
    add(0, h.J);
    solve_columns();
  }
  int64_t added = 0;
  for (size_t n = 0; n < rows.size(); ++n) {
    const int64_t i = rows[n];
    const double* q = &h.q[size_t(i * d)];
    for (int64_t a = 0; a < L; ++a) kl[size_t(a)] = kernel(m.kind, q, &m.land[size_t(a * d)], d);
    const std::vector<double>* right = &t;
    if (causal) {  // prefix sums: r = W⁻¹ K(L, q), then r·B
      const int64_t upto = std::min(i + 1, h.J);
      if (added < upto) add(added, upto);
      added = upto;
      cholesky_solve(m.chol, L, kl.data());
      right = &B;
    }
    double* out = f + n * size_t(D);
    double den = 0, mass = 0;
    for (int64_t c = 0; c < D; ++c) out[c] = 0;
    for (int64_t a = 0; a < L; ++a) {
      const double* b = &(*right)[size_t(a * (D + 1))];
      for (int64_t c = 0; c < D; ++c) out[c] += kl[size_t(a)] * b[c];
      den += kl[size_t(a)] * b[D];
      mass += std::fabs(kl[size_t(a)] * b[D]);
    }
    // A denominator that is mostly cancellation (or ≤ 0) carries no usable digits.
    if (!(den > 1e-6 * mass) || !std::isfinite(den)) {
      fallback->push_back(n);
      continue;
    }
    for (int64_t c = 0; c < D; ++c) out[c] /= den;
  }
}

}  // namespace

bool cholesky(std::vector<double>& a, int64_t n, double jitter) {
  for (int64_t j = 0; j < n; ++j) {
    double s = a[size_t(j * n + j)] + jitter;
    for (int64_t k = 0; k < j; ++k) s -= a[size_t(j * n + k)] * a[size_t(j * n + k)];
    if (!(s > 0)) return false;
    const double root = std::sqrt(s);
    a[size_t(j * n + j)] = root;
    for (int64_t i = j + 1; i < n; ++i) {
      double t = a[size_t(i * n + j)];
      for (int64_t k = 0; k < j; ++k) t -= a[size_t(i * n + k)] * a[size_t(j * n + k)];
      a[size_t(i * n + j)] = t / root;
    }
  }
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) a[size_t(i * n + j)] = 0;
  return true;
}

std::vector<int64_t> choose_landmarks(const std::vector<double>& x, int64_t J, int64_t d, int64_t count,
                                      LandmarkSampling sampling, uint64_t seed, int32_t head) {
  const CounterRng rng(seed, kLandmarkStream + uint64_t(head));
  count = std::min(count, J);
  if (sampling == LandmarkSampling::Uniform) return sample_rows(J, count, seed, kLandmarkStream + uint64_t(head));
  // Candidates: every key, or a uniform sample of kCandidateKeys of them.
  const std::vector<int64_t> cand = sample_rows(J, kCandidateKeys, seed, kSampleStream + 1 + uint64_t(head));
  const int64_t n = int64_t(cand.size());
  std::vector<double> near(size_t(n), INFINITY);
  std::vector<int64_t> chosen;
  uint64_t draw = 0;
  int64_t pick = int64_t(rng.below(uint64_t(n), draw++));
  while (true) {
    chosen.push_back(cand[size_t(pick)]);
    if (int64_t(chosen.size()) == count) break;
    const double* c = &x[size_t(cand[size_t(pick)] * d)];
    double total = 0;
    for (int64_t i = 0; i < n; ++i) {
      near[size_t(i)] = std::min(near[size_t(i)], dist2(&x[size_t(cand[size_t(i)] * d)], c, d));
      total += near[size_t(i)];
    }
    if (!(total > 0)) break;  // every candidate coincides with a landmark
    double target = rng.uniform(draw++) * total;
    pick = -1;
    for (int64_t i = 0; i < n; ++i) {
      if (near[size_t(i)] <= 0) continue;
      pick = i;
      target -= near[size_t(i)];
      if (target <= 0) break;
    }
  }
  return chosen;
}

Result nystrom_attention(const Problem& p, const ApproxOptions& o, Matrix out, ApproxReport* report) {
  Status s = check_approx(p, o);
  const KernelKind kind = p.kernel.kind;
  if (s == Status::Ok && (is_compact(kind) || o.count > kMaxLandmarks)) s = Status::BadArgument;
  if (s == Status::Ok && (out.rows != p.queries.rows || out.cols != p.values.cols)) s = Status::BadShape;
  if (s != Status::Ok) return {s};
  const int64_t I = p.queries.rows, J = p.keys.rows, D = p.values.cols / p.heads;
  ApproxReport r;
  if (I == 0) {
    if (report) *report = r;
    return {};
  }
  const double range = value_range(p);
  const std::vector<int64_t> sample = sample_rows(I, kHeldOutRows, o.seed, kSampleStream);
  std::vector<HeadData> heads;
  std::vector<std::vector<double>> truth;  // per head: sample.size() × D, exact
  for (int32_t h = 0; h < p.heads; ++h) {
    heads.push_back(head_data(p, h));
    truth.emplace_back(sample.size() * size_t(D));
    const Result e = exact_attention_rows(p, h, sample, truth.back().data());
    if (e.status != Status::Ok) return e;
  }
  // RMS error over the sample of the models built with L landmarks (per head: landmark indices and model).
  std::vector<double> f;
  std::vector<size_t> fallback;
  auto sample_error = [&](const std::vector<Model>& models) {
    double sum = 0;
    for (int32_t h = 0; h < p.heads; ++h) {
      f.assign(sample.size() * size_t(D), 0.0);
      fallback.clear();
      evaluate(heads[size_t(h)], models[size_t(h)], p.masks.causal, sample, f.data(), &fallback);
      for (size_t n : fallback) std::copy_n(&truth[size_t(h)][n * size_t(D)], D, &f[n * size_t(D)]);
      for (size_t n = 0; n < f.size(); ++n) sum += (f[n] - truth[size_t(h)][n]) * (f[n] - truth[size_t(h)][n]);
    }
    return std::sqrt(sum / double(sample.size() * size_t(D) * size_t(p.heads))) / range;
  };
  auto make = [&](int64_t L, std::vector<Model>* models) -> Status {
    models->assign(size_t(p.heads), Model{});
    for (int32_t h = 0; h < p.heads; ++h) {
      const HeadData& hd = heads[size_t(h)];
      const std::vector<int64_t> idx = choose_landmarks(hd.k, J, hd.d, L, o.sampling, o.seed, h);
      const Status st = build(hd, kind, idx, &(*models)[size_t(h)]);
      if (st != Status::Ok) return st;
    }
    return Status::Ok;
  };

  std::vector<Model> models;
  const int64_t most = std::min<int64_t>(J, kMaxLandmarks);
  int64_t L = o.count > 0 ? std::min<int64_t>(o.count, J) : std::min<int64_t>(32, most);
  while (true) {
    if ((s = make(L, &models)) != Status::Ok) return {s};
    if (o.count > 0 || L >= most || sample_error(models) <= o.tolerance) break;
    L = std::min(2 * L, most);
  }
  // The full evaluation, then the estimate on the held-out sample from the values it returned.
  std::vector<int64_t> all(static_cast<size_t>(I));
  for (int64_t i = 0; i < I; ++i) all[size_t(i)] = i;
  std::vector<double> full(size_t(I * D));
  double sum = 0;
  r.count = 0;
  for (int32_t h = 0; h < p.heads; ++h) {
    r.count = std::max(r.count, int32_t(models[size_t(h)].L));
    std::vector<size_t> rest;
    evaluate(heads[size_t(h)], models[size_t(h)], p.masks.causal, all, full.data(), &rest);
    if (!rest.empty()) {
      std::vector<int64_t> rows(rest.begin(), rest.end());
      std::vector<double> exact(rows.size() * size_t(D));
      const Result e = exact_attention_rows(p, h, rows, exact.data());
      if (e.status != Status::Ok) return e;
      for (size_t n = 0; n < rows.size(); ++n) std::copy_n(&exact[n * size_t(D)], D, &full[size_t(rows[n] * D)]);
      r.exact_rows += int64_t(rows.size());
    }
    for (int64_t i = 0; i < I; ++i)
      for (int64_t c = 0; c < D; ++c) out.row(i)[h * D + c] = mean_to_float(full[size_t(i * D + c)]);
    for (size_t n = 0; n < sample.size(); ++n)
      for (int64_t c = 0; c < D; ++c) {
        const double e = double(out.row(sample[n])[h * D + c]) - truth[size_t(h)][n * size_t(D) + size_t(c)];
        sum += e * e;
      }
  }
  r.error_estimate = std::sqrt(sum / double(sample.size() * size_t(D) * size_t(p.heads))) / range;
  if (report) *report = r;
  return {};
}

}  // namespace ka
