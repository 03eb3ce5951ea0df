// Speed of the mapping algebra: composing and simplifying the read sides of the paper's decode
// chain (8 data-movement ops, of which the 6 after Split-Reshape are the classic chain) into one
// mapping, with and without deriving each op's mapping from its rule first.
#include <benchmark/benchmark.h>

#include "decode_chain.h"
#include "mapping/compose.h"

namespace vtc::test {
namespace {

struct Fixture {
  Builder b{1};
  DecodeChain chain;
  std::vector<Mapping> reads; // read side of each node, for the output the chain uses
  std::vector<const Base*> through;
  Fixture() {
    chain = build_decode_chain(b, {1, 32, 8, 128, 4096, 1024, 1000});
    for (const Node* n : chain.nodes) {
      size_t out = n->op == "Split" ? 1 : 0;
      reads.push_back(*read_side(*n).mappings[out]);
      through.push_back(value_base(n->output(out)));
    }
  }
};

// Composes the last `ops` read sides (the chain ends at the attention kernel's K operand).
void compose_last(const Fixture& f, size_t ops, benchmark::State& state) {
  for (auto _ : state) {
    Mapping m = f.reads.back();
    for (size_t s = f.reads.size() - 1; s-- > f.reads.size() - ops;) {
      Result<Mapping> c = compose(m, f.through[s], f.reads[s]);
      m = *c;
    }
    benchmark::DoNotOptimize(m);
  }
}

void BM_ComposeSixOpChain(benchmark::State& state) {
  static Fixture f;
  compose_last(f, 6, state); // Transpose, ScatterND, Slice, Unsqueeze, Expand, Reshape
}
BENCHMARK(BM_ComposeSixOpChain)->Unit(benchmark::kMicrosecond);

void BM_ComposeWholeDecodeChain(benchmark::State& state) {
  static Fixture f;
  compose_last(f, f.reads.size(), state); // all 8 ops, Split included
}
BENCHMARK(BM_ComposeWholeDecodeChain)->Unit(benchmark::kMicrosecond);

void BM_RulesAndComposeWholeDecodeChain(benchmark::State& state) {
  static Fixture f;
  for (auto _ : state)
    benchmark::DoNotOptimize(compose_read_chain(f.chain));
}
BENCHMARK(BM_RulesAndComposeWholeDecodeChain)->Unit(benchmark::kMicrosecond);

} // namespace
} // namespace vtc::test
