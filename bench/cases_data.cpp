// Data loading: one epoch of Fashion-MNIST through the data loader (normalized, stacked batches
// of 64 in shuffled order, 2 worker threads), against libtorch's loader over the same files.
// libtorch reads only uncompressed IDX files: the package's .gz files are inflated once into a
// temporary directory, which Ember reads too.
#include <unistd.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "torch_check.h"

namespace {

namespace fs = std::filesystem;
constexpr double kMean = 0.2860, kStd = 0.3530;  // Fashion-MNIST's training images
constexpr size_t kBatch = 64, kWorkers = 2;

// The training files, inflated; removed at exit.
struct InflatedFashionMnist {
  fs::path dir = fs::temp_directory_path() / ("ember_bench_fashion_mnist_" + std::to_string(::getpid()));
  InflatedFashionMnist() {
    const fs::path root = "/usr/share/datasets/fashion-mnist";
    fs::create_directories(dir);
    for (const char* name : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte"}) {
      const fs::path from = root / (std::string(name) + ".gz");
      gzFile in = gzopen(from.c_str(), "rb");
      if (!in) throw bench::CheckFailure("data_epoch: cannot open " + from.string() + " (install dataset-fashion-mnist)");
      std::ofstream out(dir / name, std::ios::binary);
      char buf[1 << 16];
      int n;
      while ((n = gzread(in, buf, sizeof buf)) > 0) out.write(buf, n);
      gzclose(in);
      if (n < 0) throw bench::CheckFailure("data_epoch: cannot inflate " + from.string());
    }
  }
  ~InflatedFashionMnist() { fs::remove_all(dir); }
};

bench::Register data_epoch{{
    .name = "data_epoch_fashion_mnist",
    .label = "data: one epoch of Fashion-MNIST, batch 64, shuffled, 2 workers",
    .run =
        [](const bench::Context& ctx) {
          const InflatedFashionMnist files;
          namespace ed = ember::data;
          namespace td = torch::data;
          ed::datasets::MNIST edataset(files.dir.string());
          td::datasets::MNIST tdataset(files.dir.string());
          bench::check_close(ctx, edataset.images(), tdataset.images(), parity::Tol{0, 0});
          bench::check_close(ctx, edataset.targets(), tdataset.targets(), parity::Tol{0, 0});

          auto eloader = ed::make_data_loader(
              std::move(edataset).map(ed::transforms::Normalize<>(kMean, kStd)).map(ed::transforms::Stack<>()),
              ed::DataLoaderOptions().batch_size(kBatch).workers(kWorkers));
          auto tloader = td::make_data_loader(
              std::move(tdataset).map(td::transforms::Normalize<>(kMean, kStd)).map(td::transforms::Stack<>()),
              td::DataLoaderOptions().batch_size(kBatch).workers(kWorkers));
          // Every image once per epoch, whichever the order.
          int64_t eseen = 0, tseen = 0;
          for (auto& batch : *eloader) eseen += batch.data.size(0);
          for (auto& batch : *tloader) tseen += batch.data.size(0);
          if (eseen != 60000 || tseen != 60000) {
            throw bench::CheckFailure("data_epoch: an epoch yielded " + std::to_string(eseen) + " images in Ember, " +
                                      std::to_string(tseen) + " in libtorch");
          }
          return bench::time_pair(ctx, {.ember = [&] { for (auto& batch : *eloader) (void)batch; },
                                        .baseline = [&] { for (auto& batch : *tloader) (void)batch; },
                                        .min_run_time = 2.0,
                                        .rounds = 2});
        },
}};

}  // namespace
