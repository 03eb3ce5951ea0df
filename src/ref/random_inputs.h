// Seeded random tensors for inputs the user did not give: floats uniform in [-1, 1),
// integers in [0, 2), booleans half true. The same seed gives the same values everywhere.
#pragma once

#include <cstdint>

#include "vtc/tensor.h"

namespace vtc {

Tensor random_tensor(const TensorType& type, uint64_t seed);

} // namespace vtc
