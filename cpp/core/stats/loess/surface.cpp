// loess's interpolated surface: vertex fits, evaluation at the data, and its operator (surface.h).
#include "stats/loess/surface.h"

#include <algorithm>
#include <cmath>

#include "base/rare.h"
#include "base/scratch.h"

namespace ka::loess {

// Once per vertex, around the out-of-line neighbour search and solve: compiled for size (base/rare.h).
KA_COLD Status fit_vertices(const Sample& sample, const KdTree& tree, const FitSpec& spec, const double* y,
                            const double* rw, double* values, std::vector<VertexOperator>* ops, bool* pseudo_inverse) {
  const int32_t d = sample.dims, nv = tree.vertex_count();
  if (ops) ops->assign(size_t(nv), VertexOperator{});
  const int64_t tasks = fit_tasks(nv, spec.q, spec.threads);
  std::vector<Status> status(size_t(tasks), Status::Ok);
  std::vector<uint8_t> pseudo(size_t(tasks), 0);
  for_fit_tasks(nv, spec.q, spec.threads, [&](int64_t begin, int64_t end, int64_t task) {
    NeighbourFinder finder(sample, spec.q, spec.span);
    LocalSolver solver;
    Neighbourhood hood;
    LocalFit fit;
    for (int64_t v = begin; v < end; ++v) {
      const double* z = tree.vertex(int32_t(v));
      if (!finder.find(z, rw, &hood)) {
        status[size_t(task)] = Status::BadArgument;
        return;
      }
      solver.fit(sample, hood, y, z, spec.degree, &fit);
      pseudo[size_t(task)] |= fit.pseudo_inverse;
      double* out = values + size_t(v) * size_t(d + 1);
      for (int32_t c = 0; c <= d; ++c) out[c] = c < fit.k ? fit.coef[c] : 0;
      if (ops) {
        VertexOperator& op = (*ops)[size_t(v)];
        op.rho = hood.rho;
        op.k = fit.k;
        for (int32_t c = 0; c <= d && c < fit.k; ++c)
          std::copy(fit.inverse + c * fit.k, fit.inverse + (c + 1) * fit.k, op.rows + c * fit.k);
      }
    }
  });
  for (int64_t t = 0; t < tasks; ++t) {
    if (pseudo_inverse) *pseudo_inverse |= pseudo[size_t(t)] != 0;
    if (status[size_t(t)] != Status::Ok) return status[size_t(t)];
  }
  return Status::Ok;
}

void surface_at_data(const Sample& sample, const KdTree& tree, const double* values, int32_t threads, double* out) {
  for_fit_tasks(sample.n, kMaxBlendTerms, threads, [&](int64_t begin, int64_t end, int64_t) {
    BlendTerm terms[kMaxBlendTerms];
    for (int64_t i = begin; i < end; ++i) {
      const int count = blend_terms(tree, sample.point(i), terms);
      out[i] = blend_value(terms, count, values, sample.dims);
    }
  });
}

bool vertex_operator_entries(const Sample& sample, const KdTree& tree, const VertexOperator& op, int32_t v, int64_t i,
                             int32_t degree, const double* rw, double* out) {
  const int32_t d = sample.dims;
  const double* z = tree.vertex(v);
  const double d2 = squared_distance(sample, i, z);
  if (!(d2 < op.rho)) {
    std::fill(out, out + d + 1, 0.0);
    return false;
  }
  const double u = std::sqrt(d2 / op.rho), t = 1 - u * u * u;
  const double w = t * t * t * rw[i];
  double row[kMaxColumns];
  design_row(sample.point(i), z, d, degree, row);
  for (int32_t c = 0; c <= d; ++c) {
    double s = 0;
    if (c < op.k)
      for (int j = 0; j < op.k; ++j) s += op.rows[c * op.k + j] * row[j];
    out[c] = s * w;
  }
  return true;
}

double interpolated_trace(const Sample& sample, const KdTree& tree, const std::vector<VertexOperator>& ops,
                          int32_t degree, const double* rw) {
  BlendTerm terms[kMaxBlendTerms];
  double entries[kMaxDims + 1];
  double trace = 0;
  for (int64_t i = 0; i < sample.n; ++i) {
    const int count = blend_terms(tree, sample.point(i), terms);
    double diagonal = 0;
    for (int t = 0; t < count; ++t) {
      const BlendTerm& term = terms[t];
      if (vertex_operator_entries(sample, tree, ops[size_t(term.vertex)], term.vertex, i, degree, rw, entries))
        diagonal += term.weight * entries[term.component];
    }
    trace += diagonal;
  }
  return trace;
}

// Exact statistics (small samples, where the O(n³) statistics cost more): compiled for size.
KA_COLD Status interpolated_operator(const Sample& sample, const KdTree& tree, const std::vector<VertexOperator>& ops,
                                     int32_t degree, const double* rw, double* L) {
  const int64_t n = sample.n;
  const int32_t d = sample.dims, nv = tree.vertex_count();
  // Every vertex's entries for every point: nv × (d + 1) × n.
  Scratch<double> lf(int64_t(nv) * (d + 1) * n);
  if (!lf.ok()) return Status::OutOfMemory;
  double entries[kMaxDims + 1];
  for (int32_t v = 0; v < nv; ++v)
    for (int64_t j = 0; j < n; ++j) {
      vertex_operator_entries(sample, tree, ops[size_t(v)], v, j, degree, rw, entries);
      for (int32_t c = 0; c <= d; ++c) lf.get()[(int64_t(v) * (d + 1) + c) * n + j] = entries[c];
    }
  BlendTerm terms[kMaxBlendTerms];
  for (int64_t i = 0; i < n; ++i) {
    double* row = L + i * n;
    std::fill(row, row + n, 0.0);
    const int count = blend_terms(tree, sample.point(i), terms);
    for (int t = 0; t < count; ++t) {
      const double* src = lf.get() + (int64_t(terms[t].vertex) * (d + 1) + terms[t].component) * n;
      for (int64_t j = 0; j < n; ++j) row[j] += terms[t].weight * src[j];
    }
  }
  return Status::Ok;
}

}  // namespace ka::loess
