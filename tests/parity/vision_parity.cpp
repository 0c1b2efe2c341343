// The model zoo against torchvision: each model is built by Debian's python3-torchvision at test
// time with a fixed seed (BatchNorm statistics randomized so that normalization is not the
// identity), its state_dict saved with torch.save beside its eval-mode output, input gradient and
// first weight's gradient on a fixed 32x32 input; Ember's model loads that state dict with
// load_torch_checkpoint and must give the same results.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "ember/fx.h"
#include "parity.h"
#include "unit/temp_dir.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace {

namespace models = ember::vision::models;

// argv: output dir, then name=<torchvision builder>:<json kwargs> per model.
const char* kExport = R"PY(
import copy, json, os, sys, torch, torchvision
out = sys.argv[1]
for arg in sys.argv[2:]:
    name, rest = arg.split('=', 1)
    builder, kwargs = rest.split(':', 1)
    torch.manual_seed(0)
    model = getattr(torchvision.models, builder)(**json.loads(kwargs))
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.2, 0.2)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    model.eval()
    torch.save(model.state_dict(), os.path.join(out, name + '.pt'))
    x = torch.randn(1, 3, 32, 32)
    with torch.no_grad():
        io = {'input': x, 'output': model(x)}
    with torch.no_grad(), torch.autocast('cpu', dtype=torch.bfloat16):
        cl = copy.deepcopy(model).to(memory_format=torch.channels_last)
        io['output_bf16_cl'] = cl(x.to(memory_format=torch.channels_last)).float()
    # Gradients in float64: in float32 a ReLU input within rounding of 0 may fall on either side.
    model.double()
    x64 = x.double().requires_grad_(True)
    model(x64).sum().backward()
    io['input_grad'] = x64.grad
    io['first_weight_grad'] = next(model.parameters()).grad
    torch.save(io, os.path.join(out, name + '_io.pt'))
)PY";

struct Spec {
  const char* name;
  const char* torchvision;  // builder and its kwargs, as JSON
};
constexpr Spec kSpecs[] = {
    {"resnet18", "resnet18:{}"},
    {"resnet34", "resnet34:{}"},
    {"resnet50", "resnet50:{}"},
    {"resnet18_c10", R"(resnet18:{"num_classes": 10})"},
    {"mobilenet_v3_large", "mobilenet_v3_large:{}"},
    {"mobilenet_v3_small", "mobilenet_v3_small:{}"},
    {"mobilenet_v3_small_w075", R"(mobilenet_v3_small:{"width_mult": 0.75, "num_classes": 10, "dropout": 0.5})"},
    {"mobilenet_v3_large_tail", R"(mobilenet_v3_large:{"reduced_tail": true, "dilated": true, "width_mult": 1.25})"},
};

// The exported files, written once per test program into a temp dir removed at exit.
class Exports {
 public:
  Exports() : dir_("vision_parity") {
    const std::string script = dir_.file("export.py");
    std::ofstream(script) << kExport;
    std::string cmd = python() + " " + script + " " + dir_.file("");
    for (const Spec& s : kSpecs) cmd += std::string(" '") + s.name + "=" + s.torchvision + "'";
    status_ = run_python_in(cmd + " > " + script + ".log 2>&1", dir_.file(""));
  }
  std::string path(const std::string& file) const { return dir_.file(file); }
  bool ok() const { return status_ == 0; }
  std::string log() const { return read_bytes(dir_.file("export.py.log")); }

 private:
  TempDir dir_;
  int status_;
};

const Exports& exports() {
  static Exports e;
  return e;
}

// |ember - reference| <= tol * max |reference| elementwise.
::testing::AssertionResult Near(const ember::Tensor& actual, const ember::Tensor& expected, double tol) {
  const double scale = expected.abs().max().item<double>();
  return parity::Close(actual.contiguous(), parity::to_torch(expected), parity::Tol{0, tol * scale});
}

std::set<std::string> keys(const ember::OrderedDict<std::string, ember::Tensor>& d) {
  std::set<std::string> out;
  for (const auto& item : d) out.insert(item.key());
  return out;
}

// Loads `name`'s torchvision state dict into `model` and compares outputs and gradients.
template <class Holder>
void check(const std::string& name, Holder model) {
  ASSERT_TRUE(exports().ok()) << exports().log();
  const auto state = ember::load_torch_checkpoint(exports().path(name + ".pt"));
  const auto io = ember::load_torch_checkpoint(exports().path(name + "_io.pt"));
  std::set<std::string> ours = keys(model->named_parameters());
  ours.merge(keys(model->named_buffers()));
  EXPECT_EQ(ours, keys(state));
  ember::load_state_dict(model, state);
  model->eval();

  {
    ember::NoGradGuard no_grad;
    EXPECT_TRUE(Near(model->forward(io["input"]), io["output"], 1e-4)) << name << ": eval output";
    // Traced by fx and optimized for inference (batch norms folded, convolutions in channels_last
    // with ReLU and Hardswish as oneDNN post-ops), as the benchmark's MobileNet row runs it.
    auto gm = ember::fx::symbolic_trace(model, io["input"]);
    ember::fx::optimize_for_inference(*gm);
    EXPECT_TRUE(Near(gm->forward(io["input"]), io["output"], 1e-4)) << name << ": fx optimize_for_inference output";
    // channels_last (weights and input), float32 and under bfloat16 autocast as torchvision's.
    model->to(ember::MemoryFormat::ChannelsLast);
    const ember::Tensor xcl = io["input"].contiguous(ember::MemoryFormat::ChannelsLast);
    EXPECT_TRUE(Near(model->forward(xcl), io["output"], 1e-4)) << name << ": channels_last output";
    ember::AutocastGuard autocast(ember::kCPU, ember::kBFloat16);
    const ember::Tensor ybf = model->forward(xcl);
    EXPECT_EQ(ybf.dtype(), ember::kBFloat16);
    // Both round the same values to bfloat16 at the same ops; the roundings compound over the layers.
    EXPECT_TRUE(Near(ybf.to(ember::kFloat), io["output_bf16_cl"], 5e-2)) << name << ": bfloat16 autocast output";
  }
  model->to(ember::kDouble);
  const ember::Tensor x = io["input"].to(ember::kDouble).requires_grad_(true);
  model->forward(x).sum().backward();
  EXPECT_TRUE(Near(x.grad(), io["input_grad"], 1e-9)) << name << ": input gradient";
  EXPECT_TRUE(Near(model->parameters()[0].grad(), io["first_weight_grad"], 1e-9)) << name << ": first weight gradient";
}

TEST(VisionParity, Resnet18) { check("resnet18", models::resnet18()); }
TEST(VisionParity, Resnet34) { check("resnet34", models::resnet34()); }
TEST(VisionParity, Resnet50) { check("resnet50", models::resnet50()); }
TEST(VisionParity, Resnet18NumClasses) { check("resnet18_c10", models::resnet18(models::ResNetOptions().num_classes(10))); }
TEST(VisionParity, MobilenetV3Large) { check("mobilenet_v3_large", models::mobilenet_v3_large()); }
TEST(VisionParity, MobilenetV3Small) { check("mobilenet_v3_small", models::mobilenet_v3_small()); }
TEST(VisionParity, MobilenetV3SmallWidthClassesDropout) {
  check("mobilenet_v3_small_w075",
        models::mobilenet_v3_small(models::MobileNetV3Options().width_mult(0.75).num_classes(10).dropout(0.5)));
}
TEST(VisionParity, MobilenetV3LargeReducedTailDilated) {
  check("mobilenet_v3_large_tail",
        models::mobilenet_v3_large(models::MobileNetV3Options().reduced_tail(true).dilated(true).width_mult(1.25)));
}

}  // namespace

// The message of the ember::Error `f` raises (empty when it raises none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const ember::Error& e) {
    return e.what();
  }
  return "";
}

TEST(VisionModels, BadInput) {
  ASSERT_TRUE(exports().ok()) << exports().log();
  const auto resnet18_state = ember::load_torch_checkpoint(exports().path("resnet18.pt"));
  // resnet34 has more blocks per stage: their keys are missing, named.
  const std::string missing = error_of([&] { ember::load_state_dict(models::resnet34(), resnet18_state); });
  EXPECT_NE(missing.find("layer1.2.conv1.weight"), std::string::npos) << missing;
  // 10 classes against 1000: fc's shapes differ, named with both shapes.
  const auto c10_state = ember::load_torch_checkpoint(exports().path("resnet18_c10.pt"));
  const std::string shape = error_of([&] { ember::load_state_dict(models::resnet18(), c10_state); });
  EXPECT_NE(shape.find("fc.weight"), std::string::npos) << shape;
  EXPECT_NE(shape.find("[10, 512]"), std::string::npos) << shape;
  // A grayscale image into a 3-channel stem: the convolution names the shapes.
  auto model = models::mobilenet_v3_small();
  const std::string channels = error_of([&] { model->forward(ember::zeros({1, 1, 32, 32})); });
  EXPECT_NE(channels.find("conv2d"), std::string::npos) << channels;
  EXPECT_NE(channels.find("[1, 1, 32, 32]"), std::string::npos) << channels;
  EXPECT_NE(error_of([] { models::mobilenet_v3_large(models::MobileNetV3Options().width_mult(0)); }).find("width_mult"),
            std::string::npos);
  EXPECT_NE(error_of([] { models::resnet50(models::ResNetOptions().num_classes(0)); }).find("num_classes"),
            std::string::npos);
  EXPECT_NE(error_of([] { models::ResNet(models::ResNetBlock::Basic, std::vector<int64_t>{2, 2, 2}); }).find("stage depths"),
            std::string::npos);
}

TEST(VisionModels, ZeroInitResidual) {
  // one block per stage keeps the test short
  const auto options = models::ResNetOptions().zero_init_residual(true);
  models::ResNet basic(models::ResNetBlock::Basic, std::vector<int64_t>{1, 1, 1, 1}, options);
  models::ResNet bottleneck(models::ResNetBlock::Bottleneck, std::vector<int64_t>{1, 1, 1, 1}, options);
  const auto p = basic->named_parameters();
  const auto q = bottleneck->named_parameters();
  EXPECT_EQ(p["layer2.0.bn2.weight"].abs().sum().item<double>(), 0);
  EXPECT_EQ(p["layer2.0.bn1.weight"].sum().item<double>(), 128);
  EXPECT_EQ(q["layer3.0.bn3.weight"].abs().sum().item<double>(), 0);
  EXPECT_EQ(q["layer3.0.bn2.weight"].sum().item<double>(), 256);
}

// A train step: batch statistics, dropout, every parameter reached by backward.
TEST(VisionModels, TrainStep) {
  ember::manual_seed(3);
  auto model = models::mobilenet_v3_small(models::MobileNetV3Options().num_classes(4));
  model->train();
  const ember::Tensor x = parity::random({2, 3, 32, 32}, ember::kFloat, 5);
  const ember::Tensor loss = ember::nn::functional::cross_entropy(model->forward(x), ember::tensor({1, 3}));
  loss.backward();
  for (const auto& item : model->named_parameters()) {
    ASSERT_TRUE(item.value().grad().defined()) << item.key();
    EXPECT_TRUE(ember::isfinite(item.value().grad()).all().item<bool>()) << item.key();
  }
  EXPECT_EQ(model->named_buffers()["features.0.1.num_batches_tracked"].item<int64_t>(), 1);
}

}  // namespace EMBER_UNITY_FILE
