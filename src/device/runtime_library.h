// A vendor library opened at run time (dlopen), never linked: cuDNN and cuBLASLt. The file is
// $ENV_VAR where set, else the default soname; a missing library or symbol is an error message
// (the caller's features then say why they are unavailable), not a failure to start.
#pragma once

#include <string>

namespace vtc::device {

struct RuntimeLibrary {
  void* handle = nullptr;
  std::string file;  // the name it was opened by
  std::string error; // empty while every symbol asked for was found
};

// Opens $env_var or `default_file`. `what` names the library in the error ("cuDNN"), with
// `env_var` and the `--library never` hint.
RuntimeLibrary open_runtime_library(const char* env_var, const std::string& default_file,
                                    const std::string& what);

// The address of `symbol`, or null with lib.error set (once: the first missing symbol).
void* runtime_symbol(RuntimeLibrary& lib, const char* symbol);

} // namespace vtc::device
