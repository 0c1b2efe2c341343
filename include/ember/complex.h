// ember::complex<T>: the element type of the complex dtypes (c10::complex<T> in libtorch).
// Laid out as std::complex<T> (real then imaginary, aligned to its size) and convertible to and
// from it. Arithmetic is the textbook formula for * and a scaled one for /, as c10's (not C's
// Annex G NaN recovery, which std::complex applies and which costs a call per product).
#pragma once
#include <cmath>
#include <complex>
#include <ostream>

namespace ember {

template <class T>
struct alignas(2 * sizeof(T)) complex {
  using value_type = T;
  T real_ = T(0);
  T imag_ = T(0);

  constexpr complex() = default;
  constexpr complex(T re, T im = T(0)) : real_(re), imag_(im) {}  // NOLINT: implicit as c10::complex
  template <class U>
  explicit constexpr complex(const complex<U>& o) : real_(static_cast<T>(o.real())), imag_(static_cast<T>(o.imag())) {}
  constexpr complex(const std::complex<T>& z) : real_(z.real()), imag_(z.imag()) {}  // NOLINT
  explicit constexpr operator std::complex<T>() const { return {real_, imag_}; }

  constexpr T real() const { return real_; }
  constexpr T imag() const { return imag_; }
  constexpr void real(T v) { real_ = v; }
  constexpr void imag(T v) { imag_ = v; }

  constexpr complex& operator+=(const complex& o) {
    real_ += o.real_;
    imag_ += o.imag_;
    return *this;
  }
  constexpr complex& operator-=(const complex& o) {
    real_ -= o.real_;
    imag_ -= o.imag_;
    return *this;
  }
  constexpr complex& operator*=(const complex& o) {
    const T a = real_, b = imag_;
    real_ = a * o.real_ - b * o.imag_;
    imag_ = a * o.imag_ + b * o.real_;
    return *this;
  }
  // Smith's scaling: no overflow for large divisors, 0/0 and x/0 give NaN and inf parts.
  complex& operator/=(const complex& o) {
    const T a = real_, b = imag_, c = o.real_, d = o.imag_;
    const T ac = std::abs(c), ad = std::abs(d);
    if (ac >= ad) {
      if (ac == 0 && ad == 0) {
        real_ = a / ac;
        imag_ = b / ad;
      } else {
        const T rat = d / c, scl = T(1) / (c + d * rat);
        real_ = (a + b * rat) * scl;
        imag_ = (b - a * rat) * scl;
      }
    } else {
      const T rat = c / d, scl = T(1) / (d + c * rat);
      real_ = (a * rat + b) * scl;
      imag_ = (b * rat - a) * scl;
    }
    return *this;
  }
};

template <class T>
constexpr complex<T> operator+(complex<T> a, const complex<T>& b) { return a += b; }
template <class T>
constexpr complex<T> operator-(complex<T> a, const complex<T>& b) { return a -= b; }
template <class T>
constexpr complex<T> operator*(complex<T> a, const complex<T>& b) { return a *= b; }
template <class T>
complex<T> operator/(complex<T> a, const complex<T>& b) { return a /= b; }
template <class T>
constexpr complex<T> operator-(const complex<T>& a) { return {-a.real(), -a.imag()}; }
template <class T>
constexpr complex<T> operator+(const complex<T>& a) { return a; }
template <class T>
constexpr bool operator==(const complex<T>& a, const complex<T>& b) {
  return a.real() == b.real() && a.imag() == b.imag();
}
template <class T>
constexpr bool operator!=(const complex<T>& a, const complex<T>& b) { return !(a == b); }

template <class T>
constexpr complex<T> conj(const complex<T>& z) { return {z.real(), -z.imag()}; }
template <class T>
T abs(const complex<T>& z) { return std::hypot(z.real(), z.imag()); }
template <class T>
T arg(const complex<T>& z) { return std::atan2(z.imag(), z.real()); }
template <class T>
std::ostream& operator<<(std::ostream& os, const complex<T>& z) {
  return os << '(' << z.real() << ',' << z.imag() << ')';
}

}  // namespace ember
