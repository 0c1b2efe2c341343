#include "kernels/cpu/copy.h"

#include <cstring>

#include "kernels/cpu/cast.h"

namespace ember::kernels {

namespace {
template <class To, class From>
void cast_loop(char** data, const int64_t* strides, int64_t n) {
  char* out = data[0];
  const char* in = data[1];
  const int64_t so = strides[0], si = strides[1];
  if (so == sizeof(To) && si == sizeof(From)) {
    To* o = reinterpret_cast<To*>(out);
    const From* x = reinterpret_cast<const From*>(in);
    for (int64_t i = 0; i < n; ++i) o[i] = cast<To>(x[i]);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    From v;
    std::memcpy(&v, in + i * si, sizeof(From));
    To r = cast<To>(v);
    std::memcpy(out + i * so, &r, sizeof(To));
  }
}
}  // namespace

void copy_kernel(TensorIterator& iter) {
  const ScalarType to = iter.dtype(0), from = iter.dtype(1);
  if (to == from) {
    const int64_t es = static_cast<int64_t>(element_size(to));
    iter.for_each([es](char** data, const int64_t* strides, int64_t n) {
      if (strides[0] == es && strides[1] == es) {
        std::memcpy(data[0], data[1], static_cast<size_t>(n * es));
      } else {
        for (int64_t i = 0; i < n; ++i) std::memcpy(data[0] + i * strides[0], data[1] + i * strides[1], es);
      }
    });
    return;
  }
  visit_dtype(to, [&](auto o) {
    visit_dtype(from, [&](auto i) {
      iter.for_each(cast_loop<decltype(o), decltype(i)>);
    });
  });
}

void fill_kernel(TensorIterator& iter, const Scalar& value) {
  visit_dtype(iter.dtype(0), [&](auto tag) {
    using T = decltype(tag);
    const T v = value.to<T>();
    iter.for_each([v](char** data, const int64_t* strides, int64_t n) {
      if (strides[0] == sizeof(T)) {
        T* o = reinterpret_cast<T*>(data[0]);
        for (int64_t i = 0; i < n; ++i) o[i] = v;
      } else {
        for (int64_t i = 0; i < n; ++i) std::memcpy(data[0] + i * strides[0], &v, sizeof(T));
      }
    });
  });
}

}  // namespace ember::kernels
