#include "kernels/cpu/pool_kernels.h"

#include <cmath>
#include <limits>

#include "core/parallel.h"
#include "kernels/cpu/cast.h"

namespace ember::kernels {
namespace {

// f(plane) over all planes, in parallel when the work is large enough.
template <class F>
void for_planes(int64_t planes, int64_t work_per_plane, const F& f) {
  const int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(work_per_plane, 1));
  parallel_for(0, planes, grain, [&](int64_t b, int64_t e) {
    for (int64_t p = b; p < e; ++p) f(p);
  });
}

template <class T>
void max_typed(const Tensor& in, const Tensor& out, const Tensor& indices, const PoolAxis& h, const PoolAxis& w) {
  using C = compute_t<T>;
  const int64_t P = in.size(0), H = in.size(1), W = in.size(2);
  const int64_t oH = out.size(1), oW = out.size(2);
  const T* ip = static_cast<const T*>(in.data_ptr());
  T* op = static_cast<T*>(out.data_ptr());
  int64_t* xp = indices.defined() ? indices.data_ptr<int64_t>() : nullptr;
  for_planes(P, H * W + oH * oW, [&](int64_t p) {
    const T* src = ip + p * H * W;
    for (int64_t oh = 0; oh < oH; ++oh) {
      for (int64_t ow = 0; ow < oW; ++ow) {
        int64_t best_i = h.begin[oh] * W + w.begin[ow];
        C best = -std::numeric_limits<C>::infinity();
        for (int64_t ih = h.begin[oh]; ih < h.end[oh]; ih += h.step) {
          for (int64_t iw = w.begin[ow]; iw < w.end[ow]; iw += w.step) {
            const C v = static_cast<C>(src[ih * W + iw]);
            if (v > best || std::isnan(v)) {
              best = v;
              best_i = ih * W + iw;
            }
          }
        }
        const int64_t o = (p * oH + oh) * oW + ow;
        op[o] = static_cast<T>(best);
        if (xp) xp[o] = best_i;
      }
    }
  });
}

template <class T>
void avg_typed(const Tensor& in, const Tensor& out, const PoolAxis& h, const PoolAxis& w, bool count_extent,
               int64_t divisor_override) {
  using C = compute_t<T>;
  const int64_t P = in.size(0), H = in.size(1), W = in.size(2);
  const int64_t oH = out.size(1), oW = out.size(2);
  const T* ip = static_cast<const T*>(in.data_ptr());
  T* op = static_cast<T*>(out.data_ptr());
  for_planes(P, H * W + oH * oW, [&](int64_t p) {
    const T* src = ip + p * H * W;
    for (int64_t oh = 0; oh < oH; ++oh) {
      for (int64_t ow = 0; ow < oW; ++ow) {
        C sum = 0;
        for (int64_t ih = h.begin[oh]; ih < h.end[oh]; ih += h.step)
          for (int64_t iw = w.begin[ow]; iw < w.end[ow]; iw += w.step) sum += static_cast<C>(src[ih * W + iw]);
        const int64_t count = std::max<int64_t>(h.end[oh] - h.begin[oh], 0) * std::max<int64_t>(w.end[ow] - w.begin[ow], 0);
        const int64_t divisor =
            divisor_override ? divisor_override : count_extent ? h.extent[oh] * w.extent[ow] : count;
        op[(p * oH + oh) * oW + ow] = static_cast<T>(count == 0 ? C(0) : sum / static_cast<C>(divisor));
      }
    }
  });
}


}  // namespace

void max_pool_kernel(const Tensor& in, const Tensor& out, const Tensor& indices, const PoolAxis& h,
                     const PoolAxis& w) {
  visit_float(in.dtype(), "pool", [&](auto tag) { max_typed<decltype(tag)>(in, out, indices, h, w); });
}

void avg_pool_kernel(const Tensor& in, const Tensor& out, const PoolAxis& h, const PoolAxis& w, bool count_extent,
                     int64_t divisor_override) {
  visit_float(in.dtype(), "pool", [&](auto tag) { avg_typed<decltype(tag)>(in, out, h, w, count_extent, divisor_override); });
}

}  // namespace ember::kernels
