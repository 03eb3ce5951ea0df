// A loaded shared object (dlopen/dlclose with RAII) and typed symbol lookup. Generated
// models are loaded through this; a missing library or symbol is a vtc::Error naming both.
#pragma once

#include <string>

namespace vtc::jit {

class SharedLibrary {
public:
  // Loads `path` with RTLD_NOW | RTLD_LOCAL: every undefined symbol is resolved now, so a
  // broken object fails here rather than at the first call. Throws vtc::Error on failure.
  explicit SharedLibrary(const std::string& path);
  ~SharedLibrary();
  SharedLibrary(SharedLibrary&& other) noexcept;
  SharedLibrary& operator=(SharedLibrary&& other) noexcept;
  SharedLibrary(const SharedLibrary&) = delete;
  SharedLibrary& operator=(const SharedLibrary&) = delete;

  const std::string& path() const { return path_; }

  // The address of `name` as a pointer to F (a function type such as `int(int)`, or a
  // variable's type). Throws vtc::Error naming the library and the symbol when missing.
  template <typename F> F* symbol(const char* name) const {
    return reinterpret_cast<F*>(raw_symbol(name));
  }

  // The address of `name` as a pointer to F, or null when the library has no such symbol.
  template <typename F> F* find_symbol(const char* name) const {
    return reinterpret_cast<F*>(find_raw_symbol(name));
  }

private:
  void* raw_symbol(const char* name) const;
  void* find_raw_symbol(const char* name) const;

  std::string path_;
  void* handle_ = nullptr;
};

} // namespace vtc::jit
