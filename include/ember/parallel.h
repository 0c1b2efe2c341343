// Intra-op thread count (libtorch's torch::set_num_threads / get_num_threads).
#pragma once
#include "ember/error.h"

namespace ember {
int get_num_threads();
void set_num_threads(int n);
}  // namespace ember
