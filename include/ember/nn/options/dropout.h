// Options of the dropouts and their functional forms.
#pragma once
#include "ember/nn/options.h"

namespace ember::nn {
struct DropoutOptions {
  DropoutOptions(double p = 0.5) : p_(p) {}  // NOLINT
  EMBER_ARG(double, p);
  EMBER_ARG(bool, inplace) = false;  // true: dropout writes into its input and returns it
};
using Dropout2dOptions = DropoutOptions;
using Dropout3dOptions = DropoutOptions;
using FeatureDropoutOptions = DropoutOptions;
using AlphaDropoutOptions = DropoutOptions;
using FeatureAlphaDropoutOptions = DropoutOptions;

namespace functional {
struct DropoutFuncOptions {
  EMBER_ARG(double, p) = 0.5;
  EMBER_ARG(bool, training) = true;
  EMBER_ARG(bool, inplace) = false;
};
using Dropout2dFuncOptions = DropoutFuncOptions;
using Dropout3dFuncOptions = DropoutFuncOptions;
// The alpha dropouts default to training(false), as libtorch's.
struct AlphaDropoutFuncOptions {
  EMBER_ARG(double, p) = 0.5;
  EMBER_ARG(bool, training) = false;
  EMBER_ARG(bool, inplace) = false;
};
using FeatureAlphaDropoutFuncOptions = AlphaDropoutFuncOptions;
}  // namespace functional
}  // namespace ember::nn
