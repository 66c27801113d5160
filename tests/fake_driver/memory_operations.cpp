// Batched copies, prefetches and discards, and stream memory operations. Stubs until that work fills them in.
#include "entry_points.hpp"

namespace fake::detail {

CUresult f_cuMemcpyBatchAsync(CUdeviceptr_v2 *, CUdeviceptr_v2 *, size_t *, size_t, CUmemcpyAttributes_v1 *, size_t *, size_t, CUstream) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuMemcpy3DBatchAsync(size_t, CUDA_MEMCPY3D_BATCH_OP_v1 *, unsigned long long, CUstream) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuMemPrefetchBatchAsync(CUdeviceptr_v2 *, size_t *, size_t, CUmemLocation_v1 *, size_t *, size_t, unsigned long long, CUstream) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuStreamWriteValue32(CUstream, CUdeviceptr_v2, cuuint32_t, unsigned int) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuStreamWriteValue64(CUstream, CUdeviceptr_v2, cuuint64_t, unsigned int) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuStreamWaitValue32(CUstream, CUdeviceptr_v2, cuuint32_t, unsigned int) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuStreamWaitValue64(CUstream, CUdeviceptr_v2, cuuint64_t, unsigned int) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuStreamBatchMemOp(CUstream, unsigned int, CUstreamBatchMemOpParams *, unsigned int) { return CUDA_ERROR_NOT_SUPPORTED; }

}  // namespace fake::detail
