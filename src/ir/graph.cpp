// Graph construction and editing: value/node creation, use lists, DCE, topological order.
#include "ir/graph.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "vtc/error.h"

namespace vtc {

int64_t Node::attr_int(const std::string& key, int64_t fallback) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return fallback;
  if (auto* v = std::get_if<int64_t>(&it->second)) return *v;
  VTC_FAIL() << describe() << ": attribute '" << key << "' is not an integer";
}

int64_t Node::attr_int(const std::string& key) const {
  VTC_CHECK(has_attr(key)) << describe() << ": missing required attribute '" << key << "'";
  return attr_int(key, 0);
}

float Node::attr_float(const std::string& key, float fallback) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return fallback;
  if (auto* v = std::get_if<float>(&it->second)) return *v;
  if (auto* v = std::get_if<int64_t>(&it->second)) return float(*v);
  VTC_FAIL() << describe() << ": attribute '" << key << "' is not a float";
}

std::string Node::attr_string(const std::string& key, const std::string& fallback) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return fallback;
  if (auto* v = std::get_if<std::string>(&it->second)) return *v;
  VTC_FAIL() << describe() << ": attribute '" << key << "' is not a string";
}

std::vector<int64_t> Node::attr_ints(const std::string& key,
                                     const std::vector<int64_t>& fallback) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return fallback;
  if (auto* v = std::get_if<std::vector<int64_t>>(&it->second)) return *v;
  if (auto* v = std::get_if<int64_t>(&it->second)) return {*v};
  VTC_FAIL() << describe() << ": attribute '" << key << "' is not a list of integers";
}

std::vector<float> Node::attr_floats(const std::string& key) const {
  auto it = attrs.find(key);
  if (it == attrs.end()) return {};
  if (auto* v = std::get_if<std::vector<float>>(&it->second)) return *v;
  if (auto* v = std::get_if<float>(&it->second)) return {*v};
  VTC_FAIL() << describe() << ": attribute '" << key << "' is not a list of floats";
}

const Tensor& Node::attr_tensor(const std::string& key) const {
  auto it = attrs.find(key);
  VTC_CHECK(it != attrs.end()) << describe() << ": missing required attribute '" << key << "'";
  auto* v = std::get_if<Tensor>(&it->second);
  VTC_CHECK(v) << describe() << ": attribute '" << key << "' is not a tensor";
  return *v;
}

std::string Node::describe() const {
  std::ostringstream os;
  os << op << " '" << name << "'";
  return os.str();
}

Value* Graph::add_value(const std::string& name) {
  VTC_CHECK(!name.empty()) << "value with an empty name";
  VTC_CHECK(by_name_.count(name) == 0) << "value '" << name << "' defined twice";
  values_.push_back(std::make_unique<Value>());
  Value* v = values_.back().get();
  v->name = name;
  by_name_[name] = v;
  return v;
}

Value* Graph::add_constant(const std::string& name, Tensor t) {
  Value* v = add_value(name);
  v->type = t.type();
  v->has_type = true;
  v->constant = std::move(t);
  return v;
}

Node* Graph::add_node(const std::string& op, const std::string& name, std::vector<Value*> ins,
                      std::vector<Value*> outs) {
  nodes_.push_back(std::make_unique<Node>());
  Node* n = nodes_.back().get();
  n->op = op;
  n->name = name;
  n->inputs = std::move(ins);
  n->outputs = std::move(outs);
  for (Value* v : n->inputs)
    if (v) v->users.push_back(n);
  for (size_t i = 0; i < n->outputs.size(); ++i) {
    Value* v = n->outputs[i];
    if (!v) continue;
    VTC_CHECK(v->producer == nullptr) << "value '" << v->name << "' is produced by both "
                                      << v->producer->describe() << " and " << n->describe();
    v->producer = n;
    v->producer_output = int(i);
  }
  return n;
}

void Graph::remove_node(Node* n) {
  for (Value* v : n->inputs) {
    if (!v) continue;
    auto it = std::find(v->users.begin(), v->users.end(), n);
    if (it != v->users.end()) v->users.erase(it);
  }
  for (Value* v : n->outputs)
    if (v && v->producer == n) v->producer = nullptr;
  nodes_.erase(std::remove_if(nodes_.begin(), nodes_.end(),
                              [&](const std::unique_ptr<Node>& p) { return p.get() == n; }),
               nodes_.end());
}

void Graph::replace_uses(Value* from, Value* to) {
  for (Node* u : from->users) {
    for (Value*& in : u->inputs)
      if (in == from) in = to;
    to->users.push_back(u);
  }
  // a node using `from` twice appears twice in users; dedupe the new entries per input slot
  std::vector<Node*> fixed;
  for (Node* u : to->users) {
    size_t uses = size_t(std::count(u->inputs.begin(), u->inputs.end(), to));
    if (size_t(std::count(fixed.begin(), fixed.end(), u)) < uses) fixed.push_back(u);
  }
  to->users = fixed;
  from->users.clear();
  for (Value*& out : outputs)
    if (out == from) {
      out = to;
      to->is_graph_output = true;
    }
}

void Graph::remove_dead() {
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t i = nodes_.size(); i-- > 0;) {
      Node* n = nodes_[i].get();
      bool used = false;
      for (Value* v : n->outputs)
        if (v && (!v->users.empty() || v->is_graph_output)) used = true;
      if (!used) {
        remove_node(n);
        changed = true;
      }
    }
  }
  std::vector<std::unique_ptr<Value>> kept;
  for (auto& v : values_) {
    bool keep = v->producer || !v->users.empty() || v->is_graph_input || v->is_graph_output;
    if (keep)
      kept.push_back(std::move(v));
    else
      by_name_.erase(v->name);
  }
  values_ = std::move(kept);
}

Value* Graph::find_value(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

void Graph::topological_sort() {
  std::map<Node*, size_t> pending;
  for (auto& n : nodes_) {
    size_t c = 0;
    for (Value* v : n->inputs)
      if (v && v->producer) ++c;
    pending[n.get()] = c;
  }
  std::vector<std::unique_ptr<Node>> order;
  std::vector<std::unique_ptr<Node>> rest = std::move(nodes_);
  // Repeatedly take, in original order, every node whose producers are all placed.
  while (!rest.empty()) {
    bool progress = false;
    std::vector<std::unique_ptr<Node>> next;
    for (auto& n : rest) {
      if (pending[n.get()] == 0) {
        for (Value* v : n->outputs)
          if (v)
            for (Node* u : v->users)
              --pending[u];
        order.push_back(std::move(n));
        progress = true;
      } else {
        next.push_back(std::move(n));
      }
    }
    if (!progress) {
      nodes_ = std::move(order);
      for (auto& n : next)
        nodes_.push_back(std::move(n));
      VTC_FAIL() << "graph has a cycle through " << nodes_.back()->describe();
    }
    rest = std::move(next);
  }
  nodes_ = std::move(order);
}

std::string Graph::unique_name(const std::string& prefix) const {
  if (!by_name_.count(prefix)) return prefix;
  for (int i = 1;; ++i) {
    std::string s = prefix + "_" + std::to_string(i);
    if (!by_name_.count(s)) return s;
  }
}

} // namespace vtc
