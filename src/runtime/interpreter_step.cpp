// The reference interpreter over a step's buffers (see interpreter_step.h).
#include "runtime/interpreter_step.h"

#include "ref/interpreter.h"
#include "vtc/error.h"

namespace vtc {

InterpreterStep::InterpreterStep(const Program& program, int s,
                                 const std::map<const Value*, int>& buffer_of)
    : program_(program) {
  const StepInfo& step = program.steps[size_t(s)];
  std::map<const Value*, int> local;
  for (const Node* n : step.fallback) {
    Call call;
    call.node = n;
    for (const Value* v : n->inputs) {
      Operand op;
      if (v && v->constant) {
        op.from = From::constant;
        op.constant = &*v->constant;
      } else if (v && local.count(v)) {
        op.from = From::local;
        op.index = local.at(v);
      } else if (v) {
        auto it = buffer_of.find(v);
        VTC_CHECK(it != buffer_of.end())
            << "step " << s << " '" << step.name << "': " << n->describe() << " reads '" << v->name
            << "', which has no buffer (the interpreter needs physical operands)";
        op.from = From::buffer;
        op.index = it->second;
        op.type = program.buffers[size_t(it->second)].type;
      }
      call.inputs.push_back(op);
    }
    for (const Value* v : n->outputs) {
      Operand op;
      auto it = v ? buffer_of.find(v) : buffer_of.end();
      if (it != buffer_of.end()) {
        op.from = From::buffer;
        op.index = it->second;
        op.type = program.buffers[size_t(it->second)].type;
      } else if (v) {
        op.from = From::local;
        op.index = locals_++;
        local[v] = op.index;
      }
      call.outputs.push_back(op);
    }
    calls_.push_back(std::move(call));
  }
}

void InterpreterStep::run(const Read& read, const Write& write) const {
  std::vector<Tensor> locals(static_cast<size_t>(locals_));
  std::vector<Tensor> copies;
  for (const Call& call : calls_) {
    copies.clear();
    copies.reserve(call.inputs.size());
    std::vector<const Tensor*> args;
    for (const Operand& op : call.inputs) {
      switch (op.from) {
      case From::omitted:
        args.push_back(nullptr);
        break;
      case From::constant:
        args.push_back(op.constant);
        break;
      case From::local:
        args.push_back(&locals[size_t(op.index)]);
        break;
      case From::buffer:
        copies.emplace_back(op.type);
        if (op.type.nbytes()) read(op.index, copies.back().raw());
        args.push_back(&copies.back());
        break;
      }
    }
    std::vector<Tensor> results = eval_node(*call.node, args);
    for (size_t k = 0; k < call.outputs.size() && k < results.size(); ++k) {
      const Operand& op = call.outputs[k];
      if (op.from == From::local) {
        locals[size_t(op.index)] = std::move(results[k]);
      } else if (op.from == From::buffer) {
        VTC_CHECK(results[k].type() == op.type)
            << call.node->describe() << " computed " << type_str(results[k].type()) << " for '"
            << program_.buffers[size_t(op.index)].name << "', whose buffer is "
            << type_str(op.type);
        if (results[k].nbytes()) write(op.index, results[k].raw());
      }
    }
  }
}

} // namespace vtc
