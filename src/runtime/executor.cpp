// Host execution of a Program (see executor.h).
#include "runtime/executor.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "ref/interpreter.h"
#include "vtc/error.h"

namespace vtc {

namespace {

// The address of every empty buffer: generated code never sees a null pointer.
alignas(64) std::byte empty_storage[64];

} // namespace

// A step run on the reference interpreter: its nodes in order, each operand read from a
// buffer, a constant, or a value an earlier node of the step produced without a buffer.
struct Executor::Fallback {
  enum class From { omitted, buffer, constant, local };
  struct Operand {
    From from = From::omitted;
    int index = -1; // buffer id or local slot
    const Tensor* constant = nullptr;
    TensorType type;
  };
  struct Call {
    const Node* node = nullptr;
    std::vector<Operand> inputs;
    std::vector<Operand> outputs; // From::buffer, From::local, or From::omitted (unused)
  };
  std::vector<Call> calls;
  int locals = 0;
};

Executor::Executor(const Program& program, const TranslationUnit& unit, const Target& target,
                   const jit::CompileOptions& compile, int threads)
    : program_(program), threads_(threads) {
  check_program(unit);
  plan_ = plan_memory(program_);
  size_t nbuf = program_.buffers.size();

  std::map<const Value*, int> buffer_of;
  for (size_t id = 0; id < nbuf; ++id)
    if (program_.buffers[id].value) buffer_of.emplace(program_.buffers[id].value, int(id));

  generated_.assign(program_.steps.size(), false);
  for (size_t s = 0; s < program_.steps.size(); ++s)
    generated_[s] = !unit.entries[s].empty();
  if (std::find(generated_.begin(), generated_.end(), true) != generated_.end())
    loaded_ = target.load(unit, compile);

  fallbacks_.resize(program_.steps.size());
  for (size_t s = 0; s < program_.steps.size(); ++s)
    if (!generated_[s]) fallbacks_[s] = make_fallback(int(s), buffer_of);

  if (plan_.peak_bytes > 0) {
    arena_ = static_cast<std::byte*>(
        std::aligned_alloc(size_t(kArenaAlignment), size_t(plan_.peak_bytes)));
    VTC_CHECK(arena_) << "cannot allocate the " << plan_.peak_bytes << "-byte arena";
    std::memset(arena_, 0, size_t(plan_.peak_bytes));
  }
  pointers_.assign(nbuf, empty_storage);
  for (size_t id = 0; id < nbuf; ++id) {
    const BufferInfo& b = program_.buffers[id];
    if (b.role == BufferRole::constant && b.type.nbytes() > 0)
      pointers_[id] = const_cast<std::byte*>(b.value->constant->raw());
    if (b.role == BufferRole::intermediate && plan_.sizes[id] > 0)
      pointers_[id] = arena_ + plan_.offsets[id];
  }

  std::map<int, int> input_position;
  for (size_t i = 0; i < program_.inputs.size(); ++i)
    input_position[program_.inputs[i]] = int(i);
  output_alias_.assign(program_.outputs.size(), -1);
  for (size_t j = 0; j < program_.outputs.size(); ++j) {
    int alias = program_.buffers[size_t(program_.outputs[j])].alias_of;
    if (alias >= 0) output_alias_[j] = input_position.at(alias);
  }
  input_written_.assign(program_.inputs.size(), false);
  for (const StepInfo& s : program_.steps)
    for (int id : s.writes) {
      const BufferInfo& b = program_.buffers[size_t(id)];
      if (b.role == BufferRole::input) input_written_[size_t(input_position.at(id))] = true;
      if (b.alias_of >= 0) input_written_[size_t(input_position.at(b.alias_of))] = true;
    }
  step_times_.assign(program_.steps.size(), 0.0);
}

Executor::~Executor() {
  std::free(arena_);
}

void Executor::check_program(const TranslationUnit& unit) const {
  const Program& p = program_;
  int nbuf = int(p.buffers.size());
  auto valid = [&](int id) { return id >= 0 && id < nbuf; };
  for (int id : p.inputs) {
    VTC_CHECK(valid(id)) << "program input names buffer " << id << " of " << nbuf;
    VTC_CHECK(p.buffers[size_t(id)].role == BufferRole::input)
        << "program input '" << p.buffers[size_t(id)].name << "' is a "
        << buffer_role_name(p.buffers[size_t(id)].role) << " buffer";
  }
  for (int id : p.outputs)
    VTC_CHECK(valid(id)) << "program output names buffer " << id;
  for (int id = 0; id < nbuf; ++id) {
    const BufferInfo& b = p.buffers[size_t(id)];
    if (b.role == BufferRole::constant)
      VTC_CHECK(b.value && b.value->constant && b.value->constant->type() == b.type)
          << "constant buffer '" << b.name << "' (" << type_str(b.type)
          << ") has no constant tensor of its type";
    if (b.alias_of < 0) continue;
    VTC_CHECK(b.role == BufferRole::output && valid(b.alias_of) &&
              p.buffers[size_t(b.alias_of)].role == BufferRole::input)
        << "buffer '" << b.name << "' aliases buffer " << b.alias_of
        << ", but only an output may alias an input";
    const BufferInfo& in = p.buffers[size_t(b.alias_of)];
    VTC_CHECK(in.type.nbytes() == b.type.nbytes())
        << "output '" << b.name << "' (" << type_str(b.type) << ") aliases input '" << in.name
        << "' (" << type_str(in.type) << ") of another size";
    bool listed = false;
    for (int i : p.inputs)
      listed |= i == b.alias_of;
    VTC_CHECK(listed) << "output '" << b.name << "' aliases '" << in.name
                      << "', which is not a graph input of the program";
  }
  VTC_CHECK(unit.entries.size() == p.steps.size())
      << "the translation unit has " << unit.entries.size() << " entry points for "
      << p.steps.size() << " steps";
  for (size_t s = 0; s < p.steps.size(); ++s) {
    const StepInfo& step = p.steps[s];
    VTC_CHECK(unit.entries[s].empty() != step.fallback.empty())
        << "step " << s << " '" << step.name
        << "' must have exactly one of a generated entry and a fallback node";
    for (int id : step.writes) {
      VTC_CHECK(valid(id)) << "step " << s << " '" << step.name << "' writes buffer " << id;
      VTC_CHECK(p.buffers[size_t(id)].role != BufferRole::constant)
          << "step " << s << " '" << step.name << "' writes constant '"
          << p.buffers[size_t(id)].name << "'";
    }
  }
}

std::unique_ptr<Executor::Fallback>
Executor::make_fallback(int s, const std::map<const Value*, int>& buffer_of) const {
  const StepInfo& step = program_.steps[size_t(s)];
  auto f = std::make_unique<Fallback>();
  std::map<const Value*, int> local;
  for (const Node* n : step.fallback) {
    Fallback::Call call;
    call.node = n;
    for (const Value* v : n->inputs) {
      Fallback::Operand op;
      if (v && v->constant) {
        op.from = Fallback::From::constant;
        op.constant = &*v->constant;
      } else if (v && local.count(v)) {
        op.from = Fallback::From::local;
        op.index = local.at(v);
      } else if (v) {
        auto it = buffer_of.find(v);
        VTC_CHECK(it != buffer_of.end())
            << "step " << s << " '" << step.name << "': " << n->describe() << " reads '" << v->name
            << "', which has no buffer (the interpreter needs physical operands)";
        op.from = Fallback::From::buffer;
        op.index = it->second;
        op.type = program_.buffers[size_t(it->second)].type;
      }
      call.inputs.push_back(op);
    }
    for (const Value* v : n->outputs) {
      Fallback::Operand op;
      auto it = v ? buffer_of.find(v) : buffer_of.end();
      if (it != buffer_of.end()) {
        op.from = Fallback::From::buffer;
        op.index = it->second;
        op.type = program_.buffers[size_t(it->second)].type;
      } else if (v) {
        op.from = Fallback::From::local;
        op.index = f->locals++;
        local[v] = op.index;
      }
      call.outputs.push_back(op);
    }
    f->calls.push_back(std::move(call));
  }
  return f;
}

void Executor::run_fallback(const Fallback& f) {
  std::vector<Tensor> locals(size_t(f.locals));
  std::vector<Tensor> copies;
  for (const Fallback::Call& call : f.calls) {
    copies.clear();
    copies.reserve(call.inputs.size());
    std::vector<const Tensor*> args;
    for (const Fallback::Operand& op : call.inputs) {
      switch (op.from) {
      case Fallback::From::omitted:
        args.push_back(nullptr);
        break;
      case Fallback::From::constant:
        args.push_back(op.constant);
        break;
      case Fallback::From::local:
        args.push_back(&locals[size_t(op.index)]);
        break;
      case Fallback::From::buffer:
        copies.emplace_back(op.type);
        std::memcpy(copies.back().raw(), pointers_[size_t(op.index)], op.type.nbytes());
        args.push_back(&copies.back());
        break;
      }
    }
    std::vector<Tensor> results = eval_node(*call.node, args);
    for (size_t k = 0; k < call.outputs.size() && k < results.size(); ++k) {
      const Fallback::Operand& op = call.outputs[k];
      if (op.from == Fallback::From::local) {
        locals[size_t(op.index)] = std::move(results[k]);
      } else if (op.from == Fallback::From::buffer) {
        VTC_CHECK(results[k].type() == op.type)
            << call.node->describe() << " computed " << type_str(results[k].type()) << " for '"
            << program_.buffers[size_t(op.index)].name << "', whose buffer is "
            << type_str(op.type);
        std::memcpy(pointers_[size_t(op.index)], results[k].raw(), results[k].nbytes());
      }
    }
  }
}

void Executor::run(const std::vector<void*>& inputs, const std::vector<void*>& outputs) {
  VTC_CHECK(inputs.size() == program_.inputs.size() && outputs.size() == program_.outputs.size())
      << "run with " << inputs.size() << " inputs and " << outputs.size()
      << " outputs; the program has " << program_.inputs.size() << " and "
      << program_.outputs.size();
#ifdef _OPENMP
  if (threads_ > 0) omp_set_num_threads(threads_);
#endif
  for (size_t i = 0; i < inputs.size(); ++i) {
    const BufferInfo& b = program_.buffers[size_t(program_.inputs[i])];
    VTC_CHECK(inputs[i] || b.type.nbytes() == 0) << "input '" << b.name << "' has no data";
    pointers_[size_t(program_.inputs[i])] = inputs[i] ? inputs[i] : empty_storage;
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    const BufferInfo& b = program_.buffers[size_t(program_.outputs[j])];
    VTC_CHECK(outputs[j] || b.type.nbytes() == 0) << "output '" << b.name << "' has no storage";
  }
  // Outputs the program stores directly; the rest (aliased outputs, outputs that are inputs
  // or constants, a value listed twice) are copied out after the run when needed.
  std::vector<bool> direct(outputs.size(), false);
  std::vector<bool> seen(program_.buffers.size(), false);
  for (size_t j = 0; j < outputs.size(); ++j) {
    int id = program_.outputs[j];
    const BufferInfo& b = program_.buffers[size_t(id)];
    if (b.alias_of >= 0) {
      pointers_[size_t(id)] = pointers_[size_t(b.alias_of)];
    } else if (b.role == BufferRole::output && !seen[size_t(id)]) {
      pointers_[size_t(id)] = b.type.nbytes() ? outputs[j] : empty_storage;
      direct[j] = true;
    }
    seen[size_t(id)] = true;
  }

  using clock = std::chrono::steady_clock;
  for (size_t s = 0; s < program_.steps.size(); ++s) {
    auto start = clock::now();
    if (generated_[s])
      loaded_->launch(s, pointers_.data(), &packs_);
    else
      run_fallback(*fallbacks_[s]);
    step_times_[s] = std::chrono::duration<double>(clock::now() - start).count();
  }

  for (size_t j = 0; j < outputs.size(); ++j) {
    if (direct[j]) continue;
    const BufferInfo& b = program_.buffers[size_t(program_.outputs[j])];
    void* from = pointers_[size_t(program_.outputs[j])];
    if (outputs[j] && from != outputs[j] && b.type.nbytes() > 0)
      std::memcpy(outputs[j], from, b.type.nbytes());
  }
}

} // namespace vtc
