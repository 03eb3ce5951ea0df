// Comparing a computed tensor with an expected one: the tolerances vtc states per dtype and
// the ONNX backend-test rule, with a short description of the worst mismatch.
#pragma once

#include <string>

#include "vtc/tensor.h"

namespace vtc {

struct Comparison {
  bool ok = false;
  double max_abs_err = 0;
  double rel_l2_err = 0; // ||a - e|| / ||e|| (0 when both are zero)
  std::string message;   // empty when ok; else the first mismatch, with its index
};

// Elementwise |a - e| <= atol + rtol * |e| (NaN equals NaN; integers and bools exactly).
Comparison compare_allclose(const Tensor& actual, const Tensor& expected, double rtol, double atol);
// Relative L2 error against `tol` (vtc's whole-model rule: f32 1e-5, f16/bf16 1e-2).
Comparison compare_rel_l2(const Tensor& actual, const Tensor& expected, double tol);
// The whole-model tolerance vtc states for a dtype.
double model_tolerance(DType t);

} // namespace vtc
