// nn::utils: gradient clipping, flattening parameters into one vector, and (in the headers included
// below) packed sequences and parametrizations.
#pragma once
#include <optional>
#include <vector>

#include "ember/nn/utils/parametrizations.h"
#include "ember/nn/utils/parametrize.h"
#include "ember/nn/utils/rnn.h"
#include "ember/tensor.h"

namespace ember::nn::utils {

// Scales the gradients of `parameters` in place so that their joint norm (of type norm_type;
// INFINITY for the max-norm) is at most max_norm, and returns that norm before clipping.
// With error_if_nonfinite a nan/inf norm raises instead.
double clip_grad_norm_(const std::vector<Tensor>& parameters, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
double clip_grad_norm_(const Tensor& parameter, double max_norm, double norm_type = 2.0,
                       bool error_if_nonfinite = false);
// Clamps every gradient element into [-clip_value, clip_value].
void clip_grad_value_(const std::vector<Tensor>& parameters, double clip_value);
void clip_grad_value_(const Tensor& parameter, double clip_value);

// All parameters flattened and concatenated, and the inverse (copies vec's slices into them).
Tensor parameters_to_vector(const std::vector<Tensor>& parameters);
void vector_to_parameters(const Tensor& vec, const std::vector<Tensor>& parameters);

}  // namespace ember::nn::utils
