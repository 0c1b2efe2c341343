// The fused pointwise loop (fused_pointwise.h), compiled for each SIMD target Highway selects at
// run time. Per tile of an inner-loop call: loads convert inputs into compute-type buffers (zero
// padded to whole vectors, so every op runs full vectors; a contiguous input already in the compute
// type is read in place), each op runs the eager kernel's functor over the buffers, stores convert
// back into the outputs' dtypes. Large chains stream their outputs and ask for the next tile of
// their inputs while the current one computes.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kernels/cpu/fused_pointwise_kernels.cpp"
#include <hwy/foreach_target.h>  // NOLINT: re-includes this file once per target
#include <hwy/highway.h>

#include <hwy/cache_control.h>

#include <cstring>
#include <type_traits>
#include <utility>

#include "kernels/cpu/cast.h"
#include "kernels/cpu/fused_pointwise.h"
#include "kernels/cpu/hwy_util-inl.h"
#include "kernels/cpu/pointwise_vec-inl.h"
#include "kernels/cpu/pointwise_functors-inl.h"

HWY_BEFORE_NAMESPACE();
namespace ember::kernels::HWY_NAMESPACE {
namespace {

// Float32 lanes rounded to 16-bit float T (round to nearest even), as a store and reload in T
// would give: F16C's conversions for float16, the integer form of StoreC's rounding for bfloat16
// (in registers it beats the CPU's own conversion and widening back: bfloat16 chains 10-20%
// faster on Zen 5).
template <class T, class D, class V>
HWY_INLINE V round16(D d, V v) {
  if constexpr (std::is_same_v<T, Half>) {
    if constexpr (kNativeF16) {
      const hn::Rebind<hwy::float16_t, D> dh;
      return hn::PromoteTo(d, hn::DemoteTo(dh, v));
    } else {
      return HalfBitsToFloat(d, FloatToHalfBits(d, v));
    }
  } else {
    return hn::BitCast(d, hn::ShiftLeft<16>(BFloat16Bits(d, v)));
  }
}

// dst[0, mpad) = src[0, mpad) rounded to 16-bit float t: a float32 value meeting a 16-bit compute
// dtype, as the eager op reads it after its conversion.
template <class D>
void round_tile(D d, const hn::TFromD<D>* src, hn::TFromD<D>* dst, ScalarType t, size_t mpad) {
  if constexpr (sizeof(hn::TFromD<D>) == 4) {
    for (size_t i = 0; i < mpad; i += hn::Lanes(d)) {
      const auto v = hn::LoadU(d, src + i);
      hn::Store(t == kBFloat16 ? round16<BFloat16>(d, v) : round16<Half>(d, v), d, dst + i);
    }
  }
}

// An operand as the op loop reads it: a tile buffer or a broadcast constant.
template <class D>
struct Src {
  const hn::TFromD<D>* p;
  hn::Vec<D> c;
};

// A result vector into a tile buffer or, for a step whose value is an output, straight into the
// output (`stream`: with a non-temporal store, as store_tile writes a large output).
template <class D, class V>
HWY_INLINE void put(D d, V v, hn::TFromD<D>* out, bool stream) {
  if (stream) {
    hn::Stream(v, d, out);
  } else {
    hn::StoreU(v, d, out);
  }
}

// The step after an op folded into the op's loop: its result v combined with a buffer's element
// o in registers instead of a store and a second pass (a switch in the loop: 8% faster on the
// bench chain than a branch-free form computing both a product and a sum).
enum class Epi : uint8_t { None, Add, Mul, Sub, SubFrom };
template <class D>
struct Epilogue {
  Epi op = Epi::None;
  const hn::TFromD<D>* p = nullptr;
};
template <class D, class V>
HWY_INLINE V epilogue(D d, const Epilogue<D>& e, V v, size_t i) {
  switch (e.op) {
    case Epi::None: return v;
    case Epi::Add: return hn::Add(v, hn::LoadU(d, e.p + i));
    case Epi::Mul: return hn::Mul(v, hn::LoadU(d, e.p + i));
    case Epi::Sub: return hn::Sub(v, hn::LoadU(d, e.p + i));
    default: return hn::Sub(hn::LoadU(d, e.p + i), v);
  }
}

// apply's loop over buffers with nothing rounded: f, then (float32) the epilogue, into out[0, mpad).
// A function of values, not a lambda: a capture is memory that the loop's stores (which may
// alias anything) would make it read again each time.
template <class D, class F, size_t... I>
HWY_NOINLINE void buffers_loop(D d, const F f, const hn::TFromD<D>* const* operands, hn::TFromD<D>* out, bool stream,
                               const Epilogue<D> e, size_t mpad, std::index_sequence<I...>) {
  using L = hn::TFromD<D>;
  const size_t N = hn::Lanes(d);
  const L* const p[] = {operands[I]...};
  for (size_t i = 0; i < mpad; i += N) {
    auto v = f.vec(d, hn::LoadU(d, p[I] + i)...);
    if constexpr (sizeof(L) == 4) {  // float64 chains keep a loop per op: 20 KB less code
      v = epilogue(d, e, v, i);
    }
    put(d, v, out + i, stream);
  }
}

// apply's loop for the rest: out[0, mpad) = f(operands), rounded to a 16-bit rdt (`round`); operand k a
// buffer, a constant (read from a vector of it at `i & 0`) or (wide[k], for a 16-bit result) a
// whole tile of an input of dtype rdt, widened as it is read. The tests in the loop do not change
// within it (predicted): a loop per op and 16-bit dtype, with the epilogue and the sink, cost
// 700 KB of library; those two are finish_tile's.
template <class D, class F, size_t... I>
HWY_NOINLINE void general_loop(D d, const F f, const Src<D>* s, const void* const* wide, ScalarType rdt, bool round,
                               hn::TFromD<D>* out, size_t mpad, std::index_sequence<I...>) {
  using L = hn::TFromD<D>;
  const size_t N = hn::Lanes(d);
  HWY_ALIGN L constants[sizeof...(I)][hn::MaxLanes(d)];
  (hn::Store(s[I].c, d, constants[I]), ...);
  const L* const p[] = {(s[I].p ? s[I].p : constants[I])...};
  const size_t mask[] = {(s[I].p ? ~size_t{0} : 0)...};
  const void* const w[] = {wide[I]...};
  const bool bf16 = rdt == kBFloat16;
  auto operand = [&](size_t k, size_t i) __attribute__((always_inline)) {
    if constexpr (sizeof(L) == 4) {
      if (w[k]) {
        return bf16 ? LoadC(d, static_cast<const BFloat16*>(w[k]) + i) : LoadC(d, static_cast<const Half*>(w[k]) + i);
      }
    }
    return hn::LoadU(d, p[k] + (i & mask[k]));
  };
  for (size_t i = 0; i < mpad; i += N) {
    auto v = f.vec(d, operand(I, i)...);
    if constexpr (sizeof(L) == 4) {
      if (round) v = bf16 ? round16<BFloat16>(d, v) : round16<Half>(d, v);
    }
    hn::StoreU(v, d, out + i);
  }
}

// After general_loop's 16-bit result (rounded) in out[0, mpad): the epilogue, rounded, into out
// and (sink) the output's m elements, rounded by the store's conversion, instead.
template <class T, class D>
void finish_tile(D d, hn::TFromD<D>* out, const Epilogue<D>& e, T* sink, size_t m, size_t mpad) {
  const size_t N = hn::Lanes(d);
  for (size_t i = 0; i < mpad; i += N) {
    auto v = hn::Load(d, out + i);
    if (e.op != Epi::None) v = epilogue(d, e, v, i);
    if (!sink) {
      hn::Store(round16<T>(d, v), d, out + i);
    } else if (i + N <= m) {
      StoreC(d, v, sink + i);
    } else {
      StoreCN(d, v, sink + i, m - i);
    }
  }
}
template <class D>
HWY_NOINLINE void finish_tile(D d, hn::TFromD<D>* out, ScalarType rdt, const Epilogue<D> e, void* sink, size_t m,
                              size_t mpad) {
  if constexpr (sizeof(hn::TFromD<D>) == 4) {
    if (rdt == kBFloat16) {
      finish_tile(d, out, e, static_cast<BFloat16*>(sink), m, mpad);
    } else {
      finish_tile(d, out, e, static_cast<Half*>(sink), m, mpad);
    }
  }
}

// out[0, mpad) = f(operands), mpad a multiple of the vector length. `out` may be an operand's
// buffer (each element is read before it is written). Operands come rounded (run_program). A
// 16-bit result (rdt) is rounded; its operands may also be (`wide`) inputs of dtype rdt read in
// place, and given `sink` (a contiguous output of dtype rdt that no later step reads the value
// from) it is written there instead of to `out`. `stream` only where every operand is a buffer
// and the result is not 16-bit; `epi` there and for 16-bit results.
template <class D, class F, size_t... I>
HWY_INLINE void apply(D d, const F& f, hn::TFromD<D>* out, bool stream, const Epilogue<D>& epi, const Src<D>* s,
                      const void* const* wide, size_t m, size_t mpad, ScalarType rdt, void* sink,
                      std::index_sequence<I...>) {
  static_assert(!std::is_base_of_v<ScalarOnly, F>, "the fused loops call the functor's vec");
  const hn::TFromD<D>* const p[] = {s[I].p...};
  const bool narrow = rdt == kHalf || rdt == kBFloat16;
  if (!narrow && (p[I] && ...)) {
    buffers_loop(d, f, p, out, stream, epi, mpad, std::index_sequence<I...>{});
    return;
  }
  // (a value going into the sink as it is, where the store's conversion rounds it, is not rounded twice)
  const bool round = narrow && (epi.op != Epi::None || !sink);
  general_loop(d, f, s, wide, rdt, round, out, mpad, std::index_sequence<I...>{});
  if (narrow && (epi.op != Epi::None || sink)) finish_tile(d, out, rdt, epi, sink, m, mpad);
}

template <PredicateOp P>
struct CompareF {
  template <class D, class V>
  HWY_INLINE V vec(D d, V a, V b) const {
    const V one = hn::Set(d, hn::TFromD<D>(1));
    if constexpr (P == PredicateOp::Eq) return hn::IfThenElseZero(hn::Eq(a, b), one);
    if constexpr (P == PredicateOp::Ne) return hn::IfThenElseZero(hn::Ne(a, b), one);
    if constexpr (P == PredicateOp::Lt) return hn::IfThenElseZero(hn::Lt(a, b), one);
    if constexpr (P == PredicateOp::Le) return hn::IfThenElseZero(hn::Le(a, b), one);
    if constexpr (P == PredicateOp::Gt) return hn::IfThenElseZero(hn::Gt(a, b), one);
    return hn::IfThenElseZero(hn::Ge(a, b), one);
  }
};
struct WhereF {
  template <class D, class V>
  HWY_INLINE V vec(D d, V c, V a, V b) const { return hn::IfThenElse(hn::Ne(c, hn::Zero(d)), a, b); }
};
// to(dtype): Bool is `!= 0` (NaN is true, as C++'s conversion); float dtypes are rounded by finish.
struct CastF {
  bool to_bool;
  template <class D, class V>
  HWY_INLINE V vec(D d, V x) const {
    return to_bool ? hn::IfThenElseZero(hn::Ne(x, hn::Zero(d)), hn::Set(d, hn::TFromD<D>(1))) : x;
  }
};

// buf[0, m) = the m elements at p (byte stride s, dtype t) in the compute type; buf[m, mpad) = 0.
template <class D>
void load_tile(D d, const char* p, int64_t s, ScalarType t, hn::TFromD<D>* buf, size_t m, size_t mpad) {
  using L = hn::TFromD<D>;
  visit_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<lane_t<T>, L>) {
      if (s == static_cast<int64_t>(sizeof(T))) {
        // locals, not the captures: the stores may alias any memory, so a capture would be read
        // again after each (bfloat16 tiles loaded 2x faster)
        const T* const in = reinterpret_cast<const T*>(p);
        L* const out = buf;
        const size_t n = m, N = hn::Lanes(d);
        size_t i = 0;
        for (; i + N <= n; i += N) hn::Store(LoadC(d, in + i), d, out + i);
        if (i < n) hn::Store(LoadCN(d, in + i, n - i), d, out + i);
        return;
      }
    }
    if (s == 0) {
      T v;
      std::memcpy(&v, p, sizeof(T));
      const L c = cast<L>(v);
      for (size_t i = 0; i < m; ++i) buf[i] = c;
    } else {
      for (size_t i = 0; i < m; ++i) {
        T v;
        std::memcpy(&v, p + static_cast<int64_t>(i) * s, sizeof(T));
        buf[i] = cast<L>(v);
      }
    }
    for (size_t i = m; i < mpad; ++i) buf[i] = L(0);
  });
}

// The m elements at p (byte stride s, dtype t) = buf[0, m). `stream`: a float output too large
// to stay in cache is written with non-temporal stores (no read of the lines it overwrites).
template <class D>
void store_tile(D d, const hn::TFromD<D>* buf, char* p, int64_t s, ScalarType t, size_t m, bool stream) {
  using L = hn::TFromD<D>;
  visit_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<lane_t<T>, L>) {
      if (s == static_cast<int64_t>(sizeof(T))) {
        T* const out = reinterpret_cast<T*>(p);
        const L* const in = buf;  // locals, as in load_tile
        const size_t n = m, N = hn::Lanes(d);
        size_t i = 0;
        if constexpr (std::is_same_v<T, L>) {
          if (stream && reinterpret_cast<uintptr_t>(out) % (N * sizeof(T)) == 0) {
            for (; i + N <= n; i += N) hn::Stream(hn::Load(d, in + i), d, out + i);
          }
        }
        for (; i + N <= n; i += N) StoreC(d, hn::Load(d, in + i), out + i);
        if (i < n) StoreCN(d, hn::Load(d, in + i), out + i, n - i);
        return;
      }
    }
    for (size_t i = 0; i < m; ++i) {
      const T v = cast<T>(buf[i]);
      std::memcpy(p + static_cast<int64_t>(i) * s, &v, sizeof(T));
    }
  });
}

// For large chains: requests into L2 for the next tile's lines of each contiguous input, a share
// of them before each loop of a costly function (exp, tanh, erf, ...) that reads no input's tile
// for the first time, so memory keeps streaming while the steps that only compute run (without,
// a chain of sigmoid and tanh took the sum of its memory time and its compute time). Elsewhere the
// CPU's own prefetchers keep up and the requests would only compete with them (asked for before
// relu's loop, `relu(x + a)` over 16M float32 took 5 -> 7.5 ms). Into L2: hwy::Prefetch asks for
// L1, whose miss buffers the requests would fill, stalling the tile's own loads. The steps that
// ask are counted in each tile, and share the next tile's requests. docs/fx_fusion.md has the
// figures. One object per inner-loop call; its only use outside the tile loop is through `this`.
constexpr size_t kAheadParts = 8;
class TileAhead {
 public:
  TileAhead(const FusedProgram& prog, const TensorIterator& iter, char* const* data, const int64_t* strides,
            int64_t n, int64_t tile, bool large)
      : prog_(prog), iter_(iter), data_(data), strides_(strides), n_(n), tile_(tile), large_(large) {}
  bool reads_input = false;  // set by a load: the next step's loop is the first to read an input's tile
  void start(int64_t i0) {
    i0_ = i0;
    ranges_ = next_ = lines_ = ran_ = 0;
    reads_input = false;
  }
  void finish() { steps_ = std::max<int64_t>(ran_, 1); }
  // Set by run_program for a unary step it may run in kAheadParts parts; `split` says whether it
  // must (a costly function asked, in its first part, for the first part of its share).
  bool may_split = false, split = false;
  HWY_NOINLINE void before_costly() {
    if (!large_ || reads_input || i0_ + tile_ >= n_) return;
    if (split) return request(part_share_);
    if (ran_++ == 0) {
      for (const FusedInstr& in : prog_.code) {
        const int64_t s = strides_[in.arg];
        if (in.kind != FusedInstr::Kind::Load || s != int64_t(element_size(iter_.dtype(in.arg))) ||
            ranges_ == kFusedMaxSlots) {
          continue;
        }
        const int64_t bytes = std::min(tile_, n_ - i0_ - tile_) * s;
        from_[ranges_] = data_[in.arg] + (i0_ + tile_) * s;
        end_[ranges_] = from_[ranges_] + bytes;
        ++ranges_;
        lines_ += (bytes + 63) / 64;
      }
      share_ = (lines_ + steps_ - 1) / steps_;
    }
    if (!may_split) return request(share_);
    split = true;
    part_share_ = (share_ + int64_t{kAheadParts} - 1) / int64_t{kAheadParts};
    request(part_share_);
  }

 private:
  void request(int64_t count) {
    for (; count > 0 && next_ < ranges_; --count) {
#if HWY_ARCH_X86
      _mm_prefetch(from_[next_], _MM_HINT_T1);
#else
      hwy::Prefetch(from_[next_]);
#endif
      from_[next_] += 64;
      if (from_[next_] >= end_[next_]) ++next_;
    }
  }

 private:
  const FusedProgram& prog_;
  const TensorIterator& iter_;
  char* const* data_;
  const int64_t* strides_;
  const int64_t n_, tile_;
  const bool large_;
  int64_t i0_ = 0, steps_ = 1, ran_ = 0, lines_ = 0, share_ = 0, part_share_ = 0;
  int ranges_ = 0, next_ = 0;
  const char* from_[kFusedMaxSlots];
  const char* end_[kFusedMaxSlots];
};

// The functors of unary ops src/fx/fused.cpp's table does not list, so no plan emits them: their
// loops are not compiled into this file (digamma's and the float64-computed ones are large).
template <class F>
constexpr bool kNeverFused = std::is_same_v<F, AsinF> || std::is_same_v<F, AcosF> || std::is_same_v<F, AtanF> ||
                             std::is_same_v<F, SinhF> || std::is_same_v<F, CoshF> || std::is_same_v<F, AsinhF> ||
                             std::is_same_v<F, AcoshF> || std::is_same_v<F, AtanhF> || std::is_same_v<F, DigammaF> ||
                             std::is_same_v<F, TrigammaF> || std::is_same_v<F, LogSigmoidF> ||
                             std::is_same_v<F, FracF> || std::is_same_v<F, NanToNumF>;

// Whether an instruction from code[from] on reads buffer `slot` before something overwrites it.
bool read_later(const FusedProgram& prog, size_t from, int slot) {
  for (size_t j = from; j < prog.code.size(); ++j) {
    const FusedInstr& in = prog.code[j];
    if (in.kind != FusedInstr::Kind::Load) {
      for (const FusedOperand& o : in.operands)
        if (o.slot == slot) return true;
    }
    if (in.result == slot) return false;
  }
  return false;
}

template <class L>
void run_program(TensorIterator& iter, const FusedProgram& prog) {
  const bool large = iter.numel() >= kFusedLargeElements;
  iter.for_each([&prog, &iter, large](char** data, const int64_t* strides, int64_t n) {
    const hn::ScalableTag<L> d;
    const size_t N = hn::Lanes(d);
    constexpr int64_t kTile = kFusedTile * 4 / static_cast<int64_t>(sizeof(L));  // 4 KiB per buffer
    // Buffers one cache line apart beyond their 4 KiB: at a multiple of 4 KiB from each other, a
    // load from one would wait on a store to another (4K aliasing).
    constexpr int64_t kStride = kTile + 64 / static_cast<int64_t>(sizeof(L));
    HWY_ALIGN L buf[kFusedMaxSlots][kStride];
    HWY_ALIGN L scratch[3][kStride];  // operands rounded to a 16-bit dtype
    // Where each buffer's values are read from in this tile: the buffer, or (a whole number of
    // vectors of a contiguous input already in the compute type) the input itself, uncopied.
    const L* view[kFusedMaxSlots];
    // A whole tile of a contiguous float16/bfloat16 input, left in place until something needs it in
    // a buffer: 16-bit loops widen it as they read it (the pass that converted it costs as much as
    // an op's loop). Null where the value is in view.
    const void* wide[kFusedMaxSlots] = {};
    ScalarType wide_dtype[kFusedMaxSlots] = {};
    const ScalarType lane_dtype = sizeof(L) == 4 ? kFloat : kDouble;
    TileAhead ahead(prog, iter, data, strides, n, kTile, large);
    for (int64_t i0 = 0; i0 < n; i0 += kTile) {
      const size_t m = static_cast<size_t>(std::min(kTile, n - i0));
      const size_t mpad = (m + N - 1) / N * N;
      ahead.start(i0);
      auto load = [&](const FusedInstr& in) {
        ahead.reads_input = true;
        const char* p = data[in.arg] + i0 * strides[in.arg];
        const ScalarType t = iter.dtype(in.arg);
        wide[in.result] = nullptr;
        if (m == mpad && t == lane_dtype && strides[in.arg] == int64_t(sizeof(L))) {
          view[in.result] = reinterpret_cast<const L*>(p);
        } else if (sizeof(L) == 4 && m == mpad && (t == kHalf || t == kBFloat16) && strides[in.arg] == 2) {
          wide[in.result] = p;
          wide_dtype[in.result] = t;
        } else {
          load_tile(d, p, strides[in.arg], iter.dtype(in.arg), buf[in.result], m, mpad);
          view[in.result] = buf[in.result];
        }
      };
      auto in_buffer = [&](int slot) {
        if (slot >= 0 && wide[slot]) {
          load_tile(d, static_cast<const char*>(wide[slot]), 2, wide_dtype[slot], buf[slot], m, mpad);
          view[slot] = buf[slot];
          wide[slot] = nullptr;
        }
      };
      for (size_t pc = 0; pc < prog.code.size(); ++pc) {
        const FusedInstr& in = prog.code[pc];
        if (in.kind == FusedInstr::Kind::Load) {
          load(in);
          continue;
        }
        if (in.kind == FusedInstr::Kind::Store) {
          in_buffer(in.operands[0].slot);
          store_tile(d, view[in.operands[0].slot], data[in.arg] + i0 * strides[in.arg], strides[in.arg],
                     iter.dtype(in.arg), m, large);
          continue;
        }
        const ScalarType rdt = in.result_dtype;
        const int arity = in.kind == FusedInstr::Kind::Unary || in.kind == FusedInstr::Kind::Cast ? 1
                          : in.kind == FusedInstr::Kind::Where || in.kind == FusedInstr::Kind::Clamp ? 3
                                                                                                      : 2;
        // plain16: a 16-bit result, which apply rounds, and whose operands may be inputs of its dtype
        // read in place. An operand to be rounded first is rounded into a scratch buffer.
        const bool plain16 = sizeof(L) == 4 && (rdt == kHalf || rdt == kBFloat16);
        const void* operand_wide[3] = {};
        Src<hn::ScalableTag<L>> src[3];
        bool buffers = true;  // every operand a buffer (apply's loop that streams and takes an epilogue)
        for (int k = 0; k < 3; ++k) {
          const FusedOperand& o = in.operands[k];
          src[k] = {nullptr, hn::Set(d, static_cast<L>(o.constant))};
          if (k >= arity) continue;
          buffers = buffers && o.slot >= 0;
          if (o.slot < 0) continue;
          if (wide[o.slot]) {
            if (plain16 && wide_dtype[o.slot] == rdt && o.round_to == ScalarType::Undefined) {
              operand_wide[k] = wide[o.slot];
              buffers = false;
              continue;
            }
            in_buffer(o.slot);
          }
          src[k].p = view[o.slot];
          if (o.round_to != ScalarType::Undefined) {
            round_tile(d, view[o.slot], scratch[k], o.round_to, mpad);
            src[k].p = scratch[k];
          }
        }
        const bool plain = buffers && !plain16;
        // The next op, past loads of inputs this one does not read, folded in as its epilogue when it
        // is an add, sub (alpha 1) or mul of this value and a buffer into this value's buffer (so this
        // value dies there: the plan gives an op the buffer of the operand made just before it). The
        // bench chain runs 4 loops instead of 8 (7 ops, the output's copy): x * a + b, sigmoid, tanh(x) * s,
        // relu(c) + t.
        Epilogue<hn::ScalableTag<L>> epi;
        if (sizeof(L) == 4 && (plain || plain16)) {
          size_t next = pc + 1;
          auto reads = [&](int slot) {
            for (int j = 0; j < arity; ++j)
              if (in.operands[j].slot == slot) return true;
            return false;
          };
          while (next < prog.code.size() && prog.code[next].kind == FusedInstr::Kind::Load &&
                 !reads(prog.code[next].result))
            ++next;
          const FusedInstr* c = next < prog.code.size() ? &prog.code[next] : nullptr;
          if (c && c->kind == FusedInstr::Kind::Binary && c->result == in.result && c->result_dtype == rdt &&
              c->operands[0].round_to == ScalarType::Undefined && c->operands[1].round_to == ScalarType::Undefined &&
              (c->operands[0].slot == in.result) != (c->operands[1].slot == in.result) &&
              c->operands[0].slot >= 0 && c->operands[1].slot >= 0 &&
              (c->binary == BinaryOp::Mul ||
               ((c->binary == BinaryOp::Add || c->binary == BinaryOp::Sub) && c->alpha.to<L>() == L(1)))) {
            const bool first = c->operands[0].slot == in.result;
            epi.op = c->binary == BinaryOp::Add   ? Epi::Add
                     : c->binary == BinaryOp::Mul ? Epi::Mul
                     : first                      ? Epi::Sub
                                                  : Epi::SubFrom;
            for (size_t j = pc + 1; j < next; ++j) load(prog.code[j]);
            in_buffer(c->operands[first ? 1 : 0].slot);
            epi.p = view[c->operands[first ? 1 : 0].slot];
            pc = next;
          }
        }
        L* out = buf[in.result];
        // A value stored right after it is made (the plan puts an output's Store there) goes straight
        // into a contiguous output of the compute type, skipping the buffer and the Store's copy
        // (bench chain: 5-7% of its time); later steps read it from there. A large output is
        // streamed, as store_tile streams it.
        bool stream = false;
        if (pc + 1 < prog.code.size() && prog.code[pc + 1].kind == FusedInstr::Kind::Store &&
            prog.code[pc + 1].operands[0].slot == in.result) {
          const int arg = prog.code[pc + 1].arg;
          L* const dst = reinterpret_cast<L*>(data[arg] + i0 * strides[arg]);
          stream = large && plain && reinterpret_cast<uintptr_t>(dst) % (N * sizeof(L)) == 0;
          if (m == mpad && iter.dtype(arg) == lane_dtype && strides[arg] == int64_t(sizeof(L)) && (!large || stream)) {
            out = dst;
            ++pc;
          } else {
            stream = false;
          }
        }
        // A 16-bit value likewise goes straight into its output when no later step reads it (rounded
        // by the store's conversion; one pass over the tile less).
        void* sink = nullptr;
        if (plain16 && pc + 1 < prog.code.size() && prog.code[pc + 1].kind == FusedInstr::Kind::Store &&
            prog.code[pc + 1].operands[0].slot == in.result) {
          const int arg = prog.code[pc + 1].arg;
          if (iter.dtype(arg) == rdt && strides[arg] == int64_t(element_size(rdt)) &&
              !read_later(prog, pc + 2, in.result)) {
            sink = data[arg] + i0 * strides[arg];
            ++pc;
          }
        }
        view[in.result] = out;
        wide[in.result] = nullptr;
        size_t part = mpad, part_m = m;  // the elements a unary step's loop covers (see Kind::Unary)
        const struct {
          L* out;
          const L *src, *epi;
        } whole = {out, src[0].p, epi.p};
        auto run1 = [&](const auto& f) {
          using F = std::decay_t<decltype(f)>;
          if constexpr (kNeverFused<F>) {
            EMBER_CHECK(false, "fused_pointwise_kernel", "no fused loop for unary op ", static_cast<int>(in.unary));
          } else {
            if constexpr (kStaged16<F>) ahead.before_costly();
            apply(d, f, out, stream, epi, src, operand_wide, part_m, part, rdt, sink, std::make_index_sequence<1>{});
          }
        };
        auto run2 = [&](const auto& f) {
          apply(d, f, out, stream, epi, src, operand_wide, m, mpad, rdt, sink, std::make_index_sequence<2>{});
        };
        auto run3 = [&](const auto& f) {
          apply(d, f, out, stream, epi, src, operand_wide, m, mpad, rdt, sink, std::make_index_sequence<3>{});
        };
        // The plan (src/fx/fused.cpp) only emits instructions these switches cover.
        switch (in.kind) {
          case FusedInstr::Kind::Unary:
            // A costly function's loop over a whole tile of buffers runs in kAheadParts parts, each
            // after a part of its requests for the next tile: all at once, they fill the core's miss
            // buffers and stall it (the bench chain spent 14% of its time there; in parts, 16M float32
            // on 1 thread 23.5 -> 19.8 ms, float64 55 -> 48.6). Another function's loop runs its first
            // part, then the rest. Here, not in the functors' loops: one loop per functor, 12 KB less.
            ahead.may_split = plain && mpad == size_t(kTile) && large;
            if (ahead.may_split) part = part_m = mpad / kAheadParts;
            for (size_t off = 0; off < mpad; off += part) {
              if (off > 0) {
                if (!ahead.split) part = part_m = mpad - off;
                out = whole.out + off;
                src[0].p = whole.src + off;
                if (epi.p) epi.p = whole.epi + off;
              }
              visit_unary<L>(in.unary, in.params, run1);
            }
            ahead.may_split = ahead.split = false;
            break;
          case FusedInstr::Kind::Binary:
            EMBER_CHECK((visit_binary<L, true>(in.binary, in.alpha, {}, run2)), "fused_pointwise_kernel",
                        "no fused loop for binary op ", static_cast<int>(in.binary));
            break;
          case FusedInstr::Kind::Compare:
            switch (in.predicate) {
              case PredicateOp::Eq: run2(CompareF<PredicateOp::Eq>{}); break;
              case PredicateOp::Ne: run2(CompareF<PredicateOp::Ne>{}); break;
              case PredicateOp::Lt: run2(CompareF<PredicateOp::Lt>{}); break;
              case PredicateOp::Le: run2(CompareF<PredicateOp::Le>{}); break;
              case PredicateOp::Gt: run2(CompareF<PredicateOp::Gt>{}); break;
              default: run2(CompareF<PredicateOp::Ge>{}); break;
            }
            break;
          case FusedInstr::Kind::Where: run3(WhereF{}); break;
          case FusedInstr::Kind::Clamp: run3(ClampTensorF{}); break;
          default: run1(CastF{rdt == kBool}); break;
        }
        ahead.reads_input = false;
      }
      ahead.finish();
    }
    if (large) hwy::FlushStream();  // the non-temporal stores are visible before the loop returns
  });
}

}  // namespace

void fused_pointwise_float(TensorIterator& iter, const FusedProgram& program) {
  if (program.double_lanes) {
    run_program<double>(iter, program);
  } else {
    run_program<float>(iter, program);
  }
}

}  // namespace ember::kernels::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace ember::kernels {
HWY_EXPORT(fused_pointwise_float);

void fused_pointwise_kernel(TensorIterator& iter, const FusedProgram& program) {
  EMBER_CHECK(program.num_slots <= kFusedMaxSlots, "fused_pointwise_kernel", "the program needs ", program.num_slots,
              " tile buffers, at most ", kFusedMaxSlots, " exist");
  HWY_DYNAMIC_DISPATCH(fused_pointwise_float)(iter, program);
}
}  // namespace ember::kernels
#endif
