// Green contexts: device resources, SM splits, green contexts and their streams and events. Stubs until the green-context work fills them in.
#include "entry_points.hpp"

namespace fake::detail {

CUresult f_cuDeviceGetDevResource(CUdevice, CUdevResource*, CUdevResourceType) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuCtxGetDevResource(CUcontext, CUdevResource*, CUdevResourceType) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuGreenCtxGetDevResource(CUgreenCtx, CUdevResource*, CUdevResourceType) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuDevSmResourceSplitByCount(CUdevResource*, unsigned int*, const CUdevResource*, CUdevResource*, unsigned int, unsigned int) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuDevResourceGenerateDesc(CUdevResourceDesc*, CUdevResource*, unsigned int) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuGreenCtxCreate(CUgreenCtx*, CUdevResourceDesc, CUdevice, unsigned int) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuGreenCtxDestroy(CUgreenCtx) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuCtxFromGreenCtx(CUcontext *, CUgreenCtx) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuGreenCtxStreamCreate(CUstream*, CUgreenCtx, unsigned int, int) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuStreamGetGreenCtx(CUstream, CUgreenCtx *) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuGreenCtxRecordEvent(CUgreenCtx, CUevent) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuGreenCtxWaitEvent(CUgreenCtx, CUevent) { return CUDA_ERROR_NOT_SUPPORTED; }

}  // namespace fake::detail
