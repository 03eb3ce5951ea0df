// Loads an ONNX model into a vtc Graph: initializers become constants, nodes and attributes
// are copied, every shape is inferred with vtc's own op definitions and constant shape
// arithmetic is folded, so the result has static shapes throughout.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace vtc {

struct ImportOptions {
  // Graph inputs to replace by constants (by name): how a test case with a shape given as a
  // graph input becomes static, and how a user pins an input.
  std::map<std::string, Tensor> frozen_inputs;
  // Sizes of the graph inputs' symbolic dimensions, by name ("batch" -> 1): a model exported
  // with dynamic axes compiled for one shape (onnxruntime's free-dimension overrides). A name
  // no input has is an error.
  std::map<std::string, int64_t> dims;
  // Fold nodes whose inputs are all constants (outputs up to this many bytes).
  size_t fold_limit_bytes = size_t(256) << 20;
};

// Reads and imports `path`. Errors name the file and, where it applies, the node, op, value.
Graph import_onnx_file(const std::string& path, const ImportOptions& options = {});
// Imports a serialized ModelProto; `base_dir` resolves external data, `origin` names the
// model in error messages.
Graph import_onnx_bytes(const std::string& bytes, const std::string& base_dir,
                        const std::string& origin, const ImportOptions& options = {});

// The whole file, for import_onnx_bytes; errors name the path.
std::string read_model_bytes(const std::string& path);
// Names of the graph inputs that are not initializers, in model order (ONNX test cases number
// their input files in this order).
std::vector<std::string> onnx_graph_input_names(const std::string& bytes,
                                                const std::string& origin);
// The op_type of every node, in model order.
std::vector<std::string> onnx_node_op_types(const std::string& bytes, const std::string& origin);

} // namespace vtc
