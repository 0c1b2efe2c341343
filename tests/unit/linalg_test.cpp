// Matrix products: semantics (shapes, dtypes, addends, out= and in-place forms), errors worded as
// PyTorch's (with the op's name), and reuse of cached oneDNN primitives.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "unit/expect_error.h"
#include "kernels/cpu/onednn.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using namespace ember;

namespace {

const TensorOptions kF = TensorOptions().dtype(kFloat);
Tensor a2x3() { return tensor({{1., 2., 3.}, {4., 5., 6.}}, kF); }
Tensor b3x2() { return tensor({{1., 0.}, {0., 1.}, {1., 1.}}, kF); }
Tensor ab() { return tensor({{4., 5.}, {10., 11.}}, kF); }  // a2x3() @ b3x2()

std::vector<int64_t> shape(const Tensor& t) { return t.sizes().vec(); }

// Same shape and values (compared as float64; dtypes are checked separately where they matter).
bool same(const Tensor& a, const Tensor& b) {
  if (!a.sizes().equals(b.sizes())) return false;
  const Tensor x = a.to(kDouble).contiguous(), y = b.to(kDouble).contiguous();
  for (int64_t i = 0; i < x.numel(); ++i)
    if (x.data_ptr<double>()[i] != y.data_ptr<double>()[i]) return false;
  return true;
}

}  // namespace

TEST(Linalg, MmValuesLayoutsAndDtypes) {
  EXPECT_TRUE(same(mm(a2x3(), b3x2()), ab()));
  EXPECT_TRUE(mm(a2x3(), b3x2()).is_contiguous());
  // transposed and strided views give the same values
  const Tensor at = a2x3().t().contiguous().t();
  const Tensor bs = tensor({{1., 9., 0.}, {0., 9., 1.}, {1., 9., 1.}}, kF).slice(1, 0, 3, 2);
  EXPECT_TRUE(same(mm(at, bs), ab()));
  for (ScalarType dt : {kDouble, kBFloat16, kHalf, kLong, kInt, kChar, kByte, kShort}) {
    const Tensor r = mm(a2x3().to(dt), b3x2().to(dt));
    EXPECT_EQ(r.dtype(), dt);
    EXPECT_TRUE(same(r.to(kFloat), ab())) << dt;
  }
  EXPECT_TRUE(same(a2x3().mm(b3x2()), ab()));
}

TEST(Linalg, IntegerProductsWrap) {
  const Tensor a = full({1, 2}, 100, TensorOptions().dtype(kChar)), b = full({2, 1}, 2, TensorOptions().dtype(kChar));
  EXPECT_EQ(mm(a, b).item<int64_t>(), static_cast<int8_t>(400));  // 400 wraps to -112
}

TEST(Linalg, EmptyAndZeroInnerDims) {
  EXPECT_EQ(shape(mm(empty({0, 3}), empty({3, 4}))), (std::vector<int64_t>{0, 4}));
  EXPECT_TRUE(same(mm(empty({2, 0}), empty({0, 3})), zeros({2, 3})));
  EXPECT_TRUE(same(addmm(ones({3}), empty({2, 0}), empty({0, 3}), 2), full({2, 3}, 2.)));
  EXPECT_EQ(shape(bmm(empty({0, 2, 3}), empty({0, 3, 4}))), (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(dot(empty({0}), empty({0})).item<float>(), 0.f);
}

TEST(Linalg, MatmulShapes) {
  auto mshape = [](std::vector<int64_t> a, std::vector<int64_t> b) { return shape(matmul(ones(a), ones(b))); };
  EXPECT_EQ(mshape({3}, {3}), (std::vector<int64_t>{}));
  EXPECT_EQ(mshape({2, 3}, {3}), (std::vector<int64_t>{2}));
  EXPECT_EQ(mshape({3}, {3, 4}), (std::vector<int64_t>{4}));
  EXPECT_EQ(mshape({5, 2, 3}, {3}), (std::vector<int64_t>{5, 2}));
  EXPECT_EQ(mshape({3}, {5, 3, 4}), (std::vector<int64_t>{5, 4}));
  EXPECT_EQ(mshape({2, 1, 2, 3}, {5, 3, 4}), (std::vector<int64_t>{2, 5, 2, 4}));
  EXPECT_EQ(mshape({2, 3}, {7, 3, 4}), (std::vector<int64_t>{7, 2, 4}));
  EXPECT_EQ(matmul(ones({3}), ones({3})).item<float>(), 3.f);
  EXPECT_TRUE(same(matmul(a2x3(), b3x2()), ab()));
}

TEST(Linalg, AddendsBetaAlpha) {
  const Tensor bias = tensor({1., 2.}, kF);
  EXPECT_TRUE(same(addmm(bias, a2x3(), b3x2()), tensor({{5., 7.}, {11., 13.}}, kF)));
  EXPECT_TRUE(same(addmm(bias, a2x3(), b3x2(), 2, 3), tensor({{14., 19.}, {32., 37.}}, kF)));
  // beta = 0 ignores self entirely, NaN included
  EXPECT_TRUE(same(addmm(full({2, 2}, NAN), a2x3(), b3x2(), 0), ab()));
  EXPECT_TRUE(same(addmv(full({2}, NAN), a2x3(), ones({3}), 0), tensor({6., 15.}, kF)));
  EXPECT_TRUE(same(baddbmm(full({1, 2, 2}, NAN), a2x3().unsqueeze(0), b3x2().unsqueeze(0), 0), ab().unsqueeze(0)));
  // addmv and baddbmm cast self to the product's dtype, as PyTorch does
  EXPECT_EQ(addmv(ones({2}, TensorOptions().dtype(kDouble)), a2x3(), ones({3})).dtype(), kFloat);
  EXPECT_TRUE(same(linear(a2x3(), b3x2().t(), bias), tensor({{5., 7.}, {11., 13.}}, kF)));
  EXPECT_TRUE(same(nn::functional::linear(a2x3(), b3x2().t()), ab()));
}

TEST(Linalg, OutFormsAndInPlace) {
  Tensor out = empty({5});  // wrong shape: resized
  mm_out(out, a2x3(), b3x2());
  EXPECT_TRUE(same(out, ab()));
  Tensor out_t = empty({2, 2}).t();  // not contiguous: written through
  mm_out(out_t, a2x3(), b3x2());
  EXPECT_TRUE(same(out_t, ab()));
  EXPECT_EQ(out_t.strides()[0], 1);
  Tensor self = ones({2, 2});
  addmm_out(self, self, a2x3(), b3x2(), 1, 1);  // out aliases self
  EXPECT_TRUE(same(self, ab() + 1));
  Tensor s = ones({2, 2});
  const auto v0 = s.impl()->storage()->version();
  s.addmm_(a2x3(), b3x2(), 2, 1);
  EXPECT_TRUE(same(s, ab() + 2));
  EXPECT_GT(s.impl()->storage()->version(), v0);
  Tensor out_m = empty({0});
  matmul_out(out_m, ones({4, 2, 3}), b3x2());
  EXPECT_EQ(shape(out_m), (std::vector<int64_t>{4, 2, 2}));
  // an out= that overlaps an input gets the right values (computed aside, then copied)
  Tensor buf = tensor({{1., 2.}, {3., 4.}}, kF);
  mm_out(buf, buf, buf);
  EXPECT_TRUE(same(buf, tensor({{7., 10.}, {15., 22.}}, kF)));
}

TEST(Linalg, OutOfWrongDtypeIsNotWritten) {
  Tensor out = full({2, 2}, 7., TensorOptions().dtype(kDouble));
  expect_error([&] { mm_out(out, a2x3(), b3x2()); },
               {"mm_out", "Expected out tensor to have dtype float, but got double instead"});
  EXPECT_TRUE(same(out, full({2, 2}, 7., TensorOptions().dtype(kDouble))));
  expect_error([&] { addmm_out(out, ones({2}), a2x3(), b3x2()); }, {"addmm_out", "dtype float"});
  expect_error([&] { bmm_out(out, ones({1, 2, 3}), ones({1, 3, 2})); }, {"bmm_out", "dtype float"});
  expect_error([&] { matmul_out(out, a2x3(), b3x2()); }, {"matmul_out", "dtype float"});
  EXPECT_TRUE(same(out, full({2, 2}, 7., TensorOptions().dtype(kDouble))));
}

TEST(Linalg, ErrorsNameOpAndShapes) {
  const Tensor f = ones({2, 3}), d = ones({3, 4}, TensorOptions().dtype(kDouble)), g = ones({4, 5});
  expect_error([&] { mm(f, d); }, {"mm: ", "expected scalar type Float but found Double"});
  expect_error([&] { mm(f, g); }, {"mm: ", "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"});
  expect_error([&] { mm(ones({3}), g); }, {"self must be a matrix"});
  expect_error([&] { mm(f, ones({3})); }, {"mat2 must be a matrix"});
  const Tensor bo = ones({2, 2}, TensorOptions().dtype(kBool));
  expect_error([&] { mm(bo, bo); }, {"\"addmm_impl_cpu_\" not implemented for 'Bool'"});
  expect_error([&] { bmm(f, g); }, {"bmm: ", "batch1 must be a 3D tensor"});
  expect_error([&] { bmm(ones({2, 2, 3}), g); }, {"batch2 must be a 3D tensor"});
  expect_error([&] { bmm(ones({2, 2, 3}), ones({3, 3, 4})); },
               {"Expected size for first two dimensions of batch2 tensor to be: [2, 3] but got: [3, 3]."});
  expect_error([&] { bmm(ones({2, 2, 3}), ones({2, 3, 4}, TensorOptions().dtype(kDouble))); },
               {"expected scalar type Float but found Double"});
  expect_error([&] { matmul(ones({}), f); },
               {"matmul: ", "both arguments to matmul need to be at least 1D, but they are 0D and 2D"});
  expect_error([&] { matmul(ones({4}), f.t()); }, {"mat1 and mat2 shapes cannot be multiplied (1x4 and 3x2)"});
  expect_error([&] { matmul(ones({2, 2, 3}), ones({3, 3, 4})); },
               {"The size of tensor a (2) must match the size of tensor b (3) at non-singleton dimension 0"});
  expect_error([&] { matmul(ones({2, 2, 3}), ones({4})); }, {"size mismatch, got 4, 4x3,4"});
  expect_error([&] { matmul(ones({2, 3}), ones({2, 4, 4})); }, {"mat1 and mat2 shapes cannot be multiplied (8x4 and 3x2)"});
  expect_error([&] { matmul(ones({3}), ones({3}, TensorOptions().dtype(kDouble))); },
               {"expected both vectors to have same dtype, but found Float and Double"});
  expect_error([&] { addmm(ones({3}), f, d.to(kFloat)); },
               {"addmm: ", "The expanded size of the tensor (4) must match the existing size (3) at non-singleton "
                           "dimension 1.  Target sizes: [2, 4].  Tensor sizes: [3]"});
  expect_error([&] { addmm(ones({4}, TensorOptions().dtype(kDouble)), f, d.to(kFloat)); },
               {"self and mat2 must have the same dtype"});
  expect_error([&] { addmm(ones({4}), d, ones({4, 4})); }, {"mat1 and mat2 must have the same dtype"});
  expect_error([&] { addmm(ones({4}), ones({3}), g); }, {"mat1 must be a matrix, got 1-D tensor"});
  expect_error([&] { addmv(ones({2}), f, ones({4})); }, {"addmv: ", "size mismatch, got 2, 2x3,4"});
  expect_error([&] { addmv(ones({2}), f, f); }, {"vector + matrix @ vector expected, got 1, 2, 2"});
  expect_error([&] { mv(f, ones({4})); }, {"mv: ", "size mismatch, got 2, 2x3,4"});
  expect_error([&] { mv(bo, ones({2}, TensorOptions().dtype(kBool))); }, {"\"addmv_impl_cpu\" not implemented for 'Bool'"});
  expect_error([&] { dot(ones({3}), ones({4})); },
               {"dot: ", "inconsistent tensor size, expected tensor [3] and src [4] to have the same number of "
                         "elements, but got 3 and 4 elements respectively"});
  expect_error([&] { dot(f, ones({3})); }, {"1D tensors expected, but got 2D and 1D tensors"});
  expect_error([&] { vdot(f, ones({3})); }, {"vdot: ", "1D tensors expected"});
  expect_error([&] { dot(ones({2}, TensorOptions().dtype(kBool)), ones({2}, TensorOptions().dtype(kBool))); },
               {"\"dot\" not implemented for 'Bool'"});
  expect_error([&] { outer(f, ones({3})); }, {"outer: Expected 1-D argument self, but got 2-D"});
  expect_error([&] { baddbmm(ones({2, 3, 4}), ones({2, 2, 3}), ones({2, 3, 4})); },
               {"baddbmm: ", "The expanded size of the tensor (2) must match the existing size (3)"});
  expect_error([&] { baddbmm(ones({4}), ones({2, 3}), ones({2, 3, 4})); }, {"batch1 must be a 3D tensor"});
  expect_error([&] { nn::functional::linear(f, ones({5, 4})); },
               {"linear: ", "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)"});
  expect_error([&] { nn::functional::linear(f, ones({5, 3}), ones({4})); },
               {"The expanded size of the tensor (5) must match the existing size (4)"});
  expect_error([&] { nn::functional::linear(f, ones({3}), ones({})); }, {"mat2 must be a matrix, got 1-D tensor"});
}

TEST(Linalg, Einsum) {
  const Tensor m = arange(9., kF).view({3, 3});
  EXPECT_EQ(einsum("ii", {m}).item<float>(), 12.f);
  EXPECT_TRUE(same(einsum("ii->i", {m}), tensor({0., 4., 8.}, kF)));
  EXPECT_TRUE(same(einsum("ij->ji", {m}), m.t()));
  EXPECT_TRUE(same(einsum("ij,jk", {a2x3(), b3x2()}), ab()));
  EXPECT_TRUE(same(einsum("ij,jk->ki", {a2x3(), b3x2()}), ab().t()));
  EXPECT_TRUE(same(einsum("i,j->ij", {tensor({1., 2.}, kF), tensor({3., 4.}, kF)}), tensor({{3., 4.}, {6., 8.}}, kF)));
  EXPECT_EQ(shape(einsum("bn,anm,bm->ba", {ones({2, 3}), ones({5, 3, 4}), ones({2, 4})})), (std::vector<int64_t>{2, 5}));
  EXPECT_TRUE(same(einsum("bn,anm,bm->ba", {ones({2, 3}), ones({5, 3, 4}), ones({2, 4})}), full({2, 5}, 12.)));
  // elementwise-only equations broadcast and promote like mul, so bool works
  const Tensor bo = ones({2, 2}, TensorOptions().dtype(kBool));
  EXPECT_EQ(einsum("ij,ij->ij", {bo, bo}).dtype(), kBool);
  EXPECT_EQ(einsum("ij,ij->ij", {ones({2, 2}), ones({2, 2}, TensorOptions().dtype(kDouble))}).dtype(), kDouble);
}

TEST(Linalg, EinsumErrors) {
  const Tensor f = ones({2, 3}), g = ones({4, 5});
  expect_error([&] { einsum("ij,jk", {f, g}); },
               {"einsum", "subscript j has size 4 for operand 1 which does not broadcast with previously seen size 3"});
  expect_error([&] { einsum("ij,jk->ik", {f}); }, {"fewer operands were provided than specified in the equation"});
  expect_error([&] { einsum("ij", {f, f}); }, {"more operands were provided than specified in the equation"});
  expect_error([&] { einsum("ij->ik", {f}); }, {"output subscript k does not appear in the equation for any input operand"});
  expect_error([&] { einsum("ij->jj", {f}); }, {"output subscript j appears more than once in the output"});
  expect_error([&] { einsum("i->i", {f}); },
               {"the number of subscripts in the equation (1) does not match the number of dimensions (2) for "
                "operand 0 and no ellipsis was given"});
  expect_error([&] { einsum("i1->i", {f}); },
               {"invalid subscript given at index 1 in the equation string, subscripts must be in [a-zA-Z]"});
  expect_error([&] { einsum("ii->i", {f}); }, {"subscript i is repeated for operand 0 but the sizes don't match, 2 != 3"});
  expect_error([&] { einsum("i.j->ij", {f}); }, {"found '.' for operand 0 that is not part of any ellipsis"});
  expect_error([&] { einsum("ij,jk->ik", {f, ones({3, 4}, TensorOptions().dtype(kDouble))}); },
               {"expected scalar type Float but found Double"});
}

TEST(Linalg, RepeatedCallsReuseCachedPrimitives) {
  const Tensor a = randn({64, 96}), b = randn({96, 80}), bias = randn({80});
  const Tensor ah = a.to(kBFloat16), bh = b.to(kBFloat16);
  // first calls build their primitives
  mm(a, b);
  addmm(bias, a, b);
  addmm(bias, a, b, 0.5, 2);
  nn::functional::linear(a, b.t(), bias);
  matmul(ah, bh);
  const size_t built = onednn::cache_size();
  for (int i = 0; i < 5; ++i) {
    mm(a, b);
    addmm(bias, a, b);
    addmm(bias, a, b, 0.5, 2);
    nn::functional::linear(a, b.t(), bias);
    matmul(ah, bh);
  }
  EXPECT_EQ(onednn::cache_size(), built);
  mm(a, b.slice(1, 0, 40));  // a new shape builds one more
  EXPECT_EQ(onednn::cache_size(), built + 1);
}

// Batched products on interleaved batches (the heads of attention: (L, B, d).transpose(0, 1), a
// batch stride below a matrix's span), which oneDNN runs on dense copies of their rows: the same
// values as on dense operands, and near a float64 reference. Interleaved columns (a transposed
// head view) are taken as they are.
TEST(Linalg, BmmOfInterleavedBatches) {
  const Tensor q = randn({48, 6, 32}).transpose(0, 1), k = randn({48, 6, 32}).transpose(0, 1);  // (6, 48, 32)
  const Tensor p = randn({6, 48, 48}), kc = k.contiguous(), qc = q.contiguous();
  auto near = [](const Tensor& got, const Tensor& a, const Tensor& b) {
    return (got.to(kDouble) - bmm(a.to(kDouble), b.to(kDouble))).abs().max().item<double>() < 1e-4;
  };
  EXPECT_TRUE(same(bmm(p, k), bmm(p, kc)));
  EXPECT_TRUE(same(bmm(p.transpose(1, 2), q), bmm(p.transpose(1, 2), qc)));
  EXPECT_TRUE(same(bmm(q, kc.transpose(1, 2)), bmm(qc, kc.transpose(1, 2))));
  EXPECT_TRUE(near(bmm(p, k), p, k));
  EXPECT_TRUE(near(bmm(p.transpose(1, 2), q), p.transpose(1, 2), q));
  EXPECT_TRUE(near(bmm(q, kc.transpose(1, 2)), q, kc.transpose(1, 2)));
  EXPECT_TRUE(near(bmm(q, k.transpose(1, 2)), q, k.transpose(1, 2)));
  EXPECT_TRUE(near(bmm(q.transpose(1, 2), p), q.transpose(1, 2), p));
  // a broadcast operand (batch stride 0) is one matrix to oneDNN, not an interleaved batch
  const Tensor w = randn({1, 32, 40}).expand({6, 32, 40});
  EXPECT_TRUE(same(bmm(q, w), bmm(qc, w)));
  EXPECT_TRUE(near(bmm(q, w), q, w));
}

// LinearBackward0 and BmmBackward0 copy a strided or broadcast output gradient once when several
// of their formulas read it: every subset of wanted gradients gives the values of a dense
// gradient, and the formulas stay differentiable (gradcheck and gradgradcheck through a
// transposed output, whose gradient arrives strided).
TEST(Linalg, BackwardsOfStridedOutputGradients) {
  auto grads = [](const Tensor& out, const autograd::variable_list& inputs, const Tensor& g) {
    return autograd::grad({out}, inputs, {g}, /*retain_graph=*/true);
  };
  auto close = [](const autograd::variable_list& a, const autograd::variable_list& b) {
    for (size_t i = 0; i < a.size(); ++i)
      if (!a[i].allclose(b[i], 1e-5, 1e-5)) return false;
    return true;
  };
  const Tensor x = randn({48, 6, 40}), w = randn({24, 40}), b = randn({24});
  const Tensor heads = randn({6, 48, 24}).transpose(0, 1);       // strided rows, as attention's
  const Tensor spread = randn({1, 1, 24}).expand({48, 6, 24});  // broadcast, as a sum's
  const Tensor sliced = randn({48, 6, 48}).narrow(2, 24, 24);    // rows of a wider one, as cat's
  for (int mask = 1; mask < 8; ++mask) {
    const Tensor xi = x.clone().requires_grad_((mask & 1) != 0), wi = w.clone().requires_grad_((mask & 2) != 0),
                 bi = b.clone().requires_grad_((mask & 4) != 0);
    autograd::variable_list inputs;
    for (const Tensor& t : {xi, wi, bi})
      if (t.requires_grad()) inputs.push_back(t);
    const Tensor out = linear(xi, wi, bi);
    for (const Tensor& g : {heads, spread, sliced})
      EXPECT_TRUE(close(grads(out, inputs, g), grads(out, inputs, g.contiguous()))) << mask;
  }
  const Tensor p = randn({6, 48, 32}), v = randn({6, 32, 24});
  for (int mask = 1; mask < 4; ++mask) {
    const Tensor pi = p.clone().requires_grad_((mask & 1) != 0), vi = v.clone().requires_grad_((mask & 2) != 0);
    autograd::variable_list inputs;
    for (const Tensor& t : {pi, vi})
      if (t.requires_grad()) inputs.push_back(t);
    const Tensor out = bmm(pi, vi), g = randn({48, 6, 24}).transpose(0, 1);
    EXPECT_TRUE(close(grads(out, inputs, g), grads(out, inputs, g.contiguous()))) << mask;
  }
  const TensorOptions d = TensorOptions().dtype(kDouble).requires_grad(true);
  const autograd::variable_list lin{randn({5, 3, 4}, d), randn({6, 4}, d), randn({6}, d)};
  auto f = [](const autograd::variable_list& in) { return linear(in[0], in[1], in[2]).transpose(0, 1); };
  EXPECT_TRUE(autograd::gradcheck(f, lin));
  EXPECT_TRUE(autograd::gradgradcheck(f, lin));
  const autograd::variable_list mats{randn({3, 5, 4}, d), randn({3, 4, 2}, d)};
  auto g = [](const autograd::variable_list& in) { return bmm(in[0], in[1]).transpose(0, 1); };
  EXPECT_TRUE(autograd::gradcheck(g, mats));
  EXPECT_TRUE(autograd::gradgradcheck(g, mats));
}

TEST(Linalg, SmallProductsDoNotUseOneDnn) {
  const size_t before = onednn::cache_size();
  nn::functional::linear(randn({8, 16}), randn({16, 16}), randn({16}));
  dot(randn({100000}), randn({100000}));
  mv(randn({300, 300}), randn({300}));
  EXPECT_EQ(onednn::cache_size(), before);
}

// The loops split rows and batches across threads; each element's sum runs in the same order
// either way, so threaded results equal single-threaded ones exactly (float64 and integer
// products run on the loops at every size).
TEST(Linalg, ThreadedLoopsMatchSingleThread) {
  const int threads = get_num_threads();
  std::vector<std::pair<Tensor, Tensor>> cases;
  for (ScalarType dt : {kDouble, kInt, kLong}) {
    cases.emplace_back(randn({300, 260}).mul(4).to(dt), randn({257, 260}).mul(4).to(dt).t());
    cases.emplace_back(randn({40, 30, 50}).mul(4).to(dt), randn({40, 50, 60}).mul(4).to(dt));
  }
  cases.emplace_back(randn({70000}).to(kDouble).unsqueeze(0), randn({70000}).to(kDouble).unsqueeze(1));
  std::vector<Tensor> parallel;
  set_num_threads(2);
  for (const auto& [a, b] : cases) parallel.push_back(matmul(a, b));
  set_num_threads(1);
  for (size_t i = 0; i < cases.size(); ++i) EXPECT_TRUE(same(matmul(cases[i].first, cases[i].second), parallel[i])) << i;
  set_num_threads(threads);
}

}  // namespace EMBER_UNITY_FILE
