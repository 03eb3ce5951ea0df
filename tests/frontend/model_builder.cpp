// ModelBuilder: ModelProto assembly for tests.
#include "model_builder.h"

#include "frontend/onnx_tensor.h"

namespace vtc::testing {

ModelBuilder::ModelBuilder(int64_t opset) {
  model_.set_ir_version(8);
  auto* id = model_.add_opset_import();
  id->set_domain("");
  id->set_version(opset);
  model_.mutable_graph()->set_name("test");
}

void ModelBuilder::input(const std::string& name, DType t, const Shape& shape) {
  auto* vi = model_.mutable_graph()->add_input();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx_code(t));
  for (int64_t d : shape)
    tt->mutable_shape()->add_dim()->set_dim_value(d);
}

void ModelBuilder::output(const std::string& name) {
  model_.mutable_graph()->add_output()->set_name(name);
}

void ModelBuilder::initializer(const std::string& name, const Tensor& t) {
  tensor_to_proto(t, name, model_.mutable_graph()->add_initializer());
}

onnx::NodeProto& ModelBuilder::node(const std::string& op, const std::vector<std::string>& ins,
                                    const std::vector<std::string>& outs, const std::string& name) {
  auto* n = model_.mutable_graph()->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& s : ins)
    n->add_input(s);
  for (const auto& s : outs)
    n->add_output(s);
  return *n;
}

void ModelBuilder::set_ints(onnx::NodeProto& n, const std::string& key,
                            const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(key);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v)
    a->add_ints(x);
}

void ModelBuilder::set_int(onnx::NodeProto& n, const std::string& key, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(key);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

} // namespace vtc::testing
