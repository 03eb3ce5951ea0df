// Bytes a data-movement node moves when it runs as a copy kernel: the bytes it writes plus
// the bytes of the elements it reads. Expand and Tile read their (shared) input once; Pad
// reads only the interior; ScatterND/ScatterElements copy `data` and then write `updates`.
#pragma once

#include <cstdint>

#include "ir/graph.h"

namespace vtc {

int64_t data_movement_bytes(const Node& n);

} // namespace vtc
