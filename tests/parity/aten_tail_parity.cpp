// libtorch's remaining ATen functions (issue 26) against libtorch: each row's expression is
// written once and compiled against both libraries (free functions found by argument-dependent
// lookup, so `acos(v[0])` is ember::acos on one side and at::acos on the other).
// Differentiable rows compare values and gradients in float32 and float64 on contiguous,
// transposed and strided leaves; the other rows compare values, including on empty tensors.
//
// Tolerance: these ops are compositions of a few Ember ops, each rounding once, where libtorch
// has one kernel: float32 allows 1e-4 relative (double 1e-12) plus K terms' absolute error.
#include "parity/aten_rows.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using parity::Close;
using parity::to_torch;

namespace {

using grad_cases::Case;
using grad_cases::Domain;
using grad_cases::Input;
using grad_cases::Layout;
using aten_rows::E;
using aten_rows::FwdCase;
using aten_rows::lv;
using aten_rows::run_all;
using aten_rows::T;
const Domain P = Domain::Positive, U = Domain::Unit, A = Domain::Any;
const Layout Tr = Layout::Transposed, St = Layout::Strided;


// A fixed index tensor, the same values in either library.
ember::Tensor torch_like_long(const ember::Tensor&, std::vector<int64_t> v) {
  return ember::tensor(v, ember::kLong);
}
torch::Tensor torch_like_long(const torch::Tensor&, std::vector<int64_t> v) { return torch::tensor(v, torch::kLong); }

std::vector<Case> unary_cases() {
  return {
      ROW("acos", IN({{3, 4}, U, Tr}), 1, acos(v[0])),
      ROW("arccos", IN({{5}, U}), 1, arccos(v[0])),
      ROW("asin", IN({{5}, U, St}), 1, asin(v[0])),
      ROW("arcsin", IN({{5}, U}), 1, v[0].arcsin()),
      ROW("atan", IN({{3, 4}, A, Tr}), 1, atan(v[0])),
      ROW("arctan", IN({{5}}), 1, v[0].arctan()),
      ROW("acosh", IN({{5}, P}), 1, acosh(v[0] + 1)),
      ROW("arccosh", IN({{5}, P}), 1, v[0].add(1).arccosh()),
      ROW("asinh", IN({{5}, A, St}), 1, asinh(v[0])),
      ROW("arcsinh", IN({{5}}), 1, v[0].arcsinh()),
      ROW("atanh", IN({{5}, U}), 1, atanh(v[0])),
      ROW("arctanh", IN({{5}, U}), 1, v[0].arctanh()),
      ROW("sinh", IN({{3, 4}, A, Tr}), 1, sinh(v[0])),
      ROW("cosh", IN({{5}}), 1, v[0].cosh()),
      ROW("frac", IN({{5}}), 1, frac(v[0] * 3)),
      ROW("deg2rad", IN({{5}}), 1, deg2rad(v[0])),
      ROW("rad2deg", IN({{5}}), 1, v[0].rad2deg()),
      ROW("sinc", IN({{3, 4}, A, Tr}), 1, sinc(v[0])),
      ROW("fix", IN({{5}}), 1, fix(v[0] * 3)),
      ROW("absolute", IN({{5}}), 1, absolute(v[0])),
      ROW("negative", IN({{5}}), 1, negative(v[0])),
      ROW("positive", IN({{5}}), 1, positive(v[0]) * 2),
      ROW("logit", IN({{5}, P}), 1, logit(v[0] * 0.4)),
      ROW("logit eps", IN({{5}, P}), 1, v[0].mul(0.45).logit(0.2)),
      ROW("clip", IN({{9}}), 1, clip(v[0], -0.5, 0.5)),
      ROW("relu6", IN({{9}}), 1, relu6(v[0] * 5)),
      ROW("acos_", IN({{5}, U}), 1, acos_(lv(v[0].clone()))),
      ROW("sinh_", IN({{5}}), 1, v[0].clone().sinh_()),
      ROW("logit_", IN({{5}, P}), 1, v[0].mul(0.4).logit_()),
      ROW("gelu_", IN({{7}}), 1, gelu_(lv(v[0].clone()))),
      ROW("leaky_relu_", IN({{7}}), 1, leaky_relu_(lv(v[0].clone()), 0.2)),
      ROW("elu_", IN({{7}}), 1, elu_(lv(v[0].clone()))),
      ROW("nan_to_num_", IN({{7}}), 1, v[0].clone().nan_to_num_()),
  };
}

std::vector<Case> binary_cases() {
  return {
      ROW("arctan2", IN({{2, 3}}, {{3}}), 2, arctan2(v[0], v[1])),
      ROW("arctan2_", IN({{2, 3}}, {{2, 3}}), 1, v[0].clone().arctan2_(v[1])),
      ROW("hypot", IN({{3, 4}, A, Tr}, {{4}}), 3, hypot(v[0], v[1])),
      ROW("copysign", IN({{2, 3}}, {{3}, A, Layout::Contiguous, false}), 2, copysign(v[0], v[1])),
      ROW("copysign scalar", IN({{5}}), 1, copysign(v[0], -1.0)),
      ROW("ldexp", IN({{5}}), 1, ldexp(v[0], v[0].detach().mul(3).round())),
      ROW("logaddexp", IN({{2, 3}}, {{3}}), 2, logaddexp(v[0], v[1])),
      ROW("logaddexp2", IN({{2, 3}}, {{2, 3}, A, Tr}), 1, v[0].logaddexp2(v[1])),
      ROW("fmax", IN({{2, 3}}, {{2, 3}}), 1, fmax(v[0], v[1])),
      // ties: the gradient goes to self alone
      ROW("fmax tie", IN({{2, 3}}, {{2, 3}}), 2, fmax(v[0], v[1] * 0 + v[0].detach())),
      ROW("fmin tie", IN({{2, 3}}, {{2, 3}}), 2, fmin(v[0], v[1] * 0 + v[0].detach())),
      ROW("fmin", IN({{2, 3}}, {{2, 3}}), 1, v[0].fmin(v[1])),
      ROW("xlogy", IN({{2, 3}}, {{3}, P}), 2, xlogy(v[0], v[1])),
      ROW("xlogy scalar other", IN({{5}}), 1, xlogy(v[0], 2.5)),
      ROW("xlogy scalar self", IN({{5}, P}), 1, xlogy(1.5, v[0])),
      ROW("float_power", IN({{5}, P}, {{5}}), 1, float_power(v[0], v[1]).to(v[0].scalar_type())),
      ROW("float_power scalar", IN({{5}, P}), 1, v[0].float_power(1.7).to(v[0].scalar_type())),
      ROW("multiply", IN({{2, 3}}, {{3}}), 2, multiply(v[0], v[1])),
      ROW("divide", IN({{2, 3}}, {{3}, P}), 2, divide(v[0], v[1])),
      ROW("true_divide", IN({{2, 3}}, {{3}, P}), 2, true_divide(v[0], v[1])),
      ROW("subtract", IN({{2, 3}}, {{3}}), 2, subtract(v[0], v[1], 2)),
      ROW("dist", IN({{3, 4}}, {{4}}), 12, dist(v[0], v[1])),
      ROW("dist p3", IN({{3, 4}}, {{3, 4}}), 12, v[0].dist(v[1], 3)),
  };
}

std::vector<Case> shape_cases() {
  return {
      ROW("hstack", IN({{2, 3}}, {{2, 2}}), 1, ns::hstack({v[0], v[1]})),
      ROW("vstack", IN({{3}}, {{2, 3}}), 1, ns::vstack({v[0], v[1]})),
      ROW("row_stack", IN({{3}}, {{3}}), 1, ns::row_stack({v[0], v[1]})),
      ROW("dstack", IN({{2, 3}}, {{2, 3}, A, Tr}), 1, ns::dstack({v[0], v[1]})),
      ROW("column_stack", IN({{3}}, {{3, 2}}), 1, ns::column_stack({v[0], v[1]})),
      ROW("concat", IN({{2, 3}}, {{1, 3}}), 1, ns::concat({v[0], v[1]})),
      ROW("concatenate", IN({{2, 3}}, {{2, 1}}), 1, ns::concatenate({v[0], v[1]}, 1)),
      ROW("atleast_3d", IN({{3, 4}}), 1, atleast_3d(v[0])),
      ROW("tensor_split", IN({{7, 2}}), 1, tensor_split(v[0], 3)[1]),
      ROW("tensor_split indices", IN({{7, 2}}), 1, tensor_split(v[0], {1, 5}, 0)[1]),
      ROW("hsplit", IN({{2, 6}}), 1, hsplit(v[0], 3)[2]),
      ROW("vsplit", IN({{4, 3}}), 1, v[0].vsplit({1, 3})[1]),
      ROW("dsplit", IN({{1, 2, 4}}), 1, dsplit(v[0], 2)[0]),
      ROW("tile", IN({{2, 3}, A, Tr}), 2, tile(v[0], {2, 1, 2})),
      ROW("rot90", IN({{2, 3}}), 1, rot90(v[0])),
      ROW("rot90 k=3", IN({{2, 3, 4}}), 1, v[0].rot90(3, {2, 0})),
      ROW("rot90 k=-2", IN({{2, 3}}), 1, rot90(v[0], -2)),
      ROW("fliplr", IN({{2, 3}}), 1, fliplr(v[0])),
      ROW("flipud", IN({{2, 3}, A, St}), 1, v[0].flipud()),
      ROW("swapaxes", IN({{2, 3, 4}}), 1, swapaxes(v[0], 0, 2)),
      ROW("swapdims", IN({{2, 3, 4}}), 1, v[0].swapdims(1, 2)),
      ROW("moveaxis", IN({{2, 3, 4}}), 1, moveaxis(v[0], 0, -1)),
      ROW("ravel", IN({{2, 3}, A, Tr}), 1, ravel(v[0])),
      ROW("msort", IN({{4, 3}}), 1, msort(v[0])),
      ROW("diag vector", IN({{3}}), 1, diag(v[0])),
      ROW("diag vector offset", IN({{3}}), 1, diag(v[0], -2)),
      ROW("diag matrix", IN({{3, 4}, A, Tr}), 1, v[0].diag(1)),
      ROW("diagflat", IN({{2, 2}}), 1, diagflat(v[0], 1)),
      ROW("diag_embed", IN({{2, 3}}), 1, diag_embed(v[0])),
      ROW("diag_embed dims", IN({{2, 3}}), 1, v[0].diag_embed(-1, 0, 2)),
      ROW("block_diag", IN({{2, 3}}, {{1}}, {{2, 2}}), 1, ns::block_diag({v[0], v[1], v[2]})),
      ROW("cartesian_prod", IN({{3}}, {{2}}), 3, ns::cartesian_prod({v[0], v[1]})),
      ROW("meshgrid ij", IN({{3}}, {{2}}), 2, ns::meshgrid({v[0], v[1]}, "ij")[1]),
      ROW("meshgrid xy", IN({{3}}, {{2}}, {{4}}), 8, ns::meshgrid({v[0], v[1], v[2]}, "xy")[0]),
      ROW("kron", IN({{2, 3}}, {{2, 2}}), 4, kron(v[0], v[1])),
      ROW("kron mixed dims", IN({{3}}, {{2, 2}}), 3, v[0].kron(v[1])),
      ROW("trace", IN({{3, 4}, A, Tr}), 3, trace(v[0])),
      ROW("take", IN({{3, 4}}), 1, take(v[0], torch_like_long(v[0], {0, 5, -1, 5}))),
      ROW("take_along_dim", IN({{3, 4}}), 2, take_along_dim(v[0], std::get<1>(v[0].sort(1)), 1)),
      ROW("take_along_dim flat", IN({{3, 4}}), 1, v[0].take_along_dim(std::get<1>(v[0].reshape({-1}).sort(0)))),
      ROW("index_fill", IN({{3, 4}}), 1, index_fill(v[0], 1, torch_like_long(v[0], {0, 2}), -1.5)),
      ROW("index_copy", IN({{3, 4}}, {{3, 2}}), 1, index_copy(v[0], 1, torch_like_long(v[0], {3, 0}), v[1])),
      ROW("masked_scatter", IN({{3, 4}}, {{12}}), 1, masked_scatter(v[0], v[0].detach() > 0, v[1])),
      ROW("select_scatter", IN({{3, 4}}, {{3}}), 1, select_scatter(v[0], v[1], 1, -1)),
      ROW("slice_scatter", IN({{5, 4}}, {{2, 4}}), 1, slice_scatter(v[0], v[1], 0, 1, 5, 2)),
      ROW("diagonal_scatter", IN({{3, 4}}, {{3}}), 1, diagonal_scatter(v[0], v[1], 1)),
      ROW("diagonal_scatter dims", IN({{2, 3, 3}}, {{3, 2}}), 1, v[0].diagonal_scatter(v[1], -1, 1, 0)),
      ROW("repeat_interleave", IN({{2, 3}}), 3, repeat_interleave(v[0], 3)),
      ROW("repeat_interleave dim", IN({{2, 3}}), 2, v[0].repeat_interleave(2, 1)),
      ROW("diagonal_copy", IN({{3, 4}}), 1, diagonal_copy(v[0], 1)),
      ROW("permute_copy", IN({{2, 3, 4}}), 1, permute_copy(v[0], {2, 0, 1})),
      ROW("transpose_copy", IN({{2, 3}}), 1, transpose_copy(v[0], 0, 1)),
      ROW("expand_copy", IN({{3, 1}}), 4, expand_copy(v[0], {3, 4})),
      ROW("unfold_copy", IN({{7}}), 2, unfold_copy(v[0], 0, 3, 2)),
  };
}

std::vector<Case> reduction_cases() {
  return {
      ROW("nansum", IN({{3, 4}}), 4, nansum(v[0])),
      ROW("nansum dim", IN({{3, 4}, A, Tr}), 1, v[0].nansum({1}, true)),
      ROW("nanmean", IN({{3, 4}}), 4, nanmean(v[0], {0})),
      ROW("median", IN({{3, 4}}), 1, median(v[0])),
      ROW("median dim", IN({{3, 5}, A, Tr}), 1, std::get<0>(median(v[0], 1))),
      ROW("median even", IN({{3, 4}}), 1, std::get<0>(v[0].median(1, true))),
      ROW("quantile", IN({{3, 5}}), 2, quantile(v[0], 0.3)),
      ROW("quantile dim", IN({{3, 5}, A, Tr}), 2, v[0].quantile(0.75, 1, true)),
      ROW("quantile midpoint", IN({{4, 3}}), 2, quantile(v[0], 0.5, 0, false, "midpoint")),
      ROW("logcumsumexp", IN({{3, 4}, A, Tr}), 4, logcumsumexp(v[0], 1)),
      ROW("logcumsumexp dim0", IN({{5}}), 5, v[0].logcumsumexp(0)),
      // values hundreds apart (the running log-sum-exp, where exp(x - max) underflows)
      ROW("logcumsumexp wide", IN({{3, 6}, A, Tr}), 6, logcumsumexp(v[0] * 400, 1)),
      ROW("diff", IN({{3, 5}}), 2, diff(v[0])),
      ROW("diff n=2 prepend", IN({{3, 5}}, {{1, 5}}), 4, v[0].diff(2, 0, v[1])),
      ROW("trapezoid", IN({{3, 5}}), 2, trapezoid(v[0])),
      ROW("trapezoid dx", IN({{3, 5}}), 2, trapezoid(v[0], 0.5, 0)),
      ROW("trapezoid x", IN({{3, 5}}, {{5}}), 4, trapezoid(v[0], v[1])),
      ROW("trapz", IN({{3, 5}}), 2, trapz(v[0], 2.0)),
      ROW("cumulative_trapezoid", IN({{3, 5}}), 6, cumulative_trapezoid(v[0])),
      ROW("cumulative_trapezoid x", IN({{3, 5}}, {{3, 5}}), 6, cumulative_trapezoid(v[0], v[1], 1)),
      ROW("renorm", IN({{3, 4}}), 4, renorm(v[0], 2, 0, 1.0)),
      ROW("renorm p1", IN({{3, 4}, A, Tr}), 4, v[0].renorm(1, 1, 1.5)),
  };
}

// ---- forward-only rows: integer-valued, boolean and empty results ----
using S = std::vector<std::vector<int64_t>>;

std::vector<FwdCase> forward_cases() {
  using ember::kDouble;
  using ember::kFloat;
  using ember::kLong;
  return {
      FWD("acos int", (S{{5}}), kLong, acos(v[0])),
      FWD("sinh empty", (S{{0, 3}}), kFloat, sinh(v[0])),
      FWD("sinc zero", (S{{5}}), kFloat, sinc(v[0] * 0)),
      FWD("deg2rad int", (S{{5}}), kLong, deg2rad(v[0])),
      FWD("signbit", (S{{7}}), kFloat, signbit(v[0])),
      FWD("signbit negative zero", (S{{3}}), kFloat, signbit(v[0] * 0 - 0.0)),
      FWD("signbit int", (S{{7}}), kLong, v[0].signbit()),
      FWD("sgn", (S{{7}}), kFloat, sgn(v[0])),  // libtorch's gradient is a data-less ZeroTensor
      FWD("sgn int", (S{{7}}), kLong, sgn(v[0])),
      FWD("greater", (S{{3, 4}, {4}}), kFloat, greater(v[0], v[1])),
      FWD("greater_equal", (S{{3, 4}}), kFloat, greater_equal(v[0], 0.5)),
      FWD("less", (S{{3, 4}, {4}}), kLong, v[0].less(v[1])),
      FWD("less_equal", (S{{3, 4}}), kLong, less_equal(v[0], 0)),
      FWD("not_equal", (S{{3, 4}, {3, 4}}), kLong, not_equal(v[0], v[1])),
      FWD("eq_", (S{{3, 4}, {4}}), kFloat, v[0].clone().eq_(v[1])),
      FWD("ge_ scalar", (S{{3, 4}}), kLong, v[0].clone().ge_(0)),
      FWD("greater_ scalar", (S{{3, 4}}), kFloat, v[0].clone().greater_(0.25)),
      FWD("logical_and_", (S{{3, 4}, {3, 4}}), kLong, v[0].clone().logical_and_(v[1])),
      FWD("bitwise_xor_", (S{{3, 4}, {4}}), kLong, v[0].clone().bitwise_xor_(v[1])),
      FWD("bitwise_not_", (S{{3, 4}}), kLong, v[0].clone().bitwise_not_()),
      FWD("cumsum_", (S{{3, 4}}), kLong, v[0].clone().cumsum_(1)),
      FWD("heaviside", (S{{7}, {7}}), kFloat, heaviside(v[0].round(), v[1])),
      FWD("copysign int", (S{{7}, {7}}), kLong, copysign(v[0], v[1])),
      FWD("copysign bfloat16", (S{{7}, {7}}), ember::kBFloat16, copysign(v[0], v[1])),
      FWD("atanh bfloat16", (S{{64}}), ember::kBFloat16, atanh(v[0] * 0.45)),
      FWD("asinh bfloat16", (S{{64}}), ember::kBFloat16, asinh(v[0] * 3)),
      FWD("logaddexp inf", (S{{3}}), kFloat, logaddexp(v[0] * 0 - INFINITY, v[0] * 0 - INFINITY)),
      FWD("fmax nan", (S{{4}, {4}}), kFloat, fmax(v[0].log(), v[1])),
      FWD("xlogy zero", (S{{4}}), kFloat, xlogy(v[0] * 0, v[0])),
      FWD("float_power int", (S{{4}, {4}}), kLong, float_power(v[0], v[1].abs())),
      FWD("clamp_", (S{{3, 4}}), kFloat, clamp_(lv(v[0].clone()), -0.5, 0.5)),
      FWD("clamp_min_", (S{{3, 4}}), kFloat, clamp_min_(lv(v[0].clone()), 0.1)),
      FWD("clip_", (S{{3, 4}}), kLong, v[0].clone().clip_(-1, 0)),
      FWD("relu6_", (S{{3, 4}}), kFloat, relu6_(lv(v[0].mul(5)))),
      FWD("fill_", (S{{3, 4}}), kFloat, fill_(lv(v[0].clone()), 2.5)),
      FWD("zero_", (S{{3, 4}}), kLong, zero_(lv(v[0].clone()))),
      FWD("clone", (S{{3, 4}}), kFloat, clone(v[0].t())),
      FWD("detach", (S{{3, 4}}), kFloat, detach(v[0])),
      FWD("atleast_1d", (S{{}}), kFloat, atleast_1d(v[0])),
      FWD("atleast_2d", (S{{3}}), kFloat, atleast_2d(v[0])),
      FWD("atleast_3d scalar", (S{{}}), kFloat, atleast_3d(v[0])),
      FWD("hstack 1-D", (S{{3}, {2}}), kLong, ns::hstack({v[0], v[1]})),
      FWD("tensor_split empty", (S{{0, 3}}), kFloat, tensor_split(v[0], 2)[1]),
      FWD("tensor_split uneven", (S{{2, 5}}), kFloat, tensor_split(v[0], 3, 1)[2]),
      FWD("tensor_split negative index", (S{{6}}), kFloat, tensor_split(v[0], {2, -1})[1]),
      FWD("unsafe_chunk", (S{{6, 2}}), kFloat, unsafe_chunk(v[0], 4)[1]),
      FWD("unsafe_split", (S{{6, 2}}), kFloat, unsafe_split(v[0], 4)[1]),
      FWD("tile empty", (S{{0, 3}}), kFloat, tile(v[0], {2})),
      FWD("diag int", (S{{3}}), kLong, diag(v[0], 1)),
      FWD("diag empty", (S{{0}}), kFloat, diag(v[0])),
      FWD("trace int", (S{{3, 3}}), kLong, trace(v[0])),
      FWD("tril_indices", (S{}), kLong, ns::tril_indices(4, 3, 1)),
      FWD("triu_indices", (S{}), kLong, ns::triu_indices(3, 5, -1)),
      FWD("triu_indices empty", (S{}), kLong, ns::triu_indices(0, 5)),
      FWD("take empty", (S{{3}}), kFloat, take(v[0], torch_like_long(v[0], {}))),
      FWD("block_diag int", (S{{2, 2}, {}}), kLong, ns::block_diag({v[0], v[1]})),
      FWD("meshgrid default", (S{{3}, {2}}), kLong, ns::meshgrid({v[0], v[1]})[0]),
      FWD("kron empty", (S{{0, 2}, {2, 2}}), kFloat, kron(v[0], v[1])),
      FWD("isin", (S{{3, 4}, {3}}), kLong, isin(v[0], v[1])),
      FWD("isin invert", (S{{3, 4}, {3}}), kLong, isin(v[0], v[1], false, true)),
      FWD("isin scalar", (S{{3, 4}}), kLong, isin(v[0], 1)),
      FWD("isposinf", (S{{5}}), kFloat, isposinf(v[0].reciprocal() * v[0].abs().lt(0.3))),
      FWD("isneginf", (S{{5}}), kFloat, isneginf(v[0].log())),
      FWD("isreal", (S{{5}}), kFloat, isreal(v[0])),
      FWD("count_nonzero", (S{{3, 4}}), kLong, count_nonzero(v[0])),
      FWD("count_nonzero dims", (S{{2, 3, 4}}), kFloat, count_nonzero(v[0], {0, 2})),
      FWD("nansum nan", (S{{3, 4}}), kFloat, nansum(v[0].log(), {1})),
      FWD("nansum int", (S{{3, 4}}), kLong, nansum(v[0])),
      FWD("nanmean nan", (S{{3, 4}}), kDouble, nanmean(v[0].log(), {1}, true)),
      FWD("nanmean empty", (S{{0, 4}}), kFloat, nanmean(v[0], {0})),
      FWD("median int", (S{{3, 5}}), kLong, median(v[0])),
      FWD("median empty", (S{{0}}), kFloat, median(v[0])),
      FWD("median indices", (S{{3, 5}}), kDouble, std::get<1>(median(v[0], 1))),
      FWD("narrow_copy", (S{{5, 2}}), kFloat, narrow_copy(v[0], 0, 1, 3)),
      FWD("aminmax", (S{{3, 4}}), kFloat, std::get<1>(aminmax(v[0], 1))),
      FWD("aminmax min", (S{{3, 4}}), kLong, std::get<0>(aminmax(v[0]))),
      FWD("aminmax keepdim", (S{{3, 4}}), kFloat, std::get<1>(v[0].aminmax({}, true))),
      FWD("quantile nan", (S{{3, 4}}), kFloat, quantile(v[0].log(), 0.5, 1)),
      FWD("quantile lower", (S{{3, 4}}), kDouble, quantile(v[0], 0.4, 1, true, "lower")),
      FWD("quantile higher", (S{{3, 4}}), kDouble, quantile(v[0], 0.4, 0, false, "higher")),
      FWD("quantile nearest", (S{{3, 5}}), kDouble, quantile(v[0], 0.375, 1, false, "nearest")),
      FWD("logcumsumexp empty", (S{{0, 3}}), kFloat, logcumsumexp(v[0], 0)),
      FWD("diff bool", (S{{3, 4}}), ember::kBool, diff(v[0])),
      FWD("diff int append", (S{{3, 4}, {3, 2}}), kLong, diff(v[0], 1, 1, {}, v[1])),
      FWD("trapezoid int", (S{{3, 4}}), kLong, trapezoid(v[0])),
      FWD("trapezoid empty", (S{{3, 0}}), kFloat, trapezoid(v[0])),
      FWD("repeat_interleave empty", (S{{0, 2}}), kFloat, repeat_interleave(v[0], 2, 0)),
      FWD("index_fill 0-d index", (S{{3, 4}}), kLong, v[0].index_fill(0, torch_like_long(v[0], {1}).reshape({}), 7)),
      FWD("index_copy_", (S{{3, 4}, {2, 4}}), kLong, v[0].clone().index_copy_(0, torch_like_long(v[0], {2, 0}), v[1])),
      FWD("masked_scatter_", (S{{3, 4}, {12}}), kFloat, v[0].clone().masked_scatter_(v[0] > 0, v[1])),
      FWD("masked_scatter broadcast mask", (S{{3, 4}, {12}}), kFloat, masked_scatter(v[0], v[0][0] > 0, v[1])),
      FWD("logspace", (S{}), kFloat, ns::logspace(-1, 2, 7)),
      FWD("logspace base 2", (S{}), kFloat, ns::logspace(0, 3, 4, 2.0)),
      FWD("range", (S{}), kFloat, ns::range(0, 2, 0.5)),
      FWD("range default step", (S{}), kFloat, ns::range(-1, 3, 1)),
      FWD("hann_window", (S{}), kFloat, ns::hann_window(8)),
      FWD("hann_window symmetric", (S{}), kFloat, ns::hann_window(7, false)),
      FWD("hamming_window", (S{}), kFloat, ns::hamming_window(9)),
      FWD("hamming_window alpha beta", (S{}), kFloat, ns::hamming_window(6, false, 0.5, 0.4)),
      FWD("bartlett_window", (S{}), kFloat, ns::bartlett_window(7)),
      FWD("bartlett_window symmetric", (S{}), kFloat, ns::bartlett_window(6, false)),
      FWD("blackman_window", (S{}), kFloat, ns::blackman_window(10)),
      FWD("blackman_window one", (S{}), kFloat, ns::blackman_window(1)),
      FWD("new_zeros", (S{{3}}), kLong, v[0].new_zeros({2, 2})),
      FWD("new_full", (S{{3}}), kFloat, v[0].new_full({2}, 1.5)),
      FWD("new_ones", (S{{3}}), kFloat, v[0].new_ones({2})),
  };
}

TEST(AtenTailParity, UnaryMath) { run_all(unary_cases(), 100); }
TEST(AtenTailParity, BinaryMath) { run_all(binary_cases(), 200); }
TEST(AtenTailParity, ShapeAndIndexing) { run_all(shape_cases(), 300); }
TEST(AtenTailParity, Reductions) { run_all(reduction_cases(), 400); }
TEST(AtenTailParity, ForwardOnly) {
  uint64_t seed = 500;
  for (const FwdCase& c : forward_cases()) aten_rows::run_forward(c, seed += 10, 1e-12);
}

// fmax, fmin and hypot are kernels: every pair of special and extreme values (hypot's squares
// overflow float32 from 2e19: libtorch's hypot does not), in every floating dtype bit for bit,
// fmax/fmin of integers, and the gradients' nodes named as libtorch's.
TEST(AtenTailParity, FmaxFminHypotKernels) {
  const double inf = INFINITY, nan = NAN;
  const std::vector<double> v = {-inf, -3e38, -1e20, -2.5, -1.0, -0.0, 0.0, 1e-40, 0.5, 3.0, 1e20, 3e38, inf, nan};
  for (ember::ScalarType dt : {ember::kFloat, ember::kDouble, ember::kHalf, ember::kBFloat16}) {
    SCOPED_TRACE(testing::Message() << dt);
    const ember::Tensor all = ember::tensor(v, ember::kDouble).to(dt);
    const ember::Tensor a = all.view({-1, 1}), b = all.view({1, -1});
    const torch::Tensor ta = to_torch(a), tb = to_torch(b);
    EXPECT_TRUE(Close(ember::fmax(a, b), torch::fmax(ta, tb), parity::Tol{0, 0}));
    EXPECT_TRUE(Close(ember::fmin(a, b), torch::fmin(ta, tb), parity::Tol{0, 0}));
    // (libtorch 1.13 has no float16 hypot on the CPU: Ember's is float32's rounded once)
    const torch::Tensor want = dt == ember::kHalf
                                   ? torch::hypot(ta.to(torch::kFloat), tb.to(torch::kFloat)).to(torch::kHalf)
                                   : torch::hypot(ta, tb);
    EXPECT_TRUE(Close(ember::hypot(a, b), want, parity::Tol{0, 0}));
    const ember::Tensor column_major = a.expand({-1, b.size(1)}).t().contiguous().t();  // strides (1, 14)
    EXPECT_TRUE(Close(ember::hypot(column_major, b), want, parity::Tol{0, 0}));
  }
  for (ember::ScalarType dt : {ember::kInt, ember::kLong, ember::kUInt8, ember::kBool}) {
    const ember::Tensor a = ember::randint(0, 5, {6, 1}).to(dt), b = ember::randint(0, 5, {1, 7}).to(dt);
    EXPECT_TRUE(Close(ember::fmax(a, b), torch::fmax(to_torch(a), to_torch(b)), parity::Tol{0, 0}));
    EXPECT_TRUE(Close(ember::fmin(a, b), torch::fmin(to_torch(a), to_torch(b)), parity::Tol{0, 0}));
  }
  const ember::Tensor x = ember::randn({5}).requires_grad_(), y = ember::randn({5}).requires_grad_();
  const torch::Tensor tx = to_torch(x.detach()).requires_grad_(), ty = to_torch(y.detach()).requires_grad_();
  EXPECT_EQ(ember::fmax(x, y).grad_fn()->name(), torch::fmax(tx, ty).grad_fn()->name());
  EXPECT_EQ(ember::fmin(x, y).grad_fn()->name(), torch::fmin(tx, ty).grad_fn()->name());
  EXPECT_EQ(ember::hypot(x, y).grad_fn()->name(), torch::hypot(tx, ty).grad_fn()->name());
}

// Scans along an outer dim (the row below is the running value of the rows above, a vectorized
// loop over contiguous rows): every arithmetic dtype and bfloat16, integer sums and products that
// wrap, float sums accumulated in float64 as libtorch's; rows of a matrix and the middle dim of a
// 3-D tensor.
TEST(AtenTailParity, ScansAlongAnOuterDim) {
  for (ember::ScalarType dt :
       {ember::kUInt8, ember::kInt8, ember::kInt, ember::kLong, ember::kFloat, ember::kDouble, ember::kBFloat16}) {
    SCOPED_TRACE(testing::Message() << dt);
    const bool integral = !ember::is_floating_type(dt);
    const ember::Tensor m =
        (integral ? ember::randint(-100, 100, {37, 70}) * 9999991 : ember::randn({37, 70}) * 1e3).to(dt);
    const ember::Tensor t = (integral ? ember::randint(-5, 6, {3, 9, 33}) : ember::randn({3, 9, 33})).to(dt);
    for (const auto& [x, dim] : {std::pair{m, 0}, std::pair{t, 1}}) {
      EXPECT_TRUE(Close(x.cumsum(dim), to_torch(x).cumsum(dim), parity::Tol{0, 0}));
      EXPECT_TRUE(
          Close(x.cumprod(dim), to_torch(x).cumprod(dim), integral ? parity::Tol{0, 0} : parity::Tol{1e-12, 0}));
    }
  }
}

// 16-bit float scans over long lines, read and written through float32 tiles of 16 lines x 128
// positions (the running values carried from tile to tile): the input's lines contiguous along
// themselves or across one another (a transpose), the contiguous result either way, lengths around the 512 where whole lines stop
// fitting a tile, line counts with a rest after the groups of 4 and of 16.
TEST(AtenTailParity, HalfScansOverLongLines) {
  for (ember::ScalarType dt : {ember::kHalf, ember::kBFloat16}) {
    for (int64_t len : {int64_t{512}, int64_t{513}, int64_t{700}}) {
      for (int64_t lines : {int64_t{3}, int64_t{37}}) {
        SCOPED_TRACE(testing::Message() << dt << " " << lines << " lines of " << len);
        const ember::Tensor rows = (ember::rand({lines, len}) + 0.5).to(dt);
        const ember::Tensor cols = (ember::rand({len, lines}) + 0.5).to(dt);
        for (const auto& [x, dim] :
             {std::pair{rows, 1}, std::pair{cols, 0}, std::pair{cols.t(), 1}, std::pair{rows.t(), 0}}) {
          // Ember's running value is a double rounded to float32, then to the dtype (libtorch 1.13
          // has no float16 scans; its bfloat16 ones run in float32): the reference is libtorch's
          // double scan rounded the same way
          const torch::Tensor ref = to_torch(x).to(torch::kDouble);
          const auto round = [&](const torch::Tensor& r) { return r.to(torch::kFloat).to(to_torch(x).scalar_type()); };
          EXPECT_TRUE(Close(x.cumsum(dim), round(ref.cumsum(dim)), parity::Tol{0, 0}));
          EXPECT_TRUE(Close(x.cumprod(dim), round(ref.cumprod(dim)), parity::Tol{0, 0}));
        }
      }
    }
  }
}

// logcumsumexp over values within a few units (log(cumsum(exp(x - max))) + max) and hundreds or
// thousands apart, with NaN (spoiling only the positions from it on), +inf, -inf leading a line
// and a line of -inf only: the values, and the gradient where every value is finite.
TEST(AtenTailParity, LogcumsumexpOverWideRangesAndSpecialValues) {
  for (ember::ScalarType dt : {ember::kFloat, ember::kDouble, ember::kBFloat16}) {
    for (double scale : {3.0, 300.0, 3000.0}) {
      SCOPED_TRACE(testing::Message() << dt << " scale " << scale);
      ember::manual_seed(static_cast<uint64_t>(scale));
      ember::Tensor x = (ember::randn({6, 40}, ember::kDouble) * scale).to(dt);
      const ember::Tensor t = x.t();
      for (const auto& [in, dim] : {std::pair{x, 1}, std::pair{x, 0}, std::pair{t, 0}, std::pair{x[2], 0}}) {
        EXPECT_TRUE(Close(ember::logcumsumexp(in, dim), torch::logcumsumexp(to_torch(in), dim)));
      }
      // (no bfloat16 gradient: PyTorch's formula reads the result rounded to bfloat16, whose
      // error, exponentiated, is the gradient's: a few percent at values near 10, more beyond)
      if (dt != ember::kBFloat16) {
        const ember::Tensor leaf = x.detach().requires_grad_(true), w = ember::randn({6, 40}).to(dt);
        const torch::Tensor tleaf = to_torch(x).detach().requires_grad_(true);
        (ember::logcumsumexp(leaf, 1) * w).sum().backward();
        (torch::logcumsumexp(tleaf, 1) * to_torch(w)).sum().backward();
        EXPECT_TRUE(Close(leaf.grad(), tleaf.grad(), parity::Tol{dt == ember::kFloat ? 1e-4 : 1e-10, 1e-6}));
        EXPECT_EQ(ember::logcumsumexp(leaf, 1).grad_fn()->name(), torch::logcumsumexp(tleaf, 1).grad_fn()->name());
      }
      const double inf = INFINITY;
      x = x.clone();
      x[0][7] = NAN;
      x[1][3] = inf;
      x[2].narrow(0, 0, 5).fill_(-inf);
      x[3].fill_(-inf);
      x[4][0] = -inf;
      x[4][9] = inf;
      EXPECT_TRUE(Close(ember::logcumsumexp(x, 1), torch::logcumsumexp(to_torch(x), 1)));
    }
  }
}

// Values that are random in both libraries but must share a distribution's support and dtype.
TEST(AtenTailParity, RandomFills) {
  ember::Generator g(7);
  ember::Tensor t = ember::empty({1000});
  EXPECT_TRUE(t.uniform_(-2, 3, &g).ge(-2).all().item<bool>());
  EXPECT_TRUE(t.lt(3).all().item<bool>());
  EXPECT_TRUE(t.exponential_(2, &g).ge(0).all().item<bool>());
  EXPECT_NEAR(t.mean().item<double>(), 0.5, 0.1);
  EXPECT_NEAR(t.normal_(1, 2, &g).mean().item<double>(), 1, 0.3);
  EXPECT_TRUE(t.log_normal_(0, 0.5, &g).gt(0).all().item<bool>());
  EXPECT_TRUE(t.geometric_(0.5, &g).ge(1).all().item<bool>());
  EXPECT_EQ(t.eq(t.round()).all().item<bool>(), true);
  EXPECT_NEAR(t.cauchy_(0, 1, &g).median().item<double>(), 0, 0.2);
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
