// libFuzzer target over the tensor-file readers: the first byte picks .npy or TensorProto .pb
// (and, for .npy, whether bf16 is expected), the rest is the file. Any vtc::Error is the
// expected outcome for bad input; sanitizer reports, crashes, leaks and any other exception
// are findings.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "frontend/tensor_io.h"
#include "vtc/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0] % 3;
  std::string bytes(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    if (mode == 2)
      vtc::parse_tensor_pb(bytes, "fuzz.pb", "/nonexistent-fuzz-dir");
    else
      vtc::parse_npy(bytes, "fuzz.npy",
                     mode == 1 ? std::optional<vtc::DType>(vtc::DType::bf16) : std::nullopt);
  } catch (const vtc::Error&) {
  }
  return 0;
}
