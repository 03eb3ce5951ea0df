// Vendor libraries opened at run time (see runtime_library.h).
#include "device/runtime_library.h"

#include <dlfcn.h>

#include <cstdlib>

namespace vtc::device {

RuntimeLibrary open_runtime_library(const char* env_var, const std::string& default_file,
                                    const std::string& what) {
  RuntimeLibrary lib;
  const char* named = std::getenv(env_var);
  lib.file = named && *named ? named : default_file;
  lib.handle = dlopen(lib.file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib.handle) {
    const char* e = dlerror();
    lib.error = what + " not found (" + std::string(e ? e : lib.file) + "; $" + env_var +
                " names the library, or --library never does without it)";
  }
  return lib;
}

void* runtime_symbol(RuntimeLibrary& lib, const char* symbol) {
  if (!lib.error.empty() || !lib.handle) return nullptr;
  void* p = dlsym(lib.handle, symbol);
  if (!p) lib.error = lib.file + " has no " + symbol;
  return p;
}

} // namespace vtc::device
