// The overload audit: each call below is written once and compiled twice, against libtorch and
// against Ember (`ns` is torch or ember, `x`, `y`, ... are that library's tensors holding the same
// values), in the argument forms user code writes: an int literal, a bool, `{}`, `{1, 2}`, a
// std::vector, nullopt, Scalars of each kind. Both must pick the overload that gives the same
// shape, dtype and values; a call libtorch resolves differently from Ember (x.var(2) reducing a
// dim in one and taking 2 as `unbiased` in the other) fails here. The list of names libtorch
// overloads comes from its headers (scripts/compat_coverage.py --overloaded, run at build time):
// every such name that Ember has must be called by some row.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "parity.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace {

using parity::Close;
using parity::random;
using parity::to_torch;

template <class T>
struct In {
  T x, y, v, m, l, l2, mask, idx, gi, src, sq, img, w2, b2, sig, w1, vol, w3, pos, img4;
};

In<ember::Tensor> ember_inputs() {
  using ember::kFloat;
  In<ember::Tensor> in;
  in.x = random({3, 4, 5}, kFloat, 1);
  in.y = random({3, 4, 5}, kFloat, 2);
  in.v = random({5}, kFloat, 3);
  in.m = random({4, 5}, kFloat, 4);
  in.l = random({3, 4, 5}, ember::kLong, 5);
  in.l2 = random({3, 4, 5}, ember::kLong, 6);
  in.mask = random({3, 4, 5}, ember::kBool, 7);
  in.idx = ember::tensor({0, 2}, ember::kLong);
  in.gi = ember::randint(0, 4, {3, 2, 5}, ember::TensorOptions().dtype(ember::kLong));
  in.src = random({3, 2, 5}, kFloat, 8);
  in.sq = random({1, 4, 1, 5}, kFloat, 9);
  in.img = random({1, 2, 6, 6}, kFloat, 10);
  in.w2 = random({3, 2, 3, 3}, kFloat, 11);
  in.b2 = random({3}, kFloat, 12);
  in.sig = random({1, 2, 8}, kFloat, 13);
  in.w1 = random({3, 2, 3}, kFloat, 14);
  in.vol = random({1, 2, 4, 4, 4}, kFloat, 15);
  in.w3 = random({3, 2, 3, 3, 3}, kFloat, 16);
  in.pos = random({3, 4, 5}, kFloat, 17).abs() + 0.1;
  in.img4 = random({2, 3, 4, 5}, kFloat, 18);
  return in;
}

In<torch::Tensor> torch_inputs(const In<ember::Tensor>& e) {
  In<torch::Tensor> t;
  auto c = [](const ember::Tensor& a) { return to_torch(a); };
  t = {c(e.x),  c(e.y),   c(e.v),   c(e.m),    c(e.l),   c(e.l2),  c(e.mask), c(e.idx), c(e.gi),  c(e.src),
       c(e.sq), c(e.img), c(e.w2),  c(e.b2),   c(e.sig), c(e.w1),  c(e.vol),  c(e.w3),  c(e.pos), c(e.img4)};
  return t;
}

// A call's results as a list of tensors: tensors, tuples and vectors of them, and plain values
// (as 0-dim double tensors).
template <class T>
T value_tensor(double v) {
  if constexpr (std::is_same_v<T, torch::Tensor>) {
    return torch::scalar_tensor(v, torch::kDouble);
  } else {
    return ember::scalar_tensor(v, ember::kDouble);
  }
}
template <class T, class R>
void append(std::vector<T>& out, const R& r) {
  if constexpr (std::is_same_v<R, T>) {
    out.push_back(r);
  } else if constexpr (std::is_arithmetic_v<R>) {
    out.push_back(value_tensor<T>(static_cast<double>(r)));
  } else if constexpr (std::is_same_v<R, c10::Scalar> || std::is_same_v<R, ember::Scalar>) {
    out.push_back(value_tensor<T>(r.template to<double>()));
  } else if constexpr (requires { std::tuple_size<R>::value; }) {
    std::apply([&](const auto&... e) { (append<T>(out, e), ...); }, r);
  } else {
    for (const auto& e : r) append<T>(out, e);
  }
}
template <class T, class R>
std::vector<T> flat(const R& r) {
  std::vector<T> out;
  append<T>(out, r);
  return out;
}

// An in-place function (a free one takes an lvalue) or an assignment applied to a copy of t.
template <class T, class F, class... Args>
T in_place_on_copy(const T& t, F f, const Args&... args) {
  T c = t.clone();
  f(c, args...);
  return c;
}

enum class Check { Values, ShapeAndDtype };
struct Row {
  const char* call;
  Check check;
  std::function<std::vector<torch::Tensor>(const In<torch::Tensor>&)> torch_call;
  std::function<std::vector<ember::Tensor>(const In<ember::Tensor>&)> ember_call;
};

float blob[6] = {1, 2, 3, 4, 5, 6};

// blob's bytes in a file, for from_file's rows (removed when the program ends)
struct BlobFile {
  std::string path = (std::filesystem::temp_directory_path() / ("ember_overload_" + std::to_string(::getpid()) + ".bin")).string();
  BlobFile() { std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(blob), sizeof(blob)); }
  ~BlobFile() { std::filesystem::remove(path); }
};
const std::string& blob_file() {
  static const BlobFile file;
  return file.path;
}

// The call's text, once per library.
#define AUDIT_SCOPE(lib, null, optional_int)                                                               \
  namespace ns = lib;                                                                                      \
  [[maybe_unused]] const auto nullopt = null;                                                              \
  using Correction = optional_int;                                                                         \
  [[maybe_unused]] const auto& [x, y, v, m, l, l2, mask, idx, gi, src, sq, img, w2, b2, sig, w1, vol, w3, pos, \
                                img4] = in;
#define ROW(check, ...)                                                                                    \
  Row {                                                                                                    \
#__VA_ARGS__, Check::check,                                                                            \
        [](const In<torch::Tensor>& in) {                                                                  \
          AUDIT_SCOPE(torch, c10::nullopt, c10::optional<int64_t>)                                         \
          return flat<torch::Tensor>(__VA_ARGS__);                                                         \
        },                                                                                                 \
        [](const In<ember::Tensor>& in) {                                                                  \
          AUDIT_SCOPE(ember, std::nullopt, std::optional<int64_t>)                                         \
          return flat<ember::Tensor>(__VA_ARGS__);                                                         \
        }                                                                                                  \
  }
#define V(...) ROW(Values, __VA_ARGS__)
#define S(...) ROW(ShapeAndDtype, __VA_ARGS__)

const std::vector<Row>& rows() {
  static const std::vector<Row> r = {
      // ---- torch:: functions ----
      V(ns::add(x, y)), V(ns::add(x, 2)), V(ns::add(x, y, 2)), V(ns::add(x, 1.5, 2)), V(ns::add(l, 2)),
      V(ns::all(mask)), V(ns::all(mask, 1)), V(ns::all(mask, 1, true)),
      V(ns::any(mask)), V(ns::any(mask, 1)), V(ns::any(mask, -1, true)),
      V(ns::arange(5)), V(ns::arange(1, 5)), V(ns::arange(0, 1, 0.25)), V(ns::arange(2.5)), V(ns::arange(5, ns::kDouble)),
      V(ns::argsort(x)), V(ns::argsort(x, 1, false)), V(ns::argsort(x, 1, true)),
      S(ns::bernoulli(pos.clamp_max(1))), S(ns::bernoulli(x, 0.5)),
      V(ns::bitwise_and(l, l2)), V(ns::bitwise_and(l, 3)), V(ns::bitwise_or(l, l2)), V(ns::bitwise_or(l, 3)),
      V(ns::bitwise_xor(l, l2)), V(ns::bitwise_xor(l, 3)), V(ns::bitwise_and(mask, true)),
      V(ns::cat({x, y})), V(ns::cat({x, y}, 1)), V(ns::cat(std::vector<std::decay_t<decltype(x)>>{x, y}, 2)),
      V(ns::clamp(x, -1, 1)), V(ns::clamp(x, -0.5)), V(ns::clamp(x, nullopt, 0.5)), V(ns::clamp(x, y)),
      V(ns::clamp(x, y, y + 1)), V(ns::clamp(l, 1, 3)),
      V(ns::clamp_max(x, 0.5)), V(ns::clamp_max(x, y)), V(ns::clamp_min(x, 0.5)), V(ns::clamp_min(x, y)),
      V(ns::conv1d(sig, w1)), V(ns::conv1d(sig, w1, b2, 2)), V(ns::conv1d(sig, w1, {}, 1, "same")),
      V(ns::conv2d(img, w2)), V(ns::conv2d(img, w2, b2, 2, 1)), V(ns::conv2d(img, w2, {}, 1, "same")),
      V(ns::conv2d(img, w2, b2, ns::IntArrayRef{1, 2}, ns::IntArrayRef{0, 1})), V(ns::conv2d(img, w2, {}, 1, "valid")),
      V(ns::conv3d(vol, w3)), V(ns::conv3d(vol, w3, b2, 1, 1)), V(ns::conv3d(vol, w3, {}, 1, "same")),
      V(ns::cumprod(x, 1)), V(ns::cumprod(x, 1, ns::kDouble)), V(ns::cumsum(x, 2)), V(ns::cumsum(l, 0)),
      V(ns::cumsum(x, 1, ns::kDouble)),
      V(ns::diagonal(m)), V(ns::diagonal(m, 1)), V(ns::diagonal(x, 0, 1, 2)), V(ns::diagonal(x, -1, 2, 0)),
      V(ns::div(x, y)), V(ns::div(x, 2)), V(ns::div(l, 2)), V(ns::div(x, y, "floor")), V(ns::div(x, 2, "trunc")),
      V(ns::div(l, l2.abs() + 1, "floor")),
      S(ns::empty({2, 3})), S(ns::empty({2, 3}, ns::kDouble)), S(ns::empty(std::vector<int64_t>{4})),
      S(ns::empty_like(x)), S(ns::empty_like(x, ns::kLong)), S(ns::empty_strided({2, 3}, {1, 2})),
      V(ns::eq(x, y)), V(ns::eq(x, 0.5)), V(ns::eq(l, 2)), V(ns::ne(x, y)), V(ns::ne(l, 2)),
      V(ns::ge(x, y)), V(ns::ge(x, 0)), V(ns::gt(x, y)), V(ns::gt(l, 1)), V(ns::le(x, y)), V(ns::le(x, 0.5)),
      V(ns::lt(x, y)), V(ns::lt(l, -1)),
      V(ns::eye(3)), V(ns::eye(2, 4)), V(ns::eye(3, ns::kDouble)), V(ns::eye(2, 3, ns::kLong)),
      V(ns::flatten(x)), V(ns::flatten(x, 1)), V(ns::flatten(x, 0, 1)), V(ns::flatten(x, -2)),
      V(ns::floor_divide(x, y)), V(ns::floor_divide(x, 2)), V(ns::floor_divide(l, 3)),
      V(ns::fmod(x, y)), V(ns::fmod(x, 1.5)), V(ns::fmod(l, 3)), V(ns::remainder(x, y)), V(ns::remainder(x, 1.5)),
      V(ns::remainder(l, 3)), V(ns::remainder(2, x)),
      V(ns::from_blob(blob, {2, 3})), V(ns::from_blob(blob, {3}, {2})), V(ns::from_blob(blob, {2, 2}, ns::kFloat)),
      V(ns::from_file(blob_file(), false, 6)), V(ns::from_file(blob_file(), nullopt, 3, ns::kFloat)),
      V(ns::from_file(blob_file(), false, 24, ns::kByte)), V(ns::from_file(blob_file())),
      V(ns::fft_fftfreq(5)), V(ns::fft_fftfreq(5, 0.5)), V(ns::fft_fftfreq(4, 2.0, ns::kDouble)),
      V(ns::fft_rfftfreq(5)), V(ns::fft_rfftfreq(6, 0.25)), V(ns::fft_rfftfreq(4, 1.0, ns::kDouble)),
      V(ns::full({2, 3}, 1.5)), V(ns::full({2, 3}, 2)), V(ns::full({2, 3}, true)), V(ns::full({2, 3}, 1.5, ns::kDouble)),
      V(ns::full_like(x, 2)), V(ns::full_like(x, 2.5, ns::kDouble)), V(ns::full_like(l, 7)),
      V(ns::gather(x, 1, gi)), V(ns::gather(x, 1, gi, false)),
      V(ns::index_add(x, 1, idx, src)), V(ns::index_add(x, 1, idx, src, 2)),
      V(ns::index_select(x, 1, idx)), V(ns::index_select(x, -1, idx)),
      V(ns::kthvalue(x, 2)), V(ns::kthvalue(x, 2, 1)), V(ns::kthvalue(x, 1, 0, true)),
      V(ns::lerp(x, y, 0.3)), V(ns::lerp(x, y, pos.clamp_max(1))),
      V(ns::linspace(0, 1, 5)), V(ns::linspace(0, 1, 5, ns::kDouble)), V(ns::linspace(-2, 2, 4)),
      V(ns::log_softmax(x, 1)), V(ns::log_softmax(x, -1, ns::kDouble)), V(ns::softmax(x, 0)),
      V(ns::softmax(x, 1, ns::kDouble)),
      V(ns::logsumexp(x, 1)), V(ns::logsumexp(x, {1, 2}, true)), V(ns::logsumexp(x, {0})),
      V(ns::masked_fill(x, mask, 0.5)), V(ns::masked_fill(x, mask, 2)), V(ns::masked_fill(l, mask, 3)),
      V(ns::masked_fill(x, mask, ns::scalar_tensor(2.0))),
      V(ns::max(x)), V(ns::max(x, 1)), V(ns::max(x, 1, true)), V(ns::max(x, y)), V(ns::max(l, -1)),
      V(ns::min(x)), V(ns::min(x, 0)), V(ns::min(x, 2, true)), V(ns::min(x, y)),
      V(ns::mean(x)), V(ns::mean(x, 1)), V(ns::mean(x, {1, 2}, true)), V(ns::mean(x, {0}, false, ns::kDouble)),
      V(ns::mean(x, ns::kDouble)), V(ns::mean(x, std::vector<int64_t>{0, 2})),
      V(ns::movedim(x, 0, 2)), V(ns::movedim(x, {0, 1}, {2, 0})), V(ns::movedim(x, -1, 0)),
      V(ns::mul(x, y)), V(ns::mul(x, 2)), V(ns::mul(l, 2)), V(ns::mul(x, true)), V(ns::mul(mask, mask)),
      V(ns::narrow(x, 1, 1, 2)), V(ns::narrow(x, -1, 0, 3)),
      V(ns::norm(x)), V(ns::norm(x, 1)), V(ns::norm(x, 2, {1})), V(ns::norm(x, 3, {1, 2}, true)),
      V(ns::norm(x, nullopt, {0})),
      S(ns::normal(0, 1, {2, 3})), S(ns::normal(0.5, 2, {4})),
      V(ns::ones({2, 3})), V(ns::ones({2, 3}, ns::kLong)), V(ns::ones(std::vector<int64_t>{2, 3})), V(ns::ones({4})),
      V(ns::zeros({2, 3})), V(ns::zeros({2}, ns::kBool)), V(ns::zeros(std::vector<int64_t>{3})),
      V(ns::ones_like(x)), V(ns::ones_like(x, ns::kDouble)), V(ns::zeros_like(l)), V(ns::zeros_like(x, ns::kInt)),
      V(ns::pow(x, 2)), V(ns::pow(x, 0.5)), V(ns::pow(x, y)), V(ns::pow(2, x)), V(ns::pow(l, 2)), V(ns::pow(pos, -1)),
      V(ns::prod(x)), V(ns::prod(x, 1)), V(ns::prod(x, 1, true)), V(ns::prod(x, ns::kDouble)), V(ns::prod(l, 0)),
      S(ns::rand({2, 3})), S(ns::rand({2, 3}, ns::kDouble)), S(ns::randn({4})), S(ns::randn({2, 3}, ns::kDouble)),
      S(ns::randint(5, {2, 3})), S(ns::randint(1, 5, {2, 3})), S(ns::randint(1, 5, {2}, ns::kInt)),
      S(ns::randint_like(x, 5)), S(ns::randint_like(x, 1, 5)), S(ns::rand_like(x)), S(ns::rand_like(x, ns::kDouble)),
      S(ns::randn_like(x)), S(ns::randn_like(x, ns::kDouble)), S(ns::randperm(5)), S(ns::randperm(5, ns::kInt)),
      V(ns::round(x)), V(ns::round(x, 2)), V(ns::round(x * 10, -1)), V(in_place_on_copy(x, [](auto& c) { ns::round_(c); })),
      V(in_place_on_copy(x, [](auto& c) { ns::round_(c, 1); })),
      V(ns::rsub(x, y)), V(ns::rsub(x, 2)), V(ns::rsub(x, y, 2)),
      V(ns::scalar_tensor(2.5)), V(ns::scalar_tensor(2, ns::kLong)), V(ns::scalar_tensor(true)),
      V(ns::scatter(x, 1, gi, src)), V(ns::scatter(x, 1, gi, 1.5)), V(ns::scatter(x, 1, gi, src, "add")),
      V(ns::scatter(x, 1, gi, 2.0, "multiply")), V(ns::scatter_add(x, 1, gi, src)),
      V(ns::select(x, 1, 2)), V(ns::select(x, 1, -1)), V(ns::select(x, -1, 0)),
      V(ns::sort(x)), V(ns::sort(x, 1)), V(ns::sort(x, 1, true)), V(ns::sort(x, false, 1, true)),
      V(ns::sort(l, true, 0)),
      V(ns::split(x, 2)), V(ns::split(x, 2, 1)), V(ns::split(x, {1, 2}, 0)), V(ns::split(x, 3, -1)),
      V(ns::squeeze(sq)), V(ns::squeeze(sq, 0)), V(ns::squeeze(sq, 2)), V(ns::squeeze(sq, 1)),
      V(ns::var(x)), V(ns::var(x, 2)), V(ns::var(x, true)), V(ns::var(x, false)), V(ns::var(x, {1})),
      V(ns::var(x, {1, 2}, false)), V(ns::var(x, {1}, true, true)), V(ns::var(x, {1}, Correction(2))),
      V(ns::var(x, 1, false)), V(ns::var(x, nullopt, Correction(0))),
      V(ns::std(x)), V(ns::std(x, 2)), V(ns::std(x, false)), V(ns::std(x, ns::IntArrayRef{0, 2})), V(ns::std(x, {1}, true, true)),
      V(ns::std(x, {1}, Correction(3), true)),
      V(ns::var_mean(x)), V(ns::var_mean(x, 2)), V(ns::var_mean(x, false)), V(ns::var_mean(x, {1}, true, true)),
      V(ns::var_mean(x, {0}, Correction(2))),
      V(ns::std_mean(x)), V(ns::std_mean(x, 1)), V(ns::std_mean(x, false)), V(ns::std_mean(x, {1, 2})),
      V(ns::std_mean(x, {1}, Correction(0), true)),
      V(ns::sub(x, y)), V(ns::sub(x, 2)), V(ns::sub(x, y, 2)), V(ns::sub(l, 3)),
      V(ns::sum(x)), V(ns::sum(x, 1)), V(ns::sum(x, {1, 2})), V(ns::sum(x, {1}, true)), V(ns::sum(x, ns::kDouble)),
      V(ns::sum(l, 1)), V(ns::sum(mask)), V(ns::sum(x, std::vector<int64_t>{0, 1})), V(ns::sum(x, -1)),
      V(ns::transpose(x, 0, 2)), V(ns::transpose(x, -1, 1)),
      V(ns::unbind(x)), V(ns::unbind(x, 1)), V(ns::unbind(x, -1)),
      V(ns::unflatten(x, 1, {2, 2})), V(ns::unflatten(x, -1, {5, 1})),
      V(ns::where(mask, x, y)), V(ns::where(mask, x, 0.5)), V(ns::where(mask, 0.5, x)), V(ns::where(mask, 1.0, 0.0)),
      V(ns::where(mask)),
      // ---- Tensor methods ----
      V(x.add(y)), V(x.add(2)), V(x.add(y, 2)), V(l.add(1)), V(x.clone().add_(y)), V(x.clone().add_(2)),
      V(x.clone().add_(y, 0.5)),
      V(mask.all()), V(mask.all(0)), V(mask.all(1, true)), V(mask.any()), V(mask.any(2)), V(mask.any(0, true)),
      V(x.argsort()), V(x.argsort(0, false)), V(x.argsort(2, true)),
      V(l.bitwise_and(l2)), V(l.bitwise_and(1)), V(l.bitwise_or(l2)), V(l.bitwise_or(4)), V(l.bitwise_xor(l2)),
      V(l.bitwise_xor(5)),
      V(x.clamp(-1, 1)), V(x.clamp(0)), V(x.clamp(nullopt, 0)), V(x.clamp(y)), V(x.clamp(y, y + 1)),
      V(x.clone().clamp_(-0.5, 0.5)), V(x.clone().clamp_(y)), V(x.clamp_max(1)), V(x.clamp_max(y)),
      V(x.clone().clamp_max_(0)), V(x.clone().clamp_max_(y)), V(x.clamp_min(-1)), V(x.clamp_min(y)),
      V(x.clone().clamp_min_(0)), V(x.clone().clamp_min_(y)),
      V(x.transpose(0, 1).contiguous()), V(img4.contiguous(ns::MemoryFormat::ChannelsLast)),
      V(x.cumprod(0)), V(x.cumprod(1, ns::kDouble)), V(x.cumsum(2)), V(l.cumsum(1)), V(x.cumsum(0, ns::kDouble)),
      V(x.contiguous().data_ptr<float>()[3]), V(x.data_ptr() != nullptr),
      V(m.diagonal()), V(m.diagonal(-1)), V(x.diagonal(1, 0, 2)),
      V(x.div(y)), V(x.div(2)), V(l.div(2)), V(x.div(y, "trunc")), V(x.div(3, "floor")), V(x.clone().div_(y)),
      V(x.clone().div_(2)), V(x.clone().div_(y, "floor")),
      V(x.eq(y)), V(x.eq(0)), V(l.eq(1)), V(x.ne(y)), V(x.ne(1)), V(x.ge(y)), V(x.ge(0.5)), V(x.gt(y)), V(l.gt(0)),
      V(x.le(y)), V(x.le(-1)), V(x.lt(y)), V(x.lt(1)),
      V(x.clone().fill_(2)), V(x.clone().fill_(1.5)), V(l.clone().fill_(3)), V(x.clone().fill_(ns::scalar_tensor(4.0))),
      V(x.flatten()), V(x.flatten(1)), V(x.flatten(0, -2)),
      V(x.floor_divide(y)), V(x.floor_divide(2)), V(x.clone().floor_divide_(y)), V(x.clone().floor_divide_(3)),
      V(x.fmod(y)), V(x.fmod(2)), V(x.clone().fmod_(y)), V(x.clone().fmod_(0.5)),
      V(x.remainder(y)), V(x.remainder(2)), V(x.clone().remainder_(y)), V(x.clone().remainder_(0.5)),
      V(x.gather(2, gi.narrow(2, 0, 3).clamp_max(2))), V(x.gather(1, gi, false)),
      V(x.index({1})), V(x.index({ns::indexing::Slice(), 1})), V(x.index({mask})), V(x.index({"...", 0})),
      V(x.index({ns::indexing::Slice(1, ns::indexing::None), ns::indexing::Ellipsis, 2})),
      V(x.index_add(1, idx, src)), V(x.index_add(1, idx, src, -1)),
      V(x.clone().index_put_({0}, 1.5)), V(x.clone().index_put_({mask}, 0.0)),
      V(x.clone().index_put_({ns::indexing::Slice(), 1}, y.select(1, 0))),
      V(x.index_select(0, idx)), V(x.index_select(2, idx)),
      V(x.sum().item<double>()), V(x.sum().item()), V(l.sum().item<int64_t>()),
      V(x.kthvalue(3)), V(x.kthvalue(2, 0)), V(x.kthvalue(1, 1, true)),
      V(x.lerp(y, 0.25)), V(x.lerp(y, pos.clamp_max(1))), V(x.clone().lerp_(y, 0.5)),
      V(x.clone().lerp_(y, pos.clamp_max(1))),
      V(x.log_softmax(1)), V(x.log_softmax(0, ns::kDouble)), V(x.softmax(2)), V(x.softmax(1, ns::kDouble)),
      V(x.logsumexp(1)), V(x.logsumexp(ns::IntArrayRef{0, 2}, true)),
      V(x.masked_fill(mask, 0)), V(x.masked_fill(mask, 2.5)), V(x.masked_fill(mask, ns::scalar_tensor(1.0))),
      V(x.clone().masked_fill_(mask, -1)), V(x.clone().masked_fill_(mask, ns::scalar_tensor(3.0))),
      V(x.max()), V(x.max(1)), V(x.max(0, true)), V(x.max(y)), V(x.min()), V(x.min(2)), V(x.min(1, true)),
      V(x.min(y)),
      V(x.mean()), V(x.mean(1)), V(x.mean(ns::IntArrayRef{0, 1})), V(x.mean({2}, true)), V(x.mean(ns::kDouble)),
      V(x.mean({1}, false, ns::kDouble)),
      V(x.movedim(1, 0)), V(x.movedim({0, 2}, {2, 1})),
      V(x.mul(y)), V(x.mul(3)), V(l.mul(2)), V(x.clone().mul_(y)), V(x.clone().mul_(0.5)),
      V(x.narrow(0, 1, 2)), V(x.narrow(-1, 2, 3)),
      V(x.norm()), V(x.norm(1)), V(x.norm(2, {1})), V(x.norm(3, ns::IntArrayRef{0, 1}, true)), V(x.norm(nullopt, {2})),
      V(x.pow(2)), V(x.pow(y)), V(pos.pow(0.5)), V(l.pow(2)), V(x.clone().pow_(2)), V(pos.clone().pow_(y)),
      V(x.prod()), V(x.prod(2)), V(x.prod(0, true)), V(x.prod(ns::kDouble)),
      V(x.clone().requires_grad_()), V(x.clone().requires_grad_(true).requires_grad()),
      V(x.clone().requires_grad_(false).requires_grad()), V(x.clone().set_requires_grad(true).requires_grad()),
      V(x.round()), V(x.round(1)), V(x.clone().round_()), V(x.clone().round_(2)),
      V(x.scatter(1, gi, src)), V(x.scatter(1, gi, 2.5)), V(x.scatter(1, gi, src, "multiply")),
      V(x.clone().scatter_(1, gi, src)), V(x.clone().scatter_(1, gi, 1.0)), V(x.clone().scatter_(1, gi, src, "add")),
      V(x.scatter_add(1, gi, src)),
      V(x.select(0, 1)), V(x.select(2, -2)),
      V(x.sort()), V(x.sort(0)), V(x.sort(1, true)), V(x.sort(true, 2, false)),
      V(x.split(2)), V(x.split(3, 2)), V(x.split({2, 2}, 1)),
      V(sq.squeeze()), V(sq.squeeze(0)), V(sq.squeeze(1)), V(sq.clone().squeeze_()), V(sq.clone().squeeze_(2)),
      V(x.size(1)), V(x.size(-1)), V(x.stride(0)), V(x.stride(-2)), V(x.sizes()), V(x.strides()),
      V(x.var()), V(x.var(2)), V(x.var(0)), V(x.var(true)), V(x.var(false)), V(x.var({1})), V(x.var({1, 2}, false)),
      V(x.var({1}, true, true)), V(x.var({1}, Correction(2))), V(x.var(1, false)),
      V(x.std()), V(x.std(2)), V(x.std(1)), V(x.std(false)), V(x.std(ns::IntArrayRef{0, 1})), V(x.std({2}, false, true)),
      V(x.std({1}, Correction(0), true)),
      V(x.sub(y)), V(x.sub(1)), V(x.sub(y, 3)), V(x.clone().sub_(y)), V(x.clone().sub_(2)), V(x.clone().sub_(y, 2)),
      V(x.sum()), V(x.sum(1)), V(x.sum(ns::IntArrayRef{0, 2})), V(x.sum({1}, true)), V(x.sum(ns::kDouble)), V(l.sum(0)),
      V(x.sum(-1, true)),
      V(x.to(ns::kDouble)), V(x.to(l)), V(x.to(ns::kCPU)), V(x.to(ns::kCPU, ns::kDouble)),
      V(x.to(ns::TensorOptions().dtype(ns::kLong))), V(x.to(ns::kDouble, false, true)), V(l.to(ns::kFloat)),
      V(x.transpose(0, 1)), V(x.transpose(-1, -3)),
      V(x.unbind()), V(x.unbind(2)),
      V(x.unflatten(2, {5, 1})), V(x.unflatten(0, {1, 3})),
      V(x.view({-1})), V(x.view({4, 15})), V(x.view(std::vector<int64_t>{3, 20})), V(x.view(ns::kInt)),
      V(x.clone().zero_()), V(l.clone().zero_()),
      // assigning to a temporary writes into the tensor it views
      V(in_place_on_copy(x, [](auto& c) { c[0] = 1.5; })), V(in_place_on_copy(l, [](auto& c) { c[1][2] = 7; })),
      V(in_place_on_copy(x, [](auto& c, const auto& s) { c.select(1, 2) = s.select(1, 0); }, y)),
      V(in_place_on_copy(x, [](auto& c, const auto& s) { c.index({0}) = s[1]; }, y)),
      V(in_place_on_copy(x, [](auto& c) { c[2][3] = ns::scalar_tensor(4.0); })),
      // ---- issue 26: libtorch's remaining ATen functions (aten_tail.h) ----
      V(ns::atleast_1d(x)), V(ns::atleast_1d({x, v})), V(ns::atleast_2d(v)), V(ns::atleast_2d({v, m})),
      V(ns::atleast_3d(m)), V(ns::atleast_3d({v, x})),
      V(ns::hann_window(5)), V(ns::hann_window(5, false)), V(ns::hamming_window(6)), V(ns::hamming_window(6, false)),
      V(ns::hamming_window(6, true, 0.5)), V(ns::hamming_window(6, false, 0.5, 0.3)), V(ns::bartlett_window(7)),
      V(ns::bartlett_window(7, false)), V(ns::blackman_window(8)), V(ns::blackman_window(8, false, ns::kDouble)),
      // stft's two overloads (without and with `center`; the short call takes the second) and istft
      V(ns::stft(sig[0], 4, 1, 4, ns::hann_window(4), false, nullopt, true)), V(ns::stft(sig[0], 4)),
      V(sig[0].stft(4, 2, 3, ns::hann_window(3), true, nullopt, false)), V(sig[0].stft(4, 1)),
      V(ns::istft(ns::stft(sig[0], 4, 1, 4, ns::hann_window(4), true, "reflect", false, nullopt, true), 4, 1)),
      V(ns::stft(sig[0], 4, 1, 4, ns::hann_window(4), true, "constant", false, nullopt, true).istft(4, 1)),
      V(in_place_on_copy(x, [](auto& c) { ns::clamp_(c, -0.5, 0.5); })),
      V(in_place_on_copy(x, [](auto& c) { ns::clamp_(c, c * 0 - 0.5, c * 0 + 0.5); })),
      V(in_place_on_copy(x, [](auto& c) { ns::clamp_min_(c, 0.1); })),
      V(in_place_on_copy(x, [](auto& c) { ns::clamp_min_(c, c.flip({0})); })),
      V(in_place_on_copy(x, [](auto& c) { ns::clamp_max_(c, 0.1); })),
      V(in_place_on_copy(x, [](auto& c) { ns::clamp_max_(c, c.flip({1})); })),
      V(ns::clip(x, -1, 1)), V(ns::clip(x, y, y + 1)), V(x.clip(-0.5)), V(x.clip(y)),
      V(in_place_on_copy(x, [](auto& c) { ns::clip_(c, -0.5, 0.5); })),
      V(in_place_on_copy(x, [](auto& c) { ns::clip_(c, c * 0, c * 0 + 1); })), V(x.clone().clip_(0, 1)),
      V(x.clone().clip_(y, y + 1)),
      V(ns::concat({x, y})), V(ns::concat({x, y}, 2)), V(ns::concatenate({x, y}, -1)), V(ns::concatenate({x})),
      V(ns::copysign(x, y)), V(ns::copysign(x, -2)), V(x.copysign(y)), V(x.clone().copysign_(y)),
      V(ns::count_nonzero(l)), V(ns::count_nonzero(l, {0, 2})), V(l.count_nonzero()),
      V(l.count_nonzero({1, 2})),
      V(ns::trapezoid(x)), V(ns::trapezoid(x, 0.5)), V(ns::trapezoid(x, 2, 1)), V(ns::trapezoid(x, v)),
      V(ns::trapezoid(x, y, 0)), V(ns::trapz(x)), V(ns::trapz(x, 0.5, 0)), V(ns::trapz(x, v)),
      V(ns::cumulative_trapezoid(x)), V(ns::cumulative_trapezoid(x, 2, 0)), V(ns::cumulative_trapezoid(x, y, 1)),
      V(ns::divide(x, y)), V(ns::divide(x, 2)), V(ns::divide(l, 3, "floor")), V(ns::divide(x, y, "trunc")),
      V(x.divide(y)), V(x.divide(2)), V(l.divide(2, "trunc")), V(x.clone().divide_(y)), V(x.clone().divide_(4)),
      V(x.clone().divide_(y, "floor")),
      V(ns::true_divide(x, y)), V(ns::true_divide(l, 2)), V(x.true_divide(y)), V(x.true_divide(3)),
      V(x.clone().true_divide_(y)), V(x.clone().true_divide_(2)),
      V(ns::multiply(x, y)), V(ns::multiply(x, 2)), V(x.multiply(y)), V(l.multiply(3)), V(x.clone().multiply_(y)),
      V(x.clone().multiply_(0.5)),
      V(ns::subtract(x, y)), V(ns::subtract(x, 1)), V(ns::subtract(x, y, 2)), V(x.subtract(y)), V(x.subtract(1, 2)),
      V(x.clone().subtract_(y)), V(x.clone().subtract_(y, 3)), V(x.clone().subtract_(2)),
      V(ns::greater(x, y)), V(ns::greater(x, 0)), V(x.greater(y)), V(x.greater(0.5)), V(x.clone().greater_(y)),
      V(x.clone().greater_(0)),
      V(ns::greater_equal(x, y)), V(ns::greater_equal(l, 1)), V(x.greater_equal(y)), V(x.greater_equal(0)),
      V(x.clone().greater_equal_(y)), V(x.clone().greater_equal_(0.1)),
      V(ns::less(x, y)), V(ns::less(x, 0)), V(x.less(y)), V(l.less(2)), V(x.clone().less_(y)), V(x.clone().less_(0)),
      V(ns::less_equal(x, y)), V(ns::less_equal(x, 0)), V(x.less_equal(y)), V(x.less_equal(1)),
      V(x.clone().less_equal_(y)), V(x.clone().less_equal_(0)),
      V(ns::not_equal(l, l2)), V(ns::not_equal(l, 0)), V(l.not_equal(l2)), V(l.not_equal(1)),
      V(l.clone().not_equal_(l2)), V(l.clone().not_equal_(1)),
      V(x.clone().eq_(y)), V(l.clone().eq_(1)), V(x.clone().ne_(y)), V(l.clone().ne_(0)), V(x.clone().lt_(y)),
      V(x.clone().lt_(0)), V(x.clone().le_(y)), V(x.clone().le_(0)), V(x.clone().gt_(y)), V(x.clone().gt_(0)),
      V(x.clone().ge_(y)), V(x.clone().ge_(0)),
      V(l.clone().bitwise_and_(l2)), V(l.clone().bitwise_and_(3)), V(l.clone().bitwise_or_(l2)),
      V(l.clone().bitwise_or_(3)), V(l.clone().bitwise_xor_(l2)), V(l.clone().bitwise_xor_(5)),
      V(x.clone().cumsum_(1)), V(l.clone().cumsum_(0, ns::kLong)), V(x.clone().cumprod_(2)),
      V(l.clone().cumprod_(1, ns::kLong)),
      V(ns::tensor_split(x, 2)), V(ns::tensor_split(x, 3, 2)), V(ns::tensor_split(x, {1, 3}, 1)),
      V(x.tensor_split(2)), V(x.tensor_split({1}, 2)),
      V(ns::hsplit(x, 2)), V(ns::hsplit(x, {1, 3})), V(x.hsplit(4)), V(x.hsplit({2})),
      V(ns::vsplit(x, 3)), V(ns::vsplit(x, {1})), V(x.vsplit(1)), V(x.vsplit({1, 2})),
      V(ns::dsplit(x, 5)), V(ns::dsplit(x, {2, 3})), V(x.dsplit(1)), V(x.dsplit({1, 4})),
      V(ns::float_power(x, y)), V(ns::float_power(pos, 2)), V(ns::float_power(2, x)), V(pos.float_power(y)),
      V(x.float_power(2)),
      V(ns::index_fill(x, 1, idx, -1)), V(x.index_fill(2, idx, 0.5)), V(x.clone().index_fill_(0, idx, 2)),
      V(ns::index_copy(x, 1, idx, x.narrow(1, 0, 2))), V(x.index_copy(0, idx, y.narrow(0, 0, 2))),
      V(x.clone().index_copy_(2, idx, y.narrow(2, 1, 2))),
      V(ns::isin(l, l2)), V(ns::isin(l, 3)), V(ns::isin(2, l)), V(ns::isin(l, l2, false, true)),
      V(ns::logcumsumexp(x, 1)), V(x.logcumsumexp(-1)),
      V(ns::logspace(0, 2, 5)), V(ns::logspace(-1, 1, 3, 2)), V(ns::logspace(0, 1, 4, 10, ns::kDouble)),
      V(ns::median(x)), V(ns::median(x, 1)), V(ns::median(x, -1, true)), V(x.median()), V(x.median(0)),
      V(x.median(2, true)),
      V(ns::meshgrid({v, b2})), V(ns::meshgrid({v, b2}, "xy")), V(ns::meshgrid({v, b2, v}, "ij")),
      V(ns::moveaxis(x, 0, 2)), V(ns::moveaxis(x, {0, 1}, {2, 0})), V(x.moveaxis({1}, {0})), V(x.moveaxis({0, 2}, {1, 0})),
      V(ns::quantile(x, 0.25)), V(ns::quantile(x, 0.5, 1)), V(ns::quantile(x, 0.6, 2, true, "nearest")),
      V(x.quantile(0.1)), V(x.quantile(0.9, 0, false, "higher")),
      V(ns::range(0, 1, 0.25)), V(ns::range(1, 4, 1, ns::kDouble)),
      V(ns::repeat_interleave(x, 2)), V(ns::repeat_interleave(x, 3, 1)), V(x.repeat_interleave(2)),
      V(x.repeat_interleave(2, 0)),
      V(ns::ones({1}, ns::result_type(x, l))), V(ns::ones({1}, ns::result_type(l, 2.5))),
      V(ns::ones({1}, ns::result_type(2, l))), V(ns::ones({1}, ns::result_type(2, 1.5))),
      V(ns::squeeze_copy(sq)), V(ns::squeeze_copy(sq, 2)), V(ns::view_copy(x, {-1})), V(ns::view_copy(x, {12, 5})),
      V(ns::tril_indices(3, 4)), V(ns::tril_indices(3, 4, 1)), V(ns::triu_indices(4, 3, -1)),
      V(ns::triu_indices(2, 2, 0, ns::kInt)),
      V(ns::xlogy(pos, y)), V(ns::xlogy(x, 2)), V(ns::xlogy(2, pos)), V(pos.xlogy(pos)),
      V(ns::special_xlogy(pos, y)), V(ns::special_xlogy(x, 2)), V(ns::special_xlogy(2, pos)),
      V(ns::special_xlog1py(pos, y)), V(ns::special_xlog1py(x, 2)), V(ns::special_xlog1py(2, pos)),
      // ATen's recurrent functions, padded and packed (weights sliced from m: hidden size 2)
      V(ns::lstm(x, {x.narrow(2, 0, 2).narrow(0, 0, 1), x.narrow(2, 2, 2).narrow(0, 0, 1)},
                 {ns::cat({m, m}), ns::cat({m, m}).narrow(1, 0, 2)}, false, 1, 0.0, false, false, false)),
      V(ns::lstm(x.reshape({12, 5}), ns::tensor({4, 4, 4}, ns::kLong),
                 {x.narrow(2, 0, 2).narrow(0, 0, 1), x.narrow(2, 2, 2).narrow(0, 0, 1)},
                 {ns::cat({m, m}), ns::cat({m, m}).narrow(1, 0, 2)}, false, 1, 0.0, false, false)),
      V(ns::gru(x, x.narrow(1, 0, 1).narrow(2, 0, 2).transpose(0, 1),
                {ns::cat({m, m.narrow(0, 0, 2)}), ns::cat({m, m.narrow(0, 0, 2)}).narrow(1, 0, 2)}, false, 1, 0.0, false, false,
                true)),
      V(ns::gru(x.reshape({12, 5}), ns::tensor({4, 4, 4}, ns::kLong), x.narrow(2, 0, 2).narrow(0, 0, 1),
                {ns::cat({m, m.narrow(0, 0, 2)}), ns::cat({m, m.narrow(0, 0, 2)}).narrow(1, 0, 2)}, false, 1, 0.0, false, false)),
      V(ns::rnn_tanh(x, x.narrow(2, 0, 2).narrow(0, 0, 1), {m.narrow(0, 0, 2), m.narrow(0, 2, 2).narrow(1, 0, 2)}, false, 1,
                     0.0, false, false, false)),
      V(ns::rnn_tanh(x.reshape({12, 5}), ns::tensor({4, 4, 4}, ns::kLong), x.narrow(2, 0, 2).narrow(0, 0, 1),
                     {m.narrow(0, 0, 2), m.narrow(0, 2, 2).narrow(1, 0, 2)}, false, 1, 0.0, false, false)),
      V(ns::rnn_relu(x, x.narrow(2, 0, 2).narrow(0, 0, 1), {m.narrow(0, 0, 2), m.narrow(0, 2, 2).narrow(1, 0, 2)}, false, 1,
                     0.0, false, false, false)),
      V(ns::rnn_relu(x.reshape({12, 5}), ns::tensor({4, 4, 4}, ns::kLong), x.narrow(2, 0, 2).narrow(0, 0, 1),
                     {m.narrow(0, 0, 2), m.narrow(0, 2, 2).narrow(1, 0, 2)}, false, 1, 0.0, false, false)),
      // element access and the deprecated detach spellings
      V(x.accessor<float, 3>()[1][2][3]), V(x.packed_accessor64<float, 3>()[2][3][4]),
      V(x.packed_accessor32<float, 3>()[0][1][2]), V(x.generic_packed_accessor<float, 3>()[1][0][4]),
      V(x.packed_accessor<float, 3>()[2][2][2]), V(x.data()), V(x.variable_data()), V(x.tensor_data()),
      V(ns::special_zeta(pos + 1, pos)), V(ns::special_zeta(pos + 1, 2)), V(ns::special_zeta(3, pos)),
      V(ns::special_chebyshev_polynomial_t(x, l.remainder(6))), V(ns::special_chebyshev_polynomial_t(0.5, l.remainder(6))),
      V(ns::special_chebyshev_polynomial_t(x, 3)), V(ns::special_chebyshev_polynomial_u(x, l.remainder(6))),
      V(ns::special_chebyshev_polynomial_u(0.5, l.remainder(6))), V(ns::special_chebyshev_polynomial_u(x, 3)),
      V(ns::special_chebyshev_polynomial_v(x, l.remainder(6))), V(ns::special_chebyshev_polynomial_v(0.5, l.remainder(6))),
      V(ns::special_chebyshev_polynomial_v(x, 3)), V(ns::special_chebyshev_polynomial_w(x, l.remainder(6))),
      V(ns::special_chebyshev_polynomial_w(0.5, l.remainder(6))), V(ns::special_chebyshev_polynomial_w(x, 3)),
      V(ns::special_shifted_chebyshev_polynomial_t(x, l.remainder(6))),
      V(ns::special_shifted_chebyshev_polynomial_t(0.5, l.remainder(6))), V(ns::special_shifted_chebyshev_polynomial_t(x, 3)),
      V(ns::special_shifted_chebyshev_polynomial_u(x, l.remainder(6))),
      V(ns::special_shifted_chebyshev_polynomial_u(0.5, l.remainder(6))), V(ns::special_shifted_chebyshev_polynomial_u(x, 3)),
      V(ns::special_shifted_chebyshev_polynomial_v(x, l.remainder(6))),
      V(ns::special_shifted_chebyshev_polynomial_v(0.5, l.remainder(6))), V(ns::special_shifted_chebyshev_polynomial_v(x, 3)),
      V(ns::special_shifted_chebyshev_polynomial_w(x, l.remainder(6))),
      V(ns::special_shifted_chebyshev_polynomial_w(0.5, l.remainder(6))), V(ns::special_shifted_chebyshev_polynomial_w(x, 3)),
      V(ns::special_hermite_polynomial_h(x, l.remainder(6))), V(ns::special_hermite_polynomial_h(0.5, l.remainder(6))),
      V(ns::special_hermite_polynomial_h(x, 3)), V(ns::special_hermite_polynomial_he(x, l.remainder(6))),
      V(ns::special_hermite_polynomial_he(0.5, l.remainder(6))), V(ns::special_hermite_polynomial_he(x, 3)),
      V(ns::special_laguerre_polynomial_l(x, l.remainder(6))), V(ns::special_laguerre_polynomial_l(0.5, l.remainder(6))),
      V(ns::special_laguerre_polynomial_l(x, 3)), V(ns::special_legendre_polynomial_p(x, l.remainder(6))),
      V(ns::special_legendre_polynomial_p(0.5, l.remainder(6))), V(ns::special_legendre_polynomial_p(x, 3)),
      V(in_place_on_copy(x, [](auto& c) { ns::xlogy_(c, c.abs() + 1); })), V(in_place_on_copy(x, [](auto& c) { ns::xlogy_(c, 2); })),
      V(x.clone().xlogy_(pos)),
      V(in_place_on_copy(x, [](auto& c) { ns::fill_(c, 1.5); })),
      V(in_place_on_copy(x, [](auto& c) { ns::fill_(c, c.sum()); })),
      S(x.new_empty({2, 3})), V(x.new_full({2}, 4)), V(l.new_ones({3})), V(x.new_zeros({2, 2})),
      V(x.new_zeros({2}, ns::kLong)), V(x.new_ones({1, 2}, ns::TensorOptions().dtype(ns::kDouble))),
      V(l.new_full({2}, 3, ns::kFloat)), S(x.new_empty({1}, ns::kInt)),
#include "parity/overload_rows_aten2.inc"
      // ---- torch.linalg (ember/linalg_functions.h); m m^T is symmetric positive definite, and
      // m m^T + 4I also well conditioned where a row inverts it: these rows check which overload
      // is called, and an inverse at condition number ~200 differs by float rounding alone ----
      V(ns::linalg_norm(m)), V(ns::linalg_norm(m, 2)), V(ns::linalg_norm(m, "fro")), V(ns::linalg_norm(m, "nuc", {1, 0})),
      V(ns::linalg_norm(x, 3, {1})), V(ns::linalg_norm(x, nullopt, {0, 2}, true)), V(ns::linalg_norm(v, 1)),
      V(ns::linalg_matrix_norm(m)), V(ns::linalg_matrix_norm(m, 1)), V(ns::linalg_matrix_norm(m, "nuc")),
      V(ns::linalg_matrix_norm(x, -2, {0, 2}, true)), V(ns::linalg_matrix_norm(x, "fro", {2, 1})),
      V(ns::linalg_cond(m)), V(ns::linalg_cond(m, -2)), V(ns::linalg_cond(m.matmul(m.t()).add(ns::eye(4), 4), "fro")),
      V(ns::linalg_cond(m.matmul(m.t()).add(ns::eye(4), 4), 1)),
      V(ns::linalg_matrix_rank(m)), V(ns::linalg_matrix_rank(m, 0.5)), V(ns::linalg_matrix_rank(m.matmul(m.t()), 0.5, true)),
      V(ns::linalg_matrix_rank(m, nullopt, 0.1)), V(ns::linalg_matrix_rank(m.matmul(m.t()), 1.0, 0.0, true)),
      V(ns::linalg_pinv(m)), V(ns::linalg_pinv(m, 0.1)), V(ns::linalg_pinv(m.matmul(m.t()).add(ns::eye(4), 4), 1e-3, true)),
      V(ns::linalg_pinv(m, nullopt, 0.2)),
      V(ns::frobenius_norm(m)), V(ns::frobenius_norm(x, {0, 2})), V(ns::frobenius_norm(x, {1, 2}, true)),
      V(ns::nuclear_norm(m)), V(ns::nuclear_norm(m, true)), V(ns::nuclear_norm(x, {0, 2})),
      V(ns::nuclear_norm(x, {2, 1}, true)), V(ns::linalg_matmul(x, m.t())),
      // quantization (tests/parity/quantization_parity.cpp compares the rest)
      V(ns::dequantize(ns::quantize_per_tensor(x, 0.1, 2, ns::kQInt8))),
      V(ns::dequantize(ns::quantize_per_tensor(x, ns::scalar_tensor(0.1), ns::scalar_tensor(2), ns::kQUInt8))),
      V(ns::dequantize(std::vector<std::decay_t<decltype(x)>>{ns::quantize_per_tensor(x, 0.2, 0, ns::kQInt8)})),
      V(ns::fake_quantize_per_tensor_affine(x, 0.1, 0, -128, 127)),
      V(ns::fake_quantize_per_tensor_affine(x, ns::scalar_tensor(0.1), ns::scalar_tensor(3, ns::kInt), 0, 255)),
  };
  return r;
}

TEST(OverloadAudit, EachCallMatchesLibtorch) {
  const In<ember::Tensor> e = ember_inputs();
  const In<torch::Tensor> t = torch_inputs(e);
  for (const Row& row : rows()) {
    std::vector<ember::Tensor> er;
    std::vector<torch::Tensor> tr;
    try {
      tr = row.torch_call(t);
    } catch (const std::exception& err) {
      ADD_FAILURE() << row.call << ": libtorch raised " << err.what();
      continue;
    }
    try {
      er = row.ember_call(e);
    } catch (const std::exception& err) {
      ADD_FAILURE() << row.call << ": Ember raised " << err.what();
      continue;
    }
    ASSERT_EQ(er.size(), tr.size()) << row.call << ": number of results";
    for (size_t i = 0; i < er.size(); ++i) {
      if (row.check == Check::Values) {
        // Every input is float32 (a double or complex result is a float computation's value): float's
        // tolerance.
        const bool inexact = er[i].is_floating_point() || er[i].is_complex();
        const parity::Tol tol = inexact ? parity::default_tol(ember::kFloat) : parity::Tol{0, 0};
        EXPECT_TRUE(Close(er[i], tr[i], tol)) << row.call << " result " << i;
      } else {
        EXPECT_EQ(parity::to_torch(er[i].dtype()), tr[i].scalar_type()) << row.call << " result " << i;
        EXPECT_EQ(std::vector<int64_t>(er[i].sizes().begin(), er[i].sizes().end()), tr[i].sizes().vec())
            << row.call << " result " << i;
      }
    }
  }
}

// Every name libtorch overloads (from its headers) that Ember also has is called by some row.
TEST(OverloadAudit, CoversEveryOverloadedName) {
  std::ifstream in(EMBER_OVERLOADED_NAMES);
  ASSERT_TRUE(in) << "missing " << EMBER_OVERLOADED_NAMES << " (written by scripts/compat_coverage.py at build time)";
  std::string kind, name;
  std::vector<std::string> uncovered;
  size_t listed = 0;
  while (in >> kind >> name) {
    ++listed;
    const std::string call = kind == "method" ? "." + name : "ns::" + name;
    bool found = false;
    for (const Row& row : rows()) {
      const std::string text = row.call;
      for (size_t at = text.find(call); at != std::string::npos && !found; at = text.find(call, at + 1)) {
        const char next = at + call.size() < text.size() ? text[at + call.size()] : '\0';
        found = next == '(' || next == '<';
      }
      if (found) break;
    }
    if (!found) uncovered.push_back(kind + " " + name);
  }
  EXPECT_GT(listed, 100u);
  std::string list;
  for (const std::string& u : uncovered) list += " " + u;
  EXPECT_TRUE(uncovered.empty()) << "overloaded in libtorch, present in Ember, called by no row:" << list;
}

}  // namespace

#undef AUDIT_SCOPE
#undef ROW
#undef V
#undef S

}  // namespace EMBER_UNITY_FILE
