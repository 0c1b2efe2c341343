// The fused pointwise loop (fused_pointwise.h), compiled for each SIMD target Highway selects at
// run time. Per tile of an inner-loop call: loads convert inputs into compute-type buffers (zero
// padded to whole vectors, so every op runs full vectors; a contiguous input already in the compute
// type is read in place), each op runs the eager kernel's functor over the buffers, stores convert
// back into the outputs' dtypes. Large chains stream their outputs (and, on CPUs where it pays,
// prefetch a later tile).
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

// Float32 lanes rounded to a 16-bit float dtype (round to nearest even), as a store and reload
// in that dtype would give; float64 lanes never hold 16-bit values (such chains are not fused).
template <class D, class V>
HWY_INLINE V round_to(D d, V v, ScalarType t) {
  if constexpr (sizeof(hn::TFromD<D>) == 4) {
    if (t == kBFloat16) {
      const hn::RebindToUnsigned<D> du;
      const auto u = hn::BitCast(du, v);
      const auto lsb = hn::And(hn::ShiftRight<16>(u), hn::Set(du, 1u));
      auto r = hn::Add(u, hn::Add(hn::Set(du, 0x7fffu), lsb));
      r = hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), hn::Or(u, hn::Set(du, 0x400000u)), r);
      return hn::BitCast(d, hn::And(r, hn::Set(du, 0xffff0000u)));
    }
    if (t == kHalf) {
      if constexpr (kNativeF16) {
        const hn::Rebind<hwy::float16_t, D> dh;
        return hn::PromoteTo(d, hn::DemoteTo(dh, v));
      } else {
        return HalfBitsToFloat(d, FloatToHalfBits(d, v));
      }
    }
  }
  return v;
}

// An operand as the op loop reads it: a tile buffer or a broadcast constant, maybe rounded.
template <class D>
struct Src {
  const hn::TFromD<D>* p;
  hn::Vec<D> c;
  ScalarType round;
};
template <class D>
HWY_INLINE hn::Vec<D> fetch(D d, const Src<D>& s, size_t i) {
  const hn::Vec<D> v = s.p ? hn::LoadU(d, s.p + i) : s.c;
  return s.round == ScalarType::Undefined ? v : round_to(d, v, s.round);
}

// The result's dtype: 16-bit floats are rounded to it.
template <class D, class V>
HWY_INLINE V finish(D d, V v, ScalarType t) {
  return (t == kHalf || t == kBFloat16) ? round_to(d, v, t) : v;
}

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

// out[0, mpad) = f(operands), mpad a multiple of the vector length. `out` may be an operand's
// buffer (each element is read before it is written). `stream` and `epi` only where every operand
// is a buffer and nothing is rounded (the one loop that has them: the others would double).
template <class D, class F, size_t... I>
HWY_INLINE void apply(D d, const F& f, hn::TFromD<D>* out, bool stream, const Epilogue<D>& epi, const Src<D>* s,
                      size_t mpad, ScalarType rdt, std::index_sequence<I...>) {
  using L = hn::TFromD<D>;
  using V = hn::Vec<D>;
  const size_t N = hn::Lanes(d);
  const L* const p[] = {s[I].p...};
  const V c[] = {s[I].c...};
  auto compute = [&](auto get, size_t i) {
    if constexpr (std::is_base_of_v<ScalarOnly, F>) {
      HWY_ALIGN L in[sizeof...(I)][hn::MaxLanes(d)];
      (hn::Store(get(I, i), d, in[I]), ...);
      HWY_ALIGN L o[hn::MaxLanes(d)];
      for (size_t j = 0; j < N; ++j) o[j] = f.scalar(in[I][j]...);
      return hn::Load(d, o);
    } else {
      return f.vec(d, get(I, i)...);
    }
  };
  // The common cases, kept free of per-vector tests: no rounding, operands all from buffers (or
  // inputs), or some constants.
  if (((s[I].round == ScalarType::Undefined) && ...) && rdt != kHalf && rdt != kBFloat16) {
    if ((p[I] && ...)) {
      auto get = [&](size_t k, size_t i) { return hn::LoadU(d, p[k] + i); };
      for (size_t i = 0; i < mpad; i += N) {
        V v = compute(get, i);
        if constexpr (sizeof(L) == 4) {  // float64 chains keep a loop per op: 20 KB less code
          v = epilogue(d, epi, v, i);
        }
        put(d, v, out + i, stream);
      }
    } else {
      auto get = [&](size_t k, size_t i) { return p[k] ? hn::LoadU(d, p[k] + i) : c[k]; };
      for (size_t i = 0; i < mpad; i += N) hn::StoreU(compute(get, i), d, out + i);
    }
    return;
  }
  auto get = [&](size_t k, size_t i) { return fetch(d, s[k], i); };
  for (size_t i = 0; i < mpad; i += N) hn::StoreU(finish(d, compute(get, i), rdt), d, out + i);
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
  const size_t N = hn::Lanes(d);
  visit_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<lane_t<T>, L>) {
      if (s == static_cast<int64_t>(sizeof(T))) {
        const T* in = reinterpret_cast<const T*>(p);
        size_t i = 0;
        for (; i + N <= m; i += N) hn::Store(LoadC(d, in + i), d, buf + i);
        if (i < m) hn::Store(LoadCN(d, in + i, m - i), d, buf + i);
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
  const size_t N = hn::Lanes(d);
  visit_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<lane_t<T>, L>) {
      if (s == static_cast<int64_t>(sizeof(T))) {
        T* out = reinterpret_cast<T*>(p);
        size_t i = 0;
        if constexpr (std::is_same_v<T, L>) {
          if (stream && reinterpret_cast<uintptr_t>(out) % (N * sizeof(T)) == 0) {
            for (; i + N <= m; i += N) hn::Stream(hn::Load(d, buf + i), d, out + i);
          }
        }
        for (; i + N <= m; i += N) StoreC(d, hn::Load(d, buf + i), out + i);
        if (i < m) StoreCN(d, hn::Load(d, buf + i), out + i, m - i);
        return;
      }
    }
    for (size_t i = 0; i < m; ++i) {
      const T v = cast<T>(buf[i]);
      std::memcpy(p + static_cast<int64_t>(i) * s, &v, sizeof(T));
    }
  });
}

// A request for the line at p into L2 (hwy::Prefetch asks for L1).
HWY_INLINE void prefetch_l2(const char* p) {
#if HWY_ARCH_X86
  _mm_prefetch(p, _MM_HINT_T1);
#else
  hwy::Prefetch(p);
#endif
}

// The functors of unary ops src/fx/fused.cpp's table does not list, so no plan emits them: their
// loops are not compiled into this file (digamma's and the float64-computed ones are large).
template <class F>
constexpr bool kNeverFused = std::is_same_v<F, AsinF> || std::is_same_v<F, AcosF> || std::is_same_v<F, AtanF> ||
                             std::is_same_v<F, SinhF> || std::is_same_v<F, CoshF> || std::is_same_v<F, AsinhF> ||
                             std::is_same_v<F, AcoshF> || std::is_same_v<F, AtanhF> || std::is_same_v<F, DigammaF> ||
                             std::is_same_v<F, TrigammaF> || std::is_same_v<F, LogSigmoidF> ||
                             std::is_same_v<F, FracF> || std::is_same_v<F, NanToNumF>;

template <class L>
void run_program(TensorIterator& iter, const FusedProgram& prog) {
  const bool large = iter.numel() >= kFusedLargeElements;
  const bool prefetch = large && g_prefetch_streams;
  iter.for_each([&prog, &iter, large, prefetch](char** data, const int64_t* strides, int64_t n) {
    const hn::ScalableTag<L> d;
    const size_t N = hn::Lanes(d);
    constexpr int64_t kTile = kFusedTile * 4 / static_cast<int64_t>(sizeof(L));  // 2 KiB per buffer
    // Buffers one cache line apart beyond their 2 KiB: at a multiple of 4 KiB from each other, a
    // load from one would wait on a store to another (4K aliasing).
    constexpr int64_t kStride = kTile + 64 / static_cast<int64_t>(sizeof(L));
    HWY_ALIGN L buf[kFusedMaxSlots][kStride];
    // Where each buffer's values are read from in this tile: the buffer, or (a whole number of
    // vectors of a contiguous input already in the compute type) the input itself, uncopied.
    const L* view[kFusedMaxSlots];
    const ScalarType lane_dtype = sizeof(L) == 4 ? kFloat : kDouble;
    // Inputs too large for the caches stream through shorter tiles, each asking for the tile two
    // ahead (16M-element chain, Zen 4: 32 -> 27 ms on 1 thread, 16.5 -> 14 ms on 2, against
    // whole tiles one ahead); cached inputs keep whole tiles (8% faster at 256K elements).
    const int64_t tile = large ? kTile * 3 / 4 : kTile;
    constexpr int64_t kAhead = 2;
    for (int64_t i0 = 0; i0 < n; i0 += tile) {
      const size_t m = static_cast<size_t>(std::min(tile, n - i0));
      const size_t mpad = (m + N - 1) / N * N;
      // Ask for a later tile of each contiguous input now, so memory streams in while this tile
      // computes (inputs too large for the caches only: on cached data the requests cost more than
      // they save). Into L2, not L1: the lines requested at once fill L1's miss buffers and stall
      // the tile's own loads (16M-element chain, 1 thread, Zen 4: 45-48 ms with L1 requests, 36-38
      // ms with none, 32-34 ms into L2).
      if (prefetch && i0 + kAhead * tile < n) {
        for (const FusedInstr& in : prog.code) {
          if (in.kind != FusedInstr::Kind::Load || strides[in.arg] != int64_t(element_size(iter.dtype(in.arg)))) continue;
          const char* next = data[in.arg] + (i0 + kAhead * tile) * strides[in.arg];
          const int64_t bytes = std::min(tile, n - i0 - kAhead * tile) * strides[in.arg];
          for (int64_t b = 0; b < bytes; b += 64) prefetch_l2(next + b);
        }
      }
      auto load = [&](const FusedInstr& in) {
        const char* p = data[in.arg] + i0 * strides[in.arg];
        if (m == mpad && iter.dtype(in.arg) == lane_dtype && strides[in.arg] == int64_t(sizeof(L))) {
          view[in.result] = reinterpret_cast<const L*>(p);
        } else {
          load_tile(d, p, strides[in.arg], iter.dtype(in.arg), buf[in.result], m, mpad);
          view[in.result] = buf[in.result];
        }
      };
      for (size_t pc = 0; pc < prog.code.size(); ++pc) {
        const FusedInstr& in = prog.code[pc];
        if (in.kind == FusedInstr::Kind::Load) {
          load(in);
          continue;
        }
        if (in.kind == FusedInstr::Kind::Store) {
          store_tile(d, view[in.operands[0].slot], data[in.arg] + i0 * strides[in.arg], strides[in.arg],
                     iter.dtype(in.arg), m, large);
          continue;
        }
        Src<hn::ScalableTag<L>> src[3];
        for (int k = 0; k < 3; ++k) {
          const FusedOperand& o = in.operands[k];
          src[k] = {o.slot >= 0 ? view[o.slot] : nullptr, hn::Set(d, static_cast<L>(o.constant)), o.round_to};
        }
        const ScalarType rdt = in.result_dtype;
        const int arity = in.kind == FusedInstr::Kind::Unary || in.kind == FusedInstr::Kind::Cast ? 1
                          : in.kind == FusedInstr::Kind::Where || in.kind == FusedInstr::Kind::Clamp ? 3
                                                                                                      : 2;
        // apply's loop over buffers with nothing rounded, the one that streams and takes an epilogue
        bool plain = rdt != kHalf && rdt != kBFloat16;
        for (int j = 0; j < arity; ++j) plain = plain && src[j].p && src[j].round == ScalarType::Undefined;
        // The next op, past loads of inputs this one does not read, folded in as its epilogue when it
        // is an add, sub (alpha 1) or mul of this value and a buffer into this value's buffer (so this
        // value dies there: the plan gives an op the buffer of the operand made just before it). The
        // bench chain runs 4 loops instead of 8 (7 ops, the output's copy): x * a + b, sigmoid, tanh(x) * s,
        // relu(c) + t.
        Epilogue<hn::ScalableTag<L>> epi;
        if (sizeof(L) == 4 && plain) {
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
        view[in.result] = out;
        auto run1 = [&](const auto& f) {
          if constexpr (kNeverFused<std::decay_t<decltype(f)>>) {
            EMBER_CHECK(false, "fused_pointwise_kernel", "no fused loop for unary op ", static_cast<int>(in.unary));
          } else {
            apply(d, f, out, stream, epi, src, mpad, rdt, std::make_index_sequence<1>{});
          }
        };
        auto run2 = [&](const auto& f) { apply(d, f, out, stream, epi, src, mpad, rdt, std::make_index_sequence<2>{}); };
        auto run3 = [&](const auto& f) { apply(d, f, out, stream, epi, src, mpad, rdt, std::make_index_sequence<3>{}); };
        // The plan (src/fx/fused.cpp) only emits instructions these switches cover.
        switch (in.kind) {
          case FusedInstr::Kind::Unary: visit_unary<L>(in.unary, in.params, run1); break;
          case FusedInstr::Kind::Binary: visit_binary<L>(in.binary, in.alpha, {}, run2); break;
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
      }
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
