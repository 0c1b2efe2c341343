// TensorIterator: the loop builder behind every pointwise op (PyTorch's idea, written small).
// It takes outputs and inputs, computes the broadcast shape, the common dtype (PyTorch's
// promotion, 0-dim tensors and Scalars included), casts inputs that differ, allocates missing
// outputs in the inputs' memory layout, orders and coalesces dimensions, and then runs a 1-D
// inner loop `loop(char** data, const int64_t* byte_strides, int64_t n)` over the whole space,
// in parallel chunks above the grain size. Kernels only ever see that inner loop.
#pragma once
#include <algorithm>
#include <optional>
#include <type_traits>

#include "core/parallel.h"
#include "ember/tensor.h"

namespace ember {

// PyTorch's result_type over tensors (dim > 0, 0-dim) and wrapped numbers.
class ResultTypeState {
 public:
  void update(const Tensor& t);
  void update(const Scalar& s);
  ScalarType result() const;

 private:
  ScalarType dim_ = ScalarType::Undefined, zero_ = ScalarType::Undefined, wrapped_ = ScalarType::Undefined;
};
ScalarType result_type(const Tensor& a, const Tensor& b);
ScalarType result_type(const Tensor& a, const Scalar& b);
bool can_cast(ScalarType from, ScalarType to);  // no demotion of category (complex > float > int > bool)

class TensorIteratorConfig {
 public:
  explicit TensorIteratorConfig(const char* op_name) : op_(op_name) {}
  // Outputs first, then inputs. An undefined output is allocated. Inputs are borrowed (no
  // reference-count traffic on the hot path): they must outlive the TensorIterator, so a
  // temporary goes through add_owned_input, which the iterator keeps alive.
  TensorIteratorConfig& add_output(const Tensor& t);
  TensorIteratorConfig& add_input(const Tensor& t);
  TensorIteratorConfig& add_input(Tensor&& t) = delete;
  TensorIteratorConfig& add_owned_input(Tensor t);
  TensorIteratorConfig& add_input(const Scalar& s);
  // Integer (and bool) common dtypes become the default float dtype (exp, div, sqrt, ...).
  TensorIteratorConfig& promote_integer_inputs_to_float() {
    int_to_float_ = true;
    return *this;
  }
  // The dtype outputs are computed in when it is not the common dtype (comparisons: Bool).
  TensorIteratorConfig& output_dtype(ScalarType t) {
    out_dtype_ = t;
    return *this;
  }
  // Compute in this dtype instead of the promoted one.
  TensorIteratorConfig& common_dtype(ScalarType t) {
    common_ = t;
    return *this;
  }
  // Leave inputs in their own dtypes (the kernel reads each as it is).
  TensorIteratorConfig& no_input_cast() {
    cast_inputs_ = false;
    return *this;
  }
  // Outputs must already have the broadcast shape (in-place ops).
  TensorIteratorConfig& no_resize_outputs() {
    resize_outputs_ = false;
    return *this;
  }

 private:
  friend class TensorIterator;
  static constexpr int kMaxOperands = 8;
  struct Operand {
    const Tensor* tensor;  // null for a Scalar
    Scalar scalar;
    Tensor owned;          // an input the iterator must keep alive (add_owned_input)
  };
  Operand& push(bool output);
  const char* op_;
  Operand operands_[kMaxOperands];  // outputs first, then inputs; no heap allocation
  int noutputs_ = 0, ninputs_ = 0;
  std::optional<ScalarType> out_dtype_, common_;
  bool int_to_float_ = false;
  bool cast_inputs_ = true;
  bool resize_outputs_ = true;
};

class TensorIterator {
 public:
  static constexpr int kMaxOperands = 8;
  static constexpr int kMaxDims = 25;  // as PyTorch
  explicit TensorIterator(const TensorIteratorConfig& config);
  TensorIterator(const TensorIterator&) = delete;
  TensorIterator& operator=(const TensorIterator&) = delete;

  int ntensors() const { return ntensors_; }
  int noutputs() const { return noutputs_; }
  int64_t numel() const { return numel_; }
  int64_t ndim() const { return ndim_; }
  IntArrayRef shape() const { return IntArrayRef(shape_, static_cast<size_t>(ndim_)); }  // innermost dim first
  ScalarType common_dtype() const { return common_dtype_; }
  ScalarType dtype(int arg) const { return dtypes_[arg]; }
  // Whether input `arg` is a conjugate view (complex kernels conjugate as they load). Outputs
  // never are: a conjugated output is computed into a temporary written back through the bit.
  bool is_conj(int arg) const { return conj_[arg]; }
  char* data(int arg) const { return data_[arg]; }
  int64_t stride(int arg, int dim) const { return strides_[arg][dim]; }
  // The output as the caller sees it (allocated here, or the out= tensor), moved out: the
  // iterator's last use (a copy would cost an atomic increment and decrement).
  Tensor take_output() { return std::move(outputs_[0]); }
  // Every operand is contiguous over the single coalesced dim or a broadcast scalar (stride 0).
  bool is_contiguous_or_scalar() const;
  bool is_scalar_input(int arg) const { return ndim() > 0 ? strides_[arg][0] == 0 : true; }

  // loop(data, strides, n) over rows of the iteration space, split across threads above
  // grain_size elements.
  template <class Loop>
  void for_each(Loop&& loop, int64_t grain_size = kGrainSize) {
    const RowFn f = row_fn(loop);
    if (ndim_ <= 1 && numel_ > 0 && numel_ < grain_size) {  // one row: the small op's fast path
      char* ptrs[kMaxOperands];
      int64_t inner[kMaxOperands];
      std::copy_n(data_, kMaxOperands, ptrs);  // a fixed size: moves, not a call of memcpy
      for (int a = 0; a < ntensors_; ++a) inner[a] = ndim_ == 0 ? 0 : strides_[a][0];
      f.call(f.obj, ptrs, inner, numel_, 1, nullptr);
      write_back();
      return;
    }
    for_each_rows(f, grain_size);
  }
  // loop over the linear range [begin, end) of the iteration space
  template <class Loop>
  void serial_for_each(Loop& loop, int64_t begin, int64_t end) const {
    serial_rows(row_fn(loop), begin, end);
  }

  // A row loop by reference: the walk over the iteration space is compiled once, not once per
  // kernel's lambda. `call` runs `rows` rows of n elements, row r at data[a] + r * outer[a] (outer
  // is read only when rows > 1). A loop that takes (data, strides, n, rows, outer) itself gets
  // the rows at once; any other is called once per row from the thunk.
  struct RowFn {
    void* obj;
    void (*call)(void* obj, char** data, const int64_t* strides, int64_t n, int64_t rows, const int64_t* outer);
  };
  void for_each_rows(RowFn loop, int64_t grain_size);
  void serial_rows(RowFn loop, int64_t begin, int64_t end) const;

 private:
  template <class L>
  static void run_rows(L& loop, char** data, const int64_t* strides, int64_t n, int64_t rows, const int64_t* outer) {
    if constexpr (std::is_invocable_v<L&, char**, const int64_t*, int64_t, int64_t, const int64_t*>) {
      loop(data, strides, n, rows, outer);
    } else {
      char* ptrs[kMaxOperands];
      std::copy_n(data, kMaxOperands, ptrs);
      for (int64_t r = 0;;) {  // one call of the loop, so its body is compiled once
        loop(ptrs, strides, n);
        if (++r == rows) break;
        for (int a = 0; a < kMaxOperands; ++a) ptrs[a] += outer[a];
      }
    }
  }
  // Hidden: its instances (one per kernel's loop, 512 in the Release library) are the library's
  // own business; exported, their long names took ~100 KB of libember.so's symbol tables.
  template <class Loop>
  __attribute__((visibility("hidden"))) static RowFn row_fn(Loop& loop) {
    using L = std::remove_reference_t<Loop>;
    if constexpr (std::is_function_v<L>) {  // a plain function
      return {reinterpret_cast<void*>(&loop),
              [](void* o, char** data, const int64_t* strides, int64_t n, int64_t rows, const int64_t* outer) {
                run_rows(*reinterpret_cast<L*>(o), data, strides, n, rows, outer);
              }};
    } else {
      return {const_cast<void*>(static_cast<const void*>(&loop)),
              // not inlined into for_each's fast path: the loop body is compiled once
              [](void* o, char** data, const int64_t* strides, int64_t n, int64_t rows,
                 const int64_t* outer) __attribute__((noinline)) {
                run_rows(*static_cast<L*>(o), data, strides, n, rows, outer);
              }};
    }
  }

  bool try_fast_build(const TensorIteratorConfig& c);
  void write_back();
  int ntensors_ = 0, noutputs_ = 0;
  int64_t ndim_ = 0;
  int64_t numel_ = 0;
  ScalarType common_dtype_ = ScalarType::Undefined;
  int64_t shape_[kMaxDims];                // innermost first; only ndim_ entries are set
  int64_t strides_[kMaxOperands][kMaxDims];  // byte strides, same order
  char* data_[kMaxOperands] = {};
  ScalarType dtypes_[kMaxOperands] = {};
  bool conj_[kMaxOperands] = {};
  Tensor outputs_[2];             // what the caller gets back: allocated here, or the out= tensor
  Tensor owned_[kMaxOperands];    // buffers computed in: cast copies of inputs, temporaries of outputs
  alignas(16) char scalars_[kMaxOperands][16];
};

}  // namespace ember
