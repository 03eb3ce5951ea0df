// Scaling of the strategy search: the VTOG and the global greedy search under the analytic
// cost model over synthetic graphs of 1k to 10k nodes (strategy/synthetic.h: a repeated block
// of 11 nodes, 7 of them data movement). Counters: nodes, data-movement ops, ops eliminated,
// moves evaluated. The whole search must stay under 5 s at 10k nodes on one core.
#include <benchmark/benchmark.h>

#include "strategy/explain.h"
#include "strategy/synthetic.h"

namespace vtc {
namespace {

void BM_GreedyAnalytic(benchmark::State& state) {
  int blocks = int(state.range(0)) / 11;
  Graph g = synthetic_graph(blocks);
  KernelGraph kg = unfused_kernel_graph(g);
  AnalyticCostModel model;
  Strategy s;
  for (auto _ : state) {
    s = choose_strategy(kg, {}, model);
    benchmark::DoNotOptimize(s.latency);
  }
  ExplainTotals t = explain_totals(s);
  state.counters["nodes"] = double(g.nodes().size());
  state.counters["movement"] = t.movement;
  state.counters["eliminated"] = t.eliminated;
  int trials = 0;
  for (const Commit& c : s.commits)
    trials += int(c.options.size());
  state.counters["options_taken"] = trials;
}

void BM_VtogOnly(benchmark::State& state) {
  Graph g = synthetic_graph(int(state.range(0)) / 11);
  KernelGraph kg = unfused_kernel_graph(g);
  for (auto _ : state)
    benchmark::DoNotOptimize(build_vtog(kg).edges.size());
  state.counters["nodes"] = double(g.nodes().size());
}

BENCHMARK(BM_GreedyAnalytic)
    ->Arg(1000)
    ->Arg(2000)
    ->Arg(5000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);
BENCHMARK(BM_VtogOnly)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond)->Iterations(1);

} // namespace
} // namespace vtc
