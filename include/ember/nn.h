// The nn library, as libtorch's torch/nn.h: Module and holders, layers, containers, losses,
// init and utils.
#pragma once
#include "ember/nn/functional.h"
#include "ember/nn/init.h"
#include "ember/nn/module.h"
#include "ember/nn/modules/activation.h"
#include "ember/nn/modules/container.h"
#include "ember/nn/modules/conv.h"
#include "ember/nn/modules/dropout.h"
#include "ember/nn/modules/embedding.h"
#include "ember/nn/modules/linear.h"
#include "ember/nn/modules/loss.h"
#include "ember/nn/modules/normalization.h"
#include "ember/nn/modules/pooling.h"
#include "ember/nn/modules/transformer.h"
#include "ember/nn/options.h"
#include "ember/nn/pimpl.h"
#include "ember/nn/utils.h"
