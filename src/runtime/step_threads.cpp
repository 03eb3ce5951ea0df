// Threads per step of a cpu program (see step_threads.h).
#include "runtime/step_threads.h"

#include <cstdlib>
#include <string>

namespace vtc {

double estimated_step_seconds(const StepInfo& s) {
  return double(s.flops) / 100e9 + double(s.bytes) / 10e9;
}

double least_split_seconds(double round_trip_seconds) {
  const double trips =
      round_trip_seconds < kSharedCacheRoundTrip ? kSplitRoundTripsSharedCache : kSplitRoundTrips;
  return trips * round_trip_seconds;
}

std::vector<int> step_threads(const Program& p, int threads, double round_trip_seconds) {
  const char* all = std::getenv("VTC_SPLIT_ALL_STEPS");
  const bool split_all = all && std::string(all) == "1";
  const double least = least_split_seconds(round_trip_seconds);
  std::vector<int> out;
  out.reserve(p.steps.size());
  for (const StepInfo& s : p.steps)
    out.push_back(!split_all && estimated_step_seconds(s) < least ? 1 : threads);
  return out;
}

StepPlan::StepPlan(const Program& p, int threads, double round_trip_seconds)
    : round_trip_seconds(round_trip_seconds),
      threads(step_threads(p, threads, round_trip_seconds)) {}

bool StepPlan::follow(const Program& p, int threads, double round_trip_seconds) {
  if (round_trip_seconds == this->round_trip_seconds) return false;
  *this = StepPlan(p, threads, round_trip_seconds);
  return true;
}

} // namespace vtc
