// ModelProto -> Graph. libonnx's generated protobuf classes parse the file; this file maps
// the messages onto the IR and checks everything a corrupted or hostile file could get wrong.
#include "frontend/onnx_import.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "frontend/infer_shapes.h"
#include "frontend/onnx_tensor.h"
#include "onnx/onnx_pb.h"
#include "ops/op_registry.h"
#include "vtc/error.h"

namespace vtc {

namespace {

constexpr int64_t kMinOpset = 1;
constexpr int64_t kMaxOpset = 21;

int64_t default_opset(const onnx::ModelProto& m, const std::string& origin) {
  int64_t opset = -1;
  std::string other_domains;
  for (const auto& id : m.opset_import()) {
    if (id.domain().empty() || id.domain() == "ai.onnx")
      opset = id.version();
    else
      other_domains += " " + id.domain();
  }
  if (opset < 0 && !other_domains.empty())
    VTC_UNSUPPORTED() << origin << ": the model uses only the op domains" << other_domains
                      << " (vtc supports the default ONNX domain)";
  VTC_CHECK(opset >= 0) << origin << ": the model imports no default-domain opset";
  if (opset < kMinOpset || opset > kMaxOpset)
    VTC_UNSUPPORTED() << origin << ": opset " << opset << " is not supported (vtc reads opsets "
                      << kMinOpset << " to " << kMaxOpset << ")";
  return opset;
}

Attribute read_attribute(const onnx::AttributeProto& a, const std::string& base_dir,
                         const std::string& where) {
  std::string what = where + ": attribute '" + a.name() + "'";
  switch (a.type()) {
  case onnx::AttributeProto::INT:
    return a.i();
  case onnx::AttributeProto::FLOAT:
    return a.f();
  case onnx::AttributeProto::STRING:
    return a.s();
  case onnx::AttributeProto::INTS:
    return std::vector<int64_t>(a.ints().begin(), a.ints().end());
  case onnx::AttributeProto::FLOATS:
    return std::vector<float>(a.floats().begin(), a.floats().end());
  case onnx::AttributeProto::STRINGS:
    return std::vector<std::string>(a.strings().begin(), a.strings().end());
  case onnx::AttributeProto::TENSOR:
    return tensor_from_proto(a.t(), base_dir, what);
  default:
    break; // graphs, sparse tensors and type protos: not supported
  }
  VTC_UNSUPPORTED() << what << " has unsupported attribute type " << int(a.type())
                    << " (subgraphs and sparse tensors are not supported)";
}

// Static TensorType of a graph input declaration, its symbolic dimensions bound by `dims`
// (the names bound are added to `used`); nullopt when it declares no type.
std::optional<TensorType> declared_type(const onnx::ValueInfoProto& vi, const std::string& what,
                                        const std::map<std::string, int64_t>& dims,
                                        std::set<std::string>& used) {
  if (!vi.has_type()) return std::nullopt;
  if (!vi.type().has_tensor_type())
    VTC_UNSUPPORTED() << what
                      << " is not a tensor (sequences, maps and optionals are not supported)";
  const auto& tt = vi.type().tensor_type();
  auto dtype = dtype_from_onnx(tt.elem_type());
  if (!dtype) VTC_UNSUPPORTED() << what << " has unsupported element type " << tt.elem_type();
  if (!tt.has_shape()) return std::nullopt;
  TensorType t{*dtype, {}};
  for (const auto& d : tt.shape().dim()) {
    if (!d.has_dim_value()) {
      auto bound = dims.find(d.dim_param());
      if (d.dim_param().empty() || bound == dims.end())
        VTC_UNSUPPORTED() << what << " has a symbolic dimension '"
                          << (d.dim_param().empty() ? "?" : d.dim_param())
                          << "': give its size (Options::dims, --dim "
                          << (d.dim_param().empty() ? "NAME" : d.dim_param()) << "=N)";
      used.insert(bound->first);
      t.shape.push_back(bound->second);
      continue;
    }
    VTC_CHECK(d.dim_value() >= 0) << what << " has a negative dimension " << d.dim_value();
    t.shape.push_back(d.dim_value());
  }
  return t;
}

// Checks an inferred graph-output type against what the model declares.
void check_declared_output(const Value& v, const onnx::ValueInfoProto& vi,
                           const std::string& origin) {
  if (!vi.has_type() || !vi.type().has_tensor_type()) return;
  const auto& tt = vi.type().tensor_type();
  auto dtype = dtype_from_onnx(tt.elem_type());
  std::string what = origin + ": output '" + v.name + "'";
  VTC_CHECK(!dtype || *dtype == v.type.dtype)
      << what << " is declared with element type " << tt.elem_type() << " but computes "
      << type_str(v.type);
  if (!tt.has_shape()) return;
  bool ok = tt.shape().dim_size() == v.type.rank();
  for (int i = 0; ok && i < tt.shape().dim_size(); ++i)
    if (tt.shape().dim(i).has_dim_value() && tt.shape().dim(i).dim_value() != v.type.shape[i])
      ok = false;
  VTC_CHECK(ok) << what << " is declared with a different shape than the computed "
                << type_str(v.type);
}

Graph build_graph(const onnx::ModelProto& m, const std::string& base_dir, const std::string& origin,
                  const ImportOptions& options) {
  VTC_CHECK(m.has_graph()) << origin << ": the model has no graph";
  const onnx::GraphProto& gp = m.graph();
  Graph g;
  g.name = gp.name();
  g.opset = default_opset(m, origin);

  for (const auto& init : gp.initializer()) {
    VTC_CHECK(!init.name().empty()) << origin << ": an initializer has no name";
    VTC_CHECK(!g.find_value(init.name()))
        << origin << ": initializer '" << init.name() << "' is defined twice";
    g.add_constant(init.name(), tensor_from_proto(init, base_dir,
                                                  origin + ": initializer '" + init.name() + "'"));
  }
  if (gp.sparse_initializer_size() != 0)
    VTC_UNSUPPORTED() << origin << ": sparse initializers are not supported";
  std::set<std::string> used_dims;
  for (const auto& in : gp.input()) {
    if (Value* existing = g.find_value(in.name())) {
      VTC_CHECK(existing->constant) << origin << ": input '" << in.name() << "' listed twice";
      continue; // an initializer also listed as an input (IR < 4 style): a constant
    }
    std::string what = origin + ": input '" + in.name() + "'";
    auto frozen = options.frozen_inputs.find(in.name());
    if (frozen != options.frozen_inputs.end()) {
      g.add_constant(in.name(), frozen->second);
      continue;
    }
    auto t = declared_type(in, what, options.dims, used_dims);
    VTC_CHECK(t) << what << " declares no tensor type and shape";
    Value* v = g.add_value(in.name());
    v->type = *t;
    v->has_type = true;
    v->is_graph_input = true;
    g.inputs.push_back(v);
  }

  for (const auto& [name, size] : options.dims) {
    VTC_CHECK(size >= 0) << origin << ": dimension '" << name << "' given the negative size "
                         << size;
    VTC_CHECK(used_dims.count(name))
        << origin << ": dimension '" << name
        << "' is given a size, but no graph input has a symbolic dimension of that name";
  }

  std::set<std::string> node_names;
  int index = 0;
  for (const auto& np : gp.node()) {
    std::string name = np.name();
    if (name.empty() || node_names.count(name)) name = np.op_type() + "_" + std::to_string(index);
    while (node_names.count(name))
      name += "_";
    node_names.insert(name);
    ++index;
    std::string where = origin + ": " + np.op_type() + " '" + name + "'";
    std::vector<Value*> ins, outs;
    for (const auto& in : np.input()) {
      if (in.empty()) {
        ins.push_back(nullptr);
        continue;
      }
      Value* v = g.find_value(in);
      VTC_CHECK(v) << where << ": input '" << in << "' is not defined by any earlier node, "
                   << "initializer or graph input";
      ins.push_back(v);
    }
    for (const auto& out : np.output()) {
      if (out.empty()) {
        outs.push_back(nullptr);
        continue;
      }
      VTC_CHECK(!g.find_value(out)) << where << ": output '" << out << "' is defined twice";
      outs.push_back(g.add_value(out));
    }
    std::string domain = np.domain() == "ai.onnx" ? "" : np.domain();
    Node* n = g.add_node(np.op_type(), name, std::move(ins), std::move(outs));
    n->domain = domain;
    for (const auto& a : np.attribute()) {
      if (a.has_ref_attr_name() && !a.ref_attr_name().empty())
        VTC_UNSUPPORTED() << where << ": attribute references are not supported";
      n->attrs[a.name()] = read_attribute(a, base_dir, where);
    }
  }

  for (const auto& out : gp.output()) {
    Value* v = g.find_value(out.name());
    VTC_CHECK(v) << origin << ": graph output '" << out.name() << "' is never computed";
    VTC_CHECK(!v->is_graph_output)
        << origin << ": graph output '" << out.name() << "' listed twice";
    v->is_graph_output = true;
    g.outputs.push_back(v);
  }
  VTC_CHECK(!g.outputs.empty()) << origin << ": the graph has no outputs";
  return g;
}

} // namespace

Graph import_onnx_bytes(const std::string& bytes, const std::string& base_dir,
                        const std::string& origin, const ImportOptions& options) {
  onnx::ModelProto m;
  VTC_CHECK(m.ParseFromString(bytes))
      << origin << ": not a valid ONNX model (the protobuf message does not parse; is the "
      << "file truncated or corrupted?)";
  Graph g = build_graph(m, base_dir, origin, options);
  try {
    infer_shapes(g, options.fold_limit_bytes);
  } catch (const NeedsConstantInput& e) {
    throw NeedsConstantInput(origin + ": " + e.what(), e.input_index, e.value_name);
  } catch (const Unsupported& e) {
    throw Unsupported(origin + ": " + e.what());
  } catch (const Error& e) {
    throw Error(origin + ": " + e.what());
  }
  for (int i = 0; i < m.graph().output_size(); ++i)
    check_declared_output(*g.outputs[size_t(i)], m.graph().output(i), origin);
  return g;
}

std::vector<std::string> onnx_graph_input_names(const std::string& bytes,
                                                const std::string& origin) {
  onnx::ModelProto m;
  VTC_CHECK(m.ParseFromString(bytes)) << origin << ": not a valid ONNX model";
  std::set<std::string> initializers;
  for (const auto& init : m.graph().initializer())
    initializers.insert(init.name());
  std::vector<std::string> names;
  for (const auto& in : m.graph().input())
    if (!initializers.count(in.name())) names.push_back(in.name());
  return names;
}

std::vector<std::string> onnx_node_op_types(const std::string& bytes, const std::string& origin) {
  onnx::ModelProto m;
  VTC_CHECK(m.ParseFromString(bytes)) << origin << ": not a valid ONNX model";
  std::vector<std::string> ops;
  for (const auto& n : m.graph().node())
    ops.push_back(n.op_type());
  return ops;
}

std::string read_model_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  VTC_CHECK(f) << path << ": cannot open the model file";
  std::ostringstream ss;
  ss << f.rdbuf();
  VTC_CHECK(!f.bad()) << path << ": failed reading the model file";
  return ss.str();
}

Graph import_onnx_file(const std::string& path, const ImportOptions& options) {
  std::string bytes = read_model_bytes(path);
  std::string base_dir = std::filesystem::path(path).parent_path().string();
  if (base_dir.empty()) base_dir = ".";
  return import_onnx_bytes(bytes, base_dir, path, options);
}

} // namespace vtc
