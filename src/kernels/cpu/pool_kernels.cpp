#include "kernels/cpu/pool_kernels.h"

#include <algorithm>
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

// What avg pooling divides output (oh, ow)'s window sum by; 0 for an empty window.
int64_t avg_divisor(const PoolAxis& h, const PoolAxis& w, int64_t oh, int64_t ow, bool count_extent,
                    int64_t divisor_override) {
  const int64_t count = std::max<int64_t>(h.end[oh] - h.begin[oh], 0) * std::max<int64_t>(w.end[ow] - w.begin[ow], 0);
  if (count == 0) return 0;
  return divisor_override ? divisor_override : count_extent ? h.extent[oh] * w.extent[ow] : count;
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
        const int64_t divisor = avg_divisor(h, w, oh, ow, count_extent, divisor_override);
        op[(p * oH + oh) * oW + ow] = static_cast<T>(divisor == 0 ? C(0) : sum / static_cast<C>(divisor));
      }
    }
  });
}

// The backward loops zero one plane of grad_in and accumulate into it in its own dtype, in output
// order, as PyTorch does (16-bit types round after every addition, as theirs do).
template <class T, class F>
void for_grad_planes(const Tensor& grad_in, int64_t work_per_plane, const F& accumulate) {
  const int64_t P = grad_in.size(0), HW = grad_in.size(1) * grad_in.size(2);
  T* gp = static_cast<T*>(grad_in.data_ptr());
  for_planes(P, HW + work_per_plane, [&](int64_t p) {
    T* dst = gp + p * HW;
    std::fill(dst, dst + HW, T(0));
    accumulate(p, dst);
  });
}

template <class T>
void max_backward_typed(const Tensor& grad_out, const Tensor& indices, const Tensor& grad_in) {
  using C = compute_t<T>;
  const int64_t O = grad_out.size(1) * grad_out.size(2);
  const T* go = static_cast<const T*>(grad_out.data_ptr());
  const int64_t* ip = indices.data_ptr<int64_t>();
  for_grad_planes<T>(grad_in, O, [&](int64_t p, T* dst) {
    const T* g = go + p * O;
    const int64_t* idx = ip + p * O;
    for (int64_t o = 0; o < O; ++o) dst[idx[o]] = static_cast<T>(static_cast<C>(dst[idx[o]]) + static_cast<C>(g[o]));
  });
}

template <class T>
void avg_backward_typed(const Tensor& grad_out, const Tensor& grad_in, const PoolAxis& h, const PoolAxis& w,
                        bool count_extent, int64_t divisor_override) {
  using C = compute_t<T>;
  const int64_t oH = grad_out.size(1), oW = grad_out.size(2), W = grad_in.size(2);
  const T* go = static_cast<const T*>(grad_out.data_ptr());
  for_grad_planes<T>(grad_in, oH * oW, [&](int64_t p, T* dst) {
    const T* g = go + p * oH * oW;
    for (int64_t oh = 0; oh < oH; ++oh) {
      for (int64_t ow = 0; ow < oW; ++ow) {
        const int64_t divisor = avg_divisor(h, w, oh, ow, count_extent, divisor_override);
        if (divisor == 0) continue;
        const C v = static_cast<C>(static_cast<T>(static_cast<C>(g[oh * oW + ow]) / static_cast<C>(divisor)));
        for (int64_t ih = h.begin[oh]; ih < h.end[oh]; ih += h.step)
          for (int64_t iw = w.begin[ow]; iw < w.end[ow]; iw += w.step)
            dst[ih * W + iw] = static_cast<T>(static_cast<C>(dst[ih * W + iw]) + v);
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

void max_pool_backward_kernel(const Tensor& grad_out, const Tensor& indices, const Tensor& grad_in) {
  visit_float(grad_in.dtype(), "pool", [&](auto tag) { max_backward_typed<decltype(tag)>(grad_out, indices, grad_in); });
}

void avg_pool_backward_kernel(const Tensor& grad_out, const Tensor& grad_in, const PoolAxis& h, const PoolAxis& w,
                              bool count_extent, int64_t divisor_override) {
  visit_float(grad_in.dtype(), "pool", [&](auto tag) {
    avg_backward_typed<decltype(tag)>(grad_out, grad_in, h, w, count_extent, divisor_override);
  });
}

}  // namespace ember::kernels
