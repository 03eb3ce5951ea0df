// Long decode runs lose nothing: 10,000 decode steps of the small Llama layer (f32, batch 1)
// through vtc::Session, the KV cache donated and updated in place, each step's y fed back as the
// next x, positions cycling through the layer's fixed 32-slot cache (pos = (step - 1) mod 32, the
// mask opening positions 0..pos). The first and every 500th step are checked against the reference
// interpreter fed the same state (x, cache, pos, mask) — outputs and the updated cache — and
// the resident memory after step 100 and after step 10,000 differ by less than 1 MB: nothing
// grows from one run to the next.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <unistd.h>

#include <gtest/gtest.h>

#include "jit/process.h"
#include "ref/compare.h"
#include "vtc/vtc.h"

namespace vtc {
namespace {

constexpr int kSteps = 10000;
constexpr int kCheckEvery = 500;
constexpr int kRssAfter = 100;
constexpr int64_t kRssSlackBytes = 1 << 20;

// Resident bytes of this process (the second field of /proc/self/statm, in pages).
int64_t resident_bytes() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return -1;
  int n = std::fscanf(f, "%ld %ld", &pages, &resident);
  std::fclose(f);
  return n == 2 ? int64_t(resident) * int64_t(sysconf(_SC_PAGESIZE)) : -1;
}

const TensorSpec& spec(const std::vector<TensorSpec>& specs, const std::string& name) {
  for (const TensorSpec& s : specs)
    if (s.name == name) return s;
  throw Error("the model has no tensor '" + name + "'");
}

// Deterministic values in [-1, 1).
void fill(Tensor& t, uint32_t seed) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    seed = seed * 1664525u + 1013904223u;
    t.set_f64(i, double(seed >> 8) / double(1 << 23) - 1.0);
  }
}

class LongDecode : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("vtc-long-decode-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    jit::ProcessResult r = jit::run_process(
        {VTC_PYTHON, std::string(VTC_SOURCE_DIR) + "/models/generate.py", "--out", dir_.string(),
         "--size", "small", "--only", "llama3_layer", "--dtype", "f32", "--batch", "1"});
    ASSERT_TRUE(r.ok()) << "models/generate.py: " << r.describe_status() << "\n" << r.output;
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }

  static std::string model() { return (dir_ / "llama3_layer_small_f32_b1.onnx").string(); }

  static std::filesystem::path dir_;
};
std::filesystem::path LongDecode::dir_;

TEST_F(LongDecode, TenThousandStepsMatchTheReferenceInConstantMemory) {
  Options options;
  options.donate = {"past_k", "past_v"};
  options.cache_dir = (dir_ / "cache").string();
  Session session(model(), options);
  Options ref_options = options;
  ref_options.target = TargetKind::ref;
  Session reference(model(), ref_options);

  Tensor x(spec(session.inputs(), "x").type);
  Tensor cache_k(spec(session.inputs(), "past_k").type);
  Tensor cache_v(spec(session.inputs(), "past_v").type);
  Tensor pos(spec(session.inputs(), "pos").type);
  Tensor mask(spec(session.inputs(), "mask").type);
  Tensor y(spec(session.outputs(), "y").type);
  fill(x, 1);
  fill(cache_k, 2);
  fill(cache_v, 3);
  const int64_t cache_len = mask.shape().back();
  ASSERT_EQ(cache_len, 32);
  ASSERT_EQ(cache_k.shape()[2], cache_len);

  int64_t rss_early = -1, rss_late = -1;
  int checked = 0;
  for (int step = 1; step <= kSteps; ++step) {
    const int64_t p = (step - 1) % cache_len;
    pos.set_i64(0, p);
    for (int64_t i = 0; i < mask.numel(); ++i)
      mask.set_f64(i, i % cache_len <= p ? 0.0 : -32768.0);
    const bool check = step == 1 || step % kCheckEvery == 0;
    HostTensorMap expected;
    if (check) // the reference's inputs: the state the compiled step is about to read
      expected = reference.run(HostTensorMap{
          {"x", x}, {"past_k", cache_k}, {"past_v", cache_v}, {"pos", pos}, {"mask", mask}});
    session.run({{"x", TensorView::of(x)},
                 {"past_k", TensorView::of(cache_k)},
                 {"past_v", TensorView::of(cache_v)},
                 {"pos", TensorView::of(pos)},
                 {"mask", TensorView::of(mask)}},
                {{"y", TensorView::of(y)},
                 {"present_k", TensorView::of(cache_k)}, // in place: the donated cache
                 {"present_v", TensorView::of(cache_v)}});
    if (check) {
      ++checked;
      for (const auto& [name, actual] : {std::pair<const char*, const Tensor*>{"y", &y},
                                         {"present_k", &cache_k},
                                         {"present_v", &cache_v}}) {
        Comparison c = compare_rel_l2(*actual, expected.at(name), model_tolerance(DType::f32));
        ASSERT_TRUE(c.ok) << "step " << step << " (pos " << p << "), " << name << ": " << c.message;
      }
    }
    std::memcpy(x.raw(), y.raw(), x.nbytes()); // the next token's input
    if (step == kRssAfter) rss_early = resident_bytes();
  }
  rss_late = resident_bytes();
  EXPECT_EQ(checked, kSteps / kCheckEvery + 1);
  for (int64_t i = 0; i < y.numel(); ++i)
    ASSERT_TRUE(std::isfinite(y.get_f64(i))) << "y[" << i << "] after " << kSteps << " steps";
  ASSERT_GT(rss_early, 0) << "no /proc/self/statm";
  std::printf("resident memory after step %d: %lld bytes; after step %d: %lld bytes (%+lld)\n",
              kRssAfter, static_cast<long long>(rss_early), kSteps,
              static_cast<long long>(rss_late), static_cast<long long>(rss_late - rss_early));
  EXPECT_LT(std::llabs(rss_late - rss_early), kRssSlackBytes)
      << "resident memory after step " << kRssAfter << ": " << rss_early << " bytes, after step "
      << kSteps << ": " << rss_late;
}

} // namespace
} // namespace vtc
