// Multi-tensor ops against the per-tensor ops they stand for: every op and overload on lists of
// many shapes (empty, 0-dim, odd sizes, tensors large enough to split across threads) in the four
// float dtypes, non-contiguous and integer tensors (the per-tensor path), lists mixing dtypes,
// and the errors (op, index and shapes named; nothing written).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "ember/ember.h"
#include "unit/expect_error.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

using namespace ember;

namespace {

using List = std::vector<Tensor>;

constexpr ScalarType kFloats[] = {kFloat, kDouble, kHalf, kBFloat16};

// Shapes of one list: every size class the kernel splits differently.
const std::vector<std::vector<int64_t>> kShapes = {{}, {0}, {1}, {7}, {3, 5}, {17, 33}, {2, 0, 3}, {20000}, {9, 4, 3}};

// A seeded list in dtype t; values in [lo, lo + 2). `strided` makes every other tensor a view
// with gaps (a column slice), which the kernel hands to the per-tensor op.
List make_list(ScalarType t, uint64_t seed, double lo = -1, bool strided = false) {
  Generator g(seed);
  List out;
  for (size_t i = 0; i < kShapes.size(); ++i) {
    const auto& s = kShapes[i];
    Tensor x;
    if (strided && i % 2 == 1 && !s.empty()) {
      std::vector<int64_t> wide = s;
      wide.back() *= 2;
      x = (rand(wide, &g, TensorOptions().dtype(kDouble)) * 2 + lo).to(t).slice(-1, 0, std::nullopt, 2);
    } else {
      x = (rand(s, &g, TensorOptions().dtype(kDouble)) * 2 + lo).to(t);
    }
    out.push_back(x);
  }
  return out;
}

List clone_list(const List& l) {
  List out;
  for (const Tensor& t : l) out.push_back(t.clone());
  return out;
}

double tol(ScalarType t) { return t == kBFloat16 ? 1e-2 : t == kHalf ? 2e-3 : t == kFloat ? 1e-6 : 1e-12; }

void expect_same(const List& got, const List& want, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].dtype(), want[i].dtype()) << what << " index " << i;
    ASSERT_EQ(got[i].sizes(), want[i].sizes()) << what << " index " << i;
    const double r = tol(want[i].dtype());
    EXPECT_TRUE(got[i].allclose(want[i], r, r, true)) << what << " index " << i << "\n" << got[i] << "\n" << want[i];
  }
}

// An in-place foreach op and its per-tensor twin applied to copies of the same lists.
void check_inplace(const std::string& what, const List& self, const std::function<void(const List&)>& fe,
                   const std::function<void(Tensor&, size_t)>& ref) {
  List a = clone_list(self), b = clone_list(self);
  fe(a);
  for (size_t i = 0; i < b.size(); ++i) ref(b[i], i);
  expect_same(a, b, what);
}
void check_out(const std::string& what, const List& self, const std::function<List(const List&)>& fe,
               const std::function<Tensor(const Tensor&, size_t)>& ref) {
  const List before = clone_list(self);
  List got = fe(self);
  List want;
  for (size_t i = 0; i < self.size(); ++i) want.push_back(ref(self[i], i));
  expect_same(got, want, what);
  expect_same(self, before, what + " (input unchanged)");
}

struct Case {
  ScalarType dtype;
  bool strided;
  std::string name() const { return std::string(to_string(dtype)) + (strided ? " strided" : ""); }
};
std::vector<Case> cases() {
  std::vector<Case> c;
  for (ScalarType t : kFloats) {
    c.push_back({t, false});
    c.push_back({t, true});
  }
  return c;
}

}  // namespace

TEST(Foreach, ArithmeticWithScalarsAndLists) {
  for (const Case& c : cases()) {
    const List x = make_list(c.dtype, 1, -1, c.strided), y = make_list(c.dtype, 2, 0.5, c.strided);
    std::vector<Scalar> s;
    for (size_t i = 0; i < x.size(); ++i) s.push_back(Scalar(0.25 * static_cast<double>(i) + 0.5));
    const std::string n = c.name();
    check_inplace(
        "add_ scalar " + n, x, [](const List& l) { foreach_add_(l, 1.5); }, [](Tensor& t, size_t) { t.add_(1.5); });
    check_inplace(
        "add_ list " + n, x, [&](const List& l) { foreach_add_(l, s); }, [&](Tensor& t, size_t i) { t.add_(s[i]); });
    check_inplace(
        "add_ tensors " + n, x, [&](const List& l) { foreach_add_(l, y, -0.3); },
        [&](Tensor& t, size_t i) { t.add_(y[i], -0.3); });
    check_inplace(
        "sub_ scalar " + n, x, [](const List& l) { foreach_sub_(l, 0.75); }, [](Tensor& t, size_t) { t.sub_(0.75); });
    check_inplace(
        "sub_ list " + n, x, [&](const List& l) { foreach_sub_(l, s); }, [&](Tensor& t, size_t i) { t.sub_(s[i]); });
    check_inplace(
        "sub_ tensors " + n, x, [&](const List& l) { foreach_sub_(l, y, 2); },
        [&](Tensor& t, size_t i) { t.sub_(y[i], 2); });
    check_inplace(
        "mul_ scalar " + n, x, [](const List& l) { foreach_mul_(l, -3); }, [](Tensor& t, size_t) { t.mul_(-3); });
    check_inplace(
        "mul_ list " + n, x, [&](const List& l) { foreach_mul_(l, s); }, [&](Tensor& t, size_t i) { t.mul_(s[i]); });
    check_inplace(
        "mul_ tensors " + n, x, [&](const List& l) { foreach_mul_(l, y); }, [&](Tensor& t, size_t i) { t.mul_(y[i]); });
    check_inplace(
        "mul_ 0-dim tensor " + n, x, [](const List& l) { foreach_mul_(l, scalar_tensor(0.5)); },
        [](Tensor& t, size_t) { t.mul_(0.5); });
    check_inplace(
        "div_ scalar " + n, x, [](const List& l) { foreach_div_(l, 3); }, [](Tensor& t, size_t) { t.div_(3); });
    check_inplace(
        "div_ list " + n, x, [&](const List& l) { foreach_div_(l, s); }, [&](Tensor& t, size_t i) { t.div_(s[i]); });
    check_inplace(
        "div_ tensors " + n, x, [&](const List& l) { foreach_div_(l, y); }, [&](Tensor& t, size_t i) { t.div_(y[i]); });

    check_out(
        "add scalar " + n, x, [](const List& l) { return foreach_add(l, 2); },
        [](const Tensor& t, size_t) { return t.add(2); });
    check_out(
        "add list " + n, x, [&](const List& l) { return foreach_add(l, s); },
        [&](const Tensor& t, size_t i) { return t.add(s[i]); });
    check_out(
        "add tensors " + n, x, [&](const List& l) { return foreach_add(l, y, 0.5); },
        [&](const Tensor& t, size_t i) { return t.add(y[i], 0.5); });
    check_out(
        "sub " + n, x, [&](const List& l) { return foreach_sub(l, y); },
        [&](const Tensor& t, size_t i) { return t.sub(y[i]); });
    check_out(
        "sub scalar " + n, x, [](const List& l) { return foreach_sub(l, 1); },
        [](const Tensor& t, size_t) { return t.sub(1); });
    check_out(
        "mul " + n, x, [&](const List& l) { return foreach_mul(l, y); },
        [&](const Tensor& t, size_t i) { return t.mul(y[i]); });
    check_out(
        "mul list " + n, x, [&](const List& l) { return foreach_mul(l, s); },
        [&](const Tensor& t, size_t i) { return t.mul(s[i]); });
    check_out(
        "div " + n, x, [&](const List& l) { return foreach_div(l, y); },
        [&](const Tensor& t, size_t i) { return t.div(y[i]); });
    check_out(
        "div scalar " + n, x, [](const List& l) { return foreach_div(l, 7); },
        [](const Tensor& t, size_t) { return t.div(7); });
  }
}

TEST(Foreach, PointwiseTernaryUnaryAndMaximum) {
  for (const Case& c : cases()) {
    const List x = make_list(c.dtype, 3, -1, c.strided), y = make_list(c.dtype, 4, -1, c.strided);
    const List z = make_list(c.dtype, 5, 0.5, c.strided), w = make_list(c.dtype, 6, -0.5, c.strided);
    std::vector<Scalar> s;
    for (size_t i = 0; i < x.size(); ++i) s.push_back(Scalar(1.0 - 0.2 * static_cast<double>(i)));
    const std::string n = c.name();
    check_inplace(
        "addcmul_ " + n, x, [&](const List& l) { foreach_addcmul_(l, y, z, 0.3); },
        [&](Tensor& t, size_t i) { t.addcmul_(y[i], z[i], 0.3); });
    check_inplace(
        "addcmul_ list " + n, x, [&](const List& l) { foreach_addcmul_(l, y, z, s); },
        [&](Tensor& t, size_t i) { t.addcmul_(y[i], z[i], s[i]); });
    check_inplace(
        "addcdiv_ " + n, x, [&](const List& l) { foreach_addcdiv_(l, y, z, -2); },
        [&](Tensor& t, size_t i) { t.addcdiv_(y[i], z[i], -2); });
    check_inplace(
        "addcdiv_ list " + n, x, [&](const List& l) { foreach_addcdiv_(l, y, z, s); },
        [&](Tensor& t, size_t i) { t.addcdiv_(y[i], z[i], s[i]); });
    check_out(
        "addcmul " + n, x, [&](const List& l) { return foreach_addcmul(l, y, z); },
        [&](const Tensor& t, size_t i) { return t.addcmul(y[i], z[i]); });
    check_out(
        "addcdiv list " + n, x, [&](const List& l) { return foreach_addcdiv(l, y, z, s); },
        [&](const Tensor& t, size_t i) { return t.addcdiv(y[i], z[i], s[i]); });
    check_inplace(
        "lerp_ scalar " + n, x, [&](const List& l) { foreach_lerp_(l, y, 0.7); },
        [&](Tensor& t, size_t i) { t.lerp_(y[i], 0.7); });
    check_inplace(
        "lerp_ tensors " + n, x, [&](const List& l) { foreach_lerp_(l, y, w); },
        [&](Tensor& t, size_t i) { t.lerp_(y[i], w[i]); });
    check_out(
        "lerp " + n, x, [&](const List& l) { return foreach_lerp(l, y, 0.2); },
        [&](const Tensor& t, size_t i) { return t.lerp(y[i], 0.2); });
    check_out(
        "lerp tensors " + n, x, [&](const List& l) { return foreach_lerp(l, y, w); },
        [&](const Tensor& t, size_t i) { return t.lerp(y[i], w[i]); });
    check_inplace(
        "maximum_ " + n, x, [&](const List& l) { foreach_maximum_(l, y); },
        [&](Tensor& t, size_t i) { t.copy_(maximum(t, y[i])); });
    check_out(
        "maximum " + n, x, [&](const List& l) { return foreach_maximum(l, y); },
        [&](const Tensor& t, size_t i) { return maximum(t, y[i]); });
    check_inplace(
        "sqrt_ " + n, z, [](const List& l) { foreach_sqrt_(l); }, [](Tensor& t, size_t) { t.sqrt_(); });
    check_out(
        "sqrt " + n, z, [](const List& l) { return foreach_sqrt(l); },
        [](const Tensor& t, size_t) { return t.sqrt(); });
    check_inplace(
        "neg_ " + n, x, [](const List& l) { foreach_neg_(l); }, [](Tensor& t, size_t) { t.neg_(); });
    check_out(
        "neg " + n, x, [](const List& l) { return foreach_neg(l); }, [](const Tensor& t, size_t) { return t.neg(); });
    check_inplace(
        "abs_ " + n, x, [](const List& l) { foreach_abs_(l); }, [](Tensor& t, size_t) { t.abs_(); });
    check_out(
        "abs " + n, x, [](const List& l) { return foreach_abs(l); }, [](const Tensor& t, size_t) { return t.abs(); });
    check_inplace(
        "exp_ " + n, x, [](const List& l) { foreach_exp_(l); }, [](Tensor& t, size_t) { t.exp_(); });
    check_out(
        "exp " + n, x, [](const List& l) { return foreach_exp(l); }, [](const Tensor& t, size_t) { return t.exp(); });
    check_inplace(
        "zero_ " + n, x, [](const List& l) { foreach_zero_(l); }, [](Tensor& t, size_t) { t.zero_(); });
    check_inplace(
        "copy_ " + n, x, [&](const List& l) { foreach_copy_(l, y); }, [&](Tensor& t, size_t i) { t.copy_(y[i]); });
  }
}

TEST(Foreach, NormMatchesPerTensorNorm) {
  for (const Case& c : cases()) {
    List x = make_list(c.dtype, 7, -1, c.strided);
    for (double ord : {1.0, 2.0, double(INFINITY)}) {
      List got = foreach_norm(x, ord);
      List want;
      for (const Tensor& t : x) want.push_back(norm(t, ord));
      // float32 sums in another order than the per-tensor reduction
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].dtype(), c.dtype);
        EXPECT_EQ(got[i].dim(), 0);
        const double r = std::max(tol(c.dtype), c.dtype == kFloat ? 1e-5 : 0.0);
        EXPECT_TRUE(got[i].to(kDouble).allclose(want[i].to(kDouble), r, r))
            << c.name() << " ord " << ord << " index " << i;
      }
    }
  }
  List nan = {tensor({1.0f, NAN, 2.0f}), tensor({3.0f, 4.0f})};
  for (double ord : {1.0, 2.0, double(INFINITY)}) {
    List r = foreach_norm(nan, ord);
    EXPECT_TRUE(std::isnan(r[0].item<double>())) << ord;
    EXPECT_FALSE(std::isnan(r[1].item<double>())) << ord;
  }
  EXPECT_EQ(foreach_norm(nan, 2)[1].item<double>(), 5.0);
}

TEST(Foreach, MixedDtypesIntegersAndPromotion) {
  // one list mixing the float dtypes, integer tensors and broadcasting partners
  List x = {tensor({1.0f, 2.0f}), tensor({1.0, 2.0}), tensor({1, 2}), ones({2, 3}, TensorOptions().dtype(kBFloat16))};
  List y = {tensor({0.5f, 0.5f}), tensor({0.25, 0.25}), tensor({3, 4}), tensor({2.0f, 2.0f, 2.0f})};
  check_inplace(
      "mixed add_", x, [&](const List& l) { foreach_add_(l, y, 2); }, [&](Tensor& t, size_t i) { t.add_(y[i], 2); });
  check_out(
      "mixed mul", x, [&](const List& l) { return foreach_mul(l, y); },
      [&](const Tensor& t, size_t i) { return t.mul(y[i]); });
  check_out(
      "integer sqrt", x, [](const List& l) { return foreach_sqrt(l); },
      [](const Tensor& t, size_t) { return t.sqrt(); });
  EXPECT_EQ(foreach_sqrt(x)[2].dtype(), kFloat);
  check_inplace(
      "copy_ casts", x, [&](const List& l) { foreach_copy_(l, y); }, [&](Tensor& t, size_t i) { t.copy_(y[i]); });
  check_out(
      "int add", {tensor({1, 2})}, [](const List& l) { return foreach_add(l, 3); },
      [](const Tensor& t, size_t) { return t.add(3); });
  EXPECT_EQ(foreach_add({tensor({1, 2})}, 0.5)[0].dtype(), kFloat);
}

TEST(Foreach, PyTorchSpellingsAndNoAutograd) {
  List p = {ones({3}).requires_grad_(), ones({2, 2}).requires_grad_()};
  const int64_t v = p[0]._version();
  _foreach_mul_(p, 2);
  _foreach_add_(p, p, 0.5);
  EXPECT_EQ(p[0]._version(), v + 2);
  EXPECT_TRUE(p[0].is_leaf());
  EXPECT_EQ(p[0].grad_fn(), nullptr);
  EXPECT_TRUE(p[1].allclose(full({2, 2}, 3.0)));
  List q = _foreach_sqrt(p);
  EXPECT_FALSE(q[0].requires_grad());
  EXPECT_TRUE(is_grad_enabled());
}

TEST(Foreach, ErrorsNameOpIndexAndShapesAndWriteNothing) {
  List a = {ones({2}), ones({3}), ones({4})};
  List b = {ones({2}), ones({3})};
  EXPECT_ERROR(foreach_add_(List{}, 1), "foreach_add_", "at least one tensor");
  EXPECT_ERROR(foreach_add_(a, b), "foreach_add_", "same number of tensors", "3", "2");
  EXPECT_ERROR(foreach_addcmul_(a, a, b), "foreach_addcmul_", "same number of tensors");
  EXPECT_ERROR(foreach_mul_(a, std::vector<Scalar>{1, 2}), "foreach_mul_", "scalar list", "3", "2");
  List c = {ones({2}), ones({3}), ones({5})};
  EXPECT_ERROR(foreach_add_(a, c), "foreach_add_", "index 2", "[4]", "[5]");
  EXPECT_TRUE(a[0].equal(ones({2})));  // nothing written before the bad index was found
  List wide = {ones({2}), ones({3}), ones({2, 4})};
  EXPECT_ERROR(foreach_mul_(a, wide), "foreach_mul_", "index 2", "[4]", "[2, 4]");
  List ints = {ones({2}, TensorOptions().dtype(kLong)), ones({2}, TensorOptions().dtype(kLong))};
  EXPECT_ERROR(foreach_add_(ints, 0.5), "foreach_add_", "index 0", "Float", "Long");
  EXPECT_ERROR(foreach_sqrt_(ints), "foreach_sqrt_", "index 0", "Long");
  EXPECT_TRUE(ints[0].equal(ones({2}, TensorOptions().dtype(kLong))));
  EXPECT_ERROR(foreach_norm(ints), "foreach_norm", "floating point", "index 0");
  EXPECT_ERROR(foreach_norm(a, 3), "foreach_norm", "ord");
  EXPECT_ERROR(foreach_mul_(a, ones({2})), "foreach_mul_", "0 dim");
  List undefined = {ones({2}), Tensor()};
  EXPECT_ERROR(foreach_neg_(undefined), "foreach_neg_", "index 1", "undefined");
}

}  // namespace EMBER_UNITY_FILE
