// Native driver for `npm run bench`: times ka::attention (ka_core, built for SSE4.1 or AVX2) on inputs that
// bench/run.mjs wrote to disk, and runs the SIMD ceiling probes. The runner decides what to run and how often; this
// program only executes one command per line on stdin and answers each with one line of JSON on stdout:
//   attention <q.f32> <k.f32> <v.f32> I J M D scale  load softmax attention (first I rows of q)    {"ok":true}
//   nw <xq.f32> <xk.f32> <y.f32> I J h               load 1-D Gaussian Nadaraya–Watson              {"ok":true}
//   run                                              one timed ka::attention call on what is loaded {"seconds":s}
//   save <out.f32>                                   write the last output, I×D float32             {"ok":true}
//   ceiling dot|madd <calls>                         a probe of ceiling_kernels.h                   {"gflops":g}
//   quit
// It announces itself with {"ready":true,"simd":"<xsimd arch>"}; a failing command answers {"error":"..."}.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "base/build_info.h"
#include "ceiling_kernels.h"
#include "engine/exact.h"

namespace {

bool read_floats(const std::string& path, size_t count, std::vector<float>& out) {
  out.resize(count);
  std::ifstream in(path, std::ios::binary);
  return bool(in.read(reinterpret_cast<char*>(out.data()), std::streamsize(count * sizeof(float))));
}

void reply(const std::string& json) {
  std::printf("%s\n", json.c_str());
  std::fflush(stdout);
}

void fail(const std::string& what) { reply("{\"error\":\"" + what + "\"}"); }

std::string number(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", x);
  return text;
}

struct Loaded {
  std::vector<float> q, k, v, out;
  float bandwidth = 1;
  ka::Problem problem;
  int64_t rows = 0, width = 0;
};

bool load(Loaded& s, const std::string& qf, const std::string& kf, const std::string& vf, int64_t I, int64_t J,
          int64_t M, int64_t D) {
  if (!read_floats(qf, size_t(I * M), s.q) || !read_floats(kf, size_t(J * M), s.k) ||
      !read_floats(vf, size_t(J * D), s.v)) {
    return false;
  }
  s.out.assign(size_t(I * D), 0.0f);
  s.rows = I;
  s.width = D;
  s.problem = ka::Problem{};
  s.problem.queries = {s.q.data(), I, M, M};
  s.problem.keys = {s.k.data(), J, M, M};
  s.problem.values = {s.v.data(), J, D, D};
  return true;
}

}  // namespace

int main() {
  reply(std::string("{\"ready\":true,\"simd\":\"") + ka::simd_name() + "\"}");
  Loaded s;
  std::string cmd;
  while (std::cin >> cmd) {
    if (cmd == "attention") {
      std::string qf, kf, vf;
      int64_t I, J, M, D;
      double scale;
      std::cin >> qf >> kf >> vf >> I >> J >> M >> D >> scale;
      if (!load(s, qf, kf, vf, I, J, M, D)) {
        fail("cannot read the input files");
        continue;
      }
      s.problem.kernel = {ka::KernelKind::Softmax, scale, nullptr};
      reply("{\"ok\":true}");
    } else if (cmd == "nw") {
      std::string qf, kf, vf;
      int64_t I, J;
      std::cin >> qf >> kf >> vf >> I >> J >> s.bandwidth;
      if (!load(s, qf, kf, vf, I, J, 1, 1)) {
        fail("cannot read the input files");
        continue;
      }
      s.problem.kernel = {ka::KernelKind::Gaussian, 1.0, &s.bandwidth};
      reply("{\"ok\":true}");
    } else if (cmd == "run") {
      const auto start = std::chrono::steady_clock::now();
      const ka::Result r = ka::attention(s.problem, ka::Matrix{s.out.data(), s.rows, s.width, s.width});
      const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
      if (r.status != ka::Status::Ok) {
        fail(std::string("ka::attention returned ") + ka::status_name(r.status));
        continue;
      }
      reply("{\"seconds\":" + number(elapsed.count()) + "}");
    } else if (cmd == "save") {
      std::string path;
      std::cin >> path;
      std::ofstream out(path, std::ios::binary);
      out.write(reinterpret_cast<const char*>(s.out.data()), std::streamsize(s.out.size() * sizeof(float)));
      if (out)
        reply("{\"ok\":true}");
      else
        fail("cannot write " + path);
    } else if (cmd == "ceiling") {
      std::string probe;
      int calls;
      std::cin >> probe >> calls;
      if (probe != "dot" && probe != "madd") {
        fail("unknown probe " + probe);
        continue;
      }
      const double g = probe == "dot" ? ka_bench::dot_gflops(calls) : ka_bench::madd_gflops(calls);
      reply("{\"gflops\":" + number(g) + "}");
    } else if (cmd == "quit") {
      return 0;
    } else {
      fail("unknown command " + cmd);
    }
  }
  return 0;
}
