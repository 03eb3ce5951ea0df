// Fusion in one pass over the nodes in topological order:
//  - a compute node that is not elementwise anchors a kernel;
//  - an elementwise node whose only use is by a compute node is deferred: the user pulls it
//    in as a prologue (recomputed where the kernel reads it);
//  - after a kernel's last node, a single-use elementwise consumer of the same shape whose
//    other operands are already available joins it as an epilogue;
//  - a MaxPool that alone consumes a Conv kernel's last value joins it when the target says
//    so (FuseOptions::max_pool_tail), and ends it;
//  - an attention subgraph (attention_pattern.h) the target takes is one kernel of kind
//    attention, made at its last MatMul (every operand is available there), its other nodes
//    held back until then, its Q and mask prologues pulled in as any kernel's;
//  - an elementwise node left over starts an elementwise kernel of its own;
//  - data-movement nodes stay between kernels, one step each.
#include "passes/fusion.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "ops/op_registry.h"
#include "vtc/error.h"

namespace vtc {

const char* kernel_kind_name(KernelKind k) {
  switch (k) {
  case KernelKind::gemm:
    return "gemm";
  case KernelKind::conv:
    return "conv";
  case KernelKind::pool:
    return "pool";
  case KernelKind::norm:
    return "norm";
  case KernelKind::softmax:
    return "softmax";
  case KernelKind::reduce:
    return "reduce";
  case KernelKind::attention:
    return "attention";
  case KernelKind::elementwise:
    return "elementwise";
  case KernelKind::other:
    return "other";
  }
  return "?";
}

const char* kernel_impl_name(KernelImpl i) {
  switch (i) {
  case KernelImpl::vtc_template:
    return "template";
  case KernelImpl::openblas_sgemm:
    return "openblas sgemm";
  case KernelImpl::cudnn_conv:
    return "cudnn";
  case KernelImpl::cublaslt_conv:
    return "cublaslt";
  }
  return "?";
}

const Kernel* KernelGraph::producer_kernel(const Value* v) const {
  for (const Kernel& k : kernels)
    if (std::find(k.outputs.begin(), k.outputs.end(), v) != k.outputs.end()) return &k;
  return nullptr;
}

const Node* KernelGraph::producer_movement(const Value* v) const {
  for (const Node* n : movement)
    if (std::find(n->outputs.begin(), n->outputs.end(), v) != n->outputs.end()) return n;
  return nullptr;
}

bool is_fusible_elementwise(const Node& node) {
  if (node.op == "BatchNormalization")
    return node.outputs.size() == 1 && node.attr_int("training_mode", 0) == 0;
  const OpDef* d = find_op(node.op);
  return d && d->elementwise;
}

namespace {

KernelKind anchor_kind(const std::string& op) {
  static const std::map<std::string, KernelKind> kinds = {
      {"MatMul", KernelKind::gemm},
      {"Gemm", KernelKind::gemm},
      {"Conv", KernelKind::conv},
      {"MaxPool", KernelKind::pool},
      {"AveragePool", KernelKind::pool},
      {"GlobalAveragePool", KernelKind::pool},
      {"GlobalMaxPool", KernelKind::pool},
      {"LayerNormalization", KernelKind::norm},
      {"BatchNormalization", KernelKind::norm},
      {"InstanceNormalization", KernelKind::norm},
      {"GroupNormalization", KernelKind::norm},
      {"Softmax", KernelKind::softmax},
      {"LogSoftmax", KernelKind::softmax},
      {"ReduceMean", KernelKind::reduce},
      {"ReduceSum", KernelKind::reduce},
      {"ReduceMax", KernelKind::reduce},
      {"ReduceMin", KernelKind::reduce},
      {"ReduceProd", KernelKind::reduce},
      {"ReduceL1", KernelKind::reduce},
      {"ReduceL2", KernelKind::reduce},
      {"ReduceSumSquare", KernelKind::reduce},
      {"ReduceLogSumExp", KernelKind::reduce},
      {"ArgMax", KernelKind::reduce},
      {"ArgMin", KernelKind::reduce},
  };
  auto it = kinds.find(op);
  return it == kinds.end() ? KernelKind::other : it->second;
}

class Fuser {
public:
  Fuser(const Graph& g, const FuseOptions& options) : g_(g), options_(options) { kg_.graph = &g; }

  KernelGraph run() {
    for (const auto& n : g_.nodes()) {
      const OpDef* def = find_op(n->op);
      VTC_CHECK(def) << n->describe() << ": unsupported op " << n->op;
      defs_[n.get()] = def;
    }
    if (options_.attention) find_attention();
    for (const auto& node : g_.nodes()) {
      Node* n = node.get();
      if (assigned_.count(n) || held_.count(n)) continue;
      const OpDef* def = defs_[n];
      auto attention = attention_.find(n);
      if (attention != attention_.end()) {
        make_kernel(attention->second, KernelKind::attention, n);
      } else if (def->kind == OpKind::data_movement) {
        kg_.steps.push_back({false, int(kg_.movement.size())});
        kg_.movement.push_back(n);
        assigned_.insert(n);
        available(n);
      } else if (is_fusible_elementwise(*n) && deferrable(n)) {
        deferred_.insert(n);
      } else if (is_fusible_elementwise(*n)) {
        make_kernel({n}, KernelKind::elementwise, nullptr);
      } else {
        make_kernel({n}, anchor_kind(n->op), n);
      }
    }
    VTC_CHECK(deferred_.empty()) << "fusion left " << (*deferred_.begin())->describe()
                                 << " unscheduled";
    VTC_CHECK(held_.empty()) << "fusion left " << (*held_.begin())->describe()
                             << " of an attention subgraph unscheduled";
    return std::move(kg_);
  }

private:
  // The attention subgraphs the target takes: each one's chain by its last MatMul, its other
  // nodes held back. A subgraph that shares a node with one found before (its scores MatMul
  // the last MatMul of another) is left to the unfused path.
  void find_attention() {
    for (const auto& node : g_.nodes()) {
      if (node->op != "MatMul") continue;
      std::optional<AttentionPattern> p = match_attention(*node);
      if (!p || !options_.attention(*p)) continue;
      bool shared = false;
      for (const Node* c : p->chain)
        shared = shared || held_.count(c) || attention_.count(c);
      if (shared) continue;
      attention_[p->output] = p->chain;
      for (Node* c : p->chain)
        if (c != p->output) held_.insert(c);
    }
  }

  // A single use by a compute node, and not a graph output: the user will pull it in.
  bool deferrable(const Node* n) const {
    if (n->outputs.size() != 1 || !n->outputs[0]) return false;
    const Value* v = n->outputs[0];
    if (v->is_graph_output || v->users.size() != 1) return false;
    return defs_.at(v->users[0])->kind == OpKind::compute;
  }

  void available(const Node* n) {
    for (const Value* v : n->outputs)
      if (v) ready_.insert(v);
  }

  bool is_ready(const Value* v) const {
    return !v || v->constant || v->is_graph_input || ready_.count(v);
  }

  // Adds the deferred producers of n's inputs (recursively, producers first) to `nodes`.
  void pull_prologue(const Node* n, std::vector<Node*>& nodes) {
    for (const Value* in : n->inputs) {
      if (!in || !in->producer || !deferred_.count(in->producer)) continue;
      Node* p = in->producer;
      deferred_.erase(p);
      pull_prologue(p, nodes);
      nodes.push_back(p);
    }
  }

  // Whether the deferred producers of n's inputs can be computed from what is ready now.
  bool prologue_ready(const Node* n, const std::set<const Value*>& inside) const {
    for (const Value* in : n->inputs) {
      if (!in || inside.count(in) || is_ready(in)) continue;
      if (!in->producer || !deferred_.count(in->producer)) return false;
      if (!prologue_ready(in->producer, inside)) return false;
    }
    return true;
  }

  // Whether u may join a kernel as an epilogue node once its operands can be computed:
  // elementwise, not yet placed, one output of the kernel's output shape.
  bool epilogue_candidate(const Node* u, const Shape& shape) const {
    if (assigned_.count(u) || held_.count(u) || !is_fusible_elementwise(*u)) return false;
    if (u->outputs.size() != 1 || !u->outputs[0]) return false;
    return u->outputs[0]->type.shape == shape;
  }

  // The elementwise nodes after the kernel's value `v` that together consume every use of v
  // and of each other and leave one value used outside (x * sigmoid(x) after a conv: both the
  // Sigmoid and the Mul; the tanh GELU, whose Add of x and 0.044715 x^3 waits a round for the
  // cube), in an order where each node follows its operands; empty when none.
  std::vector<Node*> epilogue_group(const Value* v, std::set<const Value*> inside) const {
    if (v->is_graph_output) return {};
    std::vector<Node*> group;
    std::set<const Node*> members;
    std::set<const Value*> produced{v};
    for (int round = 0; round < 16; ++round) {
      std::vector<const Value*> open;
      for (const Value* p : produced) {
        bool outside = p->is_graph_output;
        for (const Node* u : p->users)
          outside = outside || !members.count(u);
        if (outside) open.push_back(p);
      }
      if (open.size() == 1 && open[0] != v && !group.empty()) {
        // the producer of the one open value goes last
        auto last = std::find(group.begin(), group.end(), open[0]->producer);
        std::rotate(last, last + 1, group.end());
        return group;
      }
      bool grew = false;
      for (const Value* o : open) {
        if (o->is_graph_output && o != v) return {};
        for (Node* u : o->users) {
          if (members.count(u)) continue;
          if (!epilogue_candidate(u, v->type.shape)) return {};
          if (!prologue_ready(u, inside)) continue; // an operand joins in a later round
          group.push_back(u);
          members.insert(u);
          produced.insert(u->outputs[0]);
          inside.insert(u->outputs[0]);
          grew = true;
        }
      }
      if (!grew) return {};
    }
    return {};
  }

  // A kernel of `body` (nodes in execution order, the last one `first` below; each pulls in its
  // deferred producers), then its epilogues.
  void make_kernel(const std::vector<Node*>& body, KernelKind kind, Node* anchor) {
    Kernel k;
    k.kind = kind;
    k.anchor = anchor;
    k.name = "k" + std::to_string(kg_.kernels.size());
    for (Node* b : body) {
      pull_prologue(b, k.nodes);
      k.nodes.push_back(b);
      held_.erase(b);
    }
    Node* first = body.back();
    std::set<const Value*> inside;
    for (Node* n : k.nodes)
      for (const Value* v : n->outputs)
        inside.insert(v);
    // Epilogues: absorb groups of elementwise consumers while they close on one value.
    while (first->outputs.size() == 1) {
      std::vector<Node*> group = epilogue_group(k.nodes.back()->outputs[0], inside);
      if (group.empty()) break;
      for (Node* u : group) {
        deferred_.erase(u);
        pull_prologue(u, k.nodes);
        k.nodes.push_back(u);
        for (const Value* v : u->outputs)
          inside.insert(v);
      }
    }
    if (Node* pool = max_pool_tail(k, inside)) {
      k.nodes.push_back(pool);
      for (const Value* v : pool->outputs)
        if (v) inside.insert(v);
    }
    for (Node* n : k.nodes) {
      assigned_.insert(n);
      available(n);
    }
    // Inputs: read but not produced inside; outputs: produced and needed outside.
    for (Node* n : k.nodes)
      for (Value* in : n->inputs)
        if (in && !inside.count(in) &&
            std::find(k.inputs.begin(), k.inputs.end(), in) == k.inputs.end())
          k.inputs.push_back(in);
    std::set<const Node*> members(k.nodes.begin(), k.nodes.end());
    for (Node* n : k.nodes)
      for (Value* out : n->outputs) {
        if (!out) continue;
        bool outside = out->is_graph_output;
        for (const Node* u : out->users)
          outside = outside || !members.count(u);
        if (outside) k.outputs.push_back(out);
      }
    kg_.steps.push_back({true, int(kg_.kernels.size())});
    kg_.kernels.push_back(std::move(k));
  }

  // The MaxPool that joins Conv kernel k as its last node, or null: it alone reads the kernel's
  // last value, and the target has a kernel for the pair. The convolution's input must be read
  // as stored (not a prologue computed in the kernel).
  Node* max_pool_tail(const Kernel& k, const std::set<const Value*>& inside) const {
    if (!options_.max_pool_tail || !k.anchor || k.anchor->op != "Conv") return nullptr;
    if (k.anchor->inputs.empty() || inside.count(k.anchor->inputs[0])) return nullptr;
    const Node* last = k.nodes.back();
    if (last->outputs.size() != 1 || !last->outputs[0]) return nullptr;
    const Value* v = last->outputs[0];
    if (v->is_graph_output || v->users.size() != 1) return nullptr;
    Node* pool = v->users[0];
    if (pool->op != "MaxPool" || assigned_.count(pool) || pool->inputs.size() != 1) return nullptr;
    for (size_t i = 1; i < pool->outputs.size(); ++i) // Indices
      if (pool->outputs[i]) return nullptr;
    return options_.max_pool_tail(*k.anchor, *pool) ? pool : nullptr;
  }

  const Graph& g_;
  const FuseOptions& options_;
  KernelGraph kg_;
  std::map<const Node*, const OpDef*> defs_;
  std::set<const Node*> assigned_;
  std::set<const Node*> deferred_;
  std::set<const Value*> ready_;
  std::map<const Node*, std::vector<Node*>> attention_; // by the chain's last MatMul
  std::set<const Node*> held_; // attention nodes waiting for their last MatMul
};

std::string value_list(const std::vector<Value*>& vs) {
  std::string s;
  for (const Value* v : vs)
    s += (s.empty() ? "%" : ", %") + (v ? v->name : std::string("_"));
  return "(" + s + ")";
}

} // namespace

KernelGraph fuse(const Graph& g, const FuseOptions& options) {
  return Fuser(g, options).run();
}

const Node* max_pool_tail(const Kernel& k) {
  if (!k.anchor || k.anchor->op != "Conv" || k.nodes.empty()) return nullptr;
  const Node* last = k.nodes.back();
  return last != k.anchor && last->op == "MaxPool" ? last : nullptr;
}

std::vector<const Node*> epilogue_chain(const Kernel& k) {
  if (!k.anchor) return {};
  std::set<const Value*> derived{k.anchor->outputs[0]};
  std::vector<const Node*> chain;
  auto at = std::find(k.nodes.begin(), k.nodes.end(), k.anchor);
  auto end = max_pool_tail(k) ? k.nodes.end() - 1 : k.nodes.end();
  for (auto it = at + 1; it != end; ++it) {
    bool depends = false;
    for (const Value* in : (*it)->inputs)
      depends = depends || derived.count(in);
    if (!depends) continue;
    chain.push_back(*it);
    derived.insert((*it)->outputs[0]);
  }
  return chain;
}

std::string print_kernel_graph(const KernelGraph& kg) {
  std::ostringstream os;
  for (const Step& s : kg.steps) {
    if (s.is_kernel) {
      const Kernel& k = kg.kernels[size_t(s.index)];
      os << "kernel " << k.name << " " << kernel_kind_name(k.kind) << " [";
      for (size_t i = 0; i < k.nodes.size(); ++i)
        os << (i ? ", " : "") << k.nodes[i]->op << " '" << k.nodes[i]->name << "'";
      os << "] " << value_list(k.inputs) << " -> " << value_list(k.outputs) << "\n";
    } else {
      const Node* n = kg.movement[size_t(s.index)];
      os << "move   " << n->op << " '" << n->name << "' " << value_list(n->inputs) << " -> "
         << value_list(n->outputs) << "\n";
    }
  }
  return os.str();
}

} // namespace vtc
