// What the fake's batched copies, batched prefetches and stream memory
// operations record for the unit tests (tests/fake_driver/memory_operations.cpp).
//
// The fakes check what the driver checks (argument shapes, attribute ranges,
// legacy stream, memory known to the fake, alignment, managed memory refused by
// the stream memory operations, the device attributes of 64-bit, NOR and flush
// operations) and do the work in stream order on the fake's memory. A batched
// copy copies each range (a DURING_API_CALL source is read at the call);
// cuMemPrefetchBatchAsync records the last prefetch location of each managed
// range; writes store the value; a wait blocks its stream until the condition
// holds (worker-thread streams). In-process, where work runs at once on the
// calling thread, a wait whose condition does not hold cannot be met later: it
// is counted in unmet_waits() and lets the stream go on. Stream memory
// operations and batched copies on a capturing stream end the capture
// (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED): the fake has no graph node for them.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <vector>

namespace fake {

// The last cuMemcpyBatchAsync that the fake accepted.
struct CopyBatchRecord {
    size_t count = 0;
    std::vector<CUmemcpyAttributes> attributes;
    std::vector<size_t> attribute_starts;
    CUstream stream = nullptr;
};
CopyBatchRecord last_copy_batch();

// The locations of the last cuMemPrefetchBatchAsync the fake accepted.
struct PrefetchBatchRecord {
    size_t count = 0;
    std::vector<CUmemLocation> locations;
    std::vector<size_t> location_starts;
};
PrefetchBatchRecord last_prefetch_batch();

// The operations of the last cuStreamBatchMemOp, or the one operation of the
// last cuStreamWriteValue*/WaitValue*, that the fake accepted.
std::vector<CUstreamBatchMemOpParams> last_batch_memory_ops();

// In-process waits whose condition did not hold when they ran (since the process started).
int unmet_waits();

}  // namespace fake
