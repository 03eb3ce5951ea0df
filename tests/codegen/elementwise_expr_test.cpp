// The expressions code generation writes for elementwise ops: the functions whose result is
// rounded to 16 bits next take the dialect's fast forms, the others the precise ones.
#include <gtest/gtest.h>

#include "codegen/elementwise_expr.h"

namespace vtc {
namespace {

// The expression of a one-input `op` whose input and output are `dtype`.
std::string expression_of(const std::string& op, DType dtype) {
  Graph g;
  Value* x = g.add_value("x");
  Value* y = g.add_value("y");
  x->type.dtype = y->type.dtype = dtype;
  Node* n = g.add_node(op, op, {x}, {y});
  return elementwise_expr(*n, {"a"}).value_or("(none)");
}

TEST(ElementwiseExpr, SixteenBitResultsTakeTheFastForms) {
  for (DType t : {DType::f16, DType::bf16}) {
    EXPECT_EQ(expression_of("Sigmoid", t), "vtc_sigmoid16(a)");
    EXPECT_EQ(expression_of("Exp", t), "vtc_exp16(a)");
    EXPECT_EQ(expression_of("Tanh", t), "vtc_tanh16(a)");
    EXPECT_EQ(expression_of("Erf", t), "vtc_erf16(a)");
    EXPECT_NE(expression_of("Gelu", t).find("vtc_erf16("), std::string::npos);
  }
}

TEST(ElementwiseExpr, WiderResultsKeepThePreciseForms) {
  for (DType t : {DType::f32, DType::f64}) {
    EXPECT_EQ(expression_of("Sigmoid", t), "vtc_sigmoid(a)");
    EXPECT_EQ(expression_of("Exp", t), "vtc_exp(a)");
    EXPECT_EQ(expression_of("Tanh", t), "vtc_tanh(a)");
    EXPECT_EQ(expression_of("Erf", t), "vtc_erf(a)");
    EXPECT_NE(expression_of("Gelu", t).find("vtc_erf("), std::string::npos);
  }
}

} // namespace
} // namespace vtc
