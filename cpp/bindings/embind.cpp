// Embind registrations only, one file per area (attention.cpp, states.cpp, approximations.cpp, regression.cpp,
// plan.cpp; what they share in common.h): each function rebuilds core views from heap pointers and sizes, calls one
// core entry and returns its Result. The core's enums cross as embind enums named as JS names them
// (options.kernel 'gaussian' is KernelKind.gaussian), registered here with the option structs every area takes.
// Validation with argument names, defaults and memory ownership live in web/src (web/src/engine.js, the only caller).
#include <emscripten/bind.h>

#include <string>

#include "base/build_info.h"
#include "common.h"
#include "methods/plan.h"
#include "methods/random_features.h"
#include "stats/bandwidth.h"

namespace {

using namespace ka;
using namespace ka::bindings;

std::string simd_name_js() { return simd_name(); }

}  // namespace

EMSCRIPTEN_BINDINGS(kernel_attention) {
  using namespace emscripten;
  enum_<Status>("Status")
      .value("Ok", Status::Ok)
      .value("BadArgument", Status::BadArgument)
      .value("BadShape", Status::BadShape)
      .value("EmptyRow", Status::EmptyRow)
      .value("OutOfMemory", Status::OutOfMemory)
      .value("Cancelled", Status::Cancelled);
  enum_<KernelKind>("KernelKind")
      .value("softmax", KernelKind::Softmax)
      .value("gaussian", KernelKind::Gaussian)
      .value("laplacian", KernelKind::Laplacian)
      .value("cauchy", KernelKind::Cauchy)
      .value("epanechnikov", KernelKind::Epanechnikov)
      .value("tricube", KernelKind::Tricube)
      .value("uniform", KernelKind::Uniform);
  enum_<EmptyPolicy>("EmptyPolicy")
      .value("nan", EmptyPolicy::NaN)
      .value("zero", EmptyPolicy::Zero)
      .value("nearest", EmptyPolicy::Nearest)
      .value("error", EmptyPolicy::Error);
  enum_<Estimator>("Estimator")
      .value("nadaraya-watson", Estimator::NadarayaWatson)
      .value("local-linear", Estimator::LocalLinear)
      .value("local-quadratic", Estimator::LocalQuadratic);
  enum_<Rule>("Rule").value("scott", Rule::Scott).value("silverman", Rule::Silverman);
  enum_<Score>("Score").value("cv", Score::LeaveOneOut).value("aicc", Score::AICc);
  enum_<LandmarkSampling>("LandmarkSampling")
      .value("kmeans++", LandmarkSampling::KMeansPlusPlus)
      .value("uniform", LandmarkSampling::Uniform);
  enum_<Method>("Method")
      .value("exact", Method::Exact)
      .value("grid", Method::Grid)
      .value("sparse", Method::Sparse)
      .value("top-k", Method::TopK)
      .value("random-features", Method::RandomFeatures)
      .value("nystrom", Method::Nystrom)
      .value("auto", Method::Auto);
  enum_<Task>("Task").value("attention", Task::Attention).value("regression", Task::Regression);
  enum_<PlanCriterion>("PlanCriterion")
      .value("fit", PlanCriterion::Fit)
      .value("cv", PlanCriterion::Cv)
      .value("aicc", PlanCriterion::Aicc)
      .value("cv-gradient", PlanCriterion::CvGradient)
      .value("plugin", PlanCriterion::Plugin);
  enum_<PlanField>("PlanField")
      .value("none", PlanField::None)
      .value("task", PlanField::Task)
      .value("kernel", PlanField::Kernel)
      .value("dims", PlanField::Dims)
      .value("mask", PlanField::Mask)
      .value("groups", PlanField::Groups)
      .value("estimator", PlanField::Estimator)
      .value("weights", PlanField::Weights)
      .value("span", PlanField::Span)
      .value("criterion", PlanField::Criterion)
      .value("discrete", PlanField::Discrete);
  enum_<DiscreteKernel>("DiscreteKernel")
      .value("aitchison-aitken", DiscreteKernel::AitchisonAitken)
      .value("wang-van-ryzin", DiscreteKernel::WangVanRyzin)
      .value("li-racine", DiscreteKernel::LiRacine);
  value_object<CallOptions>("CallOptions")
      .field("kernel", &CallOptions::kernel)
      .field("scale", &CallOptions::scale)
      .field("bandwidth", &CallOptions::bandwidth)
      .field("heads", &CallOptions::heads)
      .field("causal", &CallOptions::causal)
      .field("leaveOneOut", &CallOptions::leaveOneOut)
      .field("keyPadding", &CallOptions::keyPadding)
      .field("generalMask", &CallOptions::generalMask)
      .field("queryGroups", &CallOptions::queryGroups)
      .field("keyGroups", &CallOptions::keyGroups)
      .field("empty", &CallOptions::empty);
  value_object<CallResult>("CallResult")
      .field("status", &CallResult::status)
      .field("row", &CallResult::row)
      .field("head", &CallResult::head);
  value_object<FitOptions>("FitOptions")
      .field("kernel", &FitOptions::kernel)
      .field("estimator", &FitOptions::estimator)
      .field("bandwidth", &FitOptions::bandwidth)
      .field("weights", &FitOptions::weights)
      .field("empty", &FitOptions::empty)
      .field("threads", &FitOptions::threads)
      .field("tolerance", &FitOptions::tolerance)
      .field("exclude", &FitOptions::exclude)
      .field("queryScale", &FitOptions::queryScale)
      .field("discreteColumns", &FitOptions::discreteColumns)
      .field("categories", &FitOptions::categories)
      .field("queryCategories", &FitOptions::queryCategories)
      .field("levels", &FitOptions::levels)
      .field("discreteKernels", &FitOptions::discreteKernels)
      .field("lambda", &FitOptions::lambda);
  function("_simdName", &simd_name_js);
}
