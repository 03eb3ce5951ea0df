// dlopen/dlsym/dlclose behind SharedLibrary. dlerror() is cleared before each call so the
// message reported is the one for this call.
#include "jit/shared_library.h"

#include <dlfcn.h>
#include <utility>

#include "vtc/error.h"

namespace vtc::jit {
namespace {

std::string last_dl_error() {
  const char* message = dlerror();
  return message ? std::string(message) : std::string("unknown error");
}

} // namespace

SharedLibrary::SharedLibrary(const std::string& path) : path_(path) {
  dlerror();
  handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  VTC_CHECK(handle_ != nullptr) << "cannot load shared library '" << path
                                << "': " << last_dl_error();
}

SharedLibrary::~SharedLibrary() {
  if (handle_) dlclose(handle_);
}

SharedLibrary::SharedLibrary(SharedLibrary&& other) noexcept
    : path_(std::move(other.path_)), handle_(std::exchange(other.handle_, nullptr)) {}

SharedLibrary& SharedLibrary::operator=(SharedLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_) dlclose(handle_);
    path_ = std::move(other.path_);
    handle_ = std::exchange(other.handle_, nullptr);
  }
  return *this;
}

void* SharedLibrary::raw_symbol(const char* name) const {
  VTC_CHECK(handle_ != nullptr) << "symbol '" << name << "' looked up in a moved-from library";
  dlerror();
  void* address = dlsym(handle_, name);
  // A symbol may legitimately have the address 0; dlerror() tells the two cases apart.
  const char* message = dlerror();
  VTC_CHECK(message == nullptr) << "symbol '" << name << "' not found in shared library '" << path_
                                << "': " << message;
  return address;
}

void* SharedLibrary::find_raw_symbol(const char* name) const {
  VTC_CHECK(handle_ != nullptr) << "symbol '" << name << "' looked up in a moved-from library";
  return dlsym(handle_, name);
}

} // namespace vtc::jit
