/* device_info: the library and driver versions, every CUDA device, and two
 * streams ordered with an event, timed. Plain C over the C ABI (cucore.h).
 *
 * On a machine without a driver or GPU it says so and exits 0. */
#define _POSIX_C_SOURCE 199309L /* nanosleep */
#include <cucore.h>

#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* Prints the library's message if `status` is a failure; returns 1 then. */
static int failed(cucore_status_t status, const char *what) {
    if (status == CUCORE_SUCCESS) return 0;
    fprintf(stderr, "%s failed: %s (%s)\n", what, cucore_last_error_message(),
            cucore_status_string(status));
    return 1;
}

/* Host functions run on a driver thread, in stream order; they must not call
 * CUDA. The stream/event ordering is what makes these plain ints safe to share. */
static int value;
static int seen = -1;

static void produce(void *unused) {
    struct timespec ms20 = {0, 20 * 1000 * 1000};
    (void)unused;
    nanosleep(&ms20, NULL);
    value = 42;
}

static void consume(void *unused) {
    (void)unused;
    seen = value;
}

static int print_device(int ordinal) {
    cucore_device_t *dev = NULL;
    const char *name = NULL, *bus = NULL;
    cucore_uuid_t uuid;
    cucore_device_properties_t p = CUCORE_DEVICE_PROPERTIES_INIT;
    int i, ok = 0;

    if (!failed(cucore_device_get(ordinal, &dev), "cucore_device_get") &&
        !failed(cucore_device_name(dev, &name), "cucore_device_name") &&
        !failed(cucore_device_pci_bus_id(dev, &bus), "cucore_device_pci_bus_id") &&
        !failed(cucore_device_uuid(dev, &uuid), "cucore_device_uuid") &&
        !failed(cucore_device_properties(dev, &p), "cucore_device_properties")) {
        printf("Device %d: %s\n", ordinal, name);
        printf("  compute capability %d.%d, %d SMs, %.0f MiB, PCI %s\n", p.compute_capability_major,
               p.compute_capability_minor, p.multiprocessor_count,
               (double)p.total_memory / (1024.0 * 1024.0), bus);
        printf("  UUID ");
        for (i = 0; i < 16; ++i) printf(i == 4 || i == 6 || i == 8 || i == 10 ? "-%02x" : "%02x", uuid.bytes[i]);
        printf("\n");
        ok = 1;
    }
    cucore_device_release(dev);
    return ok;
}

/* Stream B waits for stream A through an event; A's host function sleeps and
 * writes a value, B's reads it. Timing events measure the whole. */
static int stream_demo(void) {
    cucore_device_t *dev = NULL;
    cucore_stream_t *a = NULL, *b = NULL;
    cucore_event_t *start = NULL, *ready = NULL, *end = NULL;
    cucore_event_options_t timing = CUCORE_EVENT_OPTIONS_INIT;
    float ms = 0.0f;
    int ok = 0;

    timing.flags = CUCORE_EVENT_TIMING;
    if (!failed(cucore_device_get(0, &dev), "cucore_device_get") &&
        !failed(cucore_stream_create(dev, NULL, &a), "cucore_stream_create") &&
        !failed(cucore_stream_create(dev, NULL, &b), "cucore_stream_create") &&
        !failed(cucore_stream_record(a, &timing, &start), "cucore_stream_record") &&
        !failed(cucore_stream_launch_host_func(a, produce, NULL), "cucore_stream_launch_host_func") &&
        !failed(cucore_stream_record(a, NULL, &ready), "cucore_stream_record") &&
        !failed(cucore_stream_wait_event(b, ready), "cucore_stream_wait_event") &&
        !failed(cucore_stream_launch_host_func(b, consume, NULL), "cucore_stream_launch_host_func") &&
        !failed(cucore_stream_record(b, &timing, &end), "cucore_stream_record") &&
        !failed(cucore_event_synchronize(end), "cucore_event_synchronize") &&
        !failed(cucore_event_elapsed_time(start, end, &ms), "cucore_event_elapsed_time")) {
        printf("Stream demo: B's host function saw %d (written by A after 20 ms); "
               "elapsed %.2f ms\n", seen, ms);
        ok = seen == 42;
    }
    /* Release in any order: each object holds what it needs. */
    cucore_event_release(end);
    cucore_event_release(ready);
    cucore_event_release(start);
    cucore_stream_release(b);
    cucore_stream_release(a);
    cucore_device_release(dev);
    return ok;
}

/* Without a driver or device there is nothing to show, but the library still
 * guards every call: show that, so the run says what it could check. */
static void show_without_gpu(void) {
    cucore_stream_t *garbage = (cucore_stream_t *)(uintptr_t)0xdeadbeef;
    size_t live = 0;
    printf("What still works without a GPU: every call is checked before the driver is used.\n");
    printf("  cucore_stream_synchronize(NULL)       -> %s\n",
           cucore_status_string(cucore_stream_synchronize(NULL)));
    printf("      %s\n", cucore_last_error_message());
    printf("  cucore_stream_synchronize(0xdeadbeef) -> %s\n",
           cucore_status_string(cucore_stream_synchronize(garbage)));
    printf("      %s\n", cucore_last_error_message());
    if (cucore_live_object_count(CUCORE_OBJECT_ANY, &live) == CUCORE_SUCCESS)
        printf("  live libcucore objects: %zu\n", live);
    printf("Run this on a machine with an NVIDIA driver and GPU to list devices and time streams.\n");
}

int main(void) {
    int driver = 0, count = 0, i;
    cucore_status_t status;

    printf("libcucore %s\n", cucore_version_string());
    status = cucore_driver_version(&driver);
    if (status == CUCORE_ERROR_NO_DRIVER) {
        printf("No CUDA driver on this machine.\n  Checked: %s\n", cucore_last_error_message());
        show_without_gpu();
        return 0;
    }
    if (failed(status, "cucore_driver_version")) return 1;
    printf("CUDA driver %d.%d\n", driver / 1000, driver % 1000 / 10);

    if (failed(cucore_device_count(&count), "cucore_device_count")) return 1;
    if (count == 0) {
        printf("The CUDA driver sees no device.\n");
        show_without_gpu();
        return 0;
    }
    for (i = 0; i < count; ++i)
        if (!print_device(i)) return 1;
    return stream_demo() ? 0 : 1;
}
