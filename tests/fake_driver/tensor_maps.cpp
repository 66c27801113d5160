// TensorMap (TMA) descriptor encoding. Stubs until the TensorMap work fills them in.
#include "entry_points.hpp"

namespace fake::detail {

CUresult f_cuTensorMapEncodeTiled(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *, const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuTensorMapEncodeIm2col(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *, const cuuint64_t *, const int *, const int *, cuuint32_t, cuuint32_t, const cuuint32_t *, CUtensorMapInterleave, CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuTensorMapEncodeIm2colWide(CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *, const cuuint64_t *, int, int, cuuint32_t, cuuint32_t, const cuuint32_t *, CUtensorMapInterleave, CUtensorMapIm2ColWideMode, CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill) { return CUDA_ERROR_NOT_SUPPORTED; }
CUresult f_cuTensorMapReplaceAddress(CUtensorMap *, void *) { return CUDA_ERROR_NOT_SUPPORTED; }

}  // namespace fake::detail
