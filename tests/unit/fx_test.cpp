// ember::fx: tracing (ops at the dispatch point, leaf modules through their holders), the graph
// and its editing, lint errors, dead code elimination, GraphModule/Interpreter/Transformer/
// ShapeProp, replace_pattern, conv-bn folding and the tracing traps.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <sstream>

#include "ember/ember.h"
#include "ember/fx.h"
#include "ember/nn/intrinsic.h"
#include "expect_error.h"
#include "temp_dir.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace {

using ember::Tensor;
namespace fx = ember::fx;
namespace nn = ember::nn;

void expect_close(const Tensor& a, const Tensor& b, double rtol = 1e-6) {
  ASSERT_EQ(a.sizes(), b.sizes());
  const double scale = b.abs().max().item<double>() + 1e-12;
  EXPECT_LE((a - b).abs().max().item<double>() / scale, rtol);
}

// What each call_module node of gm runs, as its module prints itself.
std::vector<std::string> module_descriptions(fx::GraphModule& gm) {
  std::vector<std::string> out;
  for (const fx::Node* n : gm.graph().nodes()) {
    if (n->op() != fx::OpKind::CallModule) continue;
    std::ostringstream os;
    gm.submodule(n->target())->pretty_print(os);
    out.push_back(os.str());
  }
  return out;
}

struct SmallCnn : nn::Module {
  SmallCnn() {
    conv1 = register_module("conv1", nn::Conv2d(nn::Conv2dOptions(3, 8, 3).padding(1)));
    bn1 = register_module("bn1", nn::BatchNorm2d(8));
    block = register_module("block", nn::Sequential(nn::Conv2d(nn::Conv2dOptions(8, 8, 3).padding(1).bias(false)),
                                                    nn::BatchNorm2d(8), nn::ReLU()));
    drop = register_module("drop", nn::Dropout(0.5));
    fc = register_module("fc", nn::Linear(8, 4));
    bn2 = register_module("bn2", nn::BatchNorm1d(4));
  }
  Tensor forward(const Tensor& x) {
    Tensor y = ember::relu(bn1(conv1(x)));
    y = block->forward(y) + y;  // Sequential's children are called through its AnyModules
    y = ember::adaptive_avg_pool2d(y, {1, 1}).flatten(1);
    return bn2(fc(drop(y)));
  }
  nn::Conv2d conv1{nullptr};
  nn::BatchNorm2d bn1{nullptr};
  nn::Sequential block{nullptr};
  nn::Dropout drop{nullptr};
  nn::Linear fc{nullptr};
  nn::BatchNorm1d bn2{nullptr};
};

// Leaves nothing: every module is traced through, so the graph holds only ops.
struct OpsOnly : fx::Tracer {
  bool is_leaf_module(const nn::Module&, const std::string&) override { return false; }
};

std::shared_ptr<SmallCnn> trained_cnn() {
  ember::manual_seed(0);
  auto m = std::make_shared<SmallCnn>();
  // Running statistics away from their initial values, so folding has something to fold.
  for (int i = 0; i < 3; ++i) m->forward(ember::randn({4, 3, 10, 10}));
  m->eval();
  return m;
}

TEST(Fx, TracesLeafModulesAndOps) {
  auto m = trained_cnn();
  const Tensor x = ember::randn({2, 3, 10, 10});
  auto gm = fx::symbolic_trace(m, x);
  std::vector<std::string> kinds;
  for (fx::Node* n : gm->graph().nodes())
    if (n->op() == fx::OpKind::CallModule) kinds.push_back(n->target());
  EXPECT_EQ(kinds, (std::vector<std::string>{"conv1", "bn1", "block.0", "block.1", "block.2", "drop", "fc", "bn2"}));
  const std::string code = gm->code();
  EXPECT_NE(code.find("conv1 = self.conv1(x)"), std::string::npos) << code;
  EXPECT_NE(code.find("torch.relu(bn1)"), std::string::npos) << code;
  EXPECT_NE(code.find("torch.adaptive_avg_pool2d"), std::string::npos) << code;
  expect_close(gm->forward(x), m->forward(x), 0);
  // Other values of the example's shape (flatten's sizes are the example's: a graph is
  // specialized on the shapes it was traced with).
  const Tensor x2 = ember::randn({2, 3, 10, 10});
  expect_close(gm->forward(x2), m->forward(x2), 0);
  // Parameters are the root's own tensors.
  EXPECT_TRUE(gm->attribute("conv1.weight").is_same(m->conv1->weight));
  EXPECT_EQ(gm->named_parameters().size(), m->named_parameters().size());
  // Lookups by qualified name, at any depth.
  EXPECT_EQ(gm->submodule("block.1"), m->block->ptr(1));
  EXPECT_EQ(gm->submodule("bn1"), m->bn1.ptr());
  EXPECT_EQ(gm->submodule("block.7"), nullptr);
  EXPECT_EQ(gm->submodule("block.1.x"), nullptr);
  EXPECT_EQ(gm->submodule("nothing.1"), nullptr);
  EXPECT_EQ(gm->submodule(""), nullptr);
  EXPECT_TRUE(gm->attribute("block.1.running_mean").is_same(m->block->ptr(1)->named_buffers()["running_mean"]));
  EXPECT_TRUE(gm->attribute("bn1.num_batches_tracked").is_same(m->bn1->named_buffers()["num_batches_tracked"]));
  EXPECT_THROW(gm->attribute("block.1.nothing"), ember::Error);
  EXPECT_THROW(gm->attribute("block.9.weight"), ember::Error);
  EXPECT_THROW(gm->attribute("weight"), ember::Error);
}

TEST(Fx, TracedThroughModulesEqualEager) {
  auto m = trained_cnn();
  const Tensor x = ember::randn({2, 3, 10, 10});
  OpsOnly tracer;
  auto gm = tracer.trace(*m, {x}, [&](const std::vector<Tensor>& in) { return ember::jit::IValue(m->forward(in[0])); });
  for (fx::Node* n : gm->graph().nodes()) EXPECT_NE(n->op(), fx::OpKind::CallModule) << n->format();
  expect_close(gm->forward(x), m->forward(x), 0);
  // The same in training mode (batch statistics, dropout's randomness aside: p has no effect
  // on eval, and the traced dropout keeps the example's train flag).
  const std::string code = gm->code();
  EXPECT_NE(code.find("torch.conv2d(x, conv1_weight, conv1_bias"), std::string::npos) << code;
  EXPECT_NE(code.find("torch.batch_norm"), std::string::npos) << code;
}

TEST(Fx, NnModulesTraceEqualEager) {
  ember::manual_seed(1);
  const Tensor x4 = ember::randn({2, 4, 6, 6});
  const Tensor x2 = ember::randn({3, 4});
  const Tensor x3 = ember::randn({2, 4, 7});
  auto check = [](auto module, const Tensor& x) {
    module->eval();
    for (bool leaves : {true, false}) {
      std::shared_ptr<fx::GraphModule> gm;
      if (leaves) {
        gm = fx::symbolic_trace(module, x);
      } else {
        OpsOnly tracer;
        gm = tracer.trace(*module, {x}, [&](const std::vector<Tensor>& in) {
          return ember::jit::IValue(module->forward(in[0]));
        });
      }
      SCOPED_TRACE(module->name() + (leaves ? " (leaf)" : " (traced through)"));
      expect_close(gm->forward(x), module->forward(x), 1e-6);
    }
  };
  check(nn::Sequential(nn::Linear(4, 5), nn::ReLU(), nn::Linear(5, 3), nn::Tanh()).ptr(), x2);
  check(nn::Sequential(nn::Conv2d(nn::Conv2dOptions(4, 6, 3).stride(2).padding(1)), nn::BatchNorm2d(6),
                       nn::MaxPool2d(2), nn::Flatten())
            .ptr(),
        x4);
  check(nn::Sequential(nn::Conv1d(nn::Conv1dOptions(4, 3, 2)), nn::BatchNorm1d(3), nn::GELU(), nn::Sigmoid()).ptr(), x3);
  check(nn::Sequential(nn::LayerNorm(nn::LayerNormOptions({4})), nn::Softmax(1), nn::Dropout(0.2), nn::SiLU()).ptr(), x2);
  check(nn::Sequential(nn::AvgPool2d(2), nn::LeakyReLU(), nn::Hardswish(), nn::Identity()).ptr(), x4);
}

TEST(Fx, TracesFreeFunctions) {
  const Tensor a = ember::randn({4, 5}), b = ember::randn({5});
  auto f = [](const Tensor& x, const Tensor& y) {
    Tensor z = ember::sigmoid(x * 2.0 + y) * ember::tanh(x);
    return std::make_tuple(z.sum(1), ember::cat({z, x}, 0));
  };
  auto gm = fx::trace(f, a, b);
  auto out = gm->forward({a, b}).toTuple()->elements();
  const auto want = f(a, b);
  ASSERT_EQ(out.size(), 2u);
  expect_close(out[0].toTensor(), std::get<0>(want), 0);
  expect_close(out[1].toTensor(), std::get<1>(want), 0);
  // Multiple results of one op become getitem nodes.
  auto g2 = fx::trace([](const Tensor& x) { return std::get<0>(ember::max(x, 1)) + 1; }, a);
  EXPECT_NE(g2->code().find("operator.getitem(max, 0)"), std::string::npos) << g2->code();
  expect_close(g2->forward(a), std::get<0>(ember::max(a, 1)) + 1, 0);
}

// Ops of the table's later rows, recorded and replayed through it: equal to the eager calls.
TEST(Fx, ReplaysTableOps) {
  ember::manual_seed(3);
  const Tensor a = ember::randn({4, 5}), b = ember::randn({4, 5}), v = ember::randn({5});
  auto f = [&](const Tensor& x, const Tensor& y) {
    Tensor z = ember::narrow(x, 1, 1, 3).repeat({1, 2}) + ember::flip(y, {0}).narrow(1, 0, 3).repeat({1, 2});
    z = ember::roll(z, {1}, {0}) + ember::cumsum(z, 1) + ember::logsumexp(z, {1}, true);
    z = ember::clamp_min(z, -1.0) * ember::clamp_max(z, 2.0) + ember::lerp(z, z.abs(), 0.25) +
        ember::lerp(z, -z, ember::sigmoid(z)) + ember::softplus(z, 2.0, 10.0);
    Tensor w = ember::mv(x, v) + ember::dot(v, v) + ember::outer(v, v).sum(0).sum();
    Tensor c = z.clone();
    c.clamp_(-0.5, 0.5);
    c.masked_fill_(c > 0.25, 1.0);
    c.masked_fill_(c < -0.25, ember::full({}, -1.0));
    Tensor d = ember::zeros_like(c);
    d.copy_(c);
    d.fill_(0.5);
    // clone and a layout change: Ember's `to` op, recorded with libtorch's arguments.
    Tensor e = (d + c.clone()).view({4, 6, 1, 1}).contiguous(ember::MemoryFormat::ChannelsLast);
    return std::make_tuple(z + c, w, e.to(ember::kDouble));
  };
  auto gm = fx::trace(f, a, b);
  const auto want = f(a, b);
  auto got = gm->forward({a, b}).toTuple()->elements();
  expect_close(got[0].toTensor(), std::get<0>(want), 0);
  expect_close(got[1].toTensor(), std::get<1>(want), 0);
  expect_close(got[2].toTensor(), std::get<2>(want), 0);
  EXPECT_TRUE(got[2].toTensor().is_contiguous(ember::MemoryFormat::ChannelsLast));
  EXPECT_EQ(got[2].toTensor().dtype(), ember::kDouble);
  EXPECT_NE(gm->code().find("torch.to(add_"), std::string::npos) << gm->code();
}

// The op table's rows of reductions, sorting and selection, losses, upsampling and unary math,
// traced under PyTorch's names and replayed on new inputs: equal to eager Ember exactly.
TEST(Fx, TracesReductionSortLossAndUpsampleOps) {
  auto f = [](const Tensor& x, const Tensor& y, const Tensor& labels, const Tensor& img) {
    std::vector<Tensor> r;
    r.push_back(ember::prod(x));
    r.push_back(ember::prod(x, 1, true));
    r.push_back(ember::prod(x, 0, false, ember::kDouble));
    r.push_back(ember::std(x));
    r.push_back(ember::var(x, false));
    r.push_back(ember::std(x, std::vector<int64_t>{1}, true, true));
    r.push_back(ember::var(x, std::vector<int64_t>{0}, std::optional<int64_t>(0), false));
    auto [s, m] = ember::std_mean(x, std::vector<int64_t>{1}, false, true);
    auto [v, m2] = ember::var_mean(x, std::nullopt, std::optional<int64_t>(2), false);
    auto [tv, ti] = ember::topk(x, 3, 1, false);
    auto [sv, si] = ember::sort(x, 0, true);
    auto [kv, ki] = ember::kthvalue(x, 2, 1, true);
    for (const Tensor& t : {s, m, v, m2, tv, ti, sv, si, kv, ki}) r.push_back(t);
    r.push_back(ember::argsort(x, 1, true));
    r.push_back(ember::nonzero(x > 0));
    r.push_back(ember::masked_select(x, x > 0));
    r.push_back(ember::min(x));
    r.push_back(std::get<0>(ember::min(x, 1)));
    r.push_back(ember::minimum(x, y) + ember::maximum(x, y));
    r.push_back(ember::amax(x, {1}) + ember::amin(x, {1}));
    r.push_back(ember::argmin(x, 1));
    r.push_back(ember::all(x > -10));
    r.push_back(ember::any(x > 1, 1));
    r.push_back(ember::norm(x, 3, {1}));
    r.push_back(ember::cumprod(x, 1));
    r.push_back(ember::one_hot(labels, 6));
    r.push_back(ember::scatter_add(x, 1, labels.view({4, 1}).expand({4, 2}).contiguous(), y.narrow(1, 0, 2)));
    r.push_back(ember::index_add(x, 0, labels.remainder(4), y, 2));
    r.push_back(ember::diagonal(x, 1) + x.unfold(1, 2, 2).sum());
    r.push_back(ember::bitwise_not(x > 0));
    r.push_back(ember::sin(x) + ember::cos(x) + ember::floor(x) + ember::ceil(x) + ember::round(x) + ember::trunc(x) +
                ember::square(x) + ember::sign(x) + ember::log1p(x.abs()) + ember::expm1(x) + ember::erfc(x) +
                ember::atan(x) + ember::reciprocal(x));
    r.push_back(ember::nll_loss(ember::log_softmax(x, 1), labels));
    r.push_back(ember::cross_entropy_loss(x, labels, {}, 2, -100, 0.1));
    r.push_back(ember::nn::functional::cross_entropy(x, labels));
    r.push_back(ember::mse_loss(x, y, 2) + ember::l1_loss(x, y) + ember::smooth_l1_loss(x, y, 1, 0.5) +
                ember::binary_cross_entropy(ember::sigmoid(x), ember::sigmoid(y)) +
                ember::binary_cross_entropy_with_logits(x, ember::sigmoid(y), {}, ember::exp(y.select(0, 0))) +
                ember::kl_div(ember::log_softmax(x, 1), ember::softmax(y, 1), 1, false) + ember::soft_margin_loss(x, y.sign()));
    r.push_back(ember::huber_loss(x, y, 0, 2.0));
    r.push_back(ember::interpolate(img, std::nullopt, std::vector<double>{2.0}, "bilinear", false));
    r.push_back(ember::interpolate(img, std::vector<int64_t>{5, 7}, std::nullopt, "bilinear", true));
    r.push_back(ember::interpolate(img, std::vector<int64_t>{8, 12}));
    r.push_back(ember::interpolate(img.select(0, 0), std::nullopt, std::vector<double>{3.0}));
    return r;
  };
  ember::manual_seed(5);
  const Tensor x = ember::randn({4, 6}), y = ember::randn({4, 6}), img = ember::randn({1, 2, 4, 6});
  const Tensor labels = ember::tensor(std::vector<int64_t>{0, 5, 2, 3}, ember::kLong);
  auto gm = fx::trace(f, x, y, labels, img);
  std::set<std::string> targets;
  for (const fx::Node* n : gm->graph().nodes())
    if (n->op() == fx::OpKind::CallFunction) targets.insert(n->target());
  for (const char* want : {"prod", "std", "var", "std_mean", "var_mean", "topk", "sort", "kthvalue", "argsort", "nonzero",
                           "masked_select", "min", "minimum", "maximum", "amax", "amin", "argmin", "all", "any", "norm",
                           "cumprod", "one_hot", "scatter_add", "index_add", "diagonal", "unfold", "bitwise_not", "sin",
                           "floor", "round", "square", "sign", "log1p", "expm1", "erfc", "reciprocal", "nll_loss",
                           "cross_entropy_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
                           "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "soft_margin_loss",
                           "upsample_bilinear2d", "upsample_nearest2d", "upsample_nearest1d"})
    EXPECT_TRUE(targets.count(want)) << want << " not recorded:\n" << gm->code();
  EXPECT_FALSE(targets.count("interpolate")) << gm->code();
  // Overloads and keyword-only arguments as libtorch's schemas have them.
  const std::string code = gm->code();
  for (const char* want : {"torch.prod(x, dtype = None)", "torch.prod(x, 0, False, dtype = 7)", "correction = 2",
                           "torch.upsample_bilinear2d(x_3, None, False, [2.0, 2.0])", "torch.all(gt_2)", "alpha = 2"})
    EXPECT_NE(code.find(want), std::string::npos) << want << "\n" << code;
  // Replayed on new inputs (new values, the example's shapes: nonzero's count differs).
  const Tensor x2 = ember::randn({4, 6}), y2 = ember::randn({4, 6}), img2 = ember::randn({1, 2, 4, 6});
  const Tensor labels2 = ember::tensor(std::vector<int64_t>{1, 1, 4, 0}, ember::kLong);
  for (const auto& in : {std::vector<Tensor>{x, y, labels, img}, std::vector<Tensor>{x2, y2, labels2, img2}}) {
    const auto want = f(in[0], in[1], in[2], in[3]);
    const auto got = gm->forward({in[0], in[1], in[2], in[3]}).toList();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      const Tensor g = got[i].toTensor();
      ASSERT_EQ(g.sizes(), want[i].sizes()) << "output " << i;
      EXPECT_EQ(g.dtype(), want[i].dtype()) << "output " << i;
      EXPECT_TRUE(ember::equal(g, want[i])) << "output " << i << "\n" << g << "\n" << want[i];
    }
  }
}

// Division (every form records its rounding mode), other binary math, in-place forms, pools and
// instance_norm: recorded under PyTorch's names and schemas, replayed equal to eager Ember.
TEST(Fx, TracesArithmeticInPlaceAndPoolOps) {
  auto f = [](const Tensor& x, const Tensor& y, const Tensor& b) {
    std::vector<Tensor> r;
    r.push_back(x / y + x / 2.0 + ember::div(x, y, "floor") + ember::div(x, ember::Scalar(3), "trunc"));
    r.push_back(ember::fmod(x, y) + ember::fmod(x, 1.5) + ember::floor_divide(x, y) + ember::atan2(x, y) +
                ember::copysign(x, y));
    r.push_back(ember::baddbmm(b.narrow(2, 0, 3), b, b.transpose(1, 2), 0.5, 2).sum() + ember::addmv(x.select(1, 0), x, y.select(0, 0)).sum());
    r.push_back(ember::isclose(x, y, 0.5, 0.5));
    r.push_back(ember::nan_to_num(ember::log(x), 0.0, 1.0, -1.0) + ember::lgamma(x.abs() + 1) + ember::digamma(x.abs() + 1));
    r.push_back(ember::instance_norm(b, {}, {}, {}, {}, true, 0.1, 1e-5));
    r.push_back(ember::avg_pool1d(b, {2}, {1}, {1}, true, false) + 1);
    r.push_back(ember::adaptive_avg_pool1d(b, {2}));
    Tensor c = x.clone();
    c.div_(y);
    c.div_(2.0, "floor");
    c.pow_(2);
    c.clamp_min_(-1.0);
    c.clamp_max_(1.0);
    c.lerp_(y, 0.5);
    c.fmod_(0.75);
    c.floor_divide_(0.25);
    c.scatter_add_(1, ember::zeros({6, 2}, ember::kLong), y.narrow(1, 0, 2));
    c.index_add_(0, ember::arange(6).flip({0}), y, 0.5);
    ember::index_put_(c, {ember::arange(3)}, y.narrow(0, 0, 3), true);
    r.push_back(c);
    return r;
  };
  ember::manual_seed(7);
  const Tensor x = ember::randn({6, 6}), y = ember::randn({6, 6}), b = ember::randn({2, 3, 5});
  auto gm = fx::trace(f, x, y, b);
  std::set<std::string> targets;
  for (const fx::Node* n : gm->graph().nodes())
    if (n->op() == fx::OpKind::CallFunction) targets.insert(n->target());
  for (const char* want : {"div", "fmod", "floor_divide", "atan2", "copysign", "baddbmm", "addmv", "isclose", "nan_to_num",
                           "lgamma", "digamma", "instance_norm", "avg_pool1d", "adaptive_avg_pool1d", "div_", "pow_",
                           "clamp_min_", "clamp_max_", "lerp_", "fmod_", "floor_divide_", "scatter_add_", "index_add_",
                           "index_put_"})
    EXPECT_TRUE(targets.count(want)) << want << " not recorded:\n" << gm->code();
  const std::string code = gm->code();
  for (const char* want : {"rounding_mode = 'floor'", "rounding_mode = None", "beta = 0.5, alpha = 2", "True)"})
    EXPECT_NE(code.find(want), std::string::npos) << want << "\n" << code;
  const Tensor x2 = ember::randn({6, 6}), y2 = ember::randn({6, 6}), b2 = ember::randn({2, 3, 5});
  for (const auto& in : {std::vector<Tensor>{x, y, b}, std::vector<Tensor>{x2, y2, b2}}) {
    const auto want = f(in[0], in[1], in[2]);
    const auto got = gm->forward({in[0], in[1], in[2]}).toList();
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) {
      const Tensor g = got[i].toTensor();
      ASSERT_EQ(g.sizes(), want[i].sizes()) << "output " << i;
      EXPECT_TRUE(ember::equal(g, want[i])) << "output " << i << "\n" << g << "\n" << want[i];
    }
  }
}

// The model zoo traced down to ops (every op of resnet18 and mobilenet_v3_small is in the table).
TEST(Fx, TracesVisionModelsToOps) {
  ember::manual_seed(1);
  const Tensor x = ember::randn({1, 3, 64, 64});
  auto check = [&](auto model) {
    model->eval();
    OpsOnly tracer;
    auto gm = tracer.trace(*model, {x}, [&](const std::vector<Tensor>& in) { return ember::jit::IValue(model->forward(in[0])); });
    for (fx::Node* n : gm->graph().nodes()) EXPECT_NE(n->op(), fx::OpKind::CallModule) << n->format();
    const Tensor x2 = ember::randn({1, 3, 64, 64});  // the example's batch: shapes are the example's
    expect_close(gm->forward(x2), model->forward(x2), 0);
  };
  check(ember::vision::models::resnet18(ember::vision::models::ResNetOptions().num_classes(10)));
  check(ember::vision::models::mobilenet_v3_small(ember::vision::models::MobileNetV3Options().num_classes(10)));
}

TEST(Fx, TracingTraps) {
  const Tensor a = ember::randn({3});
  expect_error([&] { fx::trace([](const Tensor& x) { return x * x.sum().item<double>(); }, a); },
               {"fx", "item() reads the value of traced tensor 'sum'", "concrete_args"});
  expect_error([&] { fx::trace([](const Tensor& x) { return ember::equal(x, x) ? x : -x; }, a); },
               {"fx", "op 'equal' turns traced tensor 'x' into a value"});
  expect_error([&] { fx::trace([](const Tensor& x) { return x.is_nonzero() ? x : -x; }, a.sum()); },
               {"item() reads the value of traced tensor"});
  // A concrete input is a constant of the graph: its value may be read.
  fx::Tracer tracer;
  tracer.concrete_args = {1};
  const Tensor scale = ember::full({}, 3.0);
  nn::Module root;
  auto gm = tracer.trace(root, {a, scale}, [](const std::vector<Tensor>& in) {
    return ember::jit::IValue(in[0] * in[1].item<double>());
  });
  expect_close(gm->forward(std::vector<ember::jit::IValue>{a}).toTensor(), a * 3.0, 0);
  // The trace leaves the caller's tensors alone (the code ran on copies).
  const Tensor before = a.clone();
  fx::trace([](Tensor x) { return x.mul_(2); }, a);
  EXPECT_TRUE(ember::equal(a, before));
}

TEST(Fx, GraphSurgeryAndPrinting) {
  fx::Graph g;
  fx::Node* x = g.placeholder("x");
  fx::Node* r = g.call_function("relu", {x});
  fx::Node* out = g.output(r);
  EXPECT_EQ(r->users(), std::vector<fx::Node*>{out});
  {
    auto at = g.inserting_after(r);
    fx::Node* n = g.call_function("neg", {r});
    r->replace_all_uses_with(n);
    n->set_arg(0, r);  // replace_all_uses_with also rewrote n itself
  }
  g.lint();
  EXPECT_EQ(g.nodes()[2]->target(), "neg");
  EXPECT_EQ(g.python_code(), "def forward(self, x):\n    relu = torch.relu(x)\n    neg = torch.neg(relu)\n    return neg\n");
  fx::Node* dead = g.call_function("add", {x, x}, {{"alpha", ember::jit::IValue(int64_t{2})}});
  {
    auto at = g.inserting_before(out);
    fx::Node* d2 = g.call_function("relu", {x});
    EXPECT_EQ(d2->name(), "relu_1");
    EXPECT_EQ(d2->next(), out);
  }
  EXPECT_NE(g.tabular().find("call_function  add"), std::string::npos) << g.tabular();
  EXPECT_NE(dead->format().find("kwargs = {alpha: 2}"), std::string::npos) << dead->format();
  expect_error([&] { g.erase_node(r); }, {"erase_node: node 'relu' still has 1 user(s) (neg)"});
  expect_error([&] { g.lint(); }, {"lint: node 'add' comes after the output node"});
  EXPECT_TRUE(g.eliminate_dead_code());
  EXPECT_EQ(g.size(), 4u);
  g.lint();
  EXPECT_FALSE(g.eliminate_dead_code());
}

TEST(Fx, LintErrors) {
  {
    fx::Graph g;
    fx::Node* x = g.placeholder("x");
    fx::Node* a = g.call_function("relu", {x});
    fx::Node* b = g.call_function("neg", {x});
    g.output(b);
    a->set_arg(0, b);  // reads a later node
    expect_error([&] { g.lint(); }, {"lint: node 'relu' reads node 'neg', which comes later"});
  }
  {
    fx::Graph g;
    fx::Node* x = g.placeholder("x");
    fx::Node* a = g.call_function("relu", {x});
    g.output(x);
    g.erase_node(a);
    fx::Node* b = g.call_function("neg", {x});
    expect_error([&] { b->set_arg(0, a); }, {"cannot read node 'relu': it was erased"});
  }
  {
    fx::Graph g;
    g.placeholder("x");
    expect_error([&] { g.lint(); }, {"0 output nodes"});
  }
}

TEST(Fx, GraphModuleErrors) {
  auto gm = fx::trace([](const Tensor& x) { return ember::relu(x); }, ember::randn({2}));
  fx::Node* relu = gm->graph().find("relu");
  ASSERT_NE(relu, nullptr);
  relu->set_target("no_such_op");
  expect_error([&] { gm->forward(ember::randn({2})); }, {"call recompile()"});
  expect_error([&] { gm->recompile(); }, {"node 'relu' calls op 'no_such_op', which is not in the op table"});
  relu->set_target("relu");
  {
    auto at = gm->graph().inserting_before(relu);
    gm->graph().call_module("missing", {gm->graph().find("x")});
  }
  expect_error([&] { gm->recompile(); }, {"node 'missing' calls module 'missing', which the GraphModule has not"});
  gm->graph().erase_node(gm->graph().find("missing"));
  gm->recompile();
  expect_error([&] { gm->forward(std::vector<ember::jit::IValue>{}); }, {"takes 1 inputs, not 0"});
}

struct Mlp : nn::Module {
  Mlp() {
    for (int i = 0; i < 3; ++i) layers->push_back(nn::Linear(6, 6));
    register_module("layers", layers);
  }
  Tensor forward(Tensor x) {
    for (const auto& l : *layers) x = ember::relu(l->as<nn::Linear>()->forward(x));
    return x;
  }
  nn::ModuleList layers;
};

TEST(Fx, InterpreterTransformerShapeProp) {
  auto m = std::make_shared<Mlp>();
  const Tensor x = ember::randn({4, 6});
  // Through ->forward the Linear calls are not seen as module calls: their ops are recorded.
  auto gm = fx::symbolic_trace(m, x);
  EXPECT_NE(gm->code().find("torch.linear(x, layers_0_weight, layers_0_bias)"), std::string::npos) << gm->code();

  struct Counting : fx::Interpreter {
    using fx::Interpreter::Interpreter;
    int calls = 0;
    ember::jit::IValue call_function(const std::string& target, const std::vector<ember::jit::IValue>& args,
                                     const std::vector<std::pair<std::string, ember::jit::IValue>>& kwargs) override {
      ++calls;
      if (target == "relu") return ember::sigmoid(args[0].toTensor());
      return fx::Interpreter::call_function(target, args, kwargs);
    }
  };
  Counting interp(*gm);
  Tensor y = interp.run({x}).toTensor();
  EXPECT_EQ(interp.calls, 6);
  Tensor want = x;
  for (const auto& l : *m->layers) want = ember::sigmoid(l->as<nn::Linear>()->forward(want));
  expect_close(y, want, 1e-6);

  struct ReluToGelu : fx::Transformer {
    using fx::Transformer::Transformer;
    fx::Node* call_function(const fx::Node& old, std::vector<fx::Argument> args, fx::Kwargs kwargs) override {
      if (old.target() == "relu") return new_graph().call_function("gelu", std::move(args));
      return fx::Transformer::call_function(old, std::move(args), std::move(kwargs));
    }
  };
  auto gelu = ReluToGelu(*gm).transform();
  want = x;
  for (const auto& l : *m->layers) want = ember::gelu(l->as<nn::Linear>()->forward(want));
  expect_close(gelu->forward(x), want, 1e-6);

  fx::ShapeProp(*gm).propagate({ember::randn({7, 6})});
  fx::Node* last = gm->graph().output_node()->args()[0].node();
  EXPECT_EQ(last->meta.at("shape").toIntVector(), (std::vector<int64_t>{7, 6}));
  EXPECT_EQ(last->meta.at("dtype").toStringRef(), "Float");
}

// The pass of docs/fx.md's "Writing a pass".
void relu_to_clamp(fx::GraphModule& gm) {
  fx::Graph& g = gm.graph();
  for (fx::Node* n : g.nodes()) {
    if (n->op() != fx::OpKind::CallFunction || n->target() != "relu") continue;
    fx::Node* clamp;
    {
      auto at = g.inserting_after(n);
      clamp = g.call_function("clamp", {n->args()[0], ember::jit::IValue(0.0), ember::jit::IValue()});
    }
    n->replace_all_uses_with(clamp);
    g.erase_node(n);
  }
  g.eliminate_dead_code();
  gm.recompile();
}

TEST(Fx, DocsPass) {
  auto f = [](const Tensor& x) { return ember::relu(x) * ember::relu(-x) + x; };
  const Tensor a = ember::randn({10});
  auto gm = fx::trace(f, a);
  relu_to_clamp(*gm);
  EXPECT_EQ(gm->code().find("relu"), std::string::npos) << gm->code();
  EXPECT_NE(gm->code().find("torch.clamp(x, 0.0, None)"), std::string::npos) << gm->code();
  expect_close(gm->forward(a), f(a), 0);
}

TEST(Fx, ReplacePattern) {
  auto f = [](const Tensor& x, const Tensor& y) {
    return ember::relu(ember::neg(x) + y) * ember::relu(ember::neg(y) + x);
  };
  const Tensor a = ember::randn({5}), b = ember::randn({5});
  auto gm = fx::trace(f, a, b);
  auto pattern = fx::trace([](const Tensor& p, const Tensor& q) { return ember::relu(ember::neg(p) + q); }, a, b);
  auto replacement = fx::trace([](const Tensor& p, const Tensor& q) { return ember::relu(q - p); }, a, b);
  auto matches = fx::subgraph_rewriter::replace_pattern(*gm, *pattern, *replacement);
  EXPECT_EQ(matches.size(), 2u);
  EXPECT_EQ(gm->code().find("torch.neg"), std::string::npos) << gm->code();
  expect_close(gm->forward(a, b), f(a, b), 1e-6);
  // A pattern whose inner result is used elsewhere does not match.
  auto g2 = fx::trace(
      [](const Tensor& x, const Tensor& y) {
        const Tensor n = ember::neg(x);
        return ember::relu(n + y) + n;
      },
      a, b);
  EXPECT_EQ(fx::subgraph_rewriter::replace_pattern(*g2, *pattern, *replacement).size(), 0u);
  auto bad = fx::trace([](const Tensor& p) { return ember::relu(p); }, a);
  expect_error([&] { fx::subgraph_rewriter::replace_pattern(*gm, *pattern, *bad); },
               {"the pattern takes 2 inputs and the replacement 1"});
}

TEST(Fx, ConvBnFoldingAndInference) {
  auto m = trained_cnn();
  const Tensor x = ember::randn({3, 3, 10, 10});
  auto gm = fx::symbolic_trace(m, x);
  const Tensor want = m->forward(x);
  EXPECT_EQ(fx::fuse_conv_bn(*gm), 3u);  // conv1+bn1, block.0+block.1, fc+bn2
  expect_close(gm->forward(x), want, 1e-5);
  for (fx::Node* n : gm->graph().nodes()) {
    if (n->op() == fx::OpKind::CallModule) {
      EXPECT_EQ(gm->submodule(n->target())->name().find("BatchNorm"), std::string::npos);
    }
  }
  // The root's modules are unchanged.
  expect_close(m->forward(x), want, 0);
  auto gm2 = fx::symbolic_trace(m, x);
  fx::optimize_for_inference(*gm2);
  EXPECT_EQ(gm2->code().find("self.drop"), std::string::npos) << gm2->code();
  expect_close(gm2->forward(x), want, 1e-5);
  gm2->train();
  expect_error([&] { fx::optimize_for_inference(*gm2); }, {"eval mode"});
  // A float64 model folds into float64 layers.
  nn::Sequential d(nn::Conv2d(nn::Conv2dOptions(3, 4, 3)), nn::BatchNorm2d(4), nn::ReLU());
  d->forward(ember::randn({2, 3, 6, 6}));
  d->to(ember::kDouble);
  d->eval();
  const Tensor xd = ember::randn({2, 3, 6, 6}, ember::kDouble);
  auto gd = fx::symbolic_trace(d, xd);
  fx::optimize_for_inference(*gd);
  const Tensor yd = gd->forward(xd);
  EXPECT_EQ(yd.dtype(), ember::kDouble);
  expect_close(yd, d->forward(xd), 1e-12);
}

// fuse_conv_relu: a convolution module read only by a ReLU (module, relu or relu_) becomes a
// ConvReLU module sharing the convolution; results equal the unfused graph's, with and without a
// gradient to record.
TEST(Fx, ConvReluFusion) {
  struct Net : nn::Module {
    nn::Conv1d c1{register_module("c1", nn::Conv1d(nn::Conv1dOptions(2, 3, 3).padding(1)))};
    nn::Conv2d c2{register_module("c2", nn::Conv2d(nn::Conv2dOptions(3, 4, 3).padding(ember::kSame)))};
    nn::Conv2d c3{register_module("c3", nn::Conv2d(nn::Conv2dOptions(4, 4, 2).padding(ember::kSame)))};
    nn::Conv2d c4{register_module("c4", nn::Conv2d(nn::Conv2dOptions(4, 4, 3).padding(1).padding_mode(ember::kReflect)))};
    nn::Conv3d c5{register_module("c5", nn::Conv3d(nn::Conv3dOptions(1, 2, 2)))};
    nn::Conv2d c6{register_module("c6", nn::Conv2d(nn::Conv2dOptions(4, 4, 1)))};
    nn::ReLU relu{register_module("relu", nn::ReLU())};
    Tensor forward(const Tensor& x) {
      Tensor y = relu(c1(x)).unsqueeze(2).expand({-1, -1, 3, -1});  // (N, 3, 3, L)
      y = ember::relu(c2(y));
      Tensor z = c3(y);
      z = ember::relu_(z);  // asymmetric 'same' padding: fused, run as conv then relu_
      z = relu(c4(z));      // reflect padding
      Tensor v = c6(z);     // read twice: not fused
      Tensor w = relu(c5(z.unsqueeze(1)));
      return ember::relu(v) + v + w.sum();
    }
  };
  ember::manual_seed(5);
  auto m = std::make_shared<Net>();
  m->eval();
  const Tensor x = ember::randn({2, 2, 7});
  const Tensor want = m->forward(x);
  auto gm = fx::symbolic_trace(m, x);
  EXPECT_EQ(fx::fuse_conv_relu(*gm), 5u) << gm->code();
  size_t fused = 0;
  for (const fx::Node* n : gm->graph().nodes()) {
    if (n->op() != fx::OpKind::CallModule) continue;
    const std::string type = gm->submodule(n->target())->name();
    fused += type.find("intrinsic::ConvReLU") != std::string::npos;
    EXPECT_NE(type, "ember::nn::ReLUImpl") << gm->code();
  }
  EXPECT_EQ(fused, 5u);
  EXPECT_NE(gm->code().find("torch.relu(c6)"), std::string::npos) << gm->code();
  expect_close(gm->forward(x), want, 1e-6);
  {
    ember::InferenceMode guard;
    expect_close(gm->forward(x), want, 1e-6);
  }
  // Through the fused modules, gradients are those of the unfused model.
  const Tensor xg = x.clone().requires_grad_();
  gm->forward(xg).sum().backward();
  const Tensor xe = x.clone().requires_grad_();
  const Tensor grad_fused = m->c2->weight.grad().clone();
  m->zero_grad();
  m->forward(xe).sum().backward();
  expect_close(xg.grad(), xe.grad(), 1e-5);
  expect_close(grad_fused, m->c2->weight.grad(), 1e-5);
  // optimize_for_inference fuses after folding batch norms and moving to channels_last.
  nn::Sequential s(nn::Conv2d(nn::Conv2dOptions(3, 8, 3).padding(1)), nn::BatchNorm2d(8), nn::ReLU(),
                   nn::Conv2d(nn::Conv2dOptions(8, 8, 3).padding(1)), nn::ReLU());
  s->forward(ember::randn({2, 3, 8, 8}));
  s->eval();
  const Tensor xs = ember::randn({2, 3, 8, 8});
  auto gs = fx::symbolic_trace(s, xs);
  fx::optimize_for_inference(*gs);
  size_t convs = 0;
  for (const fx::Node* n : gs->graph().nodes()) {
    EXPECT_FALSE(n->op() == fx::OpKind::CallFunction && n->target().rfind("relu", 0) == 0) << gs->code();
    if (n->op() == fx::OpKind::CallModule) {
      EXPECT_NE(gs->submodule(n->target())->name().find("intrinsic::ConvReLU2d"), std::string::npos) << gs->code();
      ++convs;
    }
  }
  EXPECT_EQ(convs, 2u) << gs->code();
  expect_close(gs->forward(xs), s->forward(xs), 1e-5);
  // Traced through, a ConvReLU records its convolution and relu as the table's ops.
  nn::intrinsic::ConvReLU2d cr(nn::Conv2d(nn::Conv2dOptions(3, 4, 3).padding(1)));
  OpsOnly tracer;
  auto ops = tracer.trace(*cr, {xs}, [&](const std::vector<Tensor>& in) { return ember::jit::IValue(cr->forward(in[0])); });
  std::vector<std::string> targets;
  for (const fx::Node* n : ops->graph().nodes())
    if (n->op() == fx::OpKind::CallFunction) targets.push_back(n->target());
  EXPECT_EQ(targets, (std::vector<std::string>{"conv2d", "relu"})) << ops->code();
  expect_close(ops->forward(xs), cr(xs), 1e-6);
}

// optimize_for_inference inside an autocast region folds the region's casts into the graph (the
// convolutions' weights in bfloat16, their inputs cast by the graph), as freezing a trace made under
// autocast does; a graph optimized outside a region runs inside one too (its channel-blocked
// convolutions in float32); the fused convolution modules cast as conv2d does.
TEST(Fx, OptimizeForInferenceUnderAutocast) {
  struct Block : nn::Module {
    nn::Conv2d c1{register_module("c1", nn::Conv2d(nn::Conv2dOptions(16, 16, 3).padding(1).bias(false)))};
    nn::BatchNorm2d b1{register_module("b1", nn::BatchNorm2d(16))};
    nn::Conv2d c2{register_module("c2", nn::Conv2d(nn::Conv2dOptions(16, 16, 3).padding(1).bias(false)))};
    nn::BatchNorm2d b2{register_module("b2", nn::BatchNorm2d(16))};
    Tensor forward(const Tensor& x) {
      const Tensor y = ember::relu(b1(c1(x)));
      return ember::relu(b2(c2(y)) + y);
    }
  };
  ember::manual_seed(6);
  auto m = std::make_shared<Block>();
  for (int i = 0; i < 2; ++i) m->forward(ember::randn({4, 16, 16, 16}));
  m->eval();
  const Tensor x = ember::randn({2, 16, 16, 16});  // 512 positions: the float32 graph blocks them
  Tensor want;
  {
    ember::AutocastGuard autocast;
    want = m->forward(x);
  }
  ASSERT_EQ(want.dtype(), ember::kBFloat16);
  auto outside = fx::symbolic_trace(m, x);
  fx::optimize_for_inference(*outside);
  EXPECT_NE(outside->code().find("_blocked("), std::string::npos) << outside->code();
  {
    ember::AutocastGuard autocast;
    expect_close(outside->forward(x).to(ember::kFloat), want.to(ember::kFloat), 2e-2);
    // a bfloat16 input (another op's under autocast): the blocked convolution widens it
    expect_close(outside->forward(x.to(ember::kBFloat16)).to(ember::kFloat), want.to(ember::kFloat), 2e-2);
  }
  std::shared_ptr<fx::GraphModule> inside;
  {
    ember::AutocastGuard autocast;
    inside = fx::symbolic_trace(m, x);
    fx::optimize_for_inference(*inside);
  }
  size_t convs = 0;
  for (const fx::Node* n : inside->graph().nodes()) {
    if (n->op() != fx::OpKind::CallModule) continue;
    for (const Tensor& p : inside->submodule(n->target())->parameters()) EXPECT_EQ(p.dtype(), ember::kBFloat16);
    convs += inside->submodule(n->target())->name().find("Conv") != std::string::npos;
  }
  EXPECT_EQ(convs, 2u) << inside->code();
  Tensor got;
  {
    ember::AutocastGuard autocast;
    got = inside->forward(x);
  }
  EXPECT_EQ(got.dtype(), ember::kBFloat16);
  expect_close(got.to(ember::kFloat), want.to(ember::kFloat), 2e-2);
  // outside a region the graph makes the same casts
  expect_close(inside->forward(x).to(ember::kFloat), got.to(ember::kFloat), 0);
  // A ConvReLU2d under autocast: bfloat16, as relu(conv2d) there, on the fused path (nothing to
  // record) and the recorded one.
  nn::intrinsic::ConvReLU2d cr(nn::Conv2d(nn::Conv2dOptions(16, 8, 3).padding(1)));
  ember::AutocastGuard autocast;
  const Tensor ref = ember::relu(ember::conv2d(x, cr->conv->weight, cr->conv->bias, 1, 1));
  ASSERT_EQ(ref.dtype(), ember::kBFloat16);
  const Tensor recorded = cr(x);
  EXPECT_EQ(recorded.dtype(), ember::kBFloat16);
  expect_close(recorded.to(ember::kFloat), ref.to(ember::kFloat), 0);
  ember::InferenceMode guard;
  const Tensor fused = cr(x);
  EXPECT_EQ(fused.dtype(), ember::kBFloat16);
  expect_close(fused.to(ember::kFloat), ref.to(ember::kFloat), 1e-2);
}

// optimize_for_inference's conv-add fusion: a convolution added to a value nothing reads afterwards
// (a residual block's identity) writes the sum into that value, the ReLU after it included; a value
// read later, a graph input and the convolution's own input are not written.
TEST(Fx, ConvAddFusion) {
  struct Net : nn::Module {
    nn::Conv2d a{register_module("a", nn::Conv2d(nn::Conv2dOptions(8, 8, 3).padding(1)))};
    nn::Conv2d b{register_module("b", nn::Conv2d(nn::Conv2dOptions(8, 8, 1)))};
    nn::Conv2d c{register_module("c", nn::Conv2d(nn::Conv2dOptions(8, 8, 1).bias(false)))};
    nn::Conv2d d{register_module("d", nn::Conv2d(nn::Conv2dOptions(8, 8, 1)))};
    nn::Conv2d e{register_module("e", nn::Conv2d(nn::Conv2dOptions(8, 8, 1)))};
    nn::ReLU relu{register_module("relu", nn::ReLU(nn::ReLUOptions(true)))};
    nn::MaxPool2d pool{register_module("pool", nn::MaxPool2d(nn::MaxPool2dOptions(6)))};
    Tensor forward(const Tensor& x) {
      const Tensor y = relu(a(x));
      const Tensor s = relu(c(b(y)) + y);  // fused: y's other reader (b) runs before
      const Tensor t = d(s) + s;           // not: d reads s
      const Tensor u = e(t) + x;           // not: x is the graph's input
      const Tensor w = b(u) + t;           // not: t is read below
      const Tensor z = e(w) + pool(s);     // fused, but a broadcast sum: computed into a new tensor
      return w + t + u + z;
    }
  };
  ember::manual_seed(7);
  auto m = std::make_shared<Net>();
  m->eval();
  const Tensor x = ember::randn({2, 8, 6, 6}), x0 = x.clone();
  const Tensor want = m->forward(x);
  auto gm = fx::symbolic_trace(m, x);
  fx::optimize_for_inference(*gm);
  std::vector<std::string> fused;
  for (const fx::Node* n : gm->graph().nodes()) {
    if (n->op() != fx::OpKind::CallModule) continue;
    const std::string type = gm->submodule(n->target())->name();
    if (type.find("ConvAdd") != std::string::npos) fused.push_back(type);
  }
  EXPECT_EQ(fused, (std::vector<std::string>{"ember::fx::ConvAddReLU2d", "ember::fx::ConvAdd2d"})) << gm->code();
  expect_close(gm->forward(x), want, 1e-5);  // the weights require grad: the unfused ops
  {
    ember::InferenceMode guard;  // the fused path, twice: its writes land in values of this run only
    for (int run = 0; run < 2; ++run) expect_close(gm->forward(x), want, 1e-5);
  }
  {
    ember::NoGradGuard no_grad;
    expect_close(gm->forward(x), want, 1e-5);
  }
  expect_close(x, x0, 0);  // the input unchanged
  // recording a gradient: the unfused ops, the same gradients
  const Tensor xg = x.clone().requires_grad_(), xe = x.clone().requires_grad_();
  expect_close(gm->forward(xg), want, 1e-5);
  gm->forward(xg).sum().backward();
  m->forward(xe).sum().backward();
  expect_close(xg.grad(), xe.grad(), 1e-5);
  {  // the float32 graph inside an autocast region: its fused convolutions cast as conv2d's do
    ember::AutocastGuard autocast;
    ember::NoGradGuard no_grad;
    expect_close(gm->forward(x).to(ember::kFloat), m->forward(x).to(ember::kFloat), 2e-2);
  }
  // optimized inside an autocast region, on bfloat16 values
  Tensor want16;
  std::shared_ptr<fx::GraphModule> g16;
  {
    ember::AutocastGuard autocast;
    ember::NoGradGuard no_grad;
    want16 = m->forward(x);
    g16 = fx::symbolic_trace(m, x);
    fx::optimize_for_inference(*g16);
    const Tensor got = g16->forward(x);
    EXPECT_EQ(got.dtype(), want16.dtype());
    expect_close(got.to(ember::kFloat), want16.to(ember::kFloat), 2e-2);
  }
  EXPECT_NE(g16->code().find("_add_relu("), std::string::npos) << g16->code();
}

// fuse_conv_hardswish: a convolution module read only by a Hardswish (module, hardswish or
// hardswish_) becomes an fx ConvHardswish module sharing the convolution; results equal the unfused
// graph's, with and without a gradient to record; optimize_for_inference makes MobileNet's
// Conv-BatchNorm-Hardswish one module.
TEST(Fx, ConvHardswishFusion) {
  struct Net : nn::Module {
    nn::Conv1d c1{register_module("c1", nn::Conv1d(nn::Conv1dOptions(2, 3, 3).padding(1)))};
    nn::Conv2d c2{register_module("c2", nn::Conv2d(nn::Conv2dOptions(3, 4, 3).padding(ember::kSame)))};
    nn::Conv2d c3{register_module("c3", nn::Conv2d(nn::Conv2dOptions(4, 4, 2).padding(ember::kSame)))};
    nn::Conv2d c4{register_module("c4", nn::Conv2d(nn::Conv2dOptions(4, 4, 3).padding(1).groups(4)))};
    nn::Conv2d c5{register_module("c5", nn::Conv2d(nn::Conv2dOptions(4, 4, 1)))};
    nn::Hardswish hs{register_module("hs", nn::Hardswish())};
    Tensor forward(const Tensor& x) {
      Tensor y = hs(c1(x)).unsqueeze(2).expand({-1, -1, 3, -1});  // (N, 3, 3, L)
      y = ember::hardswish(c2(y));
      Tensor z = c3(y);
      z = ember::hardswish_(z);  // asymmetric 'same' padding: fused, run as conv then hardswish_
      z = hs(c4(z));             // depthwise
      Tensor v = c5(z);          // read twice: not fused
      return ember::hardswish(v) + v;
    }
  };
  ember::manual_seed(7);
  auto m = std::make_shared<Net>();
  m->eval();
  const Tensor x = ember::randn({2, 2, 7}) * 3.0;
  const Tensor want = m->forward(x);
  auto gm = fx::symbolic_trace(m, x);
  EXPECT_EQ(fx::fuse_conv_hardswish(*gm), 4u) << gm->code();
  size_t fused = 0;
  for (const fx::Node* n : gm->graph().nodes()) {
    if (n->op() != fx::OpKind::CallModule) continue;
    const std::string type = gm->submodule(n->target())->name();
    fused += type.rfind("ember::fx::ConvHardswish", 0) == 0;
    EXPECT_NE(type, "ember::nn::HardswishImpl") << gm->code();
  }
  EXPECT_EQ(fused, 4u);
  EXPECT_NE(gm->code().find("torch.hardswish(c5)"), std::string::npos) << gm->code();
  expect_close(gm->forward(x), want, 1e-6);
  {
    ember::InferenceMode guard;
    expect_close(gm->forward(x), want, 1e-6);
  }
  // Through the fused modules, gradients are those of the unfused model.
  const Tensor xg = x.clone().requires_grad_();
  gm->forward(xg).sum().backward();
  const Tensor grad_fused = m->c4->weight.grad().clone();
  m->zero_grad();
  const Tensor xe = x.clone().requires_grad_();
  m->forward(xe).sum().backward();
  expect_close(xg.grad(), xe.grad(), 1e-5);
  expect_close(grad_fused, m->c4->weight.grad(), 1e-5);
  // optimize_for_inference: batch norms folded, then each Conv2d with its Hardswish or ReLU one module.
  namespace models = ember::vision::models;
  nn::Sequential s(models::Conv2dNormActivation(3, 8, 3, 2, 1, 1, models::Activation::Hardswish),
                   models::Conv2dNormActivation(8, 8, 3, 1, 8, 1, models::Activation::ReLU),
                   models::Conv2dNormActivation(8, 8, 1, 1, 1, 1, models::Activation::Hardswish));
  s->forward(ember::randn({2, 3, 16, 16}));
  s->eval();
  const Tensor xs = ember::randn({2, 3, 16, 16});
  auto gs = fx::symbolic_trace(s, xs);
  fx::optimize_for_inference(*gs);
  std::vector<std::string> modules;
  for (const fx::Node* n : gs->graph().nodes()) {
    if (n->op() != fx::OpKind::CallModule) continue;
    const std::string type = gs->submodule(n->target())->name();
    modules.push_back(type.find("intrinsic::ConvReLU2d") != std::string::npos ? "ConvReLU2d" : type);
  }
  EXPECT_EQ(modules, (std::vector<std::string>{"ember::fx::ConvHardswish2d", "ConvReLU2d", "ember::fx::ConvHardswish2d"}))
      << gs->code();
  expect_close(gs->forward(xs), s->forward(xs), 1e-5);
}

// optimize_for_inference keeps activations channel-blocked between float32 Conv2d layers (and the
// relu, hardswish and sums between them) where a group of them holds a 3x3 unit-stride convolution
// of 16 or more input channels (groups without one stay in channels_last: ConvReluFusion,
// ConvHardswishFusion); every other reader, and the graph's output, gets an ordinary contiguous
// tensor. Channel counts not multiples of 16 (the blocks' zero padding read by Winograd), stride 2,
// groups, 1x1, a residual sum, an in-place relu, a convolution's result that is also returned, and
// a non-pointwise reader (max pooling): results equal eager's within 1e-4.
TEST(Fx, BlockedConvolutionsEqualEager) {
  struct Net : nn::Module {
    nn::Conv2d c1{register_module("c1", nn::Conv2d(nn::Conv2dOptions(3, 20, 3).padding(1)))};
    nn::BatchNorm2d b1{register_module("b1", nn::BatchNorm2d(20))};
    nn::Conv2d c2{register_module("c2", nn::Conv2d(nn::Conv2dOptions(20, 24, 3).stride(2).padding(1)))};
    nn::BatchNorm2d b2{register_module("b2", nn::BatchNorm2d(24))};
    nn::Conv2d c3{register_module("c3", nn::Conv2d(nn::Conv2dOptions(24, 24, 3).padding(1).groups(4)))};
    nn::Conv2d c4{register_module("c4", nn::Conv2d(nn::Conv2dOptions(24, 24, 1)))};
    nn::Conv2d down{register_module("down", nn::Conv2d(nn::Conv2dOptions(20, 24, 1).stride(2)))};
    nn::Conv2d c5{register_module("c5", nn::Conv2d(nn::Conv2dOptions(24, 17, 3).padding(1)))};
    nn::Conv2d c6{register_module("c6", nn::Conv2d(nn::Conv2dOptions(17, 17, 3).padding(1)))};
    nn::Conv2d c7{register_module("c7", nn::Conv2d(nn::Conv2dOptions(17, 17, 3).padding(1)))};
    nn::ReLU relu{register_module("relu", nn::ReLU(nn::ReLUOptions(true)))};
    std::tuple<Tensor, Tensor, Tensor> forward(const Tensor& x) {
      const Tensor y = ember::relu(b1(c1(x)));            // 3 input channels: read as they are
      const Tensor z = ember::relu(b2(c2(y)));            // stride 2
      const Tensor r = relu(c4(ember::relu(c3(z))) + down(y));  // groups, 1x1, residual sum, in-place ReLU
      const Tensor a = c5(r);                             // returned and read by c6 and max pooling
      const Tensor p = ember::max_pool2d(ember::hardswish(a), 3, 1, 1);
      Tensor b = c6(a);
      ember::relu_(b);
      return {a, ember::relu(c7(b) + b), p};  // the sum and relu: one fused pointwise node
    }
  };
  ember::manual_seed(11);
  auto m = std::make_shared<Net>();
  for (int i = 0; i < 2; ++i) m->forward(ember::randn({2, 3, 33, 31}));  // running statistics
  m->eval();
  const Tensor x = ember::randn({2, 3, 33, 31});
  auto gm = fx::symbolic_trace(m, x);
  fx::optimize_for_inference(*gm);
  size_t blocked = 0, conversions = 0;
  for (const std::string& m : module_descriptions(*gm)) {
    blocked += m.rfind("ember::fx::BlockedConv2d(", 0) == 0;
    conversions += m == "ember::fx::FromChannelBlocked";
  }
  EXPECT_EQ(blocked, 8u) << gm->code();
  // back to ordinary tensors: a (returned), hardswish(a) (pooled), relu(c7(b) + b) (returned)
  EXPECT_EQ(conversions, 3u) << gm->code();
  EXPECT_NE(gm->code().find("fused_pointwise"), std::string::npos) << gm->code();
  for (const Tensor& batch : {x, ember::randn({3, 3, 33, 31}), ember::randn({1, 3, 20, 17})}) {
    const auto want = m->forward(batch);
    for (bool inference : {false, true}) {
      std::optional<ember::InferenceMode> guard;
      if (inference) guard.emplace();
      const auto got = gm->forward(std::vector<ember::jit::IValue>{batch}).toTuple()->elements();
      ASSERT_EQ(got.size(), 3u);
      for (size_t i = 0; i < 3; ++i) {
        const Tensor t = got[i].toTensor();
        EXPECT_EQ(t.dim(), 4);
        EXPECT_TRUE(t.is_contiguous());
      }
      expect_close(got[0].toTensor(), std::get<0>(want), 1e-4);
      expect_close(got[1].toTensor(), std::get<1>(want), 1e-4);
      expect_close(got[2].toTensor(), std::get<2>(want), 1e-4);
    }
  }
  // Bad input names the convolution and the shapes; a graph of blocked convolutions cannot be traced.
  expect_error([&] { gm->forward(std::vector<ember::jit::IValue>{ember::randn({2, 4, 33, 31})}); },
               {"convolution_blocked", "to have 3 channels, but got 4 channels"});
  nn::Sequential s(nn::Conv2d(nn::Conv2dOptions(3, 16, 3).padding(1)),
                   nn::Conv2d(nn::Conv2dOptions(16, 16, 3).padding(1)));
  s->eval();
  auto gs = fx::symbolic_trace(s, x);
  fx::optimize_for_inference(*gs);
  EXPECT_EQ(module_descriptions(*gs), (std::vector<std::string>{"ember::fx::BlockedConv2d(plain -> blocked)",
                                                                "ember::fx::BlockedConv2d(blocked -> plain)"}));
  expect_close(gs->forward(x), s->forward(x), 1e-4);
  expect_error([&] { fx::symbolic_trace(gs, x); }, {"convolution_blocked", "cannot be traced"});
  // resnet's stem: a 7x7 convolution that stays in channels_last, max pooling, then a residual block
  // whose sum adds the pooled (channels_last) tensor to a blocked convolution's result read plain.
  struct Stem : nn::Module {
    nn::Conv2d stem{register_module("stem", nn::Conv2d(nn::Conv2dOptions(3, 16, 7).stride(2).padding(3)))};
    nn::Conv2d c1{register_module("c1", nn::Conv2d(nn::Conv2dOptions(16, 16, 3).padding(1)))};
    nn::Conv2d c2{register_module("c2", nn::Conv2d(nn::Conv2dOptions(16, 16, 3).padding(1)))};
    Tensor forward(const Tensor& x) {
      const Tensor p = ember::max_pool2d(ember::relu(stem(x)), 3, 2, 1);
      return ember::relu(c2(ember::relu(c1(p))) + p);
    }
  };
  auto stem = std::make_shared<Stem>();
  stem->eval();
  const Tensor xs = ember::randn({2, 3, 64, 64});
  auto gstem = fx::symbolic_trace(stem, xs);
  fx::optimize_for_inference(*gstem);
  EXPECT_EQ(module_descriptions(*gstem)[1], "ember::fx::BlockedConv2d(plain -> blocked, relu)") << gstem->code();
  const Tensor ys = gstem->forward(xs);
  EXPECT_TRUE(ys.is_contiguous());
  expect_close(ys, stem->forward(xs), 1e-4);
}

TEST(NnIntrinsic, ModulesMatchTheirParts) {
  ember::manual_seed(6);
  nn::Conv2d conv(nn::Conv2dOptions(3, 5, 3).stride(2).padding(1));
  nn::intrinsic::ConvReLU2d cr(conv);
  EXPECT_EQ(cr->named_parameters().keys(), (std::vector<std::string>{"0.weight", "0.bias"}));
  std::ostringstream printed;
  printed << *cr;
  EXPECT_EQ(printed.str(),
            "torch::nn::intrinsic::ConvReLU2d(\n  (0): torch::nn::Conv2d(3, 5, kernel_size=[3, 3], stride=[2, 2], "
            "padding=[1, 1])\n  (1): torch::nn::ReLU()\n)");
  const Tensor x = ember::randn({2, 3, 9, 9});
  expect_close(cr(x), ember::relu(conv(x)), 1e-6);
  {
    ember::NoGradGuard no_grad;
    expect_close(cr(x.contiguous(ember::MemoryFormat::ChannelsLast)), ember::relu(conv(x)), 1e-6);
  }
  // The gradient of the weight flows through the recorded path.
  cr(x).sum().backward();
  const Tensor g = conv->weight.grad().clone();
  conv->zero_grad();
  ember::relu(conv(x)).sum().backward();
  expect_close(g, conv->weight.grad(), 1e-6);
  // float64 takes the convolution fallback, then relu_.
  nn::intrinsic::ConvReLU1d cr1(nn::Conv1d(nn::Conv1dOptions(2, 3, 2)));
  cr1->to(ember::kDouble);
  const Tensor xd = ember::randn({4, 2, 6}, ember::kDouble);
  ember::InferenceMode guard;
  expect_close(cr1(xd), ember::relu(cr1->conv(xd)), 1e-12);
  nn::Linear lin(6, 4);
  nn::intrinsic::LinearReLU lr(lin);
  const Tensor xl = ember::randn({3, 6});
  expect_close(lr(xl), ember::relu(lin(xl)), 1e-6);
  EXPECT_EQ(lr->named_parameters().keys(), (std::vector<std::string>{"0.weight", "0.bias"}));
}

TEST(NnIntrinsic, ConvolutionReluRefusesBadInput) {
  const Tensor x = ember::randn({2, 3, 5, 5});
  expect_error([&] { ember::detail::convolution_relu(x, ember::randn({4, 3}), {}, {1}, {0}, {1}, 1); },
               {"convolution_relu", "[4, 3]"});
  expect_error([&] { ember::detail::convolution_relu(x, ember::randn({4, 2, 3, 3}), {}, {1, 1}, {0, 0}, {1, 1}, 1); },
               {"convolution_relu", "expected input[2, 3, 5, 5] to have 2 channels"});
}

size_t count_fused(const fx::GraphModule& gm) {
  size_t n = 0;
  for (const fx::Node* node : gm.graph().nodes())
    n += node->op() == fx::OpKind::CallModule && node->target().rfind("fused_pointwise", 0) == 0;
  return n;
}

TEST(Fx, FusePointwiseChain) {
  ember::manual_seed(3);
  const Tensor x = ember::randn({37, 65}), a = ember::randn({65}), b = ember::randn({37, 1}), c = ember::randn({37, 65});
  auto chain = [](const Tensor& x, const Tensor& a, const Tensor& b, const Tensor& c) {
    return ember::sigmoid(x * a + b) * ember::tanh(x) + ember::relu(c);
  };
  auto gm = fx::trace(chain, x, a, b, c);
  EXPECT_EQ(fx::fuse_pointwise(*gm), 1u);
  // the whole chain is one node between the placeholders and the output
  EXPECT_EQ(gm->graph().size(), 6u) << gm->code();
  EXPECT_EQ(count_fused(*gm), 1u);
  gm->graph().lint();
  expect_close(gm->forward({x, a, b, c}).toTensor(), chain(x, a, b, c), 1e-6);
  // other layouts and a dtype the chain was not traced with
  const Tensor xt = ember::randn({65, 37}).t(), ct = ember::randn({65, 37}).t();
  expect_close(gm->forward({xt, a, b, ct}).toTensor(), chain(xt, a, b, ct), 1e-6);
  const auto h = [](const Tensor& t) { return t.to(ember::kBFloat16); };
  expect_close(gm->forward({h(x), h(a), h(b), h(c)}).toTensor().to(ember::kFloat),
               chain(h(x), h(a), h(b), h(c)).to(ember::kFloat), 1e-2);
  // a second run of the pass finds nothing left to fuse
  EXPECT_EQ(fx::fuse_pointwise(*gm), 0u);
  // casts join chains
  auto cast = [](const Tensor& x) { return (x * 3).to(ember::kBFloat16).relu() + 1; };
  auto gc = fx::trace(cast, x);
  EXPECT_EQ(fx::fuse_pointwise(*gc), 1u);
  EXPECT_EQ(count_fused(*gc), 1u) << gc->code();
  const Tensor got = gc->forward(x);
  EXPECT_EQ(got.dtype(), ember::kBFloat16);
  EXPECT_TRUE(got.equal(cast(x)));
}

TEST(Fx, FusePointwiseKeepsValuesReadOutside) {
  const Tensor x = ember::randn({8, 9});
  // z is read by the chain and returned: it stays a node of its own; a reduction splits chains
  auto f = [](const Tensor& x) {
    Tensor z = ember::exp(x * 0.5);
    Tensor y = ember::sigmoid(z) + 1;
    Tensor s = (y * y).sum(1, true);
    return std::make_tuple(ember::tanh(s - 1) * 2, z);
  };
  auto gm = fx::trace(f, x);
  // {x * 0.5, exp} (z, read outside, ends a group), {sigmoid, + 1, y * y}, {- 1, tanh, * 2}
  EXPECT_EQ(fx::fuse_pointwise(*gm), 3u) << gm->code();
  gm->graph().lint();
  auto out = gm->forward(std::vector<ember::jit::IValue>{x}).toTuple()->elements();
  expect_close(out[0].toTensor(), std::get<0>(f(x)), 1e-6);
  expect_close(out[1].toTensor(), std::get<1>(f(x)), 1e-6);
  for (const fx::Node* n : gm->graph().nodes()) EXPECT_NE(n->target(), "sigmoid") << gm->code();
}

TEST(Fx, FusePointwiseGradients) {
  auto opts = ember::TensorOptions().dtype(ember::kDouble);
  const Tensor x = ember::randn({4, 5}, opts), w = ember::randn({5}, opts);
  auto f = [](const Tensor& x, const Tensor& w) { return ember::silu(x * w - 0.5) * ember::sigmoid(x); };
  auto gm = fx::trace(f, x, w);
  ASSERT_EQ(fx::fuse_pointwise(*gm), 1u);
  const ember::autograd::variable_list in{x.detach().requires_grad_(true), w.detach().requires_grad_(true)};
  auto run = [&](const ember::autograd::variable_list& v) { return gm->forward(v[0], v[1]); };
  EXPECT_TRUE(ember::autograd::gradcheck(run, in));
  EXPECT_TRUE(ember::autograd::gradgradcheck(run, in));
}

TEST(Fx, SaveLoadRoundTrip) {
  const TempDir dir("fx");
  auto m = trained_cnn();
  const Tensor x = ember::randn({2, 3, 10, 10});
  OpsOnly tracer;
  auto gm = tracer.trace(*m, {x}, [&](const std::vector<Tensor>& in) { return ember::jit::IValue(m->forward(in[0])); });
  fx::save(*gm, dir.file("cnn.fx"));
  // The loaded module knows nothing of SmallCnn: its tensors come from the file.
  auto loaded = fx::load(dir.file("cnn.fx"));
  expect_close(loaded->forward(x), m->forward(x), 0);
  EXPECT_EQ(loaded->code(), gm->code());
  EXPECT_EQ(loaded->named_parameters().size(), m->named_parameters().size());
  EXPECT_TRUE(loaded->named_parameters().contains("block.0.weight"));
  // A tuple output and scalar arguments survive too.
  auto f = fx::trace([](const Tensor& a) { return std::make_tuple(a.sum(1, true) * 0.25, ember::cat({a, a}, 1)); },
                     ember::randn({3, 2}));
  fx::save(*f, dir.file("f.fx"));
  const Tensor a = ember::randn({3, 2});
  auto out = fx::load(dir.file("f.fx"))->forward(std::vector<ember::jit::IValue>{a}).toTuple()->elements();
  expect_close(out[0].toTensor(), a.sum(1, true) * 0.25, 0);
  expect_close(out[1].toTensor(), ember::cat({a, a}, 1), 0);
  // Leaf modules have no file form.
  expect_error([&] { fx::save(*fx::symbolic_trace(m, x), dir.file("no.fx")); }, {"calls module 'conv1'", "is_leaf_module"});
}

// The saved CNN loaded and run by another process (this test program again, in the child role
// EMBER_FX_CHILD selects), which has the file and the input only.
TEST(Fx, SaveLoadInSecondProcess) {
  if (const char* child = std::getenv("EMBER_FX_CHILD")) {
    const std::string d = child;
    Tensor x;
    ember::load(x, d + "/x.safetensors");
    ember::save(fx::load(d + "/cnn.fx")->forward(x), d + "/y.safetensors");
    return;
  }
  const TempDir dir("fx_process");
  auto m = trained_cnn();
  const Tensor x = ember::randn({2, 3, 10, 10});
  OpsOnly tracer;
  auto gm = tracer.trace(*m, {x}, [&](const std::vector<Tensor>& in) { return ember::jit::IValue(m->forward(in[0])); });
  fx::save(*gm, dir.file("cnn.fx"));
  ember::save(x, dir.file("x.safetensors"));
  const std::string d = dir.file("");
  const std::string cmd = "EMBER_FX_CHILD='" + d.substr(0, d.size() - 1) + "' " +
                          std::filesystem::read_symlink("/proc/self/exe").string() +
                          " --gtest_filter=Fx.SaveLoadInSecondProcess > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  Tensor y;
  ember::load(y, dir.file("y.safetensors"));
  expect_close(y, m->forward(x), 0);
}

TEST(Fx, LoadRefusesBadFiles) {
  const TempDir dir("fx_bad");
  const Tensor w = ember::randn({4, 3});
  auto write = [&](const std::string& name, const std::string& nodes, const std::string& attrs) {
    const std::string json = "{\"version\": 1, \"attributes\": [" + attrs + "], \"nodes\": [" + nodes + "]}";
    ember::OrderedDict<std::string, Tensor> tensors;
    tensors.insert("w", w);
    ember::save(tensors, dir.file(name), {{"ember.fx.graph", json}});
    return dir.file(name);
  };
  const std::string attr = R"({"name": "w", "dtype": "F32", "shape": [4, 3], "parameter": true})";
  const std::string x = R"({"name": "x", "op": "placeholder", "target": "x", "args": [], "kwargs": []})";
  const std::string getw = R"({"name": "w", "op": "get_attr", "target": "w", "args": [], "kwargs": []})";
  auto call = [](const std::string& name, const std::string& target, const std::string& args) {
    return R"({"name": ")" + name + R"(", "op": "call_function", "target": ")" + target + R"(", "args": [)" + args +
           R"(], "kwargs": []})";
  };
  auto out = [](const std::string& node) {
    return R"({"name": "output", "op": "output", "target": "output", "args": [{"node": ")" + node +
           R"("}], "kwargs": []})";
  };
  const std::string good = write("good.fx", x + "," + getw + "," + call("mm", "mm", R"({"node": "x"}, {"node": "w"})") +
                                                "," + out("mm"), attr);
  const Tensor in = ember::randn({2, 4});
  expect_close(fx::load(good)->forward(in), ember::mm(in, w), 0);
  expect_error([&] { fx::load(write("op.fx", x + "," + call("s", "system", R"({"node": "x"})") + "," + out("s"), attr)); },
               {"op 'system'", "not in the op table"});
  expect_error([&] { fx::load(write("ref.fx", x + "," + call("r", "relu", R"({"node": "later"})") + "," + out("r"), attr)); },
               {"node 'r' reads 'later', which is not an earlier node"});
  expect_error([&] { fx::load(write("shape.fx", x + "," + getw + "," + out("w"),
                                    R"({"name": "w", "dtype": "F32", "shape": [3, 4], "parameter": true})")); },
               {"attribute 'w' is listed as F32 [3, 4] but the file holds F32 [4, 3]"});
  expect_error([&] { fx::load(write("kind.fx", R"({"name": "m", "op": "call_module", "target": "m", "args": [], "kwargs": []})", attr)); },
               {"node 'm' is a 'call_module'"});
  expect_error([&] { fx::load(write("noout.fx", x, attr)); }, {"no output node"});
  expect_error([&] { fx::load(write("args.fx", x + "," + call("r", "relu", R"({"node": "x"}, {"int": "1x"})") + "," + out("r"), attr)); },
               {"bad integer '1x'"});
  // Truncated: every prefix of a good file fails cleanly.
  const std::string bytes = read_bytes(good);
  for (size_t n : {size_t{0}, size_t{7}, size_t{20}, bytes.size() / 2, bytes.size() - 1}) {
    write_bytes(dir.file("cut.fx"), bytes.substr(0, n));
    EXPECT_THROW(fx::load(dir.file("cut.fx")), ember::Error) << n;
  }
  // No graph at all.
  ember::save(w, dir.file("plain.safetensors"));
  expect_error([&] { fx::load(dir.file("plain.safetensors")); }, {"holds no fx graph"});
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
