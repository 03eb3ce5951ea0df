// A step run on the reference interpreter: its nodes in order, each operand read from a
// buffer, a constant, or a value an earlier node of the step produced without a buffer;
// results written to their buffers. How a buffer's bytes are read and written is the
// executor's (host memory, or device memory through host copies).
#pragma once

#include <functional>
#include <map>
#include <vector>

#include "lower/program.h"

namespace vtc {

class InterpreterStep {
public:
  // Throws vtc::Error naming the step and node when an operand has no buffer.
  InterpreterStep(const Program& program, int step, const std::map<const Value*, int>& buffer_of);

  // `read(id, dst)` fills dst with buffer id's bytes (its BufferInfo::type.nbytes()),
  // `write(id, src)` stores them.
  using Read = std::function<void(int buffer, void* dst)>;
  using Write = std::function<void(int buffer, const void* src)>;
  void run(const Read& read, const Write& write) const;

private:
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
  const Program& program_;
  std::vector<Call> calls_;
  int locals_ = 0;
};

} // namespace vtc
