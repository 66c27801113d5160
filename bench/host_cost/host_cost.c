/* The host work of libcucore's hot calls, counted in instructions rather than timed: run under callgrind
 * with the substitute driver (tests/fake_driver's libcucore_fake_cuda.so through CUCORE_CUDA_DRIVER_PATH),
 * once with N calls and once with 3N, and the difference of libcucore's own instructions over 2N is the work
 * per call, exact and the same on every run (bench/host_cost/count.sh does that, for two library builds).
 * Timings on a GPU move by tens of percent between rounds on a shared machine; this does not.
 * Usage: cucore_host_cost event|record|stream|pool|launch|glmap|texture|graph N */
#include <cucore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define CHECK(x) do { cucore_status_t s_ = (x); if (s_) { fprintf(stderr, "%s: %s\n", #x, cucore_last_error_message()); exit(1); } } while (0)
int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s event|record|stream|pool|launch|glmap|texture|graph N\n", argv[0]);
        return 2;
    }
    const char *what = argv[1];
    int n = atoi(argv[2]);
    cucore_device_t *dev; cucore_stream_t *s;
    CHECK(cucore_device_get(0, &dev));
    CHECK(cucore_device_set_current(dev));
    CHECK(cucore_stream_create(dev, NULL, &s));
    if (!strcmp(what, "event")) {
        for (int i = 0; i < n; ++i) { cucore_event_t *e; CHECK(cucore_event_create(dev, NULL, &e)); CHECK(cucore_event_release(e)); }
    } else if (!strcmp(what, "glmap")) {
        cucore_graphics_resource_t *r; CHECK(cucore_graphics_resource_from_gl_buffer(dev, 7, 0, &r));
        for (int i = 0; i < n; ++i) {
            cucore_buffer_t *b; uint64_t a; CHECK(cucore_graphics_resource_map(r, s, 0, &b));
            CHECK(cucore_buffer_address(b, &a)); CHECK(cucore_graphics_resource_unmap(r, NULL)); CHECK(cucore_buffer_release(b));
        }
        CHECK(cucore_graphics_resource_release(r));
    } else if (!strcmp(what, "pool")) {
        cucore_memory_resource_t *mr; CHECK(cucore_device_memory_resource_get_default(dev, &mr));
        for (int i = 0; i < n; ++i) { cucore_buffer_t *b; CHECK(cucore_memory_resource_allocate(mr, 4096, s, &b)); CHECK(cucore_buffer_release(b)); }
        CHECK(cucore_memory_resource_release(mr));
    } else if (!strcmp(what, "launch")) {
        static const char image[] = "FAKECUBIN\nkernel k 8,8\n";
        cucore_object_code_t *oc; cucore_kernel_t *k;
        CHECK(cucore_object_code_create(image, sizeof image, CUCORE_CODE_CUBIN, "k", &oc));
        CHECK(cucore_object_code_get_kernel(oc, "k", &k));
        cucore_launch_config_t cfg = CUCORE_LAUNCH_CONFIG_INIT; cfg.grid[0] = 4; cfg.block[0] = 128;
        uint64_t a = 1, b = 2; const void *args[2] = {&a, &b}; size_t sizes[2] = {8, 8};
        for (int i = 0; i < n; ++i) CHECK(cucore_launch(s, &cfg, k, args, sizes, 2));
        cucore_kernel_release(k); cucore_object_code_release(oc);
    } else if (!strcmp(what, "graph")) {
        /* cucore_graph_launch of a 1-node graph (one kernel node), instantiated once. */
        static const char image[] = "FAKECUBIN\nkernel k 8,8\n";
        cucore_object_code_t *oc; cucore_kernel_t *k;
        CHECK(cucore_object_code_create(image, sizeof image, CUCORE_CODE_CUBIN, "k", &oc));
        CHECK(cucore_object_code_get_kernel(oc, "k", &k));
        cucore_launch_config_t cfg = CUCORE_LAUNCH_CONFIG_INIT;
        uint64_t a = 1, b = 2; const void *args[2] = {&a, &b}; size_t sizes[2] = {8, 8};
        cucore_graph_definition_t *def; cucore_graph_node_t *node; cucore_graph_t *g;
        CHECK(cucore_graph_definition_create(dev, &def));
        CHECK(cucore_graph_definition_add_kernel(def, NULL, 0, &cfg, k, args, sizes, 2, &node));
        CHECK(cucore_graph_definition_instantiate(def, NULL, &g));
        for (int i = 0; i < n; ++i) CHECK(cucore_graph_launch(g, s));
        CHECK(cucore_stream_synchronize(s));
        cucore_graph_release(g); cucore_graph_node_release(node); cucore_graph_definition_release(def);
        cucore_kernel_release(k); cucore_object_code_release(oc);
    } else if (!strcmp(what, "stream")) {
        for (int i = 0; i < n; ++i) { cucore_stream_t *t; CHECK(cucore_stream_create(dev, NULL, &t)); CHECK(cucore_stream_release(t)); }
    } else if (!strcmp(what, "texture")) {
        cucore_opaque_array_options_t o = CUCORE_OPAQUE_ARRAY_OPTIONS_INIT;
        o.format = CUCORE_ARRAY_FORMAT_FLOAT32; o.num_channels = 4; o.width = 256; o.height = 256;
        cucore_opaque_array_t *a; CHECK(cucore_opaque_array_create(dev, &o, &a));
        cucore_resource_descriptor_t r = CUCORE_RESOURCE_DESCRIPTOR_INIT;
        r.kind = CUCORE_RESOURCE_KIND_OPAQUE_ARRAY; r.array = a;
        for (int i = 0; i < n; ++i) { cucore_texture_object_t *t; CHECK(cucore_texture_object_create(NULL, &r, NULL, &t)); CHECK(cucore_texture_object_release(t)); }
        CHECK(cucore_opaque_array_release(a));
    } else if (!strcmp(what, "record")) {
        cucore_event_t *e; CHECK(cucore_event_create(dev, NULL, &e));
        for (int i = 0; i < n; ++i) CHECK(cucore_event_record(e, s));
        CHECK(cucore_event_release(e));
    } else {
        fprintf(stderr, "unknown call %s\n", what);
        return 2;
    }
    CHECK(cucore_stream_synchronize(s));
    cucore_stream_release(s); cucore_device_release(dev);
    return 0;
}
