// NULL, garbage, released and wrong-type handles on every public function that
// takes a handle: CUCORE_ERROR_INVALID_HANDLE, a message naming the argument,
// cleared out-pointers, and no driver call made.
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fake_nvml.hpp"
#include "handle_world.hpp"
#include "test_support.hpp"

namespace {

using namespace handle_tests;

std::vector<Call> all_calls() {
    using D = cucore_device_t;
    using C = cucore_context_t;
    using S = cucore_stream_t;
    using E = cucore_event_t;
    using M = cucore_memory_resource_t;
    using B = cucore_buffer_t;
    using K = cucore_kernel_t;
    using P = cucore_program_t;
    using O = cucore_object_code_t;
    using L = cucore_linker_t;
    using PC = cucore_program_cache_t;
    using A = cucore_opaque_array_t;
    using MA = cucore_mipmapped_array_t;
    using T = cucore_texture_object_t;
    using SO = cucore_surface_object_t;
    using TM = cucore_tensor_map_descriptor_t;
    using SM = cucore_sm_resource_t;
    using WQ = cucore_workqueue_resource_t;
    using GD = cucore_graph_definition_t;
    using GN = cucore_graph_node_t;
    using G = cucore_graph_t;
    // A region copy of one element between host memory and `w.array` (or, with `buffer_side`, a buffer).
    auto region = [](const World &w, bool array_is_source) {
        static char x[64];
        cucore_opaque_array_copy_t k = CUCORE_OPAQUE_ARRAY_COPY_INIT;
        k.width = 1;
        if (array_is_source) {
            k.src_array.array = w.array;
            k.dst_memory.host = x;
        } else {
            k.src_memory.host = x;
            k.dst_array.array = w.array;
        }
        return k;
    };
    std::vector<Call> calls = {
        {"cucore_pinned_memory_resource_get_default", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { M *v = as<M>(h); auto s = cucore_pinned_memory_resource_get_default(as<D>(h), &v); c = v == nullptr; return s; }},
        {"cucore_managed_memory_resource_get_default", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { M *v = as<M>(h); auto s = cucore_managed_memory_resource_get_default(as<D>(h), &v); c = v == nullptr; return s; }},
        {"cucore_device_memory_resource_get_default", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { M *v = as<M>(h); auto s = cucore_device_memory_resource_get_default(as<D>(h), &v); c = v == nullptr; return s; }},
        {"cucore_device_memory_resource_create", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { M *v = as<M>(h); auto s = cucore_device_memory_resource_create(as<D>(h), nullptr, &v); c = v == nullptr; return s; }},
        {"cucore_legacy_pinned_memory_resource_create", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { M *v = as<M>(h); auto s = cucore_legacy_pinned_memory_resource_create(as<D>(h), &v); c = v == nullptr; return s; }},
        {"cucore_device_get_memory_resource", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { M *v = as<M>(h); auto s = cucore_device_get_memory_resource(as<D>(h), &v); c = v == nullptr; return s; }},
        {"cucore_device_set_memory_resource", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { c = true; return cucore_device_set_memory_resource(as<D>(h), w.resource); }},
        {"cucore_device_set_memory_resource", "resource", CUCORE_OBJECT_MEMORY_RESOURCE, [](void *h, const World &w, bool &c) { c = true; return cucore_device_set_memory_resource(w.device, as<M>(h)); }},
        {"cucore_device_allocate", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { B *v = as<B>(h); auto s = cucore_device_allocate(as<D>(h), 16, w.stream, &v); c = v == nullptr; return s; }},
        {"cucore_device_allocate", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { B *v = as<B>(h); auto s = cucore_device_allocate(w.device, 16, as<S>(h), &v); c = v == nullptr; return s; }},
        {"cucore_memory_resource_retain", "resource", CUCORE_OBJECT_MEMORY_RESOURCE, [](void *h, const World &, bool &c) { c = true; return cucore_memory_resource_retain(as<M>(h)); }},
        {"cucore_memory_resource_release", "resource", CUCORE_OBJECT_MEMORY_RESOURCE, [](void *h, const World &, bool &c) { c = true; return cucore_memory_resource_release(as<M>(h)); }},
        {"cucore_memory_resource_allocate", "resource", CUCORE_OBJECT_MEMORY_RESOURCE, [](void *h, const World &w, bool &c) { B *v = as<B>(h); auto s = cucore_memory_resource_allocate(as<M>(h), 16, w.stream, &v); c = v == nullptr; return s; }},
        {"cucore_memory_resource_allocate", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { B *v = as<B>(h); auto s = cucore_memory_resource_allocate(w.resource, 16, as<S>(h), &v); c = v == nullptr; return s; }},
        {"cucore_memory_resource_handle", "resource", CUCORE_OBJECT_MEMORY_RESOURCE, [](void *h, const World &, bool &c) { void *v = h; auto s = cucore_memory_resource_handle(as<M>(h), &v); c = v == nullptr; return s; }},
        {"cucore_memory_resource_pool_attribute", "resource", CUCORE_OBJECT_MEMORY_RESOURCE, [](void *h, const World &, bool &c) { uint64_t v = 9; auto s = cucore_memory_resource_pool_attribute(as<M>(h), CUCORE_POOL_ATTRIBUTE_USED_MEM_CURRENT, &v); c = v == 0; return s; }},
        {"cucore_memory_resource_set_pool_attribute", "resource", CUCORE_OBJECT_MEMORY_RESOURCE, [](void *h, const World &, bool &c) { c = true; return cucore_memory_resource_set_pool_attribute(as<M>(h), CUCORE_POOL_ATTRIBUTE_RELEASE_THRESHOLD, 0); }},
        {"cucore_memory_resource_owns_pool", "resource", CUCORE_OBJECT_MEMORY_RESOURCE, [](void *h, const World &, bool &c) { int v = 7; auto s = cucore_memory_resource_owns_pool(as<M>(h), &v); c = v == 0; return s; }},
        {"cucore_memory_resource_deallocate", "resource", CUCORE_OBJECT_MEMORY_RESOURCE, [](void *h, const World &w, bool &c) { c = true; return cucore_memory_resource_deallocate(as<M>(h), 0, 0, w.stream); }},
        {"cucore_memory_resource_trim", "resource", CUCORE_OBJECT_MEMORY_RESOURCE, [](void *h, const World &, bool &c) { c = true; return cucore_memory_resource_trim(as<M>(h), 0); }},
        {"cucore_memory_resource_kind", "resource", CUCORE_OBJECT_MEMORY_RESOURCE, [](void *h, const World &, bool &c) { cucore_memory_resource_kind_t v = CUCORE_MEMORY_RESOURCE_DEVICE; auto s = cucore_memory_resource_kind(as<M>(h), &v); c = v == CUCORE_MEMORY_RESOURCE_UNSET; return s; }},
        {"cucore_memory_resource_device_id", "resource", CUCORE_OBJECT_MEMORY_RESOURCE, [](void *h, const World &, bool &c) { int v = 9; auto s = cucore_memory_resource_device_id(as<M>(h), &v); c = v == 0; return s; }},
        {"cucore_memory_resource_accessibility", "resource", CUCORE_OBJECT_MEMORY_RESOURCE, [](void *h, const World &, bool &c) { int a = 9, b = 9; auto s = cucore_memory_resource_accessibility(as<M>(h), &a, &b); c = a == 0 && b == 0; return s; }},
        {"cucore_memory_resource_is_stream_ordered", "resource", CUCORE_OBJECT_MEMORY_RESOURCE, [](void *h, const World &, bool &c) { int a = 9; auto s = cucore_memory_resource_is_stream_ordered(as<M>(h), &a); c = a == 0; return s; }},
        {"cucore_memory_resource_is_managed", "resource", CUCORE_OBJECT_MEMORY_RESOURCE, [](void *h, const World &, bool &c) { int a = 9; auto s = cucore_memory_resource_is_managed(as<M>(h), &a); c = a == 0; return s; }},
        {"cucore_buffer_from_handle", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { B *v = as<B>(h); auto s = cucore_buffer_from_handle(0x1000, 16, as<D>(h), nullptr, nullptr, &v); c = v == nullptr; return s; }},
        {"cucore_buffer_retain", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &, bool &c) { c = true; return cucore_buffer_retain(as<B>(h)); }},
        {"cucore_buffer_release", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &, bool &c) { c = true; return cucore_buffer_release(as<B>(h)); }},
        {"cucore_buffer_close", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { c = true; return cucore_buffer_close(as<B>(h), w.stream); }},
        {"cucore_buffer_close", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { c = true; return cucore_buffer_close(w.buffer, as<S>(h)); }},
        {"cucore_buffer_dispose", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { c = true; return cucore_buffer_dispose(as<B>(h), w.stream); }},
        {"cucore_buffer_set_deallocation_stream", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { c = true; return cucore_buffer_set_deallocation_stream(as<B>(h), w.stream); }},
        {"cucore_buffer_set_deallocation_stream", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { c = true; return cucore_buffer_set_deallocation_stream(w.buffer, as<S>(h)); }},
        {"cucore_buffer_size", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &, bool &c) { uint64_t v = 9; auto s = cucore_buffer_size(as<B>(h), &v); c = v == 0; return s; }},
        {"cucore_buffer_address", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &, bool &c) { uint64_t v = 9; auto s = cucore_buffer_address(as<B>(h), &v); c = v == 0; return s; }},
        {"cucore_buffer_device_id", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &, bool &c) { int v = 9; auto s = cucore_buffer_device_id(as<B>(h), &v); c = v == 0; return s; }},
        {"cucore_buffer_memory_resource", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &, bool &c) { M *v = as<M>(h); auto s = cucore_buffer_memory_resource(as<B>(h), &v); c = v == nullptr; return s; }},
        {"cucore_buffer_view", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &, bool &c) { B *v = as<B>(h); auto s = cucore_buffer_view(as<B>(h), 0, 8, &v); c = v == nullptr; return s; }},
        {"cucore_buffer_copy", "dst", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { c = true; return cucore_buffer_copy(as<B>(h), w.buffer, w.stream); }},
        {"cucore_buffer_copy", "src", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { c = true; return cucore_buffer_copy(w.buffer, as<B>(h), w.stream); }},
        {"cucore_buffer_copy", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { c = true; return cucore_buffer_copy(w.buffer, w.buffer, as<S>(h)); }},
        {"cucore_buffer_copy_from_host", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { char x[8] = {}; c = true; return cucore_buffer_copy_from_host(as<B>(h), 0, x, 8, w.stream); }},
        {"cucore_buffer_copy_from_host", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { char x[8] = {}; c = true; return cucore_buffer_copy_from_host(w.buffer, 0, x, 8, as<S>(h)); }},
        {"cucore_buffer_copy_to_host", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { char x[8]; c = true; return cucore_buffer_copy_to_host(as<B>(h), 0, x, 8, w.stream); }},
        {"cucore_buffer_copy_to_host", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { char x[8]; c = true; return cucore_buffer_copy_to_host(w.buffer, 0, x, 8, as<S>(h)); }},
        {"cucore_buffer_fill", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { c = true; return cucore_buffer_fill(as<B>(h), 7, 1, w.stream); }},
        {"cucore_buffer_fill", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { c = true; return cucore_buffer_fill(w.buffer, 7, 1, as<S>(h)); }},
        {"cucore_dlpack_export", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &, bool &c) { DLManagedTensorVersioned *v = as<DLManagedTensorVersioned>(h); auto s = cucore_dlpack_export(as<B>(h), nullptr, &v); c = v == nullptr; return s; }},
        {"cucore_dlpack_export_legacy", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &, bool &c) { DLManagedTensor *v = as<DLManagedTensor>(h); auto s = cucore_dlpack_export_legacy(as<B>(h), nullptr, &v); c = v == nullptr; return s; }},
        {"cucore_dlpack_device", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &, bool &c) { int32_t a = 9, b = 9; auto s = cucore_dlpack_device(as<B>(h), &a, &b); c = a == 0 && b == 0; return s; }},
        {"cucore_pinned_memory_resource_create", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { M *v = as<M>(h); auto s = cucore_pinned_memory_resource_create(as<D>(h), nullptr, &v); c = v == nullptr; return s; }},
        {"cucore_managed_memory_resource_create", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { M *v = as<M>(h); auto s = cucore_managed_memory_resource_create(as<D>(h), nullptr, &v); c = v == nullptr; return s; }},
        {"cucore_virtual_memory_resource_create", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { M *v = as<M>(h); auto s = cucore_virtual_memory_resource_create(as<D>(h), nullptr, &v); c = v == nullptr; return s; }},
        {"cucore_memory_resource_set_peer_access", "resource", CUCORE_OBJECT_MEMORY_RESOURCE, [](void *h, const World &w, bool &c) { c = true; return cucore_memory_resource_set_peer_access(as<M>(h), w.device, CUCORE_ACCESS_READ_WRITE); }},
        {"cucore_memory_resource_set_peer_access", "peer", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { c = true; return cucore_memory_resource_set_peer_access(w.resource, as<D>(h), CUCORE_ACCESS_READ_WRITE); }},
        {"cucore_memory_resource_peer_access", "resource", CUCORE_OBJECT_MEMORY_RESOURCE, [](void *h, const World &w, bool &c) { cucore_access_t v = CUCORE_ACCESS_READ_WRITE; auto s = cucore_memory_resource_peer_access(as<M>(h), w.device, &v); c = v == CUCORE_ACCESS_NONE; return s; }},
        {"cucore_memory_resource_peer_access", "peer", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { cucore_access_t v = CUCORE_ACCESS_READ_WRITE; auto s = cucore_memory_resource_peer_access(w.resource, as<D>(h), &v); c = v == CUCORE_ACCESS_NONE; return s; }},
        {"cucore_buffer_accessibility", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &, bool &c) { int a = 9, b = 9, m = 9; auto s = cucore_buffer_accessibility(as<B>(h), &a, &b, &m); c = a == 0 && b == 0 && m == 0; return s; }},
        {"cucore_buffer_deallocation_stream", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &, bool &c) { S *v = as<S>(h); auto s = cucore_buffer_deallocation_stream(as<B>(h), &v); c = v == nullptr; return s; }},
        {"cucore_buffer_grow", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &, bool &c) { c = true; return cucore_buffer_grow(as<B>(h), 1 << 20); }},
        {"cucore_copy_3d", "copy.src.buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { char x[8] = {}; cucore_copy_3d_t k = CUCORE_COPY_3D_INIT; k.src.buffer = as<B>(h); k.src.pitch = 8; k.dst.host = x; k.dst.pitch = 8; k.width = 8; c = true; return cucore_copy_3d(&k, w.stream); }},
        {"cucore_copy_3d", "copy.dst.buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { char x[8] = {}; cucore_copy_3d_t k = CUCORE_COPY_3D_INIT; k.src.host = x; k.src.pitch = 8; k.dst.buffer = as<B>(h); k.dst.pitch = 8; k.width = 8; c = true; return cucore_copy_3d(&k, w.stream); }},
        {"cucore_copy_3d", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { char x[8] = {}; cucore_copy_3d_t k = CUCORE_COPY_3D_INIT; k.src.host = x; k.src.pitch = 8; k.dst.buffer = w.buffer; k.dst.pitch = 8; k.width = 8; c = true; return cucore_copy_3d(&k, as<S>(h)); }},
        {"cucore_buffer_advise", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &, bool &c) { c = true; return cucore_buffer_advise(as<B>(h), CUCORE_ADVICE_SET_READ_MOSTLY, cucore_location_t{CUCORE_LOCATION_DEVICE, 0}); }},
        {"cucore_buffer_advice", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &, bool &c) { int r = 9; cucore_location_t l{CUCORE_LOCATION_HOST, 9}; auto s = cucore_buffer_advice(as<B>(h), &r, &l); c = r == 0 && l.type == CUCORE_LOCATION_NONE && l.id == 0; return s; }},
        {"cucore_buffer_is_accessed_by", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &, bool &c) { int v = 9; auto s = cucore_buffer_is_accessed_by(as<B>(h), cucore_location_t{CUCORE_LOCATION_DEVICE, 0}, &v); c = v == 0; return s; }},
        {"cucore_buffer_last_prefetch_location", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &, bool &c) { cucore_location_t l{CUCORE_LOCATION_HOST, 9}; auto s = cucore_buffer_last_prefetch_location(as<B>(h), &l); c = l.type == CUCORE_LOCATION_NONE && l.id == 0; return s; }},
        {"cucore_buffer_prefetch", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { c = true; return cucore_buffer_prefetch(as<B>(h), cucore_location_t{CUCORE_LOCATION_DEVICE, 0}, w.stream); }},
        {"cucore_buffer_prefetch", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { c = true; return cucore_buffer_prefetch(w.buffer, cucore_location_t{CUCORE_LOCATION_DEVICE, 0}, as<S>(h)); }},
        {"cucore_buffer_discard", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { c = true; return cucore_buffer_discard(as<B>(h), nullptr, w.stream); }},
        {"cucore_buffer_discard", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { c = true; return cucore_buffer_discard(w.buffer, nullptr, as<S>(h)); }},
        // Batched and stream memory operations (memory_operations.h).
        {"cucore_copy_batch", "items[0].src", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { cucore_copy_batch_item_t i{}; i.src = as<B>(h); i.dst = w.buffer; i.size = 8; c = true; return cucore_copy_batch(w.stream, &i, 1, nullptr, 0); }},
        {"cucore_copy_batch", "items[0].dst", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { cucore_copy_batch_item_t i{}; i.src = w.buffer; i.dst = as<B>(h); i.size = 8; c = true; return cucore_copy_batch(w.stream, &i, 1, nullptr, 0); }},
        {"cucore_copy_batch", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { cucore_copy_batch_item_t i{}; i.src = w.buffer; i.dst = w.buffer; i.size = 8; c = true; return cucore_copy_batch(as<S>(h), &i, 1, nullptr, 0); }},
        {"cucore_copy_3d_batch", "copy.src.buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { cucore_copy_3d_t k = CUCORE_COPY_3D_INIT; k.src.buffer = as<B>(h); k.src.pitch = 8; k.dst.buffer = w.buffer; k.dst.pitch = 8; k.width = 8; const cucore_copy_3d_t *p[] = {&k}; c = true; return cucore_copy_3d_batch(w.stream, p, 1, nullptr); }},
        {"cucore_copy_3d_batch", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { cucore_copy_3d_t k = CUCORE_COPY_3D_INIT; k.src.buffer = w.buffer; k.src.pitch = 8; k.dst.buffer = w.buffer; k.dst.pitch = 8; k.dst.offset = 8; k.width = 8; const cucore_copy_3d_t *p[] = {&k}; c = true; return cucore_copy_3d_batch(as<S>(h), p, 1, nullptr); }},
        {"cucore_prefetch_batch", "buffers[0]", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { B *b = as<B>(h); const cucore_location_t l{CUCORE_LOCATION_HOST, 0}; c = true; return cucore_prefetch_batch(w.stream, &b, 1, &l, 1); }},
        {"cucore_prefetch_batch", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { B *b = w.buffer; const cucore_location_t l{CUCORE_LOCATION_HOST, 0}; c = true; return cucore_prefetch_batch(as<S>(h), &b, 1, &l, 1); }},
        {"cucore_discard_batch", "buffers[0]", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { B *b = as<B>(h); c = true; return cucore_discard_batch(w.stream, &b, 1); }},
        {"cucore_discard_batch", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { B *b = w.buffer; c = true; return cucore_discard_batch(as<S>(h), &b, 1); }},
        {"cucore_discard_prefetch_batch", "buffers[0]", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { B *b = as<B>(h); const cucore_location_t l{CUCORE_LOCATION_HOST, 0}; c = true; return cucore_discard_prefetch_batch(w.stream, &b, 1, &l, 1); }},
        {"cucore_discard_prefetch_batch", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { B *b = w.buffer; const cucore_location_t l{CUCORE_LOCATION_HOST, 0}; c = true; return cucore_discard_prefetch_batch(as<S>(h), &b, 1, &l, 1); }},
        {"cucore_stream_write_value_32", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { c = true; return cucore_stream_write_value_32(w.stream, as<B>(h), 0, 1, 0); }},
        {"cucore_stream_write_value_32", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { c = true; return cucore_stream_write_value_32(as<S>(h), w.buffer, 0, 1, 0); }},
        {"cucore_stream_write_value_64", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { c = true; return cucore_stream_write_value_64(w.stream, as<B>(h), 0, 1, 0); }},
        {"cucore_stream_write_value_64", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { c = true; return cucore_stream_write_value_64(as<S>(h), w.buffer, 0, 1, 0); }},
        {"cucore_stream_wait_value_32", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { c = true; return cucore_stream_wait_value_32(w.stream, as<B>(h), 0, 0, 0); }},
        {"cucore_stream_wait_value_32", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { c = true; return cucore_stream_wait_value_32(as<S>(h), w.buffer, 0, 0, 0); }},
        {"cucore_stream_wait_value_64", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { c = true; return cucore_stream_wait_value_64(w.stream, as<B>(h), 0, 0, 0); }},
        {"cucore_stream_wait_value_64", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { c = true; return cucore_stream_wait_value_64(as<S>(h), w.buffer, 0, 0, 0); }},
        {"cucore_stream_flush_remote_writes", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &, bool &c) { c = true; return cucore_stream_flush_remote_writes(as<S>(h)); }},
        {"cucore_stream_memory_barrier", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &, bool &c) { c = true; return cucore_stream_memory_barrier(as<S>(h), CUCORE_MEMORY_BARRIER_SCOPE_SYSTEM); }},
        {"cucore_stream_batch_memory_ops", "ops[0].buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { const cucore_stream_memory_op_t op{CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_32, 0, as<B>(h), 0, 1}; c = true; return cucore_stream_batch_memory_ops(w.stream, &op, 1); }},
        {"cucore_stream_batch_memory_ops", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { const cucore_stream_memory_op_t op{CUCORE_STREAM_MEMORY_OP_WRITE_VALUE_32, 0, w.buffer, 0, 1}; c = true; return cucore_stream_batch_memory_ops(as<S>(h), &op, 1); }},
        {"cucore_device_retain", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { c = true; return cucore_device_retain(as<D>(h)); }},
        {"cucore_device_release", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { c = true; return cucore_device_release(as<D>(h)); }},
        {"cucore_device_ordinal", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { int v = 9; auto s = cucore_device_ordinal(as<D>(h), &v); c = v == 0; return s; }},
        {"cucore_device_handle", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { int v = 9; auto s = cucore_device_handle(as<D>(h), &v); c = v == 0; return s; }},
        {"cucore_device_name", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { const char *v = "x"; auto s = cucore_device_name(as<D>(h), &v); c = v == nullptr; return s; }},
        {"cucore_device_pci_bus_id", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { const char *v = "x"; auto s = cucore_device_pci_bus_id(as<D>(h), &v); c = v == nullptr; return s; }},
        {"cucore_device_uuid", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { cucore_uuid_t v; v.bytes[0] = 9; auto s = cucore_device_uuid(as<D>(h), &v); c = v.bytes[0] == 0; return s; }},
        {"cucore_device_compute_capability", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { int a = 9, b = 9; auto s = cucore_device_compute_capability(as<D>(h), &a, &b); c = a == 0 && b == 0; return s; }},
        {"cucore_device_total_memory", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { uint64_t v = 9; auto s = cucore_device_total_memory(as<D>(h), &v); c = v == 0; return s; }},
        {"cucore_device_attribute", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { int v = 9; auto s = cucore_device_attribute(as<D>(h), CUCORE_DEVICE_ATTRIBUTE_WARP_SIZE, &v); c = v == 0; return s; }},
        {"cucore_device_properties", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { cucore_device_properties_t p = CUCORE_DEVICE_PROPERTIES_INIT; c = true; return cucore_device_properties(as<D>(h), &p); }},
        {"cucore_device_set_current", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { c = true; return cucore_device_set_current(as<D>(h)); }},
        {"cucore_device_synchronize", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { c = true; return cucore_device_synchronize(as<D>(h)); }},
        {"cucore_device_can_access_peer", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { int v = 9; auto s = cucore_device_can_access_peer(as<D>(h), w.device, &v); c = v == 0; return s; }},
        {"cucore_device_can_access_peer", "peer", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { int v = 9; auto s = cucore_device_can_access_peer(w.device, as<D>(h), &v); c = v == 0; return s; }},
        {"cucore_device_enable_peer_access", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { c = true; return cucore_device_enable_peer_access(as<D>(h), w.device); }},
        {"cucore_device_enable_peer_access", "peer", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { c = true; return cucore_device_enable_peer_access(w.device, as<D>(h)); }},
        {"cucore_device_disable_peer_access", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { c = true; return cucore_device_disable_peer_access(as<D>(h), w.device); }},
        {"cucore_device_disable_peer_access", "peer", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { c = true; return cucore_device_disable_peer_access(w.device, as<D>(h)); }},
        {"cucore_context_get_primary", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { C *v = as<C>(h); auto s = cucore_context_get_primary(as<D>(h), &v); c = v == nullptr; return s; }},
        {"cucore_context_retain", "context", CUCORE_OBJECT_CONTEXT, [](void *h, const World &, bool &c) { c = true; return cucore_context_retain(as<C>(h)); }},
        {"cucore_context_release", "context", CUCORE_OBJECT_CONTEXT, [](void *h, const World &, bool &c) { c = true; return cucore_context_release(as<C>(h)); }},
        {"cucore_context_handle", "context", CUCORE_OBJECT_CONTEXT, [](void *h, const World &, bool &c) { void *v = h; auto s = cucore_context_handle(as<C>(h), &v); c = v == nullptr; return s; }},
        {"cucore_context_device", "context", CUCORE_OBJECT_CONTEXT, [](void *h, const World &, bool &c) { D *v = as<D>(h); auto s = cucore_context_device(as<C>(h), &v); c = v == nullptr; return s; }},
        {"cucore_context_is_primary", "context", CUCORE_OBJECT_CONTEXT, [](void *h, const World &, bool &c) { int v = 9; auto s = cucore_context_is_primary(as<C>(h), &v); c = v == 0; return s; }},
        {"cucore_context_set_current", "context", CUCORE_OBJECT_CONTEXT, [](void *h, const World &, bool &c) { c = true; return cucore_context_set_current(as<C>(h)); }},
        {"cucore_context_synchronize", "context", CUCORE_OBJECT_CONTEXT, [](void *h, const World &, bool &c) { c = true; return cucore_context_synchronize(as<C>(h)); }},
        {"cucore_stream_create", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { S *v = as<S>(h); auto s = cucore_stream_create(as<D>(h), nullptr, &v); c = v == nullptr; return s; }},
        {"cucore_stream_create_in_context", "context", CUCORE_OBJECT_CONTEXT, [](void *h, const World &, bool &c) { S *v = as<S>(h); auto s = cucore_stream_create_in_context(as<C>(h), nullptr, &v); c = v == nullptr; return s; }},
        {"cucore_stream_get_legacy_default", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { S *v = as<S>(h); auto s = cucore_stream_get_legacy_default(as<D>(h), &v); c = v == nullptr; return s; }},
        {"cucore_stream_get_per_thread_default", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { S *v = as<S>(h); auto s = cucore_stream_get_per_thread_default(as<D>(h), &v); c = v == nullptr; return s; }},
        {"cucore_stream_retain", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &, bool &c) { c = true; return cucore_stream_retain(as<S>(h)); }},
        {"cucore_stream_release", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &, bool &c) { c = true; return cucore_stream_release(as<S>(h)); }},
        {"cucore_stream_synchronize", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &, bool &c) { c = true; return cucore_stream_synchronize(as<S>(h)); }},
        {"cucore_stream_query", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &, bool &c) { int v = 9; auto s = cucore_stream_query(as<S>(h), &v); c = v == 0; return s; }},
        {"cucore_stream_wait_event", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { c = true; return cucore_stream_wait_event(as<S>(h), w.event); }},
        {"cucore_stream_wait_event", "event", CUCORE_OBJECT_EVENT, [](void *h, const World &w, bool &c) { c = true; return cucore_stream_wait_event(w.stream, as<E>(h)); }},
        {"cucore_stream_wait_stream", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { c = true; return cucore_stream_wait_stream(as<S>(h), w.stream); }},
        {"cucore_stream_wait_stream", "other", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { c = true; return cucore_stream_wait_stream(w.stream, as<S>(h)); }},
        {"cucore_stream_record", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &, bool &c) { E *v = as<E>(h); auto s = cucore_stream_record(as<S>(h), nullptr, &v); c = v == nullptr; return s; }},
        {"cucore_stream_launch_host_func", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &, bool &c) { c = true; return cucore_stream_launch_host_func(as<S>(h), noop_host_fn, nullptr); }},
        {"cucore_stream_device", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &, bool &c) { D *v = as<D>(h); auto s = cucore_stream_device(as<S>(h), &v); c = v == nullptr; return s; }},
        {"cucore_stream_context", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &, bool &c) { C *v = as<C>(h); auto s = cucore_stream_context(as<S>(h), &v); c = v == nullptr; return s; }},
        {"cucore_stream_priority", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &, bool &c) { int v = 9; auto s = cucore_stream_priority(as<S>(h), &v); c = v == 0; return s; }},
        {"cucore_stream_flags", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &, bool &c) { uint32_t v = 9; auto s = cucore_stream_flags(as<S>(h), &v); c = v == 0; return s; }},
        {"cucore_stream_is_owned", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &, bool &c) { int v = 9; auto s = cucore_stream_is_owned(as<S>(h), &v); c = v == 0; return s; }},
        {"cucore_stream_handle", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &, bool &c) { void *v = h; auto s = cucore_stream_handle(as<S>(h), &v); c = v == nullptr; return s; }},
        {"cucore_stream_priority_range", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { int a = 9, b = 9; auto s = cucore_stream_priority_range(as<D>(h), &a, &b); c = a == 0 && b == 0; return s; }},
        {"cucore_event_create", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { E *v = as<E>(h); auto s = cucore_event_create(as<D>(h), nullptr, &v); c = v == nullptr; return s; }},
        {"cucore_event_create_in_context", "context", CUCORE_OBJECT_CONTEXT, [](void *h, const World &, bool &c) { E *v = as<E>(h); auto s = cucore_event_create_in_context(as<C>(h), nullptr, &v); c = v == nullptr; return s; }},
        {"cucore_event_retain", "event", CUCORE_OBJECT_EVENT, [](void *h, const World &, bool &c) { c = true; return cucore_event_retain(as<E>(h)); }},
        {"cucore_event_release", "event", CUCORE_OBJECT_EVENT, [](void *h, const World &, bool &c) { c = true; return cucore_event_release(as<E>(h)); }},
        {"cucore_event_record", "event", CUCORE_OBJECT_EVENT, [](void *h, const World &w, bool &c) { c = true; return cucore_event_record(as<E>(h), w.stream); }},
        {"cucore_event_record", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { c = true; return cucore_event_record(w.event, as<S>(h)); }},
        {"cucore_event_synchronize", "event", CUCORE_OBJECT_EVENT, [](void *h, const World &, bool &c) { c = true; return cucore_event_synchronize(as<E>(h)); }},
        {"cucore_event_reset", "event", CUCORE_OBJECT_EVENT, [](void *h, const World &, bool &c) { c = true; return cucore_event_reset(as<E>(h)); }},
        {"cucore_event_query", "event", CUCORE_OBJECT_EVENT, [](void *h, const World &, bool &c) { int v = 9; auto s = cucore_event_query(as<E>(h), &v); c = v == 0; return s; }},
        {"cucore_event_elapsed_time", "start", CUCORE_OBJECT_EVENT, [](void *h, const World &w, bool &c) { float v = 9; auto s = cucore_event_elapsed_time(as<E>(h), w.event, &v); c = v == 0.0f; return s; }},
        {"cucore_event_elapsed_time", "end", CUCORE_OBJECT_EVENT, [](void *h, const World &w, bool &c) { float v = 9; auto s = cucore_event_elapsed_time(w.event, as<E>(h), &v); c = v == 0.0f; return s; }},
        {"cucore_event_flags", "event", CUCORE_OBJECT_EVENT, [](void *h, const World &, bool &c) { uint32_t v = 9; auto s = cucore_event_flags(as<E>(h), &v); c = v == 0; return s; }},
        {"cucore_event_device", "event", CUCORE_OBJECT_EVENT, [](void *h, const World &, bool &c) { D *v = as<D>(h); auto s = cucore_event_device(as<E>(h), &v); c = v == nullptr; return s; }},
        {"cucore_event_context", "event", CUCORE_OBJECT_EVENT, [](void *h, const World &, bool &c) { C *v = as<C>(h); auto s = cucore_event_context(as<E>(h), &v); c = v == nullptr; return s; }},
        {"cucore_event_handle", "event", CUCORE_OBJECT_EVENT, [](void *h, const World &, bool &c) { void *v = h; auto s = cucore_event_handle(as<E>(h), &v); c = v == nullptr; return s; }},
        {"cucore_ipc_export_memory_resource", "resource", CUCORE_OBJECT_MEMORY_RESOURCE, [](void *h, const World &, bool &c) { cucore_ipc_pool_handle_t v; std::memset(&v, 9, sizeof v); auto s = cucore_ipc_export_memory_resource(as<M>(h), &v); c = v.fd == -1 && v.kind == 0 && v.pool_id[0] == 0; return s; }},
        {"cucore_ipc_import_memory_resource", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { cucore_ipc_pool_handle_t p{}; p.fd = 0; p.kind = CUCORE_MEMORY_RESOURCE_DEVICE; M *v = as<M>(h); auto s = cucore_ipc_import_memory_resource(as<D>(h), &p, &v); c = v == nullptr; return s; }},
        {"cucore_ipc_memory_resource_pool_id", "resource", CUCORE_OBJECT_MEMORY_RESOURCE, [](void *h, const World &, bool &c) { uint8_t v[CUCORE_IPC_POOL_ID_SIZE]; std::memset(v, 9, sizeof v); auto s = cucore_ipc_memory_resource_pool_id(as<M>(h), v); c = v[0] == 0 && v[15] == 0; return s; }},
        {"cucore_ipc_export_buffer", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &, bool &c) { uint8_t v[CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE]; std::memset(v, 9, sizeof v); auto s = cucore_ipc_export_buffer(as<B>(h), v); c = v[0] == 0 && v[127] == 0; return s; }},
        {"cucore_ipc_import_buffer", "resource", CUCORE_OBJECT_MEMORY_RESOURCE, [](void *h, const World &w, bool &c) { uint8_t d[CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE] = {}; B *v = as<B>(h); auto s = cucore_ipc_import_buffer(as<M>(h), d, sizeof d, w.stream, &v); c = v == nullptr; return s; }},
        {"cucore_ipc_import_buffer", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { uint8_t d[CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE] = {}; B *v = as<B>(h); auto s = cucore_ipc_import_buffer(w.resource, d, sizeof d, as<S>(h), &v); c = v == nullptr; return s; }},
        {"cucore_ipc_export_event", "event", CUCORE_OBJECT_EVENT, [](void *h, const World &, bool &c) { uint8_t v[CUCORE_IPC_EVENT_DESCRIPTOR_SIZE]; std::memset(v, 9, sizeof v); auto s = cucore_ipc_export_event(as<E>(h), v); c = v[0] == 0 && v[71] == 0; return s; }},
        {"cucore_ipc_import_event", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { uint8_t d[CUCORE_IPC_EVENT_DESCRIPTOR_SIZE] = {}; E *v = as<E>(h); auto s = cucore_ipc_import_event(as<D>(h), d, sizeof d, &v); c = v == nullptr; return s; }},
        {"cucore_program_retain", "program", CUCORE_OBJECT_PROGRAM, [](void *h, const World &, bool &c) { c = true; return cucore_program_retain(as<P>(h)); }},
        {"cucore_program_release", "program", CUCORE_OBJECT_PROGRAM, [](void *h, const World &, bool &c) { c = true; return cucore_program_release(as<P>(h)); }},
        {"cucore_program_compile", "program", CUCORE_OBJECT_PROGRAM, [](void *h, const World &w, bool &c) { O *v = as<O>(h); auto s = cucore_program_compile(as<P>(h), CUCORE_CODE_CUBIN, nullptr, 0, w.cache, &v); c = v == nullptr; return s; }},
        {"cucore_program_compile", "cache", CUCORE_OBJECT_PROGRAM_CACHE, [](void *h, const World &w, bool &c) { O *v = as<O>(h); auto s = cucore_program_compile(w.program, CUCORE_CODE_CUBIN, nullptr, 0, as<PC>(h), &v); c = v == nullptr; return s; }},
        {"cucore_program_pch_status", "program", CUCORE_OBJECT_PROGRAM, [](void *h, const World &, bool &c) { cucore_pch_status_t v = CUCORE_PCH_STATUS_FAILED; auto s = cucore_program_pch_status(as<P>(h), &v); c = v == CUCORE_PCH_STATUS_NONE; return s; }},
        {"cucore_program_log", "program", CUCORE_OBJECT_PROGRAM, [](void *h, const World &, bool &c) { char b[4] = "zz"; size_t n = 9; auto s = cucore_program_log(as<P>(h), b, sizeof b, &n); c = n == 0 && b[0] == 0; return s; }},
        {"cucore_program_code_type", "program", CUCORE_OBJECT_PROGRAM, [](void *h, const World &, bool &c) { auto v = CUCORE_CODE_PTX; auto s = cucore_program_code_type(as<P>(h), &v); c = v == CUCORE_CODE_UNSET; return s; }},
        {"cucore_program_backend", "program", CUCORE_OBJECT_PROGRAM, [](void *h, const World &, bool &c) { auto v = CUCORE_BACKEND_NVRTC; auto s = cucore_program_backend(as<P>(h), &v); c = v == CUCORE_BACKEND_DEFAULT; return s; }},
        {"cucore_program_arch", "program", CUCORE_OBJECT_PROGRAM, [](void *h, const World &, bool &c) { const char *v = "x"; auto s = cucore_program_arch(as<P>(h), &v); c = v == nullptr; return s; }},
        {"cucore_program_flags", "program", CUCORE_OBJECT_PROGRAM, [](void *h, const World &, bool &c) { char b[4] = "zz"; size_t n = 9; auto s = cucore_program_flags(as<P>(h), b, sizeof b, &n); c = n == 0 && b[0] == 0; return s; }},
        {"cucore_program_cache_key", "program", CUCORE_OBJECT_PROGRAM, [](void *h, const World &, bool &c) { uint8_t k[32]; std::memset(k, 7, sizeof k); auto s = cucore_program_cache_key(as<P>(h), CUCORE_CODE_CUBIN, nullptr, 0, k); c = k[0] == 0 && k[31] == 0; return s; }},
        {"cucore_program_cache_retain", "cache", CUCORE_OBJECT_PROGRAM_CACHE, [](void *h, const World &, bool &c) { c = true; return cucore_program_cache_retain(as<PC>(h)); }},
        {"cucore_program_cache_release", "cache", CUCORE_OBJECT_PROGRAM_CACHE, [](void *h, const World &, bool &c) { c = true; return cucore_program_cache_release(as<PC>(h)); }},
        {"cucore_program_cache_clear", "cache", CUCORE_OBJECT_PROGRAM_CACHE, [](void *h, const World &, bool &c) { c = true; return cucore_program_cache_clear(as<PC>(h)); }},
        {"cucore_program_cache_get", "cache", CUCORE_OBJECT_PROGRAM_CACHE, [](void *h, const World &, bool &c) { const uint8_t k[32] = {}; O *v = as<O>(h); auto s = cucore_program_cache_get(as<PC>(h), k, &v); c = v == nullptr; return s; }},
        {"cucore_program_cache_put", "cache", CUCORE_OBJECT_PROGRAM_CACHE, [](void *h, const World &w, bool &c) { const uint8_t k[32] = {}; c = true; return cucore_program_cache_put(as<PC>(h), k, w.object_code); }},
        {"cucore_program_cache_put", "object_code", CUCORE_OBJECT_OBJECT_CODE, [](void *h, const World &w, bool &c) { const uint8_t k[32] = {}; c = true; return cucore_program_cache_put(w.cache, k, as<O>(h)); }},
        {"cucore_program_cache_remove", "cache", CUCORE_OBJECT_PROGRAM_CACHE, [](void *h, const World &, bool &c) { const uint8_t k[32] = {}; int v = 7; auto s = cucore_program_cache_remove(as<PC>(h), k, &v); c = v == 0; return s; }},
        {"cucore_program_cache_stats", "cache", CUCORE_OBJECT_PROGRAM_CACHE, [](void *h, const World &, bool &c) { cucore_program_cache_stats_t v = CUCORE_PROGRAM_CACHE_STATS_INIT; c = true; return cucore_program_cache_stats(as<PC>(h), &v); }},
        {"cucore_object_code_retain", "object_code", CUCORE_OBJECT_OBJECT_CODE, [](void *h, const World &, bool &c) { c = true; return cucore_object_code_retain(as<O>(h)); }},
        {"cucore_object_code_release", "object_code", CUCORE_OBJECT_OBJECT_CODE, [](void *h, const World &, bool &c) { c = true; return cucore_object_code_release(as<O>(h)); }},
        {"cucore_object_code_load", "object_code", CUCORE_OBJECT_OBJECT_CODE, [](void *h, const World &, bool &c) { c = true; return cucore_object_code_load(as<O>(h)); }},
        {"cucore_object_code_code_type", "object_code", CUCORE_OBJECT_OBJECT_CODE, [](void *h, const World &, bool &c) { auto v = CUCORE_CODE_PTX; auto s = cucore_object_code_code_type(as<O>(h), &v); c = v == CUCORE_CODE_UNSET; return s; }},
        {"cucore_object_code_data", "object_code", CUCORE_OBJECT_OBJECT_CODE, [](void *h, const World &, bool &c) { const void *d = h; size_t n = 9; auto s = cucore_object_code_data(as<O>(h), &d, &n); c = d == nullptr && n == 0; return s; }},
        {"cucore_object_code_name", "object_code", CUCORE_OBJECT_OBJECT_CODE, [](void *h, const World &, bool &c) { const char *v = "x"; auto s = cucore_object_code_name(as<O>(h), &v); c = v == nullptr; return s; }},
        {"cucore_object_code_name_expression_count", "object_code", CUCORE_OBJECT_OBJECT_CODE, [](void *h, const World &, bool &c) { size_t v = 9; auto s = cucore_object_code_name_expression_count(as<O>(h), &v); c = v == 0; return s; }},
        {"cucore_object_code_name_expression", "object_code", CUCORE_OBJECT_OBJECT_CODE, [](void *h, const World &, bool &c) { const char *e = "x", *l = "y"; auto s = cucore_object_code_name_expression(as<O>(h), 0, &e, &l); c = e == nullptr && l == nullptr; return s; }},
        {"cucore_object_code_get_kernel", "object_code", CUCORE_OBJECT_OBJECT_CODE, [](void *h, const World &, bool &c) { K *v = as<K>(h); auto s = cucore_object_code_get_kernel(as<O>(h), "k", &v); c = v == nullptr; return s; }},
        {"cucore_object_code_kernel_count", "object_code", CUCORE_OBJECT_OBJECT_CODE, [](void *h, const World &, bool &c) { size_t v = 9; auto s = cucore_object_code_kernel_count(as<O>(h), &v); c = v == 0; return s; }},
        {"cucore_object_code_get_global", "object_code", CUCORE_OBJECT_OBJECT_CODE, [](void *h, const World &w, bool &c) { uint64_t a = 9; size_t n = 9; auto s = cucore_object_code_get_global(as<O>(h), w.device, "g", &a, &n); c = a == 0 && n == 0; return s; }},
        {"cucore_object_code_get_global", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { uint64_t a = 9; size_t n = 9; auto s = cucore_object_code_get_global(w.object_code, as<D>(h), "g", &a, &n); c = a == 0 && n == 0; return s; }},
        {"cucore_object_code_read_global", "object_code", CUCORE_OBJECT_OBJECT_CODE, [](void *h, const World &w, bool &c) { uint32_t v = 0; c = true; return cucore_object_code_read_global(as<O>(h), w.device, "g", &v, 4); }},
        {"cucore_object_code_read_global", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { uint32_t v = 0; c = true; return cucore_object_code_read_global(w.object_code, as<D>(h), "g", &v, 4); }},
        {"cucore_object_code_write_global", "object_code", CUCORE_OBJECT_OBJECT_CODE, [](void *h, const World &w, bool &c) { uint32_t v = 0; c = true; return cucore_object_code_write_global(as<O>(h), w.device, "g", &v, 4); }},
        {"cucore_object_code_write_global", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { uint32_t v = 0; c = true; return cucore_object_code_write_global(w.object_code, as<D>(h), "g", &v, 4); }},
        {"cucore_object_code_module", "object_code", CUCORE_OBJECT_OBJECT_CODE, [](void *h, const World &, bool &c) { void *v = h; auto s = cucore_object_code_module(as<O>(h), &v); c = v == nullptr; return s; }},
        {"cucore_object_code_handle", "object_code", CUCORE_OBJECT_OBJECT_CODE, [](void *h, const World &, bool &c) { void *v = h; auto s = cucore_object_code_handle(as<O>(h), &v); c = v == nullptr; return s; }},
        {"cucore_linker_create", "inputs[0]", CUCORE_OBJECT_OBJECT_CODE, [](void *h, const World &, bool &c) { O *in = as<O>(h); L *v = as<L>(h); auto s = cucore_linker_create(&in, 1, nullptr, &v); c = v == nullptr; return s; }},
        {"cucore_linker_retain", "linker", CUCORE_OBJECT_LINKER, [](void *h, const World &, bool &c) { c = true; return cucore_linker_retain(as<L>(h)); }},
        {"cucore_linker_release", "linker", CUCORE_OBJECT_LINKER, [](void *h, const World &, bool &c) { c = true; return cucore_linker_release(as<L>(h)); }},
        {"cucore_linker_link", "linker", CUCORE_OBJECT_LINKER, [](void *h, const World &, bool &c) { O *v = as<O>(h); auto s = cucore_linker_link(as<L>(h), CUCORE_CODE_CUBIN, &v); c = v == nullptr; return s; }},
        {"cucore_linker_error_log", "linker", CUCORE_OBJECT_LINKER, [](void *h, const World &, bool &c) { char b[4] = "zz"; size_t n = 9; auto s = cucore_linker_error_log(as<L>(h), b, sizeof b, &n); c = n == 0 && b[0] == 0; return s; }},
        {"cucore_linker_info_log", "linker", CUCORE_OBJECT_LINKER, [](void *h, const World &, bool &c) { char b[4] = "zz"; size_t n = 9; auto s = cucore_linker_info_log(as<L>(h), b, sizeof b, &n); c = n == 0 && b[0] == 0; return s; }},
        {"cucore_linker_backend", "linker", CUCORE_OBJECT_LINKER, [](void *h, const World &, bool &c) { auto v = CUCORE_BACKEND_NVRTC; auto s = cucore_linker_backend(as<L>(h), &v); c = v == CUCORE_BACKEND_DEFAULT; return s; }},
        {"cucore_kernel_retain", "kernel", CUCORE_OBJECT_KERNEL, [](void *h, const World &, bool &c) { c = true; return cucore_kernel_retain(as<K>(h)); }},
        {"cucore_kernel_release", "kernel", CUCORE_OBJECT_KERNEL, [](void *h, const World &, bool &c) { c = true; return cucore_kernel_release(as<K>(h)); }},
        {"cucore_kernel_name", "kernel", CUCORE_OBJECT_KERNEL, [](void *h, const World &, bool &c) { const char *v = "x"; auto s = cucore_kernel_name(as<K>(h), &v); c = v == nullptr; return s; }},
        {"cucore_kernel_attribute", "kernel", CUCORE_OBJECT_KERNEL, [](void *h, const World &w, bool &c) { int v = 9; auto s = cucore_kernel_attribute(as<K>(h), w.device, CUCORE_KERNEL_ATTRIBUTE_NUM_REGS, &v); c = v == 0; return s; }},
        {"cucore_kernel_attribute", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { int v = 9; auto s = cucore_kernel_attribute(w.kernel, as<D>(h), CUCORE_KERNEL_ATTRIBUTE_NUM_REGS, &v); c = v == 0; return s; }},
        {"cucore_kernel_set_attribute", "kernel", CUCORE_OBJECT_KERNEL, [](void *h, const World &w, bool &c) { c = true; return cucore_kernel_set_attribute(as<K>(h), w.device, CUCORE_KERNEL_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50); }},
        {"cucore_kernel_set_attribute", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { c = true; return cucore_kernel_set_attribute(w.kernel, as<D>(h), CUCORE_KERNEL_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 50); }},
        {"cucore_kernel_param_count", "kernel", CUCORE_OBJECT_KERNEL, [](void *h, const World &, bool &c) { size_t v = 9; auto s = cucore_kernel_param_count(as<K>(h), &v); c = v == 0; return s; }},
        {"cucore_kernel_param_info", "kernel", CUCORE_OBJECT_KERNEL, [](void *h, const World &, bool &c) { size_t o = 9, z = 9; auto s = cucore_kernel_param_info(as<K>(h), 0, &o, &z); c = o == 0 && z == 0; return s; }},
        {"cucore_kernel_max_active_blocks_per_multiprocessor", "kernel", CUCORE_OBJECT_KERNEL, [](void *h, const World &w, bool &c) { int v = 9; auto s = cucore_kernel_max_active_blocks_per_multiprocessor(as<K>(h), w.device, 64, 0, &v); c = v == 0; return s; }},
        {"cucore_kernel_max_active_blocks_per_multiprocessor", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { int v = 9; auto s = cucore_kernel_max_active_blocks_per_multiprocessor(w.kernel, as<D>(h), 64, 0, &v); c = v == 0; return s; }},
        {"cucore_kernel_max_potential_block_size", "kernel", CUCORE_OBJECT_KERNEL, [](void *h, const World &w, bool &c) { int g = 9, b = 9; auto s = cucore_kernel_max_potential_block_size(as<K>(h), w.device, 0, 0, &g, &b); c = g == 0 && b == 0; return s; }},
        {"cucore_kernel_max_potential_block_size", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { int g = 9, b = 9; auto s = cucore_kernel_max_potential_block_size(w.kernel, as<D>(h), 0, 0, &g, &b); c = g == 0 && b == 0; return s; }},
        {"cucore_kernel_available_dynamic_shared_memory", "kernel", CUCORE_OBJECT_KERNEL, [](void *h, const World &w, bool &c) { size_t v = 9; auto s = cucore_kernel_available_dynamic_shared_memory(as<K>(h), w.device, 1, 64, &v); c = v == 0; return s; }},
        {"cucore_kernel_available_dynamic_shared_memory", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { size_t v = 9; auto s = cucore_kernel_available_dynamic_shared_memory(w.kernel, as<D>(h), 1, 64, &v); c = v == 0; return s; }},
        {"cucore_kernel_handle", "kernel", CUCORE_OBJECT_KERNEL, [](void *h, const World &, bool &c) { void *v = h; auto s = cucore_kernel_handle(as<K>(h), &v); c = v == nullptr; return s; }},
        {"cucore_kernel_function", "kernel", CUCORE_OBJECT_KERNEL, [](void *h, const World &w, bool &c) { void *v = h; auto s = cucore_kernel_function(as<K>(h), w.device, &v); c = v == nullptr; return s; }},
        {"cucore_kernel_function", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { void *v = h; auto s = cucore_kernel_function(w.kernel, as<D>(h), &v); c = v == nullptr; return s; }},
        {"cucore_launch_config_validate", "kernel", CUCORE_OBJECT_KERNEL, [](void *h, const World &w, bool &c) { cucore_launch_config_t g = CUCORE_LAUNCH_CONFIG_INIT; c = true; return cucore_launch_config_validate(&g, as<K>(h), w.device); }},
        {"cucore_launch_config_validate", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { cucore_launch_config_t g = CUCORE_LAUNCH_CONFIG_INIT; c = true; return cucore_launch_config_validate(&g, w.kernel, as<D>(h)); }},
        {"cucore_launch", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { c = true; return cucore_launch(as<S>(h), nullptr, w.kernel, nullptr, nullptr, 0); }},
        {"cucore_launch", "kernel", CUCORE_OBJECT_KERNEL, [](void *h, const World &w, bool &c) { c = true; return cucore_launch(w.stream, nullptr, as<K>(h), nullptr, nullptr, 0); }},
        {"cucore_launch_block", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { cucore_launch_block_t b = CUCORE_LAUNCH_BLOCK_INIT; b.stream = as<S>(h); b.kernel = w.kernel; c = true; return cucore_launch_block(&b); }},
        {"cucore_launch_block", "kernel", CUCORE_OBJECT_KERNEL, [](void *h, const World &w, bool &c) { cucore_launch_block_t b = CUCORE_LAUNCH_BLOCK_INIT; b.stream = w.stream; b.kernel = as<K>(h); c = true; return cucore_launch_block(&b); }},
        {"cucore_launch_max_potential_cluster_size", "kernel", CUCORE_OBJECT_KERNEL, [](void *h, const World &w, bool &c) { cucore_launch_config_t g = CUCORE_LAUNCH_CONFIG_INIT; int v = 9; auto s = cucore_launch_max_potential_cluster_size(&g, as<K>(h), w.device, &v); c = v == 0; return s; }},
        {"cucore_launch_max_potential_cluster_size", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { cucore_launch_config_t g = CUCORE_LAUNCH_CONFIG_INIT; int v = 9; auto s = cucore_launch_max_potential_cluster_size(&g, w.kernel, as<D>(h), &v); c = v == 0; return s; }},
        {"cucore_launch_max_active_clusters", "kernel", CUCORE_OBJECT_KERNEL, [](void *h, const World &w, bool &c) { cucore_launch_config_t g = CUCORE_LAUNCH_CONFIG_INIT; g.cluster[0] = 2; int v = 9; auto s = cucore_launch_max_active_clusters(&g, as<K>(h), w.device, &v); c = v == 0; return s; }},
        {"cucore_launch_max_active_clusters", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { cucore_launch_config_t g = CUCORE_LAUNCH_CONFIG_INIT; g.cluster[0] = 2; int v = 9; auto s = cucore_launch_max_active_clusters(&g, w.kernel, as<D>(h), &v); c = v == 0; return s; }},
        // Opaque arrays and mipmapped arrays.
        {"cucore_opaque_array_create", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { cucore_opaque_array_options_t o = CUCORE_OPAQUE_ARRAY_OPTIONS_INIT; o.format = CUCORE_ARRAY_FORMAT_UINT8; o.width = 4; A *v = as<A>(h); auto s = cucore_opaque_array_create(as<D>(h), &o, &v); c = v == nullptr; return s; }},
        {"cucore_opaque_array_from_handle", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { A *v = as<A>(h); auto s = cucore_opaque_array_from_handle(as<D>(h), w.cu_array, nullptr, nullptr, &v); c = v == nullptr; return s; }},
        {"cucore_opaque_array_retain", "array", CUCORE_OBJECT_OPAQUE_ARRAY, [](void *h, const World &, bool &c) { c = true; return cucore_opaque_array_retain(as<A>(h)); }},
        {"cucore_opaque_array_release", "array", CUCORE_OBJECT_OPAQUE_ARRAY, [](void *h, const World &, bool &c) { c = true; return cucore_opaque_array_release(as<A>(h)); }},
        {"cucore_opaque_array_close", "array", CUCORE_OBJECT_OPAQUE_ARRAY, [](void *h, const World &, bool &c) { c = true; return cucore_opaque_array_close(as<A>(h)); }},
        {"cucore_opaque_array_info", "array", CUCORE_OBJECT_OPAQUE_ARRAY, [](void *h, const World &, bool &c) { cucore_opaque_array_info_t i = CUCORE_OPAQUE_ARRAY_INFO_INIT; c = true; return cucore_opaque_array_info(as<A>(h), &i); }},
        {"cucore_opaque_array_handle", "array", CUCORE_OBJECT_OPAQUE_ARRAY, [](void *h, const World &, bool &c) { void *v = h; auto s = cucore_opaque_array_handle(as<A>(h), &v); c = v == nullptr; return s; }},
        {"cucore_opaque_array_copy_from_host", "array", CUCORE_OBJECT_OPAQUE_ARRAY, [](void *h, const World &w, bool &c) { char x[256] = {}; c = true; return cucore_opaque_array_copy_from_host(as<A>(h), x, sizeof x, w.stream); }},
        {"cucore_opaque_array_copy_from_host", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { char x[256] = {}; c = true; return cucore_opaque_array_copy_from_host(w.array, x, sizeof x, as<S>(h)); }},
        {"cucore_opaque_array_copy_to_host", "array", CUCORE_OBJECT_OPAQUE_ARRAY, [](void *h, const World &w, bool &c) { char x[256]; c = true; return cucore_opaque_array_copy_to_host(as<A>(h), x, sizeof x, w.stream); }},
        {"cucore_opaque_array_copy_to_host", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { char x[256]; c = true; return cucore_opaque_array_copy_to_host(w.array, x, sizeof x, as<S>(h)); }},
        {"cucore_opaque_array_copy_from_buffer", "array", CUCORE_OBJECT_OPAQUE_ARRAY, [](void *h, const World &w, bool &c) { c = true; return cucore_opaque_array_copy_from_buffer(as<A>(h), w.buffer, w.stream); }},
        {"cucore_opaque_array_copy_from_buffer", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { c = true; return cucore_opaque_array_copy_from_buffer(w.array, as<B>(h), w.stream); }},
        {"cucore_opaque_array_copy_from_buffer", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { c = true; return cucore_opaque_array_copy_from_buffer(w.array, w.buffer, as<S>(h)); }},
        {"cucore_opaque_array_copy_to_buffer", "array", CUCORE_OBJECT_OPAQUE_ARRAY, [](void *h, const World &w, bool &c) { c = true; return cucore_opaque_array_copy_to_buffer(as<A>(h), w.buffer, w.stream); }},
        {"cucore_opaque_array_copy_to_buffer", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { c = true; return cucore_opaque_array_copy_to_buffer(w.array, as<B>(h), w.stream); }},
        {"cucore_opaque_array_copy_to_buffer", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { c = true; return cucore_opaque_array_copy_to_buffer(w.array, w.buffer, as<S>(h)); }},
        {"cucore_opaque_array_copy_from_array", "array", CUCORE_OBJECT_OPAQUE_ARRAY, [](void *h, const World &w, bool &c) { c = true; return cucore_opaque_array_copy_from_array(as<A>(h), w.array, w.stream); }},
        {"cucore_opaque_array_copy_from_array", "src", CUCORE_OBJECT_OPAQUE_ARRAY, [](void *h, const World &w, bool &c) { c = true; return cucore_opaque_array_copy_from_array(w.array, as<A>(h), w.stream); }},
        {"cucore_opaque_array_copy_from_array", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &w, bool &c) { c = true; return cucore_opaque_array_copy_from_array(w.array, w.array, as<S>(h)); }},
        {"cucore_opaque_array_copy", "copy.src_array.array", CUCORE_OBJECT_OPAQUE_ARRAY, [region](void *h, const World &w, bool &c) { cucore_opaque_array_copy_t k = region(w, true); k.src_array.array = as<A>(h); c = true; return cucore_opaque_array_copy(&k, w.stream); }},
        {"cucore_opaque_array_copy", "copy.dst_array.array", CUCORE_OBJECT_OPAQUE_ARRAY, [region](void *h, const World &w, bool &c) { cucore_opaque_array_copy_t k = region(w, false); k.dst_array.array = as<A>(h); c = true; return cucore_opaque_array_copy(&k, w.stream); }},
        {"cucore_opaque_array_copy", "copy.src_memory.buffer", CUCORE_OBJECT_BUFFER, [region](void *h, const World &w, bool &c) { cucore_opaque_array_copy_t k = region(w, false); k.src_memory.host = nullptr; k.src_memory.buffer = as<B>(h); c = true; return cucore_opaque_array_copy(&k, w.stream); }},
        {"cucore_opaque_array_copy", "copy.dst_memory.buffer", CUCORE_OBJECT_BUFFER, [region](void *h, const World &w, bool &c) { cucore_opaque_array_copy_t k = region(w, true); k.dst_memory.host = nullptr; k.dst_memory.buffer = as<B>(h); c = true; return cucore_opaque_array_copy(&k, w.stream); }},
        {"cucore_opaque_array_copy", "stream", CUCORE_OBJECT_STREAM, [region](void *h, const World &w, bool &c) { cucore_opaque_array_copy_t k = region(w, true); c = true; return cucore_opaque_array_copy(&k, as<S>(h)); }},
        {"cucore_mipmapped_array_create", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { cucore_opaque_array_options_t o = CUCORE_OPAQUE_ARRAY_OPTIONS_INIT; o.format = CUCORE_ARRAY_FORMAT_UINT8; o.width = 4; MA *v = as<MA>(h); auto s = cucore_mipmapped_array_create(as<D>(h), &o, 1, &v); c = v == nullptr; return s; }},
        {"cucore_mipmapped_array_from_handle", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { MA *v = as<MA>(h); auto s = cucore_mipmapped_array_from_handle(as<D>(h), w.cu_mipmapped, nullptr, nullptr, &v); c = v == nullptr; return s; }},
        {"cucore_mipmapped_array_retain", "mipmapped_array", CUCORE_OBJECT_MIPMAPPED_ARRAY, [](void *h, const World &, bool &c) { c = true; return cucore_mipmapped_array_retain(as<MA>(h)); }},
        {"cucore_mipmapped_array_release", "mipmapped_array", CUCORE_OBJECT_MIPMAPPED_ARRAY, [](void *h, const World &, bool &c) { c = true; return cucore_mipmapped_array_release(as<MA>(h)); }},
        {"cucore_mipmapped_array_close", "mipmapped_array", CUCORE_OBJECT_MIPMAPPED_ARRAY, [](void *h, const World &, bool &c) { c = true; return cucore_mipmapped_array_close(as<MA>(h)); }},
        {"cucore_mipmapped_array_info", "mipmapped_array", CUCORE_OBJECT_MIPMAPPED_ARRAY, [](void *h, const World &, bool &c) { cucore_opaque_array_info_t i = CUCORE_OPAQUE_ARRAY_INFO_INIT; c = true; return cucore_mipmapped_array_info(as<MA>(h), &i); }},
        {"cucore_mipmapped_array_handle", "mipmapped_array", CUCORE_OBJECT_MIPMAPPED_ARRAY, [](void *h, const World &, bool &c) { void *v = h; auto s = cucore_mipmapped_array_handle(as<MA>(h), &v); c = v == nullptr; return s; }},
        {"cucore_mipmapped_array_level", "mipmapped_array", CUCORE_OBJECT_MIPMAPPED_ARRAY, [](void *h, const World &, bool &c) { A *v = as<A>(h); auto s = cucore_mipmapped_array_level(as<MA>(h), 0, &v); c = v == nullptr; return s; }},
        // Texture and surface objects.
        {"cucore_texture_object_create", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { const cucore_resource_descriptor_t r = World::array_resource(w.array); T *v = as<T>(h); auto s = cucore_texture_object_create(as<D>(h), &r, nullptr, &v); c = v == nullptr; return s; }},
        {"cucore_texture_object_create", "resource.array", CUCORE_OBJECT_OPAQUE_ARRAY, [](void *h, const World &, bool &c) { const cucore_resource_descriptor_t r = World::array_resource(as<A>(h)); T *v = as<T>(h); auto s = cucore_texture_object_create(nullptr, &r, nullptr, &v); c = v == nullptr; return s; }},
        {"cucore_texture_object_create", "resource.mipmapped_array", CUCORE_OBJECT_MIPMAPPED_ARRAY, [](void *h, const World &, bool &c) { cucore_resource_descriptor_t r = CUCORE_RESOURCE_DESCRIPTOR_INIT; r.kind = CUCORE_RESOURCE_KIND_MIPMAPPED_ARRAY; r.mipmapped_array = as<MA>(h); T *v = as<T>(h); auto s = cucore_texture_object_create(nullptr, &r, nullptr, &v); c = v == nullptr; return s; }},
        {"cucore_texture_object_create", "resource.buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &, bool &c) { cucore_resource_descriptor_t r = CUCORE_RESOURCE_DESCRIPTOR_INIT; r.kind = CUCORE_RESOURCE_KIND_LINEAR; r.buffer = as<B>(h); r.format = CUCORE_ARRAY_FORMAT_UINT8; T *v = as<T>(h); auto s = cucore_texture_object_create(nullptr, &r, nullptr, &v); c = v == nullptr; return s; }},
        {"cucore_texture_object_retain", "texture", CUCORE_OBJECT_TEXTURE_OBJECT, [](void *h, const World &, bool &c) { c = true; return cucore_texture_object_retain(as<T>(h)); }},
        {"cucore_texture_object_release", "texture", CUCORE_OBJECT_TEXTURE_OBJECT, [](void *h, const World &, bool &c) { c = true; return cucore_texture_object_release(as<T>(h)); }},
        {"cucore_texture_object_close", "texture", CUCORE_OBJECT_TEXTURE_OBJECT, [](void *h, const World &, bool &c) { c = true; return cucore_texture_object_close(as<T>(h)); }},
        {"cucore_texture_object_handle", "texture", CUCORE_OBJECT_TEXTURE_OBJECT, [](void *h, const World &, bool &c) { uint64_t v = 9; auto s = cucore_texture_object_handle(as<T>(h), &v); c = v == 0; return s; }},
        {"cucore_surface_object_create", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { const cucore_resource_descriptor_t r = World::array_resource(w.array); SO *v = as<SO>(h); auto s = cucore_surface_object_create(as<D>(h), &r, &v); c = v == nullptr; return s; }},
        {"cucore_surface_object_create", "resource.array", CUCORE_OBJECT_OPAQUE_ARRAY, [](void *h, const World &, bool &c) { const cucore_resource_descriptor_t r = World::array_resource(as<A>(h)); SO *v = as<SO>(h); auto s = cucore_surface_object_create(nullptr, &r, &v); c = v == nullptr; return s; }},
        {"cucore_surface_object_retain", "surface", CUCORE_OBJECT_SURFACE_OBJECT, [](void *h, const World &, bool &c) { c = true; return cucore_surface_object_retain(as<SO>(h)); }},
        {"cucore_surface_object_release", "surface", CUCORE_OBJECT_SURFACE_OBJECT, [](void *h, const World &, bool &c) { c = true; return cucore_surface_object_release(as<SO>(h)); }},
        {"cucore_surface_object_close", "surface", CUCORE_OBJECT_SURFACE_OBJECT, [](void *h, const World &, bool &c) { c = true; return cucore_surface_object_close(as<SO>(h)); }},
        {"cucore_surface_object_handle", "surface", CUCORE_OBJECT_SURFACE_OBJECT, [](void *h, const World &, bool &c) { uint64_t v = 9; auto s = cucore_surface_object_handle(as<SO>(h), &v); c = v == 0; return s; }},
        {"cucore_tensor_map_descriptor_create_tiled", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &, bool &c) { const cucore_tensor_map_layout_t l = World::tensor_map_layout(); const uint32_t box[1] = {16}; TM *v = as<TM>(h); auto s = cucore_tensor_map_descriptor_create_tiled(as<B>(h), 0, &l, box, nullptr, &v); c = v == nullptr; return s; }},
        {"cucore_tensor_map_descriptor_create_im2col", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &, bool &c) { const cucore_tensor_map_layout_t l = World::tensor_map_layout(); const int32_t k[3] = {}; TM *v = as<TM>(h); auto s = cucore_tensor_map_descriptor_create_im2col(as<B>(h), 0, &l, k, k, 4, 4, nullptr, &v); c = v == nullptr; return s; }},
        {"cucore_tensor_map_descriptor_create_im2col_wide", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &, bool &c) { const cucore_tensor_map_layout_t l = World::tensor_map_layout(); TM *v = as<TM>(h); auto s = cucore_tensor_map_descriptor_create_im2col_wide(as<B>(h), 0, &l, 0, 0, 4, 4, nullptr, &v); c = v == nullptr; return s; }},
        {"cucore_tensor_map_descriptor_retain", "descriptor", CUCORE_OBJECT_TENSOR_MAP_DESCRIPTOR, [](void *h, const World &, bool &c) { c = true; return cucore_tensor_map_descriptor_retain(as<TM>(h)); }},
        {"cucore_tensor_map_descriptor_release", "descriptor", CUCORE_OBJECT_TENSOR_MAP_DESCRIPTOR, [](void *h, const World &, bool &c) { c = true; return cucore_tensor_map_descriptor_release(as<TM>(h)); }},
        {"cucore_tensor_map_descriptor_replace_address", "descriptor", CUCORE_OBJECT_TENSOR_MAP_DESCRIPTOR, [](void *h, const World &w, bool &c) { c = true; return cucore_tensor_map_descriptor_replace_address(as<TM>(h), w.buffer, 0); }},
        {"cucore_tensor_map_descriptor_replace_address", "buffer", CUCORE_OBJECT_BUFFER, [](void *h, const World &w, bool &c) { c = true; return cucore_tensor_map_descriptor_replace_address(w.tensor_map, as<B>(h), 0); }},
        {"cucore_tensor_map_descriptor_data", "descriptor", CUCORE_OBJECT_TENSOR_MAP_DESCRIPTOR, [](void *h, const World &, bool &c) { const void *v = &c; auto s = cucore_tensor_map_descriptor_data(as<TM>(h), &v); c = v == nullptr; return s; }},
        {"cucore_tensor_map_descriptor_copy", "descriptor", CUCORE_OBJECT_TENSOR_MAP_DESCRIPTOR, [](void *h, const World &, bool &c) { unsigned char v[128]; c = true; return cucore_tensor_map_descriptor_copy(as<TM>(h), v, sizeof v); }},
        {"cucore_tensor_map_descriptor_address", "descriptor", CUCORE_OBJECT_TENSOR_MAP_DESCRIPTOR, [](void *h, const World &, bool &c) { uint64_t v = 9; auto s = cucore_tensor_map_descriptor_address(as<TM>(h), &v); c = v == 0; return s; }},
        {"cucore_tensor_map_descriptor_kind", "descriptor", CUCORE_OBJECT_TENSOR_MAP_DESCRIPTOR, [](void *h, const World &, bool &c) { cucore_tensor_map_kind_t v = CUCORE_TENSOR_MAP_KIND_TILED; auto s = cucore_tensor_map_descriptor_kind(as<TM>(h), &v); c = v == 0; return s; }},
        // device resources and green contexts (device_resources.h, context.h)
        {"cucore_sm_resource_of_device", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { SM *v = as<SM>(h); auto s = cucore_sm_resource_of_device(as<D>(h), &v); c = v == nullptr; return s; }},
        {"cucore_sm_resource_of_context", "context", CUCORE_OBJECT_CONTEXT, [](void *h, const World &, bool &c) { SM *v = as<SM>(h); auto s = cucore_sm_resource_of_context(as<C>(h), &v); c = v == nullptr; return s; }},
        {"cucore_sm_resource_of_stream", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &, bool &c) { SM *v = as<SM>(h); auto s = cucore_sm_resource_of_stream(as<S>(h), &v); c = v == nullptr; return s; }},
        {"cucore_sm_resource_info", "resource", CUCORE_OBJECT_SM_RESOURCE, [](void *h, const World &, bool &c) { cucore_sm_resource_info_t v = CUCORE_SM_RESOURCE_INFO_INIT; auto s = cucore_sm_resource_info(as<SM>(h), &v); c = v.sm_count == 0; return s; }},
        {"cucore_sm_resource_split", "resource", CUCORE_OBJECT_SM_RESOURCE, [](void *h, const World &, bool &c) { SM *g[2] = {as<SM>(h), as<SM>(h)}; SM *r = as<SM>(h); uint32_t n = 9; auto s = cucore_sm_resource_split(as<SM>(h), nullptr, g, 2, &n, &r); c = g[0] == nullptr && g[1] == nullptr && r == nullptr && n == 0; return s; }},
        {"cucore_sm_resource_split_dry_run", "resource", CUCORE_OBJECT_SM_RESOURCE, [](void *h, const World &, bool &c) { cucore_sm_resource_split_info_t v = CUCORE_SM_RESOURCE_SPLIT_INFO_INIT; auto s = cucore_sm_resource_split_dry_run(as<SM>(h), nullptr, &v); c = v.group_count == 0; return s; }},
        {"cucore_sm_resource_retain", "resource", CUCORE_OBJECT_SM_RESOURCE, [](void *h, const World &, bool &c) { c = true; return cucore_sm_resource_retain(as<SM>(h)); }},
        {"cucore_sm_resource_release", "resource", CUCORE_OBJECT_SM_RESOURCE, [](void *h, const World &, bool &c) { c = true; return cucore_sm_resource_release(as<SM>(h)); }},
        {"cucore_workqueue_resource_of_device", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { WQ *v = as<WQ>(h); auto s = cucore_workqueue_resource_of_device(as<D>(h), &v); c = v == nullptr; return s; }},
        {"cucore_workqueue_resource_of_context", "context", CUCORE_OBJECT_CONTEXT, [](void *h, const World &, bool &c) { WQ *v = as<WQ>(h); auto s = cucore_workqueue_resource_of_context(as<C>(h), &v); c = v == nullptr; return s; }},
        {"cucore_workqueue_resource_of_stream", "stream", CUCORE_OBJECT_STREAM, [](void *h, const World &, bool &c) { WQ *v = as<WQ>(h); auto s = cucore_workqueue_resource_of_stream(as<S>(h), &v); c = v == nullptr; return s; }},
        {"cucore_workqueue_resource_info", "resource", CUCORE_OBJECT_WORKQUEUE_RESOURCE, [](void *h, const World &, bool &c) { cucore_workqueue_resource_info_t v = CUCORE_WORKQUEUE_RESOURCE_INFO_INIT; auto s = cucore_workqueue_resource_info(as<WQ>(h), &v); c = v.concurrency_limit == 0; return s; }},
        {"cucore_workqueue_resource_configure", "resource", CUCORE_OBJECT_WORKQUEUE_RESOURCE, [](void *h, const World &, bool &c) { c = true; return cucore_workqueue_resource_configure(as<WQ>(h), nullptr); }},
        {"cucore_workqueue_resource_device", "resource", CUCORE_OBJECT_WORKQUEUE_RESOURCE, [](void *h, const World &, bool &c) { D *v = as<D>(h); auto s = cucore_workqueue_resource_device(as<WQ>(h), &v); c = v == nullptr; return s; }},
        {"cucore_workqueue_resource_retain", "resource", CUCORE_OBJECT_WORKQUEUE_RESOURCE, [](void *h, const World &, bool &c) { c = true; return cucore_workqueue_resource_retain(as<WQ>(h)); }},
        {"cucore_workqueue_resource_release", "resource", CUCORE_OBJECT_WORKQUEUE_RESOURCE, [](void *h, const World &, bool &c) { c = true; return cucore_workqueue_resource_release(as<WQ>(h)); }},
        {"cucore_context_create", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &w, bool &c) { cucore_context_options_t o = CUCORE_CONTEXT_OPTIONS_INIT; o.sm_resource_count = 1; o.sm_resources = &w.sm_resource; C *v = as<C>(h); auto s = cucore_context_create(as<D>(h), &o, &v); c = v == nullptr; return s; }},
        {"cucore_context_create", "options.sm_resources[0]", CUCORE_OBJECT_SM_RESOURCE, [](void *h, const World &w, bool &c) { SM *r = as<SM>(h); cucore_context_options_t o = CUCORE_CONTEXT_OPTIONS_INIT; o.sm_resource_count = 1; o.sm_resources = &r; C *v = as<C>(h); auto s = cucore_context_create(w.device, &o, &v); c = v == nullptr; return s; }},
        {"cucore_context_create", "options.workqueue_resources[0]", CUCORE_OBJECT_WORKQUEUE_RESOURCE, [](void *h, const World &w, bool &c) { WQ *q = as<WQ>(h); cucore_context_options_t o = CUCORE_CONTEXT_OPTIONS_INIT; o.workqueue_resource_count = 1; o.workqueue_resources = &q; C *v = as<C>(h); auto s = cucore_context_create(w.device, &o, &v); c = v == nullptr; return s; }},
        {"cucore_context_is_green", "context", CUCORE_OBJECT_CONTEXT, [](void *h, const World &, bool &c) { int v = 9; auto s = cucore_context_is_green(as<C>(h), &v); c = v == 0; return s; }},
        {"cucore_context_green_handle", "context", CUCORE_OBJECT_CONTEXT, [](void *h, const World &, bool &c) { void *v = h; auto s = cucore_context_green_handle(as<C>(h), &v); c = v == nullptr; return s; }},
        // Node updates that replace an event or a child graph (issue 17).
        {"cucore_graph_node_set_event", "node", CUCORE_OBJECT_GRAPH_NODE, [](void *h, const World &w, bool &c) { c = true; return cucore_graph_node_set_event(as<GN>(h), w.event); }},
        {"cucore_graph_node_set_event", "event", CUCORE_OBJECT_EVENT, [](void *h, const World &w, bool &c) { c = true; return cucore_graph_node_set_event(w.record_node, as<E>(h)); }},
        {"cucore_graph_node_set_child_graph", "node", CUCORE_OBJECT_GRAPH_NODE, [](void *h, const World &w, bool &c) { c = true; return cucore_graph_node_set_child_graph(as<GN>(h), w.child); }},
        {"cucore_graph_node_set_child_graph", "child", CUCORE_OBJECT_GRAPH_DEFINITION, [](void *h, const World &w, bool &c) { c = true; return cucore_graph_node_set_child_graph(w.child_node, as<GD>(h)); }},
        {"cucore_graph_set_event_node", "graph", CUCORE_OBJECT_GRAPH, [](void *h, const World &w, bool &c) { c = true; return cucore_graph_set_event_node(as<G>(h), w.record_node, w.event); }},
        {"cucore_graph_set_event_node", "node", CUCORE_OBJECT_GRAPH_NODE, [](void *h, const World &w, bool &c) { c = true; return cucore_graph_set_event_node(w.graph, as<GN>(h), w.event); }},
        {"cucore_graph_set_event_node", "event", CUCORE_OBJECT_EVENT, [](void *h, const World &w, bool &c) { c = true; return cucore_graph_set_event_node(w.graph, w.record_node, as<E>(h)); }},
        {"cucore_graph_set_child_graph_node", "graph", CUCORE_OBJECT_GRAPH, [](void *h, const World &w, bool &c) { c = true; return cucore_graph_set_child_graph_node(as<G>(h), w.child_node, w.child); }},
        {"cucore_graph_set_child_graph_node", "node", CUCORE_OBJECT_GRAPH_NODE, [](void *h, const World &w, bool &c) { c = true; return cucore_graph_set_child_graph_node(w.graph, as<GN>(h), w.child); }},
        {"cucore_graph_set_child_graph_node", "child", CUCORE_OBJECT_GRAPH_DEFINITION, [](void *h, const World &w, bool &c) { c = true; return cucore_graph_set_child_graph_node(w.graph, w.child_node, as<GD>(h)); }},
    };
    return calls;
}

// Arguments for which NULL means something (a default), tested with their capability (buffer_test.cpp,
// memory_resource_test.cpp, ...).
bool null_allowed(const Call &call) {
    return (call.name == "cucore_buffer_close" && call.argument == "stream") ||
           (call.name == "cucore_buffer_dispose" && call.argument == "stream") ||
           (call.name == "cucore_buffer_from_handle" && call.argument == "device") ||
           (call.name == "cucore_memory_resource_allocate" && call.argument == "stream") ||
           (call.name == "cucore_device_set_memory_resource" && call.argument == "resource") ||
           (call.name == "cucore_device_allocate" && call.argument == "stream") ||
           (call.name == "cucore_program_compile" && call.argument == "cache") ||  // no cache
           (call.name == "cucore_copy_3d" && call.argument != "stream") ||  // NULL buffer: the host side
           (call.name == "cucore_copy_batch" && call.argument != "stream") ||  // NULL buffer: a pointer side
           (call.name == "cucore_copy_3d_batch" && call.argument != "stream") ||  // NULL buffer: the host side
           (call.name.rfind("cucore_stream_w", 0) == 0 && call.argument == "buffer") ||  // NULL: an address
           (call.name == "cucore_stream_batch_memory_ops" && call.argument != "stream") ||  // NULL: an address
           (call.name == "cucore_opaque_array_copy" && call.argument != "stream") ||  // NULL: the other kind of side
           (call.name == "cucore_texture_object_create" && call.argument == "device") ||  // the resource's device
           (call.name == "cucore_surface_object_create" && call.argument == "device") ||
           // NULL buffer: a raw address (0 is then refused as INVALID_ARGUMENT, tensor_map_test.cpp)
           (call.name.rfind("cucore_tensor_map_descriptor_", 0) == 0 && call.argument == "buffer");
}

bool is_release(const Call &call) { return call.name.size() > 8 && call.name.rfind("_release") == call.name.size() - 8; }

// A released handle of `type`, made through the fake driver.
void *released_handle(cucore_object_type_t type, cucore_device_t *device) {
    void *handle = nullptr;
    switch (type) {
        case CUCORE_OBJECT_DEVICE: {
            cucore_device_t *d = nullptr;
            cucore_device_get(0, &d);
            cucore_device_release(d);
            handle = d;
            break;
        }
        case CUCORE_OBJECT_CONTEXT: {
            // Not the primary context: the World holds that one.
            cucore_context_t *c = nullptr;
            cucore_context_from_handle(fake::make_foreign_context(0), nullptr, nullptr, &c);
            cucore_context_release(c);
            handle = c;
            break;
        }
        case CUCORE_OBJECT_STREAM: {
            cucore_stream_t *s = nullptr;
            cucore_stream_create(device, nullptr, &s);
            cucore_stream_release(s);
            handle = s;
            break;
        }
        case CUCORE_OBJECT_MEMORY_RESOURCE: {
            cucore_memory_resource_t *m = nullptr;
            cucore_device_memory_resource_create(device, nullptr, &m);
            cucore_memory_resource_release(m);
            handle = m;
            break;
        }
        case CUCORE_OBJECT_PROGRAM: {
            cucore_program_t *p = World::make_program();
            cucore_program_release(p);
            handle = p;
            break;
        }
        case CUCORE_OBJECT_OBJECT_CODE: {
            cucore_object_code_t *o = World::make_object_code();
            cucore_object_code_release(o);
            handle = o;
            break;
        }
        case CUCORE_OBJECT_LINKER: {
            cucore_object_code_t *o = World::make_object_code();
            cucore_linker_t *l = World::make_linker(o);
            cucore_linker_release(l);
            cucore_object_code_release(o);
            handle = l;
            break;
        }
        case CUCORE_OBJECT_PROGRAM_CACHE: {
            cucore_program_cache_t *c = nullptr;
            cucore_program_cache_create_in_memory(0, &c);
            cucore_program_cache_release(c);
            handle = c;
            break;
        }
        case CUCORE_OBJECT_KERNEL: {
            cucore_kernel_t *k = nullptr;
            cucore_kernel_from_handle(fake::make_kernel(), nullptr, nullptr, &k);
            cucore_kernel_release(k);
            handle = k;
            break;
        }
        case CUCORE_OBJECT_BUFFER: {
            cucore_buffer_t *b = nullptr;
            cucore_buffer_from_handle(0x1000, 16, device, nullptr, nullptr, &b);
            cucore_buffer_release(b);
            handle = b;
            break;
        }
        case CUCORE_OBJECT_OPAQUE_ARRAY: {
            cucore_opaque_array_t *a = World::make_array(device);
            cucore_opaque_array_release(a);
            handle = a;
            break;
        }
        case CUCORE_OBJECT_MIPMAPPED_ARRAY: {
            cucore_mipmapped_array_t *m = World::make_mipmapped(device);
            cucore_mipmapped_array_release(m);
            handle = m;
            break;
        }
        case CUCORE_OBJECT_TEXTURE_OBJECT: {
            cucore_opaque_array_t *a = World::make_array(device);
            const cucore_resource_descriptor_t r = World::array_resource(a);
            cucore_texture_object_t *t = nullptr;
            cucore_texture_object_create(nullptr, &r, nullptr, &t);
            cucore_texture_object_release(t);
            cucore_opaque_array_release(a);
            handle = t;
            break;
        }
        case CUCORE_OBJECT_SURFACE_OBJECT: {
            cucore_opaque_array_t *a = World::make_array(device, CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE);
            const cucore_resource_descriptor_t r = World::array_resource(a);
            cucore_surface_object_t *so = nullptr;
            cucore_surface_object_create(nullptr, &r, &so);
            cucore_surface_object_release(so);
            cucore_opaque_array_release(a);
            handle = so;
            break;
        }
        case CUCORE_OBJECT_TENSOR_MAP_DESCRIPTOR: {
            cucore_buffer_t *b = nullptr;
            cucore_buffer_from_handle(0x1000, 64, device, nullptr, nullptr, &b);  // wrapped: nothing to free
            cucore_tensor_map_descriptor_t *d = World::make_tensor_map(b);
            cucore_tensor_map_descriptor_release(d);
            cucore_buffer_release(b);
            handle = d;
            break;
        }
        case CUCORE_OBJECT_SM_RESOURCE: {
            cucore_sm_resource_t *r = nullptr;
            cucore_sm_resource_of_device(device, &r);
            cucore_sm_resource_release(r);
            handle = r;
            break;
        }
        case CUCORE_OBJECT_WORKQUEUE_RESOURCE: {
            cucore_workqueue_resource_t *q = World::make_workqueue(device);
            cucore_workqueue_resource_release(q);
            handle = q;
            break;
        }
        case CUCORE_OBJECT_GRAPH_DEFINITION: {
            cucore_graph_definition_t *g = nullptr;
            cucore_graph_definition_create(device, &g);
            cucore_graph_definition_release(g);
            handle = g;
            break;
        }
        case CUCORE_OBJECT_GRAPH_NODE: {
            cucore_graph_definition_t *g = nullptr;
            cucore_graph_definition_create(device, &g);
            cucore_graph_node_t *n = nullptr;
            cucore_graph_definition_add_empty(g, nullptr, 0, &n);
            cucore_graph_node_release(n);
            cucore_graph_definition_release(g);
            handle = n;
            break;
        }
        case CUCORE_OBJECT_GRAPH: {
            cucore_graph_definition_t *g = nullptr;
            cucore_graph_definition_create(device, &g);
            cucore_graph_t *x = nullptr;
            cucore_graph_definition_instantiate(g, nullptr, &x);
            cucore_graph_release(x);
            cucore_graph_definition_release(g);
            handle = x;
            break;
        }
        default: {
            cucore_event_t *e = nullptr;
            cucore_event_create(device, nullptr, &e);
            cucore_event_release(e);
            handle = e;
            break;
        }
    }
    return handle;
}

void *handle_of_type(cucore_object_type_t type, const World &w) {
    switch (type) {
        case CUCORE_OBJECT_DEVICE: return w.device;
        case CUCORE_OBJECT_CONTEXT: return w.context;
        case CUCORE_OBJECT_STREAM: return w.stream;
        case CUCORE_OBJECT_MEMORY_RESOURCE: return w.resource;
        case CUCORE_OBJECT_BUFFER: return w.buffer;
        case CUCORE_OBJECT_KERNEL: return w.kernel;
        case CUCORE_OBJECT_PROGRAM: return w.program;
        case CUCORE_OBJECT_OBJECT_CODE: return w.object_code;
        case CUCORE_OBJECT_LINKER: return w.linker;
        case CUCORE_OBJECT_PROGRAM_CACHE: return w.cache;
        case CUCORE_OBJECT_OPAQUE_ARRAY: return w.array;
        case CUCORE_OBJECT_MIPMAPPED_ARRAY: return w.mipmapped;
        case CUCORE_OBJECT_TEXTURE_OBJECT: return w.texture;
        case CUCORE_OBJECT_SURFACE_OBJECT: return w.surface;
        case CUCORE_OBJECT_TENSOR_MAP_DESCRIPTOR: return w.tensor_map;
        case CUCORE_OBJECT_SM_RESOURCE: return w.sm_resource;
        case CUCORE_OBJECT_WORKQUEUE_RESOURCE: return w.workqueue;
        default: return w.event;
    }
}

class HandleTest : public FakeDriverTest {
  protected:
    void expect_rejected(const Call &call, void *handle, const World &w, const char *kind) {
        SCOPED_TRACE(call.name + "(" + call.argument + " = " + kind + ")");
        fake::reset_calls();
        bool cleared = false;
        cucore_clear_last_error();
        cucore_status_t status = call.call(handle, w, cleared);
        EXPECT_EQ(status, CUCORE_ERROR_INVALID_HANDLE) << message();
        EXPECT_TRUE(cleared) << "out-pointers must read NULL/0 after a failure";
        std::string text = message();
        EXPECT_EQ(text.rfind(call.name + ":", 0), 0u) << text;
        EXPECT_NE(text.find("'" + call.argument + "'"), std::string::npos) << text;
        EXPECT_EQ(fake::calls(), 0) << "a handle must be validated before any driver call";
    }
};

TEST_F(HandleTest, NullHandlesAreRejectedExceptByRelease) {
    World w;
    for (const Call &call : all_calls()) {
        if (is_release(call)) {
            bool cleared;
            EXPECT_EQ(call.call(nullptr, w, cleared), CUCORE_SUCCESS) << call.name << ": NULL is a no-op";
            continue;
        }
        if (null_allowed(call)) continue;
        expect_rejected(call, nullptr, w, "NULL");
    }
}

TEST_F(HandleTest, GarbageHandlesAreRejected) {
    World w;
    auto heap_object = std::make_unique<long[]>(8);
    std::vector<std::pair<void *, const char *>> garbage = {
        {reinterpret_cast<void *>(0xdeadbeef), "0xdeadbeef"},
        {heap_object.get(), "a heap pointer"},
        {reinterpret_cast<void *>(~uintptr_t{0}), "all ones"},
        {reinterpret_cast<void *>((uintptr_t{0xCC} << 56) | (uintptr_t{1} << 32) | 0xFFFFFF), "magic, bad slot"},
        {reinterpret_cast<void *>((uintptr_t{0xCC} << 56) | 0), "magic, generation 0"},
    };
    for (const Call &call : all_calls())
        for (auto &[handle, kind] : garbage) expect_rejected(call, handle, w, kind);
}

TEST_F(HandleTest, ReleasedHandlesAreRejected) {
    World w;
    for (const Call &call : all_calls()) expect_rejected(call, released_handle(call.type, w.device), w, "released");
}

TEST_F(HandleTest, WrongTypeHandlesAreRejectedAndNamed) {
    World w;
    const cucore_object_type_t types[] = {CUCORE_OBJECT_DEVICE,          CUCORE_OBJECT_CONTEXT,
                                          CUCORE_OBJECT_STREAM,          CUCORE_OBJECT_EVENT,
                                          CUCORE_OBJECT_MEMORY_RESOURCE, CUCORE_OBJECT_BUFFER,
                                          CUCORE_OBJECT_KERNEL,          CUCORE_OBJECT_PROGRAM,
                                          CUCORE_OBJECT_OBJECT_CODE,     CUCORE_OBJECT_LINKER,
                                          CUCORE_OBJECT_PROGRAM_CACHE,   CUCORE_OBJECT_OPAQUE_ARRAY,
                                          CUCORE_OBJECT_MIPMAPPED_ARRAY, CUCORE_OBJECT_TEXTURE_OBJECT,
                                          CUCORE_OBJECT_SURFACE_OBJECT,  CUCORE_OBJECT_TENSOR_MAP_DESCRIPTOR,
                                          CUCORE_OBJECT_SM_RESOURCE,     CUCORE_OBJECT_WORKQUEUE_RESOURCE};
    for (const Call &call : all_calls()) {
        for (cucore_object_type_t other : types) {
            if (other == call.type) continue;
            expect_rejected(call, handle_of_type(other, w), w, cucore_object_type_name(other));
            std::string text = message();
            EXPECT_NE(text.find(std::string("is a ") + cucore_object_type_name(other) + " handle"), std::string::npos)
                << text;
        }
    }
}

TEST_F(HandleTest, DoubleReleaseIsDetectedAndHarmless) {
    cucore_stream_t *stream = nullptr;
    cucore_device_t *d = device();
    ASSERT_EQ(cucore_stream_create(d, nullptr, &stream), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_stream_retain(stream), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_stream_release(stream), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().streams, 1) << "one reference left: still alive";
    EXPECT_EQ(cucore_stream_release(stream), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_stream_release(stream), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_NE(message().find("released"), std::string::npos) << message();
    cucore_device_release(d);
}

TEST_F(HandleTest, ASlotReusedByANewObjectDoesNotReviveAnOldHandle) {
    cucore_device_t *d = device();
    cucore_event_t *first = nullptr, *second = nullptr;
    ASSERT_EQ(cucore_event_create(d, nullptr, &first), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_event_release(first), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_event_create(d, nullptr, &second), CUCORE_SUCCESS);
    EXPECT_NE(first, second) << "same slot, new generation";
    EXPECT_EQ(cucore_event_synchronize(first), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(cucore_event_synchronize(second), CUCORE_SUCCESS);
    cucore_event_release(second);
    cucore_device_release(d);
}

// System devices (issue 16), against the fake NVML: NULL, garbage, released
// and wrong-type handles on every function that takes one, before any driver
// or NVML call.
TEST_F(HandleTest, SystemDeviceArgumentsAreChecked) {
    fake::nvml::install(2);
    World w;
    using SD = cucore_system_device_t;
    const cucore_object_type_t S = CUCORE_OBJECT_SYSTEM_DEVICE;
    const std::vector<Call> calls = {
        {"cucore_system_device_to_device", "device", S, [](void *h, const World &, bool &c) { cucore_device_t *v = reinterpret_cast<cucore_device_t *>(1); auto s = cucore_system_device_to_device(as<SD>(h), &v); c = v == nullptr; return s; }},
        {"cucore_system_device_handle", "device", S, [](void *h, const World &, bool &c) { void *v = h; auto s = cucore_system_device_handle(as<SD>(h), &v); c = v == nullptr; return s; }},
        {"cucore_system_device_index", "device", S, [](void *h, const World &, bool &c) { unsigned v = 9; auto s = cucore_system_device_index(as<SD>(h), &v); c = v == 0; return s; }},
        {"cucore_system_device_name", "device", S, [](void *h, const World &, bool &c) { const char *v = "x"; auto s = cucore_system_device_name(as<SD>(h), &v); c = v == nullptr; return s; }},
        {"cucore_system_device_uuid", "device", S, [](void *h, const World &, bool &c) { const char *v = "x"; auto s = cucore_system_device_uuid(as<SD>(h), &v); c = v == nullptr; return s; }},
        {"cucore_system_device_pci_bus_id", "device", S, [](void *h, const World &, bool &c) { const char *v = "x"; auto s = cucore_system_device_pci_bus_id(as<SD>(h), &v); c = v == nullptr; return s; }},
        {"cucore_system_device_pci_info", "device", S, [](void *h, const World &, bool &c) { cucore_system_pci_info_t v = CUCORE_SYSTEM_PCI_INFO_INIT; v.bus = 9; auto s = cucore_system_device_pci_info(as<SD>(h), &v); c = v.bus == 0; return s; }},
        {"cucore_system_device_memory_info", "device", S, [](void *h, const World &, bool &c) { cucore_system_memory_info_t v = CUCORE_SYSTEM_MEMORY_INFO_INIT; v.total = 9; auto s = cucore_system_device_memory_info(as<SD>(h), &v); c = v.total == 0; return s; }},
        {"cucore_system_device_utilization", "device", S, [](void *h, const World &, bool &c) { unsigned a = 9, b = 9; auto s = cucore_system_device_utilization(as<SD>(h), &a, &b); c = a == 0 && b == 0; return s; }},
        {"cucore_system_device_temperature", "device", S, [](void *h, const World &, bool &c) { unsigned v = 9; auto s = cucore_system_device_temperature(as<SD>(h), &v); c = v == 0; return s; }},
        {"cucore_system_device_power_usage", "device", S, [](void *h, const World &, bool &c) { unsigned v = 9; auto s = cucore_system_device_power_usage(as<SD>(h), &v); c = v == 0; return s; }},
        {"cucore_system_device_power_limit", "device", S, [](void *h, const World &, bool &c) { unsigned v = 9; auto s = cucore_system_device_power_limit(as<SD>(h), &v); c = v == 0; return s; }},
        {"cucore_system_device_clock", "device", S, [](void *h, const World &, bool &c) { unsigned v = 9; auto s = cucore_system_device_clock(as<SD>(h), CUCORE_SYSTEM_CLOCK_SM, &v); c = v == 0; return s; }},
        {"cucore_system_device_max_clock", "device", S, [](void *h, const World &, bool &c) { unsigned v = 9; auto s = cucore_system_device_max_clock(as<SD>(h), CUCORE_SYSTEM_CLOCK_SM, &v); c = v == 0; return s; }},
        {"cucore_system_device_compute_mode", "device", S, [](void *h, const World &, bool &c) { cucore_compute_mode_t v = CUCORE_COMPUTE_MODE_DEFAULT; auto s = cucore_system_device_compute_mode(as<SD>(h), &v); c = v == CUCORE_COMPUTE_MODE_UNSET; return s; }},
        {"cucore_system_device_processes", "device", S, [](void *h, const World &, bool &c) { size_t v = 9; auto s = cucore_system_device_processes(as<SD>(h), nullptr, nullptr, 0, &v); c = v == 0; return s; }},
        {"cucore_system_device_retain", "device", S, [](void *h, const World &, bool &c) { c = true; return cucore_system_device_retain(as<SD>(h)); }},
        // Issue 17's readers (the peer of a pair is the same bad handle: the device is named first).
        {"cucore_system_device_query", "device", S, [](void *h, const World &, bool &c) { size_t v = 9; int64_t x = 9; auto s = cucore_system_device_query(as<SD>(h), CUCORE_SYSTEM_QUERY_BRAND, 0, 0, &x, 1, &v); c = v == 0; return s; }},
        {"cucore_system_device_text", "device", S, [](void *h, const World &, bool &c) { size_t v = 9; char t[4] = "xx"; auto s = cucore_system_device_text(as<SD>(h), CUCORE_SYSTEM_TEXT_SERIAL, 0, t, sizeof t, &v); c = v == 0 && t[0] == 0; return s; }},
        {"cucore_system_device_control", "device", S, [](void *h, const World &, bool &c) { c = true; return cucore_system_device_control(as<SD>(h), CUCORE_SYSTEM_CONTROL_VALIDATE_INFOROM, 0, 0); }},
        {"cucore_system_device_related", "device", S, [](void *h, const World &, bool &c) { size_t v = 9; SD *d[1] = {reinterpret_cast<SD *>(1)}; auto s = cucore_system_device_related(as<SD>(h), CUCORE_SYSTEM_RELATION_NEAREST_GPUS, 0, d, 1, &v); c = v == 0 && d[0] == nullptr; return s; }},
        {"cucore_system_device_field_values", "device", S, [](void *h, const World &, bool &c) { cucore_system_field_value_t f{}; c = true; return cucore_system_device_field_values(as<SD>(h), &f, 1); }},
        {"cucore_system_device_clear_field_values", "device", S, [](void *h, const World &, bool &c) { cucore_system_field_value_t f{}; c = true; return cucore_system_device_clear_field_values(as<SD>(h), &f, 1); }},
        {"cucore_system_device_p2p_status", "device", S, [](void *h, const World &, bool &c) { int v = 9; auto s = cucore_system_device_p2p_status(as<SD>(h), as<SD>(h), 0, &v); c = v == 0; return s; }},
        {"cucore_system_device_common_ancestor", "device", S, [](void *h, const World &, bool &c) { int v = 9; auto s = cucore_system_device_common_ancestor(as<SD>(h), as<SD>(h), &v); c = v == 0; return s; }},
        {"cucore_system_device_register_events", "device", S, [](void *h, const World &, bool &c) { c = true; return cucore_system_device_register_events(as<SD>(h), 0x8); }},
        {"cucore_system_device_wait_event", "device", S, [](void *h, const World &, bool &c) { cucore_system_event_t e{}; e.event_data = 9; SD *d = reinterpret_cast<SD *>(1); auto s = cucore_system_device_wait_event(as<SD>(h), 0, &e, &d); c = e.event_data == 0 && d == nullptr; return s; }},
        {"cucore_system_device_get_for_device", "device", CUCORE_OBJECT_DEVICE, [](void *h, const World &, bool &c) { SD *v = reinterpret_cast<SD *>(1); auto s = cucore_system_device_get_for_device(as<cucore_device_t>(h), &v); c = v == nullptr; return s; }},
    };
    SD *system = nullptr, *released = nullptr;
    ASSERT_EQ(cucore_system_device_get(0, &system), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_system_device_get(1, &released), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_system_device_release(released), CUCORE_SUCCESS);
    void *released_device = released_handle(CUCORE_OBJECT_DEVICE, w.device);
    for (const Call &call : calls) {
        const bool takes_system = call.type == S;
        fake::nvml::reset_calls();
        expect_rejected(call, nullptr, w, "NULL");
        expect_rejected(call, reinterpret_cast<void *>(0xdeadbeef), w, "0xdeadbeef");
        expect_rejected(call, takes_system ? static_cast<void *>(released) : released_device, w, "released");
        void *other = takes_system ? static_cast<void *>(w.device) : static_cast<void *>(system);
        expect_rejected(call, other, w, "wrong type");
        EXPECT_NE(message().find(std::string("is a ") +
                                 cucore_object_type_name(takes_system ? CUCORE_OBJECT_DEVICE : S) + " handle"),
                  std::string::npos)
            << message();
        EXPECT_EQ(fake::nvml::calls(), 0) << call.name << ": a handle is validated before any NVML call";
    }
    EXPECT_EQ(cucore_system_device_release(nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_system_device_release(released), CUCORE_ERROR_INVALID_HANDLE);
    cucore_system_device_release(system);
    fake::nvml::uninstall();
}

// System event sets (issue 17): the same checks, before any NVML call.
TEST_F(HandleTest, SystemEventSetArgumentsAreChecked) {
    fake::nvml::install(2);
    World w;
    using ES = cucore_system_event_set_t;
    const std::vector<Call> calls = {
        {"cucore_system_event_set_wait", "event_set", CUCORE_OBJECT_SYSTEM_EVENT_SET, [](void *h, const World &, bool &c) { uint64_t t = 9; uint32_t g = 9; size_t v = 9; auto s = cucore_system_event_set_wait(as<ES>(h), 0, &t, &g, 1, &v); c = v == 0; return s; }},
        {"cucore_system_event_set_retain", "event_set", CUCORE_OBJECT_SYSTEM_EVENT_SET, [](void *h, const World &, bool &c) { c = true; return cucore_system_event_set_retain(as<ES>(h)); }},
    };
    ES *set = nullptr, *released = nullptr;
    ASSERT_EQ(cucore_system_register_events(CUCORE_SYSTEM_EVENT_GPU_DRIVER_BIND, &set), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_system_register_events(CUCORE_SYSTEM_EVENT_GPU_DRIVER_BIND, &released), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_system_event_set_release(released), CUCORE_SUCCESS);
    for (const Call &call : calls) {
        fake::nvml::reset_calls();
        expect_rejected(call, nullptr, w, "NULL");
        expect_rejected(call, reinterpret_cast<void *>(0xdeadbeef), w, "0xdeadbeef");
        expect_rejected(call, released, w, "released");
        expect_rejected(call, w.device, w, "wrong type");
        EXPECT_NE(message().find(std::string("is a ") + cucore_object_type_name(CUCORE_OBJECT_DEVICE) + " handle"),
                  std::string::npos)
            << message();
        EXPECT_EQ(fake::nvml::calls(), 0) << call.name << ": a handle is validated before any NVML call";
    }
    EXPECT_EQ(cucore_system_event_set_release(nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_system_event_set_release(released), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(cucore_system_event_set_release(set), CUCORE_SUCCESS);
    EXPECT_EQ(fake::nvml::live_system_event_sets(), 0u);
    fake::nvml::uninstall();
}

}  // namespace
