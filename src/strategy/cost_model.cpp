// Mapping profiles and the analytic roofline model.
#include "strategy/cost_model.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/core.h>

#include "mapping/transposed_operand.h"

namespace vtc {
namespace {

bool degenerate(const Box& b) {
  for (const Range& r : b)
    if (r.size() <= 0) return true;
  return false;
}

} // namespace

MappingProfile profile_mapping(const Mapping& m, int elem_bytes, int64_t transaction_bytes) {
  MappingProfile prof;
  prof.contiguity = contiguity(m, elem_bytes, transaction_bytes);
  prof.transposed = prof.contiguity;
  bool swappable = m.rank() >= 2;
  for (const Piece& p : m.pieces)
    swappable = swappable && !degenerate(p.guard);
  if (swappable) prof.transposed = contiguity(swap_last_two(m), elem_bytes, transaction_bytes);
  prof.pieces = int(m.pieces.size());
  double numel = double(shape_numel(m.shape));
  if (numel <= 0) return prof;
  double distinct = 0, probes = 0, loads = 0;
  int64_t run = std::max<int64_t>(1, prof.contiguity.run);
  for (const Piece& p : m.pieces) {
    if (p.is_constant()) continue;
    double vol = double(box_volume(p.guard));
    double region = 1;
    for (size_t d = 0; d < p.index.size(); ++d) {
      int64_t dim = p.base->shape[d];
      Interval b = bounds(p.index[d], p.guard);
      int64_t lo = std::max<int64_t>(b.lo, 0), hi = std::min<int64_t>(b.hi, dim - 1);
      region *= double(std::max<int64_t>(hi - lo + 1, 0));
    }
    distinct += std::min(vol, region);
    for (const Search& s : p.searches)
      probes += vol * double(s.extent) * double(s.eqs.size());
    loads += vol * double(load_terms(p.index).size()) / double(run);
  }
  prof.footprint = std::min(1.0, distinct / numel);
  prof.probes = probes / numel;
  prof.loads = loads / numel;
  return prof;
}

std::string AnalyticCostModel::describe() const {
  return fmt::format("analytic roofline ({:.0f} GB/s, {} B lines, {:.1f} us launch)",
                     p_.bandwidth / 1e9, p_.line_bytes, p_.launch * 1e6);
}

double AnalyticCostModel::line_penalty(const Contiguity& c, int elem_bytes) const {
  if (c.type == Profitability::type1) return 1.0;
  int64_t line = p_.line_bytes;
  double run = double(std::max<int64_t>(c.run, 1) * elem_bytes);
  // Runs start at offsets that are multiples of the alignment: average the lines they touch
  // over the positions such a start can take within a line.
  int64_t step = std::gcd(std::max<int64_t>(c.alignment, 1) * elem_bytes, line);
  double lines = 0;
  int starts = 0;
  for (int64_t o = 0; o < line; o += step, ++starts)
    lines += std::ceil((double(o) + run) / double(line));
  double penalty = lines / starts * double(line) / run;
  return std::clamp(penalty, 1.0, double(line) / double(elem_bytes));
}

namespace {

// The one tensor a read through `m` reaches (every piece on it, none constant), else null.
const Base* sole_base(const Mapping& m) {
  const Base* base = nullptr;
  for (const Piece& p : m.pieces) {
    if (p.is_constant() || (base && p.base != base)) return nullptr;
    base = p.base;
  }
  return base;
}

} // namespace

double AnalyticCostModel::latency(const StepQuery& q) const {
  if (!q.active) return 0;
  // Matrix operands may be read either way (gemm_bt; attention reads K^T as K).
  bool gemm =
      q.kernel && (q.kernel->kind == KernelKind::gemm || q.kernel->kind == KernelKind::attention);
  // Reads of one step through mappings onto the same tensor (a row's first 16 elements and its
  // 17th, the three slices of a fused QKV product) touch the same lines: together they cost at
  // most that tensor's bytes, however short each one's runs.
  struct SharedBase {
    const Base* base;
    double charged, cap;
    int reads;
  };
  std::vector<SharedBase> shared;
  double bytes = 0, probes = 0;
  for (const OperandQuery& o : q.operands) {
    double b = double(o.bytes);
    if (o.mapping && o.profile) {
      double penalty = line_penalty(o.profile->contiguity, o.elem_bytes);
      if (gemm) penalty = std::min(penalty, line_penalty(o.profile->transposed, o.elem_bytes));
      double elems = b / double(o.elem_bytes);
      if (!o.write) b *= o.profile->footprint;
      b = b * penalty + elems * o.profile->loads * 8;
      probes += elems * o.profile->probes;
      const Base* base = o.write || o.scatter || o.profile->loads > 0 || o.profile->probes > 0
                             ? nullptr
                             : sole_base(*o.mapping);
      if (base) {
        auto it = std::find_if(shared.begin(), shared.end(),
                               [&](const SharedBase& s) { return s.base == base; });
        if (it == shared.end()) {
          const double numel = std::accumulate(base->shape.begin(), base->shape.end(), 1.0,
                                               [](double n, int64_t e) { return n * double(e); });
          shared.push_back({base, 0.0, numel * double(o.elem_bytes), 0});
          it = shared.end() - 1;
        }
        it->charged += b;
        ++it->reads;
        bytes += double(o.extra_bytes);
        continue;
      }
    }
    if (o.scatter) b *= line_penalty(o.scatter->contiguity, o.elem_bytes);
    bytes += b + double(o.extra_bytes);
  }
  for (const SharedBase& s : shared)
    bytes += s.reads > 1 ? std::min(s.charged, s.cap) : s.charged;
  return p_.launch + bytes / p_.bandwidth + probes * p_.probe;
}

} // namespace vtc
