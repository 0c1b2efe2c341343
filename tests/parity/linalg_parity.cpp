// Matrix products against libtorch: every op over shapes (1-D, batched with broadcast, empty),
// layouts (transposed, sliced with step, expanded) and dtypes.
//
// Two reference rules:
//  - tolerance: the two libraries sum the K products of a dot product in different orders (and
//    different blockings), so results may differ by the rounding of that sum: up to K * 4 * eps
//    of the accumulation type for inputs below 2 in magnitude. product_tol adds that to the
//    dtype's tolerance.
//  - 16-bit floats: Ember computes in float32 and rounds once. libtorch 1.13 has no CPU float16
//    matrix products ("addmm_impl_cpu_" not implemented for 'Half'), and its bfloat16 products
//    accumulate in bfloat16 except where it calls oneDNN (2-D products above 16*16*16
//    multiply-adds): 8x16x16 products land up to 0.11 from the exact result where rounding the
//    float32 result gives 0.026. So the reference for both is libtorch's float32 result rounded;
//    BFloat16MatchesLibtorchOneDnnProducts compares with libtorch's own bfloat16 results where
//    libtorch computes them the same way.
#include "parity/parity.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using parity::Close;
using parity::random;
using parity::to_torch;

namespace {

const ember::ScalarType kTypes[] = {ember::kFloat, ember::kDouble, ember::kBFloat16, ember::kHalf, ember::kLong};
const ember::ScalarType kIntTypes[] = {ember::kByte, ember::kChar, ember::kShort, ember::kInt};

parity::Tol product_tol(ember::ScalarType t, int64_t k) {
  parity::Tol tol = parity::default_tol(t);
  const double eps = t == ember::kDouble ? 0x1p-53 : (ember::is_floating_type(t) ? 0x1p-24 : 0.0);
  tol.atol += static_cast<double>(k) * 4 * eps;
  return tol;
}

// libtorch's input for an Ember tensor: 16-bit floats go in as float32 (see above).
torch::Tensor ref_in(const ember::Tensor& e) {
  torch::Tensor t = to_torch(e);
  return e.dtype() == ember::kHalf || e.dtype() == ember::kBFloat16 ? t.to(torch::kFloat) : t;
}
torch::Tensor ref_out(const torch::Tensor& t, ember::ScalarType dt) { return t.to(parity::to_torch(dt)); }

// An operand of the given logical shape in one of several layouts.
enum class Layout { Contiguous, Transposed, Strided };
const Layout kLayouts[] = {Layout::Contiguous, Layout::Transposed, Layout::Strided};

ember::Tensor make(std::vector<int64_t> sizes, ember::ScalarType dt, uint64_t seed, Layout layout) {
  const size_t nd = sizes.size();
  if (layout == Layout::Transposed && nd >= 2) {
    std::swap(sizes[nd - 1], sizes[nd - 2]);
    return random(sizes, dt, seed).transpose(-1, -2);
  }
  if (layout == Layout::Strided && nd >= 1) {
    const int64_t last = sizes.back();
    sizes.back() = 2 * last + 1;
    return random(sizes, dt, seed).slice(-1, 1, 2 * last + 1, 2);
  }
  return random(sizes, dt, seed);
}

struct MmShape {
  int64_t m, k, n;
};
const MmShape kMmShapes[] = {{1, 1, 1},    {3, 5, 4},     {8, 16, 16},   {17, 33, 9},  {5, 1, 7},   {1, 40, 30},
                             {30, 40, 1},  {64, 64, 64},  {100, 70, 90}, {0, 3, 4},    {3, 0, 4},   {3, 4, 0},
                             {7, 300, 50}, {300, 260, 257}};

}  // namespace

TEST(LinalgParity, Mm) {
  uint64_t seed = 1;
  for (ember::ScalarType dt : kTypes) {
    for (const MmShape& s : kMmShapes) {
      if (s.m * s.n * s.k > 1000000 && dt != ember::kFloat && dt != ember::kBFloat16) continue;  // time
      for (Layout la : kLayouts) {
        for (Layout lb : kLayouts) {
          ember::Tensor a = make({s.m, s.k}, dt, seed++, la), b = make({s.k, s.n}, dt, seed++, lb);
          EXPECT_TRUE(Close(ember::mm(a, b), ref_out(torch::mm(ref_in(a), ref_in(b)), dt), product_tol(dt, s.k)))
              << dt << " " << s.m << "x" << s.k << "x" << s.n << " layouts " << int(la) << int(lb);
        }
      }
    }
  }
}

TEST(LinalgParity, MmSmallIntegerTypesWrap) {
  uint64_t seed = 50;
  for (ember::ScalarType dt : kIntTypes) {
    for (const MmShape& s : {MmShape{3, 5, 4}, MmShape{17, 40, 33}, MmShape{4, 0, 3}}) {
      ember::Tensor a = make({s.m, s.k}, dt, seed++, Layout::Transposed), b = make({s.k, s.n}, dt, seed++, Layout::Strided);
      // products of values up to 8 over K = 40 overflow int8 and uint8: both libraries wrap
      EXPECT_TRUE(Close(ember::mm(a, b), torch::mm(to_torch(a), to_torch(b)))) << dt;
    }
  }
}

TEST(LinalgParity, Bmm) {
  uint64_t seed = 100;
  const std::vector<std::vector<int64_t>> shapes = {{2, 3, 4, 5}, {5, 17, 9, 33}, {0, 3, 4, 5}, {3, 0, 4, 5},
                                                    {3, 4, 0, 5}, {4, 64, 64, 64}, {1, 1, 1, 1}, {3, 33, 1, 20}};
  for (ember::ScalarType dt : kTypes) {
    for (const auto& s : shapes) {
      for (Layout la : kLayouts) {
        ember::Tensor a = make({s[0], s[1], s[2]}, dt, seed++, la), b = make({s[0], s[2], s[3]}, dt, seed++, Layout::Transposed);
        EXPECT_TRUE(Close(ember::bmm(a, b), ref_out(torch::bmm(ref_in(a), ref_in(b)), dt), product_tol(dt, s[2])))
            << dt << " " << ember::IntArrayRef(s) << " layout " << int(la);
      }
      // batch-major layouts: batch dim innermost in memory, and a broadcast (stride 0) batch
      ember::Tensor a = random({s[1], s[2], s[0]}, dt, seed++).permute({2, 0, 1});
      ember::Tensor b = random({s[2], s[3]}, dt, seed++).unsqueeze(0).expand({s[0], s[2], s[3]});
      EXPECT_TRUE(Close(ember::bmm(a, b), ref_out(torch::bmm(ref_in(a), ref_in(b)), dt), product_tol(dt, s[2])))
          << dt << " " << ember::IntArrayRef(s) << " permuted/expanded";
    }
  }
}

TEST(LinalgParity, MatmulShapes) {
  const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>> cases = {
      {{4}, {4}},          {{3, 4}, {4}},          {{4}, {4, 5}},          {{3, 4}, {4, 5}},
      {{2, 3, 4}, {4, 5}}, {{2, 3, 4}, {4}},       {{4}, {2, 4, 5}},       {{3, 4}, {2, 4, 5}},
      {{2, 3, 4}, {2, 4, 5}}, {{2, 1, 3, 4}, {5, 4, 6}}, {{1, 3, 4}, {6, 4, 5}}, {{0, 3, 4}, {4, 5}},
      {{2, 0, 3, 4}, {1, 4, 2}}, {{0}, {0}},       {{3, 0}, {0, 2}},       {{7, 1, 40, 50}, {3, 50, 60}},
      {{70, 33, 40}, {40, 30}}};
  uint64_t seed = 200;
  for (ember::ScalarType dt : kTypes) {
    for (const auto& [sa, sb] : cases) {
      ember::Tensor a = random(sa, dt, seed++), b = random(sb, dt, seed++);
      EXPECT_TRUE(Close(ember::matmul(a, b), ref_out(torch::matmul(ref_in(a), ref_in(b)), dt),
                        product_tol(dt, sa.back())))
          << dt << " " << ember::IntArrayRef(sa) << " @ " << ember::IntArrayRef(sb);
    }
  }
}

TEST(LinalgParity, AddmmBetaAlphaAndAddendShapes) {
  uint64_t seed = 300;
  const std::vector<std::vector<int64_t>> self_shapes = {{5}, {1, 5}, {4, 5}, {}, {4, 1}, {1}};
  const std::pair<double, double> coeffs[] = {{1, 1}, {0.5, 2}, {2, 2}, {0, 1}, {1, 0}, {0, 0}, {-1, 0.25}};
  for (ember::ScalarType dt : kTypes) {
    for (int64_t k : {3, 64}) {
      const int64_t m = k == 64 ? 40 : 4, n = k == 64 ? 50 : 5;
      for (auto ss : self_shapes) {
        for (int64_t& v : ss) v = v == 4 ? m : (v == 5 ? n : v);
        for (auto [beta, alpha] : coeffs) {
          if (!ember::is_floating_type(dt) && (beta != std::floor(beta) || alpha != std::floor(alpha))) continue;
          ember::Tensor self = random(ss, dt, seed++), a = make({m, k}, dt, seed++, Layout::Transposed),
                        b = make({k, n}, dt, seed++, Layout::Contiguous);
          EXPECT_TRUE(Close(ember::addmm(self, a, b, beta, alpha),
                            ref_out(torch::addmm(ref_in(self), ref_in(a), ref_in(b), beta, alpha), dt),
                            product_tol(dt, k)))
              << dt << " self " << ember::IntArrayRef(ss) << " k " << k << " beta " << beta << " alpha " << alpha;
        }
      }
    }
  }
}

// With alpha = 0 Ember computes 0 * (a @ b): a NaN or infinity in an operand reaches its row or
// column of the result, and finite operands contribute exactly 0 (no uninitialized read: oneDNN's
// gemm-based kernels, which CPUs without bfloat16 instructions run, skip such a product).
// libtorch's own addmm is no reference here: it hands alpha 0 to its BLAS, and OpenBLAS's answer
// depends on the kernels it picks for the CPU. Its SkylakeX kernels propagate; the generic ones
// follow the reference BLAS, which does not read a and b when alpha is 0 (OpenBLAS 0.3.21 takes
// those on a Sapphire Rapids guest it does not recognize, "Core: Prescott"). The reference is
// libtorch's product scaled by 0, plus beta * self.
TEST(LinalgParity, AddmmAlphaZeroPropagatesNonFiniteOperands) {
  uint64_t seed = 350;
  for (ember::ScalarType dt : {ember::kFloat, ember::kDouble, ember::kBFloat16}) {
    for (int64_t k : {3, 64}) {
      const int64_t m = k == 64 ? 40 : 4, n = k == 64 ? 50 : 5;
      ember::Tensor self = random({m, n}, dt, seed++), a = make({m, k}, dt, seed++, Layout::Transposed),
                    b = make({k, n}, dt, seed++, Layout::Contiguous);
      a.select(0, 1).select(0, 1).fill_(NAN);
      b.select(0, 2).select(0, 2).fill_(INFINITY);
      const torch::Tensor scaled_product = torch::mm(ref_in(a), ref_in(b)).mul(0);
      for (double beta : {1.0, 0.0}) {
        const torch::Tensor ref = beta == 0 ? scaled_product : scaled_product.add(ref_in(self), beta);
        EXPECT_TRUE(Close(ember::addmm(self, a, b, beta, 0), ref_out(ref, dt), product_tol(dt, k)))
            << dt << " k " << k << " beta " << beta;
      }
    }
  }
}

TEST(LinalgParity, AddmmIntegerCoefficientsTruncate) {
  ember::Tensor self = random({5}, ember::kLong, 1), a = random({4, 3}, ember::kLong, 2), b = random({3, 5}, ember::kLong, 3);
  EXPECT_TRUE(Close(ember::addmm(self, a, b, 1.5, 2.7), torch::addmm(to_torch(self), to_torch(a), to_torch(b), 1.5, 2.7)));
}

TEST(LinalgParity, BetaZeroIgnoresNan) {
  ember::Tensor nan2 = ember::full({4, 5}, NAN), nan3 = ember::full({2, 4, 5}, NAN), nan1 = ember::full({4}, NAN);
  ember::Tensor a = random({4, 3}, ember::kFloat, 1), b = random({3, 5}, ember::kFloat, 2);
  ember::Tensor ba = random({2, 4, 3}, ember::kFloat, 3), bb = random({2, 3, 5}, ember::kFloat, 4);
  ember::Tensor v = random({3}, ember::kFloat, 5);
  EXPECT_TRUE(Close(ember::addmm(nan2, a, b, 0), torch::addmm(to_torch(nan2), to_torch(a), to_torch(b), 0)));
  // libtorch 1.13's baddbmm with beta = 0 may return NaN (see AddmvBaddbmm), against its own
  // documentation ("nan and inf in it will not be propagated"): the reference is the plain product.
  EXPECT_TRUE(Close(ember::baddbmm(nan3, ba, bb, 0), torch::bmm(to_torch(ba), to_torch(bb))));
  EXPECT_TRUE(Close(ember::addmv(nan1, a, v, 0), torch::addmv(to_torch(nan1), to_torch(a), to_torch(v), 0)));
}

TEST(LinalgParity, AddmvBaddbmm) {
  uint64_t seed = 400;
  for (ember::ScalarType dt : kTypes) {
    for (int64_t k : {5, 70}) {
      for (auto [beta, alpha] : {std::pair<double, double>{1, 1}, {2, 3}, {0, 1}}) {
        ember::Tensor mat = make({6, k}, dt, seed++, Layout::Transposed), vec = make({k}, dt, seed++, Layout::Strided);
        for (auto ss : {std::vector<int64_t>{6}, std::vector<int64_t>{1}, std::vector<int64_t>{}}) {
          ember::Tensor self = random(ss, dt, seed++);
          EXPECT_TRUE(Close(ember::addmv(self, mat, vec, beta, alpha),
                            ref_out(torch::addmv(ref_in(self), ref_in(mat), ref_in(vec), beta, alpha), dt),
                            product_tol(dt, k)))
              << "addmv " << dt << " k " << k;
        }
        ember::Tensor b1 = make({3, 6, k}, dt, seed++, Layout::Strided), b2 = make({3, k, 7}, dt, seed++, Layout::Transposed);
        for (auto ss : {std::vector<int64_t>{7}, std::vector<int64_t>{3, 1, 7}, std::vector<int64_t>{3, 6, 7},
                        std::vector<int64_t>{6, 1}}) {
          ember::Tensor self = random(ss, dt, seed++);
          // with beta = 0 libtorch 1.13's baddbmm reads its uninitialized result (NaN at random);
          // the documented value is alpha * bmm
          const torch::Tensor ref = beta == 0 ? torch::bmm(ref_in(b1), ref_in(b2)).mul(alpha)
                                              : torch::baddbmm(ref_in(self), ref_in(b1), ref_in(b2), beta, alpha);
          EXPECT_TRUE(Close(ember::baddbmm(self, b1, b2, beta, alpha), ref_out(ref, dt), product_tol(dt, k)))
              << "baddbmm " << dt << " k " << k << " self " << ember::IntArrayRef(ss);
        }
      }
    }
  }
}

TEST(LinalgParity, DotVdotMvOuter) {
  uint64_t seed = 500;
  for (ember::ScalarType dt : kTypes) {
    for (int64_t n : {0, 1, 7, 100, 70000}) {
      ember::Tensor x = make({n}, dt, seed++, Layout::Contiguous), y = make({n}, dt, seed++, Layout::Strided);
      EXPECT_TRUE(Close(ember::dot(x, y), ref_out(torch::dot(ref_in(x), ref_in(y)), dt), product_tol(dt, n)))
          << "dot " << dt << " " << n;
      EXPECT_TRUE(Close(ember::vdot(x, y), ref_out(torch::vdot(ref_in(x), ref_in(y)), dt), product_tol(dt, n)))
          << "vdot " << dt << " " << n;
      if (n > 1000) continue;
      for (Layout lm : kLayouts) {
        ember::Tensor mat = make({9, n}, dt, seed++, lm);
        EXPECT_TRUE(Close(ember::mv(mat, y), ref_out(torch::mv(ref_in(mat), ref_in(y)), dt), product_tol(dt, n)))
            << "mv " << dt << " " << n << " layout " << int(lm);
      }
      ember::Tensor z = random({5}, ember::kDouble, seed++);
      EXPECT_TRUE(Close(ember::outer(x, z), torch::outer(to_torch(x), to_torch(z)))) << "outer " << dt;
      EXPECT_TRUE(Close(ember::outer(x, y), torch::outer(to_torch(x), to_torch(y)))) << "outer " << dt;
    }
  }
}

TEST(LinalgParity, Linear) {
  uint64_t seed = 600;
  const std::vector<std::vector<int64_t>> inputs = {{16}, {8, 16}, {2, 3, 16}, {0, 16}, {70, 40, 16}};
  for (ember::ScalarType dt : kTypes) {
    for (const auto& in : inputs) {
      for (int64_t out_features : {1, 16, 33}) {
        ember::Tensor x = random(in, dt, seed++), w = random({out_features, 16}, dt, seed++),
                      bias = random({out_features}, dt, seed++);
        const torch::Tensor tx = ref_in(x), tw = ref_in(w), tb = ref_in(bias);
        EXPECT_TRUE(Close(ember::nn::functional::linear(x, w), ref_out(torch::nn::functional::linear(tx, tw), dt),
                          product_tol(dt, 16)))
            << dt << " " << ember::IntArrayRef(in) << " -> " << out_features;
        EXPECT_TRUE(Close(ember::nn::functional::linear(x, w, bias),
                          ref_out(torch::nn::functional::linear(tx, tw, tb), dt), product_tol(dt, 16)))
            << dt << " " << ember::IntArrayRef(in) << " -> " << out_features << " with bias";
        EXPECT_TRUE(Close(ember::linear(x, w, bias), ref_out(torch::linear(tx, tw, tb), dt), product_tol(dt, 16)));
      }
    }
    ember::Tensor x = random({4, 16}, dt, seed++), w1 = random({16}, dt, seed++), b1 = random({}, dt, seed++);
    ember::Tensor x3 = random({4, 16}, dt, seed++).unsqueeze(1).expand({4, 3, 16});  // not contiguous
    EXPECT_TRUE(Close(ember::nn::functional::linear(x, w1), ref_out(torch::nn::functional::linear(ref_in(x), ref_in(w1)), dt),
                      product_tol(dt, 16)))
        << dt << " 1-D weight";
    EXPECT_TRUE(Close(ember::nn::functional::linear(x3, w1, b1),
                      ref_out(torch::nn::functional::linear(ref_in(x3), ref_in(w1), ref_in(b1)), dt), product_tol(dt, 16)))
        << dt << " 1-D weight, bias";
    ember::Tensor full_bias = random({4, 5}, dt, seed++), w = random({5, 16}, dt, seed++);
    EXPECT_TRUE(Close(ember::nn::functional::linear(x, w, full_bias),
                      ref_out(torch::nn::functional::linear(ref_in(x), ref_in(w), ref_in(full_bias)), dt),
                      product_tol(dt, 16)))
        << dt << " 2-D bias";
  }
}

TEST(LinalgParity, BFloat16MatchesLibtorchOneDnnProducts) {
  uint64_t seed = 800;
  // (7, 300, 50): a transposed weight AMX's kernel gets wrong (so copied there); (8, 2048, 1000):
  // ResNet-50's classifier at batch 8, given transposed to oneDNN without AMX.
  for (const MmShape& s : {MmShape{17, 33, 9}, MmShape{64, 64, 64}, MmShape{100, 70, 90}, MmShape{300, 260, 257},
                           MmShape{7, 300, 50}, MmShape{8, 2048, 1000}}) {
    for (Layout la : kLayouts) {
      ember::Tensor a = make({s.m, s.k}, ember::kBFloat16, seed++, la), b = make({s.k, s.n}, ember::kBFloat16, seed++, Layout::Transposed);
      ember::Tensor self = random({s.n}, ember::kBFloat16, seed++);
      // libtorch's operands: bfloat16, or their values in float32 where it has no oneDNN bfloat16 path
      auto T = [](const ember::Tensor& t) {
        return parity::libtorch_bfloat16_on_onednn() ? to_torch(t) : to_torch(t).to(torch::kFloat);
      };
      auto R = [](const torch::Tensor& t) { return t.to(torch::kBFloat16); };
      EXPECT_TRUE(Close(ember::mm(a, b), R(torch::mm(T(a), T(b))), product_tol(ember::kBFloat16, s.k)));
      EXPECT_TRUE(Close(ember::matmul(a, b), R(torch::matmul(T(a), T(b))), product_tol(ember::kBFloat16, s.k)));
      EXPECT_TRUE(Close(ember::addmm(self, a, b), R(torch::addmm(T(self), T(a), T(b))),
                        product_tol(ember::kBFloat16, s.k)));
      EXPECT_TRUE(Close(ember::linear(a, b.t(), self), R(torch::linear(T(a), T(b).t(), T(self))),
                        product_tol(ember::kBFloat16, s.k)));
    }
  }
}

TEST(LinalgParity, Einsum) {
  struct Case {
    const char* eq;
    std::vector<std::vector<int64_t>> shapes;
  };
  const Case cases[] = {
      {"ij,jk->ik", {{3, 4}, {4, 5}}},
      {"ij,jk", {{3, 4}, {4, 5}}},
      {"bij,bjk->bik", {{2, 3, 4}, {2, 4, 5}}},
      {"ij->ji", {{3, 4}}},
      {"ii->", {{4, 4}}},
      {"ii", {{4, 4}}},
      {"ii->i", {{4, 4}}},
      {"bii->bi", {{2, 3, 3}}},
      {"i,j->ij", {{3}, {4}}},
      {"bn,anm,bm->ba", {{2, 3}, {5, 3, 4}, {2, 4}}},
      {"ij->", {{3, 4}}},
      {"ij->j", {{3, 4}}},
      {"i,i->", {{7}, {7}}},
      {"ij,ij->ij", {{3, 4}, {3, 4}}},
      {"ij,ij->i", {{3, 4}, {3, 4}}},
      {"...ij,...jk->...ik", {{2, 1, 3, 4}, {5, 4, 6}}},
      {"i...->...", {{3, 2, 4}}},
      {"...i->i...", {{2, 3, 4}}},
      {"bhqd,bhkd->bhqk", {{2, 3, 5, 8}, {2, 3, 6, 8}}},
      {"ijk,jkl->il", {{2, 3, 4}, {3, 4, 5}}},
      {"ij,jk,kl->il", {{2, 3}, {3, 4}, {4, 5}}},
      {"ab,bc->ca", {{0, 3}, {3, 4}}},
      {"aij,ajk->ik", {{3, 4, 5}, {3, 5, 2}}},
      {"Ab,bC->AC", {{3, 4}, {4, 2}}},
      {"ij,kj->ik", {{1, 4}, {3, 4}}},
      {"ijj,jk->ik", {{2, 3, 3}, {3, 4}}},
  };
  uint64_t seed = 700;
  for (ember::ScalarType dt : {ember::kFloat, ember::kDouble, ember::kLong}) {
    for (const Case& c : cases) {
      std::vector<ember::Tensor> ops;
      std::vector<torch::Tensor> tops;
      for (const auto& s : c.shapes) {
        ops.push_back(random(s, dt, seed++));
        tops.push_back(to_torch(ops.back()));
      }
      EXPECT_TRUE(Close(ember::einsum(c.eq, ops), torch::einsum(c.eq, tops), product_tol(dt, 64))) << dt << " " << c.eq;
    }
  }
  // layouts: transposed and sliced operands
  ember::Tensor a = random({5, 3}, ember::kFloat, 1).t(), b = random({5, 11}, ember::kFloat, 2).slice(1, 0, 11, 2);
  EXPECT_TRUE(Close(ember::einsum("ij,jk->ik", {a, b}), torch::einsum("ij,jk->ik", {to_torch(a), to_torch(b)})));
  EXPECT_TRUE(Close(ember::einsum("ij,kj->ki", {a, b.t()}), torch::einsum("ij,kj->ki", {to_torch(a), to_torch(b).t()})));
}

TEST(LinalgParity, OutForms) {
  ember::Tensor a = random({6, 7}, ember::kFloat, 1), b = random({7, 5}, ember::kFloat, 2);
  const torch::Tensor ref = torch::mm(to_torch(a), to_torch(b));
  // a transposed (non-contiguous) out, a wrong-shaped out (resized), an out shared with self
  ember::Tensor out_t = ember::empty({5, 6}).t();
  EXPECT_TRUE(Close(ember::mm_out(out_t, a, b), ref));
  EXPECT_TRUE(Close(out_t, ref));
  ember::Tensor out_r = ember::empty({3});
  ember::mm_out(out_r, a, b);
  EXPECT_TRUE(Close(out_r, ref));
  ember::Tensor self = random({6, 5}, ember::kFloat, 3);
  const torch::Tensor ref_addmm = torch::addmm(to_torch(self), to_torch(a), to_torch(b), 0.5, 2);
  ember::addmm_out(self, self, a, b, 0.5, 2);
  EXPECT_TRUE(Close(self, ref_addmm));
  ember::Tensor ba = random({3, 4, 7}, ember::kDouble, 4), bb = random({3, 7, 2}, ember::kDouble, 5);
  ember::Tensor out_b = ember::empty({3, 4, 2}, ember::TensorOptions().dtype(ember::kDouble));
  ember::bmm_out(out_b, ba, bb);
  EXPECT_TRUE(Close(out_b, torch::bmm(to_torch(ba), to_torch(bb))));
  ember::Tensor out_m = ember::empty({0});
  ember::Tensor ma = random({2, 3, 7}, ember::kFloat, 6);
  ember::matmul_out(out_m, ma, b);
  EXPECT_TRUE(Close(out_m, torch::matmul(to_torch(ma), to_torch(b))));
  // in-place forms
  ember::Tensor s2 = random({6, 5}, ember::kFloat, 7);
  const torch::Tensor ref2 = to_torch(s2).addmm(to_torch(a), to_torch(b), 2, 3);
  s2.addmm_(a, b, 2, 3);
  EXPECT_TRUE(Close(s2, ref2));
  ember::Tensor s3 = random({3, 4, 2}, ember::kDouble, 8);
  const torch::Tensor ref3 = to_torch(s3).baddbmm(to_torch(ba), to_torch(bb), 0.5, 1);
  s3.baddbmm_(ba, bb, 0.5, 1);
  EXPECT_TRUE(Close(s3, ref3));
}

}  // namespace EMBER_UNITY_FILE
