#pragma once
// MLSB_HD marks a function for the host and, under nvcc, the device (inlined on both). Includable from
// any translation unit: it needs no CUDA header, so g++-compiled .cpp files share the definitions that
// the .cu kernels use.
#ifdef __CUDACC__
#define MLSB_HD __host__ __device__ __forceinline__
#else
#define MLSB_HD inline
#endif
