// The quantizable MobileNetV3 (ember::vision::models::quantization) against torchvision's
// (torchvision.models.quantization.mobilenetv3) in Debian's python3-torch, run at test time:
// Python trains MobileNetV3-Small briefly on Fashion-MNIST (so that top-1 decisions have margins
// that quantization noise does not decide), fuses, calibrates and converts it with torchvision's
// fbgemm qconfig; Ember loads the same float state dict, runs the same fuse_model, prepare,
// calibration batches and convert, and its int8 model must pick PyTorch's int8 top-1 class on
// >= 98% of 512 test images (see the check). Also: the float logits, the
// fused model's state-dict keys, unused FloatFunctionals, fusion for quantization-aware training.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ember/ember.h"
#include "temp_dir.h"

namespace EMBER_UNITY_FILE {  // this file's own names in a unity batch (tests/CMakeLists.txt)

namespace {

using ember::Tensor;
namespace models = ember::vision::models;
namespace Q = ember::quantization;

// argv: directory, dataset directory, training steps. Writes float.pt (the float model's state
// dict), test.bin (512 images), calib.bin (128 images), labels.bin, float_logits.bin,
// int8_logits.bin (float32/int64 raw) and fused_keys.txt.
constexpr const char* kScript = R"PY(
import gzip, sys
import numpy as np
import torch
import torch.nn.functional as F
from torchvision.models.mobilenetv3 import _mobilenet_v3_conf
from torchvision.models.quantization.mobilenetv3 import QuantizableInvertedResidual, QuantizableMobileNetV3
from torchvision.models.quantization.utils import _replace_relu
d, data, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
torch.manual_seed(0)
torch.set_num_threads(1)
def idx(name, offset):
    return np.frombuffer(gzip.open(data + '/' + name).read(), dtype=np.uint8, offset=offset)
def images(name):  # normalized, zero-padded to 32x32, 3 channels
    x = torch.from_numpy(idx(name, 16).copy()).view(-1, 1, 28, 28).float() / 255
    x = (F.pad(x, (2, 2, 2, 2)) - 0.2860) / 0.3530
    return x.expand(-1, 3, -1, -1).contiguous()
train_x = images('train-images-idx3-ubyte.gz')
train_y = torch.from_numpy(idx('train-labels-idx1-ubyte.gz', 8).astype(np.int64))
test_x = images('t10k-images-idx3-ubyte.gz')[:512]
test_y = torch.from_numpy(idx('t10k-labels-idx1-ubyte.gz', 8).astype(np.int64))[:512]
setting, last_channel = _mobilenet_v3_conf('mobilenet_v3_small')
model = QuantizableMobileNetV3(setting, last_channel, block=QuantizableInvertedResidual, num_classes=10)
_replace_relu(model)
opt = torch.optim.Adam(model.parameters(), 3e-3)
model.train()
for s in range(steps):
    i = torch.randint(0, 50000, (128,))
    loss = F.cross_entropy(model(train_x[i]), train_y[i])
    opt.zero_grad(); loss.backward(); opt.step()
# BatchNorm's momentum 0.01 leaves the running statistics far behind a short training: they are
# estimated again as plain averages over 2048 other training images
with torch.no_grad():
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.reset_running_stats(); m.momentum = None
    for s in range(16):
        model(train_x[50000 + 128 * s: 50000 + 128 * (s + 1)])
model.eval()
torch.save(model.state_dict(), d + '/float.pt')
calib = train_x[58000:58128]
with torch.no_grad():
    model(test_x).numpy().tofile(d + '/float_logits.bin')
test_x.numpy().tofile(d + '/test.bin'); calib.numpy().tofile(d + '/calib.bin'); test_y.numpy().tofile(d + '/labels.bin')
model.fuse_model(is_qat=False)
open(d + '/fused_keys.txt', 'w').write('\n'.join(model.state_dict().keys()) + '\n')
torch.backends.quantized.engine = 'onednn'  # Debian's build has no FBGEMM; the qconfig is fbgemm's
# torchvision's own fbgemm qconfig (torchvision.models.quantization.utils.quantize_model)
model.qconfig = torch.ao.quantization.QConfig(activation=torch.ao.quantization.default_observer,
                                              weight=torch.ao.quantization.default_per_channel_weight_observer)
torch.ao.quantization.prepare(model, inplace=True)
with torch.no_grad():
    for b in calib.split(32):
        model(b)
torch.ao.quantization.convert(model, inplace=True)
with torch.no_grad():
    model(test_x).numpy().tofile(d + '/int8_logits.bin')
)PY";

Tensor read_floats(const std::string& path, std::vector<int64_t> shape) {
  std::string bytes = read_bytes(path);
  Tensor t = ember::empty(shape);
  EXPECT_EQ(bytes.size(), t.nbytes()) << path;
  std::copy(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(std::min(bytes.size(), t.nbytes())),
            static_cast<char*>(t.data_ptr()));
  return t;
}

// torchvision's fbgemm qconfig (quantize_model): MinMaxObserver activations in [0, 127] (PyTorch's
// default_observer), weights per channel, symmetric. get_default_qconfig's HistogramObserver is
// not used for the comparison: PyTorch 1.13's passes histc truncated bounds, which Ember does not
// copy (docs/quantization.md), so the two choose different activation qparams from the same data.
Q::QConfig torchvision_fbgemm_qconfig() {
  return {[] { return std::make_shared<Q::MinMaxObserverImpl>(Q::ObserverOptions().quant_min(0).quant_max(127)); },
          [] {
            return std::make_shared<Q::PerChannelMinMaxObserverImpl>(
                Q::ObserverOptions().dtype(ember::kQInt8).qscheme(ember::kPerChannelSymmetric));
          }};
}

template <class Dict>
std::set<std::string> keys(const Dict& d) {
  std::set<std::string> out;
  for (const auto& item : d) out.insert(item.key());
  return out;
}

TEST(QuantizedMobileNetV3, AgreesWithTorchvisionOnFashionMNIST) {
  const std::string data = "/usr/share/datasets/fashion-mnist";
  if (!std::ifstream(data + "/train-images-idx3-ubyte.gz")) GTEST_SKIP() << "no " << data << " (dataset-fashion-mnist)";
  TempDir dir("quantized_mobilenet_test");
  write_bytes(dir.file("qmob.py"), kScript);
  const std::string cmd = python() + " " + dir.file("qmob.py") + " " + dir.file("") + " " + data + " 150 2> " +
                          dir.file("err.txt");
  ASSERT_EQ(run_python_in(cmd, dir.file("")), 0)
      << python() << " (python3-torchvision) failed: " << read_bytes(dir.file("err.txt"));
  constexpr int64_t kImages = 512;
  const Tensor test = read_floats(dir.file("test.bin"), {kImages, 3, 32, 32});
  const Tensor calib = read_floats(dir.file("calib.bin"), {128, 3, 32, 32});
  const Tensor float_logits = read_floats(dir.file("float_logits.bin"), {kImages, 10});
  const Tensor int8_logits = read_floats(dir.file("int8_logits.bin"), {kImages, 10});

  auto model = models::quantization::mobilenet_v3_small(models::MobileNetV3Options().num_classes(10));
  ember::load_state_dict(model, ember::load_torch_checkpoint(dir.file("float.pt")));
  model->eval();
  ember::NoGradGuard no_grad;
  const Tensor ours_float = model->forward(test);
  const double float_err = (ours_float - float_logits).abs().max().item<double>();
  EXPECT_LE(float_err, 1e-4 * float_logits.abs().max().item<double>()) << "float logits";

  model->fuse_model();  // eval mode: batch norms folded, as fuse_model(is_qat=False)
  std::set<std::string> fused = keys(model->named_parameters());
  fused.merge(keys(model->named_buffers()));
  std::set<std::string> theirs;
  std::istringstream lines(read_bytes(dir.file("fused_keys.txt")));
  for (std::string line; std::getline(lines, line);) theirs.insert(line);
  EXPECT_EQ(fused, theirs) << "the fused model's state-dict keys";
  EXPECT_NEAR((model->forward(test) - ours_float).abs().max().item<double>(), 0, 1e-3) << "fusion changed the model";

  Q::prepare(*model, torchvision_fbgemm_qconfig());
  for (const Tensor& batch : calib.split(32)) model->forward(batch);
  Q::convert(*model);
  const Tensor ours_int8 = model->forward(test);
  ASSERT_FALSE(ours_int8.is_quantized());
  const Tensor ours_top1 = ours_int8.argmax(1), theirs_top1 = int8_logits.argmax(1);
  const int64_t agree = ours_top1.eq(theirs_top1).sum().item<int64_t>();
  const Tensor labels = ember::from_blob(read_bytes(dir.file("labels.bin")).data(), {kImages},
                                         ember::TensorOptions().dtype(ember::kLong)).clone();
  const double float_accuracy = float_logits.argmax(1).eq(labels).to(ember::kDouble).mean().item<double>();
  const double int8_accuracy = theirs_top1.eq(labels).to(ember::kDouble).mean().item<double>();
  // Issue 23 asks for 98%. Measured: 505 of 512 where oneDNN runs its AVX-512 kernels, 503 with
  // ONEDNN_MAX_CPU_ISA=AVX2 (which also changes PyTorch's training and its int8 model, both on
  // oneDNN). The folded weights, the int8 weights and every int8 layer are PyTorch's bit for bit:
  // given PyTorch's qparams, all 512 images give PyTorch's logits exactly. What remains is the
  // calibration, which runs the float model: from the first squeeze-excitation on (its pooling and
  // 1x1 convolutions, and the classifier's Linear layers) Ember sums in other orders than PyTorch
  // (a matrix product for oneDNN's 1x1 kernel, OpenBLAS), so most observed ranges, and scales, end
  // a few float ulps apart; those move a few integers, which 52 layers carry to close decisions.
  EXPECT_GE(agree * 100, 98 * kImages) << "Ember's int8 model picks PyTorch's int8 top-1 class on " << agree << " of "
                                       << kImages << " images";
  // what the comparison rests on: a model that learnt something, and PyTorch's int8 model near its float one
  EXPECT_GE(float_accuracy, 0.7);
  EXPECT_GE(int8_accuracy, float_accuracy - 0.05);
  std::printf("top-1 agreement %lld/%lld; accuracy float %.3f, PyTorch int8 %.3f, Ember int8 %.3f; worst logit "
              "difference %.4f\n",
              static_cast<long long>(agree), static_cast<long long>(kImages), float_accuracy, int8_accuracy,
              ours_top1.eq(labels).to(ember::kDouble).mean().item<double>(),
              (ours_int8 - int8_logits).abs().max().item<double>());
}

// A skip_add that calibration never ran (a block without a residual connection) stays float, where
// PyTorch converts it with scale 1 and zero point 0; the blocks with one get QFunctionals.
TEST(QuantizedMobileNetV3, LargeQuantizesAndUnusedFloatFunctionalsStayFloat) {
  auto model = models::quantization::mobilenet_v3_large(models::MobileNetV3Options().num_classes(7).width_mult(0.5));
  model->eval();
  model->fuse_model();
  Q::prepare(*model, Q::get_default_qconfig("x86"));
  ember::NoGradGuard no_grad;
  const Tensor x = ember::randn({2, 3, 48, 48});
  model->forward(x);
  Q::convert(*model);
  const Tensor y = model->forward(x);
  EXPECT_EQ(y.sizes(), (std::vector<int64_t>{2, 7}));
  int64_t converted = 0, left_float = 0;
  for (const auto& m : model->modules()) {
    if (auto* block = m->as<models::quantization::QuantizableInvertedResidual>()) {
      EXPECT_EQ(block->skip_add->qfunctional != nullptr, block->use_res_connect) << block->name();
      ++(block->use_res_connect ? converted : left_float);
    }
  }
  EXPECT_GT(converted, 0);
  EXPECT_GT(left_float, 0);
}

// fuse_model in training mode is fuse_model(is_qat=True): ConvBn(ReLU) modules that keep their
// batch norms, which quantization-aware training then trains.
TEST(QuantizedMobileNetV3, QatFusionKeepsBatchNormsAndTrains) {
  auto model = models::quantization::mobilenet_v3_small(models::MobileNetV3Options().num_classes(3));
  model->train();
  model->fuse_model();
  std::set<std::string> names = keys(model->named_parameters());
  EXPECT_EQ(names.count("features.0.0.1.weight"), 1u) << "the stem's batch norm, child 1 of its ConvBn";
  EXPECT_EQ(names.count("features.1.block.1.fc1.0.weight"), 1u) << "the squeeze-excitation's fused fc1";
  Q::prepare_qat(*model);
  model->forward(ember::randn({4, 3, 32, 32})).sum().backward();
  for (const auto& p : model->named_parameters()) EXPECT_TRUE(p.value().grad().defined()) << p.key();
  model->eval();
  Q::convert(*model);
  ember::NoGradGuard no_grad;
  EXPECT_EQ(model->forward(ember::randn({2, 3, 32, 32})).sizes(), (std::vector<int64_t>{2, 3}));
}

}  // namespace

}  // namespace EMBER_UNITY_FILE
