// The profiled choice of a greedy plan on the device, kept in the compile cache so that a
// session of the same model on the same device takes it without timing anything again (a
// warm start then costs two loads from the cache, not four plans timed). Keyed by the rule's
// greedy program as generated (its translation unit's source and the kernel headers it
// includes), the device (name, compute capability, driver) and the caller's library choices;
// stored as a few lines of text under <cache>/profiles.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "vtc/options.h"
#include "vtc/vtc.h"

namespace vtc {

// The key of the choice made for the rule's greedy program of source `source` (headers from
// `include_dirs`) on the current device under `o`'s library modes.
std::string profile_key(const std::string& source, const std::vector<std::string>& include_dirs,
                        const Options& o);

// The stored choice, marked from_cache; nullopt when there is none or it does not parse.
std::optional<ProfiledPlan> read_profile(const std::string& cache_dir, const std::string& key);

// Stores `plan` under `key`; throws vtc::Error naming the file when it cannot be written.
void write_profile(const std::string& cache_dir, const std::string& key, const ProfiledPlan& plan);

// `o` with the implementations and strategy `plan` kept: library mode never for each node
// taken off its library, strategy none where the all-physical program was kept.
Options kept_options(Options o, const ProfiledPlan& plan);

} // namespace vtc
