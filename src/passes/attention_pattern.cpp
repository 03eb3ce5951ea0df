// Matching the attention subgraph backwards from its last MatMul (attention_pattern.h), and
// the grouped-query structure of its K and V operands.
#include "passes/attention_pattern.h"

#include <numeric>

#include "ops/op_registry.h"

namespace vtc {

namespace {

bool is_float_type(const Value* v) {
  return v && (v->type.dtype == DType::f32 || v->type.dtype == DType::f16 ||
               v->type.dtype == DType::bf16 || v->type.dtype == DType::f64);
}

// The node producing `v` when v is an intermediate of the chain: used once, by `user`, and
// not a graph output.
Node* chain_producer(const Value* v, const Node* user) {
  if (!v || !v->producer || v->is_graph_output || v->users.size() != 1 || v->users[0] != user)
    return nullptr;
  if (v->producer->outputs.size() != 1 || !is_float_type(v)) return nullptr;
  return v->producer;
}

// The value of a constant with one element, or nullopt.
std::optional<double> scalar_constant(const Value* v) {
  if (!v || !v->constant || v->constant->numel() != 1 || !is_float_type(v)) return std::nullopt;
  return v->constant->get_f64(0);
}

// The operand of binary node n that is not `side`'s, with n's other input a scalar constant:
// (x, c) for n = op(x, c) or, for a commutative op, op(c, x).
std::optional<std::pair<Value*, double>> with_scalar(const Node& n, bool commutative) {
  if (n.inputs.size() != 2) return std::nullopt;
  if (auto c = scalar_constant(n.inputs[1])) return std::pair{n.inputs[0], *c};
  if (commutative)
    if (auto c = scalar_constant(n.inputs[0])) return std::pair{n.inputs[1], *c};
  return std::nullopt;
}

bool same_shape(const Value* v, const Shape& s) {
  return v && v->type.shape == s;
}

// Whether `mask` broadcasts to `full` (rank 4) with numpy rules.
bool broadcasts_to(const Value* mask, const Shape& full) {
  if (!is_float_type(mask)) return false;
  const Shape& m = mask->type.shape;
  if (m.size() > full.size()) return false;
  for (size_t k = 0; k < m.size(); ++k) {
    const int64_t f = full[full.size() - m.size() + k];
    if (m[k] != 1 && m[k] != f) return false;
  }
  return true;
}

// The group of a [B,H,.,.] value along its head dimension (1): G when it is the Reshape of
// an Expand of [B,Hkv,1,X,Y] to [B,Hkv,G,X,Y] into [B,Hkv*G,X,Y], seen through Transposes
// that keep dimensions 0 and 1; 1 otherwise.
int64_t head_group(const Value* x) {
  while (x && x->producer && x->producer->op == "Transpose") {
    const std::vector<int64_t> perm = x->producer->attr_ints("perm");
    if (perm.size() != 4 || perm[0] != 0 || perm[1] != 1) return 1;
    x = x->producer->inputs[0];
  }
  if (!x || !x->producer || x->producer->op != "Reshape") return 1;
  const Value* e = x->producer->inputs[0];
  const Shape& so = x->type.shape;
  if (!e || so.size() != 4 || e->type.rank() != 5) return 1;
  const Shape& se = e->type.shape;
  if (se[0] != so[0] || se[1] * se[2] != so[1] || se[3] != so[2] || se[4] != so[3]) return 1;
  if (!e->producer || e->producer->op != "Expand") return 1;
  const Value* u = e->producer->inputs[0];
  if (!u || u->type.rank() != 5) return 1;
  const Shape& su = u->type.shape;
  if (su[0] != se[0] || su[1] != se[1] || su[2] != 1 || su[3] != se[3] || su[4] != se[4]) return 1;
  return se[2];
}

} // namespace

std::optional<AttentionPattern> match_attention(Node& output) {
  AttentionPattern p;
  if (output.op != "MatMul" || output.inputs.size() != 2 || output.outputs.size() != 1)
    return std::nullopt;
  p.output = &output;
  p.v = output.inputs[1];
  std::vector<Node*> back{&output}; // the chain, last node first
  Node* n = chain_producer(output.inputs[0], &output);
  // A run of float-to-float Casts (PyTorch exports `softmax(x.float()).to(dtype)` as two in a
  // row when the dtypes agree); the kernel computes in f32 and stores the output's dtype.
  auto cast = [&](Node* c) {
    while (c && c->op == "Cast" && is_float_type(c->inputs[0])) {
      back.push_back(c);
      c = chain_producer(c->inputs[0], c);
    }
    return c;
  };
  n = cast(n);
  if (!n || n->op != "Softmax") return std::nullopt;
  p.softmax = n;
  const Value* logits = n->inputs[0];
  if (!logits || logits->type.rank() != 4 || normalize_axis(*n, n->attr_int("axis", -1), 4) != 3)
    return std::nullopt;
  const Shape full = logits->type.shape;
  back.push_back(n);
  n = cast(chain_producer(n->inputs[0], n));
  // Mask: Add(x, mask) or Add(mask, x), x the scores' side (full shape, produced in the chain).
  if (n && n->op == "Add" && n->inputs.size() == 2) {
    for (int side = 0; side < 2; ++side) {
      Node* x = chain_producer(n->inputs[size_t(side)], n);
      const Value* m = n->inputs[size_t(1 - side)];
      if (x && same_shape(n->inputs[size_t(side)], full) && broadcasts_to(m, full) &&
          m != n->inputs[size_t(side)]) {
        p.mask = n->inputs[size_t(1 - side)];
        back.push_back(n);
        n = x;
        break;
      }
    }
    if (!p.mask) return std::nullopt;
  }
  // Softcap: Mul(Tanh(Div(x, cap)), cap).
  if (n && n->op == "Mul") {
    auto outer = with_scalar(*n, true);
    Node* t = outer ? chain_producer(outer->first, n) : nullptr;
    Node* d = t && t->op == "Tanh" ? chain_producer(t->inputs[0], t) : nullptr;
    auto inner = d && d->op == "Div" ? with_scalar(*d, false) : std::nullopt;
    if (inner && inner->second == outer->second && inner->second > 0) {
      p.softcap = inner->second;
      back.insert(back.end(), {n, t, d});
      n = chain_producer(inner->first, d);
    }
  }
  // Scale: Mul by a constant, or Div by one.
  if (n && (n->op == "Mul" || n->op == "Div")) {
    auto s = with_scalar(*n, n->op == "Mul");
    if (!s || s->second == 0) return std::nullopt;
    p.scale = n->op == "Mul" ? s->second : 1.0 / s->second;
    back.push_back(n);
    n = chain_producer(s->first, n);
  }
  if (!n || n->op != "MatMul" || n->inputs.size() != 2) return std::nullopt;
  p.scores = n;
  back.push_back(n);
  p.q = n->inputs[0];
  p.kt = n->inputs[1];
  const Shape& sq = p.q->type.shape;
  const Shape& sk = p.kt->type.shape;
  const Shape& sv = p.v->type.shape;
  if (sq.size() != 4 || sk.size() != 4 || sv.size() != 4 || !is_float_type(p.q) ||
      !is_float_type(p.kt) || !is_float_type(p.v) || !is_float_type(output.outputs[0]))
    return std::nullopt;
  // No broadcasting between the operands' batch and head dimensions.
  if (sq[0] != sk[0] || sq[0] != sv[0] || sq[1] != sk[1] || sq[1] != sv[1]) return std::nullopt;
  if (sq[3] != sk[2] || sk[3] != sv[2]) return std::nullopt;
  if (full != Shape{sq[0], sq[1], sq[2], sk[3]}) return std::nullopt;
  p.batch = sq[0];
  p.heads = sq[1];
  p.q_len = sq[2];
  p.kv_len = sk[3];
  p.d = sq[3];
  p.dv = sv[3];
  if (p.batch <= 0 || p.heads <= 0 || p.q_len <= 0 || p.kv_len <= 0 || p.d <= 0 || p.dv <= 0)
    return std::nullopt;
  p.group = std::gcd(head_group(p.kt), head_group(p.v));
  if (p.group <= 0 || p.heads % p.group != 0) p.group = 1;
  p.chain.assign(back.rbegin(), back.rend());
  return p;
}

} // namespace vtc
