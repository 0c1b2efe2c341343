#include "ember/context.h"

#include "ember/error.h"
#include "ember/factory.h"
#include "ember/linalg.h"

namespace ember {

Context& globalContext() {
  static Context context;
  return context;
}

Float32MatmulPrecision Context::float32MatmulPrecision() const {
  const std::string p = get_float32_matmul_precision();
  return p == "medium" ? Float32MatmulPrecision::MEDIUM
         : p == "high" ? Float32MatmulPrecision::HIGH
                       : Float32MatmulPrecision::HIGHEST;
}

void Context::setFloat32MatmulPrecision(Float32MatmulPrecision p) {
  set_float32_matmul_precision(p == Float32MatmulPrecision::MEDIUM ? "medium"
                               : p == Float32MatmulPrecision::HIGH ? "high"
                                                                   : "highest");
}

void Context::setFloat32MatmulPrecision(const std::string& s) { set_float32_matmul_precision(s); }

Generator& Context::defaultGenerator(Device device) const {
  check_cpu_device("defaultGenerator", device);
  return default_generator();
}

void cuda::synchronize(int64_t device_index) {
  EMBER_CHECK(false, "torch::cuda::synchronize", "No CUDA GPUs are available (device_index ", device_index, ")");
}

}  // namespace ember
