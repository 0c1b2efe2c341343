// Gradients of the tensor-core and linalg ops against libtorch's .grad: one table, each case run
// in float32 and float64 on random inputs (fixed seeds) with a random grad_output, broadcasting
// shapes and transposed or strided leaves; node names are compared where they are PyTorch's.
//
// Tolerance: a gradient is a short chain of ops, each rounding once, and reductions add up to K
// terms in another order than libtorch: float32 allows 2e-5 relative plus K * 4 * 2^-24
// absolute, float64 1e-12 relative plus K * 4 * 2^-53.
#include "parity/grad_cases.h"
#include "unit/expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using parity::Close;
using parity::to_torch;

namespace {

using grad_cases::Case;
using grad_cases::Domain;
using grad_cases::Layout;
constexpr double kFloatRtol = 2e-5;
parity::Tol grad_tol(ember::ScalarType dtype, int64_t k) { return grad_cases::grad_tol(dtype, k, kFloatRtol); }
void run_case(const Case& c, ember::ScalarType dtype, uint64_t seed) { grad_cases::run_case(c, dtype, seed, kFloatRtol); }

using E = std::vector<ember::Tensor>;
using T = std::vector<torch::Tensor>;
const Domain P = Domain::Positive, U = Domain::Unit, A = Domain::Any;
const Layout Tr = Layout::Transposed, St = Layout::Strided;

// Fixed index and mask tensors, the same on both sides.
ember::Tensor long_tensor(std::vector<int64_t> v, std::vector<int64_t> shape) {
  return ember::tensor(v).view(shape);
}
ember::Tensor mask34() { return parity::random({3, 4}, ember::kDouble, 999) > 0; }

std::vector<Case> pointwise_cases() {
  return {
      {"abs", {{{3, 4}, A, Tr}}, [](const E& v) { return v[0].abs(); }, [](const T& v) { return v[0].abs(); },
       "AbsBackward0"},
      {"sign", {{{5}}}, [](const E& v) { return v[0].sign(); }, [](const T& v) { return v[0].sign(); },
       "SignBackward0"},
      {"exp2", {{{5}}}, [](const E& v) { return v[0].exp2(); }, [](const T& v) { return v[0].exp2(); },
       "Exp2Backward0"},
      {"expm1", {{{5}, A, St}}, [](const E& v) { return v[0].expm1(); }, [](const T& v) { return v[0].expm1(); },
       "Expm1Backward0"},
      {"log2", {{{5}, P}}, [](const E& v) { return v[0].log2(); }, [](const T& v) { return v[0].log2(); },
       "Log2Backward0"},
      {"log10", {{{5}, P}}, [](const E& v) { return v[0].log10(); }, [](const T& v) { return v[0].log10(); },
       "Log10Backward0"},
      {"log1p", {{{5}, P}}, [](const E& v) { return v[0].log1p(); }, [](const T& v) { return v[0].log1p(); },
       "Log1PBackward0"},
      {"rsqrt", {{{5}, P}}, [](const E& v) { return v[0].rsqrt(); }, [](const T& v) { return v[0].rsqrt(); },
       "RsqrtBackward0"},
      {"tan", {{{5}, U}}, [](const E& v) { return v[0].tan(); }, [](const T& v) { return v[0].tan(); },
       "TanBackward0"},
      {"reciprocal", {{{5}, P}}, [](const E& v) { return v[0].reciprocal(); },
       [](const T& v) { return v[0].reciprocal(); }, "ReciprocalBackward0"},
      {"square", {{{5}}}, [](const E& v) { return v[0].square(); }, [](const T& v) { return v[0].square(); },
       "PowBackward0"},
      {"erf", {{{5}}}, [](const E& v) { return v[0].erf(); }, [](const T& v) { return v[0].erf(); }, "ErfBackward0"},
      {"erfc", {{{5}}}, [](const E& v) { return v[0].erfc(); }, [](const T& v) { return v[0].erfc(); },
       "ErfcBackward0"},
      {"erfinv", {{{5}, U}}, [](const E& v) { return v[0].erfinv(); }, [](const T& v) { return v[0].erfinv(); },
       "ErfinvBackward0", 2},
      {"floor", {{{5}}}, [](const E& v) { return v[0].floor(); }, [](const T& v) { return v[0].floor(); },
       "FloorBackward0"},
      {"round", {{{5}}}, [](const E& v) { return v[0].round(); }, [](const T& v) { return v[0].round(); },
       "RoundBackward0"},
      {"frac", {{{5}, A, St}}, [](const E& v) { return v[0].mul(3).frac(); }, [](const T& v) { return v[0].mul(3).frac(); },
       "FracBackward0"},
      {"silu", {{{7}}}, [](const E& v) { return ember::silu(v[0]); }, [](const T& v) { return torch::silu(v[0]); },
       "SiluBackward0"},
      {"hardswish", {{{9}}}, [](const E& v) { return ember::hardswish(v[0] * 2); },
       [](const T& v) { return torch::hardswish(v[0] * 2); }, "HardswishBackward0"},
      {"hardsigmoid", {{{9}}}, [](const E& v) { return ember::hardsigmoid(v[0] * 2); },
       [](const T& v) { return torch::hardsigmoid(v[0] * 2); }, "HardsigmoidBackward0"},
      {"gelu", {{{7}, A, St}}, [](const E& v) { return ember::gelu(v[0]); },
       [](const T& v) { return torch::gelu(v[0]); }, "GeluBackward0", 2},
      {"gelu tanh", {{{7}}}, [](const E& v) { return ember::gelu(v[0], "tanh"); },
       [](const T& v) { return torch::gelu(v[0], "tanh"); }, "GeluBackward0", 2},
      {"leaky_relu", {{{7}}}, [](const E& v) { return ember::leaky_relu(v[0], 0.2); },
       [](const T& v) { return torch::leaky_relu(v[0], 0.2); }, "LeakyReluBackward0"},
      {"threshold_backward", {{{7}}, {{7}}}, [](const E& v) { return ember::threshold_backward(v[0], v[1], 0.1); },
       [](const T& v) { return torch::threshold_backward(v[0], v[1], 0.1); }, "ThresholdBackwardBackward0"},
      {"elu", {{{7}}}, [](const E& v) { return ember::elu(v[0], 1.5, 1.2, 0.7); },
       [](const T& v) { return torch::elu(v[0], 1.5, 1.2, 0.7); }, "EluBackward0"},
      {"selu", {{{3, 4}, A, Tr}}, [](const E& v) { return ember::selu(v[0]); },
       [](const T& v) { return torch::selu(v[0]); }, "EluBackward0"},
      {"hardtanh", {{{3, 4}, A, Tr}}, [](const E& v) { return ember::hardtanh(v[0], -0.5, 0.7); },
       [](const T& v) { return torch::hardtanh(v[0], -0.5, 0.7); }, "HardtanhBackward0"},
      {"log_sigmoid", {{{3, 4}, A, Tr}}, [](const E& v) { return ember::log_sigmoid(v[0] * 8); },
       [](const T& v) { return torch::log_sigmoid(v[0] * 8); }, "LogSigmoidBackward0"},
      {"relu6", {{{9}}}, [](const E& v) { return ember::relu6(v[0] * 4); },
       [](const T& v) { return torch::relu6(v[0] * 4); }, "HardtanhBackward0"},
      {"softplus", {{{7}}}, [](const E& v) { return ember::softplus(v[0], 2, 1); },
       [](const T& v) { return torch::softplus(v[0], 2, 1); }, "SoftplusBackward0"},
      {"nan_to_num", {{{5}}}, [](const E& v) { return v[0].nan_to_num(); },
       [](const T& v) { return v[0].nan_to_num(); }, "NanToNumBackward0"},
      {"remainder", {{{2, 3}}, {{3}, P}}, [](const E& v) { return v[0].remainder(v[1]); },
       [](const T& v) { return v[0].remainder(v[1]); }, "RemainderBackward1", 2},
      {"remainder scalar", {{{5}}}, [](const E& v) { return v[0].remainder(0.7); },
       [](const T& v) { return v[0].remainder(0.7); }, "RemainderBackward0"},
      {"fmod", {{{3, 1}}, {{4}, P}}, [](const E& v) { return v[0].fmod(v[1]); },
       [](const T& v) { return v[0].fmod(v[1]); }, "FmodBackward1", 3},
      {"pow tensor", {{{2, 3}, P}, {{3}}}, [](const E& v) { return v[0].pow(v[1]); },
       [](const T& v) { return v[0].pow(v[1]); }, "PowBackward1", 2},
      {"pow scalar base", {{{5}}}, [](const E& v) { return ember::pow(2.5, v[0]); },
       [](const T& v) { return torch::pow(2.5, v[0]); }, "PowBackward2"},
      {"minimum", {{{3, 1}}, {{4}}}, [](const E& v) { return ember::minimum(v[0], v[1]); },
       [](const T& v) { return torch::minimum(v[0], v[1]); }, "MinimumBackward0", 4},
      {"maximum", {{{3, 4}, A, Tr}, {{4}}}, [](const E& v) { return ember::maximum(v[0], v[1]); },
       [](const T& v) { return torch::maximum(v[0], v[1]); }, "MaximumBackward0", 3},
      {"atan2", {{{2, 3}}, {{3}}}, [](const E& v) { return v[0].atan2(v[1]); },
       [](const T& v) { return v[0].atan2(v[1]); }, "Atan2Backward0", 2},
      {"lerp scalar", {{{2, 3}}, {{3}}}, [](const E& v) { return v[0].lerp(v[1], 0.3); },
       [](const T& v) { return v[0].lerp(v[1], 0.3); }, "LerpBackward0", 2},
      {"lerp tensor", {{{2, 3}}, {{3}}, {{2, 1}}}, [](const E& v) { return v[0].lerp(v[1], v[2]); },
       [](const T& v) { return v[0].lerp(v[1], v[2]); }, "LerpBackward1", 3},
      {"addcmul", {{{3}}, {{2, 3}}, {{2, 1}}}, [](const E& v) { return v[0].addcmul(v[1], v[2], 0.5); },
       [](const T& v) { return v[0].addcmul(v[1], v[2], 0.5); }, "AddcmulBackward0", 3},
      {"addcdiv", {{{3}}, {{2, 3}}, {{2, 1}, P}}, [](const E& v) { return v[0].addcdiv(v[1], v[2], 2); },
       [](const T& v) { return v[0].addcdiv(v[1], v[2], 2); }, "AddcdivBackward0", 3},
      {"clamp", {{{9}}}, [](const E& v) { return v[0].clamp(-0.5, 0.5); },
       [](const T& v) { return v[0].clamp(-0.5, 0.5); }, "ClampBackward1"},
      {"clamp tensors", {{{2, 5}}, {{5}}, {{2, 1}}},
       [](const E& v) { return v[0].clamp(std::optional<ember::Tensor>(v[1]), std::optional<ember::Tensor>(v[2])); },
       [](const T& v) { return v[0].clamp(c10::optional<torch::Tensor>(v[1]), c10::optional<torch::Tensor>(v[2])); },
       "ClampBackward0", 5},
      {"clamp_min", {{{9}}}, [](const E& v) { return v[0].clamp_min(0.2); },
       [](const T& v) { return v[0].clamp_min(0.2); }, "ClampMinBackward0"},
      {"clamp_max", {{{9}}}, [](const E& v) { return v[0].clamp_max(0.2); },
       [](const T& v) { return v[0].clamp_max(0.2); }, "ClampMaxBackward0"},
      {"where", {{{3, 4}}, {{4}}}, [](const E& v) { return ember::where(mask34(), v[0], v[1]); },
       [](const T& v) { return torch::where(to_torch(mask34()), v[0], v[1]); }, "WhereBackward0", 3},
      {"masked_fill", {{{3, 4}, A, Tr}}, [](const E& v) { return v[0].masked_fill(mask34(), 1.5); },
       [](const T& v) { return v[0].masked_fill(to_torch(mask34()), 1.5); }, "MaskedFillBackward0"},
      {"masked_fill tensor", {{{3, 4}}, {{}}}, [](const E& v) { return v[0].masked_fill(mask34(), v[1]); },
       [](const T& v) { return v[0].masked_fill(to_torch(mask34()), v[1]); }, "MaskedFillBackward1", 12},
  };
}

std::vector<Case> reduction_cases() {
  return {
      {"prod", {{{2, 3}}}, [](const E& v) { return v[0].prod(); }, [](const T& v) { return v[0].prod(); },
       "ProdBackward0", 6},
      {"prod dim", {{{3, 4}, A, Tr}}, [](const E& v) { return v[0].prod(1); }, [](const T& v) { return v[0].prod(1); },
       "ProdBackward1", 4},
      {"max", {{{3, 4}}}, [](const E& v) { return v[0].max(); }, [](const T& v) { return v[0].max(); },
       "MaxBackward1"},
      {"min", {{{3, 4}}}, [](const E& v) { return v[0].min(); }, [](const T& v) { return v[0].min(); },
       "MinBackward1"},
      {"max dim", {{{3, 4}}}, [](const E& v) { return std::get<0>(v[0].max(1)); },
       [](const T& v) { return std::get<0>(v[0].max(1)); }, "MaxBackward0"},
      {"min dim keepdim", {{{3, 4}, A, St}}, [](const E& v) { return std::get<0>(v[0].min(0, true)); },
       [](const T& v) { return std::get<0>(v[0].min(0, true)); }, "MinBackward0"},
      {"amax", {{{2, 3, 4}}}, [](const E& v) { return v[0].amax({0, 2}); },
       [](const T& v) { return v[0].amax({0, 2}); }, "AmaxBackward0"},
      {"amin", {{{3, 4}}}, [](const E& v) { return v[0].amin({1}, true); },
       [](const T& v) { return v[0].amin({1}, true); }, "AminBackward0"},
      {"var", {{{3, 4}}}, [](const E& v) { return v[0].var(); }, [](const T& v) { return v[0].var(); },
       "VarBackward0", 12},
      {"var correction 0", {{{3, 4}, A, Tr}}, [](const E& v) { return v[0].var({1}, int64_t{0}); },
       [](const T& v) { return v[0].var(at::OptionalIntArrayRef({1}), c10::optional<int64_t>(0)); },
       "VarBackward0", 4},
      {"std", {{{3, 4}}}, [](const E& v) { return v[0].std({0}, true, true); },
       [](const T& v) { return v[0].std({0}, true, true); }, "StdBackward0", 3},
      {"var_mean", {{{3, 4}}},
       [](const E& v) {
         auto [var, mean] = ember::var_mean(v[0], {{1}});
         return var * 2 + mean;
       },
       [](const T& v) {
         auto [var, mean] = torch::var_mean(v[0], {1});
         return var * 2 + mean;
       },
       nullptr, 4},
      {"std_mean", {{{3, 4}}},
       [](const E& v) {
         auto [sd, mean] = ember::std_mean(v[0], {{0}});
         return sd * 2 + mean;
       },
       [](const T& v) {
         auto [sd, mean] = torch::std_mean(v[0], {0});
         return sd * 2 + mean;
       },
       nullptr, 3},
      {"norm", {{{3, 4}}}, [](const E& v) { return v[0].norm(); }, [](const T& v) { return v[0].norm(); },
       "NormBackward0", 12},
      {"norm 1", {{{3, 4}}}, [](const E& v) { return v[0].norm(1, {1}); },
       [](const T& v) { return v[0].norm(1, {1}); }, "NormBackward1"},
      {"norm 3 keepdim", {{{3, 4}, A, St}}, [](const E& v) { return v[0].norm(3, {0}, true); },
       [](const T& v) { return v[0].norm(3, {0}, true); }, "NormBackward1", 3},
      {"norm 1.5", {{{3, 4}}}, [](const E& v) { return v[0].norm(1.5, {1}); },
       [](const T& v) { return v[0].norm(1.5, {1}); }, "NormBackward1", 4},
      {"norm 0.5", {{{3, 4}}}, [](const E& v) { return v[0].norm(0.5); }, [](const T& v) { return v[0].norm(0.5); },
       "NormBackward0", 12},
      {"norm inf", {{{3, 4}}}, [](const E& v) { return v[0].norm(INFINITY, {1}); },
       [](const T& v) { return v[0].norm(INFINITY, {1}); }, "NormBackward1"},
      {"norm 0 (no gradient)", {{{3, 4}}}, [](const E& v) { return v[0].norm(0); },
       [](const T& v) { return v[0].norm(0); }, "NormBackward0"},
      {"logsumexp", {{{3, 4}}}, [](const E& v) { return v[0].logsumexp({1}); },
       [](const T& v) { return v[0].logsumexp({1}); }, "LogsumexpBackward0", 4},
      {"cumsum", {{{3, 4}, A, Tr}}, [](const E& v) { return v[0].cumsum(1); },
       [](const T& v) { return v[0].cumsum(1); }, "CumsumBackward0", 4},
      {"cumprod", {{{3, 4}}}, [](const E& v) { return v[0].cumprod(1); },
       [](const T& v) { return v[0].cumprod(1); }, "CumprodBackward0", 8},
      {"cumprod with zeros", {{{3, 4}}}, [](const E& v) { return (v[0] * (v[0] > 0.5)).cumprod(0); },
       [](const T& v) { return (v[0] * (v[0] > 0.5)).cumprod(0); }, "CumprodBackward0", 6},
      {"mean dtype", {{{3, 4}}}, [](const E& v) { return v[0].mean({1}, false, ember::kDouble); },
       [](const T& v) { return v[0].mean({1}, false, torch::kDouble); }, "MeanBackward1", 4},
      {"sort", {{{3, 4}}}, [](const E& v) { return std::get<0>(v[0].sort(1)); },
       [](const T& v) { return std::get<0>(v[0].sort(1)); }, "SortBackward0"},
      {"sort descending", {{{3, 4}, A, Tr}}, [](const E& v) { return std::get<0>(v[0].sort(0, true)); },
       [](const T& v) { return std::get<0>(v[0].sort(0, true)); }, "SortBackward0"},
      {"topk", {{{3, 5}}}, [](const E& v) { return std::get<0>(v[0].topk(2)); },
       [](const T& v) { return std::get<0>(v[0].topk(2)); }, "TopkBackward0"},
      {"kthvalue", {{{3, 5}}}, [](const E& v) { return std::get<0>(v[0].kthvalue(2)); },
       [](const T& v) { return std::get<0>(v[0].kthvalue(2)); }, "KthvalueBackward0"},
  };
}

std::vector<Case> indexing_cases() {
  return {
      {"index_select", {{{3, 4}}},
       [](const E& v) { return v[0].index_select(0, long_tensor({2, 0, 2}, {3})); },
       [](const T& v) { return v[0].index_select(0, to_torch(long_tensor({2, 0, 2}, {3}))); }, "IndexSelectBackward0",
       2},
      {"gather", {{{3, 4}, A, Tr}}, [](const E& v) { return v[0].gather(1, long_tensor({1, 0, 3, 1, 2, 2}, {2, 3})); },
       [](const T& v) { return v[0].gather(1, to_torch(long_tensor({1, 0, 3, 1, 2, 2}, {2, 3}))); },
       "GatherBackward0", 2},
      {"scatter", {{{3, 4}}, {{2, 3}}},
       [](const E& v) { return v[0].scatter(1, long_tensor({1, 0, 3, 0, 2, 1}, {2, 3}), v[1]); },
       [](const T& v) { return v[0].scatter(1, to_torch(long_tensor({1, 0, 3, 0, 2, 1}, {2, 3})), v[1]); },
       "ScatterBackward0"},
      {"scatter value", {{{3, 4}}}, [](const E& v) { return v[0].scatter(1, long_tensor({1, 0, 3}, {1, 3}), 2.0); },
       [](const T& v) { return v[0].scatter(1, to_torch(long_tensor({1, 0, 3}, {1, 3})), 2.0); }, "ScatterBackward1"},
      {"scatter_add", {{{3, 4}}, {{2, 3}}},
       [](const E& v) { return v[0].scatter_add(1, long_tensor({1, 0, 3, 1, 1, 2}, {2, 3}), v[1]); },
       [](const T& v) { return v[0].scatter_add(1, to_torch(long_tensor({1, 0, 3, 1, 1, 2}, {2, 3})), v[1]); },
       "ScatterAddBackward0"},
      {"index_add", {{{3, 4}}, {{3, 3}}},
       [](const E& v) { return v[0].index_add(1, long_tensor({2, 0, 2}, {3}), v[1], 2); },
       [](const T& v) { return v[0].index_add(1, to_torch(long_tensor({2, 0, 2}, {3})), v[1], 2); },
       "IndexAddBackward0"},
      {"masked_select", {{{4}}}, [](const E& v) { return v[0].masked_select(mask34()); },
       [](const T& v) { return v[0].masked_select(to_torch(mask34())); }, "MaskedSelectBackward0", 3},
      {"index", {{{3, 4}, A, St}},
       [](const E& v) { return v[0].index({long_tensor({2, 0, 2}, {3}), long_tensor({1, 3, 1}, {3})}); },
       [](const T& v) {
         return v[0].index({to_torch(long_tensor({2, 0, 2}, {3})), to_torch(long_tensor({1, 3, 1}, {3}))});
       },
       "IndexBackward0", 2},
      {"index mask", {{{3, 4}}}, [](const E& v) { return v[0].index({mask34()}); },
       [](const T& v) { return v[0].index({to_torch(mask34())}); }, "IndexBackward0"},
      {"cat", {{{2, 3}}, {{2, 1}}, {{2, 2}, A, Tr}}, [](const E& v) { return ember::cat({v[0], v[1], v[2]}, -1); },
       [](const T& v) { return torch::cat({v[0], v[1], v[2]}, -1); }, "CatBackward0"},
      {"stack", {{{2, 3}}, {{2, 3}, A, Tr}}, [](const E& v) { return ember::stack({v[0], v[1]}, 1); },
       [](const T& v) { return torch::stack({v[0], v[1]}, 1); }, "StackBackward0"},
      {"flip", {{{2, 3}}}, [](const E& v) { return v[0].flip({0, 1}); }, [](const T& v) { return v[0].flip({0, 1}); },
       "FlipBackward0"},
      {"roll", {{{2, 3}}}, [](const E& v) { return v[0].roll({1, -1}, {0, 1}); },
       [](const T& v) { return v[0].roll({1, -1}, {0, 1}); }, "RollBackward0"},
      {"repeat", {{{2, 3}, A, Tr}}, [](const E& v) { return v[0].repeat({2, 1, 3}); },
       [](const T& v) { return v[0].repeat({2, 1, 3}); }, "RepeatBackward0", 6},
      {"tril", {{{3, 4}}}, [](const E& v) { return v[0].tril(1); }, [](const T& v) { return v[0].tril(1); },
       "TrilBackward0"},
      {"triu", {{{2, 3, 3}}}, [](const E& v) { return v[0].triu(-1); }, [](const T& v) { return v[0].triu(-1); },
       "TriuBackward0"},
      {"diagonal", {{{3, 4}}}, [](const E& v) { return v[0].diagonal(1); },
       [](const T& v) { return v[0].diagonal(1); }, "DiagonalBackward0"},
      {"unfold", {{{2, 7}}}, [](const E& v) { return v[0].unfold(1, 3, 2); },
       [](const T& v) { return v[0].unfold(1, 3, 2); }, "UnfoldBackward0", 2},
      {"as_strided", {{{6}}}, [](const E& v) { return v[0].as_strided({3, 2}, {1, 2}); },
       [](const T& v) { return v[0].as_strided({3, 2}, {1, 2}); }, "AsStridedBackward0", 2},
  };
}

std::vector<Case> linalg_cases() {
  return {
      {"bmm", {{{2, 3, 4}}, {{2, 4, 2}}}, [](const E& v) { return v[0].bmm(v[1]); },
       [](const T& v) { return v[0].bmm(v[1]); }, "BmmBackward0", 4},
      {"addmm", {{{2}}, {{3, 4}}, {{4, 2}, A, Tr}}, [](const E& v) { return ember::addmm(v[0], v[1], v[2], 0.5, 2); },
       [](const T& v) { return torch::addmm(v[0], v[1], v[2], 0.5, 2); }, "AddmmBackward0", 4},
      {"addmv", {{{3}}, {{3, 4}}, {{4}}}, [](const E& v) { return ember::addmv(v[0], v[1], v[2], 2, 0.5); },
       [](const T& v) { return torch::addmv(v[0], v[1], v[2], 2, 0.5); }, "AddmvBackward0", 4},
      {"baddbmm", {{{3, 1}}, {{2, 3, 4}}, {{2, 4, 2}}},
       [](const E& v) { return ember::baddbmm(v[0], v[1], v[2], 0.5, 1.5); },
       [](const T& v) { return torch::baddbmm(v[0], v[1], v[2], 0.5, 1.5); }, "BaddbmmBackward0", 4},
      {"dot", {{{5}}, {{5}}}, [](const E& v) { return v[0].dot(v[1]); }, [](const T& v) { return v[0].dot(v[1]); },
       "DotBackward0"},
      {"vdot", {{{5}}, {{5}}}, [](const E& v) { return v[0].vdot(v[1]); }, [](const T& v) { return v[0].vdot(v[1]); },
       "VdotBackward0"},
      {"mv", {{{3, 4}, A, Tr}, {{4}}}, [](const E& v) { return v[0].mv(v[1]); },
       [](const T& v) { return v[0].mv(v[1]); }, "MvBackward0", 4},
      {"outer", {{{3}}, {{4}}}, [](const E& v) { return v[0].outer(v[1]); },
       [](const T& v) { return v[0].outer(v[1]); }, "MulBackward0", 4},
      {"einsum", {{{2, 3, 4}}, {{2, 4, 2}}}, [](const E& v) { return ember::einsum("bij,bjk->bik", {v[0], v[1]}); },
       [](const T& v) { return torch::einsum("bij,bjk->bik", {v[0], v[1]}); }, nullptr, 4},
      {"einsum diagonal", {{{3, 3}}, {{3}}}, [](const E& v) { return ember::einsum("ii,j->ij", {v[0], v[1]}); },
       [](const T& v) { return torch::einsum("ii,j->ij", {v[0], v[1]}); }, nullptr, 3},
  };
}

void run_all(const std::vector<Case>& cases, uint64_t seed) {
  for (const Case& c : cases)
    for (ember::ScalarType dtype : {ember::kFloat, ember::kDouble}) run_case(c, dtype, seed += 10);
}

TEST(DerivativesParity, Pointwise) { run_all(pointwise_cases(), 1000); }
TEST(DerivativesParity, ReductionsAndSorting) { run_all(reduction_cases(), 2000); }
TEST(DerivativesParity, IndexingJoiningAndViews) { run_all(indexing_cases(), 3000); }
TEST(DerivativesParity, LinearAlgebra) { run_all(linalg_cases(), 4000); }

TEST(DerivativesParity, SecondOrderGradients) {
  const ember::Tensor x = parity::random({2, 3}, ember::kDouble, 7).requires_grad_();
  const torch::Tensor tx = to_torch(x.detach()).requires_grad_();
  const ember::Tensor ey = (ember::gelu(x).prod(1) + x.norm(3, {0}).logsumexp({0}) + x.cumprod(1).var()).sum();
  const torch::Tensor ty = (torch::gelu(tx).prod(1) + tx.norm(3, {0}).logsumexp({0}) + tx.cumprod(1).var()).sum();
  const ember::Tensor eg = ember::autograd::grad({ey}, {x}, {}, std::nullopt, true)[0];
  const torch::Tensor tg = torch::autograd::grad({ty}, {tx}, {}, c10::nullopt, true)[0];
  EXPECT_TRUE(Close(eg.detach(), tg.detach(), grad_tol(ember::kDouble, 8)));
  const ember::Tensor eh = ember::autograd::grad({(eg * eg).sum()}, {x})[0];
  const torch::Tensor th = torch::autograd::grad({(tg * tg).sum()}, {tx})[0];
  EXPECT_TRUE(Close(eh, th, grad_tol(ember::kDouble, 32)));
}

// hardswish_backward and hardsigmoid_backward (one kernel each, as libtorch's): values at and
// around the breakpoints, infinities and NaN equal libtorch's in float32/float64/bfloat16; their
// own gradients (double backward) and node names too (hardswish's; see below for hardsigmoid's).
TEST(DerivativesParity, HardswishAndHardsigmoidBackward) {
  const double nan = std::nan(""), inf = INFINITY;
  const std::vector<double> xs = {-4, -3, -2.99, -1.5, -0.0, 0.1, 1, 2.99, 3, 3.01, 7, nan, inf, -inf, 0.3, -2.2};
  for (ember::ScalarType dt : {ember::kFloat, ember::kDouble, ember::kBFloat16}) {
    const ember::Tensor x = ember::tensor(xs).to(dt).view({4, 4}).t();  // a transposed input too
    const ember::Tensor g = parity::random({4, 4}, dt, 11);
    const torch::Tensor tx = to_torch(x), tg = to_torch(g);
    const ember::Tensor hs = ember::hardswish_backward(g, x), hg = ember::hardsigmoid_backward(g, x);
    EXPECT_TRUE(torch::equal(to_torch(hs).nan_to_num(7), torch::hardswish_backward(tg, tx).nan_to_num(7))) << dt;
    EXPECT_TRUE(torch::equal(to_torch(hg).nan_to_num(7), torch::hardsigmoid_backward(tg, tx).nan_to_num(7))) << dt;
  }
  const ember::Tensor x = (parity::random({3, 5}, ember::kDouble, 12) * 4).requires_grad_();
  const ember::Tensor v = parity::random({3, 5}, ember::kDouble, 13);
  const torch::Tensor tx = to_torch(x.detach()).requires_grad_(), tv = to_torch(v);
  for (bool swish : {true, false}) {
    const ember::Tensor y = swish ? ember::hardswish(x) : ember::hardsigmoid(x);
    const torch::Tensor ty = swish ? torch::hardswish(tx) : torch::hardsigmoid(tx);
    const ember::Tensor eg = ember::autograd::grad({(y * v).sum()}, {x}, {}, std::nullopt, true)[0];
    const torch::Tensor tg = torch::autograd::grad({(ty * tv).sum()}, {tx}, {}, c10::nullopt, true)[0];
    EXPECT_TRUE(Close(eg.detach(), tg.detach(), grad_tol(ember::kDouble, 1)));
    if (!swish) {
      // libtorch 1.13 has no derivative for hardsigmoid_backward (a NotImplemented node); later
      // PyTorch's, which Ember follows, is zero for self (a piecewise constant gradient)
      EXPECT_EQ(eg.grad_fn()->name(), "HardsigmoidBackwardBackward0");
      EXPECT_TRUE(ember::autograd::grad({eg.sum()}, {x})[0].equal(ember::zeros_like(x)));
      continue;
    }
    EXPECT_EQ(eg.grad_fn()->name(), tg.grad_fn()->name());
    const ember::Tensor eh = ember::autograd::grad({(eg * eg).sum()}, {x})[0];
    const torch::Tensor th = torch::autograd::grad({(tg * tg).sum()}, {tx})[0];
    EXPECT_TRUE(Close(eh, th, grad_tol(ember::kDouble, 2)));
  }
}

TEST(DerivativesParity, SiluBackward) {
  const double nan = std::nan(""), inf = INFINITY;
  const std::vector<double> xs = {-100, -20, -3, -1.5, -0.0, 0.1, 1, 2.99, 17, 90, 7, nan, inf, -inf, 0.3, -2.2};
  for (ember::ScalarType dt : {ember::kFloat, ember::kDouble, ember::kBFloat16}) {
    const ember::Tensor x = ember::tensor(xs).to(dt).view({4, 4}).t();  // a transposed input too
    const ember::Tensor g = parity::random({4, 4}, dt, 14);
    const torch::Tensor tx = to_torch(x), tg = to_torch(g);
    EXPECT_TRUE(Close(ember::silu_backward(g, x).nan_to_num(7), torch::silu_backward(tg, tx).nan_to_num(7)))
        << dt;
  }
  const ember::Tensor x = (parity::random({3, 5}, ember::kDouble, 15) * 4).requires_grad_();
  const ember::Tensor v = parity::random({3, 5}, ember::kDouble, 16).requires_grad_();
  const torch::Tensor tx = to_torch(x.detach()).requires_grad_(), tv = to_torch(v.detach());
  // the gradient without a graph (the one kernel), and with one (the composite libtorch differentiates)
  for (bool create_graph : {false, true}) {
    const ember::Tensor eg = ember::autograd::grad({(ember::silu(x) * v).sum()}, {x}, {}, std::nullopt, create_graph)[0];
    const torch::Tensor tg = torch::autograd::grad({(torch::silu(tx) * tv).sum()}, {tx}, {}, c10::nullopt, create_graph)[0];
    EXPECT_TRUE(Close(eg.detach(), tg.detach(), grad_tol(ember::kDouble, 1)));
    EXPECT_EQ(eg.requires_grad(), create_graph);
    if (!create_graph) continue;
    EXPECT_EQ(eg.grad_fn()->name(), tg.grad_fn()->name());  // MulBackward0
    const ember::Tensor eh = ember::autograd::grad({(eg * eg).sum()}, {x})[0];
    const torch::Tensor th = torch::autograd::grad({(tg * tg).sum()}, {tx})[0];
    EXPECT_TRUE(Close(eh, th, grad_tol(ember::kDouble, 2)));
  }
  // silu_backward's own derivative (libtorch 1.13 has none), by finite differences
  const std::function<ember::Tensor(const ember::autograd::variable_list&)> f = [](const auto& in) {
    return ember::silu_backward(in[0], in[1]);
  };
  EXPECT_TRUE(ember::autograd::gradcheck(f, {v, x}));
  EXPECT_TRUE(ember::autograd::gradgradcheck(f, {v, x}));
}

// hardtanh_backward and elu_backward (one kernel each, as libtorch's): values at and around the
// bounds equal libtorch's; the nodes of hardtanh (relu6, in place, F::hardtanh) and of their own
// derivatives are libtorch's; second derivatives against libtorch's and by finite differences.
TEST(DerivativesParity, HardtanhAndEluBackward) {
  const double inf = INFINITY;
  const std::vector<double> xs = {-4, -1, -0.99, -0.5, -0.0, 0.0, 0.1, 0.7, 0.69, 1, 1.01, 7, inf, -inf, 0.3, -2.2};
  for (ember::ScalarType dt : {ember::kFloat, ember::kDouble}) {  // libtorch 1.13 has no bfloat16 hardtanh_backward
    const ember::Tensor x = ember::tensor(xs).to(dt).view({4, 4}).t();  // a transposed input too
    const ember::Tensor g = parity::random({4, 4}, dt, 21);
    const torch::Tensor tx = to_torch(x), tg = to_torch(g);
    for (auto [lo, hi] : {std::pair{-1.0, 1.0}, std::pair{-0.5, 0.7}, std::pair{0.0, 6.0}}) {
      EXPECT_TRUE(torch::equal(to_torch(ember::hardtanh_backward(g, x, lo, hi)), torch::hardtanh_backward(tg, tx, lo, hi)))
          << dt << " " << lo << " " << hi;
    }
  }
  // NaN: 0 as in libtorch's vector loop, which takes the contiguous body (its scalar tail passes grad)
  const ember::Tensor xn = ember::full({64}, std::nan(""));
  EXPECT_TRUE(torch::equal(to_torch(ember::hardtanh_backward(ember::ones({64}), xn, -1, 1)),
                           torch::hardtanh_backward(torch::ones({64}), to_torch(xn), -1, 1)));
  for (ember::ScalarType dt : {ember::kFloat, ember::kDouble, ember::kBFloat16}) {
    const ember::Tensor x = (parity::random({8, 9}, dt, 22) * 6).t();
    const ember::Tensor g = parity::random({9, 8}, dt, 23);
    const torch::Tensor tx = to_torch(x), tg = to_torch(g);
    for (bool is_result : {false, true}) {
      const ember::Tensor r = is_result ? ember::elu(x, 1.5, 1.2, 0.7) : x;
      EXPECT_TRUE(Close(ember::elu_backward(g, 1.5, 1.2, 0.7, is_result, r),
                        torch::elu_backward(tg, 1.5, 1.2, 0.7, is_result, to_torch(r))))
          << dt << " " << is_result;
    }
  }
  const ember::Tensor i = ember::arange(4);
  expect_error([&] { ember::hardtanh_backward(i, i, 0, 1); }, {"hardtanh_backward", "not implemented for 'Long'"});
  const ember::Tensor f = ember::ones({3});
  expect_error([&] { ember::elu_backward(f, -0.1, 1, 1, true, f); }, {"elu_backward", "negative slope"});

  const ember::Tensor x = (parity::random({3, 5}, ember::kDouble, 24) * 2).requires_grad_();
  const ember::Tensor v = parity::random({3, 5}, ember::kDouble, 25).requires_grad_();
  const torch::Tensor tx = to_torch(x.detach()).requires_grad_(), tv = to_torch(v.detach()).requires_grad_();
  ember::Tensor xc = x * 1;  // a non-leaf, for the in-place form
  torch::Tensor txc = tx * 1;
  EXPECT_EQ(ember::hardtanh_(xc, -0.5, 0.5).grad_fn()->name(), torch::hardtanh_(txc, -0.5, 0.5).grad_fn()->name());
  EXPECT_TRUE(Close(ember::autograd::grad({(xc * v).sum()}, {x})[0], torch::autograd::grad({(txc * tv).sum()}, {tx})[0],
                    grad_tol(ember::kDouble, 1)));
  namespace F = ember::nn::functional;
  EXPECT_EQ(F::hardtanh(x, F::HardtanhFuncOptions().min_val(-0.5)).grad_fn()->name(), "HardtanhBackward0");
  EXPECT_EQ(F::relu6(x).grad_fn()->name(), "HardtanhBackward0");
  EXPECT_EQ(F::selu(x).grad_fn()->name(), "EluBackward0");
  for (bool elu : {true, false}) {
    const ember::Tensor y = elu ? ember::elu(x, 1.5, 1.2, 0.7) : ember::hardtanh(x, -0.5, 0.7);
    const torch::Tensor ty = elu ? torch::elu(tx, 1.5, 1.2, 0.7) : torch::hardtanh(tx, -0.5, 0.7);
    const ember::Tensor eg = ember::autograd::grad({(y * v).sum()}, {x}, {}, std::nullopt, true)[0];
    const torch::Tensor tg = torch::autograd::grad({(ty * tv).sum()}, {tx}, {}, c10::nullopt, true)[0];
    EXPECT_TRUE(Close(eg.detach(), tg.detach(), grad_tol(ember::kDouble, 1)));
    EXPECT_EQ(eg.grad_fn()->name(), tg.grad_fn()->name());
    EXPECT_EQ(eg.grad_fn()->name(), elu ? "EluBackwardBackward0" : "HardtanhBackwardBackward0");
    const auto eh = ember::autograd::grad({(eg * eg).sum()}, {x, v}, {}, std::nullopt, false, /*allow_unused=*/true);
    const auto th = torch::autograd::grad({(tg * tg).sum()}, {tx, tv}, {}, c10::nullopt, false, true);
    EXPECT_TRUE(Close(eh[0], th[0], grad_tol(ember::kDouble, 2)));
    EXPECT_TRUE(Close(eh[1], th[1], grad_tol(ember::kDouble, 2)));
  }
  using Fn = std::function<ember::Tensor(const ember::autograd::variable_list&)>;
  for (bool is_result : {false, true}) {
    const ember::Tensor r = is_result ? ember::elu(x.detach(), 1.5, 1.2, 0.7).requires_grad_() : x;
    const Fn fe = [is_result](const auto& in) { return ember::elu_backward(in[0], 1.5, 1.2, 0.7, is_result, in[1]); };
    EXPECT_TRUE(ember::autograd::gradcheck(fe, {v, r})) << is_result;
    EXPECT_TRUE(ember::autograd::gradgradcheck(fe, {v, r})) << is_result;
  }
  const Fn fh = [](const auto& in) { return ember::hardtanh_backward(in[0], in[1], -0.5, 0.7); };
  EXPECT_TRUE(ember::autograd::gradcheck(fh, {v, x}));
}

// log_sigmoid and its gradient (one kernel each way, as libtorch's) at large, infinite and NaN
// inputs; LogSigmoidBackwardBackward0 against libtorch's and by finite differences.
TEST(DerivativesParity, LogSigmoid) {
  const double nan = std::nan(""), inf = INFINITY;
  const std::vector<double> xs = {-1000, -100, -88, -87, -20, -1, -0.0, 0.0, 1e-8, 0.5, 3, 30, 87, 89, 500, 1e30,
                                  nan, inf, -inf, -1e-30, 2.5, -2.5, 17, -17};
  for (ember::ScalarType dt : {ember::kFloat, ember::kDouble, ember::kBFloat16}) {
    const ember::Tensor x = ember::tensor(xs).to(dt).view({4, 6}).t().requires_grad_();
    const torch::Tensor tx = to_torch(x.detach()).requires_grad_();
    const ember::Tensor y = ember::log_sigmoid(x);
    const torch::Tensor ty = torch::log_sigmoid(tx);
    EXPECT_TRUE(Close(y.detach().nan_to_num(7), ty.detach().nan_to_num(7))) << dt;
    const ember::Tensor g = parity::random({6, 4}, dt, 26);
    EXPECT_TRUE(Close(ember::autograd::grad({y}, {x}, {g})[0].nan_to_num(7),
                      torch::autograd::grad({ty}, {tx}, {to_torch(g)})[0].nan_to_num(7)))
        << dt;
  }
  const ember::Tensor x = (parity::random({3, 5}, ember::kDouble, 27) * 4).requires_grad_();
  const ember::Tensor v = parity::random({3, 5}, ember::kDouble, 28).requires_grad_();
  const torch::Tensor tx = to_torch(x.detach()).requires_grad_(), tv = to_torch(v.detach()).requires_grad_();
  const ember::Tensor eg = ember::autograd::grad({(ember::log_sigmoid(x) * v).sum()}, {x}, {}, std::nullopt, true)[0];
  const torch::Tensor tg = torch::autograd::grad({(torch::log_sigmoid(tx) * tv).sum()}, {tx}, {}, c10::nullopt, true)[0];
  EXPECT_TRUE(Close(eg.detach(), tg.detach(), grad_tol(ember::kDouble, 1)));
  EXPECT_EQ(eg.grad_fn()->name(), tg.grad_fn()->name());
  EXPECT_EQ(eg.grad_fn()->name(), "LogSigmoidBackwardBackward0");
  const auto eh = ember::autograd::grad({(eg * eg).sum()}, {x, v});
  const auto th = torch::autograd::grad({(tg * tg).sum()}, {tx, tv});
  EXPECT_TRUE(Close(eh[0], th[0], grad_tol(ember::kDouble, 2)));
  EXPECT_TRUE(Close(eh[1], th[1], grad_tol(ember::kDouble, 2)));
  const std::function<ember::Tensor(const ember::autograd::variable_list&)> f = [](const auto& in) {
    return ember::log_sigmoid(in[0]);
  };
  EXPECT_TRUE(ember::autograd::gradcheck(f, {x}));
  EXPECT_TRUE(ember::autograd::gradgradcheck(f, {x}));
}

// tanh's and sigmoid's gradients (one kernel each from the forward result, as libtorch's
// tanh_backward and sigmoid_backward) in every floating dtype, contiguous and transposed, over a
// length with a vector tail and at saturated, infinite and NaN inputs; with create_graph the
// gradient's node (TanhBackwardBackward0, SigmoidBackwardBackward0) and its own gradients against
// libtorch's, and gradgradcheck. libtorch 1.13 has no float16 tanh or sigmoid on the CPU: there
// its tanh_backward and sigmoid_backward of Ember's forward result and gradient in float32,
// rounded to float16, are the reference.
TEST(DerivativesParity, TanhAndSigmoidBackward) {
  const double nan = std::nan(""), inf = INFINITY;
  const std::vector<double> specials = {0.0, -0.0, 1e-30, 9, -9, 20, -20, 100, -100, nan, inf, -inf};
  for (ember::ScalarType dt : {ember::kFloat, ember::kDouble, ember::kBFloat16, ember::kHalf}) {
    ember::Tensor base = parity::random({37, 29}, dt, 31) * 3;  // 1073 elements
    base.view({-1}).narrow(0, 0, static_cast<int64_t>(specials.size())).copy_(ember::tensor(specials));
    for (bool transposed : {false, true}) {
      const ember::Tensor x = (transposed ? base.t() : base).detach().requires_grad_();
      const torch::Tensor tx = to_torch(x.detach()).requires_grad_();
      const ember::Tensor g = parity::random(x.sizes().vec(), dt, 32);
      for (bool tanh : {true, false}) {
        const ember::Tensor y = tanh ? x.tanh() : x.sigmoid();
        const ember::Tensor eg = ember::autograd::grad({y}, {x}, {g})[0].nan_to_num(7);
        torch::Tensor tg;
        if (dt == ember::kHalf) {
          const torch::Tensor ty = to_torch(y.detach()).to(torch::kFloat), tgo = to_torch(g).to(torch::kFloat);
          tg = (tanh ? torch::tanh_backward(tgo, ty) : torch::sigmoid_backward(tgo, ty)).to(torch::kHalf);
        } else {
          const torch::Tensor ty = tanh ? tx.tanh() : tx.sigmoid();
          tg = torch::autograd::grad({ty}, {tx}, {to_torch(g)})[0];
        }
        EXPECT_TRUE(Close(eg, tg.nan_to_num(7)))
            << dt << (tanh ? " tanh" : " sigmoid") << (transposed ? " transposed" : "");
      }
    }
  }
  const ember::Tensor x = (parity::random({3, 5}, ember::kDouble, 33) * 2).requires_grad_();
  const ember::Tensor v = parity::random({3, 5}, ember::kDouble, 34).requires_grad_();
  const torch::Tensor tx = to_torch(x.detach()).requires_grad_(), tv = to_torch(v.detach()).requires_grad_();
  for (bool tanh : {true, false}) {
    const ember::Tensor y = tanh ? x.tanh() : x.sigmoid();
    const torch::Tensor ty = tanh ? tx.tanh() : tx.sigmoid();
    const ember::Tensor eg = ember::autograd::grad({(y * v).sum()}, {x}, {}, std::nullopt, true)[0];
    const torch::Tensor tg = torch::autograd::grad({(ty * tv).sum()}, {tx}, {}, c10::nullopt, true)[0];
    EXPECT_TRUE(Close(eg.detach(), tg.detach(), grad_tol(ember::kDouble, 1)));
    EXPECT_EQ(eg.grad_fn()->name(), tg.grad_fn()->name());
    EXPECT_EQ(eg.grad_fn()->name(), tanh ? "TanhBackwardBackward0" : "SigmoidBackwardBackward0");
    const auto eh = ember::autograd::grad({(eg * eg).sum()}, {x, v});
    const auto th = torch::autograd::grad({(tg * tg).sum()}, {tx, tv});
    EXPECT_TRUE(Close(eh[0], th[0], grad_tol(ember::kDouble, 2)));
    EXPECT_TRUE(Close(eh[1], th[1], grad_tol(ember::kDouble, 2)));
    const std::function<ember::Tensor(const ember::autograd::variable_list&)> f = [tanh](const auto& in) {
      return tanh ? in[0].tanh() : in[0].sigmoid();
    };
    EXPECT_TRUE(ember::autograd::gradgradcheck(f, {x.detach().requires_grad_()}));
  }
}

TEST(DerivativesParity, LeakyReluBackward) {
  const double nan = std::nan(""), inf = INFINITY;
  const std::vector<double> xs = {-4, -0.0, 0.0, 1e-30, -1e-30, 2, nan, inf, -inf, 0.3, -2.2, 5, 7, -9, 1, -1};
  for (ember::ScalarType dt : {ember::kFloat, ember::kDouble, ember::kBFloat16}) {
    const ember::Tensor x = ember::tensor(xs).to(dt).view({4, 4}).t();  // a transposed input too
    const ember::Tensor g = parity::random({4, 4}, dt, 17);
    const torch::Tensor tx = to_torch(x), tg = to_torch(g);
    for (double slope : {0.01, -0.5, 2.0}) {
      EXPECT_TRUE(torch::equal(to_torch(ember::leaky_relu_backward(g, x, slope, false)).nan_to_num(7),
                               torch::leaky_relu_backward(tg, tx, slope, false).nan_to_num(7)))
          << dt << " " << slope;
    }
  }
  const ember::Tensor i = ember::arange(4);
  expect_error([&] { ember::leaky_relu_backward(i, i, 0.1, false); }, {"leaky_relu_backward", "not implemented for 'Long'"});
  const ember::Tensor f = ember::ones({3});
  expect_error([&] { ember::leaky_relu_backward(f, f, -0.1, true); }, {"leaky_relu_backward", "negative slope"});
  // the gradient of leaky_relu is this kernel; its own gradient, LeakyReluBackwardBackward0, as libtorch's
  const ember::Tensor x = (parity::random({3, 5}, ember::kDouble, 18) * 4).requires_grad_();
  const ember::Tensor v = parity::random({3, 5}, ember::kDouble, 19).requires_grad_();
  const torch::Tensor tx = to_torch(x.detach()).requires_grad_(), tv = to_torch(v.detach()).requires_grad_();
  const ember::Tensor eg = ember::autograd::grad({(ember::leaky_relu(x, 0.2) * v).sum()}, {x}, {}, std::nullopt, true)[0];
  const torch::Tensor tg = torch::autograd::grad({(torch::leaky_relu(tx, 0.2) * tv).sum()}, {tx}, {}, c10::nullopt, true)[0];
  EXPECT_TRUE(Close(eg.detach(), tg.detach(), grad_tol(ember::kDouble, 1)));
  EXPECT_EQ(eg.grad_fn()->name(), tg.grad_fn()->name());
  EXPECT_EQ(eg.grad_fn()->name(), "LeakyReluBackwardBackward0");
  const ember::Tensor ev = ember::autograd::grad({(eg * eg).sum()}, {v})[0];
  const torch::Tensor tvg = torch::autograd::grad({(tg * tg).sum()}, {tv})[0];
  EXPECT_TRUE(Close(ev, tvg, grad_tol(ember::kDouble, 2)));
  const std::function<ember::Tensor(const ember::autograd::variable_list&)> f2 = [](const auto& in) {
    return ember::leaky_relu_backward(in[0], in[1], 0.3, false);
  };
  EXPECT_TRUE(ember::autograd::gradcheck(f2, {v, x}));
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
