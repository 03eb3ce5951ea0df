// The analytic roofline's charge for reads through mappings: a read of one element a row
// costs a line an element, but reads of one step that reach the same tensor (a row's first 16
// elements and its 17th, as EfficientViT's linear attention reads its product's value and
// normaliser) share its lines and together cost at most its bytes.
#include <gtest/gtest.h>

#include "mapping/base.h"
#include "mapping/mapping.h"
#include "strategy/cost_model.h"

namespace vtc::testing {
namespace {

// v[r, c] = base[r, first + c] over [rows, width].
Mapping columns(const Base* base, int64_t rows, int64_t first, int64_t width) {
  return single_piece({rows, width}, base,
                      {IndexExpr::var(0, rows), IndexExpr::var(1, width) + first});
}

// Seconds the roofline (launch cost left out) gives one step reading f32 through `reads`.
double seconds(const std::vector<const Mapping*>& reads) {
  AnalyticParams params;
  params.launch = 0;
  const AnalyticCostModel model(params);
  std::vector<MappingProfile> profiles;
  for (const Mapping* m : reads)
    profiles.push_back(profile_mapping(*m, 4, params.line_bytes));
  StepQuery q;
  for (size_t k = 0; k < reads.size(); ++k) {
    OperandQuery o;
    o.bytes = reads[k]->shape[0] * reads[k]->shape[1] * 4;
    o.elem_bytes = 4;
    o.mapping = reads[k];
    o.profile = &profiles[k];
    q.operands.push_back(o);
  }
  return model.latency(q);
}

const double kBandwidth = AnalyticParams{}.bandwidth;

TEST(AnalyticCost, ReadsOfOneTensorShareItsLines) {
  static int key;
  const int64_t rows = 4096;
  const Base* base = intern_base(&key, "product", {rows, 17});
  const Mapping values = columns(base, rows, 0, 16), last = columns(base, rows, 16, 1);
  // One element a row: a line (64 bytes) for every 4 useful ones.
  EXPECT_NEAR(seconds({&last}), 16.0 * double(rows * 4) / kBandwidth, 1e-12);
  // Together no more than the tensor once, though the two alone add up to nearly twice that.
  const double base_seconds = double(rows * 17 * 4) / kBandwidth;
  EXPECT_GT(seconds({&values}) + seconds({&last}), 1.9 * base_seconds);
  EXPECT_LE(seconds({&values, &last}), base_seconds * (1 + 1e-9));
}

// Reads of different tensors are charged each on its own.
TEST(AnalyticCost, ReadsOfDifferentTensorsAddUp) {
  static int k0, k1;
  const int64_t rows = 4096;
  const Mapping a = columns(intern_base(&k0, "a", {rows, 17}), rows, 16, 1);
  const Mapping b = columns(intern_base(&k1, "b", {rows, 17}), rows, 16, 1);
  EXPECT_NEAR(seconds({&a, &b}), 2 * seconds({&a}), 1e-12);
}

} // namespace
} // namespace vtc::testing
