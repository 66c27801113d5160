// The world the handle tests call every function in (handle_test.cpp): valid objects of every type, for the
// arguments not under test, and the shape of one call under test.
#ifndef CUCORE_TESTS_UNIT_HANDLE_WORLD_HPP
#define CUCORE_TESTS_UNIT_HANDLE_WORLD_HPP

#include <cstring>
#include <functional>
#include <string>

#include "fake_nvml.hpp"
#include "test_support.hpp"

namespace handle_tests {

void noop_host_fn(void *) {}

// Valid objects of every type, for the other arguments of each call.
struct World {
    cucore_device_t *device = nullptr;
    cucore_context_t *context = nullptr;
    cucore_stream_t *stream = nullptr;
    cucore_event_t *event = nullptr;
    cucore_memory_resource_t *resource = nullptr;
    cucore_buffer_t *buffer = nullptr;
    cucore_kernel_t *kernel = nullptr;
    cucore_program_t *program = nullptr;
    cucore_object_code_t *object_code = nullptr;
    cucore_linker_t *linker = nullptr;
    cucore_program_cache_t *cache = nullptr;
    cucore_opaque_array_t *array = nullptr;  // 2D, surface load/store
    void *cu_array = nullptr;
    cucore_mipmapped_array_t *mipmapped = nullptr;
    void *cu_mipmapped = nullptr;
    cucore_texture_object_t *texture = nullptr;  // over `array`
    cucore_surface_object_t *surface = nullptr;  // over `array`
    cucore_tensor_map_descriptor_t *tensor_map = nullptr;  // over `buffer`
    cucore_sm_resource_t *sm_resource = nullptr;
    cucore_workqueue_resource_t *workqueue = nullptr;  // made while the fake is a CUDA 13.1 driver
    cucore_graph_definition_t *definition = nullptr;   // an event record node and a child graph node
    cucore_graph_node_t *record_node = nullptr;
    cucore_graph_node_t *child_node = nullptr;
    cucore_graph_definition_t *child = nullptr;  // an empty definition of its own
    cucore_graph_t *graph = nullptr;             // `definition` instantiated
    World() {
        EXPECT_EQ(cucore_device_get(0, &device), CUCORE_SUCCESS);
        EXPECT_EQ(cucore_context_get_primary(device, &context), CUCORE_SUCCESS);
        EXPECT_EQ(cucore_stream_create(device, nullptr, &stream), CUCORE_SUCCESS);
        EXPECT_EQ(cucore_event_create(device, nullptr, &event), CUCORE_SUCCESS);
        EXPECT_EQ(cucore_device_memory_resource_get_default(device, &resource), CUCORE_SUCCESS);
        EXPECT_EQ(cucore_memory_resource_allocate(resource, 64, stream, &buffer), CUCORE_SUCCESS);
        EXPECT_EQ(cucore_kernel_from_handle(fake::make_kernel(), nullptr, nullptr, &kernel), CUCORE_SUCCESS);
        program = make_program();
        object_code = make_object_code();
        linker = make_linker(object_code);
        EXPECT_EQ(cucore_program_cache_create_in_memory(0, &cache), CUCORE_SUCCESS);
        array = make_array(device, CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE);
        EXPECT_EQ(cucore_opaque_array_handle(array, &cu_array), CUCORE_SUCCESS);
        mipmapped = make_mipmapped(device);
        EXPECT_EQ(cucore_mipmapped_array_handle(mipmapped, &cu_mipmapped), CUCORE_SUCCESS);
        const cucore_resource_descriptor_t r = array_resource(array);
        EXPECT_EQ(cucore_texture_object_create(nullptr, &r, nullptr, &texture), CUCORE_SUCCESS);
        EXPECT_EQ(cucore_surface_object_create(nullptr, &r, &surface), CUCORE_SUCCESS);
        tensor_map = make_tensor_map(buffer);
        EXPECT_EQ(cucore_sm_resource_of_device(device, &sm_resource), CUCORE_SUCCESS);
        workqueue = make_workqueue(device);
        EXPECT_EQ(cucore_graph_definition_create(device, &definition), CUCORE_SUCCESS);
        EXPECT_EQ(cucore_graph_definition_create(device, &child), CUCORE_SUCCESS);
        EXPECT_EQ(cucore_graph_definition_add_event_record(definition, nullptr, 0, event, &record_node),
                  CUCORE_SUCCESS);
        EXPECT_EQ(cucore_graph_definition_add_child_graph(definition, nullptr, 0, child, &child_node),
                  CUCORE_SUCCESS);
        EXPECT_EQ(cucore_graph_definition_instantiate(definition, nullptr, &graph), CUCORE_SUCCESS);
    }
    // A 64-byte tensor of bytes over `b`, boxes of 16.
    static cucore_tensor_map_layout_t tensor_map_layout() {
        cucore_tensor_map_layout_t l = CUCORE_TENSOR_MAP_LAYOUT_INIT;
        l.data_type = CUCORE_TENSOR_MAP_DATA_TYPE_UINT8;
        l.rank = 1;
        l.global_dim[0] = 64;
        return l;
    }
    static cucore_tensor_map_descriptor_t *make_tensor_map(cucore_buffer_t *b) {
        const cucore_tensor_map_layout_t l = tensor_map_layout();
        const uint32_t box[1] = {16};
        cucore_tensor_map_descriptor_t *d = nullptr;
        EXPECT_EQ(cucore_tensor_map_descriptor_create_tiled(b, 0, &l, box, nullptr, &d), CUCORE_SUCCESS)
            << cucore_last_error_message();
        return d;
    }
    static cucore_workqueue_resource_t *make_workqueue(cucore_device_t *d) {
        fake::set_driver_version(13010);
        cucore_workqueue_resource_t *q = nullptr;
        EXPECT_EQ(cucore_workqueue_resource_of_device(d, &q), CUCORE_SUCCESS);
        fake::set_driver_version(13000);
        return q;
    }
    static cucore_opaque_array_t *make_array(cucore_device_t *d, uint32_t flags = 0) {
        cucore_opaque_array_options_t o = CUCORE_OPAQUE_ARRAY_OPTIONS_INIT;
        o.format = CUCORE_ARRAY_FORMAT_FLOAT32;
        o.width = 8;
        o.height = 8;
        o.flags = flags;
        cucore_opaque_array_t *a = nullptr;
        EXPECT_EQ(cucore_opaque_array_create(d, &o, &a), CUCORE_SUCCESS);
        return a;
    }
    static cucore_mipmapped_array_t *make_mipmapped(cucore_device_t *d) {
        cucore_opaque_array_options_t o = CUCORE_OPAQUE_ARRAY_OPTIONS_INIT;
        o.format = CUCORE_ARRAY_FORMAT_UINT8;
        o.width = 8;
        o.height = 8;
        cucore_mipmapped_array_t *m = nullptr;
        EXPECT_EQ(cucore_mipmapped_array_create(d, &o, 2, &m), CUCORE_SUCCESS);
        return m;
    }
    static cucore_resource_descriptor_t array_resource(cucore_opaque_array_t *a) {
        cucore_resource_descriptor_t r = CUCORE_RESOURCE_DESCRIPTOR_INIT;
        r.kind = CUCORE_RESOURCE_KIND_OPAQUE_ARRAY;
        r.array = a;
        return r;
    }
    // Compile-side objects that need no compiler to run: a PTX program (its
    // backend only loads), fake driver code, a driver-backend linker.
    static cucore_program_t *make_program() {
        cucore_program_options_t o = CUCORE_PROGRAM_OPTIONS_INIT;
        o.arch = "sm_90";
        cucore_program_t *p = nullptr;
        EXPECT_EQ(cucore_program_create(".version 8.0", 0, CUCORE_CODE_PTX, &o, &p), CUCORE_SUCCESS);
        return p;
    }
    static cucore_object_code_t *make_object_code() {
        const std::string image = fake::image({"k"}, {{"g", 4}});
        cucore_object_code_t *o = nullptr;
        EXPECT_EQ(cucore_object_code_create(image.data(), image.size(), CUCORE_CODE_CUBIN, "w", &o), CUCORE_SUCCESS);
        return o;
    }
    static cucore_linker_t *make_linker(cucore_object_code_t *input) {
        cucore_linker_options_t o = CUCORE_LINKER_OPTIONS_INIT;
        o.backend = CUCORE_BACKEND_DRIVER;
        cucore_linker_t *l = nullptr;
        EXPECT_EQ(cucore_linker_create(&input, 1, &o, &l), CUCORE_SUCCESS);
        return l;
    }
    ~World() {
        cucore_graph_release(graph);
        cucore_graph_node_release(child_node);
        cucore_graph_node_release(record_node);
        cucore_graph_definition_release(child);
        cucore_graph_definition_release(definition);
        cucore_tensor_map_descriptor_release(tensor_map);
        cucore_workqueue_resource_release(workqueue);
        cucore_sm_resource_release(sm_resource);
        cucore_surface_object_release(surface);
        cucore_texture_object_release(texture);
        cucore_mipmapped_array_release(mipmapped);
        cucore_opaque_array_release(array);
        cucore_program_cache_release(cache);
        cucore_linker_release(linker);
        cucore_object_code_release(object_code);
        cucore_program_release(program);
        cucore_kernel_release(kernel);
        cucore_buffer_release(buffer);
        cucore_memory_resource_release(resource);
        cucore_event_release(event);
        cucore_stream_release(stream);
        cucore_context_release(context);
        cucore_device_release(device);
    }
};

struct Call {
    std::string name;       // function and argument under test
    std::string argument;   // name of the handle argument
    cucore_object_type_t type;
    // Calls the function with `handle` in the argument under test; returns the
    // status and, through `cleared`, whether every out-pointer reads NULL/0.
    std::function<cucore_status_t(void *handle, const World &w, bool &cleared)> call;
};

template <class T>
T *as(void *handle) { return static_cast<T *>(handle); }

}  // namespace handle_tests

#endif  // CUCORE_TESTS_UNIT_HANDLE_WORLD_HPP
