// The paper's decode chain (item of §3.1): the keys the attention kernel reads, composed through
// Split, Reshape, Transpose, ScatterND (run-time position), Slice, Unsqueeze, Expand and Reshape,
// are one mapping of two pieces — the new row straight from the QKV projection, every other row
// from the K cache — each a few multiply-adds. Golden text for a small and the full Llama-3-8B
// configuration, checked against the reference interpreter.
#include <gtest/gtest.h>

#include "decode_chain.h"
#include "mapping/contiguity.h"
#include "mapping/emit.h"

namespace vtc::test {
namespace {

TEST(DecodeChain, SmallConfigIsTwoPiecesAndMatchesReference) {
  Builder b(1);
  DecodeChain ch = build_decode_chain(b, {1, 4, 2, 8, 16, 5, 3});
  Result<Mapping> m = compose_read_chain(ch);
  ASSERT_TRUE(m.ok()) << m.reason;
  EXPECT_EQ(to_string(*m),
            "map [1,4,5,8]\n"
            "  piece 0: [0:1, 0:4, 0:5, 0:8] search s0 in [0:2) where load(positions, 0, s0, 0, 1) "
            "mod 2 == i1 floordiv 2 and load(positions, 0, s0, 0, 2) mod 16 == i2 -> qkv[0, 0, i3 "
            "+ s0*8 + 32]\n"
            "  piece 1: [0:1, 0:4, 0:5, 0:8] -> k_cache[0, i1 floordiv 2, i2, i3]\n");
  BaseEnv env;
  env.add(b);
  EXPECT_EQ(check_read(*m, b.env.at(ch.keys), env), "");
}

TEST(DecodeChain, FullLlamaConfigIsTwoPiecesOfAFewMultiplyAdds) {
  Builder b(2);
  DecodeConfig c{1, 32, 8, 128, 4096, 1024, 1000};
  DecodeChain ch = build_decode_chain(b, c);
  Result<Mapping> m = compose_read_chain(ch);
  ASSERT_TRUE(m.ok()) << m.reason;
  EXPECT_EQ(to_string(*m),
            "map [1,32,1024,128]\n"
            "  piece 0: [0:1, 0:32, 0:1024, 0:128] search s0 in [0:8) where load(positions, 0, s0, "
            "0, 1) mod 8 == i1 floordiv 4 and load(positions, 0, s0, 0, 2) mod 4096 == i2 -> "
            "qkv[0, 0, i3 + s0*128 + 4096]\n"
            "  piece 1: [0:1, 0:32, 0:1024, 0:128] -> k_cache[0, i1 floordiv 4, i2, i3]\n");
  EXPECT_EQ(emit_offset(m->pieces[0]), "i3 + s0 * 128 + 4096");
  EXPECT_EQ(emit_offset(m->pieces[1]), "i2 * 128 + i3 + (i1 / 4) * 524288");
  Contiguity ct = contiguity(*m, 2);
  EXPECT_EQ(ct.run, 128);
  EXPECT_EQ(ct.type, Profitability::partial);
  // Sampled indices against the reference (the new row at position 1000 and others).
  BaseEnv env;
  env.add(b);
  const Tensor& keys = b.env.at(ch.keys);
  LoadFn load = env.loader();
  for (int64_t k = 0; k < 4000; ++k) {
    Shape idx{0, (k * 7) % 32, k % 3 == 0 ? 1000 : (k * 131) % 1024, (k * 13) % 128};
    std::optional<Located> loc = locate(*m, idx, load);
    ASSERT_TRUE(loc);
    const Tensor& t = env.at(loc->base);
    Shape st = shape_strides(t.shape()), ks = shape_strides(keys.shape());
    int64_t off = 0, koff = 0;
    for (size_t d = 0; d < loc->index.size(); ++d)
      off += loc->index[d] * st[d];
    for (size_t d = 0; d < 4; ++d)
      koff += idx[d] * ks[d];
    ASSERT_EQ(t.get_f64(off), keys.get_f64(koff)) << shape_str(idx);
  }
}

} // namespace
} // namespace vtc::test
