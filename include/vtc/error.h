// Errors for vtc: one exception type carrying a message that names the file, node, op,
// input or shape involved, and the VTC_CHECK / VTC_FAIL macros that build it by streaming.
// Every user-facing failure (bad model, unsupported op, wrong input) is thrown as vtc::Error
// and reported by the CLI as a one-line reason with a non-zero exit.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace vtc {

class Error : public std::runtime_error {
public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

// A valid model that uses something vtc does not support (an op, a dtype, an attribute
// value, a dynamic shape). Reported like any error; counted apart in conformance runs.
class Unsupported : public Error {
public:
  explicit Unsupported(const std::string& what) : Error(what) {}
};

namespace detail {

// Collects the streamed message of a failed check.
struct ErrorStream {
  std::ostringstream os;
  template <typename T> ErrorStream& operator<<(const T& v) {
    os << v;
    return *this;
  }
};

// `ErrorThrow() & stream` throws; `&` binds looser than `<<` so the whole message is built
// first.
struct ErrorThrow {
  [[noreturn]] void operator&(ErrorStream& s) const { throw Error(s.os.str()); }
  [[noreturn]] void operator&(ErrorStream&& s) const { throw Error(s.os.str()); }
};

struct UnsupportedThrow {
  [[noreturn]] void operator&(ErrorStream& s) const { throw Unsupported(s.os.str()); }
  [[noreturn]] void operator&(ErrorStream&& s) const { throw Unsupported(s.os.str()); }
};

} // namespace detail
} // namespace vtc

// VTC_CHECK(cond) << "context"; throws vtc::Error with the context when cond is false.
// (A `while` rather than `if ... else` so that the macro nests safely inside an if/else; its
// body always throws, so it runs at most once.)
#define VTC_CHECK(cond)                                                                            \
  while (!(cond))                                                                                  \
  ::vtc::detail::ErrorThrow() & ::vtc::detail::ErrorStream()

// VTC_FAIL() << "context"; always throws.
#define VTC_FAIL() ::vtc::detail::ErrorThrow() & ::vtc::detail::ErrorStream()

// VTC_UNSUPPORTED() << "context"; throws vtc::Unsupported (a feature vtc does not have).
#define VTC_UNSUPPORTED() ::vtc::detail::UnsupportedThrow() & ::vtc::detail::ErrorStream()
