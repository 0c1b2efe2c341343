#include "ember/nn/modules/parameter.h"

#include <string>

namespace ember::nn {
namespace {
// As libtorch prints each entry: "(key): Parameter containing: [Float of size [2, 3]]".
void print_parameters(std::ostream& stream, const char* name, const OrderedDict<std::string, Tensor>& params) {
  stream << "torch::nn::" << name << "(" << std::endl;
  for (const auto& item : params) {
    stream << "(" << item.key() << "): Parameter containing: [" << item.value().scalar_type() << " of size "
           << item.value().sizes() << "]" << std::endl;
  }
  stream << ")";
}
}  // namespace

void ParameterListImpl::append(Tensor param) {
  const bool requires_grad = param.requires_grad();
  register_parameter(std::to_string(parameters_.size()), std::move(param), requires_grad);
}

Tensor& ParameterListImpl::at(size_t idx) {
  EMBER_CHECK(idx < size(), "ParameterList", "Index ", idx, " out of range for a list of ", size(), " parameters");
  return parameters_[idx].value();
}
const Tensor& ParameterListImpl::at(size_t idx) const {
  EMBER_CHECK(idx < size(), "ParameterList", "Index ", idx, " out of range for a list of ", size(), " parameters");
  return parameters_[idx].value();
}
void ParameterListImpl::pretty_print(std::ostream& stream) const {
  print_parameters(stream, "ParameterList", parameters_);
}

Tensor& ParameterDictImpl::insert(std::string key, Tensor param) {
  const bool requires_grad = param.requires_grad();
  return register_parameter(std::move(key), std::move(param), requires_grad);
}
Tensor ParameterDictImpl::pop(const std::string& key) {
  EMBER_CHECK(parameters_.contains(key), "ParameterDict", "Parameter '", key, "' is not defined");
  Tensor value = parameters_[key];
  parameters_.erase(key);
  return value;
}
void ParameterDictImpl::pretty_print(std::ostream& stream) const {
  print_parameters(stream, "ParameterDict", parameters_);
}

}  // namespace ember::nn
