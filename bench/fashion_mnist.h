// Fashion-MNIST for the cases that read it. libtorch reads only uncompressed IDX files: the
// package's .gz files are inflated once into a temporary directory, which Ember reads too.
#pragma once
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "registry.h"

namespace bench {

// The four files, inflated; removed when this goes out of scope.
struct InflatedFashionMnist {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("ember_bench_fashion_mnist_" + std::to_string(::getpid()));
  InflatedFashionMnist() {
    const std::filesystem::path root = "/usr/share/datasets/fashion-mnist";
    std::filesystem::create_directories(dir);
    for (const char* name :
         {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}) {
      const std::filesystem::path from = root / (std::string(name) + ".gz");
      gzFile in = gzopen(from.c_str(), "rb");
      if (!in) throw CheckFailure("cannot open " + from.string() + " (install dataset-fashion-mnist)");
      std::ofstream out(dir / name, std::ios::binary);
      char buf[1 << 16];
      int n;
      while ((n = gzread(in, buf, sizeof buf)) > 0) out.write(buf, n);
      gzclose(in);
      if (n < 0) throw CheckFailure("cannot inflate " + from.string());
    }
  }
  ~InflatedFashionMnist() { std::filesystem::remove_all(dir); }
  InflatedFashionMnist(const InflatedFashionMnist&) = delete;
  InflatedFashionMnist& operator=(const InflatedFashionMnist&) = delete;
};

}  // namespace bench
