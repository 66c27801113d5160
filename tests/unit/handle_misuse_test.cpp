// Misuse of handles while the library still holds their objects: for every
// parent/child pair, an extra release and a use after release of either side
// are CUCORE_ERROR_INVALID_HANDLE and never a crash, the child keeps working on
// a parent its user released, and everything is gone once the last handle is.
// Also: a call holds what it uses (a release inside the call cannot free it),
// and no stale handle validates again, however many objects come and go.
#include <atomic>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/call_frame.hpp"
#include "core/error.hpp"
#include "core/handle_table.hpp"
#include "test_support.hpp"

namespace {

// One kind of handle as the misuse matrix sees it: type-erased calls.
struct Kind {
    const char *name;
    std::function<cucore_status_t(void *)> use;  // a call that succeeds on a valid handle
    std::function<cucore_status_t(void *)> retain;
    std::function<cucore_status_t(void *)> release;
};

#define CUCORE_KIND(noun, use_call)                                                                   \
    Kind {                                                                                            \
        #noun, use_call, [](void *h) { return cucore_##noun##_retain(static_cast<cucore_##noun##_t *>(h)); }, \
            [](void *h) { return cucore_##noun##_release(static_cast<cucore_##noun##_t *>(h)); }          \
    }

Kind device_kind() {
    return CUCORE_KIND(device, [](void *h) {
        int ordinal = -1;
        return cucore_device_ordinal(static_cast<cucore_device_t *>(h), &ordinal);
    });
}
Kind context_kind() {
    return CUCORE_KIND(context, [](void *h) {
        int primary = -1;
        return cucore_context_is_primary(static_cast<cucore_context_t *>(h), &primary);
    });
}
Kind stream_kind() {
    return CUCORE_KIND(stream, [](void *h) {
        uint32_t flags = 0;
        return cucore_stream_flags(static_cast<cucore_stream_t *>(h), &flags);
    });
}
Kind event_kind() {
    return CUCORE_KIND(event, [](void *h) {
        uint32_t flags = 0;
        return cucore_event_flags(static_cast<cucore_event_t *>(h), &flags);
    });
}
Kind resource_kind() {
    return CUCORE_KIND(memory_resource, [](void *h) {
        cucore_memory_resource_kind_t kind;
        return cucore_memory_resource_kind(static_cast<cucore_memory_resource_t *>(h), &kind);
    });
}
Kind buffer_kind() {
    return CUCORE_KIND(buffer, [](void *h) {
        uint64_t size = 0;
        return cucore_buffer_size(static_cast<cucore_buffer_t *>(h), &size);
    });
}
Kind object_code_kind() {
    return CUCORE_KIND(object_code, [](void *h) {
        size_t count = 0;
        return cucore_object_code_kernel_count(static_cast<cucore_object_code_t *>(h), &count);
    });
}
Kind kernel_kind() {
    return CUCORE_KIND(kernel, [](void *h) {
        const char *name = nullptr;
        return cucore_kernel_name(static_cast<cucore_kernel_t *>(h), &name);
    });
}
Kind graphics_kind() {
    return CUCORE_KIND(graphics_resource, [](void *h) {
        int mapped = -1;
        return cucore_graphics_resource_is_mapped(static_cast<cucore_graphics_resource_t *>(h), &mapped);
    });
}
Kind opaque_array_kind() {
    return CUCORE_KIND(opaque_array, [](void *h) {
        cucore_opaque_array_info_t info = CUCORE_OPAQUE_ARRAY_INFO_INIT;
        return cucore_opaque_array_info(static_cast<cucore_opaque_array_t *>(h), &info);
    });
}
Kind mipmapped_array_kind() {
    return CUCORE_KIND(mipmapped_array, [](void *h) {
        cucore_opaque_array_info_t info = CUCORE_OPAQUE_ARRAY_INFO_INIT;
        return cucore_mipmapped_array_info(static_cast<cucore_mipmapped_array_t *>(h), &info);
    });
}
Kind texture_kind() {
    return CUCORE_KIND(texture_object, [](void *h) {
        uint64_t handle = 0;
        return cucore_texture_object_handle(static_cast<cucore_texture_object_t *>(h), &handle);
    });
}
#undef CUCORE_KIND

// A texture object over `resource` (NULL on failure).
cucore_texture_object_t *texture_over(const cucore_resource_descriptor_t &resource) {
    cucore_texture_object_t *t = nullptr;
    EXPECT_EQ(cucore_texture_object_create(nullptr, &resource, nullptr, &t), CUCORE_SUCCESS)
        << cucore_last_error_message();
    return t;
}

// A parent, a child that holds it, and (where the API has one) the child's
// accessor for its parent.
struct Pair {
    std::string name;
    Kind parent, child;
    std::function<void *(cucore_device_t *, cucore_stream_t *)> make_parent;
    std::function<void *(void *parent, cucore_device_t *, cucore_stream_t *)> make_child;
    std::function<cucore_status_t(void *child, void **parent)> parent_of;  // empty: none
};

std::vector<Pair> pairs() {
    std::vector<Pair> out;
    out.push_back({"context<-stream", context_kind(), stream_kind(),
                   [](cucore_device_t *d, cucore_stream_t *) -> void * {
                       cucore_context_t *c = nullptr;
                       EXPECT_EQ(cucore_context_get_primary(d, &c), CUCORE_SUCCESS);
                       return c;
                   },
                   [](void *p, cucore_device_t *, cucore_stream_t *) -> void * {
                       cucore_stream_t *s = nullptr;
                       EXPECT_EQ(cucore_stream_create_in_context(static_cast<cucore_context_t *>(p), nullptr, &s),
                                 CUCORE_SUCCESS);
                       return s;
                   },
                   [](void *c, void **p) {
                       return cucore_stream_context(static_cast<cucore_stream_t *>(c),
                                                    reinterpret_cast<cucore_context_t **>(p));
                   }});
    out.push_back({"context<-event", context_kind(), event_kind(), out[0].make_parent,
                   [](void *p, cucore_device_t *, cucore_stream_t *) -> void * {
                       cucore_event_t *e = nullptr;
                       EXPECT_EQ(cucore_event_create_in_context(static_cast<cucore_context_t *>(p), nullptr, &e),
                                 CUCORE_SUCCESS);
                       return e;
                   },
                   [](void *c, void **p) {
                       return cucore_event_context(static_cast<cucore_event_t *>(c),
                                                   reinterpret_cast<cucore_context_t **>(p));
                   }});
    out.push_back({"device<-context", device_kind(), context_kind(),
                   [](cucore_device_t *, cucore_stream_t *) -> void * {
                       cucore_device_t *d = nullptr;
                       EXPECT_EQ(cucore_device_get(0, &d), CUCORE_SUCCESS);
                       return d;
                   },
                   [](void *p, cucore_device_t *, cucore_stream_t *) -> void * {
                       cucore_context_t *c = nullptr;
                       EXPECT_EQ(cucore_context_get_primary(static_cast<cucore_device_t *>(p), &c), CUCORE_SUCCESS);
                       return c;
                   },
                   [](void *c, void **p) {
                       return cucore_context_device(static_cast<cucore_context_t *>(c),
                                                    reinterpret_cast<cucore_device_t **>(p));
                   }});
    out.push_back({"stream<-buffer", stream_kind(), buffer_kind(),
                   [](cucore_device_t *d, cucore_stream_t *) -> void * {
                       cucore_stream_t *s = nullptr;
                       EXPECT_EQ(cucore_stream_create(d, nullptr, &s), CUCORE_SUCCESS);
                       return s;
                   },
                   [](void *p, cucore_device_t *d, cucore_stream_t *) -> void * {
                       cucore_buffer_t *b = nullptr;
                       EXPECT_EQ(cucore_device_allocate(d, 256, static_cast<cucore_stream_t *>(p), &b),
                                 CUCORE_SUCCESS);
                       return b;
                   },
                   [](void *c, void **p) {
                       return cucore_buffer_deallocation_stream(static_cast<cucore_buffer_t *>(c),
                                                                reinterpret_cast<cucore_stream_t **>(p));
                   }});
    out.push_back({"memory resource<-buffer", resource_kind(), buffer_kind(),
                   [](cucore_device_t *d, cucore_stream_t *) -> void * {
                       cucore_memory_resource_t *r = nullptr;
                       EXPECT_EQ(cucore_device_memory_resource_create(d, nullptr, &r), CUCORE_SUCCESS);
                       return r;
                   },
                   [](void *p, cucore_device_t *, cucore_stream_t *s) -> void * {
                       cucore_buffer_t *b = nullptr;
                       EXPECT_EQ(cucore_memory_resource_allocate(static_cast<cucore_memory_resource_t *>(p), 256, s,
                                                                 &b),
                                 CUCORE_SUCCESS);
                       return b;
                   },
                   [](void *c, void **p) {
                       return cucore_buffer_memory_resource(static_cast<cucore_buffer_t *>(c),
                                                            reinterpret_cast<cucore_memory_resource_t **>(p));
                   }});
    out.push_back({"buffer<-view", buffer_kind(), buffer_kind(),
                   [](cucore_device_t *d, cucore_stream_t *s) -> void * {
                       cucore_buffer_t *b = nullptr;
                       EXPECT_EQ(cucore_device_allocate(d, 256, s, &b), CUCORE_SUCCESS);
                       return b;
                   },
                   [](void *p, cucore_device_t *, cucore_stream_t *) -> void * {
                       cucore_buffer_t *v = nullptr;
                       EXPECT_EQ(cucore_buffer_view(static_cast<cucore_buffer_t *>(p), 64, 64, &v), CUCORE_SUCCESS);
                       return v;
                   },
                   {}});
    out.push_back({"object code<-kernel", object_code_kind(), kernel_kind(),
                   [](cucore_device_t *, cucore_stream_t *) -> void * {
                       const std::string image = fake::image({"k"}, {});
                       cucore_object_code_t *o = nullptr;
                       EXPECT_EQ(cucore_object_code_create(image.data(), image.size(), CUCORE_CODE_CUBIN, "m", &o),
                                 CUCORE_SUCCESS);
                       return o;
                   },
                   [](void *p, cucore_device_t *, cucore_stream_t *) -> void * {
                       cucore_kernel_t *k = nullptr;
                       EXPECT_EQ(cucore_object_code_get_kernel(static_cast<cucore_object_code_t *>(p), "k", &k),
                                 CUCORE_SUCCESS);
                       return k;
                   },
                   {}});
    out.push_back({"graphics resource<-mapped buffer", graphics_kind(), buffer_kind(),
                   [](cucore_device_t *d, cucore_stream_t *) -> void * {
                       cucore_graphics_resource_t *r = nullptr;
                       EXPECT_EQ(cucore_graphics_resource_from_gl_buffer(d, 7, 0, &r), CUCORE_SUCCESS);
                       return r;
                   },
                   [](void *p, cucore_device_t *, cucore_stream_t *s) -> void * {
                       cucore_buffer_t *b = nullptr;
                       EXPECT_EQ(cucore_graphics_resource_map(static_cast<cucore_graphics_resource_t *>(p), s,
                                                              CUCORE_GRAPHICS_MAP_HINT_NONE, &b),
                                 CUCORE_SUCCESS);
                       return b;
                   },
                   {}});
    out.push_back({"array<-texture", opaque_array_kind(), texture_kind(),
                   [](cucore_device_t *d, cucore_stream_t *) -> void * {
                       cucore_opaque_array_options_t o = CUCORE_OPAQUE_ARRAY_OPTIONS_INIT;
                       o.format = CUCORE_ARRAY_FORMAT_FLOAT32;
                       o.width = 16;
                       o.height = 16;
                       cucore_opaque_array_t *a = nullptr;
                       EXPECT_EQ(cucore_opaque_array_create(d, &o, &a), CUCORE_SUCCESS);
                       return a;
                   },
                   [](void *p, cucore_device_t *, cucore_stream_t *) -> void * {
                       cucore_resource_descriptor_t r = CUCORE_RESOURCE_DESCRIPTOR_INIT;
                       r.kind = CUCORE_RESOURCE_KIND_OPAQUE_ARRAY;
                       r.array = static_cast<cucore_opaque_array_t *>(p);
                       return texture_over(r);
                   },
                   {}});
    out.push_back({"mipmapped array<-level", mipmapped_array_kind(), opaque_array_kind(),
                   [](cucore_device_t *d, cucore_stream_t *) -> void * {
                       cucore_opaque_array_options_t o = CUCORE_OPAQUE_ARRAY_OPTIONS_INIT;
                       o.format = CUCORE_ARRAY_FORMAT_UINT8;
                       o.num_channels = 4;
                       o.width = 16;
                       o.height = 8;
                       cucore_mipmapped_array_t *m = nullptr;
                       EXPECT_EQ(cucore_mipmapped_array_create(d, &o, 3, &m), CUCORE_SUCCESS);
                       return m;
                   },
                   [](void *p, cucore_device_t *, cucore_stream_t *) -> void * {
                       cucore_opaque_array_t *level = nullptr;
                       EXPECT_EQ(cucore_mipmapped_array_level(static_cast<cucore_mipmapped_array_t *>(p), 2, &level),
                                 CUCORE_SUCCESS);
                       return level;
                   },
                   {}});
    out.push_back({"buffer<-texture", buffer_kind(), texture_kind(),
                   [](cucore_device_t *d, cucore_stream_t *s) -> void * {
                       cucore_buffer_t *b = nullptr;
                       EXPECT_EQ(cucore_device_allocate(d, 4096, s, &b), CUCORE_SUCCESS);
                       return b;
                   },
                   [](void *p, cucore_device_t *, cucore_stream_t *) -> void * {
                       cucore_resource_descriptor_t r = CUCORE_RESOURCE_DESCRIPTOR_INIT;
                       r.kind = CUCORE_RESOURCE_KIND_LINEAR;
                       r.buffer = static_cast<cucore_buffer_t *>(p);
                       r.format = CUCORE_ARRAY_FORMAT_FLOAT32;
                       r.num_channels = 4;
                       return texture_over(r);
                   },
                   {}});
    return out;
}

class HandleMisuseTest : public FakeDriverTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        objects_before_ = live(CUCORE_OBJECT_ANY);
        dev_ = device(0);
        ASSERT_EQ(cucore_stream_create(dev_, nullptr, &stream_), CUCORE_SUCCESS);
    }
    void TearDown() override {
        cucore_stream_release(stream_);
        cucore_device_release(dev_);
        EXPECT_EQ(live(CUCORE_OBJECT_ANY), objects_before_) << "objects left behind";
        EXPECT_EQ(fake::counters().graphics_resources, 0) << "registrations leaked";
        EXPECT_EQ(fake::counters().libraries, 0) << "libraries leaked";
        EXPECT_EQ(fake::counters().arrays + fake::counters().mipmapped_arrays, 0) << "arrays leaked";
        EXPECT_EQ(fake::counters().texture_objects, 0) << "texture objects leaked";
        FakeDriverTest::TearDown();
    }
    // A handle its user has released: every call on it, retain and release
    // included, is INVALID_HANDLE naming it as released.
    static void expect_stale(const Kind &kind, void *handle, const std::string &context) {
        EXPECT_EQ(kind.use(handle), CUCORE_ERROR_INVALID_HANDLE) << context << ": use after release";
        EXPECT_NE(message().find("released"), std::string::npos) << context << ": " << message();
        EXPECT_EQ(kind.retain(handle), CUCORE_ERROR_INVALID_HANDLE) << context << ": retain after release";
        EXPECT_EQ(kind.release(handle), CUCORE_ERROR_INVALID_HANDLE) << context << ": extra release";
    }
    cucore_device_t *dev_ = nullptr;
    cucore_stream_t *stream_ = nullptr;
    size_t objects_before_ = 0;
};

TEST_F(HandleMisuseTest, AnExtraReleaseOfAParentWhileItsChildLivesIsRefusedAndHarmless) {
    for (const Pair &pair : pairs()) {
        SCOPED_TRACE(pair.name);
        void *parent = pair.make_parent(dev_, stream_);
        void *child = pair.make_child(parent, dev_, stream_);
        ASSERT_TRUE(parent && child);
        ASSERT_EQ(pair.parent.release(parent), CUCORE_SUCCESS);
        expect_stale(pair.parent, parent, pair.name + ", parent");
        // The child still works, and still reaches its parent, under a new handle.
        EXPECT_EQ(pair.child.use(child), CUCORE_SUCCESS) << message();
        if (pair.parent_of) {
            void *again = nullptr;
            ASSERT_EQ(pair.parent_of(child, &again), CUCORE_SUCCESS) << message();
            EXPECT_NE(again, parent) << "a released handle never validates again";
            EXPECT_EQ(pair.parent.use(again), CUCORE_SUCCESS) << message();
            EXPECT_EQ(pair.parent.use(parent), CUCORE_ERROR_INVALID_HANDLE);
            EXPECT_EQ(pair.parent.release(again), CUCORE_SUCCESS);
            expect_stale(pair.parent, again, pair.name + ", parent handed out again");
        }
        ASSERT_EQ(pair.child.release(child), CUCORE_SUCCESS) << message();
        expect_stale(pair.child, child, pair.name + ", child");
    }
}

TEST_F(HandleMisuseTest, AnExtraReleaseOfAChildLeavesItsParentAlone) {
    for (const Pair &pair : pairs()) {
        SCOPED_TRACE(pair.name);
        void *parent = pair.make_parent(dev_, stream_);
        void *child = pair.make_child(parent, dev_, stream_);
        ASSERT_TRUE(parent && child);
        ASSERT_EQ(pair.child.release(child), CUCORE_SUCCESS) << message();
        expect_stale(pair.child, child, pair.name + ", child");
        EXPECT_EQ(pair.parent.use(parent), CUCORE_SUCCESS) << message();
        ASSERT_EQ(pair.parent.release(parent), CUCORE_SUCCESS);
        expect_stale(pair.parent, parent, pair.name + ", parent");
    }
}

TEST_F(HandleMisuseTest, RetainedReferencesAreCountedOnePerRelease) {
    for (const Pair &pair : pairs()) {
        SCOPED_TRACE(pair.name);
        void *parent = pair.make_parent(dev_, stream_);
        void *child = pair.make_child(parent, dev_, stream_);
        ASSERT_EQ(pair.parent.retain(parent), CUCORE_SUCCESS);
        ASSERT_EQ(pair.parent.release(parent), CUCORE_SUCCESS);
        EXPECT_EQ(pair.parent.use(parent), CUCORE_SUCCESS) << "one user reference left";
        ASSERT_EQ(pair.parent.release(parent), CUCORE_SUCCESS);
        expect_stale(pair.parent, parent, pair.name + ", parent");
        ASSERT_EQ(pair.child.release(child), CUCORE_SUCCESS);
    }
}

// --- A call holds what it uses ---

struct ReleasingResource {
    cucore_stream_t *stream_to_release = nullptr;
    int stream_calls_in_callback = -1;
    static cucore_status_t allocate(void *user_data, uint64_t, cucore_stream_t *stream, uint64_t *address) {
        auto *self = static_cast<ReleasingResource *>(user_data);
        // The user's last reference to the call's stream argument goes while the call runs.
        EXPECT_EQ(cucore_stream_release(self->stream_to_release), CUCORE_SUCCESS);
        uint32_t flags = 0;
        self->stream_calls_in_callback = cucore_stream_flags(stream, &flags);
        static uint64_t storage[64];
        *address = reinterpret_cast<uint64_t>(storage);
        return CUCORE_SUCCESS;
    }
    static cucore_status_t deallocate(void *, uint64_t, uint64_t, cucore_stream_t *stream) {
        uint32_t flags = 0;
        // Lent for the callback's duration, though the user released theirs long ago.
        return cucore_stream_flags(stream, &flags);
    }
};

TEST_F(HandleMisuseTest, AReleaseDuringACallDoesNotFreeWhatTheCallUses) {
    ReleasingResource state;
    cucore_memory_resource_callbacks_t callbacks = CUCORE_MEMORY_RESOURCE_CALLBACKS_INIT;
    callbacks.allocate = &ReleasingResource::allocate;
    callbacks.deallocate = &ReleasingResource::deallocate;
    callbacks.user_data = &state;
    callbacks.host_accessible = 1;
    cucore_memory_resource_t *resource = nullptr;
    ASSERT_EQ(cucore_user_memory_resource_create(&callbacks, &resource), CUCORE_SUCCESS) << message();
    cucore_stream_t *stream = nullptr;
    ASSERT_EQ(cucore_stream_create(dev_, nullptr, &stream), CUCORE_SUCCESS);
    const size_t streams = live(CUCORE_OBJECT_STREAM);
    state.stream_to_release = stream;
    cucore_buffer_t *buffer = nullptr;
    ASSERT_EQ(cucore_memory_resource_allocate(resource, 64, stream, &buffer), CUCORE_SUCCESS) << message();
    EXPECT_EQ(state.stream_calls_in_callback, CUCORE_SUCCESS) << "the callback's stream is usable";
    uint32_t flags = 0;
    EXPECT_EQ(cucore_stream_flags(stream, &flags), CUCORE_ERROR_INVALID_HANDLE) << "the user released it";
    EXPECT_EQ(live(CUCORE_OBJECT_STREAM), streams) << "the buffer holds its deallocation stream";
    cucore_stream_t *dealloc = nullptr;
    ASSERT_EQ(cucore_buffer_deallocation_stream(buffer, &dealloc), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_stream_flags(dealloc, &flags), CUCORE_SUCCESS);
    cucore_stream_release(dealloc);
    EXPECT_EQ(cucore_buffer_release(buffer), CUCORE_SUCCESS);
    EXPECT_EQ(live(CUCORE_OBJECT_STREAM), streams - 1) << "the buffer took the stream with it";
    EXPECT_EQ(cucore_memory_resource_release(resource), CUCORE_SUCCESS);
}

TEST_F(HandleMisuseTest, CallsRacingTheLastReleaseSeeAValidOrAReleasedHandleNeverAFreedOne) {
    // Bounded by iterations, not time: each round, one thread uses a stream while
    // another releases its last reference. Every call answers SUCCESS or
    // INVALID_HANDLE, and nothing is left at the end (ASan/TSan builds check the rest).
    for (int round = 0; round < 200; ++round) {
        cucore_stream_t *stream = nullptr;
        ASSERT_EQ(cucore_stream_create(dev_, nullptr, &stream), CUCORE_SUCCESS);
        std::atomic<bool> go{false};
        std::atomic<int> unexpected{0};
        std::thread user([&] {
            while (!go.load()) {
            }
            for (int i = 0; i < 50; ++i) {
                uint32_t flags = 0;
                cucore_status_t status = cucore_stream_flags(stream, &flags);
                if (status != CUCORE_SUCCESS && status != CUCORE_ERROR_INVALID_HANDLE) ++unexpected;
                status = cucore_stream_synchronize(stream);
                if (status != CUCORE_SUCCESS && status != CUCORE_ERROR_INVALID_HANDLE) ++unexpected;
            }
        });
        go.store(true);
        EXPECT_EQ(cucore_stream_release(stream), CUCORE_SUCCESS);
        user.join();
        EXPECT_EQ(unexpected.load(), 0);
    }
}

// --- No stale handle ever validates again ---

class Probe : public cucore::core::Object {
  public:
    Probe() noexcept : Object(CUCORE_OBJECT_STREAM) {}
};

TEST(HandleGenerationTest, AHandleStaysStalePastTheOld24BitLimit) {
    using namespace cucore::core;
    // The per-thread slot cache gives the same slot back on every cycle, so this
    // cycles one slot's generation 2^24 + 2 times (the old handle's generation field).
    void *first = handles::hand_out(make<Probe>().detach());
    const uint32_t slot = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(first)) & 0xFFFFFF;
    handles::release(first, CUCORE_OBJECT_STREAM, "first");
    uint32_t same_slot = 0;
    for (uint32_t i = 0; i < (1u << 24) + 2; ++i) {
        void *handle = handles::hand_out(make<Probe>().detach());
        ASSERT_NE(handle, first) << "cycle " << i;
        if ((static_cast<uint32_t>(reinterpret_cast<uintptr_t>(handle)) & 0xFFFFFF) == slot) ++same_slot;
        handles::release(handle, CUCORE_OBJECT_STREAM, "handle");
    }
    EXPECT_GT(same_slot, 1u << 24) << "the test must reuse one slot past the old limit";
    CallFrame frame;
    EXPECT_THROW(CallFrame::hold(first, CUCORE_OBJECT_STREAM, "first"), Error);
}

TEST(HandleGenerationTest, ASlotThatSpentItsGenerationsIsRetired) {
    using namespace cucore::core;
    Ref<Probe> probe = make<Probe>();
    table::Slot &slot = table::slot_at(probe->slot());
    // Fast-forward the slot to its last generation.
    slot.handle.store(uint64_t{UINT32_MAX} << 32);
    void *last = handles::hand_out(Ref<Probe>(probe).detach());
    handles::release(last, CUCORE_OBJECT_STREAM, "last");
    // The object lives on (the Ref), but no handle to it can be made any more.
    try {
        handles::hand_out(Ref<Probe>(probe).detach());
        ADD_FAILURE() << "a spent slot handed out a handle";
    } catch (const Error &error) {
        EXPECT_EQ(error.status(), CUCORE_ERROR_INVALID_STATE);
    }
    const uint32_t retired = probe->slot();
    probe = nullptr;  // destroyed; the slot is never reused
    for (int i = 0; i < 100; ++i) {
        Ref<Probe> next = make<Probe>();
        ASSERT_NE(next->slot(), retired);
    }
    CallFrame frame;
    EXPECT_THROW(CallFrame::hold(last, CUCORE_OBJECT_STREAM, "last"), Error);
}

TEST(HandleGenerationTest, AWeakReferenceNeverLocksALaterObjectOfItsSlot) {
    using namespace cucore::core;
    Ref<Probe> probe = make<Probe>();
    const WeakRef<Probe> weak(probe.get());
    EXPECT_TRUE(weak.lock());
    probe = nullptr;
    Ref<Probe> next = make<Probe>();  // the thread's slot cache gives the slot back
    EXPECT_FALSE(weak.lock());
}

}  // namespace
