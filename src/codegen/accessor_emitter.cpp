// Accessor emission (see accessor_emitter.h). Each struct is emitted once into the
// translation unit's definitions and named by a fresh counter (M: mapped, P: computed,
// W: view, E: storing), so equal programs give equal text.
#include "codegen/accessor_emitter.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <sstream>

#include "codegen/elementwise_expr.h"
#include "mapping/compose.h"
#include "mapping/contiguity.h"
#include "mapping/emit.h"
#include "mapping/flat_plane.h"
#include "mapping/layout.h"
#include "mapping/rules.h"
#include "vtc/error.h"

namespace vtc {

namespace {

std::string idx_list(const IndexTerms& xs) {
  std::string s;
  for (size_t i = 0; i < xs.size(); ++i)
    s += (i ? ", " : "") + xs[i].text;
  return s;
}

// How an operand is read over a run of the last dimension: its statements go to `pre`, `at`
// is its value at element j of the run, `constant` when that is one value for the whole run.
struct RunRead {
  std::string at;
  bool constant = false;
};

// Reading operand `name` over a run of the last dimension (`i` is the run's first index,
// `n` its length, `j` the position in it): once when its index does not involve the last
// dimension, as one run when the last dimension indexes its last, element by element
// otherwise.
// How an operand's index moves along the result's last dimension: not at all (one value for
// a run), as its own last dimension (a run of it), or otherwise.
enum class AlongLast { constant, run, other };
AlongLast along_last(const ReadOperand& op, int rank) {
  int uses = 0;
  for (const IndexTerm& x : op.index)
    uses += x.uses(rank - 1);
  if (uses == 0) return AlongLast::constant;
  return uses == 1 && op.index.back().is_dim(rank - 1) ? AlongLast::run : AlongLast::other;
}

RunRead run_operand(const std::string& name, const ReadOperand& op, int rank, std::string& pre) {
  const int last = rank - 1;
  const AlongLast along = along_last(op, rank);
  const std::string at = index_of(op.acc.rank, op.index);
  if (along == AlongLast::constant) {
    pre += "      const auto c_" + name + " = " + name + ".load(" + at + ");\n";
    return {"c_" + name, true};
  }
  pre += "      compute_t<decltype(" + name + ")> b_" + name + "[kRunChunk];\n";
  if (along == AlongLast::run) {
    pre += "      vtc::kernels::load_run(" + name + ", " + at + ", n, b_" + name + ");\n";
  } else {
    pre += "      for (int64_t j = 0; j < n; ++j)\n        b_" + name + "[j] = [&](Index<" +
           std::to_string(rank) + "> i) { i[" + std::to_string(last) + "] += j; return " + name +
           ".load(" + at + "); }(i);\n";
  }
  return {"b_" + name + "[j]", false};
}

// A member of a mapped accessor: a physical base's pointer or a virtual base's accessor.
struct Member {
  std::string name;
  bool nested = false;
};

// The declaration of index variable d of an accessor over m: 32-bit where the dimension's
// extent fits (the emitted expressions widen to 64 bits themselves where a value can leave the
// 32-bit range), so the index arithmetic of the common case is 32-bit multiply-adds.
std::string index_variable(const Mapping& m, int d) {
  const bool narrow = m.shape[size_t(d)] <= 2147483647;
  return std::string(narrow ? "const int i" : "const long long i") + std::to_string(d) + " = " +
         (narrow ? "int(i[" : "(i[") + std::to_string(d) + "]);\n";
}

// run_load() of a mapping with constant pieces (a Pad's border, a Concat with a constant
// part), which has no ptr(): a run along the last dimension that lies whole in one piece's
// guard, with no earlier piece's guard meeting it, is a fill of the constant or a copy from
// the base where the piece's run of contiguous elements holds it; any other run goes element
// by element through load(). Empty where a piece searches or reads a nested accessor.
std::string run_load_of_pieces(const Mapping& m, const EmitNames& names,
                               const std::map<const Base*, Member>& member, const std::string& q) {
  const int r = m.rank();
  if (r == 0) return "";
  for (const Piece& p : m.pieces)
    if (!p.searches.empty() || (!p.is_constant() && member.at(p.base).nested)) return "";
  const std::string last = "i" + std::to_string(r - 1);
  const int64_t extent = std::max<int64_t>(m.shape.back(), 1);
  std::ostringstream os;
  os << "  template <typename D> " << q << "void run_load(const Index<" << r
     << ">& i, int64_t n, D* dst) const {\n";
  for (int d = 0; d < r; ++d)
    os << "    " << index_variable(m, d);
  os << "    do {\n";
  for (const Piece& p : m.pieces) {
    std::string others; // the guard on every dimension but the last
    for (int d = 0; d + 1 < r; ++d)
      others += "i" + std::to_string(d) + " >= " + std::to_string(p.guard[size_t(d)].lo) + " && i" +
                std::to_string(d) + " < " + std::to_string(p.guard[size_t(d)].hi) + " && ";
    const Range& g = p.guard.back();
    const std::string lo = std::to_string(g.lo), hi = std::to_string(g.hi);
    os << "      if (" << others << last << " >= " << lo << " && " << last << " + n <= " << hi
       << ") {\n";
    if (p.is_constant()) {
      os << "        for (int64_t j = 0; j < n; ++j) dst[j] = D(" << literal(p.value) << ");\n"
         << "        return;\n";
    } else {
      const int64_t run = std::gcd(std::max<int64_t>(piece_contiguity(p).run, 1), extent);
      os << "        if (" << last << " / " << run << " == (" << last << " + n - 1) / " << run
         << ") {\n"
         << "          const T* src = " << member.at(p.base).name << " + (" << emit_offset(p, names)
         << ");\n"
         << "          for (int64_t j = 0; j < n; ++j) dst[j] = to_compute(src[j]);\n"
         << "          return;\n        }\n";
    }
    os << "      }\n";
    // A guard meeting the run decides some of its elements: element by element from here.
    os << "      if (" << others << last << " < " << hi << " && " << last << " + n > " << lo
       << ") break;\n";
  }
  os << "    } while (false);\n"
     << "    Index<" << r << "> k = i;\n"
     << "    for (int64_t j = 0; j < n; ++j) {\n"
     << "      k[" << r - 1 << "] = i[" << r - 1 << "] + j;\n"
     << "      dst[j] = load(k);\n    }\n  }\n";
  return os.str();
}

enum class MemberFn { ptr, load, store };

} // namespace

IndexTerms broadcast_index(const Shape& in, int out_rank) {
  IndexTerms xs;
  int r = int(in.size());
  for (int d = 0; d < r; ++d)
    xs.push_back(in[size_t(d)] == 1 ? IndexTerm::zero() : IndexTerm::dim(d + out_rank - r));
  return xs;
}

IndexTerms unflatten(int flat_dim, const Shape& dims) {
  const IndexTerm flat = IndexTerm::dim(flat_dim);
  // The divisions and remainders in 32 bits where the flat index fits (64-bit ones by a
  // constant are several times the instructions).
  int64_t total = 1;
  for (int64_t d : dims)
    total = total > 2147483647 / std::max<int64_t>(d, 1) ? int64_t(1) << 40 : total * d;
  const std::string flat_text = total <= 2147483647 ? "int(" + flat.text + ")" : flat.text;
  // The outermost dimension larger than 1 takes no remainder (the flat index is below the
  // product), and is the flat index itself when it is the only one: a run along it stays a run.
  IndexTerms xs(dims.size());
  int64_t stride = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    int64_t outer = 1;
    for (size_t e = 0; e < d; ++e)
      outer *= dims[e];
    std::string q =
        stride == 1 ? flat_text : "(" + flat_text + " / " + std::to_string(stride) + ")";
    if (dims[d] == 1)
      xs[d] = IndexTerm::zero();
    else if (outer == 1)
      xs[d] = stride == 1 ? flat : IndexTerm{q, flat.dims};
    else
      xs[d] = IndexTerm{"(" + q + " % " + std::to_string(dims[d]) + ")", flat.dims};
    stride *= dims[d];
  }
  return xs;
}

IndexTerms operand_index(const Node& node, size_t k, int rank) {
  if (node.op == "BatchNormalization" && k > 0) return {IndexTerm::dim(1)};
  return broadcast_index(node.inputs[k]->type.shape, rank);
}

std::string index_of(int rank, const IndexTerms& xs) {
  return "Index<" + std::to_string(rank) + ">{" + idx_list(xs) + "}";
}

std::string shape_array(const Shape& s) {
  std::string out = "Index<" + std::to_string(s.size()) + ">{";
  for (size_t d = 0; d < s.size(); ++d)
    out += (d ? ", " : "") + std::to_string(s[d]);
  return out + "}";
}

std::string literal(double v) {
  if (v != v) return "NAN";
  if (v == std::numeric_limits<double>::infinity()) return "INFINITY";
  if (v == -std::numeric_limits<double>::infinity()) return "-INFINITY";
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

std::string AccessorEmitter::q() const {
  std::string s = dialect_.function_qualifier();
  return s.empty() ? s : s + " ";
}

Mapping channels_last_storage(const Value* v) {
  const Shape& s = v->type.shape;
  VTC_CHECK(s.size() == 4) << "value '" << v->name << "' (" << type_str(v->type)
                           << ") is held channels-last but is not 4-D";
  const Base* nhwc = intern_base(v, v->name + "_nhwc", {s[0], s[2], s[3], s[1]});
  return transpose_write(value_base(v), nhwc, {0, 2, 3, 1});
}

Mapping AccessorEmitter::storage_mapping(const Value* v) const {
  auto it = storage_.virtual_values.find(v);
  if (it != storage_.virtual_values.end()) return it->second;
  VTC_CHECK(storage_.buffer_of.count(v)) << "value '" << v->name << "' has no storage";
  if (storage_.channels_last.count(v)) return channels_last_storage(v);
  return identity_mapping(value_base(v));
}

Mapping AccessorEmitter::channels_last_view(const Value* v) const {
  VTC_CHECK(v->type.rank() == 4) << "value '" << v->name << "' (" << type_str(v->type)
                                 << ") is read in channels-last order but is not 4-D";
  const Base* b = value_base(v);
  Result<Mapping> m = compose(transpose_read(b, {0, 2, 3, 1}), b, storage_mapping(v));
  VTC_CHECK(m.ok()) << "value '" << v->name
                    << "' cannot be read in channels-last order: " << m.reason;
  return *m;
}

namespace {

// Terms of an index over [n, c, h, w] moved to the channels-last order [n, h, w, c]: a term
// of dimension 1 reads dimension 3, 2 reads 1, 3 reads 2.
IndexTerms channels_last_terms(const IndexTerms& xs) {
  static constexpr int kMoved[4] = {0, 3, 1, 2};
  IndexTerms out;
  for (const IndexTerm& t : xs) {
    if (t.dims == 0) {
      out.push_back(t);
      continue;
    }
    int d = 0;
    while (d < 4 && !t.is_dim(d))
      ++d;
    VTC_CHECK(d < 4) << "codegen: index term " << t.text << " cannot be read channels-last";
    out.push_back(IndexTerm::dim(kMoved[d]));
  }
  return out;
}

} // namespace

std::optional<Mapping> AccessorEmitter::flat_mapping(const Value* v) const {
  return flatten_plane(storage_mapping(v), value_base(v), int64_t(dtype_size(v->type.dtype)));
}

IndexTerms AccessorEmitter::plane_operand_index(const Node& node, size_t k, int rank) const {
  const Value* in = node.inputs[k];
  const Shape& shape = in->type.shape;
  const size_t r = shape.size();
  if (channels_last_index && rank == 4) {
    // A 4-D operand is read through its channels-last view (stored, value), others at their
    // broadcast index moved to that order.
    if (r == 4) return broadcast_index({shape[0], shape[2], shape[3], shape[1]}, rank);
    return channels_last_terms(operand_index(node, k, rank));
  }
  // Over a flattened plane a value spanning it is read at [.., 0, j]: broadcasting by its
  // shape would read a plane dimension of size 1 (a [h, 1] plane) at 0 instead of j.
  if (flat_plane && !(node.op == "BatchNormalization" && k > 0) && r >= 2 &&
      (shape[r - 2] == 1 || shape[r - 1] == 1) &&
      plane_use(shape, flat_plane->first, flat_plane->second) == PlaneUse::spans)
    return broadcast_index(flat_plane_shape(shape), rank);
  return operand_index(node, k, rank);
}

Acc AccessorEmitter::stored(const Value* v) {
  if (channels_last_index && v->type.rank() == 4)
    return mapped(channels_last_view(v), v->type.dtype);
  if (flat_plane &&
      plane_use(v->type.shape, flat_plane->first, flat_plane->second) == PlaneUse::spans) {
    auto m = flat_mapping(v);
    VTC_CHECK(m) << "value '" << v->name << "' cannot be read as a flattened plane";
    return mapped(*m, v->type.dtype);
  }
  return stored_as_is(v);
}

Acc AccessorEmitter::stored_as_is(const Value* v) {
  return mapped(storage_mapping(v), v->type.dtype);
}

Acc AccessorEmitter::value(const Value* v) {
  if (inside.count(v)) return computed(v);
  return stored(v);
}

int AccessorEmitter::physical_buffer(const Value* v) const {
  auto it = storage_.buffer_of.find(v);
  VTC_CHECK(it != storage_.buffer_of.end() && !storage_.virtual_values.count(v))
      << "value '" << v->name << "' is an operand of a library kernel but is not physical";
  return it->second;
}

std::string AccessorEmitter::buffer_address(const Value* v) {
  return "static_cast<" + std::string(cpp_storage_type(v->type.dtype)) + "*>(" +
         site_.buffer(physical_buffer(v)) + ")";
}

Acc AccessorEmitter::dense(const Value* v, const Shape& shape) {
  VTC_CHECK(physical(v)) << "codegen: " << v->name << " is not a dense tensor of its own";
  VTC_CHECK(shape_numel(shape) == v->type.numel())
      << "codegen: " << v->name << " (" << type_str(v->type) << ") seen as " << shape_array(shape)
      << ", a different size";
  const int r = int(shape.size());
  const std::string type = std::string("DenseAccessor<") + cpp_storage_type(v->type.dtype) + ", " +
                           std::to_string(r) + ">";
  return {type, type + "{" + buffer_address(v) + ", " + shape_array(shape) + "}", r};
}

std::string AccessorEmitter::constant_ref(const Value* v) {
  auto it = storage_.buffer_of.find(v);
  if (!v->constant || storage_.virtual_values.count(v) || it == storage_.buffer_of.end())
    return "ConstantRef{}";
  return "ConstantRef{static_cast<ConstantPacks*>(packs), " + site_.buffer(it->second) + "}";
}

Acc AccessorEmitter::mapped(const Mapping& m, DType dtype) {
  std::string name = fresh("M");
  const char* t = cpp_storage_type(dtype);
  int r = m.rank();
  // Members: physical bases and load tables as pointers, virtual bases as nested accessors.
  std::map<const Base*, Member> member;
  std::string members, inits;
  std::function<std::string(const Base*)> base_name = [&](const Base* b) -> std::string {
    auto it = member.find(b);
    if (it != member.end()) return it->second.name;
    const Value* v = static_cast<const Value*>(b->key);
    VTC_CHECK(v) << "mapping base '" << b->name << "' is not a graph value";
    Member mem;
    if (storage_.virtual_values.count(v)) {
      Acc a = stored_as_is(v); // a nested base, indexed in its own coordinates
      mem = {"a" + std::to_string(member.size()), true};
      members += "  " + a.type + " " + mem.name + ";\n";
      inits += (inits.empty() ? "" : ", ") + a.init;
    } else {
      auto buf = storage_.buffer_of.find(v);
      VTC_CHECK(buf != storage_.buffer_of.end()) << "value '" << v->name << "' has no storage";
      mem = {"p" + std::to_string(member.size()), false};
      std::string pt = cpp_storage_type(v->type.dtype);
      members += "  " + pt + "* " + mem.name + ";\n";
      inits += (inits.empty() ? "" : ", ") +
               ("static_cast<" + pt + "*>(" + site_.buffer(buf->second) + ")");
    }
    member[b] = mem;
    return mem.name;
  };
  EmitNames names;
  names.base = base_name;
  bool has_ptr = true;
  int max_searches = 0;
  for (const Piece& p : m.pieces) {
    if (p.is_constant()) has_ptr = false;
    max_searches = std::max(max_searches, int(p.searches.size()));
  }
  // One body per operation: the pieces in order, the first that applies decides.
  auto body = [&](MemberFn what) {
    std::string s;
    for (int d = 0; d < r; ++d)
      s += "    " + index_variable(m, d);
    for (int k = 0; k < max_searches; ++k)
      s += "    long long s" + std::to_string(k) + " = -1;\n";
    for (int k = 0; k < max_searches; ++k)
      s += "    (void)s" + std::to_string(k) + ";\n";
    bool unconditional = false;
    for (const Piece& p : m.pieces) {
      bool whole = p.searches.empty() && p.guard == full_box(m.shape);
      std::string stmt;
      if (p.is_constant()) {
        switch (what) {
        case MemberFn::ptr:
          stmt = "return nullptr;";
          break;
        case MemberFn::load:
          stmt = "return C(" + literal(p.value) + ");";
          break;
        case MemberFn::store:
          stmt = "return;";
          break;
        }
      } else {
        std::string bn = base_name(p.base);
        if (member.at(p.base).nested) {
          IndexTerms xs;
          for (const IndexExpr& e : p.index)
            xs.push_back({emit(e, names), 0});
          std::string target = index_of(p.base->rank(), xs);
          switch (what) {
          case MemberFn::ptr:
            stmt = "return " + bn + ".ptr(" + target + ");";
            break;
          case MemberFn::load:
            stmt = "return C(" + bn + ".load(" + target + "));";
            break;
          case MemberFn::store:
            stmt = bn + ".store(" + target + ", v); return;";
            break;
          }
        } else {
          std::string off = emit_offset(p, names);
          switch (what) {
          case MemberFn::ptr:
            stmt = "return " + bn + " + (" + off + ");";
            break;
          case MemberFn::load:
            stmt = "return to_compute(" + bn + "[" + off + "]);";
            break;
          case MemberFn::store:
            stmt = bn + "[" + off + "] = from_compute<T>(v); return;";
            break;
          }
        }
      }
      if (whole) {
        s += "    " + stmt + "\n";
        unconditional = true;
        break;
      }
      s += "    if (" + emit_guard(p, names, m.shape) + ") { " + stmt + " }\n";
    }
    if (!unconditional) {
      if (what == MemberFn::ptr)
        s += "    return nullptr;\n";
      else if (what == MemberFn::load)
        s += "    return C(0);\n";
    }
    return s;
  };
  std::string ptr_body = has_ptr ? body(MemberFn::ptr) : "";
  std::string load_body = body(MemberFn::load);
  std::string store_body = body(MemberFn::store);
  for (const auto& [b, mem] : member)
    if (mem.nested) has_ptr = false; // nested accessors: keep to load/store
  int64_t contig = 1;
  if (has_ptr && r > 0) {
    Contiguity c = contiguity(m, int64_t(dtype_size(dtype)), dialect_.transaction_bytes());
    int64_t last = std::max<int64_t>(m.shape.back(), 1);
    contig = std::gcd(std::max<int64_t>(c.run, 1), last);
  }
  std::ostringstream os;
  os << "struct " << name << " {\n"
     << "  using value_type = " << t << ";\n"
     << "  using T = " << t << ";\n"
     << "  using C = decltype(to_compute(T{}));\n"
     << "  static constexpr int rank = " << r << ";\n"
     << "  static constexpr int64_t contig = " << contig << ";\n"
     << "  static constexpr bool has_ptr = " << (has_ptr ? "true" : "false") << ";\n"
     << members;
  if (has_ptr)
    os << "  " << q() << "T* ptr(const Index<" << r << ">& i) const {\n" << ptr_body << "  }\n";
  if (!has_ptr && dialect_.run_forms()) os << run_load_of_pieces(m, names, member, q());
  os << "  " << q() << "C load(const Index<" << r << ">& i) const {\n"
     << load_body << "  }\n"
     << "  template <typename V> " << q() << "void store(const Index<" << r
     << ">& i, V v) const {\n"
     << store_body << "  }\n};\n";
  def(os.str());
  return {name, name + "{" + inits + "}", r};
}

namespace {

// A computed accessor's loads<N>(i, limit, dst): the elements at i .. i + N - 1 along the last
// dimension as floats, those at or past `limit` as 0 (load_floats' contract): operands constant
// along it read once, operands read along it as N floats (vectors where they can be: a Relu and
// Cast over a tensor with runs read 8 elements an instruction, not one), the others element by
// element; then the expression per element, as load() computes it.
std::string vector_loads(const std::vector<ReadOperand>& ops, int r, const std::string& prefix,
                         const char* t, const std::string& expr) {
  const std::string last = std::to_string(r - 1), R = std::to_string(r);
  std::ostringstream os, loop;
  os << "  static constexpr bool has_loads = true;\n"
     << "  template <int N> __device__ void loads(const Index<" << R
     << ">& i, int64_t limit, float (&dst)[N]) const {\n";
  for (size_t k = 0; k < ops.size(); ++k) {
    const std::string a = prefix + std::to_string(k);
    const std::string at = index_of(ops[k].acc.rank, ops[k].index);
    const std::string zero = "compute_t<decltype(" + a + ")>(0)";
    const AlongLast along = along_last(ops[k], r);
    if (along == AlongLast::constant) {
      os << "    const auto c_" << a << " = i[" << last << "] < limit ? " << a << ".load(" << at
         << ") : " << zero << ";\n";
      loop << "      const auto o_" << a << " = c_" << a << ";\n";
      continue;
    }
    const std::string each = "(i[" + last + "] + u < limit ? [&](Index<" + R + "> i) { i[" + last +
                             "] += u; return " + a + ".load(" + at + "); }(i) : " + zero + ")";
    os << "    compute_t<decltype(" << a << ")> b_" << a << "[N];\n";
    if (along == AlongLast::run)
      os << "    if constexpr (portable::is_same_v<compute_t<decltype(" << a
         << ")>, float>) {\n      const auto ix = " << at << ";\n"
         << "      vtc::kernels::cuda::load_floats<N>(" << a << ", ix, i[" << last
         << "] + N <= limit && vtc::kernels::cuda::vector_at<N>(" << a << ", ix), limit, b_" << a
         << ");\n    } else {\n"
         << "      for (int u = 0; u < N; ++u) b_" << a << "[u] = " << each << ";\n    }\n";
    else
      os << "    for (int u = 0; u < N; ++u) b_" << a << "[u] = " << each << ";\n";
    loop << "      const auto o_" << a << " = b_" << a << "[u];\n";
  }
  os << "#pragma unroll\n    for (int u = 0; u < N; ++u) {\n"
     << loop.str() << "      dst[u] = i[" << last << "] + u < limit ? float(vtc_round<" << t << ">("
     << expr << ")) : 0.0f;\n    }\n  }\n";
  return os.str();
}

} // namespace

Acc AccessorEmitter::computed(const Value* v) {
  const Node* p = v->producer;
  VTC_CHECK(p) << "computed value '" << v->name << "' has no producer";
  int r = v->type.rank();
  const bool runs = r > 0 && dialect_.run_forms();
  std::vector<ReadOperand> ops;
  std::vector<std::string> args, run_args;
  std::string run_pre, run_loop; // a run's staging, and the operands of its element j
  for (size_t k = 0; k < p->inputs.size(); ++k) {
    const Value* in = p->inputs[k];
    if (!in) continue;
    ReadOperand op{value(in), plane_operand_index(*p, k, r)};
    std::string name = "a" + std::to_string(ops.size());
    args.push_back(name + ".load(" + index_of(op.acc.rank, op.index) + ")");
    if (runs) {
      run_loop +=
          "        const auto o_" + name + " = " + run_operand(name, op, r, run_pre).at + ";\n";
      run_args.push_back("o_" + name);
    }
    ops.push_back(op);
  }
  auto e = elementwise_expr(*p, args);
  VTC_CHECK(e) << p->describe() << ": no expression";
  auto e_run = runs ? elementwise_expr(*p, run_args) : std::nullopt;
  const bool vectors = r > 0 && dialect_.vector_forms();
  std::vector<std::string> vector_args;
  for (size_t k = 0; k < ops.size(); ++k)
    vector_args.push_back("o_a" + std::to_string(k));
  auto e_vector = vectors ? elementwise_expr(*p, vector_args) : std::nullopt;
  std::string name = fresh("P");
  const char* t = cpp_storage_type(v->type.dtype);
  std::ostringstream os;
  os << "struct " << name << " {\n"
     << "  using value_type = " << t << ";\n"
     << "  static constexpr int rank = " << r << ";\n"
     << "  static constexpr int64_t contig = 1;\n"
     << "  static constexpr bool has_ptr = false;\n";
  std::string inits;
  for (size_t k = 0; k < ops.size(); ++k) {
    os << "  " << ops[k].acc.type << " a" << k << ";\n";
    inits += (k ? ", " : "") + ops[k].acc.init;
  }
  os << "  " << q() << "auto load(const Index<" << r << ">& i) const { return vtc_round<" << t
     << ">(" << *e << "); }\n";
  if (e_run)
    os << "  template <typename D> " << q() << "void run_load(const Index<" << r
       << ">& i, int64_t n, D* dst) const {\n"
       << run_pre << "      for (int64_t j = 0; j < n; ++j) {\n"
       << run_loop << "        dst[j] = D(vtc_round<" << t << ">(" << *e_run
       << "));\n      }\n  }\n";
  if (e_vector) os << vector_loads(ops, r, "a", t, *e_vector);
  os << "};\n";
  def(os.str());
  return {name, name + "{" + inits + "}", r};
}

Acc AccessorEmitter::view(const Acc& inner, int rank, const IndexTerms& index, bool keeps_last,
                          int64_t runs) {
  // A class template over the inner accessor, so that only the members a kernel uses (load,
  // store, ptr) are instantiated.
  std::string name = fresh("W");
  const std::string contig = runs > 0 ? std::to_string(runs) : keeps_last ? "I::contig" : "1";
  std::ostringstream os;
  std::string in_idx = "Index<" + std::to_string(inner.rank) + ">";
  os << "template <typename I> struct " << name << " {\n"
     << "  using value_type = typename I::value_type;\n"
     << "  static constexpr int rank = " << rank << ";\n"
     << "  static constexpr int64_t contig = " << contig << ";\n"
     << "  static constexpr bool has_ptr = I::has_ptr;\n"
     << "  I in;\n"
     << "  " << q() << in_idx << " map(const Index<" << rank << ">& i) const { return " << in_idx
     << "{" << idx_list(index) << "}; }\n"
     << "  " << q() << "auto load(const Index<" << rank
     << ">& i) const { return in.load(map(i)); }\n"
     << "  template <typename V> " << q() << "void store(const Index<" << rank
     << ">& i, V v) const { in.store(map(i), v); }\n"
     << "  " << q() << "auto ptr(const Index<" << rank << ">& i) const { return in.ptr(map(i)); }\n"
     << "  static constexpr bool is_epilogue = vtc::kernels::epilogue_of<I>;\n"
     << "  template <typename V> " << q() << "auto value(const Index<" << rank
     << ">& i, V v) const { return in.value(map(i), v); }\n"
     << "  " << q() << "auto target() const { return " << name
     << "<decltype(in.target())>{in.target()}; }\n";
  // A run here is a run of the inner accessor only when the last index passes through
  // unchanged (a remapped one, like (i[1] % d), wraps inside the run): then pass runs (and
  // an epilogue's adjacent values) through.
  const bool passes_last = keeps_last && !index.empty() && index.back().is_dim(rank - 1);
  if (dialect_.vector_forms() && passes_last)
    os << "  static constexpr bool has_loads = vtc::kernels::loads_of<I>;\n"
       << "  template <int N> __device__ void loads(const Index<" << rank
       << ">& i, int64_t limit, float (&dst)[N]) const {\n"
       << "    in.template loads<N>(map(i), limit, dst);\n  }\n"
       << "  static constexpr bool has_values = vtc::kernels::values_of<I>;\n"
       << "  template <int N, typename R> __device__ void values(const Index<" << rank
       << ">& i, const float (&vs)[N], R (&res)[N]) const {\n"
       << "    in.template values<N>(map(i), vs, res);\n  }\n";
  if (dialect_.run_forms() && passes_last)
    os << "  template <typename D> void run_load(const Index<" << rank
       << ">& i, int64_t n, D* dst) const requires RunLoader<I, D> {\n"
       << "    vtc::kernels::load_run(in, map(i), n, dst);\n  }\n"
       << "  template <typename D> void run_store(const Index<" << rank
       << ">& i, int64_t n, const D* src) const requires RunStorer<I, D> {\n"
       << "    vtc::kernels::store_run(in, map(i), n, src);\n  }\n";
  os << "};\n";
  def(os.str());
  std::string type = name + "<" + inner.type + ">";
  return {type, type + "{" + inner.init + "}", rank};
}

Acc AccessorEmitter::storing(const Value* first, const PostOp& post,
                             const std::vector<const Node*>& chain, const Acc* into) {
  const Value* last = chain.empty() ? first : chain.back()->outputs[0];
  Acc out = into ? *into : stored(last);
  int r = first->type.rank();
  const bool runs = r > 0 && dialect_.run_forms();
  std::vector<ReadOperand> ops;
  std::string run_pre, run_loop; // a run's staging, and the operands of its element j
  // Each operand read at element i (`load`) and over a run (`run`, element j of the run).
  std::vector<std::string> load_args, run_args;
  bool run_constants = true; // every operand one value for the whole run
  auto add = [&](const ReadOperand& op) {
    std::string name = "e" + std::to_string(ops.size());
    load_args.push_back(name + ".load(" + index_of(op.acc.rank, op.index) + ")");
    if (runs) {
      const RunRead read = run_operand(name, op, r, run_pre);
      run_constants = run_constants && read.constant;
      run_loop += "        const auto o_" + name + " = " + read.at + ";\n";
    }
    run_args.push_back("o_" + name);
    ops.push_back(op);
    return ops.size() - 1;
  };
  for (const ReadOperand& op : post.operands)
    add(op);
  auto apply_post = [&](const std::vector<std::string>& args) {
    return post.identity() ? std::string("v")
                           : post.expr(std::vector<std::string>(
                                 args.begin(), args.begin() + long(post.operands.size())));
  };
  std::map<const Value*, std::string> local{{first, "x0"}};
  std::ostringstream body, run_body;
  body << "    const auto x0 = vtc_round<" << cpp_storage_type(first->type.dtype) << ">("
       << apply_post(load_args) << ");\n";
  run_body << "        const auto x0 = vtc_round<" << cpp_storage_type(first->type.dtype) << ">("
           << apply_post(run_args) << ");\n";
  for (const Node* n : chain) {
    std::vector<std::string> args, rargs;
    for (size_t k = 0; k < n->inputs.size(); ++k) {
      const Value* in = n->inputs[k];
      if (!in) continue;
      if (local.count(in)) {
        args.push_back(local[in]);
        rargs.push_back(local[in]);
        continue;
      }
      size_t at = add({value(in), plane_operand_index(*n, k, r)});
      args.push_back(load_args[at]);
      rargs.push_back(run_args[at]);
    }
    auto e = elementwise_expr(*n, args);
    auto e_run = elementwise_expr(*n, rargs);
    VTC_CHECK(e && e_run) << n->describe() << ": no expression";
    std::string var = "x" + std::to_string(local.size());
    local[n->outputs[0]] = var;
    const char* t = cpp_storage_type(n->outputs[0]->type.dtype);
    body << "    const auto " << var << " = vtc_round<" << t << ">(" << *e << ");\n";
    run_body << "        const auto " << var << " = vtc_round<" << t << ">(" << *e_run << ");\n";
  }
  std::string name = fresh("E");
  std::ostringstream os;
  os << "struct " << name << " {\n"
     << "  using value_type = " << cpp_storage_type(first->type.dtype) << ";\n"
     << "  static constexpr int rank = " << r << ";\n"
     << "  static constexpr int64_t contig = 1;\n"
     << "  static constexpr bool has_ptr = false;\n"
     << "  " << out.type << " out;\n";
  std::string inits = out.init;
  for (size_t k = 0; k < ops.size(); ++k) {
    os << "  " << ops[k].acc.type << " e" << k << ";\n";
    inits += ", " + ops[k].acc.init;
  }
  os << "  static constexpr bool is_epilogue = true;\n"
     << "  template <typename V> " << q() << "auto value(const Index<" << r
     << ">& i, V v) const {\n"
     << body.str() << "    return " << local[last] << ";\n  }\n"
     << "  " << q() << "auto target() const { return out; }\n"
     << "  template <typename V> " << q() << "void store(const Index<" << r
     << ">& i, V v) const { out.store(i, value(i, v)); }\n";
  // The same chain over N adjacent elements along the last dimension (a vector store's):
  // operands constant along it read once, operands read along it as vectors where they can be.
  if (dialect_.vector_forms() && r > 0) {
    const std::string last_dim = std::to_string(r - 1), R = std::to_string(r);
    os << "  static constexpr bool has_values = true;\n"
       << "  template <int N, typename R> __device__ void values(const Index<" << R
       << ">& i, const float (&vs)[N], R (&res)[N]) const {\n";
    std::string loop;
    for (size_t k = 0; k < ops.size(); ++k) {
      const std::string e = "e" + std::to_string(k);
      const std::string at = index_of(ops[k].acc.rank, ops[k].index);
      const AlongLast along = along_last(ops[k], r);
      if (along == AlongLast::constant) {
        os << "    const auto c_" << e << " = " << e << ".load(" << at << ");\n";
        loop += "      const auto o_" + e + " = c_" + e + ";\n";
        continue;
      }
      const std::string each = "[&](Index<" + R + "> i) { i[" + last_dim + "] += u; return " + e +
                               ".load(" + at + "); }(i)";
      os << "    compute_t<decltype(" << e << ")> b_" << e << "[N];\n";
      if (along == AlongLast::run)
        os << "    if constexpr (portable::is_same_v<compute_t<decltype(" << e
           << ")>, float>) {\n      const auto ix = " << at << ";\n"
           << "      vtc::kernels::cuda::load_floats<N>(" << e
           << ", ix, vtc::kernels::cuda::vector_at<N>(" << e << ", ix), ix[" << ops[k].acc.rank - 1
           << "] + N, b_" << e << ");\n    } else {\n"
           << "      for (int u = 0; u < N; ++u) b_" << e << "[u] = " << each << ";\n    }\n";
      else
        os << "    for (int u = 0; u < N; ++u) b_" << e << "[u] = " << each << ";\n";
      loop += "      const auto o_" + e + " = b_" + e + "[u];\n";
    }
    os << "#pragma unroll\n    for (int u = 0; u < N; ++u) {\n      const float v = vs[u];\n"
       << loop << run_body.str() << "      res[u] = " << local[last] << ";\n    }\n  }\n";
  }
  // The same chain over a run: operands staged, one loop over the run, its results written
  // straight into the output where the run lies there as compute values, else staged and
  // stored as one run. When every operand is one value for the whole run (a channel's scale
  // and shift), the run's last partial vector is computed as a whole one too (map_tail).
  if (runs) {
    os << "  template <typename V> void run_store(const Index<" << r
       << ">& i, int64_t n, const V* src) const {\n"
       << run_pre << "      using R = compute_t<decltype(out)>;\n"
       << "      R staged[kRunChunk];\n"
       << "      R* const direct = vtc::kernels::run_target<R>(out, i, n);\n"
       << "      R* const res = direct ? direct : staged;\n";
    if (run_constants)
      // Inlined by force: called in the loop and by map_tail, GCC kept the lambda out of
      // line, one call per element, and the loop scalar (a SiLU epilogue at 0.3 GB/s).
      os << "      auto value = [&](const V v) __attribute__((always_inline)) {\n"
         << run_loop << run_body.str() << "        return " << local[last] << ";\n      };\n"
         << "      const int64_t whole = n / kRunTail * kRunTail;\n"
         << "      for (int64_t j = 0; j < whole; ++j)\n        res[j] = value(src[j]);\n"
         << "      if (whole < n)\n"
         << "        vtc::kernels::map_tail(src + whole, n - whole, res + whole, value);\n";
    else
      os << "      for (int64_t j = 0; j < n; ++j) {\n        const V v = src[j];\n"
         << run_loop << run_body.str() << "        res[j] = " << local[last] << ";\n      }\n";
    os << "      if (!direct) vtc::kernels::store_run(out, i, n, res);\n  }\n";
  }
  os << "};\n";
  def(os.str());
  return {name, name + "{" + inits + "}", r};
}

} // namespace vtc
