// Data loading: one epoch of Fashion-MNIST through the data loader (normalized, stacked batches
// of 64 in shuffled order, 2 worker threads), against libtorch's loader over the same files.
#include "fashion_mnist.h"
#include "torch_check.h"

namespace {

constexpr double kMean = 0.2860, kStd = 0.3530;  // Fashion-MNIST's training images
constexpr size_t kLoaderBatch = 64, kWorkers = 2;

bench::Register data_epoch{{
    .name = "data_epoch_fashion_mnist",
    .label = "data: one epoch of Fashion-MNIST, batch 64, shuffled, 2 workers",
    .target = std::nullopt,  // informative: the loader is not a target of its own
    .run =
        [](const bench::Context& ctx) {
          const bench::InflatedFashionMnist files;
          namespace ed = ember::data;
          namespace td = torch::data;
          ed::datasets::MNIST edataset(files.dir.string());
          td::datasets::MNIST tdataset(files.dir.string());
          bench::check_close(ctx, edataset.images(), tdataset.images(), parity::Tol{0, 0});
          bench::check_close(ctx, edataset.targets(), tdataset.targets(), parity::Tol{0, 0});

          auto eloader = ed::make_data_loader(
              std::move(edataset).map(ed::transforms::Normalize<>(kMean, kStd)).map(ed::transforms::Stack<>()),
              ed::DataLoaderOptions().batch_size(kLoaderBatch).workers(kWorkers));
          auto tloader = td::make_data_loader(
              std::move(tdataset).map(td::transforms::Normalize<>(kMean, kStd)).map(td::transforms::Stack<>()),
              td::DataLoaderOptions().batch_size(kLoaderBatch).workers(kWorkers));
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
