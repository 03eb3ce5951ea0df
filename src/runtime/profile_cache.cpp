// See profile_cache.h.
#include "runtime/profile_cache.h"

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "device/cuda_device.h"
#include "jit/cache_files.h"
#include "jit/cache_key.h"
#include "jit/sha256.h"
#include "vtc/error.h"

namespace vtc {

namespace {

constexpr const char* kFormat = "vtc profiled plan 1";

std::filesystem::path profile_path(const std::string& cache_dir, const std::string& key) {
  return std::filesystem::path(cache_dir) / "profiles" / (key + ".txt");
}

} // namespace

std::string profile_key(const std::string& source, const std::vector<std::string>& include_dirs,
                        const Options& o) {
  jit::Sha256 hash;
  jit::hash_part(hash, kFormat);
  jit::hash_part(hash, source);
  jit::hash_included_headers(hash, source, include_dirs);
  const device::DeviceInfo& d = device::cuda_device();
  jit::hash_part(hash, d.name + " sm_" + std::to_string(d.cc_major) + std::to_string(d.cc_minor) +
                           " driver " + std::to_string(d.driver_version));
  jit::hash_part(hash, library_mode_name(o.library));
  for (const auto& [node, mode] : o.library_nodes)
    jit::hash_part(hash, node + "=" + library_mode_name(mode));
  return hash.hex_digest();
}

std::optional<ProfiledPlan> read_profile(const std::string& cache_dir, const std::string& key) {
  std::istringstream in(jit::read_small_file(profile_path(cache_dir, key)));
  std::string line;
  if (!std::getline(in, line) || line != kFormat) return std::nullopt;
  ProfiledPlan plan;
  plan.from_cache = true;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string what;
    fields >> what;
    if (what == "kept") {
      std::getline(fields >> std::ws, plan.kept);
    } else if (what == "physical") {
      fields >> plan.kept_physical;
    } else if (what == "ms") {
      fields >> plan.greedy_ms >> plan.vtc_kernels_ms >> plan.per_node_ms >> plan.physical_ms;
    } else if (what == "node") {
      ProfiledNode n;
      fields >> n.library >> n.library_ms >> n.vtc_ms >> n.on_library;
      std::replace(n.library.begin(), n.library.end(), '_', ' ');
      std::getline(fields >> std::ws, n.node);
      if (!fields && !fields.eof()) return std::nullopt;
      plan.nodes.push_back(n);
    } else {
      return std::nullopt;
    }
    if (fields.fail() && !fields.eof()) return std::nullopt;
  }
  return plan;
}

void write_profile(const std::string& cache_dir, const std::string& key, const ProfiledPlan& plan) {
  std::ostringstream out;
  out.precision(9);
  out << kFormat << "\nkept " << plan.kept << "\nphysical " << plan.kept_physical << "\nms "
      << plan.greedy_ms << " " << plan.vtc_kernels_ms << " " << plan.per_node_ms << " "
      << plan.physical_ms << "\n";
  for (const ProfiledNode& n : plan.nodes) {
    std::string library = n.library; // one word: "openblas sgemm" as openblas_sgemm
    std::replace(library.begin(), library.end(), ' ', '_');
    out << "node " << library << " " << n.library_ms << " " << n.vtc_ms << " " << n.on_library
        << " " << n.node << "\n";
  }
  jit::ensure_cache_dir(cache_dir);
  const std::filesystem::path path = profile_path(cache_dir, key);
  std::error_code error;
  std::filesystem::create_directories(path.parent_path(), error);
  VTC_CHECK(!error) << "cannot create " << path.parent_path().string()
                    << " for the profiled plan: " << error.message();
  jit::write_atomically(path, out.str());
}

Options kept_options(Options o, const ProfiledPlan& plan) {
  for (const ProfiledNode& n : plan.nodes)
    if (!n.on_library) o.library_nodes[n.node] = LibraryMode::never;
  if (plan.kept_physical) o.strategy = StrategyKind::none;
  return o;
}

} // namespace vtc
