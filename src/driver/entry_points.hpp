// The driver entry points libcucore uses, each with the CUDA version of the ABI
// it was written against (the PFN_<name>_v<version> typedef of cudaTypedefs.h).
// cuGetProcAddress is asked for exactly that version, so a newer driver cannot
// hand back an entry point with another signature. Add new entry points here.
#pragma once

#include <cuda.h>

// The GL interop entry points, typed as in cudaGLTypedefs.h with GLuint/GLenum as
// unsigned int and CUGLDeviceList as int, so that no GL header is needed.
typedef CUresult(CUDAAPI *PFN_cuGraphicsGLRegisterBuffer_v3000)(CUgraphicsResource *, unsigned int, unsigned int);
typedef CUresult(CUDAAPI *PFN_cuGraphicsGLRegisterImage_v3000)(CUgraphicsResource *, unsigned int, unsigned int,
                                                               unsigned int);
typedef CUresult(CUDAAPI *PFN_cuGLGetDevices_v4010)(unsigned int *, CUdevice_v1 *, unsigned int, int);

#define CUCORE_DRIVER_ENTRY_POINTS(X)          \
    X(cuGetErrorName, 6000)                    \
    X(cuGetErrorString, 6000)                  \
    X(cuInit, 2000)                            \
    X(cuDriverGetVersion, 2020)                \
    X(cuDeviceGet, 2000)                       \
    X(cuDeviceGetCount, 2000)                  \
    X(cuDeviceGetName, 2000)                   \
    X(cuDeviceGetUuid, 11040)                  \
    X(cuDeviceGetPCIBusId, 4010)               \
    X(cuDeviceTotalMem, 3020)                  \
    X(cuDeviceGetAttribute, 2000)              \
    X(cuDeviceCanAccessPeer, 4000)             \
    X(cuDevicePrimaryCtxRetain, 7000)          \
    X(cuDevicePrimaryCtxRelease, 11000)        \
    X(cuCtxGetCurrent, 4000)                   \
    X(cuCtxSetCurrent, 4000)                   \
    X(cuCtxGetDevice, 2000)                    \
    X(cuCtxSynchronize, 2000)                  \
    X(cuCtxGetStreamPriorityRange, 5050)       \
    X(cuStreamCreateWithPriority, 5050)        \
    X(cuStreamDestroy, 4000)                   \
    X(cuStreamSynchronize, 2000)               \
    X(cuStreamQuery, 2000)                     \
    X(cuStreamWaitEvent, 3020)                 \
    X(cuStreamGetCtx, 9020)                    \
    X(cuStreamGetPriority, 5050)               \
    X(cuStreamGetFlags, 5050)                  \
    X(cuLaunchHostFunc, 10000)                 \
    X(cuEventCreate, 2000)                     \
    X(cuEventDestroy, 4000)                    \
    X(cuEventRecord, 2000)                     \
    X(cuEventSynchronize, 2000)                \
    X(cuEventQuery, 2000)                      \
    X(cuEventElapsedTime, 12080)               \
    X(cuDeviceGetMemPool, 11020)               \
    X(cuMemPoolCreate, 11020)                  \
    X(cuMemPoolDestroy, 11020)                 \
    X(cuMemPoolSetAttribute, 11020)            \
    X(cuMemPoolGetAttribute, 11020)            \
    X(cuMemPoolTrimTo, 11020)                  \
    X(cuMemAllocFromPoolAsync, 11020)          \
    X(cuMemFreeAsync, 11020)                   \
    X(cuMemAllocHost, 3020)                    \
    X(cuMemFreeHost, 2000)                     \
    X(cuMemcpyAsync, 4000)                     \
    X(cuMemsetD8Async, 3020)                   \
    X(cuMemsetD16Async, 3020)                  \
    X(cuMemsetD32Async, 3020)                  \
    X(cuMemcpyPeerAsync, 4000)                 \
    X(cuMemcpy3DAsync, 3020)                   \
    X(cuMemPoolSetAccess, 11020)               \
    X(cuMemPoolGetAccess, 11020)               \
    X(cuMemPoolExportToShareableHandle, 11020) \
    X(cuMemPoolImportFromShareableHandle, 11020) \
    X(cuMemPoolExportPointer, 11020)           \
    X(cuMemPoolImportPointer, 11020)           \
    X(cuMemGetAddressRange, 3020)              \
    X(cuIpcGetEventHandle, 4010)               \
    X(cuIpcOpenEventHandle, 4010)              \
    X(cuMemAdvise, 12020)                      \
    X(cuMemPrefetchAsync, 12020)               \
    X(cuMemDiscardBatchAsync, 13000)           \
    X(cuMemDiscardAndPrefetchBatchAsync, 13000) \
    X(cuMemRangeGetAttribute, 8000)            \
    X(cuMemCreate, 10020)                      \
    X(cuMemRelease, 10020)                     \
    X(cuMemAddressReserve, 10020)              \
    X(cuMemAddressFree, 10020)                 \
    X(cuMemMap, 10020)                         \
    X(cuMemUnmap, 10020)                       \
    X(cuMemSetAccess, 10020)                   \
    X(cuMemGetAllocationGranularity, 10020)    \
    X(cuMemAllocManaged, 6000)                 \
    X(cuMemFree, 3020)                         \
    X(cuLibraryLoadData, 12000)                \
    X(cuLibraryLoadFromFile, 12000)            \
    X(cuLibraryUnload, 12000)                  \
    X(cuLibraryGetKernel, 12000)               \
    X(cuLibraryGetKernelCount, 12040)          \
    X(cuLibraryGetGlobal, 12000)               \
    X(cuLinkCreate, 6050)                      \
    X(cuLinkAddData, 6050)                     \
    X(cuLinkComplete, 5050)                    \
    X(cuLinkDestroy, 5050)                     \
    X(cuMemcpyDtoH, 3020)                      \
    X(cuMemcpyHtoD, 3020)                      \
    X(cuKernelGetFunction, 12000)              \
    X(cuKernelGetAttribute, 12000)             \
    X(cuKernelSetAttribute, 12000)             \
    X(cuKernelGetName, 12030)                  \
    X(cuKernelGetParamInfo, 12040)             \
    X(cuFuncGetAttribute, 2020)                \
    X(cuFuncSetAttribute, 9000)                \
    X(cuFuncGetName, 12030)                    \
    X(cuFuncGetParamInfo, 12040)               \
    X(cuLaunchKernelEx, 11060)                 \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags, 7000) \
    X(cuOccupancyMaxPotentialBlockSize, 6050)  \
    X(cuOccupancyAvailableDynamicSMemPerBlock, 10020) \
    X(cuOccupancyMaxPotentialClusterSize, 11070) \
    X(cuOccupancyMaxActiveClusters, 11070)     \
    X(cuGraphicsGLRegisterBuffer, 3000)        \
    X(cuGraphicsGLRegisterImage, 3000)         \
    X(cuGraphicsUnregisterResource, 3000)      \
    X(cuGraphicsMapResources, 3000)            \
    X(cuGraphicsUnmapResources, 3000)          \
    X(cuGraphicsResourceGetMappedPointer, 3020) \
    X(cuGraphicsSubResourceGetMappedArray, 3000) \
    X(cuGraphicsResourceGetMappedMipmappedArray, 5000) \
    X(cuGraphicsResourceSetMapFlags, 6050)     \
    X(cuGLGetDevices, 4010)                    \
    X(cuMipmappedArrayGetLevel, 5000)          \
    X(cuArray3DGetDescriptor, 3020)            \
    X(cuArray3DCreate, 3020)                   \
    X(cuArrayDestroy, 2000)                    \
    X(cuMipmappedArrayCreate, 5000)            \
    X(cuMipmappedArrayDestroy, 5000)           \
    X(cuTexObjectCreate, 5000)                 \
    X(cuTexObjectDestroy, 5000)                \
    X(cuSurfObjectCreate, 5000)                \
    X(cuSurfObjectDestroy, 5000)
