// Graph printer.
#include "ir/printer.h"

#include <sstream>

namespace vtc {

namespace {

std::string value_ref(const Value* v) {
  return v ? "%" + v->name : "_";
}

std::string typed(const Value* v) {
  if (!v) return "_";
  return "%" + v->name + ": " + (v->has_type ? type_str(v->type) : std::string("?"));
}

template <typename T> void print_list(std::ostream& os, const std::vector<T>& xs) {
  os << "[";
  for (size_t i = 0; i < xs.size(); ++i)
    os << (i ? "," : "") << xs[i];
  os << "]";
}

// Up to 8 elements of a small constant, for readable shapes in printed graphs.
std::string constant_preview(const Tensor& t) {
  if (t.numel() > 8) return "";
  std::ostringstream os;
  os << " = [";
  for (int64_t i = 0; i < t.numel(); ++i) {
    os << (i ? "," : "");
    if (is_float(t.dtype()))
      os << t.get_f64(i);
    else
      os << t.get_i64(i);
  }
  os << "]";
  return os.str();
}

} // namespace

std::string print_attribute(const Attribute& a) {
  std::ostringstream os;
  if (auto* v = std::get_if<int64_t>(&a)) os << *v;
  if (auto* v = std::get_if<float>(&a)) os << *v;
  if (auto* v = std::get_if<std::string>(&a)) os << '"' << *v << '"';
  if (auto* v = std::get_if<std::vector<int64_t>>(&a)) print_list(os, *v);
  if (auto* v = std::get_if<std::vector<float>>(&a)) print_list(os, *v);
  if (auto* v = std::get_if<std::vector<std::string>>(&a)) print_list(os, *v);
  if (auto* v = std::get_if<Tensor>(&a)) os << "tensor " << type_str(v->type());
  return os.str();
}

std::string print_node(const Node& n) {
  std::ostringstream os;
  for (size_t i = 0; i < n.outputs.size(); ++i)
    os << (i ? ", " : "") << typed(n.outputs[i]);
  os << " = " << n.op << "(";
  for (size_t i = 0; i < n.inputs.size(); ++i)
    os << (i ? ", " : "") << value_ref(n.inputs[i]);
  os << ")";
  if (!n.attrs.empty()) {
    os << " {";
    bool first = true;
    for (const auto& [k, v] : n.attrs) {
      os << (first ? "" : ", ") << k << "=" << print_attribute(v);
      first = false;
    }
    os << "}";
  }
  return os.str();
}

std::string print_graph(const Graph& g) {
  std::ostringstream os;
  os << "graph " << (g.name.empty() ? "main" : g.name) << " (opset " << g.opset << ")\n";
  for (const Value* v : g.inputs)
    os << "  input  " << typed(v) << "\n";
  for (const auto& v : g.values())
    if (v->constant && !v->users.empty())
      os << "  const  " << typed(v.get()) << constant_preview(*v->constant) << "\n";
  for (const auto& n : g.nodes())
    os << "  " << print_node(*n) << "\n";
  for (const Value* v : g.outputs)
    os << "  output " << value_ref(v) << "\n";
  return os.str();
}

} // namespace vtc
