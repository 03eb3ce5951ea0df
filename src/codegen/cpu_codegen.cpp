// Code generation for the cpu target. Accessors come in four shapes, all emitted as plain
// aggregate structs so the C++ compiler sees every index computation whole:
//   mapped   — a Mapping: one piece per guard, physical bases as raw pointers with constant
//              strides (emit_offset), virtual bases as nested accessors;
//   computed — a fused prologue value: f(operands at the broadcast index), rounded to its dtype;
//   storing  — an epilogue chain ending in a store to the kernel's real output;
//   view     — an index remapping (batch flattening, an axis moved last, a transpose).
#include "codegen/cpu_codegen.h"

#include <functional>
#include <limits>
#include <numeric>
#include <set>
#include <sstream>

#include "codegen/elementwise_expr.h"
#include "codegen/library_gemm.h"
#include "kernels/cpu/conv_shape.h"
#include "mapping/contiguity.h"
#include "mapping/emit.h"
#include "mapping/flat_plane.h"
#include "mapping/rules.h"
#include "mapping/transposed_operand.h"
#include "ops/op_registry.h"
#include "passes/fusion.h"
#include "support/error.h"

namespace vtc {

namespace {

struct Acc {
  std::string type; // struct name
  std::string init; // expression building it (uses `buf`)
  int rank = 0;
};

// An operand of a computed value or an epilogue: its accessor and the index it is read at,
// one expression of the result's index `i` per dimension.
struct Operand {
  Acc acc;
  std::vector<std::string> index;
};

std::string idx_list(const std::vector<std::string>& xs) {
  std::string s;
  for (size_t i = 0; i < xs.size(); ++i)
    s += (i ? ", " : "") + xs[i];
  return s;
}

std::string index_of(int rank, const std::vector<std::string>& xs) {
  return "Index<" + std::to_string(rank) + ">{" + idx_list(xs) + "}";
}

// Indices of an operand of shape `in` read at index `i` of an output of rank `out_rank`, with
// numpy broadcasting (size-1 dims read index 0).
std::vector<std::string> broadcast_index(const Shape& in, int out_rank, const std::string& i) {
  std::vector<std::string> xs;
  int r = int(in.size());
  for (int d = 0; d < r; ++d)
    xs.push_back(in[size_t(d)] == 1 ? "0" : i + "[" + std::to_string(d + out_rank - r) + "]");
  return xs;
}

// Row-major unflattening of a flat index `flat` over `dims`: one expression per dim.
std::vector<std::string> unflatten(const std::string& flat, const Shape& dims) {
  std::vector<std::string> xs(dims.size());
  int64_t stride = 1;
  for (size_t d = dims.size(); d-- > 0;) {
    std::string q = stride == 1 ? flat : "(" + flat + " / " + std::to_string(stride) + ")";
    xs[d] = dims[d] == 1 ? "0" : "(" + q + " % " + std::to_string(dims[d]) + ")";
    stride *= dims[d];
  }
  return xs;
}

// Reading operand `name` over a run of the last dimension (`i` is the run's first index,
// `n` its length, `j` the position in it): once when its index does not involve the last
// dimension, as one run when the last dimension indexes its last, element by element
// otherwise. Appends the statements to `pre`; returns the expression for element j.
std::string run_operand(const std::string& name, const Operand& op, int rank, std::string& pre) {
  const std::string last = "i[" + std::to_string(rank - 1) + "]";
  int uses = 0;
  for (const std::string& x : op.index)
    uses += x.find(last) != std::string::npos;
  const std::string at = index_of(op.acc.rank, op.index);
  if (uses == 0) {
    pre += "      const auto c_" + name + " = " + name + ".load(" + at + ");\n";
    return "c_" + name;
  }
  pre += "      compute_t<decltype(" + name + ")> b_" + name + "[kRunChunk];\n";
  if (uses == 1 && op.index.back() == last) {
    pre += "      vtc::kernels::load_run(" + name + ", " + at + ", n, b_" + name + ");\n";
  } else {
    pre += "      for (int64_t j = 0; j < n; ++j)\n        b_" + name + "[j] = [&](Index<" +
           std::to_string(rank) + "> i) { i[" + std::to_string(rank - 1) + "] += j; return " +
           name + ".load(" + at + "); }(i);\n";
  }
  return "b_" + name + "[j]";
}

// A double as a C++ literal that reads back exactly.
std::string literal(double v) {
  if (v != v) return "NAN";
  if (v == std::numeric_limits<double>::infinity()) return "INFINITY";
  if (v == -std::numeric_limits<double>::infinity()) return "-INFINITY";
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

class Gen {
public:
  Gen(const StorageMap& storage, std::string& defs, int& counter)
      : storage_(storage), defs_(defs), counter_(counter) {}

  // Values produced inside the kernel being generated (computed, not loaded).
  std::set<const Value*> inside;

  std::string fresh(const char* prefix) { return prefix + std::to_string(counter_++); }

  // While set to [h, w], the kernel being generated runs over its image planes flattened to
  // one row (flat_plane.h): values spanning the plane are read and written as [.., 1, h*w].
  std::optional<std::pair<int64_t, int64_t>> flat_plane;

  // The mapping of a value as stored: the identity on its buffer, or its virtual mapping.
  Mapping storage_mapping(const Value* v) const {
    auto it = storage_.virtual_values.find(v);
    if (it != storage_.virtual_values.end()) return it->second;
    VTC_CHECK(storage_.buffer_of.count(v)) << "value '" << v->name << "' has no storage";
    return identity_mapping(value_base(v));
  }

  // Its mapping seen over the flattened plane; nullopt when that is not worth it or possible.
  std::optional<Mapping> flat_mapping(const Value* v) const {
    return flatten_plane(storage_mapping(v), value_base(v), int64_t(dtype_size(v->type.dtype)));
  }

  // The accessor of a value as stored (over the flattened plane while one is set).
  Acc stored(const Value* v) {
    if (flat_plane &&
        plane_use(v->type.shape, flat_plane->first, flat_plane->second) == PlaneUse::spans) {
      auto m = flat_mapping(v);
      VTC_CHECK(m) << "value '" << v->name << "' cannot be read as a flattened plane";
      return mapped(*m, v->type.dtype);
    }
    return stored_as_is(v);
  }
  Acc stored_as_is(const Value* v) { return mapped(storage_mapping(v), v->type.dtype); }

  // The accessor a kernel reads a value through: computed when produced inside the kernel.
  Acc value(const Value* v) {
    if (inside.count(v)) return computed(v);
    return stored(v);
  }

  Acc mapped(const Mapping& m, DType dtype);
  Acc computed(const Value* v);
  Acc view(const Acc& inner, int rank, const std::vector<std::string>& index, bool keeps_last);
  // Stores through the epilogue chain `chain` (each node consumes the previous value), after
  // `post` (an expression of V, the accumulated value, and `extra` operands) rounded to `first`.
  // `post` names its operands @0, @1, ... (the entries of `extra`).
  // `into`, when given, is where the chain's last value goes instead of its own storage.
  Acc storing(const Value* first, const std::string& post, const std::vector<Operand>& extra,
              const std::vector<const Node*>& chain, const Acc* into = nullptr);

  void def(const std::string& s) { defs_ += s; }

  // The address of a physical value's buffer as `T*` (for library calls, which take dense
  // operands only).
  std::string buffer_address(const Value* v) const {
    auto it = storage_.buffer_of.find(v);
    VTC_CHECK(it != storage_.buffer_of.end() && !storage_.virtual_values.count(v))
        << "value '" << v->name << "' is an operand of a library kernel but is not physical";
    return "static_cast<" + std::string(cpp_storage_type(v->type.dtype)) + "*>(buf[" +
           std::to_string(it->second) + "])";
  }

  // The ConstantRef argument for a kernel operand: the program's packs and the buffer, when
  // the value is a constant in a buffer of its own; a default ConstantRef otherwise.
  std::string constant_ref(const Value* v) const {
    auto it = storage_.buffer_of.find(v);
    if (!v->constant || storage_.virtual_values.count(v) || it == storage_.buffer_of.end())
      return "ConstantRef{}";
    return "ConstantRef{static_cast<ConstantPacks*>(packs), buf[" + std::to_string(it->second) +
           "]}";
  }

private:
  const StorageMap& storage_;
  std::string& defs_;
  int& counter_;
};

// run_load() of a mapping with constant pieces (a Pad's border, a Concat with a constant
// part), which has no ptr(): a run along the last dimension that lies whole in one piece's
// guard, with no earlier piece's guard meeting it, is a fill of the constant or a copy from
// the base where the piece's run of contiguous elements holds it; any other run goes element
// by element through load(). Empty where a piece searches or reads a nested accessor.
std::string run_load_of_pieces(const Mapping& m, const EmitNames& names,
                               const std::map<const Base*, std::string>& member) {
  const int r = m.rank();
  if (r == 0) return "";
  for (const Piece& p : m.pieces)
    if (!p.searches.empty() || (!p.is_constant() && member.at(p.base)[0] != 'p')) return "";
  const std::string last = "i" + std::to_string(r - 1);
  const int64_t extent = std::max<int64_t>(m.shape.back(), 1);
  std::ostringstream os;
  os << "  template <typename D> void run_load(const Index<" << r
     << ">& i, int64_t n, D* dst) const {\n";
  for (int d = 0; d < r; ++d)
    os << "    const long long i" << d << " = i[" << d << "];\n";
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
         << "          const T* src = " << member.at(p.base) << " + (" << emit_offset(p, names)
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

Acc Gen::mapped(const Mapping& m, DType dtype) {
  std::string name = fresh("M");
  const char* t = cpp_storage_type(dtype);
  int r = m.rank();
  // Members: physical bases and load tables as pointers, virtual bases as nested accessors.
  std::vector<const Base*> bases;
  std::map<const Base*, std::string> member;
  std::vector<Acc> nested;
  std::string members, inits;
  std::function<std::string(const Base*)> base_name = [&](const Base* b) -> std::string {
    auto it = member.find(b);
    if (it != member.end()) return it->second;
    const Value* v = static_cast<const Value*>(b->key);
    VTC_CHECK(v) << "mapping base '" << b->name << "' is not a graph value";
    std::string mname;
    if (storage_.virtual_values.count(v)) {
      Acc a = stored_as_is(v); // a nested base, indexed in its own coordinates
      mname = "a" + std::to_string(member.size());
      members += "  " + a.type + " " + mname + ";\n";
      inits += (inits.empty() ? "" : ", ") + a.init;
    } else {
      auto buf = storage_.buffer_of.find(v);
      VTC_CHECK(buf != storage_.buffer_of.end()) << "value '" << v->name << "' has no storage";
      mname = "p" + std::to_string(member.size());
      std::string pt = cpp_storage_type(v->type.dtype);
      members += "  " + pt + "* " + mname + ";\n";
      inits += (inits.empty() ? "" : ", ") +
               ("static_cast<" + pt + "*>(buf[" + std::to_string(buf->second) + "])");
    }
    member[b] = mname;
    return mname;
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
  auto body = [&](const std::string& what) {
    std::string s;
    for (int d = 0; d < r; ++d)
      s += "    const long long i" + std::to_string(d) + " = i[" + std::to_string(d) + "];\n";
    for (int k = 0; k < max_searches; ++k)
      s += "    long long s" + std::to_string(k) + " = -1;\n";
    for (int k = 0; k < max_searches; ++k)
      s += "    (void)s" + std::to_string(k) + ";\n";
    bool unconditional = false;
    for (const Piece& p : m.pieces) {
      bool whole = p.searches.empty() && p.guard == full_box(m.shape);
      std::string stmt;
      if (p.is_constant()) {
        if (what == "ptr")
          stmt = "return nullptr;";
        else if (what == "load")
          stmt = "return C(" + literal(p.value) + ");";
        else
          stmt = "return;";
      } else {
        const Value* bv = static_cast<const Value*>(p.base->key);
        std::string bn = base_name(p.base);
        bool nested_base = storage_.virtual_values.count(bv) != 0;
        std::string target;
        if (nested_base) {
          std::vector<std::string> xs;
          for (const IndexExpr& e : p.index)
            xs.push_back(emit(e, names));
          target = index_of(p.base->rank(), xs);
          if (what == "ptr")
            stmt = "return " + bn + ".ptr(" + target + ");";
          else if (what == "load")
            stmt = "return C(" + bn + ".load(" + target + "));";
          else
            stmt = bn + ".store(" + target + ", v); return;";
        } else {
          std::string off = emit_offset(p, names);
          if (what == "ptr")
            stmt = "return " + bn + " + (" + off + ");";
          else if (what == "load")
            stmt = "return to_compute(" + bn + "[" + off + "]);";
          else
            stmt = bn + "[" + off + "] = from_compute<T>(v); return;";
        }
      }
      if (whole) {
        s += "    " + stmt + "\n";
        unconditional = true;
        break;
      }
      s += "    if (" + emit_guard(p, names) + ") { " + stmt + " }\n";
    }
    if (!unconditional) {
      if (what == "ptr")
        s += "    return nullptr;\n";
      else if (what == "load")
        s += "    return C(0);\n";
    }
    return s;
  };
  std::string ptr_body = has_ptr ? body("ptr") : "";
  std::string load_body = body("load");
  std::string store_body = body("store");
  for (const auto& [b, mname] : member)
    if (mname[0] == 'a') has_ptr = false; // nested accessors: keep to load/store
  int64_t contig = 1;
  if (has_ptr && r > 0) {
    Contiguity c = contiguity(m, int64_t(dtype_size(dtype)), kCpuCacheLineBytes);
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
  if (has_ptr) os << "  T* ptr(const Index<" << r << ">& i) const {\n" << ptr_body << "  }\n";
  if (!has_ptr) os << run_load_of_pieces(m, names, member);
  os << "  C load(const Index<" << r << ">& i) const {\n"
     << load_body << "  }\n"
     << "  template <typename V> void store(const Index<" << r << ">& i, V v) const {\n"
     << store_body << "  }\n};\n";
  def(os.str());
  return {name, name + "{" + inits + "}", r};
}

Acc Gen::computed(const Value* v) {
  const Node* p = v->producer;
  VTC_CHECK(p) << "computed value '" << v->name << "' has no producer";
  int r = v->type.rank();
  std::vector<Operand> ops;
  std::vector<std::string> args, run_args;
  std::string run_pre, run_loop; // a run's staging, and the operands of its element j
  for (size_t k = 0; k < p->inputs.size(); ++k) {
    const Value* in = p->inputs[k];
    if (!in) continue;
    Operand op{value(in), p->op == "BatchNormalization" && k > 0
                              ? std::vector<std::string>{"i[1]"}
                              : broadcast_index(in->type.shape, r, "i")};
    std::string name = "a" + std::to_string(ops.size());
    args.push_back(name + ".load(" + index_of(op.acc.rank, op.index) + ")");
    if (r > 0) {
      run_loop +=
          "        const auto o_" + name + " = " + run_operand(name, op, r, run_pre) + ";\n";
      run_args.push_back("o_" + name);
    }
    ops.push_back(op);
  }
  auto e = elementwise_expr(*p, args);
  VTC_CHECK(e) << p->describe() << ": no cpu expression";
  auto e_run = r > 0 ? elementwise_expr(*p, run_args) : std::nullopt;
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
  os << "  auto load(const Index<" << r << ">& i) const { return vtc_round<" << t << ">(" << *e
     << "); }\n";
  if (e_run)
    os << "  template <typename D> void run_load(const Index<" << r
       << ">& i, int64_t n, D* dst) const {\n"
       << run_pre << "      for (int64_t j = 0; j < n; ++j) {\n"
       << run_loop << "        dst[j] = D(vtc_round<" << t << ">(" << *e_run
       << "));\n      }\n  }\n";
  os << "};\n";
  def(os.str());
  return {name, name + "{" + inits + "}", r};
}

Acc Gen::view(const Acc& inner, int rank, const std::vector<std::string>& index, bool keeps_last) {
  // A class template over the inner accessor, so that only the members a kernel uses (load,
  // store, ptr) are instantiated.
  std::string name = fresh("W");
  std::ostringstream os;
  std::string in_idx = "Index<" + std::to_string(inner.rank) + ">";
  os << "template <typename I> struct " << name << " {\n"
     << "  using value_type = typename I::value_type;\n"
     << "  static constexpr int rank = " << rank << ";\n"
     << "  static constexpr int64_t contig = " << (keeps_last ? "I::contig" : "1") << ";\n"
     << "  static constexpr bool has_ptr = I::has_ptr;\n"
     << "  I in;\n"
     << "  " << in_idx << " map(const Index<" << rank << ">& i) const { return " << in_idx << "{"
     << idx_list(index) << "}; }\n"
     << "  auto load(const Index<" << rank << ">& i) const { return in.load(map(i)); }\n"
     << "  template <typename V> void store(const Index<" << rank
     << ">& i, V v) const { in.store(map(i), v); }\n"
     << "  auto ptr(const Index<" << rank << ">& i) const { return in.ptr(map(i)); }\n";
  // A run here is a run of the inner accessor only when the last index passes through
  // unchanged (a remapped one, like (i[1] % d), wraps inside the run): then pass runs through.
  if (keeps_last && !index.empty() && index.back() == "i[" + std::to_string(rank - 1) + "]")
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

Acc Gen::storing(const Value* first, const std::string& post, const std::vector<Operand>& extra,
                 const std::vector<const Node*>& chain, const Acc* into) {
  const Value* last = chain.empty() ? first : chain.back()->outputs[0];
  Acc out = into ? *into : stored(last);
  int r = first->type.rank();
  std::vector<Operand> ops;
  std::string run_pre, run_loop; // a run's staging, and the operands of its element j
  // Each operand read at element i (`load`) and over a run (`run`, element j of the run).
  std::vector<std::string> load_args, run_args;
  bool run_constants = true; // every operand one value for the whole run (run_operand's c_)
  auto add = [&](const Operand& op) {
    std::string name = "e" + std::to_string(ops.size());
    load_args.push_back(name + ".load(" + index_of(op.acc.rank, op.index) + ")");
    if (r > 0) {
      const std::string at_j = run_operand(name, op, r, run_pre);
      run_constants = run_constants && at_j == "c_" + name;
      run_loop += "        const auto o_" + name + " = " + at_j + ";\n";
    }
    run_args.push_back("o_" + name);
    ops.push_back(op);
    return ops.size() - 1;
  };
  auto fill = [](std::string e, const std::vector<std::string>& args) {
    for (size_t k = args.size(); k-- > 0;) { // @10 before @1
      const std::string key = "@" + std::to_string(k);
      for (size_t at; (at = e.find(key)) != std::string::npos;)
        e.replace(at, key.size(), args[k]);
    }
    return e;
  };
  for (const Operand& op : extra)
    add(op);
  std::map<const Value*, std::string> local{{first, "x0"}};
  std::ostringstream body, run_body;
  body << "    const auto x0 = vtc_round<" << cpp_storage_type(first->type.dtype) << ">("
       << fill(post, load_args) << ");\n";
  run_body << "        const auto x0 = vtc_round<" << cpp_storage_type(first->type.dtype) << ">("
           << fill(post, run_args) << ");\n";
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
      size_t at = add({value(in), n->op == "BatchNormalization" && k > 0
                                      ? std::vector<std::string>{"i[1]"}
                                      : broadcast_index(in->type.shape, r, "i")});
      args.push_back(load_args[at]);
      rargs.push_back(run_args[at]);
    }
    auto e = elementwise_expr(*n, args);
    auto e_run = elementwise_expr(*n, rargs);
    VTC_CHECK(e && e_run) << n->describe() << ": no cpu expression";
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
  os << "  template <typename V> void store(const Index<" << r << ">& i, V v) const {\n"
     << body.str() << "    out.store(i, " << local[last] << ");\n  }\n";
  // The same chain over a run: operands staged, one loop over the run, its results written
  // straight into the output where the run lies there as compute values, else staged and
  // stored as one run. When every operand is one value for the whole run (a channel's scale
  // and shift), the run's last partial vector is computed as a whole one too (map_tail).
  if (r > 0) {
    os << "  template <typename V> void run_store(const Index<" << r
       << ">& i, int64_t n, const V* src) const {\n"
       << run_pre << "      using R = compute_t<decltype(out)>;\n"
       << "      R staged[kRunChunk];\n"
       << "      R* const direct = vtc::kernels::run_target<R>(out, i, n);\n"
       << "      R* const res = direct ? direct : staged;\n";
    if (run_constants)
      os << "      auto value = [&](const V v) {\n"
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

std::string shape_array(const Shape& s) {
  std::vector<std::string> xs;
  for (int64_t d : s)
    xs.push_back(std::to_string(d));
  return index_of(int(s.size()), xs);
}

// Pads (top, left, bottom, right) of a 2-D window op from `pads` or `auto_pad`.
std::array<int64_t, 4> window_pads(const Node& n, const Shape& in, const Shape& out,
                                   const std::vector<int64_t>& k, const std::vector<int64_t>& st,
                                   const std::vector<int64_t>& dil) {
  std::string mode = n.attr_string("auto_pad", "NOTSET");
  if (mode == "NOTSET") {
    auto p = n.attr_ints("pads", {0, 0, 0, 0});
    VTC_CHECK(p.size() == 4) << n.describe() << ": expected 4 pads";
    return {p[0], p[1], p[2], p[3]};
  }
  if (mode == "VALID") return {0, 0, 0, 0};
  std::array<int64_t, 4> pads{};
  for (int d = 0; d < 2; ++d) {
    int64_t total =
        std::max<int64_t>(0, (out[size_t(d + 2)] - 1) * st[size_t(d)] +
                                 (k[size_t(d)] - 1) * dil[size_t(d)] + 1 - in[size_t(d + 2)]);
    int64_t small = total / 2, big = total - small;
    pads[size_t(d)] = mode == "SAME_UPPER" ? small : big;
    pads[size_t(d + 2)] = mode == "SAME_UPPER" ? big : small;
  }
  return pads;
}

class KernelGen {
public:
  KernelGen(const Kernel& k, Gen& g) : k_(k), g_(g) {
    for (const Node* n : k.nodes)
      for (const Value* v : n->outputs)
        if (v) g_.inside.insert(v);
  }

  // The epilogue: the kernel's nodes after the anchor that depend on its value, in order (a
  // MaxPool tail left out).
  std::vector<const Node*> epilogue_chain() const {
    std::set<const Value*> derived{k_.anchor->outputs[0]};
    std::vector<const Node*> chain;
    auto at = std::find(k_.nodes.begin(), k_.nodes.end(), k_.anchor);
    auto end = max_pool_tail(k_) ? k_.nodes.end() - 1 : k_.nodes.end();
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

  // The anchor's output accessor: `post` and the epilogue stored, or the value itself; into
  // `into` instead of the chain's last value's storage when given.
  Acc output(const std::string& post = "v", const std::vector<Operand>& extra = {},
             const Acc* into = nullptr) {
    const Value* first = k_.anchor->outputs[0];
    std::vector<const Node*> chain = epilogue_chain();
    if (chain.empty() && post == "v") return into ? *into : g_.stored(first);
    return g_.storing(first, post, extra, chain, into);
  }

  std::optional<std::string> generate() {
    if (!k_.anchor) return elementwise();
    const Node& a = *k_.anchor;
    for (size_t i = 1; i < a.outputs.size(); ++i)
      if (a.outputs[i] && (!a.outputs[i]->users.empty() || a.outputs[i]->is_graph_output))
        return std::nullopt; // extra outputs (indices, statistics): reference only
    if (k_.impl == KernelImpl::openblas_sgemm) return library_gemm(a);
    if (a.op == "MatMul") return matmul(a);
    if (a.op == "Gemm") return gemm(a);
    if (a.op == "Conv") return conv(a);
    if (a.op == "MaxPool" || a.op == "AveragePool") return pool(a);
    if (a.op == "GlobalAveragePool" || a.op == "GlobalMaxPool") return global_pool(a);
    if (a.op == "Softmax" || a.op == "LogSoftmax") return softmax(a);
    if (a.op == "LayerNormalization") return layer_norm(a);
    if (a.op.rfind("Reduce", 0) == 0) return reduce(a);
    if (a.op == "Resize") return resize(a);
    return std::nullopt;
  }

private:
  std::string elementwise() {
    std::string s;
    for (const Value* o : k_.outputs) {
      // Over the planes flattened to one row when every operand allows it.
      const Shape& shape = o->type.shape;
      const size_t r = shape.size();
      std::optional<FlatPlaneScope> flat;
      if (r >= 2 && plane_flattens(shape[r - 2], shape[r - 1], 0))
        flat.emplace(g_, shape[r - 2], shape[r - 1]);
      Acc in = g_.computed(o);
      Acc out = g_.stored(o);
      s += "  copy(" + out.init + ", " + shape_array(flat ? flat_plane_shape(shape) : shape) +
           ", " + in.init + ");\n";
    }
    return s;
  }

  std::string matmul(const Node& n) {
    const Shape& sa = n.inputs[0]->type.shape;
    const Shape& sb = n.inputs[1]->type.shape;
    const Shape& so = n.outputs[0]->type.shape;
    int ra = int(sa.size()), rb = int(sb.size());
    int64_t M = ra == 1 ? 1 : sa[size_t(ra - 2)], K = sa.back(), N = rb == 1 ? 1 : sb.back();
    int nb = int(so.size()) - (ra > 1 ? 1 : 0) - (rb > 1 ? 1 : 0);
    Shape batch_dims(so.begin(), so.begin() + nb);
    int64_t batch = shape_numel(batch_dims);
    std::vector<std::string> ob = unflatten("i[0]", batch_dims);
    auto batch_index = [&](const Shape& s, int r) {
      std::vector<std::string> xs;
      for (int d = 0; d < r - 2; ++d)
        xs.push_back(s[size_t(d)] == 1 ? "0" : ob[size_t(d + nb - (r - 2))]);
      return xs;
    };
    std::vector<std::string> ia = ra == 1 ? std::vector<std::string>{"i[2]"} : batch_index(sa, ra);
    if (ra > 1) ia.insert(ia.end(), {"i[1]", "i[2]"});
    std::vector<std::string> ib = rb == 1 ? std::vector<std::string>{"i[1]"} : batch_index(sb, rb);
    if (rb > 1) ib.insert(ib.end(), {"i[1]", "i[2]"});
    std::vector<std::string> ic(ob.begin(), ob.end());
    if (ra > 1) ic.push_back("i[1]");
    if (rb > 1) ic.push_back("i[2]");
    Acc A = g_.view(g_.value(n.inputs[0]), 3, ia, true);
    // A B whose columns, not rows, are runs (q . K^T over a K cache, EfficientViT's v . k^T):
    // B is read through its transpose (transposed_operand.h).
    const Value* b = n.inputs[1];
    std::optional<Mapping> bt;
    if (rb > 1 && !g_.inside.count(b))
      bt = transposed_operand(g_.storage_mapping(b), value_base(b),
                              int64_t(dtype_size(b->type.dtype)));
    Acc B = bt ? g_.view(g_.mapped(*bt, b->type.dtype), 3, ib, true)
               : g_.view(g_.value(b), 3, ib, rb > 1);
    Acc Cv = g_.view(output(), 3, ic, rb > 1);
    return std::string(bt ? "  gemm_bt(" : "  gemm(") + Cv.init + ", " + A.init + ", " + B.init +
           ", " + std::to_string(batch) + ", " + std::to_string(M) + ", " + std::to_string(N) +
           ", " + std::to_string(K) + ");\n";
  }

  // Gemm's alpha and beta * C, applied to the product v before the epilogue (C is @0).
  std::string gemm_post(const Node& n, std::vector<Operand>& extra) {
    double alpha = n.attr_float("alpha", 1.0f), beta = n.attr_float("beta", 1.0f);
    std::string post = alpha == 1.0 ? "v" : "(v * " + std::to_string(alpha) + ")";
    if (n.input(2) && beta != 0) {
      extra.push_back({g_.value(n.inputs[2]), broadcast_index(n.inputs[2]->type.shape, 2, "i")});
      post = "(" + post + " + " + (beta == 1.0 ? "@0" : std::to_string(beta) + " * @0") + ")";
    }
    return post;
  }

  std::string gemm(const Node& n) {
    bool ta = n.attr_int("transA", 0), tb = n.attr_int("transB", 0);
    const Shape& sa = n.inputs[0]->type.shape;
    const Shape& sb = n.inputs[1]->type.shape;
    int64_t M = ta ? sa[1] : sa[0], K = ta ? sa[0] : sa[1], N = tb ? sb[0] : sb[1];
    std::vector<Operand> extra;
    std::string post = gemm_post(n, extra);
    Acc A = g_.view(g_.value(n.inputs[0]), 3,
                    ta ? std::vector<std::string>{"i[2]", "i[1]"}
                       : std::vector<std::string>{"i[1]", "i[2]"},
                    !ta);
    Acc B = g_.view(g_.value(n.inputs[1]), 3,
                    tb ? std::vector<std::string>{"i[2]", "i[1]"}
                       : std::vector<std::string>{"i[1]", "i[2]"},
                    !tb);
    Acc Cv = g_.view(output(post, extra), 3, {"i[1]", "i[2]"}, true);
    return "  gemm(" + Cv.init + ", " + A.init + ", " + B.init + ", 1, " + std::to_string(M) +
           ", " + std::to_string(N) + ", " + std::to_string(K) + ");\n";
  }

  // The product by OpenBLAS straight into the kernel's output buffer, then Gemm's alpha and
  // bias and the epilogue applied in place by one elementwise pass over it (each element is
  // read, then overwritten, by the same thread).
  std::optional<std::string> library_gemm(const Node& n) {
    std::optional<LibraryGemm> form = library_gemm_form(k_);
    if (!form) return std::nullopt;
    std::string s = library_gemm_call(*form, g_.buffer_address(form->a), g_.buffer_address(form->b),
                                      g_.buffer_address(form->out));
    std::vector<Operand> extra;
    std::string post = n.op == "Gemm" ? gemm_post(n, extra) : "v";
    std::vector<const Node*> chain = epilogue_chain();
    if (chain.empty() && post == "v") return s;
    VTC_CHECK((chain.empty() ? n.outputs[0] : chain.back()->outputs[0]) == form->out)
        << n.describe() << ": the epilogue does not end in the kernel's output";
    Acc epilogue = g_.storing(n.outputs[0], post, extra, chain);
    return s + "  copy(" + epilogue.init + ", " + shape_array(form->out->type.shape) + ", " +
           g_.stored(form->out).init + ");\n";
  }

  // Sets the generator's flattened plane for the life of the scope.
  struct FlatPlaneScope {
    Gen& g;
    FlatPlaneScope(Gen& gen, int64_t h, int64_t w) : g(gen) { g.flat_plane = std::pair{h, w}; }
    ~FlatPlaneScope() { g.flat_plane.reset(); }
  };

  // Whether the kernel can run over its result planes [h, w] flattened to one row: every
  // value its nodes read or write spans the plane or is constant over it (the anchor's inputs
  // from `anchor_own` on, weights and bias, and normalisation parameters aside), and every one
  // in memory can be composed with the flattening and keeps its planes contiguous.
  bool plane_flattens(int64_t h, int64_t w, size_t anchor_own) const {
    if (h <= 1) return false;
    std::set<const Value*> outputs(k_.outputs.begin(), k_.outputs.end());
    auto fits = [&](const Value* v) {
      switch (plane_use(v->type.shape, h, w)) {
      case PlaneUse::constant:
        return true;
      case PlaneUse::partial:
        return false;
      case PlaneUse::spans:
        return (g_.inside.count(v) && !outputs.count(v)) || g_.flat_mapping(v).has_value();
      }
      return false;
    };
    for (const Node* n : k_.nodes) {
      for (size_t k = 0; k < n->inputs.size(); ++k) {
        const Value* in = n->inputs[k];
        if (!in || (n == k_.anchor && k >= anchor_own) || (n->op == "BatchNormalization" && k > 0))
          continue;
        if (!fits(in)) return false;
      }
      for (const Value* o : n->outputs)
        if (o && !fits(o)) return false;
    }
    return true;
  }

  std::optional<std::string> conv(const Node& n) {
    const Shape& sx = n.inputs[0]->type.shape;
    const Shape& sw = n.inputs[1]->type.shape;
    const Shape& so = n.outputs[0]->type.shape;
    if (sx.size() != 4) return std::nullopt;
    auto st = n.attr_ints("strides", {1, 1}), dil = n.attr_ints("dilations", {1, 1});
    auto pads = window_pads(n, sx, so, {sw[2], sw[3]}, st, dil);
    // A pointwise convolution runs over its planes flattened to one row when it can.
    const bool pointwise = sw[2] == 1 && sw[3] == 1 && st == std::vector<int64_t>{1, 1} &&
                           pads == std::array<int64_t, 4>{0, 0, 0, 0};
    std::optional<FlatPlaneScope> flat;
    if (pointwise && plane_flattens(so[2], so[3], 1)) flat.emplace(g_, so[2], so[3]);
    const int64_t h = flat ? 1 : sx[2], w = flat ? sx[2] * sx[3] : sx[3];
    const int64_t ho = flat ? 1 : so[2], wo = flat ? so[2] * so[3] : so[3];
    const int64_t groups = n.attr_int("group", 1);
    const kernels::Conv2dShape cs{sx[0], sx[1],  h,     w,     so[1],  ho,     wo,      sw[2],
                                  sw[3], groups, st[0], st[1], dil[0], dil[1], pads[0], pads[1]};
    std::ostringstream shape;
    shape << "Conv2dShape{" << cs.n << ", " << cs.c_in << ", " << cs.h << ", " << cs.w << ", "
          << cs.c_out << ", " << cs.h_out << ", " << cs.w_out << ", " << cs.kh << ", " << cs.kw
          << ", " << cs.groups << ", " << cs.stride_h << ", " << cs.stride_w << ", " << cs.dil_h
          << ", " << cs.dil_w << ", " << cs.pad_top << ", " << cs.pad_left << "}";
    std::string post = "v";
    std::vector<Operand> extra;
    if (n.input(2)) {
      extra.push_back({g_.value(n.inputs[2]), {"i[1]"}});
      post = "(v + @0)";
    }
    if (const Node* pool = max_pool_tail(k_)) {
      // The epilogue chain stored into a row buffer, pooled from there (conv_max_pool.h).
      const std::optional<std::string> ps = pool_shape(*pool);
      if (!ps || flat) return std::nullopt;
      const std::string rows =
          "ConvRowBuffer{" + std::to_string(cs.c_out) + ", " + std::to_string(cs.w_out) + "}";
      const Acc rows_acc{"ConvRowBuffer", rows, 4};
      return "  conv2d_max_pool(" + g_.stored(pool->outputs[0]).init + ", " +
             output(post, extra, &rows_acc).init + ", " + rows + ", " + g_.value(n.inputs[0]).init +
             ", " + g_.value(n.inputs[1]).init + ", " + shape.str() + ", " + *ps + ", " +
             g_.constant_ref(n.inputs[1]) + ");\n";
    }
    Acc out = output(post, extra);
    // The kernel is chosen here, so that the compiler instantiates only that one.
    const std::string kernel =
        sx[1] / groups == 1 && groups > 1 ? "ConvKernel::depthwise"
        : kernels::conv_rows_fit(cs)      ? "ConvKernel::rows, " + std::to_string(ho * wo)
        : kernels::padded_plane_fits(cs)  ? "ConvKernel::padded_plane, " + std::to_string(ho * wo)
                                          : "ConvKernel::implicit_gemm, " + std::to_string(ho * wo);
    return "  conv2d<" + kernel + ">(" + out.init + ", " + g_.value(n.inputs[0]).init + ", " +
           g_.value(n.inputs[1]).init + ", " + shape.str() + ", NoEpilogue{}, " +
           g_.constant_ref(n.inputs[1]) + ");\n";
  }

  // The Pool2dShape{...} of a 2-D MaxPool or AveragePool without ceil mode.
  static std::optional<std::string> pool_shape(const Node& n) {
    const Shape& sx = n.inputs[0]->type.shape;
    const Shape& so = n.outputs[0]->type.shape;
    if (sx.size() != 4 || n.attr_int("ceil_mode", 0) != 0) return std::nullopt;
    auto k = n.attr_ints("kernel_shape"), st = n.attr_ints("strides", {1, 1}),
         dil = n.attr_ints("dilations", {1, 1});
    if (k.size() != 2) return std::nullopt;
    auto pads = window_pads(n, sx, so, k, st, dil);
    std::ostringstream shape;
    shape << "Pool2dShape{" << sx[0] << ", " << sx[1] << ", " << sx[2] << ", " << sx[3] << ", "
          << so[2] << ", " << so[3] << ", " << k[0] << ", " << k[1] << ", " << st[0] << ", "
          << st[1] << ", " << dil[0] << ", " << dil[1] << ", " << pads[0] << ", " << pads[1] << ", "
          << pads[2] << ", " << pads[3] << "}";
    return shape.str();
  }

  std::optional<std::string> pool(const Node& n) {
    const std::optional<std::string> shape = pool_shape(n);
    if (!shape) return std::nullopt;
    std::string in = g_.value(n.inputs[0]).init, out = output().init;
    if (n.op == "MaxPool") return "  max_pool2d(" + out + ", " + in + ", " + *shape + ");\n";
    return "  avg_pool2d(" + out + ", " + in + ", " + *shape + ", " +
           (n.attr_int("count_include_pad", 0) ? "true" : "false") + ");\n";
  }

  std::optional<std::string> global_pool(const Node& n) {
    const Shape& sx = n.inputs[0]->type.shape;
    if (sx.size() != 4) return std::nullopt;
    std::string f = n.op == "GlobalAveragePool" ? "global_avg_pool2d" : "global_max_pool2d";
    return "  " + f + "(" + output().init + ", " + g_.value(n.inputs[0]).init + ", " +
           std::to_string(sx[0]) + ", " + std::to_string(sx[1]) + ", " + std::to_string(sx[2]) +
           ", " + std::to_string(sx[3]) + ");\n";
  }

  // A rank-2 view [rows, d] of `shape`: `d` over the dims in `inner` (in order), rows over the
  // others (in order); returns the index expressions of the original for (i[0], i[1]).
  static std::vector<std::string> rows_view(const Shape& shape, const std::vector<int>& inner) {
    Shape outer_dims, inner_dims;
    std::vector<int> outer;
    for (int d = 0; d < int(shape.size()); ++d)
      if (std::find(inner.begin(), inner.end(), d) == inner.end()) {
        outer.push_back(d);
        outer_dims.push_back(shape[size_t(d)]);
      }
    for (int d : inner)
      inner_dims.push_back(shape[size_t(d)]);
    auto ro = unflatten("i[0]", outer_dims), ri = unflatten("i[1]", inner_dims);
    std::vector<std::string> xs(shape.size());
    for (size_t k = 0; k < outer.size(); ++k)
      xs[size_t(outer[k])] = ro[k];
    for (size_t k = 0; k < inner.size(); ++k)
      xs[size_t(inner[k])] = ri[k];
    return xs;
  }

  static bool is_trailing(const std::vector<int>& axes, int rank) {
    for (size_t k = 0; k < axes.size(); ++k)
      if (axes[k] != rank - int(axes.size()) + int(k)) return false;
    return true;
  }

  std::optional<std::string> softmax(const Node& n) {
    const Shape& s = n.inputs[0]->type.shape;
    int r = int(s.size());
    if (r == 0) return std::nullopt;
    int axis = int(normalize_axis(n, n.attr_int("axis", -1), r));
    int64_t d = s[size_t(axis)], rows = shape_numel(s) / std::max<int64_t>(d, 1);
    auto xs = rows_view(s, {axis});
    Acc X = g_.view(g_.value(n.inputs[0]), 2, xs, axis == r - 1);
    Acc Y = g_.view(output(), 2, xs, axis == r - 1);
    std::string f = n.op == "Softmax" ? "softmax" : "log_softmax";
    return "  " + f + "(" + Y.init + ", " + X.init + ", " + std::to_string(rows) + ", " +
           std::to_string(d) + ");\n";
  }

  std::optional<std::string> layer_norm(const Node& n) {
    const Shape& s = n.inputs[0]->type.shape;
    int r = int(s.size());
    int axis = int(normalize_axis(n, n.attr_int("axis", -1), r));
    std::vector<int> inner;
    for (int d = axis; d < r; ++d)
      inner.push_back(d);
    Shape inner_dims(s.begin() + axis, s.end());
    int64_t d = shape_numel(inner_dims), rows = shape_numel(s) / std::max<int64_t>(d, 1);
    auto xs = rows_view(s, inner);
    Acc X = g_.view(g_.value(n.inputs[0]), 2, xs, true);
    Acc Y = g_.view(output(), 2, xs, true);
    auto param = [&](const Value* p) {
      auto ji = unflatten("i[0]", inner_dims);
      std::vector<std::string> idx;
      int pr = p->type.rank();
      for (int k = 0; k < pr; ++k)
        idx.push_back(p->type.shape[size_t(k)] == 1 ? "0" : ji[size_t(k + int(ji.size()) - pr)]);
      return g_.view(g_.value(p), 1, idx, true);
    };
    std::string call = "  layer_norm(" + Y.init + ", " + X.init + ", " + std::to_string(rows) +
                       ", " + std::to_string(d) + ", " +
                       std::to_string(n.attr_float("epsilon", 1e-5f)) + ", " +
                       param(n.inputs[1]).init;
    if (n.input(2)) call += ", " + param(n.inputs[2]).init;
    return call + ");\n";
  }

  std::optional<std::string> reduce(const Node& n) {
    static const std::map<std::string, std::string> kinds = {
        {"ReduceSum", "Sum"},       {"ReduceMean", "Mean"},
        {"ReduceMax", "Max"},       {"ReduceMin", "Min"},
        {"ReduceProd", "Prod"},     {"ReduceSumSquare", "SumSquare"},
        {"ReduceL1", "L1"},         {"ReduceL2", "L2"},
        {"ReduceLogSum", "LogSum"}, {"ReduceLogSumExp", "LogSumExp"}};
    auto kind = kinds.find(n.op);
    if (kind == kinds.end()) return std::nullopt;
    const Shape& s = n.inputs[0]->type.shape;
    int r = int(s.size());
    std::vector<int64_t> axes = n.attr_ints("axes");
    if (!n.has_attr("axes") && n.input(1)) {
      if (!n.inputs[1]->constant) return std::nullopt;
      axes = n.inputs[1]->constant->to_i64_vector();
    }
    if (axes.empty() && n.attr_int("noop_with_empty_axes", 0)) return std::nullopt;
    std::vector<int> red;
    if (axes.empty())
      for (int d = 0; d < r; ++d)
        red.push_back(d);
    for (int64_t a : axes)
      red.push_back(int(normalize_axis(n, a, r)));
    std::sort(red.begin(), red.end());
    red.erase(std::unique(red.begin(), red.end()), red.end());
    int64_t reduced = 1;
    for (int d : red)
      reduced *= s[size_t(d)];
    int64_t outer = shape_numel(s) / std::max<int64_t>(reduced, 1);
    auto xs = rows_view(s, red);
    Acc X = g_.view(g_.value(n.inputs[0]), 2, xs, is_trailing(red, r));
    // Output index from the outer coordinate: kept dims unflattened, reduced dims 0 (keepdims).
    Shape kept_dims;
    for (int d = 0; d < r; ++d)
      if (!std::binary_search(red.begin(), red.end(), d)) kept_dims.push_back(s[size_t(d)]);
    auto ko = unflatten("i[0]", kept_dims);
    std::vector<std::string> oi;
    bool keep = n.attr_int("keepdims", 1) != 0;
    for (int d = 0, k = 0; d < r; ++d) {
      if (std::binary_search(red.begin(), red.end(), d)) {
        if (keep) oi.push_back("0");
      } else {
        oi.push_back(ko[size_t(k++)]);
      }
    }
    Acc Y = g_.view(output(), 1, oi, false);
    return "  reduce<ReduceKind::" + kind->second + ">(" + Y.init + ", " + X.init + ", " +
           std::to_string(outer) + ", " + std::to_string(reduced) + ");\n";
  }

  // Nearest-neighbour upsampling by whole factors with asymmetric coordinates and floor
  // rounding (PyTorch's `nearest`): out[i] = in[i / k] per dimension, a gathering copy.
  std::optional<std::string> resize(const Node& n) {
    if (n.attr_string("mode", "nearest") != "nearest" ||
        n.attr_string("coordinate_transformation_mode", "half_pixel") != "asymmetric" ||
        n.attr_string("nearest_mode", "round_prefer_floor") != "floor" || n.has_attr("axes"))
      return std::nullopt;
    const Shape& si = n.inputs[0]->type.shape;
    const Shape& so = n.outputs[0]->type.shape;
    const Value* scales = n.input(2);
    if (scales && scales->type.numel() > 0 && !scales->constant) return std::nullopt;
    Shape factor;
    for (size_t d = 0; d < si.size(); ++d) {
      if (si[d] == 0 || so[d] % si[d] != 0) return std::nullopt;
      int64_t k = so[d] / si[d];
      if (scales && scales->type.numel() > 0 && scales->constant->get_f64(int64_t(d)) != double(k))
        return std::nullopt;
      factor.push_back(k);
    }
    if (so.empty()) return std::nullopt;
    return "  upsample_nearest(" + output().init + ", " + g_.value(n.inputs[0]).init + ", " +
           shape_array(so) + ", " + shape_array(factor) + ");\n";
  }

  const Kernel& k_;
  Gen& g_;
};

} // namespace

std::optional<std::string> generate_kernel(const Kernel& k, const StorageMap& storage,
                                           std::string& defs, int& counter) {
  const Node* pool = max_pool_tail(k);
  for (const Node* n : k.nodes)
    if (n != k.anchor && n != pool) {
      std::vector<std::string> probe(n->inputs.size(), "x");
      if (!is_fusible_elementwise(*n) || !elementwise_expr(*n, probe)) return std::nullopt;
    }
  std::string local_defs;
  int local_counter = counter;
  Gen g(storage, local_defs, local_counter);
  KernelGen kg(k, g);
  auto body = kg.generate();
  if (!body) return std::nullopt;
  defs += local_defs;
  counter = local_counter;
  return body;
}

bool can_generate_kernel(const Kernel& k) {
  // Generate once with every operand physical; only whether it succeeds matters.
  StorageMap storage;
  int id = 0;
  for (const Node* n : k.nodes) {
    for (const Value* v : n->inputs)
      if (v) storage.buffer_of.emplace(v, id++);
    for (const Value* v : n->outputs)
      if (v) storage.buffer_of.emplace(v, id++);
  }
  std::string defs;
  int counter = 0;
  return generate_kernel(k, storage, defs, counter).has_value();
}

std::string generate_copy(const Node& n, const StorageMap& storage, std::string& defs,
                          int& counter) {
  Gen g(storage, defs, counter);
  std::string s;
  if (n.op == "ScatterND" || n.op == "ScatterElements" || n.op == "Scatter") {
    if (n.attr_string("reduction", "none") != "none")
      VTC_UNSUPPORTED() << n.describe() << ": reductions run on the reference interpreter";
    const Value* out = n.outputs[0];
    const Value* data = n.inputs[0];
    RuleResult w = write_side(n);
    VTC_CHECK(w.ok() && w.mappings.size() > 2 && w.mappings[2])
        << n.describe() << ": no write mapping for the updates: " << w.reason;
    Acc o = g.stored(out), d = g.stored(data);
    auto bo = storage.buffer_of.find(out), bd = storage.buffer_of.find(data);
    std::string copy =
        "  copy(" + o.init + ", " + shape_array(out->type.shape) + ", " + d.init + ");\n";
    if (bo != storage.buffer_of.end() && bd != storage.buffer_of.end())
      s += "  if (buf[" + std::to_string(bo->second) + "] != buf[" + std::to_string(bd->second) +
           "])\n  " + copy;
    else
      s += copy;
    Acc target = g.mapped(*w.mappings[2], out->type.dtype);
    s += "  copy(" + target.init + ", " + shape_array(n.inputs[2]->type.shape) + ", " +
         g.stored(n.inputs[2]).init + ");\n";
    return s;
  }
  RuleResult r = read_side(n);
  VTC_CHECK(r.ok()) << n.describe() << ": no read mapping: " << r.reason;
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    const Value* out = n.outputs[k];
    if (!out || !r.mappings[k]) continue;
    // Over the planes flattened to one row when both sides keep them contiguous.
    const Shape& shape = out->type.shape;
    const size_t rank = shape.size();
    std::optional<Mapping> flat_in;
    if (rank >= 2 && shape[rank - 2] > 1 && g.flat_mapping(out))
      flat_in =
          flatten_plane(*r.mappings[k], value_base(out), int64_t(dtype_size(out->type.dtype)));
    if (flat_in) g.flat_plane = std::pair{shape[rank - 2], shape[rank - 1]};
    Acc in = g.mapped(flat_in ? *flat_in : *r.mappings[k], out->type.dtype);
    s += "  copy(" + g.stored(out).init + ", " +
         shape_array(flat_in ? flat_plane_shape(shape) : shape) + ", " + in.init + ");\n";
    g.flat_plane.reset();
  }
  return s;
}

} // namespace vtc
