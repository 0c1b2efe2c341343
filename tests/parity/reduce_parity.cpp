// Reductions, scans and sorts against libtorch: every dtype over shapes that reach each kernel
// path (0-dim, empty, odd sizes, threaded sizes, transposed, sliced, channels_last, expanded)
// and dim lists (all, each dim, negative, several, keepdim). Where libtorch throws, Ember must
// throw too.
//
// References. Exact ops (max, sort, all, ...) compare with libtorch directly; where libtorch
// 1.13 has no CPU kernel for a dtype Ember supports (topk/kthvalue/sort of half, bfloat16 and
// bool, argmax of bool, prod/cumsum/cumprod/logsumexp of half and bfloat16) the reference is
// libtorch on an exactly widened copy, cast back. Accumulating ops on floating inputs (sum,
// mean, prod, norm, var/std, logsumexp, cumsum, cumprod) are held to the exact result: libtorch
// computes them in float64 and the result is rounded to the input dtype. libtorch's own float32
// and 16-bit paths are further than the float tolerance from it (a float32 norm of 16M elements
// off by 5e-4 relative, half sums that round partial results, a half mean of 70001 elements
// that returns 0), while Ember sums pairwise and accumulates half/bfloat16 in float32.
#include <functional>
#include <limits>
#include <optional>

#include "parity/parity.h"
#include "sanitized.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using parity::kAllTypes;

using parity::Close;
using parity::random;
using parity::to_torch;

namespace {


struct Input {
  std::string name;
  ember::Tensor t;
};

// `positive` draws floating data from [0, 1) instead of [-2, 2). A float32 sum of n values of
// mixed sign cancels: its exact result can be ~sqrt(n) times smaller than the rounding errors
// any float32 summation order makes (libtorch's included), so sums are checked on positive data.
std::vector<Input> inputs(ember::ScalarType dt, uint64_t seed, bool positive = false) {
  using ember::MemoryFormat;
  auto random = [&](ember::IntArrayRef sizes, ember::ScalarType t, uint64_t s) {
    if (!positive || !ember::is_floating_type(t)) return parity::random(sizes, t, s);
    ember::Generator g(s);
    return ember::rand(sizes, &g, ember::TensorOptions().dtype(ember::kDouble)).to(t);
  };
  return {
      {"0-dim", random({}, dt, seed)},
      {"empty", random({0}, dt, seed + 1)},
      {"empty 3d", random({3, 0, 2}, dt, seed + 2)},
      {"7", random({7}, dt, seed + 3)},
      {"5x33", random({5, 33}, dt, seed + 4)},
      {"4x5x6", random({4, 5, 6}, dt, seed + 5)},
      {"70001", random({70001}, dt, seed + 6)},
      {"3x40000", random({3, 40000}, dt, seed + 7)},
      {"300x257", random({300, 257}, dt, seed + 8)},
      {"40000x3", random({40000, 3}, dt, seed + 9)},
      {"3x20000x5", random({3, 20000, 5}, dt, seed + 10)},
      {"transposed", random({6, 9, 7}, dt, seed + 11).permute({2, 0, 1})},
      {"transposed 37x41", random({41, 37}, dt, seed + 15).t()},  // blocks of neighbours and a rest
      {"sliced", random({10, 24}, dt, seed + 12).slice(1, 1, 24, 3)},
      {"channels_last", random({2, 3, 5, 4}, dt, seed + 13).contiguous(MemoryFormat::ChannelsLast)},
      {"expanded", random({3, 1}, dt, seed + 14).expand({3, 5})},
  };
}

// Dim lists to reduce over: every dim, each dim (the last one negative), first and last.
std::vector<std::vector<int64_t>> dim_lists(int64_t nd) {
  std::vector<std::vector<int64_t>> out = {{}};
  for (int64_t d = 0; d < std::max<int64_t>(nd, 1); ++d) out.push_back({d == nd - 1 ? -1 : d});
  if (nd >= 2) out.push_back({0, nd - 1});
  if (nd >= 3) out.push_back({2, 0, 1});
  return out;
}

std::vector<int64_t> single_dims(int64_t nd) {
  std::vector<int64_t> out;
  for (int64_t d = 0; d < std::max<int64_t>(nd, 1); ++d) out.push_back(d == nd - 1 ? -1 : d);
  return out;
}

// libtorch's f at float64 for floating inputs, rounded back to the input dtype.
torch::Tensor exact(const torch::Tensor& t, const std::function<torch::Tensor(const torch::Tensor&)>& f) {
  if (!t.is_floating_point()) return f(t);
  return f(t.to(torch::kDouble)).to(t.scalar_type());
}

// A copy libtorch can select from (sort, topk, kthvalue, argmax), holding the same values.
torch::Tensor selectable(const torch::Tensor& t) {
  if (t.scalar_type() == torch::kBool) return t.to(torch::kChar);
  if (t.scalar_type() == torch::kHalf || t.scalar_type() == torch::kBFloat16) return t.to(torch::kFloat);
  return t;
}

// Runs both, once each; libtorch throwing means Ember must throw, otherwise `compare` checks the
// results. Under sanitizers a third of the cases run, chosen by a hash of their description (op,
// input, dtype, dims, keepdim), so every op still meets inputs of every kind; Release runs them all.
template <class Ours, class Theirs, class Compare>
void run_both(const std::string& what, const std::function<Ours()>& e, const std::function<Theirs()>& t,
              const Compare& compare) {
  if (sanitized() && std::hash<std::string>()(what) % 3 != 0) return;
  Theirs want;
  try {
    want = t();
  } catch (const c10::Error&) {
    EXPECT_THROW(e(), ember::Error) << what << ": libtorch throws";
    return;
  }
  try {
    compare(e(), want);
  } catch (const ember::Error& err) {
    ADD_FAILURE() << what << ": ember throws " << err.what();
  }
}

void check(const std::string& what, const std::function<ember::Tensor()>& e, const std::function<torch::Tensor()>& t) {
  run_both(what, e, t,
           [&](const ember::Tensor& got, const torch::Tensor& want) { EXPECT_TRUE(Close(got, want)) << what; });
}

// A two-output op (values and indices).
void check2(const std::string& what, const std::function<std::tuple<ember::Tensor, ember::Tensor>()>& e,
            const std::function<std::tuple<torch::Tensor, torch::Tensor>()>& t) {
  run_both(what, e, t, [&](const auto& got, const auto& want) {
    EXPECT_TRUE(Close(std::get<0>(got), std::get<0>(want))) << what << " [values]";
    EXPECT_TRUE(Close(std::get<1>(got), std::get<1>(want))) << what << " [indices]";
  });
}

std::string describe(const std::string& op, const Input& in, ember::ScalarType dt, const std::vector<int64_t>& dims,
                     bool keepdim) {
  std::ostringstream os;
  os << op << " " << in.name << " " << dt << " dims " << ember::IntArrayRef(dims) << (keepdim ? " keepdim" : "");
  return os.str();
}

}  // namespace

TEST(ReduceParity, SumMeanProd) {
  uint64_t seed = 1;
  for (ember::ScalarType dt : kAllTypes) {
    for (const Input& in : inputs(dt, seed += 100, true)) {
      const torch::Tensor tt = to_torch(in.t);
      for (const auto& dims : dim_lists(in.t.dim())) {
        for (bool keepdim : {false, true}) {
          const ember::IntArrayRef ed(dims);
          const at::IntArrayRef td(dims);
          check(describe("sum", in, dt, dims, keepdim), [&] { return ember::sum(in.t, ed, keepdim); },
                [&] { return exact(tt, [&](const torch::Tensor& x) { return torch::sum(x, td, keepdim); }); });
          check(describe("mean", in, dt, dims, keepdim), [&] { return ember::mean(in.t, ed, keepdim); },
                [&] { return exact(tt, [&](const torch::Tensor& x) { return torch::mean(x, td, keepdim); }); });
        }
      }
      check("sum all " + in.name, [&] { return ember::sum(in.t); },
            [&] { return exact(tt, [](const torch::Tensor& x) { return torch::sum(x); }); });
      check("sum double " + in.name, [&] { return ember::sum(in.t, ember::kDouble); },
            [&] { return torch::sum(tt, torch::kDouble); });
      check("sum int " + in.name, [&] { return ember::sum(in.t, ember::kInt); }, [&] { return torch::sum(tt, torch::kInt); });
      check("sum bool " + in.name, [&] { return ember::sum(in.t, ember::kBool); }, [&] { return torch::sum(tt, torch::kBool); });
      check("mean float " + in.name, [&] { return ember::mean(in.t, ember::kFloat); },
            [&] { return torch::mean(tt, torch::kDouble).to(torch::kFloat); });
      // prod of random data over- or underflows quickly: short dims only
      if (in.t.numel() <= 300) {
        check("prod all " + in.name, [&] { return ember::prod(in.t); },
              [&] { return exact(tt, [](const torch::Tensor& x) { return torch::prod(x); }); });
        for (int64_t d : single_dims(in.t.dim())) {
          for (bool keepdim : {false, true}) {
            check(describe("prod", in, dt, {d}, keepdim), [&] { return ember::prod(in.t, d, keepdim); },
                  [&] { return exact(tt, [&](const torch::Tensor& x) { return torch::prod(x, d, keepdim); }); });
          }
        }
        check("prod long " + in.name, [&] { return ember::prod(in.t, 0, false, ember::kLong); },
              [&] { return torch::prod(tt, 0, false, torch::kLong); });
      }
    }
  }
}

TEST(ReduceParity, MaxMinArgmax) {
  uint64_t seed = 5000;
  for (ember::ScalarType dt : kAllTypes) {
    for (const Input& in : inputs(dt, seed += 100)) {
      const torch::Tensor tt = to_torch(in.t);
      const torch::Tensor tsel = selectable(tt);
      check("max all " + in.name, [&] { return ember::max(in.t); }, [&] { return torch::max(tt); });
      check("min all " + in.name, [&] { return ember::min(in.t); }, [&] { return torch::min(tt); });
      check("argmax all " + in.name, [&] { return ember::argmax(in.t); }, [&] { return torch::argmax(tsel); });
      check("argmin all keepdim " + in.name, [&] { return ember::argmin(in.t, std::nullopt, true); },
            [&] { return torch::argmin(tsel, c10::nullopt, true); });
      for (const auto& dims : dim_lists(in.t.dim())) {
        for (bool keepdim : {false, true}) {
          check(describe("amax", in, dt, dims, keepdim), [&] { return ember::amax(in.t, dims, keepdim); },
                [&] { return torch::amax(tt, dims, keepdim); });
          check(describe("amin", in, dt, dims, keepdim), [&] { return ember::amin(in.t, dims, keepdim); },
                [&] { return torch::amin(tt, dims, keepdim); });
        }
      }
      for (int64_t d : single_dims(in.t.dim())) {
        for (bool keepdim : {false, true}) {
          check2(describe("max", in, dt, {d}, keepdim), [&] { return ember::max(in.t, d, keepdim); },
                 [&] { return torch::max(tt, d, keepdim); });
          check2(describe("min", in, dt, {d}, keepdim), [&] { return ember::min(in.t, d, keepdim); },
                 [&] { return torch::min(tt, d, keepdim); });
          check(describe("argmax", in, dt, {d}, keepdim), [&] { return ember::argmax(in.t, d, keepdim); },
                [&] { return torch::argmax(tsel, d, keepdim); });
          check(describe("argmin", in, dt, {d}, keepdim), [&] { return ember::argmin(in.t, d, keepdim); },
                [&] { return torch::argmin(tsel, d, keepdim); });
        }
      }
    }
  }
}

TEST(ReduceParity, VarStdNormLogsumexp) {
  uint64_t seed = 9000;
  for (ember::ScalarType dt : kAllTypes) {
    for (const Input& in : inputs(dt, seed += 100)) {
      const torch::Tensor tt = to_torch(in.t);
      for (const auto& dims : dim_lists(in.t.dim())) {
        const at::IntArrayRef td(dims);
        for (bool keepdim : {false, true}) {
          for (int64_t c : {0, 1, 2}) {
            check(describe("var c" + std::to_string(c), in, dt, dims, keepdim),
                  [&] { return ember::var(in.t, ember::IntArrayRef(dims), std::optional<int64_t>(c), keepdim); },
                  [&] { return exact(tt, [&](const torch::Tensor& x) { return torch::var(x, td, c10::optional<int64_t>(c), keepdim); }); });
          }
          check(describe("std", in, dt, dims, keepdim), [&] { return ember::std(in.t, ember::IntArrayRef(dims), 1, keepdim); },
                [&] { return exact(tt, [&](const torch::Tensor& x) { return torch::std(x, td, c10::optional<int64_t>(1), keepdim); }); });
          check2(describe("var_mean", in, dt, dims, keepdim),
                 [&] { return ember::var_mean(in.t, ember::IntArrayRef(dims), 1, keepdim); },
                 [&] {
                   auto [v, m] = torch::var_mean(tt.is_floating_point() ? tt.to(torch::kDouble) : tt, td,
                                                 c10::optional<int64_t>(1), keepdim);
                   return std::make_tuple(v.to(tt.scalar_type()), m.to(tt.scalar_type()));
                 });
          check2(describe("std_mean", in, dt, dims, keepdim),
                 [&] { return ember::std_mean(in.t, ember::IntArrayRef(dims), 0, keepdim); },
                 [&] {
                   auto [v, m] = torch::std_mean(tt.is_floating_point() ? tt.to(torch::kDouble) : tt, td,
                                                 c10::optional<int64_t>(0), keepdim);
                   return std::make_tuple(v.to(tt.scalar_type()), m.to(tt.scalar_type()));
                 });
          for (double p : {0.0, 1.0, 2.0, 3.0, 0.5, -1.0, double(INFINITY), -double(INFINITY)}) {
            check(describe("norm p=" + std::to_string(p), in, dt, dims, keepdim),
                  [&] { return ember::norm(in.t, ember::Scalar(p), dims, keepdim); },
                  [&] { return exact(tt, [&](const torch::Tensor& x) { return torch::norm(x, at::Scalar(p), td, keepdim); }); });
          }
          check(describe("logsumexp", in, dt, dims, keepdim), [&] { return ember::logsumexp(in.t, dims, keepdim); },
                [&] {
                  // libtorch 1.13 reads an empty dim list as a shape error; Ember reduces every dim
                  std::vector<int64_t> all(dims);
                  if (all.empty())
                    for (int64_t d = 0; d < tt.dim(); ++d) all.push_back(d);
                  return exact(tt, [&](const torch::Tensor& x) { return torch::logsumexp(x, all, keepdim); });
                });
        }
      }
    }
  }
}

TEST(ReduceParity, AllAnyCumsumCumprod) {
  uint64_t seed = 13000;
  for (ember::ScalarType dt : kAllTypes) {
    for (const Input& in : inputs(dt, seed += 100)) {
      const torch::Tensor tt = to_torch(in.t);
      check("all " + in.name, [&] { return ember::all(in.t); }, [&] { return torch::all(tt); });
      check("any " + in.name, [&] { return ember::any(in.t); }, [&] { return torch::any(tt); });
      for (int64_t d : single_dims(in.t.dim())) {
        for (bool keepdim : {false, true}) {
          check(describe("all", in, dt, {d}, keepdim), [&] { return ember::all(in.t, d, keepdim); },
                [&] { return torch::all(tt, d, keepdim); });
          check(describe("any", in, dt, {d}, keepdim), [&] { return ember::any(in.t, d, keepdim); },
                [&] { return torch::any(tt, d, keepdim); });
        }
        check(describe("cumsum", in, dt, {d}, false), [&] { return ember::cumsum(in.t, d); },
              [&] { return exact(tt, [&](const torch::Tensor& x) { return torch::cumsum(x, d); }); });
        check(describe("cumsum double", in, dt, {d}, false), [&] { return ember::cumsum(in.t, d, ember::kDouble); },
              [&] { return torch::cumsum(tt, d, torch::kDouble); });
        check(describe("cumsum int8", in, dt, {d}, false), [&] { return ember::cumsum(in.t, d, ember::kChar); },
              [&] { return torch::cumsum(tt, d, torch::kChar); });
        if (in.t.numel() <= 300) {  // longer products over- and underflow
          check(describe("cumprod", in, dt, {d}, false), [&] { return ember::cumprod(in.t, d); },
                [&] { return exact(tt, [&](const torch::Tensor& x) { return torch::cumprod(x, d); }); });
        }
      }
    }
  }
}

TEST(ReduceParity, SortArgsortTopkKthvalue) {
  uint64_t seed = 17000;
  for (ember::ScalarType dt : kAllTypes) {
    for (const Input& in : inputs(dt, seed += 100)) {
      const torch::Tensor tt = to_torch(in.t);
      const torch::Tensor tsel = selectable(tt);
      auto back = [&](std::tuple<torch::Tensor, torch::Tensor> r) {
        return std::make_tuple(std::get<0>(r).to(tt.scalar_type()), std::get<1>(r));
      };
      for (int64_t d : single_dims(in.t.dim())) {
        for (bool desc : {false, true}) {
          // stable sorts agree on indices even with ties (integer data has many); libtorch sorts
          // once for both checks
          std::optional<std::tuple<torch::Tensor, torch::Tensor>> sorted;
          auto torch_sort = [&]() -> const std::tuple<torch::Tensor, torch::Tensor>& {
            if (!sorted) sorted = torch::sort(tsel, true, d, desc);
            return *sorted;
          };
          check2(describe(desc ? "sort desc" : "sort", in, dt, {d}, false),
                 [&] { return ember::sort(in.t, true, d, desc); }, [&] { return back(torch_sort()); });
          check(describe("argsort", in, dt, {d}, false), [&] { return ember::argsort(in.t, d, desc); },
                [&] { return std::get<1>(torch_sort()); });
        }
        const int64_t n = in.t.dim() == 0 ? 1 : in.t.size(d);
        for (int64_t k : {int64_t{0}, int64_t{1}, std::min<int64_t>(n, 3), n}) {
          for (bool largest : {true, false}) {
            // the order of equal elements is unspecified: compare the values, and the input
            // values found at the returned indices
            const std::string what = describe("topk k=" + std::to_string(k) + (largest ? "" : " smallest"), in, dt, {d}, false);
            std::optional<std::tuple<ember::Tensor, ember::Tensor>> ours;  // one call for both checks
            auto topk = [&]() -> const std::tuple<ember::Tensor, ember::Tensor>& {
              if (!ours) ours = ember::topk(in.t, k, d, largest);
              return *ours;
            };
            check(what, [&] { return std::get<0>(topk()); },
                  [&] { return std::get<0>(back(torch::topk(tsel, k, d, largest))); });
            if (k > n) continue;
            check(what + " indices", [&] { return std::get<0>(topk()); },
                  [&] {
                    const torch::Tensor idx = to_torch(std::get<1>(topk()));
                    return tt.dim() == 0 ? tt : torch::gather(tt, d, idx);
                  });
          }
        }
        for (int64_t k : {int64_t{1}, (n + 1) / 2, n}) {
          for (bool keepdim : {false, true}) {
            const std::string what = describe("kthvalue k=" + std::to_string(k), in, dt, {d}, keepdim);
            check(what, [&] { return std::get<0>(ember::kthvalue(in.t, k, d, keepdim)); },
                  [&] { return std::get<0>(back(torch::kthvalue(tsel, k, d, keepdim))); });
            if (n > 0 && in.t.dim() > 0) {
              check(what + " indices", [&] { return std::get<0>(ember::kthvalue(in.t, k, d, true)); },
                    [&] { return torch::gather(tt, d, to_torch(std::get<1>(ember::kthvalue(in.t, k, d, true)))); });
            }
          }
        }
      }
    }
  }
}

// max/min with indices where the vector scans take over: lines of every length around the SIMD
// widths (lanes along a line, two accumulators, the scalar tail), neighbours across lines (full
// vectors and the tail), many ties (the first position must win), NaN anywhere in a line (the
// first NaN wins), infinities, transposed views, and 2 threads splitting long lines.
TEST(ReduceParity, MaxMinIndicesVectorScans) {
  const ember::ScalarType types[] = {ember::kFloat, ember::kDouble, ember::kHalf, ember::kBFloat16,
                                     ember::kInt,   ember::kLong,   ember::kChar};
  uint64_t seed = 7100;
  for (ember::ScalarType dt : types) {
    for (int64_t len : {1, 2, 7, 15, 16, 17, 31, 32, 33, 48, 63, 64, 65, 130, 257}) {
      for (const std::vector<int64_t>& shape : {std::vector<int64_t>{5, len}, std::vector<int64_t>{len, 37}}) {
        ember::Generator g(seed++);
        // values in {-2, ..., 2}: ties everywhere
        ember::Tensor x = ember::randint(-2, 3, shape, &g, ember::TensorOptions().dtype(ember::kFloat));
        if (ember::is_floating_type(dt)) {
          float* p = x.data_ptr<float>();
          const int64_t n = x.numel();
          for (int64_t i = 0; i < n; ++i) {
            const uint64_t h = (static_cast<uint64_t>(i) * 2654435761u + seed) % 97;
            if (h == 3) p[i] = std::numeric_limits<float>::quiet_NaN();
            if (h == 5) p[i] = std::numeric_limits<float>::infinity();
            if (h == 7) p[i] = -std::numeric_limits<float>::infinity();
            if (h == 11) p[i] = -0.0f;
          }
        }
        const ember::Tensor a = x.to(dt);
        for (const ember::Tensor& v : {a, a.t()}) {  // contiguous and transposed
          const torch::Tensor tv = to_torch(v);
          for (int64_t d : {0, 1}) {
            std::ostringstream what;
            what << dt << " " << v.sizes() << (v.is_contiguous() ? "" : " transposed") << " dim " << d;
            check2("max " + what.str(), [&] { return ember::max(v, d); }, [&] { return torch::max(tv, d); });
            check2("min " + what.str(), [&] { return ember::min(v, d, true); }, [&] { return torch::min(tv, d, true); });
            check("argmax " + what.str(), [&] { return ember::argmax(v, d); }, [&] { return torch::argmax(selectable(tv), d); });
          }
        }
      }
    }
  }
  // few long lines on 2 threads: each thread scans a range of positions, later ranges win only
  // when strictly better
  const int threads = ember::get_num_threads();
  ember::set_num_threads(2);
  ember::Generator g(77);
  ember::Tensor x = ember::randint(-50, 50, {3, 100003}, &g, ember::TensorOptions().dtype(ember::kFloat));
  x.data_ptr<float>()[100003 + 70000] = std::numeric_limits<float>::quiet_NaN();
  x.data_ptr<float>()[100003 + 90000] = std::numeric_limits<float>::quiet_NaN();
  for (ember::ScalarType dt : {ember::kFloat, ember::kBFloat16, ember::kLong}) {
    const ember::Tensor a = x.to(dt);
    const torch::Tensor ta = to_torch(a);
    check2("max long lines", [&] { return ember::max(a, 1); }, [&] { return torch::max(ta, 1); });
    check2("min long lines", [&] { return ember::min(a, 1); }, [&] { return torch::min(ta, 1); });
    check2("max long lines transposed", [&] { return ember::max(a.t(), 0); }, [&] { return torch::max(ta.t(), 0); });
  }
  ember::set_num_threads(threads);
}

TEST(ReduceParity, NaNAndInfinity) {
  for (ember::ScalarType dt : {ember::kFloat, ember::kDouble, ember::kHalf, ember::kBFloat16}) {
    ember::Tensor base = random({6, 50}, ember::kFloat, 99);
    float* p = base.data_ptr<float>();
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    p[1 * 50 + 3] = p[1 * 50 + 40] = p[5 * 50 + 20] = p[0 * 50 + 20] = nan;
    p[2 * 50 + 7] = p[4 * 50 + 0] = inf;
    p[3 * 50 + 9] = p[4 * 50 + 1] = -inf;
    const ember::Tensor a = base.to(dt);
    const torch::Tensor ta = to_torch(a), tsel = selectable(ta);
    auto back = [&](const torch::Tensor& r) { return r.to(ta.scalar_type()); };
    for (int64_t d : {0, 1}) {
      check2("max nan", [&] { return ember::max(a, d); }, [&] { return torch::max(ta, d); });
      check2("min nan", [&] { return ember::min(a, d); }, [&] { return torch::min(ta, d); });
      check("argmax nan", [&] { return ember::argmax(a, d); }, [&] { return torch::argmax(ta, d); });
      check("amax nan", [&] { return ember::amax(a, d); }, [&] { return torch::amax(ta, d); });
      check("amin nan", [&] { return ember::amin(a, d); }, [&] { return torch::amin(ta, d); });
      check("sum nan", [&] { return ember::sum(a, d); }, [&] { return torch::sum(ta, d); });
      check("prod nan", [&] { return ember::prod(a, d); },
            [&] { return exact(ta, [&](const torch::Tensor& x) { return torch::prod(x, d); }); });
      check2("sort nan", [&] { return ember::sort(a, true, d, false); }, [&] {
        auto [v, i] = torch::sort(tsel, true, d, false);
        return std::make_tuple(back(v), i);
      });
      check2("sort nan desc", [&] { return ember::sort(a, true, d, true); }, [&] {
        auto [v, i] = torch::sort(tsel, true, d, true);
        return std::make_tuple(back(v), i);
      });
      check("topk nan", [&] { return std::get<0>(ember::topk(a, 3, d)); }, [&] { return back(std::get<0>(torch::topk(tsel, 3, d))); });
      check("topk nan smallest", [&] { return std::get<0>(ember::topk(a, 3, d, false)); },
            [&] { return back(std::get<0>(torch::topk(tsel, 3, d, false))); });
      check("kthvalue nan", [&] { return std::get<0>(ember::kthvalue(a, 5, d)); },
            [&] { return back(std::get<0>(torch::kthvalue(tsel, 5, d))); });
      check("norm inf nan", [&] { return ember::norm(a, INFINITY, {d}); }, [&] { return torch::norm(ta, INFINITY, {d}); });
      check("norm -inf nan", [&] { return ember::norm(a, -INFINITY, {d}); }, [&] { return torch::norm(ta, -INFINITY, {d}); });
      check("norm 2 inf", [&] { return ember::norm(a, 2, {d}); },
            [&] { return exact(ta, [&](const torch::Tensor& x) { return torch::norm(x, 2, {d}); }); });
      check("cumsum nan", [&] { return ember::cumsum(a, d); },
            [&] { return exact(ta, [&](const torch::Tensor& x) { return torch::cumsum(x, d); }); });
      check("logsumexp inf", [&] { return ember::logsumexp(a, {d}); },
            [&] { return exact(ta, [&](const torch::Tensor& x) { return torch::logsumexp(x, {d}); }); });
    }
    check("max all nan", [&] { return ember::max(a); }, [&] { return torch::max(ta); });
    // all/any over rows of zeros: +0 and -0 are false, NaN is true, a nonzero in a row's tail
    ember::Tensor z = ember::zeros({5, 50});
    float* q = z.data_ptr<float>();
    q[1 * 50 + 33] = nan;
    q[2 * 50 + 48] = 1;
    for (int i = 0; i < 50; ++i) q[3 * 50 + i] = -0.0f;
    for (int i = 0; i < 50; ++i) q[4 * 50 + i] = i == 20 ? 0.0f : -inf;
    const ember::Tensor zt = z.to(dt);
    const torch::Tensor tz = to_torch(zt);
    for (int64_t d : {0, 1}) {
      check("all zeros", [&] { return ember::all(zt, d); }, [&] { return torch::all(tz, d); });
      check("any zeros", [&] { return ember::any(zt, d); }, [&] { return torch::any(tz, d); });
      check("all zeros t", [&] { return ember::all(zt.t(), d); }, [&] { return torch::all(tz.t(), d); });
      check("any zeros t", [&] { return ember::any(zt.t(), d); }, [&] { return torch::any(tz.t(), d); });
    }
    check("argmin all nan", [&] { return ember::argmin(a); }, [&] { return torch::argmin(ta); });
  }
  // max/min over a few rows far apart (4 x 70001: 1.1 MB from the first row to the last) read
  // each row as one run: NaN in the first, a middle and the last row, infinities, a scalar tail
  for (ember::ScalarType dt : {ember::kFloat, ember::kDouble}) {
    constexpr int64_t kCols = 70001;
    ember::Tensor base = random({4, kCols}, ember::kFloat, 98);
    float* p = base.data_ptr<float>();
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    p[0 * kCols + 5] = p[2 * kCols + 5] = p[1 * kCols + 300] = p[3 * kCols + kCols - 1] = nan;
    p[3 * kCols + 300] = p[0 * kCols + 4000] = inf;
    p[2 * kCols + 4000] = p[1 * kCols + 4001] = -inf;
    const ember::Tensor a = base.to(dt);
    const torch::Tensor ta = to_torch(a);
    check("amax far rows", [&] { return ember::amax(a, 0); }, [&] { return torch::amax(ta, 0); });
    check("amin far rows", [&] { return ember::amin(a, 0); }, [&] { return torch::amin(ta, 0); });
  }
  // logsumexp over rows of only infinities
  const ember::Tensor e = ember::tensor({{INFINITY, INFINITY}, {-INFINITY, -INFINITY}, {INFINITY, -INFINITY}, {-INFINITY, 1.0}});
  check("logsumexp infinities", [&] { return ember::logsumexp(e, {1}); }, [&] { return torch::logsumexp(to_torch(e), {1}); });
}

TEST(ReduceParity, LargeFloatSumsStayAccurate) {
  // 16M elements: the error of a naive float32 sum is ~1e-3 relative, far outside the tolerance.
  ember::Generator g(5);
  const ember::Tensor x = ember::rand({int64_t{1} << 24}, &g);
  const torch::Tensor tx = to_torch(x);
  using T = torch::Tensor;
  check("sum 16M", [&] { return ember::sum(x); }, [&] { return exact(tx, [](const T& t) { return torch::sum(t); }); });
  check("mean 16M", [&] { return ember::mean(x); }, [&] { return exact(tx, [](const T& t) { return torch::mean(t); }); });
  check("norm 16M", [&] { return ember::norm(x); }, [&] { return exact(tx, [](const T& t) { return torch::norm(t); }); });
  check("var 16M", [&] { return ember::var(x); }, [&] { return exact(tx, [](const T& t) { return torch::var(t); }); });
  const ember::Tensor m = x.view({4096, 4096});
  const torch::Tensor tm = tx.view({4096, 4096});
  check("sum 4096x4096 dim 0", [&] { return ember::sum(m, 0); },
        [&] { return exact(tm, [](const T& t) { return torch::sum(t, 0); }); });
  check("sum 4096x4096 dim 1", [&] { return ember::sum(m, 1); },
        [&] { return exact(tm, [](const T& t) { return torch::sum(t, 1); }); });
  const ember::Tensor h = x.to(ember::kHalf);
  check("sum 16M half", [&] { return ember::sum(h); },
        [&] { return exact(to_torch(h), [](const T& t) { return torch::sum(t); }); });
  const ember::Tensor b = x.to(ember::kBFloat16);
  check("mean 16M bfloat16", [&] { return ember::mean(b); },
        [&] { return exact(to_torch(b), [](const T& t) { return torch::mean(t); }); });
}

// Integer sums along outer dims (eight rows at a time, summed straight into an int64 output):
// row counts either side of 4 and 8 and their multiples, output rows across the 256-output chunks,
// several runs of reduced positions (dims 0 and 1 of a 3-D input), a kept dim before the
// contiguous one, and an output of another dtype (sum_out into int32: through the accumulator).
TEST(ReduceParity, IntegerSumsOverOuterDims) {
  uint64_t seed = 70;
  for (ember::ScalarType dt : {ember::kLong, ember::kInt, ember::kChar, ember::kByte, ember::kBool}) {
    for (int64_t rows : {1, 3, 4, 7, 8, 9, 12, 16, 17, 25}) {
      std::ostringstream what;
      what << dt << ", " << rows << " rows";
      SCOPED_TRACE(what.str());
      const ember::Tensor x = random({rows, 300}, dt, ++seed);
      EXPECT_TRUE(Close(ember::sum(x, 0), torch::sum(to_torch(x), 0)));
      const ember::Tensor y = random({rows, 3, 70}, dt, ++seed);
      EXPECT_TRUE(Close(ember::sum(y, 0), torch::sum(to_torch(y), 0)));
      EXPECT_TRUE(Close(ember::sum(y, {0, 1}), torch::sum(to_torch(y), at::IntArrayRef{0, 1})));
      EXPECT_TRUE(Close(ember::sum(y, {0, 1}, true), torch::sum(to_torch(y), at::IntArrayRef{0, 1}, true)));
      ember::Tensor out = ember::empty({3, 70}, ember::TensorOptions().dtype(ember::kInt));
      torch::Tensor tout = torch::empty({3, 70}, torch::TensorOptions().dtype(torch::kInt));
      ember::sum_out(out, y, 0);
      torch::sum_out(tout, to_torch(y), at::IntArrayRef{0});
      EXPECT_TRUE(Close(out, tout)) << "into int32";
    }
  }
}

TEST(ReduceParity, SumOutMatchesOutDtypeRules) {
  const ember::Tensor x = random({4, 6}, ember::kFloat, 3) * 3;
  const torch::Tensor tx = to_torch(x);
  for (ember::ScalarType out_dt : {ember::kFloat, ember::kDouble, ember::kInt, ember::kHalf}) {
    // empty out tensors are resized without libtorch's deprecation warning
    ember::Tensor out = ember::empty({0}, ember::TensorOptions().dtype(out_dt));
    torch::Tensor tout = torch::empty({0}, torch::TensorOptions().dtype(parity::to_torch(out_dt)));
    ember::sum_out(out, x, 1);
    torch::sum_out(tout, tx, at::IntArrayRef{1});
    EXPECT_TRUE(Close(out, tout)) << out_dt;
  }
}

}  // namespace EMBER_UNITY_FILE
