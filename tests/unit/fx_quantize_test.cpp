// FX graph-mode post-training static quantization (fx::prepare_fx, fx::convert_fx): fusion,
// observer placement, the converted graph's int8 modules and quantize/dequantize nodes, results
// near the float model's, per-module qconfigs, and bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "ember/fx.h"
#include "ember/fx/quantize.h"
#include "expect_error.h"
#include "temp_dir.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace {

using ember::Tensor;
namespace F = ember::nn::functional;

// conv -> bn -> relu, conv, flatten, linear -> relu, dropout, linear: no QuantStub anywhere.
struct SmallNetImpl : ember::nn::Module {
  SmallNetImpl()
      : conv1(register_module("conv1", ember::nn::Conv2d(ember::nn::Conv2dOptions(3, 8, 3).padding(1).bias(false)))),
        bn1(register_module("bn1", ember::nn::BatchNorm2d(8))),
        conv2(register_module("conv2", ember::nn::Conv2d(ember::nn::Conv2dOptions(8, 4, 3).stride(2)))),
        fc1(register_module("fc1", ember::nn::Linear(4 * 3 * 3, 16))),
        dropout(register_module("dropout", ember::nn::Dropout(0.5))),
        fc2(register_module("fc2", ember::nn::Linear(16, 5))) {}
  Tensor forward(const Tensor& x) {
    Tensor y = ember::relu(bn1(conv1(x)));
    y = conv2(y).flatten(1);
    y = dropout(ember::relu(fc1(y)));
    return fc2(y);
  }
  ember::nn::Conv2d conv1;
  ember::nn::BatchNorm2d bn1;
  ember::nn::Conv2d conv2;
  ember::nn::Linear fc1;
  ember::nn::Dropout dropout;
  ember::nn::Linear fc2;
};
EMBER_MODULE(SmallNet);

SmallNet trained_like_net() {
  ember::manual_seed(3);
  SmallNet net;
  {  // batch-norm statistics that are not the identity, so folding matters
    ember::NoGradGuard no_grad;
    net->bn1->running_mean.uniform_(-0.2, 0.2);
    net->bn1->running_var.uniform_(0.5, 1.5);
    net->bn1->weight.uniform_(0.5, 1.5);
    net->bn1->bias.uniform_(-0.1, 0.1);
  }
  net->eval();
  return net;
}

size_t count_nodes(const ember::fx::GraphModule& gm, const std::string& target) {
  size_t n = 0;
  for (const ember::fx::Node* node : gm.graph().nodes()) n += node->target() == target;
  return n;
}

TEST(FxQuantize, PrepareCalibrateConvertStaysNearTheFloatModel) {
  SmallNet net = trained_like_net();
  const Tensor example = ember::rand({2, 3, 7, 7});
  const Tensor float_out = net->forward(example);
  auto prepared = ember::fx::prepare_fx(net, ember::fx::get_default_qconfig_mapping("x86"), example);
  // observers on the input and after each of conv1+bn1+relu, conv2, fc1+relu and fc2
  size_t observers = 0;
  for (const ember::fx::Node* n : prepared->graph().nodes())
    observers += n->target().rfind("activation_post_process_", 0) == 0;
  EXPECT_EQ(observers, 5u) << prepared->code();
  // the prepared model computes the float model's results (observers pass values through)
  EXPECT_TRUE(prepared->forward(example).allclose(float_out, 1e-5, 1e-5));
  for (int i = 0; i < 8; ++i) prepared->forward(ember::rand({2, 3, 7, 7}));  // the traced batch size (flatten records it)
  prepared->forward(example);

  auto converted = ember::fx::convert_fx(prepared);
  const std::string code = converted->code();
  EXPECT_EQ(count_nodes(*converted, "quantize_per_tensor"), 1u) << code;
  EXPECT_EQ(count_nodes(*converted, "dequantize"), 1u) << code;
  size_t int8_modules = 0;
  for (const ember::fx::Node* n : converted->graph().nodes()) {
    if (n->op() != ember::fx::OpKind::CallModule) continue;
    const auto m = converted->submodule(n->target());
    int8_modules += std::dynamic_pointer_cast<ember::nn::intrinsic::quantized::ConvReLU2dImpl>(m) != nullptr ||
                    std::dynamic_pointer_cast<ember::nn::quantized::Conv2dImpl>(m) != nullptr ||
                    std::dynamic_pointer_cast<ember::nn::quantized::LinearImpl>(m) != nullptr;
  }
  EXPECT_EQ(int8_modules, 4u) << code;
  const Tensor q_out = converted->forward(example);
  EXPECT_EQ(q_out.dtype(), ember::kFloat);
  EXPECT_EQ(q_out.sizes(), float_out.sizes());
  const double range = (float_out.max() - float_out.min()).item<double>();
  EXPECT_LT((q_out - float_out).abs().max().item<double>(), 0.05 * range)
      << "int8 result too far from the float model's:\n" << q_out << "\n" << float_out;
  // the source model is untouched: still float, batch norm still there
  EXPECT_TRUE(net->forward(example).equal(float_out));
}

TEST(FxQuantize, ModuleNameQConfigLeavesALayerFloat) {
  SmallNet net = trained_like_net();
  const Tensor example = ember::rand({2, 3, 7, 7});
  auto mapping = ember::fx::get_default_qconfig_mapping().set_module_name("fc2", std::nullopt);
  auto prepared = ember::fx::prepare_fx(net, mapping, example);
  for (int i = 0; i < 4; ++i) prepared->forward(ember::rand({2, 3, 7, 7}));
  auto converted = ember::fx::convert_fx(prepared);
  bool fc2_float = false;
  for (const ember::fx::Node* n : converted->graph().nodes())
    if (n->op() == ember::fx::OpKind::CallModule &&
        std::dynamic_pointer_cast<ember::nn::LinearImpl>(converted->submodule(n->target())))
      fc2_float = true;
  EXPECT_TRUE(fc2_float) << converted->code();
  const Tensor float_out = net->forward(example), q_out = converted->forward(example);
  const double range = (float_out.max() - float_out.min()).item<double>();
  EXPECT_LT((q_out - float_out).abs().max().item<double>(), 0.05 * range);

  // a layer that prepare_fx fuses (fc1 with its relu) goes by its name in the model too
  auto fc1_float = ember::fx::get_default_qconfig_mapping().set_module_name("fc1", std::nullopt);
  auto prepared1 = ember::fx::prepare_fx(net, fc1_float, example);
  for (int i = 0; i < 4; ++i) prepared1->forward(ember::rand({2, 3, 7, 7}));
  auto converted1 = ember::fx::convert_fx(prepared1);
  bool fused_float = false;
  for (const ember::fx::Node* n : converted1->graph().nodes())
    if (n->op() == ember::fx::OpKind::CallModule &&
        std::dynamic_pointer_cast<ember::nn::intrinsic::LinearReLUImpl>(converted1->submodule(n->target())))
      fused_float = true;
  EXPECT_TRUE(fused_float) << converted1->code();
  EXPECT_LT((converted1->forward(example) - float_out).abs().max().item<double>(), 0.05 * range);
}

std::shared_ptr<ember::fx::GraphModule> quantized(SmallNet& net, uint64_t seed) {
  ember::Generator g(seed);
  auto prepared = ember::fx::prepare_fx(net, ember::fx::get_default_qconfig_mapping(), ember::rand({2, 3, 7, 7}, &g));
  for (int i = 0; i < 4; ++i) prepared->forward(ember::rand({2, 3, 7, 7}, &g));
  return ember::fx::convert_fx(prepared);
}

// The converted model's state (int8 weights with their parameters, biases, output scales and zero
// points) saves and loads into a model converted from other weights and data: the same results.
TEST(FxQuantize, ConvertedModelStateSavesAndLoads) {
  TempDir dir("fx_quantize_test");
  SmallNet net = trained_like_net();
  auto a = quantized(net, 1);
  ember::manual_seed(99);
  SmallNet other;
  other->eval();
  auto b = quantized(other, 2);
  const Tensor x = ember::rand({2, 3, 7, 7});
  ASSERT_FALSE(a->forward(x).equal(b->forward(x)));
  const std::string path = dir.file("int8.safetensors");
  ember::save(a, path);
  const auto state = ember::load_tensors(path);
  size_t quantized_tensors = 0;
  for (const auto& item : state) quantized_tensors += item.value().is_quantized();
  EXPECT_EQ(quantized_tensors, 4u) << "the four int8 layers' weights";
  ember::load(b, path);
  EXPECT_TRUE(a->forward(x).equal(b->forward(x)));
  // a single layer too, through its holder
  for (const auto& item : b->named_buffers()) {
    if (!item.value().is_quantized()) continue;
    EXPECT_TRUE(item.value().int_repr().equal(state[item.key()].int_repr())) << item.key();
  }
}

namespace T = ::ember;
#define MODULE EMBER_MODULE
#include "../../examples/fashion_mnist/net.inc"
#undef MODULE

// The main job's CNN converted to int8 saves to a file at least 3.8x smaller than the float
// model's (issue 18): int8 weights, with float32 biases and per-channel parameters beside them.
TEST(FxQuantize, MainJobModelFileIsAtLeast3Point8TimesSmaller) {
  TempDir dir("fx_quantize_size");
  FashionNet model;
  model->eval();
  const Tensor x = ember::randn({8, 1, 28, 28});
  auto prepared = ember::fx::prepare_fx(model, ember::fx::get_default_qconfig_mapping("x86"), x);
  prepared->forward(x);
  auto int8 = ember::fx::convert_fx(prepared);
  ember::save(model, dir.file("float.safetensors"));
  ember::save(int8, dir.file("int8.safetensors"));
  const double float_bytes = static_cast<double>(std::filesystem::file_size(dir.file("float.safetensors")));
  const double int8_bytes = static_cast<double>(std::filesystem::file_size(dir.file("int8.safetensors")));
  EXPECT_GE(float_bytes / int8_bytes, 3.8) << float_bytes << " vs " << int8_bytes << " bytes";
}

// Eager mode (fuse_modules, prepare, calibrate, convert) and fx graph mode quantize a Sequential
// convnet the same way: the same fusions and observers on the same float values give the same
// qparams and int8 layers, so the same results.
ember::nn::Sequential convnet() {
  ember::manual_seed(21);
  ember::nn::Sequential net(ember::quantization::QuantStub(),
                            ember::nn::Conv2d(ember::nn::Conv2dOptions(1, 6, 3).padding(1).bias(false)),
                            ember::nn::BatchNorm2d(6), ember::nn::ReLU(),
                            ember::nn::Conv2d(ember::nn::Conv2dOptions(6, 4, 3).stride(2)), ember::nn::Flatten(),
                            ember::nn::Linear(4 * 3 * 3, 12), ember::nn::ReLU(), ember::nn::Linear(12, 3),
                            ember::quantization::DeQuantStub());
  {
    ember::NoGradGuard no_grad;
    auto bn = net[2]->as<ember::nn::BatchNorm2dImpl>();
    bn->running_mean.uniform_(-0.2, 0.2);
    bn->running_var.uniform_(0.5, 1.5);
  }
  net->eval();
  return net;
}

TEST(FxQuantize, EagerAndGraphModeAgree) {
  ember::Generator g(8);
  std::vector<Tensor> batches;
  for (int i = 0; i < 4; ++i) batches.push_back(ember::randn({2, 1, 7, 7}, &g));
  const Tensor x = ember::randn({2, 1, 7, 7}, &g);

  ember::nn::Sequential eager = convnet();
  const Tensor float_out = eager->forward(x);
  ember::quantization::fuse_modules(*eager, {{"1", "2", "3"}, {"6", "7"}});
  EXPECT_EQ(ember::quantization::prepare(*eager, ember::quantization::get_default_qconfig("x86")), 5);
  for (const Tensor& b : batches) eager->forward(b);
  EXPECT_EQ(ember::quantization::convert(*eager), 6);  // five observed modules and the DeQuantStub
  std::ostringstream printed;
  printed << *eager;
  EXPECT_NE(printed.str().find("QuantizedConvReLU2d(1, 6"), std::string::npos) << printed.str();
  EXPECT_NE(printed.str().find("QuantizedConv2d(6, 4"), std::string::npos) << printed.str();
  EXPECT_NE(printed.str().find("QuantizedLinearReLU(in_features=36"), std::string::npos) << printed.str();
  const Tensor eager_out = eager->forward(x);

  ember::nn::Sequential graph = convnet();
  auto prepared = ember::fx::prepare_fx(graph, ember::fx::get_default_qconfig_mapping("x86"), batches[0]);
  for (const Tensor& b : batches) prepared->forward(b);
  const Tensor fx_out = ember::fx::convert_fx(prepared)->forward(x);

  EXPECT_EQ(eager_out.dtype(), ember::kFloat);
  EXPECT_TRUE(eager_out.equal(fx_out)) << eager_out << fx_out;
  const double range = (float_out.max() - float_out.min()).item<double>();
  EXPECT_LT((eager_out - float_out).abs().max().item<double>(), 0.05 * range);
}

TEST(FxQuantize, BadInput) {
  SmallNet net = trained_like_net();
  const Tensor example = ember::rand({2, 3, 7, 7});
  net->train();
  expect_error([&] { ember::fx::prepare_fx(net, ember::fx::get_default_qconfig_mapping(), example); }, "eval mode");
  net->eval();
  auto prepared = ember::fx::prepare_fx(net, ember::fx::get_default_qconfig_mapping(), example);
  auto uncalibrated = ember::fx::prepare_fx(net, ember::fx::get_default_qconfig_mapping(), example);
  expect_error([&] { ember::fx::convert_fx(ember::fx::symbolic_trace(net, example)); }, "was not prepared");
  // an observer that saw nothing: a fresh prepare whose forward never ran
  SmallNet other = trained_like_net();
  auto fresh = ember::fx::symbolic_trace(other, example);
  auto never_run = ember::fx::prepare_fx(fresh, ember::fx::get_default_qconfig_mapping());
  expect_error([&] { ember::fx::convert_fx(never_run); }, "has seen no data");
  auto none = ember::fx::QConfigMapping();
  expect_error([&] { ember::fx::prepare_fx(net, none, example); }, "no layer with an int8 form");
  expect_error([] { ember::fx::prepare_fx(nullptr, ember::fx::get_default_qconfig_mapping()); }, "null");
  (void)prepared;
  (void)uncalibrated;
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
