// Compile check of the C++ façade: built (never run) as C++17 and as C++20 with
// -Wall -Wextra -Werror -pedantic. It includes every header, twice, and
// instantiates every member and template so that a warning anywhere in
// cucore.hpp fails the build. (Each header alone is compiled by the
// facade_headers_alone_check target.)
#include <cucore/memory_resource.hpp>
#include <cucore/buffer.hpp>
#include <cucore/memory_pool.hpp>
#include <cucore/managed_memory.hpp>
#include <cucore/virtual_memory.hpp>
#include <cucore/dlpack.hpp>
#include <cucore/copy_3d.hpp>
#include <cucore/system.hpp>
#include <cucore/checkpoint.hpp>
#include <cucore/communicator.hpp>
#include <cucore/memory_operations.hpp>
#include <cucore/launch.hpp>
#include <cucore/graph.hpp>
#include <cucore/graph_builder.hpp>
#include <cucore/graph_memory.hpp>
#include <cucore/kernel.hpp>
#include <cucore/linker.hpp>
#include <cucore/program.hpp>
#include <cucore/object_code.hpp>
#include <cucore/program_cache.hpp>
#include <cucore/graphics.hpp>
#include <cucore/texture.hpp>
#include <cucore/tensor_map.hpp>
#include <cucore/opaque_array.hpp>
#include <cucore/user_memory.hpp>
#include <cucore/ipc.hpp>
#include <cucore/device_resources.hpp>
#include <cucore/stream.hpp>
#include <cucore/event.hpp>
#include <cucore/context.hpp>
#include <cucore/device.hpp>
#include <cucore/common.hpp>
#include <cucore.hpp>
#include <cucore.hpp> // include guards

#include <array>
#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

static_assert(sizeof(cucore::Device) == sizeof(void *));
static_assert(sizeof(cucore::Context) == sizeof(void *));
static_assert(sizeof(cucore::Stream) == sizeof(void *));
static_assert(sizeof(cucore::Event) == sizeof(void *));
static_assert(sizeof(cucore::MemoryResource) == sizeof(void *));
static_assert(sizeof(cucore::Buffer) == sizeof(void *));

// The span-like copy overloads take contiguous containers of trivially copyable
// elements, and copy_to_host only mutable ones.
static_assert(cucore::detail::is_readable_host_range_v<const std::vector<float>>);
static_assert(cucore::detail::is_readable_host_range_v<const int[4]>);
static_assert(cucore::detail::is_writable_host_range_v<std::array<std::uint16_t, 3>>);
static_assert(cucore::detail::is_writable_host_range_v<std::string>);
static_assert(!cucore::detail::is_writable_host_range_v<const std::vector<float>>);
static_assert(!cucore::detail::is_readable_host_range_v<const std::vector<std::string>>);
static_assert(!cucore::detail::is_readable_host_range_v<const std::vector<bool>>);
static_assert(!cucore::detail::is_readable_host_range_v<const cucore::Buffer>);
static_assert(!cucore::detail::is_readable_host_range_v<const int *>);
// A class without data() is no range (a false answer, not a hard error).
static_assert(!cucore::detail::is_writable_host_range_v<cucore::OpaqueArray>);
static_assert(!cucore::detail::is_readable_host_range_v<const cucore::OpaqueArray>);

namespace {

struct BigCallable { // heap-boxed by launch_host_func
    std::vector<int> data;
    void operator()() const noexcept {}
};

void host_fn(void *) {}

void release_cb(void *) {}

struct Arena final : cucore::UserMemoryResource { // a user resource
    std::uint64_t allocate(std::uint64_t size, const cucore::Stream &stream) override {
        return size + static_cast<std::uint64_t>(static_cast<bool>(stream));
    }
    // noexcept overrides still compile (deallocate may throw to report a failure).
    void deallocate(std::uint64_t, std::uint64_t, const cucore::Stream &) noexcept override {}
};

cucore_status_t c_allocate(void *, std::uint64_t, cucore_stream_t *, std::uint64_t *address) {
    *address = 0;
    return CUCORE_ERROR_OUT_OF_MEMORY;
}
cucore_status_t c_deallocate(void *, std::uint64_t, std::uint64_t, cucore_stream_t *) { return CUCORE_SUCCESS; }

// The options structs default to the C *_INIT macros, which are all zeros ("zero means default").
static_assert(cucore::detail::kPinnedMemoryResourceDefaults.use_numa_id == 0 && cucore::detail::kPinnedMemoryResourceDefaults.numa_id == 0);
static_assert(!cucore::PinnedMemoryResourceOptions{}.numa_id.has_value(), "no NUMA node: any host memory");
static_assert(cucore::detail::kVirtualMemoryResourceDefaults.location_type == CUCORE_LOCATION_NONE &&
              cucore::detail::kVirtualMemoryResourceDefaults.minimum_granularity == 0 &&
              cucore::detail::kVirtualMemoryResourceDefaults.self_access == CUCORE_ACCESS_NONE);
static_assert(cucore::Location::device(3).to_c().id == 3);
static_assert(cucore::Location::from_c(cucore::Location::host_numa(2).to_c()) == cucore::Location::host_numa(2));
static_assert(cucore::Location{} == cucore::Location::none() && cucore::Location::none().is_none());
static_assert(cucore::Location::host_numa_current().is_host() && !cucore::Location::device(0).is_host());
static_assert(!std::is_constructible_v<cucore::MemoryRegion, cucore::Buffer &&, std::uint64_t>,
              "a region of a temporary buffer would dangle");
static_assert(!std::is_constructible_v<cucore::ArrayRegion, cucore::OpaqueArray &&>,
              "a region of a temporary array would dangle");
static_assert(sizeof(cucore::OpaqueArray) == sizeof(void *) && sizeof(cucore::MipmappedArray) == sizeof(void *) &&
              sizeof(cucore::TextureObject) == sizeof(void *) && sizeof(cucore::SurfaceObject) == sizeof(void *));
// The options default to the C *_INIT macros (zero means default).
static_assert(cucore::detail::kOpaqueArrayDefaults.format == CUCORE_ARRAY_FORMAT_UNSET &&
              cucore::detail::kOpaqueArrayDefaults.kind == CUCORE_ARRAY_KIND_PLAIN &&
              cucore::detail::kOpaqueArrayDefaults.width == 0);
static_assert(cucore::detail::kTextureObjectDefaults.address_mode[2] == CUCORE_ADDRESS_MODE_CLAMP &&
              cucore::detail::kTextureObjectDefaults.read_mode == CUCORE_READ_MODE_ELEMENT_TYPE &&
              cucore::detail::kTextureObjectDefaults.max_mipmap_level_clamp == 0.0f);
static_assert(cucore::detail::kResourceDescriptorDefaults.kind == CUCORE_RESOURCE_KIND_UNSET);
// Texture and surface objects travel to kernels as their 64-bit handles.
static_assert(cucore::detail::KernelArg<cucore::TextureObject>::size == 8 &&
              cucore::detail::KernelArg<cucore::SurfaceObject>::size == 8);

} // namespace

// Kernels and launches: every member, and launch() with each kind of argument.
struct Plain64 { // a 64-byte trivially copyable struct, passed by value
    double values[8];
};
enum class Mode : int { a, b };

int cucore_facade_kernel_compile_check(const cucore::Device &dev, const cucore::Stream &s, const cucore::Buffer &b);

int cucore_facade_kernel_compile_check(const cucore::Device &dev, const cucore::Stream &s, const cucore::Buffer &b) {
    static_assert(sizeof(cucore::Kernel) == sizeof(void *));
    cucore::Kernel k = cucore::Kernel::from_handle(reinterpret_cast<void *>(1));
    cucore::Kernel kf = cucore::Kernel::from_function(reinterpret_cast<void *>(1), release_cb, nullptr);
    const cucore::KernelAttributes a = k.attributes(dev);
    int sum = a.max_threads_per_block() + a.shared_size_bytes() + a.const_size_bytes() + a.local_size_bytes() +
              a.num_regs() + a.ptx_version() + a.binary_version() + static_cast<int>(a.cache_mode_ca()) +
              a.max_dynamic_shared_size_bytes() + a.preferred_shared_memory_carveout() +
              static_cast<int>(a.cluster_size_must_be_set()) + a.required_cluster_width() +
              a.required_cluster_height() + a.required_cluster_depth() +
              static_cast<int>(a.non_portable_cluster_size_allowed()) + a.cluster_scheduling_policy_preference() +
              a.get(CUCORE_KERNEL_ATTRIBUTE_NUM_REGS);
    k.set_attribute(dev, CUCORE_KERNEL_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 1 << 16);
    sum += static_cast<int>(k.param_count()) + static_cast<int>(k.param_info(0).size) +
           static_cast<int>(k.param_info().size()) + static_cast<int>(std::string(k.name()).size());
    sum += k.max_active_blocks_per_multiprocessor(dev, 128) + k.max_potential_block_size(dev).block_size +
           static_cast<int>(k.available_dynamic_shared_memory(dev, 2, 128)) +
           static_cast<int>(k.handle() != nullptr) + static_cast<int>(kf.function(dev) != nullptr);
    cucore::LaunchConfig config;
    config.grid = 4;
    config.block = {16, 16};
    config.cluster = {2, 1, 1};
    config.shared_memory_bytes = 1024;
    config.cooperative = true;
    config.programmatic_stream_serialization = true;
    config.priority = -1;
    config.validate(k, dev);
    sum += k.max_potential_cluster_size(config, dev) + k.max_active_clusters(config, dev);
    const cucore::LaunchConfig simple(cucore::Dim3(8, 2), 128, 64);
    const Plain64 plain{};
    const float *device_pointer = nullptr;
    const std::uint8_t byte = 1;
    cucore::launch(s, simple, k);
    cucore::launch(s, simple, k, 1, 2.0f, 3.0, byte, true, 'c', std::int64_t{4}, device_pointer, b, nullptr, plain,
                   Mode::b, std::complex<float>(1.0f, 2.0f));
    const cucore_launch_config_t c = simple.to_c();
    return sum + static_cast<int>(c.grid[1]);
}

// Programs, object code, the linker and caches: every member.
int cucore_facade_compile_side_check(const cucore::Device &dev);

int cucore_facade_compile_side_check(const cucore::Device &dev) {
    cucore::ProgramOptions po;
    po.name = "p";
    po.arch = "sm_90";
    po.std = "c++17";
    po.defines = {"N=4"};
    po.headers = {{"h.cuh", "#define H 1"}};
    po.ftz = CUCORE_TOGGLE_ON;
    po.diag_suppress = {177};
    po.ptxas_options = {"-v"};
    const cucore::ProgramCache memory = cucore::ProgramCache::in_memory(1 << 20);
    const cucore::ProgramCache disk = cucore::ProgramCache::on_disk("/tmp/cucore-check", 0);
    const cucore::Program p = cucore::Program::create("__global__ void k() {}", CUCORE_CODE_CXX, po);
    const cucore::ObjectCode o = p.compile(CUCORE_CODE_CUBIN, {"k"}, memory);
    const cucore::ObjectCode o2 = p.compile(CUCORE_CODE_PTX);
    const std::array<std::uint8_t, 32> cache_key = cucore::ProgramCache::key(p, CUCORE_CODE_PTX);
    memory.store(cache_key, o2);
    const cucore::ObjectCode cached = memory.find(cache_key);
    const bool removed = memory.remove(cache_key) && static_cast<bool>(cached);
    int sum = static_cast<int>(removed) + static_cast<int>(p.pch_status()) + static_cast<int>(o2.module() != nullptr) + static_cast<int>(p.log().size() + p.flags().size() + p.arch().size()) + static_cast<int>(p.code_type()) +
              static_cast<int>(p.backend()) + cucore::ProgramCache::key(p, CUCORE_CODE_CUBIN, {"k"})[0] +
              cucore::compiler_version(CUCORE_BACKEND_NVRTC);
    o.load();
    sum += static_cast<int>(o.code_type()) + static_cast<int>(o.size()) + static_cast<int>(o.data() != nullptr) +
           static_cast<int>(o.code().size() + o.name().size() + o.name_expressions().size() + o.kernel_count());
    const cucore::Kernel k = o.get_kernel("k");
    const cucore::Kernel k2 = o.get_kernel(std::string("k"));
    const cucore::GlobalInfo g = o.get_global(dev, "g");
    float value = o.read_global<float>(dev, "g");
    o.write_global(dev, "g", value);
    o.read_global(dev, "g", &value, sizeof value);
    o.write_global(dev, "g", &value, sizeof value);
    sum += static_cast<int>(g.size + g.address) + static_cast<int>(o.handle() != nullptr) + static_cast<int>(k == k2);
    const cucore::ObjectCode f = cucore::ObjectCode::from_file("/tmp/x.cubin", CUCORE_CODE_CUBIN);
    const cucore::ObjectCode b = cucore::ObjectCode::create(std::string("x"), CUCORE_CODE_LTOIR, "b");
    const cucore::ObjectCode b2 = cucore::ObjectCode::create("x", 1, CUCORE_CODE_LTOIR);
    cucore::LinkerOptions lo;
    lo.optimization_level = 2;
    lo.link_time_optimization = true;
    lo.extra_options = {"-split-compile=0"};
    const cucore::Linker l = cucore::Linker::create({f, b, b2, o2}, lo);
    const cucore::ObjectCode linked = l.link();
    sum += static_cast<int>(l.error_log().size() + l.info_log().size()) + static_cast<int>(l.backend()) +
           static_cast<int>(cucore::Linker::default_backend()) + static_cast<int>(linked.size());
    const cucore::ProgramCacheStats st = disk.stats();
    disk.clear();
    return sum + static_cast<int>(st.hits + memory.stats().entries);
}

// TensorMap descriptors: every member, and launch() taking one.
int cucore_facade_tensor_map_compile_check(const cucore::Stream &s, const cucore::Buffer &b, const cucore::Kernel &k);

int cucore_facade_tensor_map_compile_check(const cucore::Stream &s, const cucore::Buffer &b, const cucore::Kernel &k) {
    const cucore::TensorMapLayout layout(CUCORE_TENSOR_MAP_DATA_TYPE_FLOAT32, {64, 64}, {256});
    cucore::TensorMapDescriptorOptions o;
    o.swizzle = CUCORE_TENSOR_MAP_SWIZZLE_128B;
    const cucore_tensor_map_descriptor_options_t oc = o.to_c();
    const cucore::TensorMapDescriptor t = cucore::TensorMapDescriptor::tiled(b, layout, {32, 8}, o);
    const cucore::TensorMapDescriptor r = cucore::TensorMapDescriptor::tiled(b.address(), layout, {32, 8});
    const cucore::TensorMapDescriptor i = cucore::TensorMapDescriptor::im2col(b, layout, {0}, {0}, 8, 8);
    const cucore::TensorMapDescriptor w = cucore::TensorMapDescriptor::im2col_wide(b, layout, 0, 0, 8, 8, o);
    t.replace_address(b);
    r.replace_address(b.address());
    cucore::launch(s, cucore::LaunchConfig(1, 1), k, t, b, 1);
    return static_cast<int>(t.kind()) + static_cast<int>(t.address() != 0) + static_cast<int>(t.data() != nullptr) +
           static_cast<int>(t.bytes()[0]) + static_cast<int>(oc.swizzle) + static_cast<int>(i.kind()) +
           static_cast<int>(w.kind());
}

// Arrays, mipmapped arrays, texture and surface objects: every member.
// Device resources and green contexts (device_resources.hpp).
int cucore_facade_green_compile_check(const cucore::Device &dev);
int cucore_facade_green_compile_check(const cucore::Device &dev) {
    static_assert(sizeof(cucore::SMResource) == sizeof(void *) && sizeof(cucore::WorkqueueResource) == sizeof(void *));
    const cucore::DeviceResources resources = dev.resources();
    const cucore::SMResource all = resources.sm();
    const cucore::SMResourceOptions options{8, 2, CUCORE_SM_SPLIT_IGNORE_SM_COSCHEDULING};
    const cucore_sm_resource_split_info_t planned = all.dry_run(options);
    cucore::SMResourceSplit split = all.split(options);
    const cucore::WorkqueueResource wq = resources.workqueue();
    wq.configure({CUCORE_WORKQUEUE_SHARING_SCOPE_GREEN_CTX_BALANCED, 4});
    const cucore::Context green = dev.create_context({{split.groups[0], split.remainder}, {wq}});
    const cucore::Context green2 = cucore::Context::create(dev, {{all}, {}});
    const cucore::Stream s = green.create_stream();
    const cucore::SMResource mine = s.resources().sm();
    const cucore::SMResource theirs = cucore::SMResource::of(green2);
    return static_cast<int>(planned.group_count + all.sm_count() + all.min_partition_size() +
                            all.coscheduled_alignment() + all.flags() + mine.info().sm_count + theirs.sm_count() +
                            wq.concurrency_limit() + static_cast<std::uint32_t>(wq.sharing_scope())) +
           static_cast<int>(green.is_green()) + static_cast<int>(green.green_handle() != nullptr) +
           static_cast<int>(green.resources().sm().sm_count()) + wq.device().ordinal() +
           static_cast<int>(cucore::WorkqueueResource::of(s).info().concurrency_limit);
}

int cucore_facade_texture_compile_check(const cucore::Device &dev, const cucore::Stream &s, const cucore::Buffer &b);

int cucore_facade_texture_compile_check(const cucore::Device &dev, const cucore::Stream &s, const cucore::Buffer &b) {
    cucore::OpaqueArrayOptions ao;
    ao.format = CUCORE_ARRAY_FORMAT_UINT8;
    ao.num_channels = 4;
    ao.kind = CUCORE_ARRAY_KIND_LAYERED;
    ao.flags = CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE | CUCORE_ARRAY_FLAG_TEXTURE_GATHER;
    ao.width = 64;
    ao.height = 32;
    ao.depth = 0;
    ao.layers = 2;
    const cucore_opaque_array_options_t aoc = ao.to_c();
    const cucore::OpaqueArrayOptions cube{CUCORE_ARRAY_FORMAT_FLOAT32, 1, CUCORE_ARRAY_KIND_CUBEMAP, 0, 16, 16};
    cucore::OpaqueArray a1 = cucore::OpaqueArray::create(dev, ao);
    cucore::OpaqueArray a2 = dev.create_opaque_array(cube);
    cucore::OpaqueArray a3 = cucore::OpaqueArray::from_handle(dev, a1.handle());
    cucore::OpaqueArray a4 = cucore::OpaqueArray::from_handle(dev, a1.handle(), release_cb, nullptr);
    const cucore::OpaqueArrayInfo ai = a1.info();
    int sum = static_cast<int>(aoc.struct_size + ai.size_bytes + a1.size_bytes()) + static_cast<int>(a1.format()) +
              static_cast<int>(a1.num_channels() + a1.element_size()) + static_cast<int>(a1.is_surface_load_store()) +
              static_cast<int>(a3 == a4);
    std::vector<std::uint8_t> host(64 * 32 * 4 * 2);
    const std::vector<std::uint32_t> chost(64 * 32 * 2);
    std::array<float, 96> fa{};
    std::uint16_t carr[8] = {};
    a1.copy_from(host.data(), host.size(), s);
    a1.copy_to(host.data(), host.size(), s);
    a1.copy_from(host, s);
    a1.copy_from(chost, s);
    a1.copy_to(host, s);
    a2.copy_from(fa, s);
    a2.copy_to(fa, s);
    a2.copy_to(carr, s);
    a1.copy_from(b, s);
    a1.copy_to(b, s);
    a1.copy_from(a3, s);
    a1.copy_to(a4, s);
    cucore::OpaqueArray::copy(cucore::ArrayRegion(a1).at(1, 2, 1), cucore::ArrayRegion(a3), {8, 4, 1}, s);
    cucore::OpaqueArray::copy(cucore::ArrayRegion(a2).at(0, 0, 5), cucore::MemoryRegion::host(fa.data(), 16 * 4),
                              cucore::Extent3D{16, 16, 1}, s);
    cucore::OpaqueArray::copy(cucore::MemoryRegion(b, 256).at(4, 1), cucore::ArrayRegion(a1).at(0, 0, 1), {16, 2, 1},
                              s);
    const cucore_opaque_array_copy_t cc = cucore::to_c(cucore::ArrayRegion(a1), cucore::ArrayRegion(a2), {1, 1, 1});
    sum += static_cast<int>(cc.width);
    cucore::MipmappedArray m1 = cucore::MipmappedArray::create(dev, ao, 3);
    cucore::MipmappedArray m2 = dev.create_mipmapped_array(cube, 2);
    cucore::MipmappedArray m3 = cucore::MipmappedArray::from_handle(dev, m1.handle());
    cucore::MipmappedArray m4 = cucore::MipmappedArray::from_handle(dev, m1.handle(), release_cb, &sum);
    const cucore::OpaqueArray l1 = m1.level(1);
    sum += static_cast<int>(m1.num_levels() + m2.info().num_levels) + static_cast<int>(l1.info().width) +
           static_cast<int>(m3 == m4);

    const cucore::ResourceDescriptor r1 = cucore::ResourceDescriptor::from_opaque_array(a1);
    const cucore::ResourceDescriptor r2 = cucore::ResourceDescriptor::from_mipmapped_array(m1);
    const cucore::ResourceDescriptor r3 = cucore::ResourceDescriptor::from_linear(b, CUCORE_ARRAY_FORMAT_FLOAT32);
    const cucore::ResourceDescriptor r4 =
        cucore::ResourceDescriptor::from_linear(b, CUCORE_ARRAY_FORMAT_UINT8, 4, 1024);
    const cucore::ResourceDescriptor r5 =
        cucore::ResourceDescriptor::from_pitch2d(b, CUCORE_ARRAY_FORMAT_FLOAT16, 2, 32, 8, 512);
    cucore::ResourceDescriptor r6;
    r6 = r5;
    cucore::ResourceDescriptor r7(std::move(r6));
    r6 = std::move(r7);
    sum += static_cast<int>(r1.kind()) + static_cast<int>(r2.to_c().kind) + static_cast<int>(r3.buffer() == b) +
           static_cast<int>(r4.opaque_array() == a1) + static_cast<int>(static_cast<bool>(r5.mipmapped_array()));
    cucore::TextureObjectOptions to;
    to.address_mode = {CUCORE_ADDRESS_MODE_WRAP, CUCORE_ADDRESS_MODE_MIRROR, CUCORE_ADDRESS_MODE_BORDER};
    to.filter_mode = CUCORE_FILTER_MODE_LINEAR;
    to.read_mode = CUCORE_READ_MODE_NORMALIZED_FLOAT;
    to.normalized_coords = true;
    to.srgb = false;
    to.disable_trilinear_optimization = true;
    to.seamless_cubemap = false;
    to.max_anisotropy = 4;
    to.mipmap_filter_mode = CUCORE_FILTER_MODE_LINEAR;
    to.mipmap_level_bias = 0.5f;
    to.min_mipmap_level_clamp = 0.0f;
    to.max_mipmap_level_clamp = 2.0f;
    to.border_color = {1.0f, 0.0f, 0.0f, 1.0f};
    const cucore_texture_object_options_t toc = to.to_c();
    const cucore::TextureObject t1 = cucore::TextureObject::create(r1);
    const cucore::TextureObject t2 = cucore::TextureObject::create(r2, to);
    const cucore::TextureObject t3 = cucore::TextureObject::create(dev, r3);
    const cucore::TextureObject t4 = cucore::TextureObject::create(dev, r4, to);
    const cucore::TextureObject t5 = dev.create_texture_object(r5);
    const cucore::TextureObject t6 = dev.create_texture_object(r5, to);
    const cucore::SurfaceObject s1 = cucore::SurfaceObject::create(r1);
    const cucore::SurfaceObject s2 = cucore::SurfaceObject::create(dev, r1);
    const cucore::SurfaceObject s3 = dev.create_surface_object(r1);
    sum += static_cast<int>(t1.handle() + t2.handle() + s1.handle()) + static_cast<int>(toc.border_color[0]) +
           static_cast<int>(t3 == t4) + static_cast<int>(t5 != t6) + static_cast<int>(s2 == s3);
    // Texture and surface objects are kernel arguments.
    const cucore::Kernel k = cucore::Kernel::from_handle(reinterpret_cast<void *>(1));
    cucore::launch(s, cucore::LaunchConfig(1, 1), k, t1, s1, b, 4u);
    t1.close();
    s1.close();
    l1.close();
    m1.close();
    a1.close();
    cucore_texture_object_t *raw_t = cucore::TextureObject(t2).release();
    cucore::TextureObject t7 = cucore::TextureObject::adopt(raw_t);
    cucore::SurfaceObject s4 = cucore::SurfaceObject::borrow(s2.get());
    return sum + static_cast<int>(static_cast<bool>(t7)) + static_cast<int>(static_cast<bool>(s4));
}

// Graphs: definitions and every node adder, nodes, executable graphs and their
// per-node updates, builders (capture, forks, conditionals, callbacks), graph memory.
int cucore_facade_graph_compile_check(const cucore::Device &dev, const cucore::Stream &s, const cucore::Buffer &b);

int cucore_facade_graph_compile_check(const cucore::Device &dev, const cucore::Stream &s, const cucore::Buffer &b) {
    static_assert(sizeof(cucore::GraphDefinition) == sizeof(void *) && sizeof(cucore::GraphNode) == sizeof(void *) &&
                  sizeof(cucore::Graph) == sizeof(void *) && sizeof(cucore::GraphBuilder) == sizeof(void *) &&
                  sizeof(cucore::GraphMemoryResource) == sizeof(void *));
    const cucore::Kernel k = cucore::Kernel::from_handle(reinterpret_cast<void *>(1));
    const cucore::LaunchConfig config(4, 128);
    const Plain64 plain{};
    const cucore::Event e = dev.create_event();
    int calls = 0;
    const cucore::GraphDefinition def = cucore::GraphDefinition::create(dev);
    const cucore::GraphCondition cond = def.create_condition();
    const cucore::GraphCondition cond1 = def.create_condition(1u);
    const cucore::GraphNode n0 = def.add_empty({});
    const cucore::GraphNode n1 = def.add_kernel(n0, config, k, b, 2.0f, plain, cond, nullptr);
    const cucore::GraphNode n2 = def.add_kernel({n0, n1}, config, k);
    const std::vector<cucore::GraphNode> both{n1, n2};
    const cucore::GraphNode n3 = def.add_memcpy(both, b, 16, b, 0, 16);
    const cucore::GraphNode n4 = def.add_memcpy(n3, b, b, 64);
    std::vector<std::uint8_t> tile(16 * 8);
    const cucore::GraphNode n5 = def.add_memcpy_3d(n4, cucore::MemoryRegion::host(tile.data(), 16),
                                                   cucore::MemoryRegion(b, 64).at(4, 2), {16, 8, 1});
    const cucore::GraphNode n6 = def.add_memset(n5, b, std::uint8_t{1}, 64);
    const cucore::GraphNode n7 = def.add_memset(n6, b, std::uint16_t{2}, 8, 4, 64, 16);
    const cucore::GraphNode n8 = def.add_memset(n7, b, std::uint32_t{3}, 16);
    const cucore::GraphNode n9 = def.add_host_callback(n8, [&calls] { ++calls; });          // in the pointer
    const cucore::GraphNode n10 = def.add_host_callback(n9, BigCallable{{1, 2}});            // boxed
    const cucore::GraphNode n11 = def.add_host_callback(n10, &host_fn, nullptr, &release_cb); // raw
    const cucore::GraphNode n12 = def.add_event_record(n11, e);
    const cucore::GraphNode n13 = def.add_event_wait(n12, e);
    const cucore::GraphDefinition child = cucore::GraphDefinition::create(dev);
    const cucore::GraphNode n14 = def.add_child_graph(n13, child);
    cucore::GraphAllocOptions ao;
    ao.memory_type = CUCORE_GRAPH_MEMORY_DEVICE;
    ao.peer_access = {1};
    const cucore::GraphAllocation alloc = def.add_alloc(n14, 4096, ao);
    const cucore::GraphAllocation alloc2 = def.add_alloc(alloc.node, 64);
    const cucore::GraphNode n15 = def.add_free(alloc2.node, alloc2.address);
    const cucore::GraphDefinition::Conditional c1 = def.add_conditional(n15, cond, CUCORE_GRAPH_CONDITIONAL_WHILE, 1);
    const cucore::GraphDefinition::Conditional c2 = def.add_if(c1.node, cond1);
    const cucore::GraphDefinition::Conditional c3 = def.add_if_else(c2.node, cond1);
    const cucore::GraphDefinition::Conditional c4 = def.add_while({c2.node, c3.node}, cond);
    const cucore::GraphDefinition::Conditional c5 = def.add_switch(c4.node, cond, 3);
    (void)c5.bodies[2].add_kernel({}, config, k, 1);
    int sum = static_cast<int>(alloc.data() != nullptr) + static_cast<int>(c3.bodies.size()) +
              static_cast<int>(static_cast<bool>(cond)) + static_cast<int>(cond != cond1) +
              static_cast<int>(cond.handle() == cucore::GraphCondition(cond.handle()).handle());

    // Nodes: queries, edges, per-node parameters.
    sum += static_cast<int>(n1.type()) + static_cast<int>(n1.handle() != nullptr) +
           static_cast<int>(n1.definition() == def) + static_cast<int>(n1.dependencies().size()) +
           static_cast<int>(n1.dependents().size()) + static_cast<int>(n1 == n2) + static_cast<int>(n1 != n2);
    n0.add_dependent(n4);
    n0.remove_dependent(n4);
    const cucore::GraphKernelNodeConfig kc = n1.kernel_config();
    sum += static_cast<int>(kc.config.grid.x) + static_cast<int>(static_cast<bool>(kc.kernel));
    n1.set_kernel(config, k, b, 3.0f, plain, cond, nullptr);
    n2.set_kernel(cucore::LaunchConfig(1, 1), cucore::Kernel());
    n3.set_memcpy(b, 0, b, 16, 16);
    n6.set_memset(b, std::uint8_t{5}, 64);
    n7.set_memset(b, std::uint16_t{6}, 8, 4, 64, 16);
    n8.set_memset(b, std::uint32_t{7}, 16);
    n9.set_host_callback([&sum] { ++sum; });
    n10.set_host_callback(BigCallable{{3}});
    n11.set_host_callback(&host_fn, nullptr);
    const cucore::GraphAllocInfo ai = alloc.node.alloc_info();
    sum += static_cast<int>(ai.address + ai.size) + static_cast<int>(c1.node.bodies().size()) +
           static_cast<int>(n14.bodies().size());
    for (const cucore::GraphNode &n : def.nodes()) sum += static_cast<int>(n.type());
    for (const cucore::GraphEdge &edge : def.edges()) sum += static_cast<int>(edge.from == edge.to);
    const cucore::GraphDefinition copy = def.clone();
    const cucore::GraphNode in_copy = n1.find_in_clone(copy);
    sum += copy.device().ordinal() + static_cast<int>(copy.is_owned()) + static_cast<int>(c1.bodies[0].is_owned()) +
           static_cast<int>(copy.handle() != nullptr) + static_cast<int>(in_copy == n1);
    cucore::GraphDebugPrintOptions dot;
    dot.verbose = true;
    dot.runtime_types = true;
    dot.kernel_node_params = true;
    dot.conditional_node_params = true;
    def.debug_dot_print("/tmp/graph.dot");
    def.debug_dot_print(std::string("/tmp/graph.dot"), dot);
    n13.destroy();

    // Executable graphs.
    cucore::GraphCompleteOptions co;
    co.auto_free_on_launch = true;
    co.device_launch = false;
    co.use_node_priority = true;
    co.upload_stream = s;
    const cucore_graph_complete_options_t coc = co.to_c();
    const cucore::Graph g1 = def.instantiate();
    const cucore::Graph g2 = def.instantiate(co);
    g1.upload(s);
    g1.launch(s);
    g1.update(copy);
    const cucore_graph_update_result_t verdict = g1.try_update(copy);
    g1.set_kernel_node(n1, config, k, b, 4.0f, plain, cond, nullptr);
    g1.set_kernel_node(n2, config, cucore::Kernel());
    g1.set_memcpy_node(n3, b, 0, b, 32, 16);
    g1.set_memset_node(n6, b, std::uint8_t{8}, 64);
    g1.set_memset_node(n7, b, std::uint16_t{9}, 8, 4, 64, 16);
    g1.set_memset_node(n8, b, std::uint32_t{10}, 16);
    g1.set_host_callback_node(n9, [&calls] { calls += 2; });
    g1.set_host_callback_node(n10, BigCallable{{4}});
    g1.set_host_callback_node(n11, &host_fn, nullptr, &release_cb);
    g1.set_node_enabled(n1, false);
    sum += static_cast<int>(g1.node_enabled(n1)) + static_cast<int>(verdict) + static_cast<int>(coc.flags) +
           static_cast<int>(g1.handle() != nullptr) + static_cast<int>(g1 == g2);

    // Builders: capture, forks, conditionals, embedding, callbacks, graph memory.
    const cucore::GraphBuilder builder = s.create_graph_builder();
    const cucore::GraphBuilder on_device = dev.create_graph_builder();
    const cucore::GraphBuilder made = cucore::GraphBuilder::create(s);
    builder.begin_building().is_building();
    on_device.begin_building(CUCORE_CAPTURE_MODE_THREAD_LOCAL);
    cucore::launch(builder, config, k, b, 1.0f, plain, builder.create_condition(0u));
    b.fill(std::uint32_t{0}, builder.stream());
    std::vector<cucore::GraphBuilder> forks = builder.split(3);
    cucore::launch(forks[1], config, k);
    builder.join({forks[1], forks[2]});
    builder.join(std::vector<cucore::GraphBuilder>{});
    const cucore::GraphCondition bc = builder.create_condition();
    const cucore::GraphBuilder then = builder.add_if(bc);
    const std::pair<cucore::GraphBuilder, cucore::GraphBuilder> then_else = builder.add_if_else(bc);
    const cucore::GraphBuilder body = builder.add_while(bc);
    const std::vector<cucore::GraphBuilder> cases = builder.add_switch(bc, 2);
    const std::vector<cucore::GraphBuilder> any = builder.add_conditional(bc, CUCORE_GRAPH_CONDITIONAL_IF, 1);
    then.end_building();
    then_else.first.end_building();
    body.end_building();
    sum += static_cast<int>(cases.size() + any.size());
    on_device.end_building();
    builder.embed(on_device);
    builder.callback([&calls] { ++calls; });
    builder.callback(BigCallable{{5}});
    builder.callback(&host_fn, &sum, &release_cb);
    cucore::GraphMemoryResource gm = cucore::GraphMemoryResource::create(dev); // trim() is not const
    const cucore::GraphMemoryResource gm2 = cucore::GraphMemoryResource::borrow(gm.get());
    const cucore::MemoryResource as_resource = gm;
    {
        const cucore::Buffer scratch = gm.allocate(4096, builder.stream());
        scratch.close(builder.stream());
    }
    builder.end_building();
    const cucore::GraphDefinition captured = builder.definition();
    const cucore::Graph g3 = builder.complete();
    const cucore::Graph g4 = made.complete(co);
    builder.debug_dot_print("/tmp/builder.dot");
    builder.debug_dot_print("/tmp/builder.dot", dot);
    g3.update(builder);
    sum += static_cast<int>(gm.used_mem_current() + gm.used_mem_high() + gm.reserved_mem_current() +
                            gm.reserved_mem_high() + gm.attribute(CUCORE_GRAPH_MEMORY_USED_HIGH)) +
           static_cast<int>(as_resource.kind()) + static_cast<int>(gm2 == gm) + static_cast<int>(g3 != g4) +
           static_cast<int>(captured.nodes().size());
    gm.reset_used_mem_high();
    gm.reset_reserved_mem_high();
    gm.reset_attribute(CUCORE_GRAPH_MEMORY_RESERVED_HIGH);
    gm.trim();
    return sum + calls;
}

// Referenced from nowhere: the point is that it compiles cleanly.
// Communicators: ids, both creations, every operation in both overloads, groups, peer access.
int cucore_facade_communicator_compile_check(const cucore::Device &dev, const cucore::Stream &s, const cucore::Buffer &b);
int cucore_facade_communicator_compile_check(const cucore::Device &dev, const cucore::Stream &s, const cucore::Buffer &b) {
    static_assert(sizeof(cucore::Communicator) == sizeof(void *) && cucore::CommunicatorId::size == 128);
    static_assert(cucore::data_type_of<float> == cucore::DataType::float32 &&
                  cucore::data_type_of<cucore::bfloat16> == cucore::DataType::bfloat16);
    const cucore::CommunicatorId id = cucore::CommunicatorId::create();
    const cucore::CommunicatorId id2 = cucore::CommunicatorId::from_bytes(id.data(), cucore::CommunicatorId::size);
    const cucore::Communicator c = cucore::Communicator::create(dev, cucore::CommunicatorId::from_bytes(id.bytes()), 2, 0);
    const std::vector<cucore::Communicator> all = cucore::Communicator::create_all({dev, dev});
    cucore::Group g;
    c.all_reduce(b, b, cucore::DataType::float64, s, cucore::ReduceOp::max, 4);
    c.all_reduce<std::int32_t>(b, b, s);
    c.all_gather(b, b, cucore::DataType::uint8, s);
    c.all_gather<double>(b, b, s, 2);
    c.reduce_scatter(b, b, cucore::DataType::float16, s, cucore::ReduceOp::avg);
    c.reduce_scatter<cucore::float16>(b, b, s, cucore::ReduceOp::min, 1);
    c.broadcast(b, cucore::Buffer(), cucore::DataType::int64, 1, s);
    c.broadcast<std::uint64_t>(b, b, 0, s, 3);
    c.reduce(b, b, cucore::DataType::int8, 0, s, cucore::ReduceOp::prod);
    c.reduce<float>(b, b, 1, s);
    c.send(b, cucore::DataType::float8_e4m3, 1, s);
    c.send<std::uint32_t>(b, 1, s, 2);
    c.recv(b, cucore::DataType::float8_e5m2, 1, s, 2);
    c.recv<std::int8_t>(b, 1, s);
    cucore::Group g2(std::move(g));
    g2.end();
    dev.enable_peer_access(dev);
    dev.disable_peer_access(dev);
    c.check();
    return c.rank() + c.rank_count() + c.device().ordinal() + static_cast<int>(c.handle() != nullptr) +
           static_cast<int>(all.size() + cucore::data_type_size(cucore::DataType::bfloat16)) + cucore::Group::depth() +
           cucore::communicator_library_version() + static_cast<int>(id == id2) + static_cast<int>(g2.is_open());
}

int cucore_facade_compile_check();

int cucore_facade_compile_check() {
    int sum = cucore::Device::count() + cucore::driver_version();
    std::vector<cucore::Device> all = cucore::Device::all();
    cucore::Device dev(0);
    cucore::Device same = cucore::Device::get(0);
    cucore::Device cur = cucore::Device::current();
    sum += dev.ordinal() + dev.handle() + static_cast<int>(dev.name().size()) +
           static_cast<int>(dev.pci_bus_id().size()) + static_cast<int>(dev.uuid().str().size()) +
           dev.compute_capability().major + static_cast<int>(dev.total_memory() != 0) +
           dev.attribute(CUCORE_DEVICE_ATTRIBUTE_WARP_SIZE) + dev.properties().multiprocessor_count +
           dev.stream_priority_range().greatest + static_cast<int>(dev.can_access_peer(same)) +
           static_cast<int>(dev == cur);
    dev.set_current();
    dev.synchronize();

    cucore::Context ctx = dev.primary_context();
    cucore::Context prim = cucore::Context::primary(dev);
    cucore::Context foreign = cucore::Context::from_handle(ctx.handle(), &release_cb, nullptr);
    sum += static_cast<int>(ctx.is_primary()) + ctx.device().ordinal() + static_cast<int>(prim == foreign);
    ctx.set_current();
    ctx.synchronize();

    cucore::StreamOptions sopts;
    sopts.nonblocking = false;
    sopts.priority = -1;
    cucore::Stream s1 = dev.create_stream();
    cucore::Stream s2 = dev.create_stream(sopts);
    cucore::Stream s3 = ctx.create_stream({true, 0});
    cucore::Stream s4 = cucore::Stream::create(ctx, sopts);
    cucore::Stream legacy = cucore::Stream::legacy_default(dev);
    cucore::Stream ptds = cucore::Stream::per_thread_default(dev);
    cucore::Stream wrapped = cucore::Stream::from_handle(s1.handle());
    cucore::Stream wrapped2 = cucore::Stream::from_handle(s1.handle(), &release_cb, &sum);

    cucore::EventOptions eopts;
    eopts.timing_enabled = true;
    cucore::Event e1 = dev.create_event();
    cucore::Event e2 = dev.create_event(eopts);
    cucore::Event e3 = ctx.create_event({true, true});
    cucore::Event e4 = cucore::Event::create(ctx);
    cucore::Event e5 = s1.record();
    cucore::Event e6 = s1.record(eopts);
    cucore::Event e7 = cucore::Event::from_handle(e1.handle(), &release_cb, nullptr);
    s1.record(e2);
    e3.record(s2);
    s2.wait(e2);
    s2.wait(s1);
    int hits = 0;
    s1.launch_host_func([&hits] { ++hits; });                 // travels in the pointer
    s1.launch_host_func([&hits, &sum] { hits += sum; });      // boxed
    s1.launch_host_func(BigCallable{{1, 2, 3}});              // boxed, moved
    const BigCallable big{{4}};
    s1.launch_host_func(big);                                 // boxed, copied
    s1.launch_host_func(&host_fn, nullptr);                   // raw
    s1.synchronize();
    e6.synchronize();
    const float ms = e6 - e2;
    const float ms2 = cucore::Event::elapsed_time(e2, e6);
    sum += static_cast<int>(ms + ms2) + static_cast<int>(s1.is_done()) + s1.priority() +
           static_cast<int>(s1.is_nonblocking()) + static_cast<int>(s1.flags()) +
           static_cast<int>(s1.is_owned()) + s1.device().ordinal() +
           static_cast<int>(s1.context().is_primary()) + static_cast<int>(e1.is_done()) +
           static_cast<int>(e1.flags()) + static_cast<int>(e1.is_timing_enabled()) +
           static_cast<int>(e1.is_blocking_sync()) + e1.device().ordinal() +
           static_cast<int>(e1.context().is_primary()) + static_cast<int>(e1.handle() != nullptr);

    // Ownership to and from C.
    cucore_stream_t *raw = s4.release();
    cucore::Stream back = cucore::Stream::adopt(raw);
    cucore::Stream borrowed = cucore::Stream::borrow(back.get());
    swap(back, borrowed);
    back.reset();
    cucore::Stream moved = std::move(borrowed);
    cucore::Stream copied = moved;
    copied = moved;
    copied = std::move(moved);
    sum += static_cast<int>(static_cast<bool>(copied)) + static_cast<int>(copied != legacy) +
           static_cast<int>(all.size()) + static_cast<int>(ptds == wrapped) +
           static_cast<int>(wrapped2 == s3) + static_cast<int>(e4 == e5) + static_cast<int>(e7 == e1);

    // Memory resources and buffers.
    cucore::DeviceMemoryResourceOptions popts;
    popts.max_size = 1u << 30;
    popts.release_threshold = 1u << 20;
    cucore::MemoryResource mr_default = cucore::MemoryResource::device_default(dev);
    cucore::MemoryResource mr_pool = cucore::MemoryResource::device_pool(dev);
    cucore::MemoryResource mr_pool2 = cucore::MemoryResource::device_pool(dev, popts);
    cucore::MemoryResource mr_pool3 = cucore::MemoryResource::device_pool(dev, {0, 4096});
    cucore::MemoryResource mr_pinned = cucore::MemoryResource::legacy_pinned(dev);
    sum += static_cast<int>(mr_pool.pool_attribute(CUCORE_POOL_ATTRIBUTE_USED_MEM_CURRENT));
    mr_pool.set_pool_attribute(CUCORE_POOL_ATTRIBUTE_RELEASE_THRESHOLD, 0);
    mr_pool.trim();
    mr_pool.trim(4096);
    cucore::MemoryResource dflt = dev.memory_resource();
    dev.set_memory_resource(mr_pool);
    dev.reset_memory_resource();
    sum += static_cast<int>(dflt.kind());
    sum += static_cast<int>(mr_default.kind()) + mr_pool.device_id() +
           static_cast<int>(mr_pool2.is_device_accessible()) + static_cast<int>(mr_pinned.is_host_accessible()) +
           static_cast<int>(mr_pool3 == mr_pool);
    cucore::Buffer b1 = mr_pool.allocate(4096, s1);
    cucore::Buffer b2 = mr_pinned.allocate(4096);
    cucore::Buffer b3 = dev.allocate(4096, s1);
    cucore::Buffer b4 = b1.view(16, 32);
    cucore::Buffer b5 = cucore::Buffer::from_handle(b3.address(), b3.size(), dev);
    cucore::Buffer b6 = cucore::Buffer::from_handle(b3.address(), b3.size(), dev, &release_cb, &sum);
    cucore::Buffer b7 = cucore::Buffer::from_handle(b2.address(), b2.size());
    cucore::Buffer b8 = cucore::Buffer::from_handle(b2.address(), b2.size(), &release_cb, nullptr);
    sum += static_cast<int>(b1.size() + b1.address()) + b1.device_id() +
           static_cast<int>(b1.memory_resource() == mr_pool) + static_cast<int>(b2.data() != nullptr);
    b1.set_deallocation_stream(s2);
    b1.copy_from(b3, s1);
    b1.copy_to(b3, s1);
    const cucore::Buffer b9 = b1.copy_to(s1);
    b1.fill(std::uint8_t{1}, s1);
    b1.fill(std::uint16_t{2}, s1);
    b1.fill(std::uint32_t{3}, s1);
    std::vector<float> hv(64);
    const std::vector<float> chv(64);
    std::array<std::uint16_t, 8> ha{};
    int carr[4] = {1, 2, 3, 4};
    std::string hs(16, 'x');
    unsigned char raw_bytes[8] = {};
    b1.copy_from_host(0, raw_bytes, sizeof raw_bytes, s1);
    b1.copy_from_host(hv, s1);
    b1.copy_from_host(chv, s1);
    b1.copy_from_host(64, ha, s1);
    b1.copy_from_host(carr, s1);
    b1.copy_from_host(hs, s1);
    b1.copy_to_host(0, raw_bytes, sizeof raw_bytes, s1);
    b1.copy_to_host(hv, s1);
    b1.copy_to_host(8, ha, s1);
    b1.copy_to_host(carr, s1);
    b1.copy_to_host(hs, s1);
    b4.close();
    b5.close(s1);
    // Ownership to and from C.
    cucore_buffer_t *raw_buf = b6.release();
    cucore::Buffer b10 = cucore::Buffer::adopt(raw_buf);
    cucore::Buffer b11 = cucore::Buffer::borrow(b10.get());
    cucore_memory_resource_t *raw_mr = mr_pool3.release();
    cucore::MemoryResource mr_back = cucore::MemoryResource::adopt(raw_mr);
    cucore::MemoryResource mr_copy = mr_back;
    mr_copy = std::move(mr_back);
    cucore::Buffer b12 = std::move(b11);
    b12 = b10;
    swap(b12, b10);
    sum += static_cast<int>(b7 == b8) + static_cast<int>(b9 != b12) + static_cast<int>(static_cast<bool>(mr_copy));

    // The other resources, accessibility, growth, managed memory, 3D copies.
    cucore::PinnedMemoryResourceOptions pin_opts;
    pin_opts.numa_id = 0;
    pin_opts.ipc_enabled = true;
    cucore::ManagedMemoryResourceOptions man_opts;
    man_opts.use_pool = true;
    man_opts.preferred_location = cucore::Location::device(dev);
    cucore::VirtualMemoryResourceOptions vmm_opts;
    vmm_opts.reserve_size = 1u << 30;
    vmm_opts.location_type = CUCORE_LOCATION_HOST_NUMA;
    cucore::DeviceMemoryResourceOptions ipc_opts;
    ipc_opts.ipc_enabled = true;
    cucore::MemoryResource mr_pin = cucore::MemoryResource::pinned_pool(dev);
    cucore::MemoryResource mr_pin2 = cucore::MemoryResource::pinned_pool(dev, pin_opts);
    cucore::MemoryResource mr_man = cucore::MemoryResource::managed(dev);
    cucore::MemoryResource mr_man2 = cucore::MemoryResource::managed(dev, man_opts);
    cucore::MemoryResource mr_vmm = cucore::MemoryResource::virtual_memory(dev);
    cucore::MemoryResource mr_vmm2 = cucore::MemoryResource::virtual_memory(dev, vmm_opts);
    cucore::MemoryResource mr_ipc = cucore::MemoryResource::device_pool(dev, ipc_opts);
    cucore::MemoryResource mr_user = cucore::MemoryResource::user(std::make_shared<Arena>(), {0, true, false, false});
    cucore::MemoryResource mr_fn = cucore::MemoryResource::user(
        [](std::uint64_t size, const cucore::Stream &) { return size; },
        [](std::uint64_t, std::uint64_t, const cucore::Stream &) {}, cucore::UserMemoryTraits{});
    cucore_memory_resource_callbacks_t callbacks{};
    callbacks.struct_size = sizeof callbacks;
    callbacks.allocate = &c_allocate;
    callbacks.deallocate = &c_deallocate;
    cucore::MemoryResource mr_c = cucore::MemoryResource::user(callbacks);
    mr_pin.set_peer_access(dev, CUCORE_ACCESS_READ_WRITE);
    sum += static_cast<int>(mr_pin2.peer_access(dev)) + static_cast<int>(mr_man2.handle() != nullptr) +
           static_cast<int>(mr_vmm2 == mr_ipc) + static_cast<int>(mr_fn == mr_c);
    cucore::Buffer m1 = mr_man.allocate(1u << 20, s1);
    cucore::Buffer v1 = mr_vmm.allocate(1u << 20);
    cucore::Buffer u1 = mr_user.allocate(64);
    v1.grow(2u << 20);
    const cucore::Stream dealloc = m1.deallocation_stream();
    sum += static_cast<int>(mr_man.is_managed()) + static_cast<int>(m1.is_managed()) +
           static_cast<int>(v1.is_device_accessible()) +
           static_cast<int>(u1.is_host_accessible()) + static_cast<int>(static_cast<bool>(dealloc));
    m1.advise(CUCORE_ADVICE_SET_READ_MOSTLY);
    m1.advise(CUCORE_ADVICE_SET_ACCESSED_BY, cucore::Location::device(0));
    m1.set_read_mostly(true);
    m1.set_preferred_location(cucore::Location::host());
    m1.set_preferred_location(cucore::Location::none());
    m1.add_accessed_by(cucore::Location::device(dev));
    m1.remove_accessed_by(cucore::Location::device(0));
    m1.prefetch(cucore::Location::device(0), s1);
    m1.discard(s1);
    m1.discard_prefetch(cucore::Location::host_numa_current(), s1);
    const cucore::Location last = m1.last_prefetch_location();
    sum += static_cast<int>(m1.read_mostly()) + m1.preferred_location().id + last.id +
           static_cast<int>(m1.is_accessed_by(cucore::Location::device(0)));
    std::vector<std::uint8_t> tile(16 * 8);
    const std::vector<std::uint8_t> image(64 * 8 * 2);
    cucore::copy_2d(cucore::MemoryRegion::host(tile.data(), 16), cucore::MemoryRegion(b1, 64).at(4, 2), 16, 8, s1);
    cucore::copy_3d(cucore::MemoryRegion(b1, 64, 8, 128).at(1, 2, 0), cucore::MemoryRegion::host(image.data(), 64, 8),
                    cucore::Extent3D{16, 4, 2}, s1);
    const cucore_copy_3d_t c3 = cucore::to_c(cucore::MemoryRegion(v1, 32), cucore::MemoryRegion(m1, 32), {8, 2, 1});
    sum += static_cast<int>(c3.width);

    // Host locations, batched and stream memory operations.
    m1.prefetch(cucore::Host(), s1);
    m1.prefetch(cucore::Host(1), s1);
    m1.set_preferred_location(cucore::Host::numa_current());
    sum += cucore::Host::current_numa_id() + static_cast<int>(cucore::Host(2) == cucore::Host(2));
    const std::vector<std::uint8_t> pageable(256);
    cucore::copy_batch(s1, {cucore::BatchCopy{cucore::CopySide(b1), cucore::CopySide(v1, 16), 64, 0},
                            cucore::BatchCopy{cucore::CopySide::pointer(pageable.data()), cucore::CopySide(b1), 256, 1}},
                       {cucore::CopyOptions{}, cucore::CopyOptions{cucore::MemcpySrcAccessOrder::during_api_call,
                                                                   cucore::Host(), cucore::Location::device(0),
                                                                   cucore::MemcpyOverlapMode::prefer_overlap_with_compute}});
    cucore::copy_batch(s1, std::vector<cucore::Buffer>{b1}, std::vector<cucore::Buffer>{v1});
    cucore::copy_3d_batch(s1, {cucore::to_c(cucore::MemoryRegion(v1, 32), cucore::MemoryRegion(b1, 32), {8, 2, 1})},
                          cucore::CopyOptions{});
    const std::vector<cucore::Buffer> managed{m1};
    cucore::prefetch_batch(s1, managed, cucore::Location::device(0));
    cucore::prefetch_batch(s1, managed, std::vector<cucore::Location>{cucore::Host()});
    cucore::discard_batch(s1, managed);
    cucore::discard_prefetch_batch(s1, managed, cucore::Host::numa_current());
    cucore::write_value_32(s1, b1, 0, 1u);
    cucore::write_value_64(s1, b1, 8, 2u, true);
    cucore::wait_value_32(s1, b1, 0, 1u, cucore::WaitCondition::eq);
    cucore::wait_value_64(s1, b1, 8, 2u, cucore::WaitCondition::geq, true);
    cucore::flush_remote_writes(s1);
    cucore::memory_barrier(s1, cucore::MemoryBarrierScope::device);
    cucore::batch_memory_ops(s1, {cucore::StreamMemoryOp::write_value_32(b1, 0, 3u),
                                  cucore::StreamMemoryOp::wait_value_64(b1, 8, 2u, cucore::WaitCondition::nor),
                                  cucore::StreamMemoryOp::flush_remote_writes(),
                                  cucore::StreamMemoryOp::memory_barrier()});

    // DLPack: export (versioned, legacy), the owners, import, the device.
    namespace dl = cucore::dlpack;
    cucore::DLPackTensor x1 = dl::export_tensor(b1);
    cucore::DLPackTensor x2 = dl::export_tensor(b1, cucore::DLPackLayout::of<float>({4, 8}).strides({8, 1}).byte_offset(16).read_only());
    cucore::LegacyDLPackTensor x3 = dl::export_legacy(b1);
    cucore::LegacyDLPackTensor x4 = dl::export_legacy(b1, cucore::DLPackLayout(dl::dtype<std::complex<double>>(), 4));
    const std::vector<std::int64_t> dl_shape{2, 3};
    const cucore::DLPackLayout dl_layout(dl::dtype<std::int16_t>(), dl_shape.data(), dl_shape.size());
    cucore::DLPackTensor x5 = std::move(x2);
    x2 = std::move(x5);
    cucore::Buffer i1 = dl::from_dlpack(std::move(x1));
    cucore::Buffer i2 = dl::from_dlpack(std::move(x3));
    cucore::Buffer i3 = dl::from_dlpack(x2.release());
    cucore::Buffer i4 = dl::from_dlpack(x4.release());
    x5.reset();
    const DLDevice dl_dev = dl::device(i1);
    sum += dl_dev.device_id + static_cast<int>(i2.size() + i3.size() + i4.size()) + dl_layout.to_c().ndim +
           static_cast<int>(static_cast<bool>(x5)) + (x2.get() != nullptr ? x2.tensor().ndim : 0);

    // IPC: the owning pool handle, descriptors as arrays, import overloads.
    cucore::ipc::PoolHandle ph = cucore::ipc::export_memory_resource(mr_ipc);
    cucore::ipc::PoolHandle ph2(std::move(ph));
    ph = std::move(ph2);
    const cucore::ipc::PoolId pid = cucore::ipc::pool_id(mr_ipc);
    cucore::ipc::PoolHandle ph3(ph.fd(), ph.kind(), pid);
    (void)ph3.release();
    const cucore::MemoryResource mr_imported = cucore::ipc::import_memory_resource(dev, ph);
    const cucore::ipc::BufferDescriptor bd = cucore::ipc::export_buffer(b1);
    cucore::Buffer ib1 = cucore::ipc::import_buffer(mr_imported, bd, s1);
    cucore::Buffer ib2 = cucore::ipc::import_buffer(mr_imported, bd.data(), bd.size(), s1);
    cucore::EventOptions ipc_event_opts;
    ipc_event_opts.ipc_enabled = true;
    const cucore::Event ipc_event = dev.create_event(ipc_event_opts);
    const cucore::ipc::EventDescriptor ed = cucore::ipc::export_event(ipc_event);
    const cucore::Event ie1 = cucore::ipc::import_event(dev, ed);
    const cucore::Event ie2 = cucore::ipc::import_event(dev, ed.data(), ed.size());
    ph.reset();
    sum += static_cast<int>(ph.to_c().kind) + static_cast<int>(static_cast<bool>(ph)) + pid[0] +
           static_cast<int>(ib1 == ib2) + static_cast<int>(ie1 == ie2);

    // Graphics interop: registration, maps (one, a batch, arrays), the array's info, GL devices.
    const cucore::GraphicsResource gr = cucore::GraphicsResource::from_gl_buffer(
        dev, 1, cucore::GraphicsRegisterFlags::read_only | cucore::GraphicsRegisterFlags::write_discard);
    const cucore::GraphicsResource gi = cucore::GraphicsResource::from_gl_image(dev, 2, 0x0DE1);
    {
        const cucore::Buffer mapped = gr.map(s1, cucore::GraphicsMapHint::read_only);
        sum += static_cast<int>(mapped.size());
    }
    {
        cucore::MappedBuffers batch = cucore::GraphicsResource::map_all({gr}, s1);
        sum += static_cast<int>(batch.size() + batch[0].size());
        batch.unmap(s1);
    }
    const cucore::OpaqueArray ga = gi.map_array(s1, 0, 0, cucore::GraphicsMapHint::write_discard);
    const cucore::OpaqueArrayInfo gai = ga.info();
    const cucore::OpaqueArray gm = gi.map_mipmapped_array(s1).level(1);
    ga.copy_from(b1, s1);
    ga.copy_to(b1, s1);
    cucore::GraphicsResource::unmap_all({gr, gi}, s1);
    sum += static_cast<int>(gai.width) + static_cast<int>(gm.handle() != nullptr) +
           static_cast<int>(cucore::gl_get_devices().size()) + static_cast<int>(gr.is_mapped());

    sum += cucore_facade_texture_compile_check(dev, s1, b1);
    sum += cucore_facade_tensor_map_compile_check(s1, b1, cucore::Kernel::from_handle(reinterpret_cast<void *>(1)));
    sum += cucore_facade_green_compile_check(dev);
    sum += cucore_facade_graph_compile_check(dev, s1, b1);
    sum += cucore_facade_communicator_compile_check(dev, s1, b1);

    try {
        (void)cucore::live_object_count(CUCORE_OBJECT_STREAM);
        (void)cucore::release_error_count();
    } catch (const cucore::Error &e) {
        sum += static_cast<int>(e.status()) + e.cuda_result() + static_cast<int>(std::string(e.what()).size()) +
               static_cast<int>(std::string(e.status_name()).size());
    }
    sum += static_cast<int>(cucore::version()) + static_cast<int>(std::string(cucore::version_string()).size()) +
           static_cast<int>(std::string(cucore::status_string(CUCORE_SUCCESS)).size());
    return sum + hits;
}
