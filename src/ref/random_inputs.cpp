// A small xorshift generator keeps the values identical across platforms and libraries.
#include "ref/random_inputs.h"

namespace vtc {

Tensor random_tensor(const TensorType& type, uint64_t seed) {
  Tensor t(type);
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
  auto next = [&] {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  };
  for (int64_t i = 0; i < t.numel(); ++i) {
    uint64_t r = next();
    if (is_float(t.dtype()))
      t.set_f64(i, double(r >> 11) * 0x1.0p-52 - 1.0);
    else
      t.set_i64(i, int64_t(r >> 63));
  }
  return t;
}

} // namespace vtc
