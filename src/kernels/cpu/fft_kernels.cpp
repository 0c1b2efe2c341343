// The FFT engine (see fft.h). A Stockham transform keeps the data in natural order between
// stages (no bit reversal): stage s with radix p reads p elements m apart and writes them p-apart
// interleaved, alternating between the row and a scratch buffer. Twiddles are computed in double
// and stored in the transform's precision.
#include "kernels/cpu/fft.h"

#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "core/parallel.h"

namespace ember::kernels {
namespace {

constexpr double kPi = 3.14159265358979323846;
// Factors above this run Bluestein's algorithm (a generic radix-p butterfly costs p^2).
constexpr int64_t kMaxDirectFactor = 13;

template <class T>
using C = complex<T>;

// exp(sign * 2 pi i num / den), accurate for large num (reduced in integers first).
inline C<double> root(int64_t num, int64_t den, int sign) {
  const int64_t r = num % den;
  const double a = 2 * kPi * static_cast<double>(r) / static_cast<double>(den);
  return {std::cos(a), sign * std::sin(a)};
}

template <class T>
struct Plan {
  int64_t n = 0;
  int sign = -1;  // -1 forward, +1 inverse
  // Stockham stages: radix p, sub-length m (= len / p), stride s, twiddles w^(j r) for j < m, 1 <= r < p
  struct Stage {
    int64_t p, m, s;
    std::vector<C<T>> tw;
  };
  std::vector<Stage> stages;
  // Bluestein: chirp c[k] = exp(sign pi i k^2 / n), the transform of the filter, the inner plans.
  bool bluestein = false;
  int64_t big = 0;
  std::vector<C<T>> chirp, filter_hat;
  std::shared_ptr<const Plan<T>> inner_fwd, inner_inv;

  void execute(C<T>* x, C<T>* work) const;  // work: n elements (Bluestein: 2 * big)
  int64_t scratch() const { return bluestein ? 2 * big + n : n; }
};

template <class T>
std::shared_ptr<const Plan<T>> get_plan(int64_t n, int sign);

std::vector<int64_t> factorize(int64_t n) {
  std::vector<int64_t> f;
  while (n % 4 == 0) {
    f.push_back(4);
    n /= 4;
  }
  if (n % 2 == 0) {
    f.push_back(2);
    n /= 2;
  }
  for (int64_t p = 3; p * p <= n; p += 2) {
    while (n % p == 0) {
      f.push_back(p);
      n /= p;
    }
  }
  if (n > 1) f.push_back(n);
  return f;
}

// The smallest length >= n whose factors are 2 and 3 (Bluestein's inner transform: the radices
// with butterflies of their own).
int64_t good_size(int64_t n) {
  int64_t best = 1;
  while (best < n) best *= 2;
  for (int64_t f3 = 1; f3 < best; f3 *= 3) {
    int64_t v = f3;
    while (v < n) v *= 2;
    best = std::min(best, v);
  }
  return best;
}

template <class T>
std::shared_ptr<const Plan<T>> make_plan(int64_t n, int sign) {
  auto plan = std::make_shared<Plan<T>>();
  plan->n = n;
  plan->sign = sign;
  const std::vector<int64_t> f = factorize(n);
  int64_t largest = 1;
  for (int64_t p : f) largest = std::max(largest, p);
  if (largest > kMaxDirectFactor) {
    plan->bluestein = true;
    const int64_t big = good_size(2 * n - 1);
    plan->big = big;
    plan->inner_fwd = get_plan<T>(big, -1);
    plan->inner_inv = get_plan<T>(big, +1);
    plan->chirp.resize(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) {  // exp(sign pi i k^2 / n) = root(k^2 mod 2n, 2n)
      const int64_t k2 = static_cast<int64_t>((static_cast<unsigned __int128>(k) * k) % (2 * n));
      const C<double> w = root(k2, 2 * n, sign);
      plan->chirp[static_cast<size_t>(k)] = C<T>(static_cast<T>(w.real()), static_cast<T>(w.imag()));
    }
    // filter b[k] = conj(chirp[|k|]) on the circle of length big, scaled by 1 / big for the inverse
    std::vector<C<T>> b(static_cast<size_t>(big), C<T>(0));
    const T scale = T(1) / static_cast<T>(big);
    for (int64_t k = 0; k < n; ++k) {
      const C<T> v = conj(plan->chirp[static_cast<size_t>(k)]) * C<T>(scale);
      b[static_cast<size_t>(k)] = v;
      if (k > 0) b[static_cast<size_t>(big - k)] = v;
    }
    std::vector<C<T>> work(static_cast<size_t>(plan->inner_fwd->scratch()));
    plan->inner_fwd->execute(b.data(), work.data());
    plan->filter_hat = std::move(b);
    return plan;
  }
  int64_t len = n, s = 1;
  for (int64_t p : f) {
    typename Plan<T>::Stage st;
    st.p = p;
    st.m = len / p;
    st.s = s;
    st.tw.resize(static_cast<size_t>(st.m * (p - 1)));
    for (int64_t j = 0; j < st.m; ++j) {
      for (int64_t r = 1; r < p; ++r) {
        const C<double> w = root(j * r, len, sign);
        st.tw[static_cast<size_t>(j * (p - 1) + r - 1)] = C<T>(static_cast<T>(w.real()), static_cast<T>(w.imag()));
      }
    }
    plan->stages.push_back(std::move(st));
    len /= p;
    s *= p;
  }
  return plan;
}

template <class T>
std::shared_ptr<const Plan<T>> get_plan(int64_t n, int sign) {
  static std::mutex mu;
  static std::map<std::pair<int64_t, int>, std::shared_ptr<const Plan<T>>> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find({n, sign});
    if (it != cache.end()) return it->second;
  }
  auto plan = make_plan<T>(n, sign);  // outside the lock: Bluestein plans ask for inner plans
  std::lock_guard<std::mutex> lock(mu);
  return cache.emplace(std::make_pair(n, sign), plan).first->second;
}

// Multiplication by sign * i (the radix-4 butterfly's rotation).
template <class T>
inline C<T> rot(const C<T>& z, int sign) {
  return sign < 0 ? C<T>(z.imag(), -z.real()) : C<T>(-z.imag(), z.real());
}

// One Stockham stage from x into y.
template <class T>
void stage(const typename Plan<T>::Stage& st, int sign, const C<T>* x, C<T>* y) {
  const int64_t p = st.p, m = st.m, s = st.s;
  const C<T>* tw = st.tw.data();
  switch (p) {
    case 2:
      for (int64_t j = 0; j < m; ++j) {
        const C<T> w1 = tw[j];
        for (int64_t k = 0; k < s; ++k) {
          const C<T> a = x[k + s * j], b = x[k + s * (j + m)];
          y[k + s * (2 * j)] = a + b;
          y[k + s * (2 * j + 1)] = (a - b) * w1;
        }
      }
      return;
    case 3: {
      const T c1 = T(-0.5), s1 = static_cast<T>(sign * 0.86602540378443864676);
      for (int64_t j = 0; j < m; ++j) {
        const C<T> w1 = tw[2 * j], w2 = tw[2 * j + 1];
        for (int64_t k = 0; k < s; ++k) {
          const C<T> a = x[k + s * j], b = x[k + s * (j + m)], c = x[k + s * (j + 2 * m)];
          const C<T> t = b + c, u = C<T>(a.real() + c1 * t.real(), a.imag() + c1 * t.imag());
          const C<T> d = b - c, v = C<T>(-s1 * d.imag(), s1 * d.real());
          y[k + s * (3 * j)] = a + t;
          y[k + s * (3 * j + 1)] = (u + v) * w1;
          y[k + s * (3 * j + 2)] = (u - v) * w2;
        }
      }
      return;
    }
    case 4:
      for (int64_t j = 0; j < m; ++j) {
        const C<T> w1 = tw[3 * j], w2 = tw[3 * j + 1], w3 = tw[3 * j + 2];
        for (int64_t k = 0; k < s; ++k) {
          const C<T> a = x[k + s * j], b = x[k + s * (j + m)], c = x[k + s * (j + 2 * m)], d = x[k + s * (j + 3 * m)];
          const C<T> apc = a + c, amc = a - c, bpd = b + d, bmd = rot(b - d, sign);
          y[k + s * (4 * j)] = apc + bpd;
          y[k + s * (4 * j + 1)] = (amc + bmd) * w1;
          y[k + s * (4 * j + 2)] = (apc - bpd) * w2;
          y[k + s * (4 * j + 3)] = (amc - bmd) * w3;
        }
      }
      return;
    default: {  // generic radix p: a p-point DFT per butterfly
      std::vector<C<T>> roots(static_cast<size_t>(p));
      for (int64_t q = 0; q < p; ++q) {
        const C<double> w = root(q, p, sign);
        roots[static_cast<size_t>(q)] = C<T>(static_cast<T>(w.real()), static_cast<T>(w.imag()));
      }
      std::vector<C<T>> a(static_cast<size_t>(p));
      for (int64_t j = 0; j < m; ++j) {
        for (int64_t k = 0; k < s; ++k) {
          for (int64_t q = 0; q < p; ++q) a[static_cast<size_t>(q)] = x[k + s * (j + q * m)];
          for (int64_t r = 0; r < p; ++r) {
            C<T> acc = a[0];
            for (int64_t q = 1; q < p; ++q) acc += a[static_cast<size_t>(q)] * roots[static_cast<size_t>((q * r) % p)];
            y[k + s * (p * j + r)] = r == 0 ? acc : acc * tw[j * (p - 1) + r - 1];
          }
        }
      }
    }
  }
}

template <class T>
void Plan<T>::execute(C<T>* x, C<T>* work) const {
  if (bluestein) {
    C<T>* a = work;
    C<T>* inner_work = work + big;
    for (int64_t k = 0; k < n; ++k) a[k] = x[k] * chirp[static_cast<size_t>(k)];
    for (int64_t k = n; k < big; ++k) a[k] = C<T>(0);
    inner_fwd->execute(a, inner_work);
    for (int64_t k = 0; k < big; ++k) a[k] *= filter_hat[static_cast<size_t>(k)];
    inner_inv->execute(a, inner_work);
    for (int64_t k = 0; k < n; ++k) x[k] = a[k] * chirp[static_cast<size_t>(k)];
    return;
  }
  C<T>* src = x;
  C<T>* dst = work;
  for (const Stage& st : stages) {
    stage<T>(st, sign, src, dst);
    std::swap(src, dst);
  }
  if (src != x)
    for (int64_t i = 0; i < n; ++i) x[i] = src[i];
}

template <class T>
void rows_typed(const Tensor& data, int64_t n, bool forward) {
  if (n <= 1 || data.numel() == 0) return;
  const auto plan = get_plan<T>(n, forward ? -1 : 1);
  C<T>* base = static_cast<C<T>*>(data.data_ptr());
  const int64_t rows = data.numel() / n;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / (4 * n));
  parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
    std::vector<C<T>> work(static_cast<size_t>(plan->scratch()));
    for (int64_t r = b; r < e; ++r) plan->execute(base + r * n, work.data());
  });
}

// exp(-2 pi i k / n) for k <= n / 2, cached per n: the untangling step of the real transform.
template <class T>
std::shared_ptr<const std::vector<C<T>>> r2c_twiddles(int64_t n) {
  static std::mutex mu;
  static std::map<int64_t, std::shared_ptr<const std::vector<C<T>>>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[n];
  if (!slot) {
    auto tw = std::make_shared<std::vector<C<T>>>(static_cast<size_t>(n / 2 + 1));
    for (int64_t k = 0; k <= n / 2; ++k) {
      const C<double> w = root(k, n, -1);
      (*tw)[static_cast<size_t>(k)] = C<T>(static_cast<T>(w.real()), static_cast<T>(w.imag()));
    }
    slot = std::move(tw);
  }
  return slot;
}

template <class T>
void r2c_typed(const Tensor& out, const Tensor& in, int64_t n) {
  const int64_t rows = n == 0 ? 0 : in.numel() / n, h = n / 2;
  if (rows == 0) return;
  const T* x = static_cast<const T*>(in.data_ptr());
  C<T>* y = static_cast<C<T>*>(out.data_ptr());
  const int64_t grain = std::max<int64_t>(1, kGrainSize / (4 * n));
  if (n % 2 == 1) {  // odd: the complex transform of the row
    const auto plan = get_plan<T>(n, -1);
    parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
      std::vector<C<T>> row(static_cast<size_t>(n)), work(static_cast<size_t>(plan->scratch()));
      for (int64_t r = b; r < e; ++r) {
        for (int64_t j = 0; j < n; ++j) row[static_cast<size_t>(j)] = C<T>(x[r * n + j], T(0));
        plan->execute(row.data(), work.data());
        for (int64_t k = 0; k <= h; ++k) y[r * (h + 1) + k] = row[static_cast<size_t>(k)];
      }
    });
    return;
  }
  const auto plan = get_plan<T>(h, -1);
  const auto tw = r2c_twiddles<T>(n);
  const C<T>* w = tw->data();
  parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
    std::vector<C<T>> work(static_cast<size_t>(plan->scratch()));
    for (int64_t r = b; r < e; ++r) {
      C<T>* z = y + r * (h + 1);
      std::memcpy(static_cast<void*>(z), x + r * n, static_cast<size_t>(n) * sizeof(T));  // z[j] = x[2j] + i x[2j+1]
      plan->execute(z, work.data());
      // X[k] = E + w^k O with E = (Z[k] + conj Z[h-k]) / 2, O = -i (Z[k] - conj Z[h-k]) / 2
      const C<T> z0 = z[0];
      z[0] = C<T>(z0.real() + z0.imag(), T(0));
      z[h] = C<T>(z0.real() - z0.imag(), T(0));
      for (int64_t k = 1; 2 * k <= h; ++k) {
        const int64_t m = h - k;
        const C<T> a = z[k], bb = z[m];
        const auto half_sum = [](C<T> p, C<T> q) {  // (p + conj q) / 2 and -i (p - conj q) / 2
          const C<T> ev((p.real() + q.real()) * T(0.5), (p.imag() - q.imag()) * T(0.5));
          const C<T> od((p.imag() + q.imag()) * T(0.5), -(p.real() - q.real()) * T(0.5));
          return std::pair<C<T>, C<T>>(ev, od);
        };
        const auto [ek, ok] = half_sum(a, bb);
        z[k] = ek + w[k] * ok;
        if (m != k) {
          const auto [em, om] = half_sum(bb, a);
          z[m] = em + w[m] * om;
        }
      }
    }
  });
}

}  // namespace

void fft_r2c_rows(const Tensor& out, const Tensor& in, int64_t n) {
  if (in.dtype() == kDouble) return r2c_typed<double>(out, in, n);
  r2c_typed<float>(out, in, n);
}

void fft_c2c_rows(const Tensor& data, int64_t n, bool forward) {
  if (data.dtype() == kComplexDouble) return rows_typed<double>(data, n, forward);
  rows_typed<float>(data, n, forward);
}

}  // namespace ember::kernels
