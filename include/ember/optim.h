// Optimizers and learning-rate schedulers (libtorch's torch::optim), built on the multi-tensor
// ops of ember/foreach.h.
#pragma once
#include "ember/optim/adagrad.h"
#include "ember/optim/adam.h"
#include "ember/optim/adamw.h"
#include "ember/optim/lbfgs.h"
#include "ember/optim/optimizer.h"
#include "ember/optim/rmsprop.h"
#include "ember/optim/schedulers.h"
#include "ember/optim/sgd.h"
