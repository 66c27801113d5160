// Every driver call in every create path fails in turn: the call fails with a
// clear message and nothing is left behind (library objects, driver objects,
// context retains), or, when the failing call belonged to a cleanup that runs
// after the work was done (restoring the caller's context, destroying a
// temporary), the call succeeds and the failure is reported as a release error.
#include "fault_injection_support.hpp"

namespace {

class FaultInjectionTest : public FaultInjection<FakeDriverTest> {};

TEST_F(FaultInjectionTest, DeviceGet) {
    run({"cucore_device_get", [](void **h) { return cucore_device_get(1, reinterpret_cast<cucore_device_t **>(h)); },
         [](void *h) { cucore_device_release(static_cast<cucore_device_t *>(h)); }, 1});
}

TEST_F(FaultInjectionTest, DeviceGetCurrent) {
    run({"cucore_device_get_current",
         [](void **h) { return cucore_device_get_current(reinterpret_cast<cucore_device_t **>(h)); },
         [](void *h) { cucore_device_release(static_cast<cucore_device_t *>(h)); }, 2});
}

TEST_F(FaultInjectionTest, ContextGetPrimary) {
    cucore_device_t *d = device(1);
    run({"cucore_context_get_primary",
         [d](void **h) { return cucore_context_get_primary(d, reinterpret_cast<cucore_context_t **>(h)); },
         [](void *h) { cucore_context_release(static_cast<cucore_context_t *>(h)); }, 1});
    cucore_device_release(d);
}

TEST_F(FaultInjectionTest, ContextFromHandle) {
    CUcontext foreign = fake::make_foreign_context(1);
    run({"cucore_context_from_handle",
         [foreign](void **h) {
             return cucore_context_from_handle(foreign, nullptr, nullptr, reinterpret_cast<cucore_context_t **>(h));
         },
         [](void *h) { cucore_context_release(static_cast<cucore_context_t *>(h)); }, 4});
}

// A device handle keeps the primary context it first needed (so create/destroy
// cycles do not churn the driver's retain count); to fault the retain path too,
// these scenarios use a fresh device handle each time, released at once.
template <class Create>
cucore_status_t with_fresh_device(Create create) {
    cucore_device_t *d = nullptr;
    {
        fake::Uncounted setup;  // getting the device is the DeviceGet scenario's business
        if (cucore_device_get(1, &d) != CUCORE_SUCCESS) return CUCORE_ERROR_INTERNAL;
    }
    cucore_status_t status = create(d);
    fake::Uncounted cleanup;
    cucore_device_release(d);
    return status;
}

TEST_F(FaultInjectionTest, StreamCreate) {
    run({"cucore_stream_create",
         [](void **h) {
             return with_fresh_device([h](cucore_device_t *d) {
                 return cucore_stream_create(d, nullptr, reinterpret_cast<cucore_stream_t **>(h));
             });
         },
         [](void *h) { cucore_stream_release(static_cast<cucore_stream_t *>(h)); }, 4});
}

TEST_F(FaultInjectionTest, StreamCreateInContext) {
    CUcontext foreign = fake::make_foreign_context(1);
    cucore_context_t *c = nullptr;
    ASSERT_EQ(cucore_context_from_handle(foreign, nullptr, nullptr, &c), CUCORE_SUCCESS);
    run({"cucore_stream_create_in_context",
         [c](void **h) { return cucore_stream_create_in_context(c, nullptr, reinterpret_cast<cucore_stream_t **>(h)); },
         [](void *h) { cucore_stream_release(static_cast<cucore_stream_t *>(h)); }, 3});
    cucore_context_release(c);
}

TEST_F(FaultInjectionTest, StreamDefaults) {
    run({"cucore_stream_get_legacy_default",
         [](void **h) {
             return with_fresh_device([h](cucore_device_t *d) {
                 return cucore_stream_get_legacy_default(d, reinterpret_cast<cucore_stream_t **>(h));
             });
         },
         [](void *h) { cucore_stream_release(static_cast<cucore_stream_t *>(h)); }, 1});
    run({"cucore_stream_get_per_thread_default",
         [](void **h) {
             return with_fresh_device([h](cucore_device_t *d) {
                 return cucore_stream_get_per_thread_default(d, reinterpret_cast<cucore_stream_t **>(h));
             });
         },
         [](void *h) { cucore_stream_release(static_cast<cucore_stream_t *>(h)); }, 1});
}

TEST_F(FaultInjectionTest, StreamFromHandle) {
    CUcontext foreign = fake::make_foreign_context(1);
    fake::set_current_context(foreign);
    CUstream raw = nullptr;
    ASSERT_EQ(fake::table().cuStreamCreateWithPriority(&raw, 0, 0), CUDA_SUCCESS);
    fake::set_current_context(nullptr);
    run({"cucore_stream_from_handle",
         [raw](void **h) {
             return cucore_stream_from_handle(raw, nullptr, nullptr, reinterpret_cast<cucore_stream_t **>(h));
         },
         [](void *h) { cucore_stream_release(static_cast<cucore_stream_t *>(h)); }, 5});
    fake::table().cuStreamDestroy(raw);
}

TEST_F(FaultInjectionTest, EventCreate) {
    run({"cucore_event_create",
         [](void **h) {
             return with_fresh_device([h](cucore_device_t *d) {
                 return cucore_event_create(d, nullptr, reinterpret_cast<cucore_event_t **>(h));
             });
         },
         [](void *h) { cucore_event_release(static_cast<cucore_event_t *>(h)); }, 4});
}

TEST_F(FaultInjectionTest, EventCreateWithTheDevicesCachedContext) {
    cucore_device_t *d = device(1);
    cucore_context_t *c = nullptr;
    ASSERT_EQ(cucore_context_get_primary(d, &c), CUCORE_SUCCESS);  // the handle now caches it
    cucore_context_release(c);
    run({"cucore_event_create",
         [d](void **h) { return cucore_event_create(d, nullptr, reinterpret_cast<cucore_event_t **>(h)); },
         [](void *h) { cucore_event_release(static_cast<cucore_event_t *>(h)); }, 2});
    cucore_device_release(d);
}

TEST_F(FaultInjectionTest, EventFromHandle) {
    CUcontext foreign = fake::make_foreign_context(1);
    fake::set_current_context(foreign);
    CUevent raw = nullptr;
    ASSERT_EQ(fake::table().cuEventCreate(&raw, 0), CUDA_SUCCESS);
    run({"cucore_event_from_handle",
         [raw, foreign](void **h) {
             fake::set_current_context(foreign);
             return cucore_event_from_handle(raw, nullptr, nullptr, reinterpret_cast<cucore_event_t **>(h));
         },
         [](void *h) { cucore_event_release(static_cast<cucore_event_t *>(h)); }, 4});
    fake::table().cuEventDestroy(raw);
}

TEST_F(FaultInjectionTest, StreamRecord) {
    cucore_device_t *d = device(1);
    cucore_stream_t *s = nullptr;
    ASSERT_EQ(cucore_stream_create(d, nullptr, &s), CUCORE_SUCCESS);
    run({"cucore_stream_record",
         [s](void **h) { return cucore_stream_record(s, nullptr, reinterpret_cast<cucore_event_t **>(h)); },
         [](void *h) { cucore_event_release(static_cast<cucore_event_t *>(h)); }, 4});
    cucore_stream_release(s);
    cucore_device_release(d);
}

TEST_F(FaultInjectionTest, StreamWaitStreamLeavesNoMarkerEvent) {
    cucore_device_t *d = device(1);
    cucore_stream_t *a = nullptr, *b = nullptr;
    ASSERT_EQ(cucore_stream_create(d, nullptr, &a), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_stream_create(d, nullptr, &b), CUCORE_SUCCESS);
    run({"cucore_stream_wait_stream",
         [a, b](void **h) {
             *h = nullptr;
             return cucore_stream_wait_stream(a, b);
         },
         [](void *) {}, 4});
    cucore_stream_release(a);
    cucore_stream_release(b);
    cucore_device_release(d);
}

TEST_F(FaultInjectionTest, DeviceMemoryResources) {
    run({"cucore_device_memory_resource_get_default",
         [](void **h) {
             return with_fresh_device([h](cucore_device_t *d) {
                 return cucore_device_memory_resource_get_default(d, reinterpret_cast<cucore_memory_resource_t **>(h));
             });
         },
         [](void *h) { cucore_memory_resource_release(static_cast<cucore_memory_resource_t *>(h)); }, 2});
    cucore_device_memory_resource_options_t options = CUCORE_DEVICE_MEMORY_RESOURCE_OPTIONS_INIT;
    options.release_threshold = 1 << 20;
    run({"cucore_device_memory_resource_create",
         [&options](void **h) {
             return with_fresh_device([h, &options](cucore_device_t *d) {
                 return cucore_device_memory_resource_create(d, &options, reinterpret_cast<cucore_memory_resource_t **>(h));
             });
         },
         [](void *h) { cucore_memory_resource_release(static_cast<cucore_memory_resource_t *>(h)); }, 3});
    run({"cucore_legacy_pinned_memory_resource_create",
         [](void **h) {
             return with_fresh_device([h](cucore_device_t *d) {
                 return cucore_legacy_pinned_memory_resource_create(d, reinterpret_cast<cucore_memory_resource_t **>(h));
             });
         },
         [](void *h) { cucore_memory_resource_release(static_cast<cucore_memory_resource_t *>(h)); }, 1});
}

TEST_F(FaultInjectionTest, Allocations) {
    cucore_device_t *d = device(1);
    cucore_stream_t *s = nullptr;
    cucore_memory_resource_t *pool = nullptr, *pinned = nullptr;
    ASSERT_EQ(cucore_stream_create(d, nullptr, &s), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_device_memory_resource_create(d, nullptr, &pool), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_legacy_pinned_memory_resource_create(d, &pinned), CUCORE_SUCCESS);
    for (cucore_memory_resource_t *resource : {pool, pinned}) {
        run({"cucore_memory_resource_allocate",
             [resource, s](void **h) {
                 return cucore_memory_resource_allocate(resource, 256, s, reinterpret_cast<cucore_buffer_t **>(h));
             },
             [](void *h) { cucore_buffer_release(static_cast<cucore_buffer_t *>(h)); }, 1});
    }
    cucore_memory_resource_release(pinned);
    cucore_memory_resource_release(pool);
    cucore_stream_release(s);
    cucore_device_release(d);
}

}  // namespace
