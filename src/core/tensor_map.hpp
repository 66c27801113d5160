// TensorMap (TMA) descriptors: the 128-byte CUtensorMap a kernel takes as a
// __grid_constant__ parameter, encoded by the driver after every rule the
// driver documents was checked here (tensor_map_rules.cpp), each failure
// naming its rule. A descriptor over a buffer holds the buffer's Allocation,
// so the memory it points at outlives the buffer's handle.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <memory>
#include <mutex>

#include "core/buffer.hpp"
#include "core/context.hpp"
#include "core/handle.hpp"
#include "core/thread_cache.hpp"
#include "cucore/tensor_map.h"

namespace cucore::core {

// What one encode is asked for: capi read the structs (sizes, enum ranges, element strides' 0 -> 1); the
// rules between fields are checked by check_tensor_map_rules.
struct TensorMapRequest {
    cucore_tensor_map_kind_t kind = CUCORE_TENSOR_MAP_KIND_TILED;
    cucore_tensor_map_layout_t layout{};
    uint32_t box_dim[CUCORE_TENSOR_MAP_MAX_RANK] = {};  // tiled
    int32_t lower_corner[3] = {};                        // im2col: rank - 2 offsets; wide: [0] is W
    int32_t upper_corner[3] = {};
    uint32_t channels_per_pixel = 0;  // im2col, im2col-wide
    uint32_t pixels_per_column = 0;
    cucore_tensor_map_descriptor_options_t options{};
};

// Throws INVALID_ARGUMENT naming the first documented rule `request` breaks (the address is checked by
// check_tensor_map_address, since replace_address checks it again).
void check_tensor_map_rules(const TensorMapRequest &request);

// The alignment the global address needs (16 bytes; 32 with interleave 32B or an ALIGN16B packed type).
uint64_t tensor_map_address_alignment(const TensorMapRequest &request) noexcept;

// Bytes from the tensor's first byte to one past its last (the span a buffer must hold).
uint64_t tensor_map_extent(const TensorMapRequest &request);

// Where a descriptor points: its address and, over a buffer, the buffer's memory it holds.
struct TensorMapTarget {
    uint64_t address = 0;
    std::shared_ptr<Allocation> allocation;  // null for a raw address
    Ref<Context> context;                    // the buffer's device's primary context (null: the caller's)

    // Resolves `buffer` (may be null) and `address` as tensor_map.h says and checks the address rules (and,
    // with a buffer, that the tensor fits); throws INVALID_ARGUMENT naming the rule or INVALID_STATE (closed).
    static TensorMapTarget resolve(Buffer *buffer, uint64_t address, const TensorMapRequest &request);
};

class TensorMapDescriptor final : public Object, public Pooled<TensorMapDescriptor> {
  public:
    // Checks the rules (check_tensor_map_rules), resolves `buffer` (may be null) and `address`
    // (TensorMapTarget::resolve) and encodes (the driver refusing: CUDA with its error name).
    static Ref<TensorMapDescriptor> create(const TensorMapRequest &request, Buffer *buffer, uint64_t address);
    TensorMapDescriptor(const TensorMapRequest &request, TensorMapTarget target, const CUtensorMap &map) noexcept;
    ~TensorMapDescriptor() override = default;

    // Points the descriptor at `buffer`/`address` (resolved under the same rules); holds the new buffer.
    void replace_address(Buffer *buffer, uint64_t address);
    // The aligned storage (valid while the object lives; rewritten in place by replace_address).
    const void *data() const noexcept { return map(); }
    void copy(void *bytes) const;
    uint64_t address() const;
    cucore_tensor_map_kind_t kind() const noexcept { return request_.kind; }
    const TensorMapRequest &request() const noexcept { return request_; }

  private:
    // Pooled objects come from operator new (16-byte aligned), so the aligned descriptor is found inside a
    // larger array.
    CUtensorMap *map() const noexcept {
        const auto base = reinterpret_cast<std::uintptr_t>(storage_);
        return reinterpret_cast<CUtensorMap *>((base + alignof(CUtensorMap) - 1) &
                                               ~std::uintptr_t{alignof(CUtensorMap) - 1});
    }

    const TensorMapRequest request_;
    mutable std::mutex mutex_;  // address_, target_ and the bytes during a replace
    TensorMapTarget target_;
    // Aligned as the CUtensorMap type asks (128 bytes in CUDA 13's cuda.h), beyond the driver's 64.
    mutable unsigned char storage_[CUCORE_TENSOR_MAP_SIZE + alignof(CUtensorMap)];
};

}  // namespace cucore::core
