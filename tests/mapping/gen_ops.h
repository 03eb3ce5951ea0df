// Random data-movement nodes for the property tests: for each op with a rule, a generator that
// picks random valid attributes and index operands for a given data input (or makes its own),
// and random chains of them with their rules.
#pragma once

#include <string>
#include <vector>

#include "harness.h"
#include "mapping/mapping.h"

namespace vtc::test {

// Every op name that has a data-movement rule and a generator.
const std::vector<std::string>& generated_ops();

// A random `op` node whose data input is `x` (a fresh input of a suitable random shape when x is
// null). With `writable`, attributes are chosen so that the write side exists where the op
// allows it at all (full-range slices, non-negative pads, constant injective gathers, x as the
// updates of a scatter). Returns nullptr when x's shape does not suit the op.
Node* random_op(Builder& b, const std::string& op, Value* x, bool writable);

// A random shape of rank [min_rank, max_rank] with dims in [1, max_dim].
Shape random_shape(Builder& b, int min_rank, int max_rank, int64_t max_dim);

// One step of a chain: the node, the input the chain enters it by, the output it leaves by, and
// the node's rule in the chain's direction.
struct ChainStep {
  Node* node;
  size_t in;
  size_t out;
  RuleResult rule;
};

// A chain of up to `length` random nodes from `ops` starting at `x`, each entered by the previous
// one's output; a node whose read side (or, with `write`, write side) is impossible, or whose
// output is empty, is dropped and another op tried.
std::vector<ChainStep> random_chain(Builder& b, Value* x, bool write, int length,
                                    const std::vector<std::string>& ops = generated_ops());

// The read sides of a chain composed from the last step back to the first: the last step's
// output in terms of the graph inputs (and the rules' tables), or why it is not one mapping.
Result<Mapping> compose_read_chain(const std::vector<ChainStep>& steps);

// The tensors a chain's mappings may name: the builder's values and every step's tables.
BaseEnv chain_env(const Builder& b, const std::vector<ChainStep>& steps);

} // namespace vtc::test
