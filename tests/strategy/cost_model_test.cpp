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

OperandQuery read(const Mapping& m, const MappingProfile& p) {
  OperandQuery o;
  o.bytes = m.shape[0] * m.shape[1] * 4;
  o.elem_bytes = 4;
  o.mapping = &m;
  o.profile = &p;
  return o;
}

TEST(AnalyticCost, ReadsOfOneTensorShareItsLines) {
  static int key;
  const int64_t rows = 4096;
  const Base* base = intern_base(&key, "product", {rows, 17});
  const Mapping values = columns(base, rows, 0, 16), last = columns(base, rows, 16, 1);
  AnalyticParams params;
  params.launch = 0;
  const AnalyticCostModel model(params);
  const MappingProfile pv = profile_mapping(values, 4, params.line_bytes);
  const MappingProfile pl = profile_mapping(last, 4, params.line_bytes);
  const double base_seconds = double(rows * 17 * 4) / params.bandwidth;

  StepQuery alone;
  alone.operands = {read(last, pl)};
  // One element a row: a line (64 bytes) for every 4 useful ones.
  EXPECT_NEAR(model.latency(alone), 16.0 * double(rows * 4) / params.bandwidth, 1e-12);

  StepQuery both;
  both.operands = {read(values, pv), read(last, pl)};
  // Together no more than the tensor once, though the two alone add up to nearly twice that.
  StepQuery values_only;
  values_only.operands = {read(values, pv)};
  EXPECT_GT(model.latency(values_only) + model.latency(alone), 1.9 * base_seconds);
  EXPECT_LE(model.latency(both), base_seconds * (1 + 1e-9));
}

// Reads of different tensors are charged each on its own.
TEST(AnalyticCost, ReadsOfDifferentTensorsAddUp) {
  static int k0, k1;
  const int64_t rows = 4096;
  const Base* a = intern_base(&k0, "a", {rows, 17});
  const Base* b = intern_base(&k1, "b", {rows, 17});
  const Mapping ma = columns(a, rows, 16, 1), mb = columns(b, rows, 16, 1);
  AnalyticParams params;
  params.launch = 0;
  const AnalyticCostModel model(params);
  const MappingProfile pa = profile_mapping(ma, 4, params.line_bytes);
  const MappingProfile pb = profile_mapping(mb, 4, params.line_bytes);
  StepQuery one, two;
  one.operands = {read(ma, pa)};
  two.operands = {read(ma, pa), read(mb, pb)};
  EXPECT_NEAR(model.latency(two), 2 * model.latency(one), 1e-12);
}

} // namespace
} // namespace vtc::testing
