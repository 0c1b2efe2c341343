// The loop of the fused pointwise engine (src/fx/fused.cpp): a straight-line program over tile
// buffers, run over a TensorIterator whose operands are the chain's outputs and inputs, each in
// its own dtype. Each inner-loop call of the iterator is cut into tiles of kFusedTile elements;
// per tile the program loads inputs into compute-type buffers (float32, or float64 for float64
// chains), runs each op as a vector loop over the buffers with the eager kernels' functors
// (pointwise_functors-inl.h), and stores the outputs, so memory is touched once per element.
#pragma once
#include <cstdint>
#include <vector>

#include "core/tensor_iterator.h"
#include "kernels/cpu/pointwise.h"

namespace ember::kernels {

inline constexpr int64_t kFusedTile = 1024;  // elements per tile buffer (4 KiB in float32)
inline constexpr int kFusedMaxSlots = 24;   // tile buffers live at once
// From this many elements on, float32/float64 outputs are written with non-temporal stores and
// the next tile of each contiguous input is requested while the current one computes.
inline constexpr int64_t kFusedLargeElements = int64_t{1} << 21;

// An operand of an instruction: a tile buffer (slot >= 0) or a constant (already converted to the
// dtype the op computes in, as the eager op converts a Scalar). `round_to` Half/BFloat16: the
// value is rounded to that dtype first (a float32 value meeting a 16-bit compute dtype).
struct FusedOperand {
  int slot = -1;
  double constant = 0;
  ScalarType round_to = ScalarType::Undefined;
};

struct FusedInstr {
  enum class Kind : uint8_t {
    Load,     // slots[result] = operand `arg` of the iterator, converted to the compute type
    Store,    // operand `arg` of the iterator = operands[0], in that operand's dtype
    Unary,    // unary(operands[0]; params)
    Binary,   // binary(operands[0], operands[1]; alpha): the arithmetic ones only (visit_binary)
    Compare,  // predicate (Eq ... Ge) of operands[0], operands[1]: 1 or 0
    Where,    // operands[0] != 0 ? operands[1] : operands[2]
    Clamp,    // min(max(operands[0], operands[1]), operands[2]), NaN-propagating
    Cast,     // operands[0] converted to result_dtype
  };
  Kind kind = Kind::Load;
  int arg = 0;
  UnaryOp unary = UnaryOp::Abs;
  UnaryParams params;
  BinaryOp binary = BinaryOp::Add;
  Scalar alpha = 1;
  PredicateOp predicate = PredicateOp::Eq;
  FusedOperand operands[3];
  int result = -1;  // slot
  // dtype of the result: Half/BFloat16 results are rounded to it, Bool ones are 0 or 1.
  ScalarType result_dtype = ScalarType::Undefined;
};

struct FusedProgram {
  bool double_lanes = false;  // compute in float64 (float64 chains) instead of float32
  int num_slots = 0;
  std::vector<FusedInstr> code;
};

// Runs `program` over `iter` (operands: outputs, then inputs, each in its own dtype; inputs of
// any dtype are read, outputs are float dtypes or Bool).
void fused_pointwise_kernel(TensorIterator& iter, const FusedProgram& program);

}  // namespace ember::kernels
