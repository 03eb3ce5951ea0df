// Graph building and exhaustive mapping checks for the property tests.
#include "harness.h"

#include <cmath>
#include <set>

#include "ops/op_registry.h"
#include "ref/interpreter.h"
#include "vtc/error.h"

namespace vtc::test {

Value* Builder::input(const Shape& shape, double base) {
  Value* v = g.add_value("x" + std::to_string(counter++));
  v->type = {DType::f32, shape};
  v->has_type = true;
  v->is_graph_input = true;
  g.inputs.push_back(v);
  Tensor t(DType::f32, shape);
  for (int64_t k = 0; k < t.numel(); ++k)
    t.set_f64(k, base + double(k));
  env[v] = std::move(t);
  return v;
}

Value* Builder::ints(const Tensor& t, bool constant) {
  std::string name = (constant ? "c" : "idx") + std::to_string(counter++);
  if (constant) {
    Value* v = g.add_constant(name, t);
    env[v] = t;
    return v;
  }
  Value* v = g.add_value(name);
  v->type = t.type();
  v->has_type = true;
  v->is_graph_input = true;
  g.inputs.push_back(v);
  env[v] = t;
  return v;
}

Node* Builder::node(const std::string& op, std::vector<Value*> ins, int n_outputs,
                    std::map<std::string, Attribute> attrs) {
  std::vector<Value*> outs;
  for (int k = 0; k < n_outputs; ++k)
    outs.push_back(g.add_value("v" + std::to_string(counter++)));
  Node* n = g.add_node(op, op + std::to_string(counter++), ins, outs);
  n->attrs = std::move(attrs);
  const OpDef* def = find_op(op);
  VTC_CHECK(def) << "no op " << op;
  std::vector<TensorType> types = def->infer(InferInputs{*n});
  for (size_t k = 0; k < outs.size(); ++k) {
    outs[k]->type = types[k];
    outs[k]->has_type = true;
  }
  std::vector<const Tensor*> in_tensors;
  for (Value* v : ins)
    in_tensors.push_back(v ? &env.at(v) : nullptr);
  std::vector<Tensor> results = eval_node(*n, in_tensors);
  for (size_t k = 0; k < outs.size(); ++k)
    env[outs[k]] = std::move(results[k]);
  return n;
}

void BaseEnv::add(const Builder& b) {
  for (auto& [v, t] : b.env)
    tensors[value_base(v)] = &t;
}

void BaseEnv::add(const RuleResult& r) {
  for (auto& [base, t] : r.tables)
    tensors[base] = &t;
}

const Tensor& BaseEnv::at(const Base* base) const {
  auto it = tensors.find(base);
  VTC_CHECK(it != tensors.end()) << "no tensor for base " << base->name;
  return *it->second;
}

static int64_t flat_of(const Tensor& t, std::span<const int64_t> idx, const std::string& what) {
  VTC_CHECK(int(idx.size()) == t.rank()) << what << ": index rank " << idx.size();
  Shape st = shape_strides(t.shape());
  int64_t off = 0;
  for (size_t d = 0; d < idx.size(); ++d) {
    VTC_CHECK(idx[d] >= 0 && idx[d] < t.shape()[d])
        << what << ": index " << idx[d] << " out of range on dim " << d << " of "
        << shape_str(t.shape());
    off += idx[d] * st[d];
  }
  return off;
}

LoadFn BaseEnv::loader() const {
  return [this](const Base* b, std::span<const int64_t> idx) {
    const Tensor& t = at(b);
    return t.get_i64(flat_of(t, idx, "load " + b->name));
  };
}

static bool same(double a, double b) {
  return a == b || (std::isnan(a) && std::isnan(b));
}

std::string check_read(const Mapping& m, const Tensor& expected, const BaseEnv& env) {
  if (m.shape != expected.shape())
    return "shape " + shape_str(m.shape) + " vs " + shape_str(expected.shape());
  LoadFn load = env.loader();
  Shape idx(m.shape.size(), 0);
  for (int64_t flat = 0; flat < expected.numel(); ++flat) {
    std::optional<Located> loc = locate(m, idx, load);
    if (!loc) return "no piece at " + shape_str(idx);
    double got =
        loc->base
            ? env.at(loc->base).get_f64(flat_of(env.at(loc->base), loc->index, loc->base->name))
            : loc->value;
    if (!same(got, expected.get_f64(flat)))
      return "at " + shape_str(idx) + ": mapping gives " + std::to_string(got) + " (" +
             (loc->base ? loc->base->name + shape_str(loc->index) : "constant") + "), reference " +
             std::to_string(expected.get_f64(flat));
    for (size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < m.shape[d]) break;
      idx[d] = 0;
    }
  }
  return "";
}

std::string check_same_as(const Mapping& m, const Mapping& original,
                          const std::function<Shape(const Shape&)>& at, const BaseEnv& env) {
  LoadFn load = env.loader();
  auto where = [](const std::optional<Located>& l) {
    if (!l) return std::string("nowhere");
    return l->base ? l->base->name + shape_str(l->index) : "constant " + std::to_string(l->value);
  };
  Shape idx(m.shape.size(), 0);
  for (int64_t flat = 0; flat < shape_numel(m.shape); ++flat) {
    Shape orig = at(idx);
    std::optional<Located> got = locate(m, idx, load), want = locate(original, orig, load);
    bool same_place = got && want && got->base == want->base &&
                      (got->base ? got->index == want->index : same(got->value, want->value));
    if (!same_place)
      return "at " + shape_str(idx) + ": " + where(got) + ", original at " + shape_str(orig) +
             ": " + where(want);
    for (size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < m.shape[d]) break;
      idx[d] = 0;
    }
  }
  return "";
}

std::string check_writes(const std::vector<std::pair<const Mapping*, const Tensor*>>& writes,
                         const BaseEnv& env, bool* all_written) {
  LoadFn load = env.loader();
  std::map<const Base*, Tensor> sim;
  std::map<const Base*, std::set<int64_t>> written;
  for (auto& [m, src] : writes) {
    Shape idx(m->shape.size(), 0);
    for (int64_t flat = 0; flat < src->numel(); ++flat) {
      std::optional<Located> loc = locate(*m, idx, load);
      if (!loc || !loc->base) return "element " + shape_str(idx) + " is written nowhere";
      const Tensor& ref = env.at(loc->base);
      auto it = sim.try_emplace(loc->base, ref.type()).first;
      int64_t off = flat_of(ref, loc->index, loc->base->name);
      it->second.set_f64(off, src->get_f64(flat));
      written[loc->base].insert(off);
      for (size_t d = idx.size(); d-- > 0;) {
        if (++idx[d] < m->shape[d]) break;
        idx[d] = 0;
      }
    }
  }
  *all_written = true;
  for (auto& [base, offs] : written) {
    const Tensor& ref = env.at(base);
    if (int64_t(offs.size()) != ref.numel()) *all_written = false;
    for (int64_t off : offs)
      if (!same(sim.at(base).get_f64(off), ref.get_f64(off)))
        return base->name + " element " + std::to_string(off) + ": written " +
               std::to_string(sim.at(base).get_f64(off)) + ", reference " +
               std::to_string(ref.get_f64(off));
  }
  return "";
}

} // namespace vtc::test
