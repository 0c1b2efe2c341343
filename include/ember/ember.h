// Everything public in Ember.
#pragma once
#include "ember/array_ref.h"
#include "ember/autograd.h"
#include "ember/benchmark.h"
#include "ember/context.h"  // at::globalContext()
// data loading
#include "ember/data.h"
#include "ember/device.h"
#include "ember/dtype.h"
#include "ember/error.h"
#include "ember/factory.h"
#include "ember/indexing.h"
// TorchScript archives: torch::jit::load
#include "ember/jit.h"
#include "ember/linalg.h"
#include "ember/linalg_functions.h"  // torch.linalg
#include "ember/nn_ops.h"
#include "ember/observer.h"
#include "ember/ordered_dict.h"
#include "ember/parallel.h"
#include "ember/pointwise.h"
#include "ember/profiler.h"
#include "ember/reduce.h"
#include "ember/scalar.h"
// serialize
#include "ember/serialize.h"
#include "ember/shape.h"
#include "ember/storage.h"
#include "ember/tensor.h"
#include "ember/tensor_options.h"
#include "ember/version.h"
// optim family: multi-tensor ops, optimizers, LR schedulers
#include "ember/foreach.h"
#include "ember/optim.h"
// mixed precision: autocast regions and the gradient scaler
#include "ember/amp.h"
#include "ember/autocast.h"
// ---- nn ----
#include "ember/nn.h"
// the model zoo: torchvision's ResNets and MobileNetV3s
#include "ember/vision/models.h"
// libtorch's remaining ATen functions (issue 26)
#include "ember/aten_tail.h"
#include "ember/aten_tail2.h"
// capture and replay of static workloads (ember::graphs)
#include "ember/graphs.h"
#include "ember/special.h"  // torch.special
#include "ember/complex_ops.h"
#include "ember/fft.h"  // torch.fft
// int8 quantization: quantized tensors, observers, dynamic quantization
#include "ember/quantization.h"
#include "ember/quantized.h"
