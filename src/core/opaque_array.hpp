// Opaque arrays (CUarray) and mipmapped arrays (CUmipmappedArray), and the
// copies in and out of them.
//
// A driver array lives in an ArrayStorage, shared (std::shared_ptr) by the
// library object that hands it out, by the levels of a mipmapped array and by
// the texture and surface objects over it: the last holder destroys an owned
// one, tells a foreign owner, or lets go of what lent it (a GL mapping, which
// then unmaps). Closing an array lets go of its object's share early, so
// release and close order never matter. The description of an array
// (ArrayShape) is checked once, here, with the geometry it makes up.
#pragma once

#include <cuda.h>

#include <memory>
#include <mutex>

#include "core/buffer.hpp"
#include "core/context.hpp"
#include "core/copy_3d.hpp"
#include "core/handle.hpp"
#include "core/owner.hpp"
#include "core/thread_cache.hpp"
#include "cucore/opaque_array.h"

namespace cucore::core {

class Device;

// What one array format is.
struct ArrayFormatTraits {
    cucore_array_format_t format;
    const char *name;         // "FLOAT32", as in CUCORE_ARRAY_FORMAT_<name>
    uint32_t unit_bytes;      // bytes per channel; per element for packed formats; per 4x4 block for BC
    uint32_t fixed_channels;  // the channel count the format names (0: 1, 2 or 4 may be chosen)
    bool block_compressed;    // BC: data in 4x4 blocks of unit_bytes
    bool integer;             // elements are integers that are not normalized by the format itself
    bool srgb;                // *_SRGB: read only through an sRGB texture
};

// The traits of the format whose value is `format`, or null for a value this library does not offer. It takes the
// value as an int: a caller's enum may hold any int32 (loading one outside the enum's range as the enum is UB).
const ArrayFormatTraits *array_format_traits(int32_t format) noexcept;

// The channel count `requested` (0: the default) resolves to for `format`: the count the format names (a
// requested count must be it), else 1, 2 or 4 (0 is 1). Throws INVALID_ARGUMENT naming `field`.
uint32_t channels_of(const ArrayFormatTraits &format, uint32_t requested, const char *field);

// One device limit a value must stay within (arrays' extents, textures' linear and pitched sizes): `field`
// names the value in messages ("options.width"), `attribute_name` and `what` the limit.
struct DeviceLimit {
    uint64_t value;
    const char *field;
    CUdevice_attribute attribute;
    const char *attribute_name;
    const char *what;
};

#define CUCORE_LIMIT(value, field, attribute, what) \
    ::cucore::core::DeviceLimit { value, field, CU_DEVICE_ATTRIBUTE_##attribute, "CU_DEVICE_ATTRIBUTE_" #attribute, what }

// The first of `limits` that `device` does not meet (its maximum in `*maximum`), or null.
const DeviceLimit *first_exceeded(const Device &device, const DeviceLimit *limits, size_t count, int *maximum);
// Throws INVALID_ARGUMENT naming the value, the limit and the device's maximum.
[[noreturn]] void throw_limit(const DeviceLimit &limit, int maximum);
// Throws for the first of `limits` that `device` does not meet.
template <size_t N>
void require_within(const Device &device, const DeviceLimit (&limits)[N]) {
    int maximum = 0;
    if (const DeviceLimit *exceeded = first_exceeded(device, limits, N, &maximum)) throw_limit(*exceeded, maximum);
}

// The description of an array, validated: format, channels, kind, flags and extents.
struct ArrayShape {
    const ArrayFormatTraits *format = nullptr;
    uint32_t num_channels = 0;
    cucore_array_kind_t kind = CUCORE_ARRAY_KIND_PLAIN;
    uint32_t flags = 0;
    uint64_t width = 0, height = 0, depth = 0, layers = 0;

    // Checks the options' geometry (channels for the format, extents for the kind, BC and flag rules) and
    // resolves defaults; throws INVALID_ARGUMENT naming the field ("options.width").
    static ArrayShape from_options(const cucore_opaque_array_options_t &options);
    // What the driver says an array is; NOT_SUPPORTED for a format this library does not offer.
    static ArrayShape from_descriptor(const CUDA_ARRAY3D_DESCRIPTOR &descriptor);

    CUDA_ARRAY3D_DESCRIPTOR descriptor() const noexcept;
    // Checks the extents against `device`'s limits for the kind and flags (`levels` > 1: a mipmapped array's);
    // throws INVALID_ARGUMENT naming the limit.
    void check_limits(const Device &device, bool mipmapped) const;
    // The largest level count a mipmapped array of this shape can have.
    uint32_t max_levels() const noexcept;

    uint32_t element_size() const noexcept;  // per element; per block for BC
    uint64_t row_bytes() const noexcept;     // a packed row (BC: a row of blocks)
    uint64_t row_count() const noexcept;     // packed rows per slice
    uint64_t slice_count() const noexcept;   // 3D depth, layers, faces
    uint64_t size_bytes() const noexcept;
    bool is_1d() const noexcept { return height == 0; }
    bool is_cubemap() const noexcept {
        return kind == CUCORE_ARRAY_KIND_CUBEMAP || kind == CUCORE_ARRAY_KIND_LAYERED_CUBEMAP;
    }
    // "2D float32 x 1 array of 64 x 32": for messages.
    std::string describe() const;
};

// What a driver array borrows its existence from beyond itself (a GL mapping):
// held by the storage, asked whether the array is still there.
class ArrayLender {
  public:
    virtual ~ArrayLender() = default;
    virtual bool lends() const = 0;
    virtual const char *ended_message() const noexcept = 0;  // why the array is gone once lends() is false
};

// A driver array or mipmapped array and what it depends on. Shared by every holder; the last one ends it.
class ArrayStorage {
  public:
    enum class Origin { created, level, foreign, lent };

    ArrayStorage(Ref<Context> context, CUarray array, CUmipmappedArray mipmapped, Origin origin) noexcept;
    ~ArrayStorage();  // created: destroys (failures reported); foreign: tells the owner
    ArrayStorage(const ArrayStorage &) = delete;
    ArrayStorage &operator=(const ArrayStorage &) = delete;

    // Set once, before the storage is shared.
    void set_parent(std::shared_ptr<ArrayStorage> parent) noexcept { parent_ = std::move(parent); }
    void set_lender(std::shared_ptr<ArrayLender> lender) noexcept { lender_ = std::move(lender); }
    void set_owner(cucore_release_fn on_release, void *user_data) noexcept { owner_.set(on_release, user_data); }

    // Throws INVALID_STATE when what lends the array (or its parent's) has ended.
    void check_usable() const;
    CUarray array() const noexcept { return array_; }
    CUmipmappedArray mipmapped() const noexcept { return mipmapped_; }
    Context &context() const noexcept { return *context_; }
    Origin origin() const noexcept { return origin_; }

  private:
    Ref<Context> context_;
    CUarray array_;
    CUmipmappedArray mipmapped_;
    Origin origin_;
    std::shared_ptr<ArrayStorage> parent_;  // a level's mipmapped array
    std::shared_ptr<ArrayLender> lender_;   // a GL mapping
    ForeignOwner owner_;
};

// An opaque array: a shape and a share of its storage (none once closed).
class OpaqueArray final : public Object, public Pooled<OpaqueArray> {
  public:
    static Ref<OpaqueArray> create(Device &device, const ArrayShape &shape);
    static Ref<OpaqueArray> wrap(Device &device, CUarray array, cucore_release_fn on_release, void *user_data);
    // An array whose storage is already made (a level, a GL mapping); its shape is asked from the driver.
    static Ref<OpaqueArray> over(std::shared_ptr<ArrayStorage> storage);

    OpaqueArray(std::shared_ptr<ArrayStorage> storage, const ArrayShape &shape) noexcept;
    ~OpaqueArray() override;

    void close() noexcept;
    // The storage while open and usable (INVALID_STATE otherwise, naming `what`).
    std::shared_ptr<ArrayStorage> storage() const;
    CUarray cu() const { return storage()->array(); }
    const ArrayShape &shape() const noexcept { return shape_; }
    cucore_opaque_array_info_t info() const;

    void copy_from_host(const void *source, uint64_t size, Stream &stream);
    void copy_to_host(void *destination, uint64_t size, Stream &stream);
    void copy_from_buffer(Buffer &buffer, Stream &stream);
    void copy_to_buffer(Buffer &buffer, Stream &stream);
    void copy_from_array(OpaqueArray &source, Stream &stream);

  private:
    mutable std::mutex mutex_;  // guards storage_ against close
    std::shared_ptr<ArrayStorage> storage_;
    const ArrayShape shape_;
};

// A mipmapped array: level 0's shape, its level count and a share of its storage.
class MipmappedArray final : public Object, public Pooled<MipmappedArray> {
  public:
    static Ref<MipmappedArray> create(Device &device, const ArrayShape &shape, uint32_t num_levels);
    static Ref<MipmappedArray> wrap(Device &device, CUmipmappedArray mipmapped, cucore_release_fn on_release,
                                    void *user_data);
    // A mipmapped array whose storage is already made (a GL mapping); shape and levels are asked from the driver.
    static Ref<MipmappedArray> over(std::shared_ptr<ArrayStorage> storage);

    MipmappedArray(std::shared_ptr<ArrayStorage> storage, const ArrayShape &shape, uint32_t num_levels) noexcept;
    ~MipmappedArray() override;

    void close() noexcept;
    std::shared_ptr<ArrayStorage> storage() const;
    CUmipmappedArray cu() const { return storage()->mipmapped(); }
    const ArrayShape &shape() const noexcept { return shape_; }
    uint32_t num_levels() const noexcept { return num_levels_; }
    cucore_opaque_array_info_t info() const;
    Ref<OpaqueArray> level(uint32_t level);

  private:
    mutable std::mutex mutex_;
    std::shared_ptr<ArrayStorage> storage_;
    const ArrayShape shape_;
    const uint32_t num_levels_;
};

// One side of a region copy: an array region (array set) or linear memory.
struct ArrayCopySide {
    OpaqueArray *array = nullptr;
    uint64_t x = 0, y = 0, z = 0;  // elements (array sides)
    CopySide memory{};             // linear sides
};

// Copies width x height x depth elements between two sides, at least one an array, ordered on `stream`.
void copy_array_region(const ArrayCopySide &source, const ArrayCopySide &destination, uint64_t width,
                       uint64_t height, uint64_t depth, Stream &stream);

}  // namespace cucore::core
