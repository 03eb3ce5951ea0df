// Graphs for measuring and testing the strategy search without depending on fusion's choices:
// a kernel graph with every compute node a kernel of its own, and a synthetic model of any
// size made of a repeated block that has every kind of data-movement decision in it:
//
//   h = MatMul(x, W)            [1,64,128]
//   a, b = Split(h, axis 2)     Split: read side or write side
//   t = Transpose(Reshape(b))   [1,4,64,16]   a view chain
//   u = Sigmoid(t)
//   u3 = Reshape(Transpose(u))  back to [1,64,64]
//   c = Concat(Relu(a), u3)     Concat: read side or write side
//   x' = Add(Slice(c, 0:64), x) a strided window
//
// (11 nodes a block, 7 of them data movement).
#pragma once

#include "ir/graph.h"
#include "passes/kernel_graph.h"

namespace vtc {

// Every non-movement node becomes a kernel of its own (kind from its op), in graph order.
KernelGraph unfused_kernel_graph(const Graph& g);

// A graph of `blocks` blocks (11 nodes each), shapes inferred.
Graph synthetic_graph(int blocks);

} // namespace vtc
