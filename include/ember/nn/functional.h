// torch::nn::functional's forms that take FuncOptions (the positional forms are in
// ember/nn_ops.h). Users write `namespace F = torch::nn::functional;`.
#pragma once
#include "ember/nn/modules/activation.h"
#include "ember/nn/modules/dropout.h"
#include "ember/nn/modules/embedding.h"
#include "ember/nn/modules/loss.h"
#include "ember/nn/modules/pooling.h"
#include "ember/nn_ops.h"
