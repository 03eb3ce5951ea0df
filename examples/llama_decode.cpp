// Decoding with a Llama layer through the public API: the KV cache inputs past_k/past_v are
// donated, and each step binds present_k/present_v to the same memory, so the cache is
// updated in place — no copy of the cache per token. pos and the additive mask advance one
// position per step; the step's output y is fed back as the next x.
//
//   llama_decode MODEL [--steps N] [--strategy none|type1|greedy] [--target cpu|ref]
//
// MODEL: python3 models/generate.py --out DIR --size small --only llama3_layer --dtype f32
//        --batch 1  (inputs x, past_k, past_v, pos, mask; outputs y, present_k, present_v)
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "vtc/vtc.h"

namespace {

const vtc::TensorSpec& spec(const std::vector<vtc::TensorSpec>& specs, const std::string& name) {
  for (const vtc::TensorSpec& s : specs)
    if (s.name == name) return s;
  throw vtc::Error("the model has no tensor '" + name + "'");
}

// Deterministic values in [-1, 1) for the first token and the initial cache.
void fill(vtc::Tensor& t, uint32_t seed) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    seed = seed * 1664525u + 1013904223u;
    t.set_f64(i, double(seed >> 8) / double(1 << 23) - 1.0);
  }
}

double checksum(const vtc::Tensor& t) {
  double s = 0;
  for (int64_t i = 0; i < t.numel(); ++i)
    s += t.get_f64(i) * double(1 + i % 7);
  return s;
}

int run(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL [--steps N] [--strategy S] [--target T]\n", argv[0]);
    return 2;
  }
  std::string model = argv[1];
  int steps = 4;
  vtc::Options options;
  for (int i = 2; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--steps")
      steps = std::stoi(value);
    else if (flag == "--strategy" && vtc::parse_strategy_kind(value))
      options.strategy = *vtc::parse_strategy_kind(value);
    else if (flag == "--target" && vtc::parse_target_kind(value))
      options.target = *vtc::parse_target_kind(value);
    else
      throw vtc::Error("unknown option or value: " + flag + " " + value);
  }
  options.donate = {"past_k", "past_v"};
  vtc::Session session(model, options);

  vtc::Tensor x(spec(session.inputs(), "x").type);
  vtc::Tensor cache_k(spec(session.inputs(), "past_k").type);
  vtc::Tensor cache_v(spec(session.inputs(), "past_v").type);
  vtc::Tensor pos(spec(session.inputs(), "pos").type);
  vtc::Tensor mask(spec(session.inputs(), "mask").type);
  vtc::Tensor y(spec(session.outputs(), "y").type);
  fill(x, 1);
  fill(cache_k, 2);
  fill(cache_v, 3);
  int64_t cache_len = mask.shape().back();
  int64_t start = cache_len / 2; // the first half of the cache holds an earlier context
  std::printf("model %s: target %s, strategy %s, cache %lld positions, arena %lld bytes\n",
              model.c_str(), vtc::target_kind_name(options.target),
              vtc::strategy_kind_name(options.strategy), static_cast<long long>(cache_len),
              static_cast<long long>(session.peak_bytes()));

  for (int step = 0; step < steps && start + step < cache_len; ++step) {
    int64_t p = start + step;
    pos.set_i64(0, p);
    for (int64_t i = 0; i < mask.numel(); ++i)
      mask.set_f64(i, i % cache_len <= p ? 0.0 : -32768.0);
    auto t0 = std::chrono::steady_clock::now();
    session.run({{"x", vtc::TensorView::of(x)},
                 {"past_k", vtc::TensorView::of(cache_k)},
                 {"past_v", vtc::TensorView::of(cache_v)},
                 {"pos", vtc::TensorView::of(pos)},
                 {"mask", vtc::TensorView::of(mask)}},
                {{"y", vtc::TensorView::of(y)},
                 {"present_k", vtc::TensorView::of(cache_k)}, // in place: the same memory
                 {"present_v", vtc::TensorView::of(cache_v)}});
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("step %d (pos %lld): %.3f ms, checksum(y) %.9g\n", step, static_cast<long long>(p),
                ms, checksum(y));
    std::memcpy(x.raw(), y.raw(), x.nbytes()); // the next token's input
  }
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "llama_decode: error: %s\n", e.what());
    return 1;
  }
}
