// Buffers first (graph inputs, outputs, constants, then every other physical value a step
// touches), then one step per kernel or copy in execution order, each with its generated
// function or, when the cpu code generator has no code for it, its nodes for the reference
// interpreter.
#include "lower/lower.h"

#include <algorithm>
#include <functional>
#include <sstream>

#include "codegen/cpu_codegen.h"
#include "codegen/elementwise_expr.h"
#include "ops/movement_bytes.h"
#include "support/error.h"

namespace vtc {

const char* buffer_role_name(BufferRole r) {
  switch (r) {
  case BufferRole::input:
    return "input";
  case BufferRole::output:
    return "output";
  case BufferRole::constant:
    return "constant";
  case BufferRole::intermediate:
    return "intermediate";
  }
  return "?";
}

int Program::find_buffer(const std::string& name) const {
  for (size_t i = 0; i < buffers.size(); ++i)
    if (buffers[i].name == name) return int(i);
  return -1;
}

namespace {

class Lowerer {
public:
  Lowerer(const Graph& g, const KernelGraph& kg, const StorageDecision& d, const LowerOptions& o)
      : g_(g), kg_(kg), d_(d), o_(o) {
    storage_.virtual_values = d.virtual_values;
  }

  Program run() {
    p_.strategy = d_.strategy;
    for (const Value* v : g_.inputs)
      p_.inputs.push_back(buffer(v, BufferRole::input));
    for (const Value* v : g_.outputs)
      p_.outputs.push_back(buffer(v, BufferRole::output));
    alias_donated_outputs();
    std::string defs, bodies;
    constant_outputs(bodies);
    int counter = 0;
    for (const Step& s : d_.steps.empty() ? kg_.steps : d_.steps) {
      if (s.is_kernel) {
        kernel_step(kg_.kernels[size_t(s.index)], defs, bodies, counter);
      } else {
        const Node* n = kg_.movement[size_t(s.index)];
        if (!d_.eliminated.count(n)) copy_step(*n, defs, bodies, counter);
      }
    }
    std::string preamble = kPreamble;
    if (uses_openblas_) {
      preamble += "#include \"blas.h\"\n";
      p_.libraries.push_back("openblas");
    }
    p_.source = preamble + "\nnamespace {\n" + defs + "} // namespace\n\n" + bodies;
    return std::move(p_);
  }

private:
  int buffer(const Value* v, BufferRole role) {
    auto it = storage_.buffer_of.find(v);
    if (it != storage_.buffer_of.end()) return it->second;
    BufferInfo b;
    b.name = v->name;
    b.type = v->type;
    b.role = v->constant && role == BufferRole::intermediate ? BufferRole::constant : role;
    b.value = v;
    p_.buffers.push_back(b);
    int id = int(p_.buffers.size()) - 1;
    storage_.buffer_of[v] = id;
    return id;
  }

  // Ids of the buffers a step reads or writes for value v: its own, or its bases' when virtual.
  void touch(const Value* v, std::vector<int>& ids) {
    if (!v) return;
    auto it = d_.virtual_values.find(v);
    if (it == d_.virtual_values.end()) {
      ids.push_back(buffer(v, BufferRole::intermediate));
      return;
    }
    for (const Piece& piece : it->second.pieces)
      if (piece.base)
        ids.push_back(buffer(static_cast<const Value*>(piece.base->key), BufferRole::intermediate));
    for (const Value* t : load_tables(it->second))
      ids.push_back(buffer(t, BufferRole::intermediate));
  }

  // Values loaded by index expressions (run-time indices): physical, read by the step.
  static std::vector<const Value*> load_tables(const Mapping& m) {
    std::vector<const Value*> out;
    std::function<void(IndexExpr)> walk = [&](IndexExpr e) {
      if (e.kind() == ExprKind::load) out.push_back(static_cast<const Value*>(e.load_base()->key));
      for (const ExprNode* op : e.node()->ops)
        walk(IndexExpr(op));
    };
    for (const Piece& p : m.pieces) {
      for (const IndexExpr& e : p.index)
        walk(e);
      for (const Search& s : p.searches)
        for (const auto& [a, b] : s.eqs) {
          walk(a);
          walk(b);
        }
    }
    return out;
  }

  // A donated input updated in place by a scatter whose result is a graph output shares that
  // output's buffer.
  void alias_donated_outputs() {
    if (!d_.aliases.empty()) {
      for (const auto& [out, in] : d_.aliases)
        p_.buffers[size_t(storage_.buffer_of.at(out))].alias_of = storage_.buffer_of.at(in);
      return;
    }
    for (const auto& n : g_.nodes()) {
      if (n->op != "ScatterND" && n->op != "ScatterElements" && n->op != "Scatter") continue;
      const Value* data = n->input(0);
      const Value* out = n->output(0);
      if (!data || !out || !data->is_graph_input || !out->is_graph_output) continue;
      if (!o_.donated.count(data->name)) continue;
      int in_id = storage_.buffer_of.at(data), out_id = storage_.buffer_of.at(out);
      p_.buffers[size_t(out_id)].alias_of = in_id;
    }
  }

  // A graph output folded to a constant: a step copies the constant into the output buffer.
  void constant_outputs(std::string& bodies) {
    for (const Value* v : g_.outputs) {
      if (!v->constant) continue;
      BufferInfo c;
      c.name = v->name + "#constant";
      c.type = v->type;
      c.role = BufferRole::constant;
      c.value = v;
      p_.buffers.push_back(c);
      int from = int(p_.buffers.size()) - 1, to = storage_.buffer_of.at(v);
      StepInfo s;
      s.name = "constant output '" + v->name + "'";
      s.entry = "vtc_step_" + std::to_string(p_.steps.size());
      s.reads = {from};
      s.writes = {to};
      s.bytes = 2 * int64_t(v->type.nbytes());
      bodies += "extern \"C\" void " + s.entry +
                "(void* const* buf, void* packs) {\n  std::memcpy(buf[" + std::to_string(to) +
                "], buf[" + std::to_string(from) + "], " + std::to_string(v->type.nbytes()) +
                ");\n}\n\n";
      p_.steps.push_back(std::move(s));
    }
  }

  void kernel_step(const Kernel& k, std::string& defs, std::string& bodies, int& counter) {
    StepInfo s;
    std::ostringstream name;
    name << k.name << " " << kernel_kind_name(k.kind);
    if (k.impl != KernelImpl::vtc_template) name << " (" << kernel_impl_name(k.impl) << ")";
    name << " [";
    for (size_t i = 0; i < k.nodes.size(); ++i)
      name << (i ? ", " : "") << k.nodes[i]->op << " '" << k.nodes[i]->name << "'";
    s.name = name.str() + "]";
    for (const Value* v : k.inputs)
      touch(v, s.reads);
    for (const Value* v : k.outputs)
      touch(v, s.writes);
    for (const Value* v : k.inputs)
      s.bytes += int64_t(v->type.nbytes());
    for (const Value* v : k.outputs)
      s.bytes += int64_t(v->type.nbytes());
    std::optional<std::string> body;
    bool operands_physical = true;
    for (const Value* v : k.inputs)
      operands_physical &= !d_.virtual_values.count(v);
    for (const Value* v : k.outputs)
      operands_physical &= !d_.virtual_values.count(v);
    body = generate_kernel(k, storage_, defs, counter);
    if (body) {
      uses_openblas_ = uses_openblas_ || k.impl == KernelImpl::openblas_sgemm;
      s.entry = "vtc_step_" + std::to_string(p_.steps.size());
      bodies +=
          "extern \"C\" void " + s.entry + "(void* const* buf, void* packs) {\n" + *body + "}\n\n";
    } else {
      VTC_CHECK(operands_physical)
          << s.name << ": runs on the reference interpreter, so its operands must be physical";
      s.fallback.assign(k.nodes.begin(), k.nodes.end());
    }
    p_.steps.push_back(std::move(s));
  }

  void copy_step(const Node& n, std::string& defs, std::string& bodies, int& counter) {
    StepInfo s;
    s.name = "copy " + n.op + " '" + n.name + "'";
    s.is_copy = true;
    for (const Value* v : n.inputs)
      touch(v, s.reads);
    for (const Value* v : n.outputs)
      touch(v, s.writes);
    s.bytes = data_movement_bytes(n);
    try {
      std::string body = generate_copy(n, storage_, defs, counter);
      s.entry = "vtc_step_" + std::to_string(p_.steps.size());
      bodies +=
          "extern \"C\" void " + s.entry + "(void* const* buf, void* packs) {\n" + body + "}\n\n";
    } catch (const Error& e) {
      // No mapping for this node (a run-time pad value, a reducing scatter): the reference
      // interpreter runs it, on physical operands.
      for (const Value* v : n.inputs)
        VTC_CHECK(!v || !d_.virtual_values.count(v))
            << s.name << ": has no cpu code (" << e.what() << ") and reads a virtual tensor";
      for (const Value* v : n.outputs)
        VTC_CHECK(!v || !d_.virtual_values.count(v))
            << s.name << ": has no cpu code (" << e.what() << ") and writes a virtual tensor";
      s.fallback = {&n};
    }
    p_.steps.push_back(std::move(s));
  }

  const Graph& g_;
  const KernelGraph& kg_;
  const StorageDecision& d_;
  const LowerOptions& o_;
  Program p_;
  StorageMap storage_;
  bool uses_openblas_ = false;
};

} // namespace

Program lower_program(const Graph& g, const KernelGraph& kg, const StorageDecision& decision,
                      const LowerOptions& options) {
  return Lowerer(g, kg, decision, options).run();
}

} // namespace vtc
