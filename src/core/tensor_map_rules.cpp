// The rules cuTensorMapEncodeTiled, cuTensorMapEncodeIm2col and
// cuTensorMapEncodeIm2colWide document (CUDA 13.0), each checked once here
// before the driver is asked, each failure naming its rule: the driver itself
// answers only CUDA_ERROR_INVALID_VALUE.
#include <string>

#include "core/error.hpp"
#include "core/tensor_map.hpp"

namespace cucore::core {

namespace {

using std::to_string;

constexpr uint64_t kMaxGlobalDim = uint64_t{1} << 32;
constexpr uint64_t kStrideLimit = uint64_t{1} << 40;

struct DataTypeTraits {
    const char *name;
    uint32_t bits;  // memory per element (the packed types: per value, gaps included)
    bool floating;
};

// Indexed by cucore_tensor_map_data_type_t (capi checked the range).
constexpr DataTypeTraits kDataTypes[] = {
    {"UNSET", 0, false},       {"UINT8", 8, false},        {"UINT16", 16, false},       {"UINT32", 32, false},
    {"INT32", 32, false},      {"UINT64", 64, false},      {"INT64", 64, false},        {"FLOAT16", 16, true},
    {"FLOAT32", 32, true},     {"FLOAT64", 64, true},      {"BFLOAT16", 16, true},      {"FLOAT32_FTZ", 32, true},
    {"TFLOAT32", 32, true},    {"TFLOAT32_FTZ", 32, true}, {"16U4_ALIGN8B", 4, false},  {"16U4_ALIGN16B", 8, false},
    {"16U6_ALIGN16B", 8, false},
};

const DataTypeTraits &traits(cucore_tensor_map_data_type_t type) { return kDataTypes[static_cast<int>(type)]; }

bool align16b_packed(cucore_tensor_map_data_type_t type) {
    return type == CUCORE_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B || type == CUCORE_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
}

std::string type_name(cucore_tensor_map_data_type_t type) {
    return std::string("CUCORE_TENSOR_MAP_DATA_TYPE_") + traits(type).name;
}

const char *swizzle_name(cucore_tensor_map_swizzle_t swizzle) {
    static const char *const names[] = {"NONE", "32B", "64B", "128B", "128B_ATOM_32B", "128B_ATOM_32B_FLIP_8B",
                                        "128B_ATOM_64B"};
    return names[static_cast<int>(swizzle)];
}

// The span a swizzle pattern repeats over (0: no swizzle).
uint32_t swizzle_span(cucore_tensor_map_swizzle_t swizzle) {
    switch (swizzle) {
        case CUCORE_TENSOR_MAP_SWIZZLE_NONE: return 0;
        case CUCORE_TENSOR_MAP_SWIZZLE_32B: return 32;
        case CUCORE_TENSOR_MAP_SWIZZLE_64B: return 64;
        default: return 128;
    }
}

std::string at(const char *field, uint32_t i) { return std::string(field) + "[" + to_string(i) + "]"; }

void check_rank(const TensorMapRequest &r) {
    const uint32_t rank = r.layout.rank;
    if (r.kind == CUCORE_TENSOR_MAP_KIND_TILED) {
        if (rank < 1 || rank > CUCORE_TENSOR_MAP_MAX_RANK)
            throw_invalid_argument("layout.rank is " + to_string(rank) + "; the rank must be in 1..5");
        if (r.options.interleave != CUCORE_TENSOR_MAP_INTERLEAVE_NONE && rank < 3)
            throw_invalid_argument("layout.rank is " + to_string(rank) +
                                   "; the rank must be at least 3 when interleave is not NONE");
    } else if (rank < 3 || rank > CUCORE_TENSOR_MAP_MAX_RANK) {
        throw_invalid_argument("layout.rank is " + to_string(rank) +
                               "; an im2col tensor's rank must be 3, 4 or 5 (NWC, NHWC or NDHWC)");
    }
}

// Fields past the rank must be left zero, so a wrong rank is not silently a smaller tensor.
template <class T>
void check_unused(const T *values, uint32_t from, uint32_t count, const char *field) {
    for (uint32_t i = from; i < count; ++i)
        if (values[i] != 0)
            throw_invalid_argument(at(field, i) + " is " + to_string(values[i]) +
                                   ", past the rank (" + to_string(from) + "); leave it 0");
}

void check_global_dims(const TensorMapRequest &r) {
    const cucore_tensor_map_data_type_t type = r.layout.data_type;
    for (uint32_t i = 0; i < r.layout.rank; ++i) {
        const uint64_t dim = r.layout.global_dim[i];
        if (dim < 1 || dim > kMaxGlobalDim)
            throw_invalid_argument(at("layout.global_dim", i) + " is " + to_string(dim) +
                                   "; globalDim[i] must be in 1..2^32");
    }
    check_unused(r.layout.global_dim, r.layout.rank, CUCORE_TENSOR_MAP_MAX_RANK, "layout.global_dim");
    const uint64_t inner = r.layout.global_dim[0];
    if (align16b_packed(type) && inner % 128 != 0)
        throw_invalid_argument("layout.global_dim[0] is " + to_string(inner) + "; globalDim[0] must be a multiple of "
                               "128 for " + type_name(type));
    if (type == CUCORE_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B && inner % 2 != 0)
        throw_invalid_argument("layout.global_dim[0] is " + to_string(inner) + "; globalDim[0] must be a multiple of "
                               "2 for " + type_name(type));
}

void check_global_strides(const TensorMapRequest &r) {
    const bool by32 = r.options.interleave == CUCORE_TENSOR_MAP_INTERLEAVE_32B || align16b_packed(r.layout.data_type);
    const uint64_t multiple = by32 ? 32 : 16;
    for (uint32_t i = 0; i + 1 < r.layout.rank; ++i) {
        const uint64_t stride = r.layout.global_strides[i];
        if (stride % multiple != 0 || stride == 0 || stride >= kStrideLimit)
            throw_invalid_argument(at("layout.global_strides", i) + " is " + to_string(stride) +
                                   "; globalStrides[i] must be a multiple of 16 and < 2^40 (non-zero; a multiple of 32 "
                                   "with interleave 32B or the 16U4_ALIGN16B/16U6_ALIGN16B types)");
    }
    const uint32_t used = r.layout.rank > 0 ? r.layout.rank - 1 : 0;
    check_unused(r.layout.global_strides, used, CUCORE_TENSOR_MAP_MAX_RANK - 1, "layout.global_strides");
}

void check_box(const TensorMapRequest &r) {
    const cucore_tensor_map_data_type_t type = r.layout.data_type;
    for (uint32_t i = 0; i < r.layout.rank; ++i)
        if (r.box_dim[i] < 1 || r.box_dim[i] > 256)
            throw_invalid_argument(at("box_dim", i) + " is " + to_string(r.box_dim[i]) +
                                   "; boxDim[i] must be in 1..256");
    check_unused(r.box_dim, r.layout.rank, CUCORE_TENSOR_MAP_MAX_RANK, "box_dim");
    const uint64_t inner_bits = uint64_t{r.box_dim[0]} * traits(type).bits;
    if (r.options.interleave == CUCORE_TENSOR_MAP_INTERLEAVE_NONE && inner_bits % 128 != 0)
        throw_invalid_argument("box_dim[0] is " + to_string(r.box_dim[0]) + " elements of " + type_name(type) +
                               "; boxDim[0]*elementSize must be a multiple of 16 bytes when interleave is NONE");
    if (align16b_packed(type) && r.box_dim[0] != 128)
        throw_invalid_argument("box_dim[0] is " + to_string(r.box_dim[0]) + "; boxDim[0] must be 128 for " +
                               type_name(type));
}

void check_element_strides(const TensorMapRequest &r) {
    for (uint32_t i = 0; i < r.layout.rank; ++i) {
        const uint32_t stride = r.options.element_strides[i];
        if (stride < 1 || stride > 8)
            throw_invalid_argument(at("options.element_strides", i) + " is " + to_string(stride) +
                                   "; elementStrides in 1..8");
    }
    // capi turned the unset ones into 1; past the rank they were given explicitly.
    for (uint32_t i = r.layout.rank; i < CUCORE_TENSOR_MAP_MAX_RANK; ++i)
        if (r.options.element_strides[i] != 1)
            throw_invalid_argument(at("options.element_strides", i) + " is " +
                                   to_string(r.options.element_strides[i]) + ", past the rank (" +
                                   to_string(r.layout.rank) + "); leave it 0");
}

// The bytes of the box's inner dimension (tiled: boxDim[0], im2col: channelsPerPixel elements).
uint64_t inner_box_bytes(const TensorMapRequest &r) {
    const uint64_t elements = r.kind == CUCORE_TENSOR_MAP_KIND_TILED ? r.box_dim[0] : r.channels_per_pixel;
    return (elements * traits(r.layout.data_type).bits + 7) / 8;
}

void check_layout_modes(const TensorMapRequest &r) {
    const cucore_tensor_map_data_type_t type = r.layout.data_type;
    const cucore_tensor_map_swizzle_t swizzle = r.options.swizzle;
    const cucore_tensor_map_interleave_t interleave = r.options.interleave;
    if (interleave == CUCORE_TENSOR_MAP_INTERLEAVE_32B && swizzle != CUCORE_TENSOR_MAP_SWIZZLE_32B)
        throw_invalid_argument(std::string("options.swizzle is ") + swizzle_name(swizzle) +
                               "; interleave 32B requires swizzle 32B");
    if (type == CUCORE_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B && interleave != CUCORE_TENSOR_MAP_INTERLEAVE_NONE)
        throw_invalid_argument("options.interleave is not NONE; " + type_name(type) + " requires interleave NONE");
    if (r.kind == CUCORE_TENSOR_MAP_KIND_IM2COL_WIDE && swizzle != CUCORE_TENSOR_MAP_SWIZZLE_64B &&
        swizzle != CUCORE_TENSOR_MAP_SWIZZLE_128B && swizzle != CUCORE_TENSOR_MAP_SWIZZLE_128B_ATOM_32B)
        throw_invalid_argument(std::string("options.swizzle is ") + swizzle_name(swizzle) +
                               "; an im2col-wide descriptor's swizzle must be 64B, 128B or 128B_ATOM_32B");
    const bool u6 = type == CUCORE_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B;
    if (align16b_packed(type) && swizzle != CUCORE_TENSOR_MAP_SWIZZLE_NONE &&
        swizzle != CUCORE_TENSOR_MAP_SWIZZLE_128B && swizzle != CUCORE_TENSOR_MAP_SWIZZLE_128B_ATOM_32B &&
        !(u6 && swizzle == CUCORE_TENSOR_MAP_SWIZZLE_128B_ATOM_64B))
        throw_invalid_argument(std::string("options.swizzle is ") + swizzle_name(swizzle) + "; " + type_name(type) +
                               " takes swizzle NONE, 128B, 128B_ATOM_32B" + (u6 ? " or 128B_ATOM_64B" : ""));
    const uint32_t span = swizzle_span(swizzle);
    if (interleave == CUCORE_TENSOR_MAP_INTERLEAVE_NONE && span != 0 && inner_box_bytes(r) > span)
        throw_invalid_argument("the inner box dimension is " + to_string(inner_box_bytes(r)) + " bytes (" +
                               (r.kind == CUCORE_TENSOR_MAP_KIND_TILED ? "box_dim[0]" : "channels_per_pixel") +
                               " x element size); the inner box dimension must be <= the swizzle span (" +
                               to_string(span) + " bytes for swizzle " + swizzle_name(swizzle) + ")");
    if (r.options.oob_fill == CUCORE_TENSOR_MAP_OOB_FILL_NAN_REQUEST_ZERO_FMA && !traits(type).floating)
        throw_invalid_argument("options.oob_fill is NAN_REQUEST_ZERO_FMA over " + type_name(type) +
                               "; OOB NaN fill only for float types (FLOAT16, FLOAT32, FLOAT64, BFLOAT16, "
                               "FLOAT32_FTZ, TFLOAT32, TFLOAT32_FTZ)");
    if (r.kind != CUCORE_TENSOR_MAP_KIND_IM2COL_WIDE &&
        r.options.im2col_wide_mode != CUCORE_TENSOR_MAP_IM2COL_WIDE_MODE_W)
        throw_invalid_argument("options.im2col_wide_mode is set; it is for im2col-wide descriptors only");
}

void check_pixel_box(const TensorMapRequest &r) {
    const uint32_t rank = r.layout.rank;
    const bool wide = r.kind == CUCORE_TENSOR_MAP_KIND_IM2COL_WIDE;
    const uint32_t corners = wide ? 1 : rank - 2;
    const int32_t limit = (wide || rank == 3) ? 32768 : rank == 4 ? 128 : 16;
    for (uint32_t j = 0; j < corners; ++j) {
        for (const auto &[field, value] : {std::pair<const char *, int32_t>{"pixel_box_lower_corner", r.lower_corner[j]},
                                           {"pixel_box_upper_corner", r.upper_corner[j]}}) {
            if (value < -limit || value > limit - 1)
                throw_invalid_argument((wide ? std::string(field) + "_width" : at(field, j)) + " is " +
                                       to_string(value) + "; pixel box corner offsets must be in [" +
                                       to_string(-limit) + ", " + to_string(limit - 1) + "] for " +
                                       (wide ? std::string("im2col-wide") : "rank " + to_string(rank)));
        }
        // Corner j is spatial dimension rank - 2 - j ({D, H, W}: the outermost first; dimension 0 is C); the box
        // spans globalDim + upper - lower pixels along it (the upper corner is an offset from the last pixel).
        const uint32_t dim = wide ? 1 : rank - 2 - j;
        const int64_t extent =
            static_cast<int64_t>(r.layout.global_dim[dim]) + r.upper_corner[j] - r.lower_corner[j];
        if (extent < 1)
            throw_invalid_argument("the pixel box along layout.global_dim[" + to_string(dim) +
                                   "] is empty (global_dim + upper - lower = " + to_string(extent) +
                                   "); the pixel box must have non-zero area");
    }
    const uint32_t max_channels = align16b_packed(r.layout.data_type) ? 128 : 256;
    if (r.channels_per_pixel < 1 || r.channels_per_pixel > 256 ||
        (align16b_packed(r.layout.data_type) && r.channels_per_pixel != 128))
        throw_invalid_argument("channels_per_pixel is " + to_string(r.channels_per_pixel) +
                               "; channelsPerPixel must be in 1..256" +
                               (max_channels == 128 ? " (exactly 128 for " + type_name(r.layout.data_type) + ")"
                                                    : std::string()));
    const bool w128 = wide && r.options.im2col_wide_mode == CUCORE_TENSOR_MAP_IM2COL_WIDE_MODE_W128;
    if (!w128 && (r.pixels_per_column < 1 || r.pixels_per_column > 1024))
        throw_invalid_argument("pixels_per_column is " + to_string(r.pixels_per_column) +
                               "; pixelsPerColumn must be in 1..1024");
}

}  // namespace

void check_tensor_map_rules(const TensorMapRequest &request) {
    check_rank(request);
    check_global_dims(request);
    check_global_strides(request);
    if (request.kind == CUCORE_TENSOR_MAP_KIND_TILED) check_box(request);
    check_element_strides(request);
    check_layout_modes(request);
    if (request.kind != CUCORE_TENSOR_MAP_KIND_TILED) check_pixel_box(request);
}

uint64_t tensor_map_address_alignment(const TensorMapRequest &request) noexcept {
    return request.options.interleave == CUCORE_TENSOR_MAP_INTERLEAVE_32B || align16b_packed(request.layout.data_type)
               ? 32
               : 16;
}

uint64_t tensor_map_extent(const TensorMapRequest &request) {
    // Dimensions are at most 2^32 and strides below 2^40 (checked first), so 128 bits cannot overflow.
    unsigned __int128 end = (static_cast<unsigned __int128>(request.layout.global_dim[0]) *
                                 traits(request.layout.data_type).bits + 7) / 8;
    for (uint32_t i = 1; i < request.layout.rank; ++i)
        end += static_cast<unsigned __int128>(request.layout.global_dim[i] - 1) * request.layout.global_strides[i - 1];
    return end > UINT64_MAX ? UINT64_MAX : static_cast<uint64_t>(end);
}

}  // namespace cucore::core
