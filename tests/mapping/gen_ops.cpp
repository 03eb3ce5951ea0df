// Random node generators, one per op, each choosing attributes the op definition accepts.
#include "gen_ops.h"

#include <algorithm>
#include <numeric>

#include "mapping/compose.h"

namespace vtc::test {
namespace {

Tensor i64s(const std::vector<int64_t>& v, Shape shape = {}) {
  if (shape.empty() && !v.empty()) shape = {int64_t(v.size())};
  return Tensor::from<int64_t>(shape, v);
}

Value* or_input(Builder& b, Value* x, int min_rank, int max_rank, int64_t max_dim) {
  return x ? x : b.input(random_shape(b, min_rank, max_rank, max_dim));
}

std::vector<int64_t> permutation(Builder& b, int64_t n) {
  std::vector<int64_t> p(static_cast<size_t>(n));
  std::iota(p.begin(), p.end(), 0);
  std::shuffle(p.begin(), p.end(), b.rng);
  return p;
}

// A random shape with the given numel.
Shape factor(Builder& b, int64_t numel) {
  int rank = int(b.uniform(1, 4));
  Shape s;
  for (int d = 0; d + 1 < rank; ++d) {
    std::vector<int64_t> divs;
    for (int64_t k = 1; k <= numel; ++k)
      if (numel % k == 0) divs.push_back(k);
    int64_t k = divs[size_t(b.uniform(0, int64_t(divs.size()) - 1))];
    s.push_back(k);
    numel /= k;
  }
  s.push_back(numel);
  std::shuffle(s.begin(), s.end(), b.rng);
  return s;
}

Node* reshape(Builder& b, Value* x, bool) {
  x = or_input(b, x, 1, 4, 6);
  Shape s = factor(b, x->type.numel());
  if (b.coin()) s[size_t(b.uniform(0, int64_t(s.size()) - 1))] = -1;
  return b.node("Reshape", {x, b.ints(i64s(s), true)}, 1);
}
Node* flatten(Builder& b, Value* x, bool) {
  x = or_input(b, x, 1, 4, 5);
  int64_t r = x->type.rank();
  return b.node("Flatten", {x}, 1, {{"axis", b.uniform(-r, r)}});
}
Node* squeeze(Builder& b, Value* x, bool) {
  if (!x) {
    Shape s = random_shape(b, 1, 4, 5);
    s.insert(s.begin() + b.uniform(0, int64_t(s.size())), 1);
    x = b.input(s);
  }
  std::vector<int64_t> ones;
  for (int64_t d = 0; d < x->type.rank(); ++d)
    if (x->type.shape[size_t(d)] == 1 && b.coin())
      ones.push_back(b.coin() ? d : d - x->type.rank());
  if (ones.empty()) return b.node("Squeeze", {x}, 1);
  return b.node("Squeeze", {x, b.ints(i64s(ones), true)}, 1);
}
Node* unsqueeze(Builder& b, Value* x, bool) {
  x = or_input(b, x, 0, 3, 5);
  int64_t out_rank = x->type.rank() + b.uniform(1, 2);
  std::vector<int64_t> axes = permutation(b, out_rank);
  axes.resize(size_t(out_rank - x->type.rank()));
  return b.node("Unsqueeze", {x, b.ints(i64s(axes), true)}, 1);
}
Node* identity(Builder& b, Value* x, bool) {
  return b.node("Identity", {or_input(b, x, 0, 4, 5)}, 1);
}
Node* transpose(Builder& b, Value* x, bool) {
  x = or_input(b, x, 1, 5, 4);
  if (b.uniform(0, 4) == 0) return b.node("Transpose", {x}, 1);
  return b.node("Transpose", {x}, 1, {{"perm", permutation(b, x->type.rank())}});
}
Node* depth_to_space(Builder& b, Value* x, bool) {
  int64_t bs = b.uniform(1, 3);
  if (!x)
    x = b.input({b.uniform(1, 2), bs * bs * b.uniform(1, 3), b.uniform(1, 3), b.uniform(1, 3)});
  const Shape& s = x->type.shape;
  if (s.size() != 4 || s[1] % (bs * bs) != 0) return nullptr;
  return b.node("DepthToSpace", {x}, 1,
                {{"blocksize", bs}, {"mode", std::string(b.coin() ? "DCR" : "CRD")}});
}
Node* space_to_depth(Builder& b, Value* x, bool) {
  int64_t bs = b.uniform(1, 3);
  if (!x)
    x = b.input({b.uniform(1, 2), b.uniform(1, 3), bs * b.uniform(1, 3), bs * b.uniform(1, 3)});
  const Shape& s = x->type.shape;
  if (s.size() != 4 || s[2] % bs != 0 || s[3] % bs != 0) return nullptr;
  return b.node("SpaceToDepth", {x}, 1, {{"blocksize", bs}});
}
Node* slice(Builder& b, Value* x, bool writable) {
  x = or_input(b, x, 1, 4, 7);
  const Shape& s = x->type.shape;
  std::vector<int64_t> starts, ends, axes, steps;
  for (int64_t d = 0; d < int64_t(s.size()); ++d) {
    if (!writable && !b.coin()) continue;
    int64_t n = s[size_t(d)];
    int64_t step = writable ? (b.coin() ? 1 : -1) : b.uniform(-3, 3);
    if (step == 0) step = 1;
    int64_t st, en;
    if (writable) {
      st = step > 0 ? 0 : n - 1 + b.uniform(0, 2) * 10;
      en = step > 0 ? n + b.uniform(0, 1) * 100 : -n - 1 - b.uniform(0, 1) * 100;
    } else {
      st = b.uniform(-n - 2, n + 2);
      en = b.uniform(-n - 2, n + 2);
    }
    starts.push_back(st), ends.push_back(en), axes.push_back(b.coin() ? d : d - int64_t(s.size())),
        steps.push_back(step);
  }
  if (starts.empty()) starts = {0}, ends = {s[0]}, axes = {0}, steps = {1};
  return b.node("Slice",
                {x, b.ints(i64s(starts), true), b.ints(i64s(ends), true), b.ints(i64s(axes), true),
                 b.ints(i64s(steps), true)},
                1);
}
Node* split(Builder& b, Value* x, bool) {
  x = or_input(b, x, 1, 4, 7);
  int64_t r = x->type.rank(), axis = b.uniform(0, r - 1), n = x->type.shape[size_t(axis)];
  std::vector<int64_t> sizes;
  for (int64_t left = n; left > 0;) {
    int64_t k = b.uniform(1, left);
    sizes.push_back(k);
    left -= k;
  }
  return b.node("Split", {x, b.ints(i64s(sizes), true)}, int(sizes.size()),
                {{"axis", b.coin() ? axis : axis - r}});
}
Node* concat(Builder& b, Value* x, bool) {
  x = or_input(b, x, 1, 4, 5);
  int64_t r = x->type.rank(), axis = b.uniform(0, r - 1);
  std::vector<Value*> ins{x};
  for (int64_t k = b.uniform(1, 2); k > 0; --k) {
    Shape s = x->type.shape;
    s[size_t(axis)] = b.uniform(1, 4);
    ins.push_back(b.input(s, 1000.0 * double(k)));
  }
  std::shuffle(ins.begin(), ins.end(), b.rng);
  return b.node("Concat", ins, 1, {{"axis", b.coin() ? axis : axis - r}});
}
Node* pad(Builder& b, Value* x, bool writable) {
  x = or_input(b, x, 1, 4, 5);
  const Shape& s = x->type.shape;
  static const char* modes[] = {"constant", "edge", "reflect", "wrap"};
  std::string mode = modes[b.uniform(0, 3)];
  std::vector<int64_t> begin, end;
  for (int64_t n : s) {
    int64_t lo = writable ? 0 : -std::min<int64_t>(n - 1, 1);
    int64_t hi = mode == "reflect" ? n - 1 : 3;
    begin.push_back(b.uniform(lo, std::max(lo, hi)));
    end.push_back(b.uniform(lo, std::max(lo, hi)));
  }
  std::vector<int64_t> pads = begin;
  pads.insert(pads.end(), end.begin(), end.end());
  std::vector<Value*> ins{x, b.ints(i64s(pads), true)};
  if (mode == "constant" && b.coin()) {
    Tensor v(DType::f32, {});
    v.set_f64(0, -7.5);
    Value* pv = b.g.add_constant("pv" + std::to_string(b.counter++), v);
    b.env[pv] = v;
    ins.push_back(pv);
  }
  return b.node("Pad", ins, 1, {{"mode", mode}});
}
Node* expand(Builder& b, Value* x, bool writable) {
  if (!x) {
    Shape s = random_shape(b, 1, 3, 4);
    for (int64_t& d : s)
      if (b.coin()) d = 1;
    x = b.input(s);
  }
  Shape t = x->type.shape;
  bool repeat = !writable || b.uniform(0, 2) == 0; // writable cases still repeat sometimes
  for (int64_t& d : t)
    if (d == 1 && repeat)
      d = b.uniform(1, 3);
    else if (b.uniform(0, 3) == 0)
      d = 1; // broadcast of the target side
  for (int64_t k = b.uniform(0, 2); k > 0; --k)
    t.insert(t.begin(), writable ? 1 : b.uniform(1, 3));
  return b.node("Expand", {x, b.ints(i64s(t), true)}, 1);
}
Node* tile(Builder& b, Value* x, bool writable) {
  x = or_input(b, x, 1, 3, 4);
  std::vector<int64_t> reps;
  for (int64_t k = 0; k < x->type.rank(); ++k)
    reps.push_back(writable && b.coin() ? 1 : b.uniform(1, 3));
  return b.node("Tile", {x, b.ints(i64s(reps), true)}, 1);
}
Node* gather(Builder& b, Value* x, bool writable) {
  x = or_input(b, x, 1, 3, 5);
  int64_t r = x->type.rank(), axis = b.uniform(0, r - 1), n = x->type.shape[size_t(axis)];
  Tensor idx;
  bool constant = writable || b.coin();
  if (writable) {
    std::vector<int64_t> p = permutation(b, n);
    for (int64_t& v : p)
      if (b.coin()) v -= n;
    idx = i64s(p, factor(b, n));
  } else {
    Shape s = random_shape(b, 0, 2, 3);
    std::vector<int64_t> v;
    for (int64_t k = 0; k < shape_numel(s); ++k)
      v.push_back(b.uniform(-n, n - 1));
    idx = Tensor::from<int64_t>(s, v);
  }
  return b.node("Gather", {x, b.ints(idx, constant)}, 1, {{"axis", b.coin() ? axis : axis - r}});
}
Node* gather_elements(Builder& b, Value* x, bool writable) {
  x = or_input(b, x, 1, 3, 4);
  const Shape& s = x->type.shape;
  int64_t r = x->type.rank(), axis = b.uniform(0, r - 1), n = s[size_t(axis)];
  Shape is = s;
  if (!writable)
    for (size_t d = 0; d < is.size(); ++d)
      is[d] = int64_t(d) == axis ? b.uniform(1, 4) : b.uniform(1, s[d]);
  Tensor idx(DType::i64, is);
  Shape st = shape_strides(is);
  for (int64_t f = 0; f < shape_numel(is); f += 1)
    idx.set_i64(f, b.uniform(-n, n - 1));
  if (writable) // a permutation along the axis in every fibre
    for (int64_t f = 0; f < shape_numel(is); ++f) {
      if ((f / st[size_t(axis)]) % n != 0) continue;
      std::vector<int64_t> p = permutation(b, n);
      for (int64_t k = 0; k < n; ++k)
        idx.set_i64(f + k * st[size_t(axis)], p[size_t(k)]);
    }
  return b.node("GatherElements", {x, b.ints(idx, writable || b.coin())}, 1, {{"axis", axis}});
}
Node* gather_nd(Builder& b, Value* x, bool writable) {
  x = or_input(b, x, 1, 4, 4);
  const Shape& s = x->type.shape;
  int64_t r = x->type.rank(), bd = r > 1 ? b.uniform(0, 1) : 0, k = b.uniform(1, r - bd);
  Shape batch(s.begin(), s.begin() + bd), space(s.begin() + bd, s.begin() + bd + k);
  Shape rows = writable ? factor(b, shape_numel(space)) : random_shape(b, 0, 2, 3);
  Shape is = batch;
  is.insert(is.end(), rows.begin(), rows.end());
  is.push_back(k);
  Tensor idx(DType::i64, is);
  Shape sp = shape_strides(space);
  for (int64_t bt = 0; bt < shape_numel(batch); ++bt) {
    std::vector<int64_t> p = permutation(b, shape_numel(space));
    for (int64_t row = 0; row < shape_numel(rows); ++row)
      for (int64_t t = 0; t < k; ++t) {
        int64_t v = writable ? (p[size_t(row)] / sp[size_t(t)]) % space[size_t(t)]
                             : b.uniform(-space[size_t(t)], space[size_t(t)] - 1);
        idx.set_i64((bt * shape_numel(rows) + row) * k + t, v);
      }
  }
  return b.node("GatherND", {x, b.ints(idx, writable || b.coin())}, 1, {{"batch_dims", bd}});
}
// ScatterND with unique index tuples; x is the data, or (writable with x given) the updates.
Node* scatter_nd(Builder& b, Value* x, bool writable) {
  bool x_is_updates = x && writable;
  Value* data;
  Value* upd;
  int64_t k;
  Shape rows;
  if (x_is_updates) {
    if (x->type.rank() < 1) return nullptr;
    Shape ds = x->type.shape;
    rows = {ds[0]};
    ds[0] += b.uniform(0, 3);
    data = b.input(ds, -1000);
    k = 1;
    upd = x;
  } else {
    data = or_input(b, x, 1, 4, 4);
    const Shape& s = data->type.shape;
    k = b.uniform(1, data->type.rank());
    int64_t space = shape_numel(Shape(s.begin(), s.begin() + k));
    rows = factor(b, b.uniform(1, space));
    if (b.uniform(0, 3) == 0) rows.insert(rows.begin(), 1);
    Shape us = rows;
    us.insert(us.end(), s.begin() + k, s.end());
    upd = b.input(us, -5000);
  }
  const Shape& s = data->type.shape;
  Shape space(s.begin(), s.begin() + k), sp = shape_strides(space);
  std::vector<int64_t> p = permutation(b, shape_numel(space));
  Shape is = rows;
  is.push_back(k);
  Tensor idx(DType::i64, is);
  for (int64_t row = 0; row < shape_numel(rows); ++row)
    for (int64_t t = 0; t < k; ++t) {
      int64_t v = (p[size_t(row)] / sp[size_t(t)]) % space[size_t(t)];
      idx.set_i64(row * k + t, b.coin() ? v : v - space[size_t(t)]);
    }
  return b.node("ScatterND", {data, b.ints(idx, b.coin()), upd}, 1);
}
// ScatterElements with indices unique along the axis in every fibre.
Node* scatter_elements(Builder& b, Value* x, bool writable) {
  bool x_is_updates = x && writable;
  Value* data;
  Shape us;
  int64_t axis;
  if (x_is_updates) {
    if (x->type.rank() < 1) return nullptr;
    axis = b.uniform(0, x->type.rank() - 1);
    Shape ds = x->type.shape;
    ds[size_t(axis)] += b.uniform(0, 2);
    data = b.input(ds, -1000);
    us = x->type.shape;
  } else {
    data = or_input(b, x, 1, 3, 4);
    const Shape& s = data->type.shape;
    axis = b.uniform(0, data->type.rank() - 1);
    us = s;
    for (size_t d = 0; d < us.size(); ++d)
      us[d] = b.uniform(1, s[d]);
  }
  int64_t n = data->type.shape[size_t(axis)];
  Tensor idx(DType::i64, us);
  Shape st = shape_strides(us);
  for (int64_t f = 0; f < shape_numel(us); ++f) {
    if ((f / st[size_t(axis)]) % us[size_t(axis)] != 0) continue;
    std::vector<int64_t> p = permutation(b, n);
    for (int64_t q = 0; q < us[size_t(axis)]; ++q)
      idx.set_i64(f + q * st[size_t(axis)], b.coin() ? p[size_t(q)] : p[size_t(q)] - n);
  }
  Value* upd = x_is_updates ? x : b.input(us, -5000);
  return b.node("ScatterElements", {data, b.ints(idx, b.coin()), upd}, 1, {{"axis", axis}});
}

using Gen = Node* (*)(Builder&, Value*, bool);
const std::vector<std::pair<std::string, Gen>>& gens() {
  static const std::vector<std::pair<std::string, Gen>> g = {{"Reshape", reshape},
                                                             {"Flatten", flatten},
                                                             {"Squeeze", squeeze},
                                                             {"Unsqueeze", unsqueeze},
                                                             {"Identity", identity},
                                                             {"Transpose", transpose},
                                                             {"DepthToSpace", depth_to_space},
                                                             {"SpaceToDepth", space_to_depth},
                                                             {"Slice", slice},
                                                             {"Split", split},
                                                             {"Concat", concat},
                                                             {"Pad", pad},
                                                             {"Expand", expand},
                                                             {"Tile", tile},
                                                             {"Gather", gather},
                                                             {"GatherElements", gather_elements},
                                                             {"GatherND", gather_nd},
                                                             {"ScatterND", scatter_nd},
                                                             {"ScatterElements", scatter_elements}};
  return g;
}

} // namespace

Shape random_shape(Builder& b, int min_rank, int max_rank, int64_t max_dim) {
  Shape s(size_t(b.uniform(min_rank, max_rank)));
  for (int64_t& d : s)
    d = b.uniform(1, max_dim);
  return s;
}

const std::vector<std::string>& generated_ops() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (auto& [name, g] : gens())
      n.push_back(name);
    return n;
  }();
  return names;
}

Node* random_op(Builder& b, const std::string& op, Value* x, bool writable) {
  if (x && x->type.numel() == 0) return nullptr;
  if (x && x->type.rank() == 0 && op != "Reshape" && op != "Identity" && op != "Unsqueeze")
    return nullptr;
  for (auto& [name, g] : gens())
    if (name == op) return g(b, x, writable);
  return nullptr;
}

std::vector<ChainStep> random_chain(Builder& b, Value* x, bool write, int length,
                                    const std::vector<std::string>& ops) {
  std::vector<ChainStep> steps;
  for (int tries = 0; int(steps.size()) < length && tries < 200; ++tries) {
    const std::string& op = ops[size_t(b.uniform(0, int64_t(ops.size()) - 1))];
    Node* n = random_op(b, op, x, write);
    if (!n || n->output(0)->type.numel() == 0) continue;
    RuleResult r = write ? write_side(*n) : read_side(*n);
    if (!r.ok()) continue;
    size_t in = 0;
    while (n->input(in) != x)
      ++in;
    size_t out = size_t(b.uniform(0, int64_t(n->outputs.size()) - 1));
    steps.push_back({n, in, out, std::move(r)});
    x = n->output(out);
  }
  return steps;
}

BaseEnv chain_env(const Builder& b, const std::vector<ChainStep>& steps) {
  BaseEnv env;
  env.add(b);
  for (const ChainStep& s : steps)
    env.add(s.rule);
  return env;
}

Result<Mapping> compose_read_chain(const std::vector<ChainStep>& steps) {
  Mapping m = *steps.back().rule.mappings[steps.back().out];
  for (size_t s = steps.size() - 1; s-- > 0;) {
    Result<Mapping> c = compose(m, value_base(steps[s].node->output(steps[s].out)),
                                *steps[s].rule.mappings[steps[s].out]);
    if (!c.ok()) return c;
    m = *c;
  }
  return Result<Mapping>{std::move(m), ""};
}

} // namespace vtc::test
