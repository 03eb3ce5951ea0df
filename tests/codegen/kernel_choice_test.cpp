// The choice between templates and OpenBLAS: the measured rule on shapes on both sides of it,
// the OpenBLAS form of MatMul and Gemm kernels (batches folded into rows or given offsets,
// transpositions), which kernels have no form (f16, a prologue-computed operand, a cast
// output), the modes never / always / auto, and the explain lines.
#include <gtest/gtest.h>

#include "codegen/library_gemm.h"
#include "frontend/onnx_import.h"
#include "model_builder.h"
#include "passes/fusion.h"
#include "target/cpu_gemm_rule.h"
#include "target/cpu_kernel_choice.h"

namespace vtc {
namespace {

using testing::ModelBuilder;

Tensor zeros(DType t, const Shape& s) {
  return Tensor(t, s);
}

KernelGraph fused(const ModelBuilder& b, Graph& g) {
  g = import_onnx_bytes(b.bytes(), ".", "m.onnx");
  return fuse(g);
}

const Kernel& kernel_of(const KernelGraph& kg, const std::string& anchor) {
  for (const Kernel& k : kg.kernels)
    if (k.anchor && k.anchor->name == anchor) return k;
  throw std::runtime_error("no kernel anchored at " + anchor);
}

bool prefer(int64_t M, int64_t N, int64_t K, int64_t folded = 1, int64_t batch = 1) {
  return prefer_library_gemm({batch, M, N, K, folded});
}

TEST(GemmLibraryRule, MeasuredWinsOnly) {
  // A single column: sgemv, about 10x the template.
  EXPECT_TRUE(prefer(4096, 1, 4096));
  EXPECT_TRUE(prefer(512, 1, 512));
  // Decode at batch 1 (a tie) and the template's GEMV rows (M <= 4): the template.
  EXPECT_FALSE(prefer(1, 4096, 4096));
  EXPECT_FALSE(prefer(1, 14336, 4096));
  EXPECT_FALSE(prefer(4, 4096, 4096));
  // Decode at batch 16 as [16, 1, K] . [K, N]: the template would stream B 16 times.
  EXPECT_TRUE(prefer(16, 4096, 4096, 16));
  EXPECT_TRUE(prefer(16, 64, 64, 16));
  // At batch 4 only on large weights.
  EXPECT_TRUE(prefer(4, 4096, 4096, 4));
  EXPECT_FALSE(prefer(4, 512, 512, 4));
  // 5..24 rows on large weights: OpenBLAS; on small ones, the template.
  EXPECT_TRUE(prefer(16, 4096, 4096));
  EXPECT_TRUE(prefer(16, 14336, 4096));
  EXPECT_FALSE(prefer(16, 512, 512));
  EXPECT_FALSE(prefer(32, 4096, 4096));
  // Prefill-like and small-model products: the template.
  EXPECT_FALSE(prefer(128, 4096, 4096));
  EXPECT_FALSE(prefer(512, 512, 512));
  EXPECT_FALSE(prefer(4 * 196, 256, 256, 4));
  // Batches of products that do not fold: the template.
  EXPECT_FALSE(prefer(16, 4096, 4096, 1, 32));
}

TEST(LibraryGemmForm, SharedWeightFoldsBatchesIntoRows) {
  ModelBuilder b;
  b.input("x", DType::f32, {4, 3, 8});
  b.initializer("w", zeros(DType::f32, {8, 5}));
  b.node("MatMul", {"x", "w"}, {"y"}, "proj");
  b.output("y");
  Graph g;
  KernelGraph kg = fused(b, g);
  auto form = library_gemm_form(kernel_of(kg, "proj"));
  ASSERT_TRUE(form);
  EXPECT_EQ(form->batch, 1);
  EXPECT_EQ(form->M, 12);
  EXPECT_EQ(form->folded, 4);
  EXPECT_EQ(form->N, 5);
  EXPECT_EQ(form->K, 8);
  EXPECT_TRUE(form->a_offsets.empty());
}

TEST(LibraryGemmForm, BatchedWeightGivesBroadcastOffsets) {
  ModelBuilder b;
  b.input("a", DType::f32, {2, 1, 3, 4}); // batches (2, 1) against (1, 3): output (2, 3)
  b.input("b", DType::f32, {3, 4, 5});
  b.node("MatMul", {"a", "b"}, {"y"}, "bmm");
  b.output("y");
  Graph g;
  KernelGraph kg = fused(b, g);
  auto form = library_gemm_form(kernel_of(kg, "bmm"));
  ASSERT_TRUE(form);
  EXPECT_EQ(form->batch, 6);
  EXPECT_EQ(form->M, 3);
  EXPECT_EQ(form->folded, 1);
  EXPECT_EQ(form->a_offsets, (std::vector<int64_t>{0, 0, 0, 12, 12, 12}));
  EXPECT_EQ(form->b_offsets, (std::vector<int64_t>{0, 20, 40, 0, 20, 40}));
  KernelCall call = library_gemm_call(*form, "A", "B", "C");
  EXPECT_EQ(call.function, "blas_sgemm_batched");
  EXPECT_EQ(call.locals, (std::vector<std::string>{
                             "static const int64_t a_offsets[] = {0, 0, 0, 12, 12, 12};",
                             "static const int64_t b_offsets[] = {0, 20, 40, 0, 20, 40};"}));
  EXPECT_EQ(call.args, (std::vector<std::string>{"false", "false", "6", "3", "5", "4", "A",
                                                 "a_offsets", "B", "b_offsets", "C"}));
}

TEST(LibraryGemmForm, GemmTranspositions) {
  ModelBuilder b;
  b.input("a", DType::f32, {7, 3}); // transA: M = 3, K = 7
  b.input("b", DType::f32, {5, 7}); // transB: N = 5
  onnx::NodeProto& n = b.node("Gemm", {"a", "b"}, {"y"}, "gemm");
  ModelBuilder::set_int(n, "transA", 1);
  ModelBuilder::set_int(n, "transB", 1);
  b.output("y");
  Graph g;
  KernelGraph kg = fused(b, g);
  auto form = library_gemm_form(kernel_of(kg, "gemm"));
  ASSERT_TRUE(form);
  EXPECT_TRUE(form->trans_a && form->trans_b);
  EXPECT_EQ(form->M, 3);
  EXPECT_EQ(form->N, 5);
  EXPECT_EQ(form->K, 7);
}

TEST(LibraryGemmForm, NoneForHalfPrologueOrCastOutput) {
  ModelBuilder b;
  b.input("h", DType::f16, {4, 8});
  b.initializer("wh", zeros(DType::f16, {8, 8}));
  b.input("x", DType::f32, {4, 8});
  b.input("s", DType::f32, {4, 1});
  b.initializer("w", zeros(DType::f32, {8, 8}));
  b.node("MatMul", {"h", "wh"}, {"yh"}, "half");
  b.node("Mul", {"x", "s"}, {"xs"}, "scale");
  b.node("MatMul", {"xs", "w"}, {"yp"}, "prologue");
  b.node("MatMul", {"x", "w"}, {"mm"}, "cast");
  ModelBuilder::set_int(b.node("Cast", {"mm"}, {"yc"}, "to_half"), "to", 10);
  b.output("yh");
  b.output("yp");
  b.output("yc");
  Graph g;
  KernelGraph kg = fused(b, g);
  EXPECT_FALSE(library_gemm_form(kernel_of(kg, "half")));
  EXPECT_FALSE(library_gemm_form(kernel_of(kg, "prologue")));
  EXPECT_FALSE(library_gemm_form(kernel_of(kg, "cast")));
  if (!openblas_available()) GTEST_SKIP() << "built without OpenBLAS";
  choose_kernel_impls(kg, LibraryMode::always);
  for (const Kernel& k : kg.kernels)
    EXPECT_EQ(k.impl, KernelImpl::vtc_template) << k.name;
}

TEST(KernelChoice, ModesAndExplainLines) {
  if (!openblas_available()) GTEST_SKIP() << "built without OpenBLAS";
  ModelBuilder b;
  b.input("x", DType::f32, {64, 64});
  b.initializer("col", zeros(DType::f32, {64, 1}));
  b.initializer("w", zeros(DType::f32, {64, 64}));
  b.node("MatMul", {"x", "col"}, {"y1"}, "column"); // N = 1: auto takes OpenBLAS
  b.node("MatMul", {"x", "w"}, {"y2"}, "square");   // 64^3: auto keeps the template
  b.output("y1");
  b.output("y2");
  Graph g;
  KernelGraph kg = fused(b, g);

  choose_kernel_impls(kg, LibraryMode::automatic);
  EXPECT_EQ(kernel_of(kg, "column").impl, KernelImpl::openblas_sgemm);
  EXPECT_EQ(kernel_of(kg, "square").impl, KernelImpl::vtc_template);
  EXPECT_EQ(library_operands(kernel_of(kg, "column")).size(), 3u);
  EXPECT_TRUE(library_operands(kernel_of(kg, "square")).empty());
  std::string text = kernel_impl_text(kg);
  EXPECT_NE(text.find("openblas sgemm  M=64 N=1 K=64"), std::string::npos) << text;
  EXPECT_NE(text.find("template        M=64 N=64 K=64"), std::string::npos) << text;

  choose_kernel_impls(kg, LibraryMode::always);
  EXPECT_EQ(kernel_of(kg, "square").impl, KernelImpl::openblas_sgemm);
  choose_kernel_impls(kg, LibraryMode::never);
  EXPECT_EQ(kernel_of(kg, "column").impl, KernelImpl::vtc_template);

  EXPECT_EQ(parse_library_mode("auto"), LibraryMode::automatic);
  EXPECT_EQ(parse_library_mode("never"), LibraryMode::never);
  EXPECT_EQ(parse_library_mode("always"), LibraryMode::always);
  EXPECT_FALSE(parse_library_mode("yes"));
}

} // namespace
} // namespace vtc
