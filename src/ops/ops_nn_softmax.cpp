// Softmax, LogSoftmax and Hardmax along one axis, with the opset >= 13 semantics: the axis
// attribute (default -1) names the single dim normalised over. Opset < 13 normalised over the
// coerced 2-D view [prod(dims < axis), prod(dims >= axis)] with a default axis of 1. The two
// agree whenever that axis is the last dim; since a node cannot see its model's opset, other
// opset < 13 nodes must reach vtc as Flatten(axis) -> Softmax(axis=1) -> Reshape. Softmax
// subtracts the maximum before exponentiating.
#include <cmath>
#include <limits>

#include "ops/ops_nn_common.h"

namespace vtc::nn {
namespace {

int64_t softmax_axis(const Node& node, int rank) {
  return normalize_axis(node, node.attr_int("axis", -1), rank);
}

std::vector<TensorType> infer_softmax(const InferInputs& in) {
  check_input_count(in, 1, 1);
  check_output_count(in.node, 1, 1);
  const TensorType& x = in.type(0);
  check_float(in.node, x, "input");
  check_rank_at_least(in.node, x, 1, "input");
  softmax_axis(in.node, x.rank());
  return {x};
}

std::vector<Tensor> eval_softmax(const Node& node, const std::vector<const Tensor*>& in) {
  AxisView v = axis_view(in[0]->shape(), softmax_axis(node, in[0]->rank()));
  enum class Kind { soft, log_soft, hard };
  Kind kind = node.op == "Softmax"      ? Kind::soft
              : node.op == "LogSoftmax" ? Kind::log_soft
                                        : Kind::hard;
  std::vector<double> x = load_f64(*in[0]);
  std::vector<double> y(x.size(), 0.0);
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t i = 0; i < v.inner; ++i) {
      double max = -std::numeric_limits<double>::infinity();
      int64_t arg = 0;
      for (int64_t a = 0; a < v.len; ++a) {
        double xv = x[size_t(v.at(o, a, i))];
        if (xv > max) {
          max = xv;
          arg = a;
        }
      }
      switch (kind) {
      case Kind::hard:
        if (v.len > 0) y[size_t(v.at(o, arg, i))] = 1.0;
        break;
      case Kind::soft:
      case Kind::log_soft: {
        double sum = 0;
        for (int64_t a = 0; a < v.len; ++a)
          sum += std::exp(x[size_t(v.at(o, a, i))] - max);
        for (int64_t a = 0; a < v.len; ++a) {
          size_t k = size_t(v.at(o, a, i));
          y[k] = kind == Kind::soft ? std::exp(x[k] - max) / sum : x[k] - max - std::log(sum);
        }
        break;
      }
      }
    }
  std::vector<Tensor> r;
  r.emplace_back(node.outputs[0]->type);
  store_f64(r[0], y);
  return r;
}

} // namespace

void register_softmax_ops(OpTable& t) {
  t.add(OpDef{"Softmax", OpKind::compute, infer_softmax, eval_softmax});
  t.add(OpDef{"LogSoftmax", OpKind::compute, infer_softmax, eval_softmax});
  t.add(OpDef{"Hardmax", OpKind::compute, infer_softmax, eval_softmax});
}

} // namespace vtc::nn
