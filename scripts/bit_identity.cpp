// Bit-identity harness for engine refactors: runs a fixed set of calls through the core (exact attention wide and
// narrow, every kernel, masks, every empty policy, 1/2/4 threads, key-sharded calls, states, weights, top-k, sparse,
// random features, Nyström, gradients, local fits) and writes every output byte, and every Status, to a file.
// Build it against a ka_core library before and after a change and compare the two files with cmp: any changed bit
// shows. Usage (from the repository root, after building build/native):
//   g++ -O2 -std=c++17 -mavx2 -mfma -Icpp/core -Ibuild/native/shim scripts/bit_identity.cpp
//       build/native/libka_core.a -lpthread -o /tmp/bit_identity && /tmp/bit_identity /tmp/out.bin
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <vector>

#include "engine/exact.h"
#include "engine/local_fit.h"
#include "engine/states.h"
#include "engine/weights.h"
#include "gradients/backward.h"
#include "methods/nystrom.h"
#include "methods/random_features.h"
#include "methods/sparse.h"
#include "methods/top_k.h"

using namespace ka;

namespace {

FILE* out_file;
uint64_t total_hash = 1469598103934665603ull;

void put(const void* data, size_t bytes, const char* what) {
  std::fwrite(data, 1, bytes, out_file);
  uint64_t h = 1469598103934665603ull;
  for (size_t b = 0; b < bytes; ++b) h = (h ^ static_cast<const uint8_t*>(data)[b]) * 1099511628211ull;
  total_hash = (total_hash ^ h) * 1099511628211ull;
  std::printf("%016llx %s\n", static_cast<unsigned long long>(h), what);
}
template <class T>
void put(const std::vector<T>& v, const char* what) {
  put(v.data(), v.size() * sizeof(T), what);
}
void put(const Result& r, const char* what) {
  const int64_t x[3] = {int64_t(r.status), r.row, r.head};
  put(x, sizeof x, what);
}

uint64_t state = 88172645463325252ull;
float uniform() {  // xorshift64, in [-1, 1)
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return float(double(state >> 11) / double(1ull << 53) * 2 - 1);
}
std::vector<float> random(int64_t n, float scale, float offset = 0) {
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = offset + scale * uniform();
  return v;
}

struct Data {
  int64_t I, J, M, D;
  std::vector<float> q, k, v, bw;
  std::vector<uint8_t> padding, general;
  std::vector<int32_t> qg, kg;
  Data(int64_t I_, int64_t J_, int64_t M_, int64_t D_, float spread = 1, float far = 0)
      : I(I_),
        J(J_),
        M(M_),
        D(D_),
        q(random(I * M, spread, far)),
        k(random(J * M, spread)),
        v(random(J * D, 3)),
        bw(size_t(M)),
        padding(size_t(J)),
        general(size_t(I * J)),
        qg(size_t(I)),
        kg(size_t(J)) {
    for (auto& h : bw) h = 0.2f + 0.3f * (uniform() + 1);
    for (int64_t j = 0; j < J; ++j) padding[size_t(j)] = j % 5 == 3;
    for (auto& g : general) g = uniform() > 0.6f;
    for (int64_t i = 0; i < I; ++i) qg[size_t(i)] = int32_t(i % 3);
    for (int64_t j = 0; j < J; ++j) kg[size_t(j)] = int32_t(j % 4);
  }
  Problem problem(KernelKind kind, int mask, int32_t heads, EmptyPolicy empty, int32_t threads) const {
    Problem p;
    p.queries = {q.data(), I, M, M};
    p.keys = {k.data(), J, M, M};
    p.values = {v.data(), J, D, D};
    p.kernel.kind = kind;
    p.kernel.scale = 1.0 / std::sqrt(double(M / heads));
    p.kernel.bandwidth = bw.data();
    p.heads = heads;
    p.empty = empty;
    p.threads = threads;
    if (mask == 1) p.masks.causal = true;
    if (mask == 2) p.masks.key_padding = padding.data();
    if (mask == 3) p.masks.general = general.data();
    if (mask == 4) p.masks.query_groups = qg.data(), p.masks.key_groups = kg.data();
    if (mask == 5 && I == J) p.masks.leave_one_out = true;
    return p;
  }
};

constexpr KernelKind kKinds[] = {KernelKind::Softmax, KernelKind::Gaussian,     KernelKind::Laplacian,
                                 KernelKind::Cauchy,  KernelKind::Epanechnikov, KernelKind::Tricube,
                                 KernelKind::Uniform};
constexpr EmptyPolicy kPolicies[] = {EmptyPolicy::NaN, EmptyPolicy::Zero, EmptyPolicy::Nearest, EmptyPolicy::Error};

void attention_cases() {
  // far = 2 puts many queries outside compact supports: empty rows under every policy.
  for (const auto& shape : {std::vector<int64_t>{37, 150, 64, 64},
                            {37, 150, 2, 1},
                            {37, 150, 2, 2},
                            {37, 150, 3, 3},
                            {37, 150, 4, 4},
                            {37, 37, 1, 7},
                            {130, 300, 16, 8}})
    for (const float far : {0.0f, 2.0f})
      for (const KernelKind kind : kKinds) {
        Data d(shape[0], shape[1], shape[2], shape[3], 1, far);
        for (int mask = 0; mask <= 5; ++mask)
          for (const EmptyPolicy e : kPolicies)
            for (const int32_t heads : {1, 2})
              for (const int32_t threads : {1, 2, 4}) {
                if (d.M % heads || d.D % heads) continue;
                if (threads > 1 && (mask == 3 || e != EmptyPolicy::NaN || heads > 1)) continue;
                const Problem p = d.problem(kind, mask, heads, e, threads);
                std::vector<float> out(size_t(d.I * d.D), -7.0f);
                put(attention(p, Matrix{out.data(), d.I, d.D, d.D}), "attention status");
                put(out, "attention");
              }
      }
  // Huge scores (the double redo path) and softmax with an overflowing scale.
  {
    Data d(20, 70, 64, 4, 30);
    for (const int32_t heads : {1, 2}) {
      Problem p = d.problem(KernelKind::Softmax, 0, heads, EmptyPolicy::NaN, 1);
      p.kernel.scale = 1e6;
      std::vector<float> out(size_t(d.I * d.D));
      put(attention(p, Matrix{out.data(), d.I, d.D, d.D}), "huge status");
      put(out, "huge");
    }
    Data n(20, 70, 2, 3, 1e3f);
    for (const KernelKind kind : kKinds) {
      std::vector<float> out(size_t(n.I * n.D));
      put(attention(n.problem(kind, 0, 1, EmptyPolicy::Nearest, 1), Matrix{out.data(), n.I, n.D, n.D}), "far status");
      put(out, "far");
    }
  }
  // Few queries over many keys: key shards merged in the engine.
  for (const auto& shape : {std::vector<int64_t>{5, 40000, 64, 16}, {9, 20000, 2, 2}, {3, 17000, 1, 1}})
    for (const KernelKind kind : {KernelKind::Softmax, KernelKind::Gaussian, KernelKind::Epanechnikov})
      for (const EmptyPolicy e : kPolicies)
        for (const int32_t threads : {1, 2, 4}) {
          Data d(shape[0], shape[1], shape[2], shape[3], 1, kind == KernelKind::Epanechnikov ? 1.5f : 0);
          if (kind == KernelKind::Epanechnikov)
            for (auto& h : d.bw) h = 0.02f;
          const Problem p = d.problem(kind, 0, 1, e, threads);
          std::vector<float> out(size_t(d.I * d.D), -7.0f);
          put(attention(p, Matrix{out.data(), d.I, d.D, d.D}), "shard status");
          put(out, "shard");
          std::vector<float> mx(size_t(d.I)), sm(size_t(d.I)), acc(size_t(d.I * d.D));
          States s{mx.data(), sm.data(), Matrix{acc.data(), d.I, d.D, d.D}, 1};
          put(attention_states(p, s), "shard states status");
          put(mx, "shard states max"), put(sm, "shard states sum"), put(acc, "shard states acc");
        }
}

void states_cases() {
  for (const KernelKind kind : kKinds)
    for (const int32_t heads : {1, 2}) {
      Data d(23, 140, 4, 4, 1, 1.5f);
      const int64_t cut = 61;
      std::vector<std::vector<float>> mx(2, std::vector<float>(size_t(d.I * heads))),
          sm = mx, acc(2, std::vector<float>(size_t(d.I * d.D)));
      std::vector<States> st;
      for (int s = 0; s < 2; ++s) {
        Problem p = d.problem(kind, 0, heads, EmptyPolicy::NaN, 1);
        const int64_t j0 = s ? cut : 0, n = s ? d.J - cut : cut;
        p.keys = {d.k.data() + j0 * d.M, n, d.M, d.M};
        p.values = {d.v.data() + j0 * d.D, n, d.D, d.D};
        st.push_back(
            States{mx[size_t(s)].data(), sm[size_t(s)].data(), Matrix{acc[size_t(s)].data(), d.I, d.D, d.D}, heads});
        put(attention_states(p, st.back()), "states status");
      }
      put(merge_states(st[0], st[1]), "merge status");
      put(mx[0], "merged max"), put(sm[0], "merged sum"), put(acc[0], "merged acc");
      for (const EmptyPolicy e : kPolicies) {
        std::vector<float> out(size_t(d.I * d.D), -7.0f);
        put(finalize_states(st[0], e, Matrix{out.data(), d.I, d.D, d.D}), "finalize status");
        put(out, "finalize");
      }
    }
}

void weights_and_top_k() {
  for (const KernelKind kind : kKinds)
    for (const EmptyPolicy e : kPolicies)
      for (int mask = 0; mask <= 4; mask += 2)
        for (const int32_t heads : {1, 2}) {
          Data d(19, 45, 4, 2, 1, 1.5f);
          const Problem p = d.problem(kind, mask, heads, e, 1);
          std::vector<float> w(size_t(heads * d.I * d.J), -7.0f);
          put(weights(p, w.data()), "weights status");
          put(w, "weights");
          for (const int64_t k : {1, 3, 100}) {
            std::vector<float> out(size_t(d.I * d.D), -7.0f);
            std::vector<double> dropped(size_t(d.I * heads), -7.0);
            SparseOut so;
            so.out = {out.data(), d.I, d.D, d.D};
            so.dropped = dropped.data();
            SparseReport rep;
            put(top_k_attention(p, k, so, &rep), "top_k status");
            put(out, "top_k"), put(dropped, "top_k dropped");
            const double r[4] = {rep.error_estimate, rep.max_dropped, double(rep.kept_keys), double(rep.skipped_keys)};
            put(r, sizeof r, "top_k report");
          }
        }
}

void sparse_cases() {
  for (const KernelKind kind : kKinds) {
    if (kind == KernelKind::Softmax) continue;
    for (const EmptyPolicy e : kPolicies)
      for (const int mask : {0, 1, 2, 5})
        for (const int64_t M : {1, 2, 3})
          for (const int32_t threads : {1, 2}) {
            Data d(60, 60, M, 2, 1, 0.5f);
            for (auto& h : d.bw) h *= 0.3f;
            const Problem p = d.problem(kind, mask, 1, e, threads);
            std::vector<float> out(size_t(d.I * d.D), -7.0f);
            std::vector<double> dropped(size_t(d.I)), ssq(size_t(d.I)), eff(size_t(d.I)), lden(size_t(d.I));
            SparseOut so{Matrix{out.data(), d.I, d.D, d.D}, dropped.data(), ssq.data(), eff.data(), lden.data()};
            SparseReport rep;
            put(sparse_attention(p, SparseOptions{1e-3}, so, &rep), "sparse status");
            put(out, "sparse"), put(dropped, "sparse dropped"), put(ssq, "sparse ssq"), put(eff, "sparse eff");
            put(lden, "sparse lden");
            const double r[4] = {rep.error_estimate, rep.max_dropped, double(rep.kept_keys), double(rep.skipped_keys)};
            put(r, sizeof r, "sparse report");
          }
  }
}

void approx_cases() {
  for (const KernelKind kind : {KernelKind::Softmax, KernelKind::Gaussian, KernelKind::Laplacian, KernelKind::Cauchy})
    for (const int mask : {0, 1})
      for (const int32_t heads : {1, 2}) {
        Data d(50, 300, 4, 4, 0.5f);
        const Problem p = d.problem(kind, mask, heads, EmptyPolicy::NaN, 1);
        for (const int32_t count : {0, 40}) {
          ApproxOptions o;
          o.count = count;
          o.seed = 7;
          std::vector<float> out(size_t(d.I * d.D), -7.0f);
          ApproxReport rep;
          put(random_features_attention(p, o, Matrix{out.data(), d.I, d.D, d.D}, &rep), "rf status");
          put(out, "rf");
          double r[3] = {double(rep.count), rep.error_estimate, double(rep.exact_rows)};
          put(r, sizeof r, "rf report");
          put(nystrom_attention(p, o, Matrix{out.data(), d.I, d.D, d.D}, &rep), "nystrom status");
          put(out, "nystrom");
          r[0] = rep.count, r[1] = rep.error_estimate, r[2] = double(rep.exact_rows);
          put(r, sizeof r, "nystrom report");
        }
      }
}

void backward_cases() {
  for (const KernelKind kind : kKinds) {
    if (kind == KernelKind::Uniform) continue;
    for (const EmptyPolicy e : kPolicies)
      for (const int mask : {0, 1, 2})
        for (const auto& shape : {std::vector<int64_t>{21, 33, 64, 64}, {21, 33, 2, 3}})
          for (const int32_t threads : {1, 2}) {
            Data d(shape[0], shape[1], shape[2], shape[3], 1, 1.2f);
            const Problem p = d.problem(kind, mask, shape[2] == 64 ? 2 : 1, e, threads);
            std::vector<float> out(size_t(d.I * d.D)), dout = random(d.I * d.D, 1);
            std::vector<double> lse(size_t(d.I * p.heads));
            put(attention_forward(p, Matrix{out.data(), d.I, d.D, d.D}, lse.data()), "forward status");
            put(out, "forward"), put(lse, "forward lse");
            std::vector<float> gq(size_t(d.I * d.M)), gk(size_t(d.J * d.M)), gv(size_t(d.J * d.D)), gt(size_t(d.M));
            Gradients g{Matrix{gq.data(), d.I, d.M, d.M}, Matrix{gk.data(), d.J, d.M, d.M},
                        Matrix{gv.data(), d.J, d.D, d.D}, gt.data()};
            put(attention_gradients(p, ConstMatrix{dout.data(), d.I, d.D, d.D}, g, Matrix{out.data(), d.I, d.D, d.D}),
                "gradients status");
            put(gq, "dq"), put(gk, "dk"), put(gv, "dv"), put(gt, "dtheta"), put(out, "gradients out");
          }
  }
}

void local_fit_cases() {
  for (const KernelKind kind : kKinds) {
    if (kind == KernelKind::Softmax) continue;
    for (const Estimator est : {Estimator::NadarayaWatson, Estimator::LocalLinear})
      for (const EmptyPolicy e : kPolicies)
        for (const int mask : {0, 5, 2})
          for (const int64_t M : {1, 2, 3})
            for (const int32_t threads : {1, 2}) {
              Data d(70, 70, M, 2, 1, 0.3f);
              for (auto& h : d.bw) h *= 0.2f;
              std::vector<float> omega = random(d.J, 0.5f, 0.5f);
              Fit f;
              f.problem = d.problem(kind, mask, 1, e, threads);
              f.estimator = est;
              f.observation_weights = mask == 2 ? omega.data() : nullptr;
              std::vector<float> mean(size_t(d.I * d.D), -7.0f);
              std::vector<double> ssq(size_t(d.I)), self(size_t(d.I)), eff(size_t(d.I)), lden(size_t(d.I));
              FitOut o{Matrix{mean.data(), d.I, d.D, d.D}, ssq.data(), self.data(), eff.data(), lden.data()};
              put(local_fit(f, o), "fit status");
              put(mean, "fit mean"), put(ssq, "fit ssq"), put(self, "fit self"), put(eff, "fit eff");
              put(lden, "fit lden");
            }
  }
  // A large 1-D Nadaraya–Watson, as the benchmark runs it.
  Data d(3000, 5000, 1, 1, 1);
  Fit f;
  f.problem = d.problem(KernelKind::Gaussian, 0, 1, EmptyPolicy::NaN, 2);
  f.estimator = Estimator::NadarayaWatson;
  std::vector<float> mean(size_t(d.I));
  put(local_fit(f, FitOut{Matrix{mean.data(), d.I, 1, 1}}), "nw status");
  put(mean, "nw");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  out_file = std::fopen(argv[1], "wb");
  if (!out_file) return 1;
  attention_cases();
  states_cases();
  weights_and_top_k();
  sparse_cases();
  approx_cases();
  backward_cases();
  local_fit_cases();
  std::fclose(out_file);
  std::fprintf(stderr, "total %016llx\n", static_cast<unsigned long long>(total_hash));
  return 0;
}
