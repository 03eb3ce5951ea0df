// Builds small ONNX ModelProtos in tests, so import tests need no files from elsewhere.
#pragma once

#include <string>
#include <vector>

#include "onnx/onnx_pb.h"
#include "vtc/tensor.h"

namespace vtc::testing {

class ModelBuilder {
public:
  explicit ModelBuilder(int64_t opset = 17);
  void input(const std::string& name, DType t, const Shape& shape);
  void output(const std::string& name);
  void initializer(const std::string& name, const Tensor& t);
  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "");
  static void set_ints(onnx::NodeProto& n, const std::string& key, const std::vector<int64_t>& v);
  static void set_int(onnx::NodeProto& n, const std::string& key, int64_t v);
  std::string bytes() const { return model_.SerializeAsString(); }
  onnx::ModelProto& model() { return model_; }

private:
  onnx::ModelProto model_;
};

} // namespace vtc::testing
