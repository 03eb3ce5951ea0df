// Rules for the ops that cut and join boxes: Slice (a strided window: read side affine, write
// side only when the slice keeps every element), Split (read: each output a window of the
// input; write: the input piecewise over the outputs), Concat (read: piecewise over the inputs;
// write: each input into its slab of the output) and Pad (read: the interior reads the input,
// the border is a constant piece — or, in edge/reflect/wrap modes, pieces that read the input
// again; write: the input is the interior of the output).
#include <algorithm>

#include "mapping/rule_util.h"

namespace vtc {
namespace {

using namespace rule_util;

// ---- Slice: output dim d reads input start[d] + i·step[d] ----
struct SliceDim {
  int64_t start = 0, step = 1, len = 0;
};

std::vector<SliceDim> slice_dims(const Node& n) {
  const Shape& x = in_shape(n, 0);
  bool attr_form = n.has_attr("starts");
  auto starts = attr_form ? std::optional(n.attr_ints("starts")) : ints_operand(n, nullptr, 1);
  auto ends = attr_form ? std::optional(n.attr_ints("ends")) : ints_operand(n, nullptr, 2);
  auto axes = attr_form ? (n.has_attr("axes") ? std::optional(n.attr_ints("axes")) : std::nullopt)
                        : ints_operand(n, nullptr, 3);
  auto steps = attr_form ? std::nullopt : ints_operand(n, nullptr, 4);
  VTC_CHECK(starts && ends) << n.describe() << ": needs starts and ends";
  size_t k = starts->size();
  if (!axes) {
    axes.emplace();
    for (size_t a = 0; a < k; ++a)
      axes->push_back(int64_t(a));
  }
  if (!steps) steps = std::vector<int64_t>(k, 1);
  std::vector<SliceDim> dims(x.size());
  for (size_t d = 0; d < x.size(); ++d)
    dims[d].len = x[d];
  for (size_t a = 0; a < k; ++a) {
    size_t axis = size_t(normalize_axis(n, (*axes)[a], int64_t(x.size())));
    int64_t step = (*steps)[a];
    SliceAxis sa = slice_axis(n, x[axis], (*starts)[a], (*ends)[a], step);
    dims[axis] = {sa.start, step, sa.len};
  }
  return dims;
}

RuleResult slice_read(const Node& n) {
  std::vector<SliceDim> dims = slice_dims(n);
  const Shape& y = out_shape(n, 0);
  std::vector<IndexExpr> i = box_vars(full_box(y)), j;
  for (size_t d = 0; d < dims.size(); ++d)
    j.push_back(i[d] * dims[d].step + dims[d].start);
  return one(single_piece(y, in_base(n, 0), j));
}

RuleResult slice_write(const Node& n) {
  std::vector<SliceDim> dims = slice_dims(n);
  const Shape& x = in_shape(n, 0);
  std::vector<IndexExpr> j = box_vars(full_box(x)), i;
  for (size_t d = 0; d < dims.size(); ++d) {
    const SliceDim& s = dims[d];
    if (s.len != x[d] || (s.step != 1 && s.step != -1))
      return RuleResult::impossible(n, "write side impossible: elements of axis " +
                                           std::to_string(d) +
                                           " outside the slice have no place in the output");
    // step ±1 over the whole axis: i = (j - start)·step.
    i.push_back((j[d] - s.start) * s.step);
  }
  return first_input(n, single_piece(x, out_base(n, 0), i));
}

// ---- Split: output k is the slab [off_k, off_k + size_k) of the axis ----
int64_t split_axis(const Node& n) {
  return normalize_axis(n, n.attr_int("axis", 0), int64_t(in_shape(n, 0).size()));
}

RuleResult split_read(const Node& n) {
  size_t axis = size_t(split_axis(n));
  RuleResult r;
  int64_t off = 0;
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    const Value* out = n.output(k);
    VTC_CHECK(out) << n.describe() << ": output " << k << " is omitted";
    std::vector<IndexExpr> i = box_vars(full_box(out->type.shape));
    i[axis] = i[axis] + off;
    r.mappings.push_back(single_piece(out->type.shape, in_base(n, 0), i));
    off += out->type.shape[axis];
  }
  return r;
}

RuleResult split_write(const Node& n) {
  size_t axis = size_t(split_axis(n));
  const Shape& x = in_shape(n, 0);
  Mapping m{x, {}};
  int64_t off = 0;
  for (size_t k = 0; k < n.outputs.size(); ++k) {
    const Value* out = n.output(k);
    if (!out)
      return RuleResult::impossible(n, "write side impossible: output " + std::to_string(k) +
                                           " is omitted, so its slab has no storage");
    int64_t size = out->type.shape[axis];
    Box g = full_box(x);
    g[axis] = {off, off + size};
    std::vector<IndexExpr> i = box_vars(g);
    i[axis] = i[axis] - off;
    if (box_volume(g) > 0) m.pieces.push_back(Piece{g, {}, out_base(n, k), i, 0});
    off += size;
  }
  return first_input(n, std::move(m));
}

// ---- Concat: input k fills the slab [off_k, off_k + size_k) of the axis ----
RuleResult concat_read(const Node& n) {
  const Shape& y = out_shape(n, 0);
  size_t axis = size_t(normalize_axis(n, n.attr_int("axis"), int64_t(y.size())));
  Mapping m{y, {}};
  int64_t off = 0;
  for (size_t k = 0; k < n.num_inputs(); ++k) {
    int64_t size = in_shape(n, k)[axis];
    Box g = full_box(y);
    g[axis] = {off, off + size};
    std::vector<IndexExpr> j = box_vars(g);
    j[axis] = j[axis] - off;
    if (box_volume(g) > 0) m.pieces.push_back(Piece{g, {}, in_base(n, k), j, 0});
    off += size;
  }
  return one(std::move(m));
}

RuleResult concat_write(const Node& n) {
  const Shape& y = out_shape(n, 0);
  size_t axis = size_t(normalize_axis(n, n.attr_int("axis"), int64_t(y.size())));
  RuleResult r;
  int64_t off = 0;
  for (size_t k = 0; k < n.num_inputs(); ++k) {
    const Shape& x = in_shape(n, k);
    std::vector<IndexExpr> i = box_vars(full_box(x));
    i[axis] = i[axis] + off;
    r.mappings.push_back(single_piece(x, out_base(n, 0), i));
    off += x[axis];
  }
  return r;
}

// ---- Pad ----
struct PadSpec {
  Shape begin, end;
  std::string mode;
  double value = 0;
};

PadSpec pad_spec(const Node& n) {
  const Shape& x = in_shape(n, 0);
  PadSpec p{Shape(x.size(), 0), Shape(x.size(), 0), n.attr_string("mode", "constant"), 0};
  auto pads = ints_operand(n, "pads", 1);
  VTC_CHECK(pads) << n.describe() << ": needs pads";
  std::vector<int64_t> axes;
  auto given = n.has_attr("pads") ? std::nullopt : ints_operand(n, nullptr, 3);
  if (given)
    for (int64_t a : *given)
      axes.push_back(normalize_axis(n, a, int64_t(x.size())));
  else
    for (size_t d = 0; d < x.size(); ++d)
      axes.push_back(int64_t(d));
  VTC_CHECK(pads->size() == 2 * axes.size())
      << n.describe() << ": pads " << shape_str(*pads) << " do not match the axes";
  for (size_t k = 0; k < axes.size(); ++k) {
    p.begin[size_t(axes[k])] = (*pads)[k];
    p.end[size_t(axes[k])] = (*pads)[k + axes.size()];
  }
  if (const Value* v = n.input(2)) {
    VTC_CHECK(v->constant) << n.describe() << ": constant_value '" << v->name
                           << "' must be a constant";
    p.value = v->constant->get_f64(0);
  } else if (n.has_attr("value")) {
    p.value = n.attr_float("value", 0.f);
  }
  return p;
}

// One axis of a non-constant pad: maximal runs of output positions whose source is
// slope·i + offset (slope -1, 0 or 1) in the input.
struct Segment {
  Range out;
  int64_t slope, offset;
};

std::vector<Segment> pad_segments(const std::string& mode, int64_t out_len, int64_t lead,
                                  int64_t crop, int64_t n) {
  auto source = [&](int64_t i) {
    int64_t j = i - lead;
    if (j >= 0 && j < n) return j;
    if (mode == "edge") return std::clamp<int64_t>(j, 0, n - 1);
    if (mode == "wrap") return floor_mod(j, n);
    if (n == 1) return int64_t(0);
    int64_t m = floor_mod(j, 2 * (n - 1));
    return m < n ? m : 2 * (n - 1) - m;
  };
  std::vector<Segment> segs;
  for (int64_t i = 0; i < out_len; ++i) {
    int64_t s = source(i) + crop;
    if (!segs.empty()) {
      Segment& last = segs.back();
      int64_t prev = last.slope * (i - 1) + last.offset;
      bool extends = last.out.size() == 1 ? (s - prev >= -1 && s - prev <= 1)
                                          : s == last.slope * i + last.offset;
      if (extends) {
        if (last.out.size() == 1) last.slope = s - prev, last.offset = s - last.slope * i;
        last.out.hi = i + 1;
        continue;
      }
    }
    segs.push_back({{i, i + 1}, 1, s - i});
  }
  return segs;
}

RuleResult pad_read(const Node& n) {
  PadSpec p = pad_spec(n);
  const Shape& x = in_shape(n, 0);
  const Shape& y = out_shape(n, 0);
  size_t r = x.size();
  Mapping m{y, {}};
  if (p.mode == "constant") {
    Box g(r);
    for (size_t d = 0; d < r; ++d) {
      int64_t kept = x[d] + std::min<int64_t>(p.begin[d], 0) + std::min<int64_t>(p.end[d], 0);
      int64_t lead = std::max<int64_t>(p.begin[d], 0);
      g[d] = {lead, lead + kept};
    }
    if (box_volume(g) > 0) {
      std::vector<IndexExpr> j = box_vars(g);
      for (size_t d = 0; d < r; ++d)
        j[d] = j[d] - p.begin[d];
      m.pieces.push_back(Piece{g, {}, in_base(n, 0), j, 0});
    }
    if (box_volume(full_box(y)) > box_volume(g))
      m.pieces.push_back(Piece{full_box(y), {}, nullptr, {}, p.value});
    return one(std::move(m));
  }
  // edge / reflect / wrap: the product of the per-axis segments.
  std::vector<std::vector<Segment>> axes;
  size_t count = 1;
  for (size_t d = 0; d < r; ++d) {
    int64_t crop = std::max<int64_t>(-p.begin[d], 0);
    int64_t kept = x[d] - crop - std::max<int64_t>(-p.end[d], 0);
    axes.push_back(pad_segments(p.mode, y[d], std::max<int64_t>(p.begin[d], 0), crop, kept));
    count *= axes.back().size();
  }
  if (count > 256)
    return RuleResult::impossible(n, "read side needs " + std::to_string(count) +
                                         " pieces in mode " + p.mode);
  for (size_t c = 0; c < count && shape_numel(y) > 0; ++c) {
    Box g(r);
    std::vector<const Segment*> pick(r);
    for (size_t d = r, rest = c; d-- > 0; rest /= axes[d].size()) {
      pick[d] = &axes[d][rest % axes[d].size()];
      g[d] = pick[d]->out;
    }
    std::vector<IndexExpr> j = box_vars(g);
    for (size_t d = 0; d < r; ++d)
      j[d] = j[d] * pick[d]->slope + pick[d]->offset;
    m.pieces.push_back(Piece{g, {}, in_base(n, 0), j, 0});
  }
  return one(std::move(m));
}

RuleResult pad_write(const Node& n) {
  PadSpec p = pad_spec(n);
  const Shape& x = in_shape(n, 0);
  std::vector<IndexExpr> j = box_vars(full_box(x));
  for (size_t d = 0; d < x.size(); ++d) {
    if (p.begin[d] < 0 || p.end[d] < 0)
      return RuleResult::impossible(n, "write side impossible: negative pads crop axis " +
                                           std::to_string(d) +
                                           ", so cropped elements have no place in the output");
    j[d] = j[d] + p.begin[d];
  }
  return first_input(n, single_piece(x, out_base(n, 0), j));
}

} // namespace

void add_slice_rules(std::vector<MovementRule>& t) {
  // op        read side    write side
  t.push_back({"Slice", slice_read, slice_write});
  t.push_back({"Split", split_read, split_write});
  t.push_back({"Concat", concat_read, concat_write});
  t.push_back({"Pad", pad_read, pad_write});
}

} // namespace vtc
