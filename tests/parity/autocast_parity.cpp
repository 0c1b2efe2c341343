// Autocast against libtorch's CPU autocast (at::autocast::set_cpu_enabled): for each op family of
// the policy lists, and for ops on no list, the dtype Ember produces inside a bfloat16 region
// equals libtorch's, and the values agree within bfloat16 tolerance.
#include <functional>
#include <string>
#include <vector>

#include "parity.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace {

using ETensors = std::vector<ember::Tensor>;
using TTensors = std::vector<torch::Tensor>;

struct Input {
  std::vector<int64_t> sizes;
  ember::ScalarType dtype;
};

struct Case {
  std::string name;
  std::vector<Input> inputs;
  std::function<ember::Tensor(const ETensors&)> ember_op;
  std::function<torch::Tensor(const TTensors&)> torch_op;
  bool lower_precision = false;  // on the lower-precision list: every floating input is cast
};

namespace ef = ember::nn::functional;
namespace tf = torch::nn::functional;
constexpr auto F = ember::kFloat;
constexpr auto B = ember::kBFloat16;
constexpr auto D = ember::kDouble;

std::vector<Case> cases() {
  std::vector<Case> c;
  // lower precision
  c.push_back({"mm", {{{8, 16}, F}, {{16, 4}, F}}, [](auto& a) { return ember::mm(a[0], a[1]); },
               [](auto& a) { return torch::mm(a[0], a[1]); }});
  c.push_back({"mm_float64_untouched", {{{8, 16}, D}, {{16, 4}, D}}, [](auto& a) { return ember::mm(a[0], a[1]); },
               [](auto& a) { return torch::mm(a[0], a[1]); }});
  c.push_back({"bmm", {{{2, 8, 16}, F}, {{2, 16, 4}, B}}, [](auto& a) { return ember::bmm(a[0], a[1]); },
               [](auto& a) { return torch::bmm(a[0], a[1]); }});
  c.push_back({"matmul_broadcast", {{{3, 8, 16}, F}, {{16, 4}, F}},
               [](auto& a) { return ember::matmul(a[0], a[1]); }, [](auto& a) { return torch::matmul(a[0], a[1]); }});
  c.push_back({"addmm", {{{4}, F}, {{8, 16}, F}, {{16, 4}, F}},
               [](auto& a) { return ember::addmm(a[0], a[1], a[2]); },
               [](auto& a) { return torch::addmm(a[0], a[1], a[2]); }});
  c.push_back({"baddbmm", {{{2, 8, 4}, F}, {{2, 8, 16}, F}, {{2, 16, 4}, F}},
               [](auto& a) { return ember::baddbmm(a[0], a[1], a[2], 0.5, 2.0); },
               [](auto& a) { return torch::baddbmm(a[0], a[1], a[2], 0.5, 2.0); }});
  c.push_back({"linear_bias", {{{8, 16}, F}, {{4, 16}, F}, {{4}, F}},
               [](auto& a) { return ef::linear(a[0], a[1], a[2]); },
               [](auto& a) { return tf::linear(a[0], a[1], a[2]); }});
  c.push_back({"conv1d", {{{2, 3, 10}, F}, {{4, 3, 3}, F}, {{4}, F}},
               [](auto& a) { return ember::conv1d(a[0], a[1], a[2]); },
               [](auto& a) { return torch::conv1d(a[0], a[1], a[2]); }});
  c.push_back({"conv2d", {{{2, 3, 9, 9}, F}, {{4, 3, 3, 3}, F}, {{4}, F}},
               [](auto& a) { return ember::conv2d(a[0], a[1], a[2], {2, 2}, {1, 1}); },
               [](auto& a) { return torch::conv2d(a[0], a[1], a[2], {2, 2}, {1, 1}); }});
  c.push_back({"einsum_contraction", {{{8, 16}, F}, {{16, 4}, F}},
               [](auto& a) { return ember::einsum("ij,jk->ik", {a[0], a[1]}); },
               [](auto& a) { return torch::einsum("ij,jk->ik", {a[0], a[1]}); }});
  for (Case& k : c) k.lower_precision = true;
  // float32
  c.push_back({"prod", {{{4, 5}, B}}, [](auto& a) { return a[0].prod(); }, [](auto& a) { return a[0].prod(); }});
  c.push_back({"mse_loss", {{{4, 5}, B}, {{4, 5}, B}}, [](auto& a) { return ef::mse_loss(a[0], a[1]); },
               [](auto& a) { return tf::mse_loss(a[0], a[1]); }});
  c.push_back({"l1_loss", {{{4, 5}, B}, {{4, 5}, F}}, [](auto& a) { return ef::l1_loss(a[0], a[1]); },
               [](auto& a) { return tf::l1_loss(a[0], a[1]); }});
  c.push_back({"smooth_l1_loss", {{{4, 5}, B}, {{4, 5}, B}}, [](auto& a) { return ef::smooth_l1_loss(a[0], a[1]); },
               [](auto& a) { return tf::smooth_l1_loss(a[0], a[1]); }});
  c.push_back({"huber_loss", {{{4, 5}, B}, {{4, 5}, B}}, [](auto& a) { return ef::huber_loss(a[0], a[1]); },
               [](auto& a) { return tf::huber_loss(a[0], a[1]); }});
  c.push_back({"binary_cross_entropy_with_logits", {{{4, 5}, B}, {{4, 5}, B}},
               [](auto& a) { return ef::binary_cross_entropy_with_logits(a[0], a[1].sigmoid()); },
               [](auto& a) { return tf::binary_cross_entropy_with_logits(a[0], a[1].sigmoid()); }});
  c.push_back({"binary_cross_entropy", {{{4, 5}, B}, {{4, 5}, B}},
               [](auto& a) { return ef::binary_cross_entropy(a[0].sigmoid(), a[1].sigmoid()); },
               [](auto& a) { return tf::binary_cross_entropy(a[0].sigmoid(), a[1].sigmoid()); }});
  c.push_back({"kl_div", {{{4, 5}, B}, {{4, 5}, B}},
               [](auto& a) { return ef::kl_div(a[0], a[1].sigmoid(), ef::KLDivFuncOptions().reduction(ember::kSum)); },
               [](auto& a) { return tf::kl_div(a[0], a[1].sigmoid(), tf::KLDivFuncOptions().reduction(torch::kSum)); }});
  c.push_back({"cross_entropy", {{{6, 5}, B}},
               [](auto& a) { return ef::cross_entropy(a[0], ember::tensor({0, 1, 2, 3, 4, 0}, ember::kLong)); },
               [](auto& a) { return tf::cross_entropy(a[0], torch::tensor({0, 1, 2, 3, 4, 0}, torch::kLong)); }});
  c.push_back({"nll_loss", {{{6, 5}, B}},
               [](auto& a) { return ef::nll_loss(a[0], ember::tensor({0, 1, 2, 3, 4, 0}, ember::kLong)); },
               [](auto& a) { return tf::nll_loss(a[0], torch::tensor({0, 1, 2, 3, 4, 0}, torch::kLong)); }});
  c.push_back({"pad_reflect", {{{1, 2, 5}, B}},
               [](auto& a) { return ef::pad(a[0], ef::PadFuncOptions({2, 1}).mode(ember::kReflect)); },
               [](auto& a) { return tf::pad(a[0], tf::PadFuncOptions({2, 1}).mode(torch::kReflect)); }});
  c.push_back({"pad_replicate", {{{1, 2, 5}, B}},
               [](auto& a) { return ember::pad(a[0], {2, 1}, "replicate"); },
               [](auto& a) { return tf::pad(a[0], tf::PadFuncOptions({2, 1}).mode(torch::kReplicate)); }});
  c.push_back({"mse_loss_float64_untouched", {{{4, 5}, D}, {{4, 5}, D}},
               [](auto& a) { return ef::mse_loss(a[0], a[1]); }, [](auto& a) { return tf::mse_loss(a[0], a[1]); }});
  // promote
  c.push_back({"cat_mixed", {{{2, 3}, B}, {{2, 3}, F}}, [](auto& a) { return ember::cat({a[0], a[1]}); },
               [](auto& a) { return torch::cat({a[0], a[1]}); }});
  c.push_back({"stack_mixed", {{{2, 3}, B}, {{2, 3}, F}}, [](auto& a) { return ember::stack({a[0], a[1]}); },
               [](auto& a) { return torch::stack({a[0], a[1]}); }});
  c.push_back({"cat_bfloat16", {{{2, 3}, B}, {{2, 3}, B}}, [](auto& a) { return ember::cat({a[0], a[1]}); },
               [](auto& a) { return torch::cat({a[0], a[1]}); }});
  // on no list: the inputs' dtypes
  c.push_back({"pad_constant", {{{1, 2, 5}, B}}, [](auto& a) { return ember::pad(a[0], {2, 1}); },
               [](auto& a) { return tf::pad(a[0], tf::PadFuncOptions({2, 1})); }});
  c.push_back({"softmax", {{{4, 5}, B}}, [](auto& a) { return a[0].softmax(1); },
               [](auto& a) { return a[0].softmax(1); }});
  c.push_back({"log_softmax_dtype", {{{4, 5}, B}}, [](auto& a) { return a[0].log_softmax(1, ember::kFloat); },
               [](auto& a) { return a[0].log_softmax(1, torch::kFloat); }});
  c.push_back({"sum", {{{4, 5}, B}}, [](auto& a) { return a[0].sum(); }, [](auto& a) { return a[0].sum(); }});
  c.push_back({"exp", {{{4, 5}, B}}, [](auto& a) { return a[0].exp(); }, [](auto& a) { return a[0].exp(); }});
  c.push_back({"add_mixed", {{{4, 5}, B}, {{4, 5}, F}}, [](auto& a) { return a[0] + a[1]; },
               [](auto& a) { return a[0] + a[1]; }});
  c.push_back({"relu_float32", {{{4, 5}, F}}, [](auto& a) { return a[0].relu(); },
               [](auto& a) { return a[0].relu(); }});
  c.push_back({"max_pool2d", {{{1, 2, 6, 6}, B}}, [](auto& a) { return ef::max_pool2d(a[0], ef::MaxPool2dFuncOptions(2)); },
               [](auto& a) { return tf::max_pool2d(a[0], tf::MaxPool2dFuncOptions(2)); }});
  c.push_back({"batch_norm_mixed", {{{4, 3, 2, 2}, B}, {{3}, F}, {{3}, F}},
               [](auto& a) { return ember::batch_norm(a[0], a[1], a[2], {}, {}, true, 0.1, 1e-5); },
               [](auto& a) { return torch::batch_norm(a[0], a[1], a[2], {}, {}, true, 0.1, 1e-5, false); }});
  c.push_back({"layer_norm", {{{4, 6}, B}}, [](auto& a) { return ember::layer_norm(a[0], {6}); },
               [](auto& a) { return torch::layer_norm(a[0], {6}); }});
  return c;
}

ember::ScalarType to_ember_dtype(const torch::Tensor& t) { return parity::to_ember(t.scalar_type()); }

TEST(AutocastParity, DtypesAndValuesMatchLibtorchOverThePolicyLists) {
  uint64_t seed = 1;
  for (const Case& k : cases()) {
    SCOPED_TRACE(k.name);
    ETensors e;
    TTensors t;
    for (const Input& in : k.inputs) {
      e.push_back(parity::random(ember::IntArrayRef(in.sizes.data(), in.sizes.size()), in.dtype, seed++));
      t.push_back(parity::to_torch(e.back()));
    }
    ember::Tensor er;
    torch::Tensor tr;
    {
      ember::AutocastGuard autocast;
      er = k.ember_op(e);
    }
    {
      parity::TorchAutocast autocast;
      tr = k.torch_op(t);
    }
    if (er.dtype() != ember::kBFloat16) {
      EXPECT_TRUE(parity::Close(er, tr, {1e-3, 1e-4}));
      continue;
    }
    // A bfloat16 result: Ember accumulates in float32 and rounds once, so it is within bfloat16
    // rounding of the op computed exactly (float64) on the inputs as cast; libtorch's bfloat16
    // kernels round intermediates too, so the two agree to a few bfloat16 steps.
    TTensors rounded;
    for (const torch::Tensor& x : t) {
      const bool cast = k.lower_precision && x.scalar_type() == torch::kFloat;
      rounded.push_back((cast ? x.to(torch::kBFloat16) : x).to(torch::kDouble));
    }
    const torch::Tensor exact = k.torch_op(rounded);
    EXPECT_EQ(to_ember_dtype(tr), er.dtype());
    EXPECT_TRUE(parity::Close(er.to(ember::kDouble), exact, {8e-3, 1e-3}));
    const double scale = exact.abs().max().item<double>();
    EXPECT_TRUE(parity::Close(er.to(ember::kFloat), tr.to(torch::kFloat), {3e-2, 0.05 * scale}));
  }
}

// conv_transpose is on PyTorch's lower-precision list from 2.0 on (and on the issue's); libtorch
// 1.13 left it in float32. Ember follows the newer list; the values still agree.
TEST(AutocastParity, ConvTransposeRunsInBfloat16WhereLibtorch113StaysFloat32) {
  const ember::Tensor x = parity::random({2, 3, 5, 5}, F, 7), w = parity::random({3, 4, 3, 3}, F, 8);
  ember::Tensor er;
  torch::Tensor tr;
  {
    ember::AutocastGuard autocast;
    er = ember::nn::functional::conv_transpose2d(x, w);
  }
  {
    parity::TorchAutocast autocast;
    tr = torch::conv_transpose2d(parity::to_torch(x), parity::to_torch(w));
  }
  EXPECT_EQ(er.dtype(), ember::kBFloat16);
  EXPECT_EQ(tr.scalar_type(), torch::kFloat);
  EXPECT_TRUE(parity::Close(er.to(ember::kFloat), tr, {3e-2, 5e-2}));
}

// Training quantities: gradients of float32 parameters through a bfloat16 linear arrive in
// float32 and match libtorch's under its autocast.
TEST(AutocastParity, GpuFlagIsKeptAndChangesNothingOnTheCpu) {
  // at::autocast::set_enabled is libtorch's CUDA switch: read back, and CPU ops stay float32.
  const torch::Tensor ta = torch::randn({4, 4});
  const ember::Tensor ea = parity::to_ember(ta);
  EXPECT_EQ(ember::autocast::is_enabled(), at::autocast::is_enabled());
  ember::autocast::set_enabled(true);
  at::autocast::set_enabled(true);
  EXPECT_TRUE(ember::autocast::is_enabled());
  EXPECT_EQ(ember::autocast::is_cpu_enabled(), at::autocast::is_cpu_enabled());
  EXPECT_TRUE(parity::Close(ember::matmul(ea, ea), torch::matmul(ta, ta)));
  ember::autocast::set_autocast_gpu_dtype(ember::kBFloat16);
  at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
  EXPECT_EQ(ember::autocast::get_autocast_gpu_dtype(), parity::to_ember(at::autocast::get_autocast_gpu_dtype()));
  ember::autocast::set_autocast_gpu_dtype(ember::kHalf);
  at::autocast::set_autocast_gpu_dtype(at::kHalf);
  ember::autocast::set_enabled(false);
  at::autocast::set_enabled(false);
  EXPECT_EQ(ember::autocast::is_enabled(), at::autocast::is_enabled());
}

TEST(AutocastParity, GradientsOfFloat32ParametersMatch) {
  const ember::Tensor x = parity::random({16, 32}, F, 11), w0 = parity::random({8, 32}, F, 12),
                      b0 = parity::random({8}, F, 13);
  ember::Tensor w = w0.clone().set_requires_grad(true), b = b0.clone().set_requires_grad(true);
  torch::Tensor tw = parity::to_torch(w0).requires_grad_(true), tb = parity::to_torch(b0).requires_grad_(true);
  ember::Tensor loss;
  torch::Tensor tloss;
  {
    ember::AutocastGuard autocast;
    loss = ef::mse_loss(ef::linear(x, w, b).tanh(), ember::zeros({16, 8}));
  }
  {
    parity::TorchAutocast autocast;
    tloss = tf::mse_loss(tf::linear(parity::to_torch(x), tw, tb).tanh(), torch::zeros({16, 8}));
  }
  loss.backward();
  tloss.backward();
  EXPECT_TRUE(parity::Close(loss, tloss, {1e-2, 1e-3}));
  EXPECT_TRUE(parity::Close(w.grad(), tw.grad(), {3e-2, 3e-3}));
  EXPECT_TRUE(parity::Close(b.grad(), tb.grad(), {3e-2, 3e-3}));
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
