// Private mappings of external-data regions (see external_data_map.h).
#include "frontend/external_data_map.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace vtc {

MappedRegion map_file_region(const std::filesystem::path& path, int64_t offset, int64_t length,
                             int64_t align) {
  if (length < kMappedRegionMinBytes || offset < 0 || align <= 0 || offset % align != 0) return {};
  const int64_t page = int64_t(sysconf(_SC_PAGESIZE));
  if (page <= 0) return {};
  const int64_t start = offset / page * page;
  const size_t size = size_t(offset - start + length);
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  void* base = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, off_t(start));
  close(fd); // the mapping keeps the file
  if (base == MAP_FAILED) return {};
  MappedRegion r;
  r.owner = std::shared_ptr<void>(base, [size](void* p) { munmap(p, size); });
  r.data = static_cast<std::byte*>(base) + (offset - start);
  return r;
}

} // namespace vtc
