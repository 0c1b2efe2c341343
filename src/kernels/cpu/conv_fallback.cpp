#include "kernels/cpu/conv_fallback.h"

#include <algorithm>
#include <vector>

#include "core/parallel.h"

namespace ember::kernels {
namespace {

// Calls f(row, in_offset or -1, out_offset) for every (kernel tap, output position) pair:
// row = kernel tap index, in_offset = the input position it reads (-1 in the padding).
template <class F>
void for_each_tap(const ConvGeometry& g, F&& f) {
  int64_t row = 0;
  for (int64_t kd = 0; kd < g.kernel[0]; ++kd)
    for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
      for (int64_t kw = 0; kw < g.kernel[2]; ++kw, ++row) {
        int64_t o = 0;
        for (int64_t od = 0; od < g.out[0]; ++od) {
          const int64_t id = od * g.stride[0] - g.padding[0] + kd * g.dilation[0];
          const bool vd = id >= 0 && id < g.in[0];
          for (int64_t oh = 0; oh < g.out[1]; ++oh) {
            const int64_t ih = oh * g.stride[1] - g.padding[1] + kh * g.dilation[1];
            const bool vh = vd && ih >= 0 && ih < g.in[1];
            for (int64_t ow = 0; ow < g.out[2]; ++ow, ++o) {
              const int64_t iw = ow * g.stride[2] - g.padding[2] + kw * g.dilation[2];
              const bool v = vh && iw >= 0 && iw < g.in[2];
              f(row, v ? (id * g.in[1] + ih) * g.in[2] + iw : -1, o);
            }
          }
        }
      }
}

// c[m][n] (+)= sum_k a[m][k] * b[k][n], rows of b streamed so the inner loop vectorizes.
template <class T>
void gemm(const T* a, int64_t lda_m, int64_t lda_k, const T* b, T* c, int64_t M, int64_t K, int64_t N) {
  for (int64_t m = 0; m < M; ++m) {
    T* cr = c + m * N;
    for (int64_t k = 0; k < K; ++k) {
      const T av = a[m * lda_m + k * lda_k];
      const T* br = b + k * N;
      for (int64_t n = 0; n < N; ++n) cr[n] += av * br[n];
    }
  }
}

// The im2col matrix of one group of one image: rows (channel, tap), columns output positions.
template <class T>
void im2col(const ConvGeometry& g, const T* xin, int64_t channels, std::vector<T>& col) {
  const int64_t kvol = g.kernel[0] * g.kernel[1] * g.kernel[2];
  const int64_t ivol = g.in[0] * g.in[1] * g.in[2], ovol = g.out[0] * g.out[1] * g.out[2];
  col.assign(static_cast<size_t>(channels * kvol * ovol), T(0));
  for (int64_t c = 0; c < channels; ++c) {
    T* cc = col.data() + c * kvol * ovol;
    const T* xc = xin + c * ivol;
    for_each_tap(g, [&](int64_t row, int64_t i, int64_t o) { cc[row * ovol + o] = i < 0 ? T(0) : xc[i]; });
  }
}

template <class T>
void conv_typed(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out, const ConvGeometry& g,
                bool transposed) {
  const int64_t kvol = g.kernel[0] * g.kernel[1] * g.kernel[2];
  const int64_t ivol = g.in[0] * g.in[1] * g.in[2], ovol = g.out[0] * g.out[1] * g.out[2];
  const int64_t cin_g = g.in_channels / g.groups, cout_g = g.out_channels / g.groups;
  const T* xp = x.data_ptr<T>();
  const T* wp = weight.data_ptr<T>();
  const T* bp = bias.defined() ? bias.data_ptr<T>() : nullptr;
  T* op = out.data_ptr<T>();
  // The transposed convolution is the adjoint of the forward one: the same tap enumeration with
  // the roles of input and output positions swapped.
  ConvGeometry fwd = g;
  for (int d = 0; d < 3; ++d) std::swap(fwd.in[d], fwd.out[d]);
  const int64_t tasks = g.batch * g.groups;
  // one (image, group) per task: they write disjoint output channels
  const int64_t work = (transposed ? cout_g * kvol * ivol : cin_g * kvol * ovol) * std::max<int64_t>(cout_g, 1);
  parallel_for(0, tasks, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(work, 1)), [&](int64_t b, int64_t e) {
    std::vector<T> col;
    for (int64_t t = b; t < e; ++t) {
      const int64_t n = t / g.groups, grp = t % g.groups;
      const T* xin = xp + (n * g.in_channels + grp * cin_g) * ivol;
      T* yout = op + (n * g.out_channels + grp * cout_g) * ovol;
      if (!transposed) {
        im2col(g, xin, cin_g, col);
        for (int64_t o = 0; o < cout_g; ++o)
          for (int64_t l = 0; l < ovol; ++l) yout[o * ovol + l] = bp ? bp[grp * cout_g + o] : T(0);
        // weight rows of this group: (cout_g) x (cin_g * kvol), contiguous
        gemm(wp + grp * cout_g * cin_g * kvol, cin_g * kvol, int64_t{1}, col.data(), yout, cout_g, cin_g * kvol, ovol);
      } else {
        // col[(o, tap)][input position] = sum_c w[c][o][tap] * x[c][position], then scattered
        col.assign(static_cast<size_t>(cout_g * kvol * ivol), T(0));
        gemm(wp + grp * cin_g * cout_g * kvol, int64_t{1}, cout_g * kvol, xin, col.data(), cout_g * kvol, cin_g, ivol);
        for (int64_t o = 0; o < cout_g; ++o) {
          T* yo = yout + o * ovol;
          for (int64_t l = 0; l < ovol; ++l) yo[l] = bp ? bp[grp * cout_g + o] : T(0);
          const T* co = col.data() + o * kvol * ivol;
          for_each_tap(fwd, [&](int64_t row, int64_t i, int64_t l) {
            if (i >= 0) yo[i] += co[row * ivol + l];
          });
        }
      }
    }
  });
}

// grad_w[o][(c, tap)] = sum over images and positions of grad[o][l] * col[(c, tap)][l]; one task
// per group (disjoint weight rows), images summed in order so the result is deterministic.
template <class T>
void weight_grad_typed(const Tensor& x, const Tensor& grad, const Tensor& grad_weight, const ConvGeometry& g) {
  const int64_t kvol = g.kernel[0] * g.kernel[1] * g.kernel[2];
  const int64_t ivol = g.in[0] * g.in[1] * g.in[2], ovol = g.out[0] * g.out[1] * g.out[2];
  const int64_t cin_g = g.in_channels / g.groups, cout_g = g.out_channels / g.groups, row = cin_g * kvol;
  const T* xp = x.data_ptr<T>();
  const T* gp = grad.data_ptr<T>();
  T* wp = grad_weight.data_ptr<T>();
  const int64_t work = g.batch * cout_g * row * ovol;
  parallel_for(0, g.groups, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(work, 1)), [&](int64_t b, int64_t e) {
    std::vector<T> col;
    for (int64_t grp = b; grp < e; ++grp) {
      T* wg = wp + grp * cout_g * row;
      std::fill(wg, wg + cout_g * row, T(0));
      for (int64_t n = 0; n < g.batch; ++n) {
        im2col(g, xp + (n * g.in_channels + grp * cin_g) * ivol, cin_g, col);
        const T* go = gp + (n * g.out_channels + grp * cout_g) * ovol;
        for (int64_t o = 0; o < cout_g; ++o)
          for (int64_t r = 0; r < row; ++r) {
            const T* cr = col.data() + r * ovol;
            T acc = 0;
            for (int64_t l = 0; l < ovol; ++l) acc += go[o * ovol + l] * cr[l];
            wg[o * row + r] += acc;
          }
      }
    }
  });
}

}  // namespace

void conv_fallback_weight_grad(const Tensor& x, const Tensor& grad, const Tensor& grad_weight, const ConvGeometry& g) {
  if (x.dtype() == kDouble) {
    weight_grad_typed<double>(x, grad, grad_weight, g);
  } else {
    weight_grad_typed<float>(x, grad, grad_weight, g);
  }
}

void conv_fallback(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& out,
                   const ConvGeometry& g, bool transposed) {
  if (x.dtype() == kDouble) {
    conv_typed<double>(x, weight, bias, out, g, transposed);
  } else {
    conv_typed<float>(x, weight, bias, out, g, transposed);
  }
}

}  // namespace ember::kernels
