// libcucore C++ façade: TensorMap (TMA) descriptors (over cucore/tensor_map.h).
//
//   cucore::TensorMapLayout layout(CUCORE_TENSOR_MAP_DATA_TYPE_FLOAT32, {cols, rows}, {cols * 4});
//   cucore::TensorMapDescriptorOptions o;
//   o.swizzle = CUCORE_TENSOR_MAP_SWIZZLE_128B;
//   auto tmap = cucore::TensorMapDescriptor::tiled(buffer, layout, {32, 8}, o);
//   cucore::launch(stream, config, kernel, tmap, out);   // a `const __grid_constant__ CUtensorMap`
//
// A descriptor (cuda.core: TensorMapDescriptor) tells an sm_90+ GPU's tensor
// memory accelerator how a tensor is laid out and which box one bulk copy
// moves. launch() passes its 128 bytes by value (launch.hpp). Made over a
// Buffer it holds the buffer's memory, so the buffer may go first. Every rule
// the driver documents is checked first; an Error's message names the rule.
#ifndef CUCORE_TENSOR_MAP_HPP
#define CUCORE_TENSOR_MAP_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "buffer.hpp"
#include "common.hpp"
#include "tensor_map.h"

namespace cucore {

namespace detail {
inline constexpr cucore_tensor_map_layout_t kTensorMapLayoutDefaults = CUCORE_TENSOR_MAP_LAYOUT_INIT;
inline constexpr cucore_tensor_map_descriptor_options_t kTensorMapOptionsDefaults =
    CUCORE_TENSOR_MAP_DESCRIPTOR_OPTIONS_INIT;

// Copies up to `N` values of a list into an array (more are an error the C ABI reports through the rank).
template <typename T, std::size_t N, typename U>
inline void copy_list(std::initializer_list<U> values, T (&out)[N]) noexcept {
    std::size_t i = 0;
    for (const U &v : values)
        if (i < N) out[i++] = static_cast<T>(v);
}
} // namespace detail

// What a tensor is: element type, global dimensions (innermost first) and the
// byte strides of dimensions 1.. (rank - 1 of them). The rank is the number
// of dimensions given (at most 5 are kept; more make the rank 6, refused).
struct TensorMapLayout {
    cucore_tensor_map_layout_t c = detail::kTensorMapLayoutDefaults;

    TensorMapLayout() noexcept = default;
    TensorMapLayout(cucore_tensor_map_data_type_t data_type, std::initializer_list<std::uint64_t> global_dim,
                    std::initializer_list<std::uint64_t> global_strides) noexcept {
        c.data_type = data_type;
        c.rank = static_cast<std::uint32_t>(global_dim.size());
        detail::copy_list(global_dim, c.global_dim);
        detail::copy_list(global_strides, c.global_strides);
    }
};

// How a descriptor traverses and lays out (cuda.core: TensorMapDescriptorOptions);
// zero is every field's default.
struct TensorMapDescriptorOptions {
    std::array<std::uint32_t, CUCORE_TENSOR_MAP_MAX_RANK> element_strides{};  // 0: 1
    cucore_tensor_map_interleave_t interleave = CUCORE_TENSOR_MAP_INTERLEAVE_NONE;
    cucore_tensor_map_swizzle_t swizzle = CUCORE_TENSOR_MAP_SWIZZLE_NONE;
    cucore_tensor_map_l2_promotion_t l2_promotion = CUCORE_TENSOR_MAP_L2_PROMOTION_NONE;
    cucore_tensor_map_oob_fill_t oob_fill = CUCORE_TENSOR_MAP_OOB_FILL_NONE;
    cucore_tensor_map_im2col_wide_mode_t im2col_wide_mode = CUCORE_TENSOR_MAP_IM2COL_WIDE_MODE_W;

    cucore_tensor_map_descriptor_options_t to_c() const noexcept {
        cucore_tensor_map_descriptor_options_t o = detail::kTensorMapOptionsDefaults;
        for (std::size_t i = 0; i < element_strides.size(); ++i) o.element_strides[i] = element_strides[i];
        o.interleave = interleave;
        o.swizzle = swizzle;
        o.l2_promotion = l2_promotion;
        o.oob_fill = oob_fill;
        o.im2col_wide_mode = im2col_wide_mode;
        return o;
    }
};

class TensorMapDescriptor : public Handle<TensorMapDescriptor, cucore_tensor_map_descriptor_t> {
public:
    TensorMapDescriptor() noexcept = default;

    // A tiled descriptor (cuTensorMapEncodeTiled) over all of `buffer` (or
    // from `address` within it), boxes of `box_dim` elements. Throws Error:
    // INVALID_HANDLE, INVALID_ARGUMENT (the rule broken, named), INVALID_STATE
    // (a closed buffer), CUDA.
    static TensorMapDescriptor tiled(const Buffer &buffer, const TensorMapLayout &layout,
                                     std::initializer_list<std::uint32_t> box_dim,
                                     const TensorMapDescriptorOptions &options = {}, std::uint64_t address = 0) {
        return make_tiled(buffer.get(), address, layout, box_dim, options);
    }
    // The same over a raw device address the caller keeps valid.
    static TensorMapDescriptor tiled(std::uint64_t address, const TensorMapLayout &layout,
                                     std::initializer_list<std::uint32_t> box_dim,
                                     const TensorMapDescriptorOptions &options = {}) {
        return make_tiled(nullptr, address, layout, box_dim, options);
    }

    // An im2col descriptor (cuTensorMapEncodeIm2col; rank 3..5, rank - 2
    // corner offsets each, {D, H, W} order). Throws as tiled.
    static TensorMapDescriptor im2col(const Buffer &buffer, const TensorMapLayout &layout,
                                      std::initializer_list<std::int32_t> lower_corner,
                                      std::initializer_list<std::int32_t> upper_corner,
                                      std::uint32_t channels_per_pixel, std::uint32_t pixels_per_column,
                                      const TensorMapDescriptorOptions &options = {}, std::uint64_t address = 0) {
        std::int32_t lower[3] = {}, upper[3] = {};
        detail::copy_list(lower_corner, lower);
        detail::copy_list(upper_corner, upper);
        const cucore_tensor_map_descriptor_options_t o = options.to_c();
        cucore_tensor_map_descriptor_t *raw = nullptr;
        detail::check(cucore_tensor_map_descriptor_create_im2col(buffer.get(), address, &layout.c, lower, upper,
                                                                 channels_per_pixel, pixels_per_column, &o, &raw));
        return adopt(raw);
    }

    // An im2col-wide descriptor (cuTensorMapEncodeIm2colWide; compute
    // capability 10.0). Throws as tiled; NOT_SUPPORTED without the entry point.
    static TensorMapDescriptor im2col_wide(const Buffer &buffer, const TensorMapLayout &layout,
                                           std::int32_t lower_corner_width, std::int32_t upper_corner_width,
                                           std::uint32_t channels_per_pixel, std::uint32_t pixels_per_column,
                                           const TensorMapDescriptorOptions &options = {},
                                           std::uint64_t address = 0) {
        const cucore_tensor_map_descriptor_options_t o = options.to_c();
        cucore_tensor_map_descriptor_t *raw = nullptr;
        detail::check(cucore_tensor_map_descriptor_create_im2col_wide(
            buffer.get(), address, &layout.c, lower_corner_width, upper_corner_width, channels_per_pixel,
            pixels_per_column, &o, &raw));
        return adopt(raw);
    }

    // Points the descriptor at `buffer` (from `address` within it; 0: its
    // start), which it then holds, or at a raw address. Same alignment rule and
    // fit. Throws as tiled.
    void replace_address(const Buffer &buffer, std::uint64_t address = 0) const {
        detail::check(cucore_tensor_map_descriptor_replace_address(handle_, buffer.get(), address));
    }
    void replace_address(std::uint64_t address) const {
        detail::check(cucore_tensor_map_descriptor_replace_address(handle_, nullptr, address));
    }

    // The 128 bytes, 64-byte aligned, valid while the descriptor lives (what
    // launch() passes). Throws Error: INVALID_HANDLE.
    const void *data() const {
        const void *bytes = nullptr;
        detail::check(cucore_tensor_map_descriptor_data(handle_, &bytes));
        return bytes;
    }

    // A copy of the 128 bytes. Throws Error: INVALID_HANDLE.
    std::array<unsigned char, CUCORE_TENSOR_MAP_SIZE> bytes() const {
        std::array<unsigned char, CUCORE_TENSOR_MAP_SIZE> out{};
        detail::check(cucore_tensor_map_descriptor_copy(handle_, out.data(), out.size()));
        return out;
    }

    // The global address it points at now. Throws Error: INVALID_HANDLE.
    std::uint64_t address() const {
        std::uint64_t a = 0;
        detail::check(cucore_tensor_map_descriptor_address(handle_, &a));
        return a;
    }

    // Which encode made it. Throws Error: INVALID_HANDLE.
    cucore_tensor_map_kind_t kind() const {
        cucore_tensor_map_kind_t k = CUCORE_TENSOR_MAP_KIND_TILED;
        detail::check(cucore_tensor_map_descriptor_kind(handle_, &k));
        return k;
    }

private:
    static TensorMapDescriptor make_tiled(cucore_buffer_t *buffer, std::uint64_t address,
                                          const TensorMapLayout &layout, std::initializer_list<std::uint32_t> box_dim,
                                          const TensorMapDescriptorOptions &options) {
        std::uint32_t box[CUCORE_TENSOR_MAP_MAX_RANK] = {};
        detail::copy_list(box_dim, box);
        const cucore_tensor_map_descriptor_options_t o = options.to_c();
        cucore_tensor_map_descriptor_t *raw = nullptr;
        detail::check(cucore_tensor_map_descriptor_create_tiled(buffer, address, &layout.c, box, &o, &raw));
        return adopt(raw);
    }
};

static_assert(sizeof(TensorMapDescriptor) == sizeof(void *), "a TensorMapDescriptor is exactly one C handle");

} // namespace cucore

#endif // CUCORE_TENSOR_MAP_HPP
