// Liveness-based arena planning over intermediate buffers (see memory_plan.h).
#include "runtime/memory_plan.h"

#include <algorithm>
#include <fmt/core.h>

#include "vtc/error.h"

namespace vtc {

namespace {

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

ArenaPlacement place_in_arena(const std::vector<int64_t>& sizes,
                              const std::vector<BufferLifetime>& lifetimes) {
  size_t n = sizes.size();
  ArenaPlacement out;
  out.offsets.assign(n, 0);
  int steps = 0;
  for (const BufferLifetime& l : lifetimes)
    steps = std::max(steps, l.last_step + 1);
  std::vector<int> order(n);
  for (size_t i = 0; i < n; ++i)
    order[i] = int(i);
  // Largest first; ties by first step, then position, so the plan never depends on sort
  // stability.
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    if (sizes[size_t(a)] != sizes[size_t(b)]) return sizes[size_t(a)] > sizes[size_t(b)];
    if (lifetimes[size_t(a)].first_step != lifetimes[size_t(b)].first_step)
      return lifetimes[size_t(a)].first_step < lifetimes[size_t(b)].first_step;
    return a < b;
  });
  std::vector<std::vector<int>> live_at(
      static_cast<size_t>(steps)); // placed buffers live at each step
  std::vector<size_t> seen(n, n);
  std::vector<std::pair<int64_t, int64_t>> taken;
  for (size_t k = 0; k < n; ++k) {
    int id = order[k];
    const BufferLifetime& life = lifetimes[size_t(id)];
    int64_t size = sizes[size_t(id)];
    // The address ranges taken by placed buffers that are live at the same time, by offset.
    taken.clear();
    for (int s = life.first_step; s <= life.last_step; ++s)
      for (int other : live_at[size_t(s)])
        if (seen[size_t(other)] != k) {
          seen[size_t(other)] = k;
          taken.emplace_back(out.offsets[size_t(other)],
                             out.offsets[size_t(other)] + sizes[size_t(other)]);
        }
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
    out.offsets[size_t(id)] = best;
    out.peak_bytes = std::max(out.peak_bytes, best + size);
    for (int s = life.first_step; s <= life.last_step; ++s)
      live_at[size_t(s)].push_back(id);
  }
  return out;
}

MemoryPlan plan_memory(const Program& program) {
  MemoryPlan plan;
  size_t n = program.buffers.size();
  plan.lifetimes = buffer_lifetimes(program);
  plan.offsets.assign(n, -1);
  plan.sizes.assign(n, 0);

  std::vector<int> arena;
  std::vector<int64_t> sizes;
  std::vector<BufferLifetime> lifetimes;
  for (size_t id = 0; id < n; ++id) {
    if (program.buffers[id].role != BufferRole::intermediate) continue;
    plan.offsets[id] = 0;
    if (!plan.lifetimes[id].used()) continue;
    plan.sizes[id] = arena_bytes(int64_t(program.buffers[id].type.nbytes()));
    plan.total_intermediate_bytes += plan.sizes[id];
    arena.push_back(int(id));
    sizes.push_back(plan.sizes[id]);
    lifetimes.push_back(plan.lifetimes[id]);
  }
  ArenaPlacement placed = place_in_arena(sizes, lifetimes);
  for (size_t k = 0; k < arena.size(); ++k)
    plan.offsets[size_t(arena[k])] = placed.offsets[k];
  plan.peak_bytes = placed.peak_bytes;
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
