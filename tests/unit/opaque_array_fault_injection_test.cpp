// Fault injection (fault_injection_support.hpp) for every create path of arrays, mipmapped arrays, their levels,
// foreign arrays, texture objects (over each kind of resource) and surface objects: each driver call of the path
// fails in turn, and the call fails with a clear message and leaves no library object and no driver object (array,
// mipmapped array, texture or surface object, context retain) behind, or succeeds because only a cleanup after
// the work failed, which is reported.
#include <functional>

#include "array_support.hpp"
#include "fault_injection_support.hpp"

namespace {

class ArrayFaultInjectionTest : public FaultInjection<ArrayFixture> {
  protected:
    // A scenario that makes something with `create(device, out)` on a fresh device handle, so that the device's
    // primary context retain is part of the path.
    template <class Handle>
    Scenario on_fresh_device(const char *function, std::function<cucore_status_t(cucore_device_t *, Handle **)> create,
                             std::function<void(Handle *)> release, int minimum) {
        return {function,
                [create](void **h) {
                    cucore_device_t *d = nullptr;
                    {
                        fake::Uncounted setup;
                        if (cucore_device_get(1, &d) != CUCORE_SUCCESS) return CUCORE_ERROR_INTERNAL;
                    }
                    const cucore_status_t status = create(d, reinterpret_cast<Handle **>(h));
                    fake::Uncounted cleanup;
                    cucore_device_release(d);
                    return status;
                },
                [release](void *h) {
                    fake::Uncounted cleanup;
                    release(static_cast<Handle *>(h));
                },
                minimum};
    }
    // A scenario making a texture object over `resource`.
    static Scenario texture_over(const cucore_resource_descriptor_t &resource, int minimum) {
        return {"cucore_texture_object_create",
                [resource](void **h) {
                    cucore_texture_object_options_t o = CUCORE_TEXTURE_OBJECT_OPTIONS_INIT;
                    o.normalized_coords = 1;
                    o.address_mode[0] = CUCORE_ADDRESS_MODE_WRAP;
                    return cucore_texture_object_create(nullptr, &resource, &o,
                                                        reinterpret_cast<cucore_texture_object_t **>(h));
                },
                [](void *h) {
                    fake::Uncounted cleanup;
                    cucore_texture_object_release(static_cast<cucore_texture_object_t *>(h));
                },
                minimum};
    }
    static void release_array(cucore_opaque_array_t *a) { cucore_opaque_array_release(a); }
    static void release_mipmapped(cucore_mipmapped_array_t *m) { cucore_mipmapped_array_release(m); }
};

TEST_F(ArrayFaultInjectionTest, OpaqueArrayCreate) {
    // The limits of a 2D array with surface load/store are asked of the device, then the driver makes it.
    run(on_fresh_device<cucore_opaque_array_t>(
        "cucore_opaque_array_create",
        [](cucore_device_t *d, cucore_opaque_array_t **a) {
            const cucore_opaque_array_options_t o = array_options(CUCORE_ARRAY_FORMAT_FLOAT32, 64, 32, 0,
                                                                  CUCORE_ARRAY_KIND_PLAIN, 0, 4,
                                                                  CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE);
            return cucore_opaque_array_create(d, &o, a);
        },
        release_array, 4));
    EXPECT_EQ(fake::counters().arrays, 0);
}

TEST_F(ArrayFaultInjectionTest, SparseLayeredCubemapCreate) {
    run(on_fresh_device<cucore_opaque_array_t>(
        "cucore_opaque_array_create",
        [](cucore_device_t *d, cucore_opaque_array_t **a) {
            const cucore_opaque_array_options_t o = array_options(CUCORE_ARRAY_FORMAT_UINT8, 32, 32, 0,
                                                                  CUCORE_ARRAY_KIND_LAYERED_CUBEMAP, 2, 4,
                                                                  CUCORE_ARRAY_FLAG_SPARSE);
            return cucore_opaque_array_create(d, &o, a);
        },
        release_array, 4));
}

TEST_F(ArrayFaultInjectionTest, MipmappedArrayCreate) {
    run(on_fresh_device<cucore_mipmapped_array_t>(
        "cucore_mipmapped_array_create",
        [](cucore_device_t *d, cucore_mipmapped_array_t **m) {
            const cucore_opaque_array_options_t o = array_options(CUCORE_ARRAY_FORMAT_BC7_UNORM, 64, 64);
            return cucore_mipmapped_array_create(d, &o, 7, m);
        },
        release_mipmapped, 4));
    EXPECT_EQ(fake::counters().mipmapped_arrays, 0);
}

TEST_F(ArrayFaultInjectionTest, MipmappedArrayLevel) {
    cucore_mipmapped_array_t *m = create_mipmapped(array_options(CUCORE_ARRAY_FORMAT_FLOAT16, 32, 32, 0,
                                                                 CUCORE_ARRAY_KIND_PLAIN, 0, 2), 4);
    run({"cucore_mipmapped_array_level",
         [m](void **h) { return cucore_mipmapped_array_level(m, 3, reinterpret_cast<cucore_opaque_array_t **>(h)); },
         [](void *h) { cucore_opaque_array_release(static_cast<cucore_opaque_array_t *>(h)); }, 2});
    EXPECT_EQ(cucore_mipmapped_array_release(m), CUCORE_SUCCESS);
}

// Foreign arrays: made by the raw driver in the primary context, wrapped over and over.
class ForeignArrayFaultInjectionTest : public ArrayFaultInjectionTest {
  protected:
    void SetUp() override {
        ArrayFaultInjectionTest::SetUp();
        fake::Uncounted setup;
        ASSERT_EQ(fake::table().cuDevicePrimaryCtxRetain(&context_, 0), CUDA_SUCCESS);
        fake::set_current_context(context_);
        CUDA_ARRAY3D_DESCRIPTOR d{};
        d.Width = 16;
        d.Height = 16;
        d.Depth = 4;
        d.Format = CU_AD_FORMAT_SIGNED_INT16;
        d.NumChannels = 2;
        d.Flags = CUDA_ARRAY3D_LAYERED;
        ASSERT_EQ(fake::table().cuArray3DCreate(&array_, &d), CUDA_SUCCESS);
        ASSERT_EQ(fake::table().cuMipmappedArrayCreate(&mipmapped_, &d, 3), CUDA_SUCCESS);
        fake::set_current_context(nullptr);
    }
    void TearDown() override {
        {
            fake::Uncounted cleanup;
            EXPECT_EQ(fake::table().cuArrayDestroy(array_), CUDA_SUCCESS);
            EXPECT_EQ(fake::table().cuMipmappedArrayDestroy(mipmapped_), CUDA_SUCCESS);
            EXPECT_EQ(fake::table().cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
        }
        ArrayFaultInjectionTest::TearDown();
    }
    static void released(void *count) { ++*static_cast<int *>(count); }
    CUcontext context_ = nullptr;
    CUarray array_ = nullptr;
    CUmipmappedArray mipmapped_ = nullptr;
};

TEST_F(ForeignArrayFaultInjectionTest, OpaqueArrayFromHandle) {
    int calls = 0;
    int made = 0;
    run(on_fresh_device<cucore_opaque_array_t>(
        "cucore_opaque_array_from_handle",
        [this, &calls, &made](cucore_device_t *d, cucore_opaque_array_t **a) {
            const int before = calls;
            const cucore_status_t status = cucore_opaque_array_from_handle(d, array_, &released, &calls, a);
            EXPECT_EQ(calls, before) << "never called when the wrap fails, nor before the release";
            made += status == CUCORE_SUCCESS;
            return status;
        },
        release_array, 2));
    EXPECT_EQ(calls, made) << "called once per wrapper, at its release";
    EXPECT_EQ(fake::counters().arrays, 1) << "never destroyed by the library";
}

TEST_F(ForeignArrayFaultInjectionTest, MipmappedArrayFromHandle) {
    int calls = 0;
    int made = 0;
    run(on_fresh_device<cucore_mipmapped_array_t>(
        "cucore_mipmapped_array_from_handle",
        [this, &calls, &made](cucore_device_t *d, cucore_mipmapped_array_t **m) {
            const int before = calls;
            const cucore_status_t status = cucore_mipmapped_array_from_handle(d, mipmapped_, &released, &calls, m);
            EXPECT_EQ(calls, before);
            made += status == CUCORE_SUCCESS;
            if (status == CUCORE_SUCCESS) {
                // A failure while the levels are counted is no end of the levels.
                fake::Uncounted check;
                cucore_opaque_array_info_t info = CUCORE_OPAQUE_ARRAY_INFO_INIT;
                EXPECT_EQ(cucore_mipmapped_array_info(*m, &info), CUCORE_SUCCESS);
                EXPECT_EQ(info.num_levels, 3u);
            }
            return status;
        },
        release_mipmapped, 3));
    EXPECT_EQ(calls, made);
    EXPECT_EQ(fake::counters().mipmapped_arrays, 1);
}

TEST_F(ArrayFaultInjectionTest, TextureObjectOverEachKindOfResource) {
    cucore_opaque_array_t *a = create(array_options(CUCORE_ARRAY_FORMAT_FLOAT32, 32, 32));
    cucore_mipmapped_array_t *m = create_mipmapped(array_options(CUCORE_ARRAY_FORMAT_FLOAT32, 32, 32), 3);
    cucore_buffer_t *b = allocate(8192);
    {
        SCOPED_TRACE("an array");
        run(texture_over(of(a), 2));
    }
    {
        SCOPED_TRACE("a mipmapped array");
        run(texture_over(of(m), 2));
    }
    {
        SCOPED_TRACE("linear memory");
        run(texture_over(linear(b, CUCORE_ARRAY_FORMAT_FLOAT32, 2), 2));
    }
    {
        SCOPED_TRACE("pitched memory");
        run(texture_over(pitched(b, CUCORE_ARRAY_FORMAT_UINT8, 4, 32, 16, 256), 2));
    }
    EXPECT_EQ(fake::counters().texture_objects, 0);
    cucore_buffer_release(b);
    EXPECT_EQ(cucore_mipmapped_array_release(m), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
}

TEST_F(ArrayFaultInjectionTest, SurfaceObjectCreate) {
    cucore_opaque_array_t *a = create(array_options(CUCORE_ARRAY_FORMAT_UINT32, 16, 16, 4, CUCORE_ARRAY_KIND_PLAIN, 0, 1,
                                                    CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE));
    const cucore_resource_descriptor_t r = of(a);
    run({"cucore_surface_object_create",
         [r](void **h) {
             return cucore_surface_object_create(nullptr, &r, reinterpret_cast<cucore_surface_object_t **>(h));
         },
         [](void *h) {
             fake::Uncounted cleanup;
             cucore_surface_object_release(static_cast<cucore_surface_object_t *>(h));
         },
         2});
    EXPECT_EQ(fake::counters().surface_objects, 0);
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
}

}  // namespace
