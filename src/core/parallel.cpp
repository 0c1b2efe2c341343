#include "core/parallel.h"

#include "ember/parallel.h"

namespace ember {

int get_num_threads() { return omp_get_max_threads(); }
void set_num_threads(int n) {
  EMBER_CHECK(n > 0, "set_num_threads", "expected a positive number of threads, got ", n);
  omp_set_num_threads(n);
}
bool in_parallel_region() { return omp_in_parallel(); }

}  // namespace ember
