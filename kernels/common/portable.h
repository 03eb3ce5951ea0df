// What a header needs to compile both as host C++20 (g++, clang) and as CUDA device code under
// NVRTC (-default-device, C++20), which has no standard-library headers: the qualifier macros
// VTC_HD and VTC_INLINE, the fixed-width integer types, and the two type traits the kernels'
// common headers use. Everything in kernels/common includes this instead of <cstdint> or
// <type_traits>.
#pragma once

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)
#define VTC_HD __host__ __device__
#define VTC_INLINE __forceinline__
#else
#define VTC_HD
#define VTC_INLINE inline
#endif

#if defined(__CUDACC_RTC__)
// NVRTC has no <cstdint>; these are the types generated code and kernels use.
using int8_t = signed char;
using uint8_t = unsigned char;
using int16_t = short;
using uint16_t = unsigned short;
using int32_t = int;
using uint32_t = unsigned int;
using int64_t = long long;
using uint64_t = unsigned long long;
#else
#include <cstddef>
#include <cstdint>
#endif

namespace vtc::kernels::portable {

// std::is_same_v, std::remove_cvref_t and std::declval, which device code cannot include.
template <typename A, typename B> inline constexpr bool is_same_v = false;
template <typename A> inline constexpr bool is_same_v<A, A> = true;

template <typename T> struct remove_cvref { using type = T; };
template <typename T> struct remove_cvref<const T> : remove_cvref<T> {};
template <typename T> struct remove_cvref<volatile T> : remove_cvref<T> {};
template <typename T> struct remove_cvref<const volatile T> : remove_cvref<T> {};
template <typename T> struct remove_cvref<T&> : remove_cvref<T> {};
template <typename T> struct remove_cvref<T&&> : remove_cvref<T> {};
template <typename T> using remove_cvref_t = typename remove_cvref<T>::type;

template <typename T> T&& declval() noexcept; // unevaluated contexts only

} // namespace vtc::kernels::portable
