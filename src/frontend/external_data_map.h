// Large tensors of a model's external-data file read by mapping their region of the file
// privately instead of copying it: pages are read when touched, and pages written (a constant
// folded in place) become the process's own copies, never the file's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>

namespace vtc {

// Regions smaller than this are copied: a mapping costs a system call and at least a page.
inline constexpr int64_t kMappedRegionMinBytes = int64_t(1) << 20;

struct MappedRegion {
  std::shared_ptr<void> owner; // unmaps when the last holder goes
  std::byte* data = nullptr;   // null: not mapped (the caller reads a copy)
};

// Bytes [offset, offset + length) of the file at `path` in a private, writable mapping of their
// own; not mapped (data null) when the region is below kMappedRegionMinBytes, its offset is not
// a multiple of `align`, or the system refuses.
MappedRegion map_file_region(const std::filesystem::path& path, int64_t offset, int64_t length,
                             int64_t align);

} // namespace vtc
