// Conversion between ONNX TensorProto messages and vtc Tensors, including tensors whose
// bytes live in an external-data file beside the model.
#pragma once

#include <string>

#include "vtc/tensor.h"

namespace onnx {
class TensorProto;
}

namespace vtc {

// Reads `proto` into a Tensor. `base_dir` resolves external-data locations; `what` names the
// tensor in error messages ("initializer 'w' of model.onnx").
Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& base_dir,
                         const std::string& what);
// Writes `t` as a TensorProto with raw_data.
void tensor_to_proto(const Tensor& t, const std::string& name, onnx::TensorProto* proto);

} // namespace vtc
