// Graph makers, workload loading and the strategy simulator.
#include "support.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <mutex>

#include "frontend/infer_shapes.h"
#include "frontend/onnx_import.h"
#include "mapping/rules.h"
#include "passes/canonicalize.h"
#include "passes/fusion.h"
#include "ref/random_inputs.h"
#include "strategy/synthetic.h"
#include "vtc/error.h"

namespace vtc::testing {

GraphMaker::GraphMaker() : g_(std::make_unique<Graph>()) {
  g_->name = "test";
  g_->opset = 17;
}

Value* GraphMaker::input(const std::string& name, DType t, const Shape& shape) {
  Value* v = g_->add_value(name);
  v->type = {t, shape};
  v->has_type = true;
  v->is_graph_input = true;
  g_->inputs.push_back(v);
  return v;
}

Value* GraphMaker::ints(const std::string& name, const std::vector<int64_t>& v) {
  return g_->add_constant(name, Tensor::from<int64_t>({int64_t(v.size())}, v));
}

Value* GraphMaker::floats(const std::string& name, const Shape& shape, float scale) {
  std::vector<float> data(size_t(shape_numel(shape)));
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = scale * float(int(i % 11) - 5);
  return g_->add_constant(name, Tensor::from<float>(shape, data));
}

Node* GraphMaker::node(const std::string& op, const std::string& name,
                       const std::vector<Value*>& inputs, const std::vector<std::string>& outputs) {
  std::vector<Value*> outs;
  for (const std::string& o : outputs)
    outs.push_back(g_->add_value(o));
  return g_->add_node(op, name, inputs, outs);
}

Value* GraphMaker::op(const std::string& op, const std::string& name,
                      const std::vector<Value*>& inputs) {
  return node(op, name, inputs, {name})->outputs[0];
}

void GraphMaker::output(Value* v) {
  v->is_graph_output = true;
  g_->outputs.push_back(v);
}

std::unique_ptr<Graph> GraphMaker::finish() {
  infer_shapes(*g_, 0);
  return std::move(g_);
}

std::unique_ptr<Graph> paper_figure6_graph() {
  GraphMaker m;
  Value* x = m.input("x", DType::f32, {1, 64});
  Value* k_cache = m.input("k_cache", DType::f32, {1, 4, 32, 16});
  Value* idx = m.input("idx", DType::i64, {1, 4, 1, 3});
  Value* a = m.node("MatMul", "qkv", {x, m.floats("W", {64, 192}, 0.01f)}, {"a"})->outputs[0];
  Node* split = m.node("Split", "split", {a, m.ints("sizes", {64, 64, 64})}, {"q", "b", "v"});
  split->attrs["axis"] = int64_t(1);
  Value* q_out = m.op("Mul", "q_out", {split->outputs[0], m.floats("two", {1}, 1.0f)});
  Value* v_out = m.op("Mul", "v_out", {split->outputs[2], m.floats("three", {1}, 2.0f)});
  Value* c =
      m.node("Reshape", "reshape", {split->outputs[1], m.ints("shape", {1, 4, 1, 16})}, {"c"})
          ->outputs[0];
  Value* d = m.node("ScatterND", "scatter", {k_cache, idx, c}, {"d"})->outputs[0];
  Node* att = m.node("ReduceMean", "attention", {d}, {"att"});
  att->attrs["axes"] = std::vector<int64_t>{2};
  for (Value* v : {q_out, v_out, d, att->outputs[0]})
    m.output(v);
  return m.finish();
}

TensorMap paper_figure6_inputs(const Graph& g) {
  Tensor idx(DType::i64, {1, 4, 1, 3});
  for (int h = 0; h < 4; ++h) {
    idx.set_i64(h * 3 + 1, h);
    idx.set_i64(h * 3 + 2, 5);
  }
  return complete_inputs(g, {{"idx", idx}});
}

Model unfused(std::unique_ptr<Graph> g) {
  Model m;
  m.graph = std::move(g);
  m.kg = unfused_kernel_graph(*m.graph);
  return m;
}

namespace {

std::string generated_dir() {
  static std::once_flag once;
  static std::string dir;
  std::call_once(once, [] {
    dir = (std::filesystem::temp_directory_path() /
           ("vtc_strategy_models_" + std::to_string(::getpid())))
              .string();
    std::string cmd = "python3 " + std::string(VTC_SOURCE_DIR) + "/models/generate.py --out " +
                      dir + " --size small --dtype f32 --batch 1,16 > /dev/null";
    int rc = std::system(cmd.c_str());
    VTC_CHECK(rc == 0) << "models/generate.py failed (" << rc << "): " << cmd;
    static struct Cleanup {
      ~Cleanup() { std::filesystem::remove_all(dir); }
    } cleanup;
  });
  return dir;
}

} // namespace

std::string workload_path(const std::string& file_name) {
  return generated_dir() + "/" + file_name;
}

Model workload(const std::string& file_name) {
  Model m;
  m.graph = std::make_unique<Graph>(import_onnx_file(workload_path(file_name)));
  canonicalize(*m.graph);
  m.kg = fuse(*m.graph);
  return m;
}

int find_edge(const Vtog& g, const std::string& from, const std::string& to, OptionKind kind) {
  for (const VtogEdge& e : g.edges)
    if (g.tensor_name(e.from) == from && g.tensor_name(e.to) == to &&
        g.options[size_t(e.option)].kind == kind)
      return e.id;
  ADD_FAILURE() << "no " << option_kind_name(kind) << " edge " << from << " -> " << to;
  return -1;
}

std::vector<std::string> edge_lines(const Vtog& g) {
  std::vector<std::string> out;
  for (const VtogEdge& e : g.edges)
    out.push_back(g.edge_name(e.id) + " " + option_kind_name(g.options[size_t(e.option)].kind) +
                  " " + profitability_name(e.contiguity.type));
  return out;
}

TensorMap complete_inputs(const Graph& g, TensorMap given, uint64_t seed) {
  for (const Value* v : g.inputs)
    if (!given.count(v->name)) given[v->name] = random_tensor(v->type, seed++);
  return given;
}

// ---- the simulator ----

namespace {

int64_t flat_of(std::span<const int64_t> idx, const Shape& shape) {
  int64_t f = 0;
  for (size_t d = 0; d < shape.size(); ++d)
    f = f * shape[d] + idx[d];
  return f;
}

std::vector<int64_t> index_of(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return idx;
}

class Simulator {
public:
  Simulator(const Strategy& s, const TensorMap& inputs) : s_(s), g_(*s.vtog), inputs_(inputs) {
    store_.resize(g_.tensors.size());
    for (size_t t = 0; t < g_.tensors.size(); ++t) {
      const Value* v = g_.tensors[t].value;
      if (s_.mappings[t]) continue;
      if (v->is_constant())
        store_[t] = *v->constant;
      else if (v->is_graph_input)
        store_[t] = inputs.at(v->name);
      else
        store_[t] = Tensor(v->type);
    }
    for (auto& [b, t] : s_.tables())
      tables_.push_back({b, t});
    load_ = [this](const Base* b, std::span<const int64_t> idx) {
      const Tensor& t = storage_of(b);
      return t.get_i64(flat_of(idx, t.shape()));
    };
  }

  TensorMap run() {
    for (const VtogStep& st : g_.steps) {
      if (st.step.is_kernel)
        run_kernel(g_.kg->kernels[size_t(st.step.index)]);
      else
        run_copy(st.step.index);
    }
    TensorMap out;
    for (const Value* v : g_.kg->graph->outputs)
      out[v->name] = value(v, nullptr);
    return out;
  }

private:
  Tensor& storage_of(const Base* b) {
    int t = g_.tensor_of(b);
    if (t >= 0) {
      VTC_CHECK(store_[size_t(t)]) << "simulator: " << b->name << " has no storage";
      return *store_[size_t(t)];
    }
    for (auto& [base, tensor] : tables_)
      if (base == b) return tensor;
    VTC_FAIL() << "simulator: no storage for base " << b->name;
  }

  // The element of virtual tensor t at flat index i: its physical location.
  std::optional<std::pair<Tensor*, int64_t>> locate_element(int t, int64_t i, double* constant) {
    const Mapping& m = *s_.mappings[size_t(t)];
    std::vector<int64_t> idx = index_of(i, m.shape);
    std::optional<Located> loc = locate(m, idx, load_);
    VTC_CHECK(loc) << "simulator: no piece of " << g_.tensor_name(t) << " covers element " << i;
    if (!loc->base) {
      *constant = loc->value;
      return std::nullopt;
    }
    Tensor& p = storage_of(loc->base);
    return std::pair<Tensor*, int64_t>{&p, flat_of(loc->index, p.shape())};
  }

  Tensor read(int t) {
    if (!s_.mappings[size_t(t)]) return *store_[size_t(t)];
    Tensor out(g_.tensors[size_t(t)].value->type);
    size_t es = dtype_size(out.dtype());
    for (int64_t i = 0; i < out.numel(); ++i) {
      double c = 0;
      auto at = locate_element(t, i, &c);
      if (at)
        std::memcpy(out.raw() + size_t(i) * es, at->first->raw() + size_t(at->second) * es, es);
      else
        out.set_f64(i, c);
    }
    return out;
  }

  void write(int t, const Tensor& value, const std::vector<bool>& covered) {
    size_t es = dtype_size(value.dtype());
    for (int64_t i = 0; i < value.numel(); ++i) {
      if (!covered[size_t(i)]) continue;
      if (!s_.mappings[size_t(t)]) {
        std::memcpy(store_[size_t(t)]->raw() + size_t(i) * es, value.raw() + size_t(i) * es, es);
        continue;
      }
      double c = 0;
      auto at = locate_element(t, i, &c);
      VTC_CHECK(at) << "simulator: " << g_.tensor_name(t) << " is written where it is a constant";
      std::memcpy(at->first->raw() + size_t(at->second) * es, value.raw() + size_t(i) * es, es);
    }
  }

  Tensor value(const Value* v, const std::map<const Value*, Tensor>* local) {
    if (local && local->count(v)) return local->at(v);
    if (v->is_constant()) return *v->constant;
    int t = g_.tensor_of(v);
    if (t < 0) return inputs_.at(v->name);
    return read(t);
  }

  void run_kernel(const Kernel& k) {
    std::map<const Value*, Tensor> local;
    for (const Node* n : k.nodes) {
      std::vector<Tensor> ins;
      for (const Value* v : n->inputs)
        ins.push_back(v ? value(v, &local) : Tensor());
      std::vector<const Tensor*> ptrs;
      for (size_t i = 0; i < ins.size(); ++i)
        ptrs.push_back(n->inputs[i] ? &ins[i] : nullptr);
      std::vector<Tensor> outs = eval_node(*n, ptrs);
      for (size_t o = 0; o < outs.size(); ++o)
        if (n->outputs[o]) local[n->outputs[o]] = std::move(outs[o]);
    }
    for (const Value* v : k.outputs) {
      const Tensor& t = local.at(v);
      write(g_.tensor_of(v), t, std::vector<bool>(size_t(t.numel()), true));
    }
  }

  // Output elements a unit's copy writes: the image of its input under the op's write side
  // (all of the output when the op has none; the rest for Pad's border fill).
  std::vector<bool> covered(const Node& n, const VtogUnit& u, int64_t numel) {
    std::vector<bool> out(size_t(numel), false);
    int slot = u.in_slot < 0 ? 0 : u.in_slot;
    RuleResult w = write_side(n);
    if (!w.ok() || size_t(slot) >= w.mappings.size() || !w.mappings[size_t(slot)]) {
      std::fill(out.begin(), out.end(), true);
      return out;
    }
    const Mapping& m = *w.mappings[size_t(slot)];
    const Base* target = g_.tensors[size_t(u.out)].base;
    for (int64_t i = 0; i < shape_numel(m.shape); ++i) {
      std::optional<Located> loc = locate(m, index_of(i, m.shape), load_);
      if (loc && loc->base == target) out[size_t(flat_of(loc->index, target->shape))] = true;
    }
    if (u.in_slot < 0) out.flip();
    return out;
  }

  void run_copy(int m) {
    const Node& n = *g_.movement[size_t(m)].node;
    std::vector<int> left;
    for (int u : g_.movement[size_t(m)].units)
      if (!s_.unit_realized(u)) left.push_back(u);
    if (left.empty()) return;
    std::vector<Tensor> ins;
    for (const Value* v : n.inputs)
      ins.push_back(v ? value(v, nullptr) : Tensor());
    std::vector<const Tensor*> ptrs;
    for (size_t i = 0; i < ins.size(); ++i)
      ptrs.push_back(n.inputs[i] ? &ins[i] : nullptr);
    std::vector<Tensor> outs = eval_node(n, ptrs);
    for (int u : left) {
      const VtogUnit& unit = g_.units[size_t(u)];
      const Tensor& y = outs[size_t(unit.out_slot)];
      write(unit.out, y, covered(n, unit, y.numel()));
    }
  }

  const Strategy& s_;
  const Vtog& g_;
  const TensorMap& inputs_;
  std::vector<std::optional<Tensor>> store_;
  std::vector<std::pair<const Base*, Tensor>> tables_;
  LoadFn load_;
};

} // namespace

TensorMap simulate(const Strategy& s, const TensorMap& inputs) {
  return Simulator(s, inputs).run();
}

} // namespace vtc::testing
