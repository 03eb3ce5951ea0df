// Liveness-based arena planning over intermediate buffers (see memory_plan.h).
#include "runtime/memory_plan.h"

#include <algorithm>
#include <fmt/core.h>

#include "vtc/error.h"

namespace vtc {

namespace {

int64_t align_up(int64_t n) {
  return (n + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

std::string mib(int64_t bytes) {
  return fmt::format("{:.2f} MiB", double(bytes) / (1 << 20));
}

} // namespace

std::vector<BufferLifetime> buffer_lifetimes(const Program& program) {
  std::vector<BufferLifetime> life(program.buffers.size());
  auto touch = [&](const StepInfo& step, int step_index, int id) {
    VTC_CHECK(id >= 0 && size_t(id) < program.buffers.size())
        << "step " << step_index << " '" << step.name << "' names buffer " << id << ", but the "
        << "program has " << program.buffers.size() << " buffers";
    BufferLifetime& l = life[size_t(id)];
    if (!l.used()) l.first_step = step_index;
    l.last_step = step_index;
  };
  for (size_t s = 0; s < program.steps.size(); ++s) {
    const StepInfo& step = program.steps[s];
    for (int id : step.reads)
      touch(step, int(s), id);
    for (int id : step.writes)
      touch(step, int(s), id);
  }
  return life;
}

MemoryPlan plan_memory(const Program& program) {
  MemoryPlan plan;
  size_t n = program.buffers.size();
  plan.lifetimes = buffer_lifetimes(program);
  plan.offsets.assign(n, -1);
  plan.sizes.assign(n, 0);

  std::vector<int> order;
  for (size_t id = 0; id < n; ++id) {
    if (program.buffers[id].role != BufferRole::intermediate) continue;
    plan.offsets[id] = 0;
    if (!plan.lifetimes[id].used()) continue;
    plan.sizes[id] = align_up(int64_t(program.buffers[id].type.nbytes()));
    plan.total_intermediate_bytes += plan.sizes[id];
    order.push_back(int(id));
  }
  // Largest first; ties by first step, then id, so the plan never depends on sort stability.
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    if (plan.sizes[size_t(a)] != plan.sizes[size_t(b)])
      return plan.sizes[size_t(a)] > plan.sizes[size_t(b)];
    if (plan.lifetimes[size_t(a)].first_step != plan.lifetimes[size_t(b)].first_step)
      return plan.lifetimes[size_t(a)].first_step < plan.lifetimes[size_t(b)].first_step;
    return a < b;
  });

  std::vector<int> placed;
  for (int id : order) {
    const BufferLifetime& life = plan.lifetimes[size_t(id)];
    int64_t size = plan.sizes[size_t(id)];
    // The address ranges taken by placed buffers that are live at the same time, by offset.
    std::vector<std::pair<int64_t, int64_t>> taken;
    for (int other : placed)
      if (plan.lifetimes[size_t(other)].overlaps(life))
        taken.emplace_back(plan.offsets[size_t(other)],
                           plan.offsets[size_t(other)] + plan.sizes[size_t(other)]);
    std::sort(taken.begin(), taken.end());
    // Best fit: the smallest gap that holds the buffer; else the first address above all.
    int64_t best = -1, best_waste = 0, cursor = 0;
    for (const auto& [begin, end] : taken) {
      int64_t gap = begin - cursor;
      if (gap >= size && (best < 0 || gap - size < best_waste)) {
        best = cursor;
        best_waste = gap - size;
      }
      cursor = std::max(cursor, end);
    }
    if (best < 0) best = cursor;
    plan.offsets[size_t(id)] = best;
    plan.peak_bytes = std::max(plan.peak_bytes, best + size);
    placed.push_back(id);
  }
  return plan;
}

std::string print_memory_plan(const Program& program, const MemoryPlan& plan) {
  int count = 0;
  for (const BufferInfo& b : program.buffers)
    count += b.role == BufferRole::intermediate;
  std::string s = fmt::format("arena {} for {} intermediates ({} without reuse)\n",
                              mib(plan.peak_bytes), count, mib(plan.total_intermediate_bytes));
  for (size_t id = 0; id < program.buffers.size(); ++id) {
    if (program.buffers[id].role != BufferRole::intermediate) continue;
    const BufferLifetime& l = plan.lifetimes[id];
    s += fmt::format("  {:>10} +{:<10} steps {}..{}  {} {}\n", plan.offsets[id], plan.sizes[id],
                     l.first_step, l.last_step, program.buffers[id].name,
                     type_str(program.buffers[id].type));
  }
  return s;
}

} // namespace vtc
