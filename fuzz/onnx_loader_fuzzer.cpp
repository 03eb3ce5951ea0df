// libFuzzer target over the ONNX loader: parse, build the graph, infer shapes and fold
// constants on arbitrary bytes. Any vtc::Error is the expected outcome for bad input;
// sanitizer reports, crashes, leaks and any other exception are findings.
#include <cstddef>
#include <cstdint>
#include <string>

#include "frontend/onnx_import.h"
#include "vtc/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  vtc::ImportOptions options;
  options.fold_limit_bytes = size_t(1) << 20; // keep folding cheap under the sanitizers
  try {
    vtc::import_onnx_bytes(std::string(reinterpret_cast<const char*>(data), size),
                           "/nonexistent-fuzz-dir", "fuzz.onnx", options);
  } catch (const vtc::Error&) {
  }
  return 0;
}
