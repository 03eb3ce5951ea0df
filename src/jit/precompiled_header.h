// A preamble every compiled part starts with (the kernel headers and the standard headers they
// pull in: about 2 s of parsing a part on a two-core machine, most of a small part's compile)
// compiled once into a precompiled header in the cache directory and shared by every part of
// every unit with the same preamble, compiler and flags.
//
// The entry for key K (cache_key of the preamble, salted so that it never names a part) is
//   K.h      the preamble's text
//   K.h.gch  the precompiled header, written under a temporary name and renamed into place
// A part then starts with `#include "<cache_dir>/K.h"`. GCC takes K.h.gch where it is valid for
// the part's compiler and flags and parses K.h where it is not, so the code compiled is the
// same either way; K names the kernel headers' content, so the parts' own keys change with it.
#pragma once

#include <string>

#include "jit/compile_options.h"

namespace vtc::jit {

// What a part starts with for `preamble` compiled with `options`: the include line of its
// precompiled header (nothing is touched: a unit whose parts are all cached needs no header),
// or, where the compiler is not GCC-compatible, the preamble's text.
std::string preamble_include(const std::string& preamble, const CompileOptions& options);

struct PreambleBuild {
  bool built = false; // the precompiled header was compiled here (not found in the cache)
  double seconds = 0; // time in the compiler
};

// Writes K.h where it is missing (nothing where the compiler takes no precompiled headers):
// what a part's include line names, so it must be there before a part is compiled or its cache
// key computed. Parts compiled before K.h.gch exists parse K.h as text, to the same code.
// Throws vtc::Error when the cache directory cannot be written.
void write_preamble(const std::string& preamble, const CompileOptions& options);

// Whether options.cache_dir holds K.h and K.h.gch for `preamble` (a prebuilt directory that
// does: compile_cpu_unit's parts include its K.h, and nothing is built).
bool preamble_built(const std::string& preamble, const CompileOptions& options);

// write_preamble, then compiles K.h.gch where it is missing. A header that does not compile
// leaves K.h alone: the parts then parse it as text and report what is wrong with it. Throws
// vtc::Error when the cache directory cannot be written.
PreambleBuild build_preamble(const std::string& preamble, const CompileOptions& options);

} // namespace vtc::jit
