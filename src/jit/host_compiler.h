// Generated host C++ → a loaded shared object, through an on-disk cache.
//
// A cache entry for key K (see cache_key.h) is three files in CompileOptions::cache_dir:
//   K.cpp  the generated source (named in compile errors; kept for debugging)
//   K.so   the shared object
//   K.ok   the SHA-256 of K.so's bytes, written last: an entry is valid only when it
//          matches, so a truncated or half-written K.so is rebuilt, never loaded.
// Every file is written under a unique temporary name in the cache directory and renamed
// into place, so concurrent processes compiling the same model all succeed and a reader
// never sees a partial file; a loaded K.so is never modified in place.
#pragma once

#include <optional>
#include <string>

#include "jit/compile_options.h"
#include "jit/shared_library.h"

namespace vtc::jit {

struct CompiledObject {
  std::string key;         // the cache key (64 hex digits)
  std::string so_path;     // <cache_dir>/<key>.so
  std::string source_path; // <cache_dir>/<key>.cpp
  bool cached = false;     // true when a valid entry was found and no compiler ran
  double seconds = 0;      // time spent in the compiler (0 when cached)
  int objects = 1;         // shared objects a unit compiled in parts was loaded from
};

// Compiles `source` into a shared object unless a valid cache entry exists. Throws
// vtc::Error when the cache directory cannot be created or written (naming it), when the
// compiler cannot be run (naming it), or when compilation fails (naming K.cpp and quoting
// the first 30 lines of the compiler's diagnostics).
CompiledObject compile_object(const std::string& source, const CompileOptions& options);

// Whether compile_object would find a valid cache entry for `source` (and run no compiler).
bool object_cached(const std::string& source, const CompileOptions& options);

// compile_object(...).so_path.
std::string compile_shared_object(const std::string& source, const CompileOptions& options);

struct LoadedObject {
  CompiledObject object;
  SharedLibrary library;
};

// compile_object, then dlopen. A cached entry that fails to load is rebuilt once.
LoadedObject compile_and_load(const std::string& source, const CompileOptions& options);

// The valid cache entry `key` (one compile_object gave) of options.cache_dir, loaded; nullopt
// when there is none or it does not load.
std::optional<LoadedObject> load_cached_object(const std::string& key,
                                               const CompileOptions& options);

} // namespace vtc::jit
