// CPU graphs: a static workload (the same shapes every step) captured once and replayed without
// the framework's per-op work: argument checks, dispatch, autograd recording, allocation. The CPU
// counterpart of PyTorch's CUDA Graphs (torch.cuda.CUDAGraph, torch.cuda.graph,
// torch.cuda.make_graphed_callables). See docs/graphs.md for the contract.
//
//   ember::graphs::Graph g;
//   {
//     ember::graphs::GraphCapture capture(g);   // torch.cuda.graph(g)
//     opt.zero_grad();
//     loss = F::mse_loss(model(static_x), static_y);
//     loss.backward();
//     opt.step();
//   }
//   for (auto& [x, y] : batches) {
//     static_x.copy_(x), static_y.copy_(y);
//     g.replay();                               // loss, the grads, the parameters: updated in place
//   }
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/nn/module.h"
#include "ember/tensor.h"

namespace ember::graphs {

// A graph's private memory (PyTorch's graph pool). Shared by graphs captured one after another
// with capture_begin(pool): their tensors then share blocks where their lifetimes allow.
class MemoryPool;
using MempoolId = std::shared_ptr<MemoryPool>;

// What a captured graph holds.
struct GraphStats {
  size_t ops = 0;            // op calls recorded (views included)
  size_t kernel_steps = 0;   // replayed as a direct kernel call on fixed pointers
  size_t call_steps = 0;     // replayed as the op's run on the kept arguments
  size_t skipped = 0;        // views and no-ops, which a replay has nothing to do for
  size_t static_inputs = 0;  // tensors made before capture that the graph reads or writes
  size_t pool_bytes = 0;     // the pool's memory (all graphs sharing it)
  size_t pool_blocks = 0;
  size_t reused_allocations = 0;  // allocations of the capture served by a block freed earlier in it
};

class Graph {
 public:
  Graph();
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Starts recording the ops this thread runs (they still run, on real values). `pool`: the pool
  // of a graph captured before, to share its memory; by default the graph gets its own.
  void capture_begin(MempoolId pool = nullptr);
  // Ends the recording and prepares the replay.
  void capture_end();
  // Runs the captured work again: its outputs, gradients, parameters and optimizer state are
  // written in place, as the same number of eager steps would write them.
  void replay();
  // Frees what the graph holds (its pool once no tensor of it is alive); it can capture again.
  // Also abandons a capture under way (the region threw).
  void reset();
  // The graph's pool, for capture_begin of a graph captured after this one.
  MempoolId pool() const;
  bool captured() const;
  GraphStats stats() const;
  // One line per replayed step: its kind and op (for debugging and docs).
  std::string dump() const;
  // Each replayed step timed on its own, in order (median over `rounds` replays, in seconds): what
  // the steps cost without the replay around them. Replays the graph `rounds` times.
  std::vector<double> step_times(int rounds = 100);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// torch.cuda.graph(g): captures from construction to destruction. If the region throws, the
// capture is abandoned (the graph stays empty and can capture again) and the exception goes on.
class GraphCapture {
 public:
  explicit GraphCapture(Graph& g, MempoolId pool = nullptr);
  ~GraphCapture() noexcept(false);
  GraphCapture(const GraphCapture&) = delete;
  GraphCapture& operator=(const GraphCapture&) = delete;

 private:
  Graph& g_;
  int exceptions_;
};

// torch.cuda.make_graphed_callables for a module: returns a callable whose forward and backward
// replay graphs captured on `sample_args` (after `warmup_iters` eager iterations on them). It
// composes with eager code: autograd flows into its inputs that require grad and into the
// module's parameters, whose .grad it accumulates as an eager backward would. Calls must give
// inputs of the sample's shapes, dtypes and requires_grad; the module's parameters must not
// change shape. Made in the module's training or eval mode at the time of the call.
using GraphedCallable = std::function<Tensor(const std::vector<Tensor>&)>;
GraphedCallable make_graphed_callables(const std::shared_ptr<nn::Module>& module,
                                       std::function<Tensor(const std::vector<Tensor>&)> forward,
                                       const std::vector<Tensor>& sample_args, int warmup_iters = 3);
// For a module holder whose forward takes one tensor (Linear, Sequential, a user's MODULE).
template <class ModuleHolder>
GraphedCallable make_graphed_callables(ModuleHolder module, const std::vector<Tensor>& sample_args,
                                       int warmup_iters = 3) {
  auto m = module.ptr();
  return make_graphed_callables(
      m, [m](const std::vector<Tensor>& a) { return m->forward(a.at(0)); }, sample_args, warmup_iters);
}

}  // namespace ember::graphs
