// `vtc info MODEL`: what a model holds — inputs, outputs, ops by kind, and every
// data-movement node with its shapes and the bytes it would move as a copy kernel; the
// arithmetic of its matrix products and convolutions.
#include <fmt/core.h>
#include <map>

#include "commands.h"
#include "frontend/onnx_import.h"
#include "ops/matrix_flops.h"
#include "ops/movement_bytes.h"
#include "ops/op_registry.h"
#include "session_cli.h"

namespace vtc::cli {

namespace {

const char* kind_name(OpKind k) {
  switch (k) {
  case OpKind::data_movement:
    return "data movement";
  case OpKind::compute:
    return "compute";
  case OpKind::shape:
    return "shape";
  }
  return "?";
}

std::string human_bytes(int64_t b) {
  if (b >= (int64_t(1) << 30)) return fmt::format("{:.2f} GiB", double(b) / double(1 << 30));
  if (b >= (int64_t(1) << 20)) return fmt::format("{:.2f} MiB", double(b) / double(1 << 20));
  if (b >= (int64_t(1) << 10)) return fmt::format("{:.2f} KiB", double(b) / double(1 << 10));
  return fmt::format("{} B", b);
}

std::string value_types(const std::vector<Value*>& vs) {
  std::string s;
  for (const Value* v : vs) {
    if (!v) continue;
    if (!s.empty()) s += ", ";
    s += type_str(v->type);
  }
  return s;
}

int info(const std::string& path, const ImportOptions& import) {
  Graph g = import_onnx_file(path, import);
  fmt::print("model {} (opset {})\n", path, g.opset);
  for (const Value* v : g.inputs)
    fmt::print("  input  {}: {}\n", v->name, type_str(v->type));
  for (const Value* v : g.outputs)
    fmt::print("  output {}: {}\n", v->name, type_str(v->type));
  int64_t weight_bytes = 0, weights = 0;
  for (const auto& v : g.values())
    if (v->constant) {
      weight_bytes += int64_t(v->type.nbytes());
      ++weights;
    }
  fmt::print("  constants: {} ({})\n", weights, human_bytes(weight_bytes));
  int64_t flops = 0;
  for (const auto& n : g.nodes())
    flops += matrix_flops(*n);
  fmt::print("  matrix flops: {} ({:.3f} GFLOP: MatMul, Gemm, Conv)\n", flops, double(flops) / 1e9);

  std::map<std::string, int> count;
  for (const auto& n : g.nodes())
    ++count[n->op];
  fmt::print("\nops ({} nodes)\n", g.nodes().size());
  for (const auto& [op, c] : count)
    fmt::print("  {:<24} {:>5}  {}\n", op, c, kind_name(find_op(op)->kind));

  int movement = 0;
  int64_t moved = 0;
  fmt::print("\ndata-movement nodes\n");
  for (const auto& n : g.nodes()) {
    if (find_op(n->op)->kind != OpKind::data_movement) continue;
    int64_t b = data_movement_bytes(*n);
    ++movement;
    moved += b;
    fmt::print("  {:<10} {:<32} {} -> {}  {}\n", n->op, n->name, value_types(n->inputs),
               value_types(n->outputs), human_bytes(b));
  }
  fmt::print("\ninfo: {} ops, {} data-movement ops moving {} bytes ({})\n", g.nodes().size(),
             movement, moved, human_bytes(moved));
  return 0;
}

} // namespace

void add_info_command(CLI::App& app, int& exit_code) {
  auto path = std::make_shared<std::string>();
  auto import = std::make_shared<ImportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "info", "Show a model's inputs, outputs, ops, and its data-movement ops with the bytes "
              "they move");
  cmd->add_option("model", *path, "ONNX model file")->required();
  add_dims_option(cmd, import->dims);
  cmd->callback([path, import, &exit_code] { exit_code = info(*path, *import); });
}

} // namespace vtc::cli
