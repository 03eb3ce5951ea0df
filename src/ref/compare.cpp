// Tensor comparison.
#include "ref/compare.h"

#include <cmath>
#include <sstream>

namespace vtc {

namespace {

// Shape and dtype must agree before values are compared.
bool same_type(const Tensor& a, const Tensor& e, Comparison& c) {
  if (a.type() == e.type()) return true;
  c.message = "got " + type_str(a.type()) + ", expected " + type_str(e.type());
  return false;
}

std::string index_str(const Shape& shape, int64_t flat) {
  Shape idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return shape_str(idx);
}

} // namespace

Comparison compare_allclose(const Tensor& a, const Tensor& e, double rtol, double atol) {
  Comparison c;
  if (!same_type(a, e, c)) return c;
  double diff2 = 0, ref2 = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.get_f64(i), y = e.get_f64(i);
    if (std::isnan(x) && std::isnan(y)) continue;
    bool exact = !is_float(a.dtype());
    double err = x == y ? 0.0 : std::fabs(x - y);
    bool bad = exact ? x != y : !(err <= atol + rtol * std::fabs(y));
    if (std::isinf(y) && x == y) bad = false;
    if (bad && c.message.empty()) {
      std::ostringstream os;
      os << "at " << index_str(a.shape(), i) << ": got " << x << ", expected " << y;
      c.message = os.str();
    }
    if (std::isfinite(err)) c.max_abs_err = std::max(c.max_abs_err, err);
    if (std::isfinite(err)) diff2 += err * err;
    if (std::isfinite(y)) ref2 += y * y;
  }
  c.rel_l2_err = ref2 > 0 ? std::sqrt(diff2 / ref2) : std::sqrt(diff2);
  c.ok = c.message.empty();
  return c;
}

Comparison compare_rel_l2(const Tensor& a, const Tensor& e, double tol) {
  Comparison c = compare_allclose(a, e, 0, 0);
  if (!same_type(a, e, c)) return c;
  bool nan_mismatch = false;
  for (int64_t i = 0; i < a.numel(); ++i)
    if (std::isnan(a.get_f64(i)) != std::isnan(e.get_f64(i))) nan_mismatch = true;
  c.ok = !nan_mismatch && c.rel_l2_err <= tol;
  std::ostringstream os;
  if (nan_mismatch)
    os << "NaN where the expected value is not (or the reverse)";
  else if (!c.ok)
    os << "relative L2 error " << c.rel_l2_err << " > " << tol;
  c.message = os.str();
  return c;
}

double model_tolerance(DType t) {
  switch (t) {
  case DType::f32:
    return 1e-5;
  case DType::f64:
    return 1e-12;
  case DType::f16:
    return 1e-2;
  case DType::bf16:
    return 1e-2;
  case DType::i64:
  case DType::i32:
  case DType::i8:
  case DType::u8:
  case DType::boolean:
    return 0;
  }
  return 0;
}

} // namespace vtc
