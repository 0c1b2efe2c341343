// Data loading, as libtorch's torch::data: datasets, transforms, samplers and the data loader.
#pragma once
#include "ember/data/dataloader.h"
#include "ember/data/dataloader_options.h"
#include "ember/data/datasets/base.h"
#include "ember/data/datasets/chunk.h"
#include "ember/data/datasets/map.h"
#include "ember/data/datasets/mnist.h"
#include "ember/data/datasets/shared.h"
#include "ember/data/datasets/stateful.h"
#include "ember/data/datasets/tensor.h"
#include "ember/data/example.h"
#include "ember/data/samplers/base.h"
#include "ember/data/samplers/distributed.h"
#include "ember/data/samplers/random.h"
#include "ember/data/samplers/sequential.h"
#include "ember/data/samplers/serialize.h"
#include "ember/data/samplers/stream.h"
#include "ember/data/transforms/base.h"
#include "ember/data/transforms/lambda.h"
#include "ember/data/transforms/stack.h"
#include "ember/data/transforms/tensor.h"

namespace ember::data {
// The dataset bases by their short names too, as libtorch's torch::data::Dataset.
using datasets::BatchDataset;
using datasets::Dataset;
}  // namespace ember::data
