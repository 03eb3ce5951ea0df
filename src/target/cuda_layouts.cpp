// Tensors held channels-last on the cuda target (see cuda_layouts.h).
#include "target/cuda_layouts.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>

#include "codegen/library_conv.h"
#include "kernels/cuda/conv_direct.h"

namespace vtc {

namespace {

// Whether step s is a cuDNN convolution run channels-last.
bool channels_last_conv(const StepInfo& s) {
  if (s.kind != StepKind::kernel || !s.kernel || s.kernel->impl != KernelImpl::cudnn_conv)
    return false;
  const std::optional<LibraryConvShape> form = library_conv_form(*s.kernel);
  return form && cudnn_channels_last(form->shape);
}

// Values some virtual value's mapping reads (its pieces' bases).
std::set<const Value*> mapped_bases(const StorageMap& storage) {
  std::set<const Value*> bases;
  for (const auto& [v, m] : storage.virtual_values)
    for (const Piece& p : m.pieces)
      if (p.base) bases.insert(static_cast<const Value*>(p.base->key));
  return bases;
}

// Whether step s is a convolution on conv2d_direct (a stem), which stores a pixel's channels
// as one vector where they lie side by side.
bool direct_conv(const StepInfo& s) {
  if (s.kind != StepKind::kernel || !s.kernel || s.kernel->impl != KernelImpl::vtc_template)
    return false;
  const std::optional<LibraryConvShape> form = library_conv_form(*s.kernel);
  return form && kernels::conv2d_direct_fits(form->shape);
}

} // namespace

void choose_channels_last(Program& p) {
  const char* env = std::getenv("VTC_CUDA_HOLD_CHANNELS_LAST");
  if (env && std::string(env) == "0") return;
  const std::set<const Value*> mapped = mapped_bases(p.storage);
  std::map<int, int> values_in_buffer;
  for (const auto& [v, b] : p.storage.buffer_of)
    ++values_in_buffer[b];
  for (const auto& [v, b] : p.storage.buffer_of) {
    const BufferInfo& info = p.buffers[size_t(b)];
    if (info.role != BufferRole::intermediate || info.alias_of >= 0 || v->type.rank() != 4 ||
        values_in_buffer[b] != 1 || p.storage.virtual_values.count(v) || mapped.count(v))
      continue;
    int writers = 0, readers = 0;
    bool held = true;
    for (const StepInfo& s : p.steps) {
      const bool writes = std::find(s.writes.begin(), s.writes.end(), b) != s.writes.end();
      const bool reads = std::find(s.reads.begin(), s.reads.end(), b) != s.reads.end();
      if (!writes && !reads) continue;
      if (!channels_last_conv(s) && !(writes && direct_conv(s))) {
        held = false;
        break;
      }
      const Kernel& k = *s.kernel;
      if (writes) {
        // The kernel's one stored value, through its epilogue.
        ++writers;
        held &= k.outputs.size() == 1 && k.outputs[0] == v && !reads;
      } else {
        // The convolution's input, and nothing else of it.
        ++readers;
        held &= k.anchor->inputs[0] == v && k.anchor->inputs[1] != v;
        if (k.anchor->inputs.size() > 2) held &= k.anchor->inputs[2] != v;
      }
      if (!held) break;
    }
    if (held && writers == 1 && readers > 0) p.storage.channels_last.insert(v);
  }
}

} // namespace vtc
