#pragma once
// Element-wise reduction kernels shared by the communicators (the local one and the MPI user-defined
// ops for 16-bit floats).
#include <cstddef>

#include "backends/comm/communicator.hpp"

namespace mlsb::comm {

/// acc[i] = op(acc[i], in[i]) for i < count. F16/BF16 are widened to fp32, combined, and rounded back
/// to nearest-even once (one rounding per reduction step). Float Max/Min return NaN when either
/// operand is NaN; integer Sum wraps (two's complement). acc and in may be the same buffer.
void reduce_into(void* acc, const void* in, size_t count, ElemType type, ReduceOp op);

}  // namespace mlsb::comm
