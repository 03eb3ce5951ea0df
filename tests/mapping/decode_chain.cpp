// The decode chain builder shared by the golden test and the benchmark.
#include "decode_chain.h"

#include "mapping/compose.h"

namespace vtc::test {

static Tensor i64s(const std::vector<int64_t>& v, Shape s) {
  return Tensor::from<int64_t>(s, v);
}

DecodeChain build_decode_chain(Builder& b, const DecodeConfig& c) {
  int64_t B = c.batch, Hq = c.q_heads, Hkv = c.kv_heads, D = c.head_dim, G = Hq / Hkv;
  Value* qkv = b.input({B, 1, (Hq + 2 * Hkv) * D}, 0);
  qkv->name = "qkv";
  Value* cache = b.input({B, Hkv, c.max_len, D}, -1e6);
  cache->name = "k_cache";
  Tensor pos(DType::i64, {B, Hkv, 1, 3});
  for (int64_t bi = 0; bi < B; ++bi)
    for (int64_t h = 0; h < Hkv; ++h) {
      int64_t row = (bi * Hkv + h) * 3;
      pos.set_i64(row, bi), pos.set_i64(row + 1, h), pos.set_i64(row + 2, c.pos);
    }
  Value* positions = b.ints(pos, false);
  positions->name = "positions";
  DecodeChain ch;
  auto add = [&](Node* n) {
    ch.nodes.push_back(n);
    return n->output(0);
  };
  Node* split = b.node("Split", {qkv, b.ints(i64s({Hq * D, Hkv * D, Hkv * D}, {3}), true)}, 3,
                       {{"axis", int64_t(2)}});
  ch.nodes.push_back(split);
  Value* k = split->output(1);
  k = add(b.node("Reshape", {k, b.ints(i64s({B, 1, Hkv, D}, {4}), true)}, 1));
  k = add(b.node("Transpose", {k}, 1, {{"perm", std::vector<int64_t>{0, 2, 1, 3}}}));
  k = add(b.node("ScatterND", {cache, positions, k}, 1));
  k = add(b.node("Slice",
                 {k, b.ints(i64s({0}, {1}), true), b.ints(i64s({c.cur_len}, {1}), true),
                  b.ints(i64s({2}, {1}), true)},
                 1));
  k = add(b.node("Unsqueeze", {k, b.ints(i64s({2}, {1}), true)}, 1));
  k = add(b.node("Expand", {k, b.ints(i64s({B, Hkv, G, c.cur_len, D}, {5}), true)}, 1));
  k = add(b.node("Reshape", {k, b.ints(i64s({B, Hq, c.cur_len, D}, {4}), true)}, 1));
  ch.keys = k;
  return ch;
}

Result<Mapping> compose_read_chain(const DecodeChain& chain) {
  // Split's read side gives one mapping per output; the chain leaves it by output 1.
  const Node* last = chain.nodes.back();
  Mapping m = *read_side(*last).mappings[0];
  for (size_t s = chain.nodes.size() - 1; s-- > 0;) {
    const Node* n = chain.nodes[s];
    size_t out = n->op == "Split" ? 1 : 0;
    Result<Mapping> c = compose(m, value_base(n->output(out)), *read_side(*n).mappings[out]);
    if (!c.ok()) return c;
    m = *c;
  }
  return {m, {}};
}

} // namespace vtc::test
