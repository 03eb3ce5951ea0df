// Expression printer for C++/CUDA. Division and modulo use `/` and `%` directly when the
// dividend is provably non-negative (the usual case) and the inline floor forms otherwise.
#include "mapping/emit.h"

#include <cctype>
#include <cstdlib>

namespace vtc {
namespace {

constexpr int64_t kInt32Max = 2147483647;

bool fits32(Interval r) {
  return r.is_bounded() && r.lo >= -kInt32Max && r.hi <= kInt32Max;
}

struct Emitter {
  const EmitNames& names;
  bool wide;

  std::string constant(int64_t v) const {
    return std::to_string(v) + (wide || v > kInt32Max || v < -kInt32Max ? "LL" : "");
  }
  std::string var(int id) const {
    std::string n = names.var ? names.var(id) : "i" + std::to_string(id);
    return wide ? "(long long)" + n : n;
  }
  std::string base(const Base* b) const { return names.base ? names.base(b) : emit_base_name(b); }

  // Operand form: parenthesised unless atomic.
  std::string operand(IndexExpr e) const {
    std::string s = expr(e);
    bool atomic =
        e.kind() == ExprKind::var || (e.kind() == ExprKind::constant && e.constant_value() >= 0);
    return atomic ? s : "(" + s + ")";
  }

  std::string expr(IndexExpr e) const {
    switch (e.kind()) {
    case ExprKind::constant:
      return constant(e.constant_value());
    case ExprKind::var:
      return var(e.var_id());
    case ExprKind::sum: {
      std::string out;
      bool first = true;
      for (auto& [c, atom] : e.sum_terms()) {
        int64_t mag = std::llabs(c);
        std::string t = mag == 1 ? operand(atom) : operand(atom) + " * " + constant(mag);
        out += first ? (c < 0 ? "-" + t : t) : (c < 0 ? " - " : " + ") + t;
        first = false;
      }
      int64_t k = e.sum_constant();
      if (k != 0) out += (k < 0 ? " - " : " + ") + constant(std::llabs(k));
      return out;
    }
    case ExprKind::floordiv: {
      std::string a = operand(e.arg()), c = constant(e.divisor());
      if (e.arg().bounds().lo >= 0) return a + " / " + c;
      return "(" + a + " >= 0 ? " + a + " / " + c + " : (" + a + " - " + constant(e.divisor() - 1) +
             ") / " + c + ")";
    }
    case ExprKind::mod: {
      std::string a = operand(e.arg()), c = constant(e.divisor());
      if (e.arg().bounds().lo >= 0) return a + " % " + c;
      return "((" + a + " % " + c + " + " + c + ") % " + c + ")";
    }
    case ExprKind::load: {
      const Base* b = e.load_base();
      Shape strides = shape_strides(b->shape);
      IndexExpr off = IndexExpr::constant(0);
      for (size_t d = 0; d < strides.size(); ++d)
        off = off + IndexExpr(e.node()->ops[d]) * strides[d];
      return "(long long)" + base(b) + "[" + expr(off) + "]";
    }
    }
    return "";
  }
};

bool wide_node(const ExprNode* n) {
  if (n->kind == ExprKind::load || !fits32(n->range)) return true;
  for (size_t k = 0; k < n->ops.size(); ++k) {
    if (wide_node(n->ops[k])) return true;
    if (n->kind == ExprKind::sum && !fits32(n->ops[k]->range * n->coeffs[k])) return true;
  }
  return false;
}

EmitNames piece_names(const Piece& p, const EmitNames& names) {
  EmitNames out = names;
  int r = p.rank();
  VarNamer inner = names.var;
  out.var = [r, inner](int id) {
    if (id >= r) return "s" + std::to_string(id - r);
    return inner ? inner(id) : "i" + std::to_string(id);
  };
  return out;
}

} // namespace

std::string emit_base_name(const Base* b) {
  std::string s = b->name.empty() ? "base" : b->name;
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  if (std::isdigit(static_cast<unsigned char>(s[0]))) s = "t_" + s;
  return s;
}

bool needs_64bit(IndexExpr e) {
  return wide_node(e.node());
}

std::string emit(IndexExpr e, const EmitNames& names) {
  return Emitter{names, needs_64bit(e)}.expr(e);
}

std::string emit_offset(const Piece& p, const EmitNames& names) {
  return emit(flat_offset(p), piece_names(p, names));
}

std::string emit_guard(const Piece& p, const EmitNames& names,
                       const std::vector<int64_t>& extents) {
  EmitNames pn = piece_names(p, names);
  std::string out;
  auto add = [&](const std::string& c) { out += (out.empty() ? "" : " && ") + c; };
  const bool bounded = int(extents.size()) == p.rank();
  for (int d = 0; d < p.rank(); ++d) {
    std::string v = pn.var(d);
    if (!bounded || p.guard[d].lo > 0) add(v + " >= " + std::to_string(p.guard[d].lo));
    if (!bounded || p.guard[d].hi < extents[size_t(d)])
      add(v + " < " + std::to_string(p.guard[d].hi));
  }
  // Search k: the last s in [0, extent) satisfying its equalities, bound as s<k> in the
  // enclosing scope by the caller; here, the test that one exists.
  for (size_t k = 0; k < p.searches.size(); ++k) {
    const Search& s = p.searches[k];
    std::string name = "s" + std::to_string(k), cond;
    for (auto& [a, b] : s.eqs)
      cond += (cond.empty() ? "" : " && ") + ("(" + emit(a, pn) + ") == (" + emit(b, pn) + ")");
    add("(" + name + " = [&]() -> long long { long long found = -1; for (long long " + name +
        " = 0; " + name + " < " + std::to_string(s.extent) + "; ++" + name + ") if (" +
        (cond.empty() ? "true" : cond) + ") found = " + name + "; return found; }()) >= 0");
  }
  return out.empty() ? "true" : out;
}

} // namespace vtc
