// The math functions elementwise expressions call in device code, as vtc_math::f (on cpu
// vtc_math is namespace std): the CUDA math library's functions under the overloads the
// expressions use — float and double, and integers where std::abs / std::pow take them — and
// plus<> for Sum.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

namespace vtc_math {

#define VTC_MATH_UNARY(name)                                                                       \
  __device__ inline float name(float x) {                                                          \
    return ::name##f(x);                                                                           \
  }                                                                                                \
  __device__ inline double name(double x) {                                                        \
    return ::name(x);                                                                              \
  }
VTC_MATH_UNARY(sqrt)
VTC_MATH_UNARY(exp)
VTC_MATH_UNARY(log)
VTC_MATH_UNARY(tanh)
VTC_MATH_UNARY(erf)
VTC_MATH_UNARY(floor)
VTC_MATH_UNARY(ceil)
VTC_MATH_UNARY(sin)
VTC_MATH_UNARY(cos)
#undef VTC_MATH_UNARY

__device__ inline float abs(float x) {
  return ::fabsf(x);
}
__device__ inline double abs(double x) {
  return ::fabs(x);
}
__device__ inline long long abs(long long x) {
  return x < 0 ? -x : x;
}
__device__ inline long abs(long x) {
  return x < 0 ? -x : x;
}
__device__ inline int abs(int x) {
  return x < 0 ? -x : x;
}

__device__ inline float pow(float x, float y) {
  return ::powf(x, y);
}
__device__ inline double pow(double x, double y) {
  return ::pow(x, y);
}
// Mixed and integer arguments as std::pow takes them: in double.
template <class A, class B> __device__ inline double pow(A x, B y) {
  return ::pow(double(x), double(y));
}

template <class T = void> struct plus {
  template <class A, class B> __device__ auto operator()(A a, B b) const { return a + b; }
};

} // namespace vtc_math

#endif
