// Graphics interop through the fake driver: registration, mappings as objects
// (buffers and arrays) that unmap on their stream, unregistration only after the
// unmap in every release order, errors, and fault injection of every create path.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <functional>
#include <string>
#include <vector>

#include "cucore.hpp"
#include "test_support.hpp"

namespace {

constexpr uint32_t kTexture2D = 0x0DE1;  // GL_TEXTURE_2D

struct ReleaseErrors {
    std::vector<std::string> messages;
    static void record(cucore_status_t, int, const char *message, void *user_data) {
        static_cast<ReleaseErrors *>(user_data)->messages.emplace_back(message);
    }
};

class GraphicsTest : public FakeDriverTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        resources_before_ = live(CUCORE_OBJECT_GRAPHICS_RESOURCE);
        arrays_before_ = live(CUCORE_OBJECT_OPAQUE_ARRAY);
        mipmapped_before_ = live(CUCORE_OBJECT_MIPMAPPED_ARRAY);
        textures_before_ = live(CUCORE_OBJECT_TEXTURE_OBJECT) + live(CUCORE_OBJECT_SURFACE_OBJECT);
        dev_ = device(0);
        ASSERT_EQ(cucore_stream_create(dev_, nullptr, &s1_), CUCORE_SUCCESS) << message();
        ASSERT_EQ(cucore_stream_create(dev_, nullptr, &s2_), CUCORE_SUCCESS) << message();
    }
    void TearDown() override {
        cucore_stream_release(s1_);
        cucore_stream_release(s2_);
        cucore_device_release(dev_);
        EXPECT_EQ(live(CUCORE_OBJECT_GRAPHICS_RESOURCE), resources_before_) << "leaked graphics resources";
        EXPECT_EQ(live(CUCORE_OBJECT_OPAQUE_ARRAY), arrays_before_) << "leaked arrays";
        EXPECT_EQ(live(CUCORE_OBJECT_MIPMAPPED_ARRAY), mipmapped_before_) << "leaked mipmapped arrays";
        EXPECT_EQ(live(CUCORE_OBJECT_TEXTURE_OBJECT) + live(CUCORE_OBJECT_SURFACE_OBJECT), textures_before_)
            << "leaked texture or surface objects";
        EXPECT_EQ(fake::counters().graphics_resources, 0) << "registrations leaked";
        EXPECT_EQ(fake::counters().graphics_mapped, 0) << "mappings leaked";
        EXPECT_EQ(fake::graphics_order_violations(), 0) << "unregistered while mapped";
        FakeDriverTest::TearDown();
    }
    cucore_graphics_resource_t *buffer_resource(uint32_t name = 7, uint32_t flags = 0) {
        cucore_graphics_resource_t *r = nullptr;
        EXPECT_EQ(cucore_graphics_resource_from_gl_buffer(dev_, name, flags, &r), CUCORE_SUCCESS) << message();
        return r;
    }
    cucore_graphics_resource_t *image_resource(uint32_t flags = 0) {
        cucore_graphics_resource_t *r = nullptr;
        EXPECT_EQ(cucore_graphics_resource_from_gl_image(dev_, 9, kTexture2D, flags, &r), CUCORE_SUCCESS)
            << message();
        return r;
    }
    static CUgraphicsResource cu(const cucore_graphics_resource_t *r) {
        void *raw = nullptr;
        EXPECT_EQ(cucore_graphics_resource_handle(r, &raw), CUCORE_SUCCESS);
        return static_cast<CUgraphicsResource>(raw);
    }
    static CUstream cu(const cucore_stream_t *s) {
        void *raw = nullptr;
        EXPECT_EQ(cucore_stream_handle(s, &raw), CUCORE_SUCCESS);
        return static_cast<CUstream>(raw);
    }
    // The graphics calls since install, as "map@S" / "unmap@S" / "unregister" (S: 1, 2 or ?).
    std::vector<std::string> calls() const {
        std::vector<std::string> out;
        for (const fake::GraphicsCall &call : fake::graphics_calls()) {
            std::string stream = call.stream == cu(s1_) ? "1" : call.stream == cu(s2_) ? "2" : "?";
            if (call.name == "cuGraphicsMapResources") out.push_back("map@" + stream);
            else if (call.name == "cuGraphicsUnmapResources") out.push_back("unmap@" + stream);
            else out.push_back("unregister");
        }
        return out;
    }
    // The graphics calls after the first `mark` (a size of calls() taken earlier).
    std::vector<std::string> calls_after(size_t mark) const {
        std::vector<std::string> all = calls();
        return std::vector<std::string>(all.begin() + static_cast<std::ptrdiff_t>(std::min(mark, all.size())),
                                        all.end());
    }
    static uint64_t size_of(const cucore_buffer_t *b) {
        uint64_t size = 0;
        EXPECT_EQ(cucore_buffer_size(b, &size), CUCORE_SUCCESS);
        return size;
    }
    static int mapped(const cucore_graphics_resource_t *r) {
        int is = -1;
        EXPECT_EQ(cucore_graphics_resource_is_mapped(r, &is), CUCORE_SUCCESS) << message();
        return is;
    }

    cucore_device_t *dev_ = nullptr;
    cucore_stream_t *s1_ = nullptr;
    cucore_stream_t *s2_ = nullptr;

  private:
    size_t resources_before_ = 0, arrays_before_ = 0, mipmapped_before_ = 0, textures_before_ = 0;
};

using Calls = std::vector<std::string>;

// ---- Registration --------------------------------------------------------------------

TEST_F(GraphicsTest, RegistrationFlagsReachTheDriver) {
    struct Row {
        uint32_t flags;
        int driver;
    };
    for (Row row : {Row{CUCORE_GRAPHICS_REGISTER_NONE, CU_GRAPHICS_REGISTER_FLAGS_NONE},
                    Row{CUCORE_GRAPHICS_REGISTER_READ_ONLY, CU_GRAPHICS_REGISTER_FLAGS_READ_ONLY},
                    Row{CUCORE_GRAPHICS_REGISTER_WRITE_DISCARD, CU_GRAPHICS_REGISTER_FLAGS_WRITE_DISCARD}}) {
        cucore_graphics_resource_t *r = buffer_resource(7, row.flags);
        EXPECT_EQ(fake::graphics_register_flags(cu(r)), row.driver);
        EXPECT_EQ(cucore_graphics_resource_release(r), CUCORE_SUCCESS);
    }
    cucore_graphics_resource_t *image = image_resource(CUCORE_GRAPHICS_REGISTER_SURFACE_LOAD_STORE |
                                                       CUCORE_GRAPHICS_REGISTER_TEXTURE_GATHER);
    EXPECT_EQ(fake::graphics_register_flags(cu(image)),
              CU_GRAPHICS_REGISTER_FLAGS_SURFACE_LDST | CU_GRAPHICS_REGISTER_FLAGS_TEXTURE_GATHER);
    EXPECT_EQ(cucore_graphics_resource_release(image), CUCORE_SUCCESS);
}

TEST_F(GraphicsTest, BadFlagsAreInvalidArguments) {
    cucore_graphics_resource_t *r = reinterpret_cast<cucore_graphics_resource_t *>(0x1);
    EXPECT_EQ(cucore_graphics_resource_from_gl_buffer(dev_, 7, 0x10, &r), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(r, nullptr);
    EXPECT_NE(message().find("unknown flag bits 0x10"), std::string::npos) << message();
    EXPECT_EQ(cucore_graphics_resource_from_gl_image(dev_, 9, kTexture2D, 0x80000000u, &r),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_graphics_resource_from_gl_buffer(
                  dev_, 7, CUCORE_GRAPHICS_REGISTER_READ_ONLY | CUCORE_GRAPHICS_REGISTER_WRITE_DISCARD, &r),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("READ_ONLY with WRITE_DISCARD"), std::string::npos) << message();
    EXPECT_EQ(cucore_graphics_resource_from_gl_buffer(dev_, 7, CUCORE_GRAPHICS_REGISTER_SURFACE_LOAD_STORE, &r),
              CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("GL images only"), std::string::npos) << message();
    EXPECT_EQ(fake::counters().graphics_resources, 0);
}

TEST_F(GraphicsTest, RegistrationFailuresSayWhy) {
    cucore_graphics_resource_t *r = nullptr;
    EXPECT_EQ(cucore_graphics_resource_from_gl_buffer(dev_, 0, 0, &r), CUCORE_ERROR_CUDA);
    EXPECT_NE(message().find("GL buffer 0 is not a name of the GL context"), std::string::npos) << message();
    fake::set_gl_device(1);
    EXPECT_NE(cucore_graphics_resource_from_gl_buffer(dev_, 7, 0, &r), CUCORE_SUCCESS);
    EXPECT_NE(message().find("on another GPU"), std::string::npos) << message();
    fake::set_gl_device(-1);
    EXPECT_EQ(cucore_graphics_resource_from_gl_image(dev_, 9, kTexture2D, 0, &r), CUCORE_ERROR_CUDA);
    EXPECT_NE(message().find("not an NVIDIA one"), std::string::npos) << message();
    EXPECT_EQ(r, nullptr);
}

// ---- Mapping and the stream of the unmap ----------------------------------------------

TEST_F(GraphicsTest, BufferReleaseUnmapsOnTheMappingStream) {
    cucore_graphics_resource_t *r = buffer_resource();
    const size_t resources_before = live(CUCORE_OBJECT_MEMORY_RESOURCE);
    cucore_buffer_t *b = nullptr;
    ASSERT_EQ(cucore_graphics_resource_map(r, s2_, CUCORE_GRAPHICS_MAP_HINT_NONE, &b), CUCORE_SUCCESS) << message();
    EXPECT_EQ(size_of(b), fake::kGlBufferSize);
    EXPECT_EQ(mapped(r), 1);
    // The memory is the GL buffer's: a fill lands in it.
    ASSERT_EQ(cucore_buffer_fill(b, 0xABCD1234u, 4, s2_), CUCORE_SUCCESS) << message();
    uint32_t word = 0;
    std::memcpy(&word, fake::graphics_bytes(cu(r))->data() + 100, 4);
    EXPECT_EQ(word, 0xABCD1234u);
    // The mapped range is memory of no memory resource, as foreign memory is: the buffer answers NULL, and
    // there is nothing to allocate more from. It is still the device's memory.
    cucore_memory_resource_t *mapping = reinterpret_cast<cucore_memory_resource_t *>(0x1);
    ASSERT_EQ(cucore_buffer_memory_resource(b, &mapping), CUCORE_SUCCESS) << message();
    EXPECT_EQ(mapping, nullptr);
    EXPECT_EQ(live(CUCORE_OBJECT_MEMORY_RESOURCE), resources_before) << "a mapping is no memory resource";
    cucore_memory_resource_kind_t kind = CUCORE_MEMORY_RESOURCE_GRAPHICS;
    EXPECT_EQ(cucore_memory_resource_kind(mapping, &kind), CUCORE_ERROR_INVALID_HANDLE);
    cucore_buffer_t *other = nullptr;
    EXPECT_EQ(cucore_memory_resource_allocate(mapping, 16, s1_, &other), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(other, nullptr);
    int device_accessible = -1, host_accessible = -1, managed = -1, device_id = -2;
    ASSERT_EQ(cucore_buffer_accessibility(b, &device_accessible, &host_accessible, &managed), CUCORE_SUCCESS);
    EXPECT_EQ(device_accessible, 1);
    EXPECT_EQ(host_accessible, 0);
    EXPECT_EQ(managed, 0);
    ASSERT_EQ(cucore_buffer_device_id(b, &device_id), CUCORE_SUCCESS);
    EXPECT_EQ(device_id, 0);
    EXPECT_EQ(cucore_buffer_release(b), CUCORE_SUCCESS);
    EXPECT_EQ(mapped(r), 0);
    EXPECT_EQ(cucore_graphics_resource_release(r), CUCORE_SUCCESS);
    EXPECT_EQ(calls(), (Calls{"map@2", "unmap@2", "unregister"}));
}

TEST_F(GraphicsTest, UnmapOverrideStreamAndClosedBuffer) {
    cucore_graphics_resource_t *r = buffer_resource();
    cucore_buffer_t *b = nullptr;
    ASSERT_EQ(cucore_graphics_resource_map(r, s1_, CUCORE_GRAPHICS_MAP_HINT_NONE, &b), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graphics_resource_unmap(r, s2_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(mapped(r), 0);
    EXPECT_EQ(size_of(b), 0u) << "the mapped buffer is closed by the unmap";
    EXPECT_EQ(cucore_buffer_release(b), CUCORE_SUCCESS);  // nothing more to unmap
    // Mapped again, unmapped without an override: the mapping stream.
    ASSERT_EQ(cucore_graphics_resource_map(r, s1_, CUCORE_GRAPHICS_MAP_HINT_NONE, &b), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graphics_resource_unmap(r, nullptr), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_buffer_release(b), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graphics_resource_release(r), CUCORE_SUCCESS);
    EXPECT_EQ(calls(), (Calls{"map@1", "unmap@2", "map@1", "unmap@1", "unregister"}));
}

TEST_F(GraphicsTest, BufferDeallocationStreamIsTheOverrideOfTheLastRelease) {
    cucore_graphics_resource_t *r = buffer_resource();
    cucore_buffer_t *b = nullptr;
    ASSERT_EQ(cucore_graphics_resource_map(r, s1_, CUCORE_GRAPHICS_MAP_HINT_NONE, &b), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_buffer_set_deallocation_stream(b, s2_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_buffer_release(b), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_graphics_resource_map(r, s1_, CUCORE_GRAPHICS_MAP_HINT_NONE, &b), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_buffer_close(b, s2_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(mapped(r), 0);
    EXPECT_EQ(cucore_buffer_release(b), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graphics_resource_release(r), CUCORE_SUCCESS);
    EXPECT_EQ(calls(), (Calls{"map@1", "unmap@2", "map@1", "unmap@2", "unregister"}));
}

// ---- Unregistration follows the unmap in every release order --------------------------

TEST_F(GraphicsTest, ResourceReleasedFirstUnregistersAfterTheBuffer) {
    cucore_graphics_resource_t *r = buffer_resource();
    cucore_buffer_t *b = nullptr;
    ASSERT_EQ(cucore_graphics_resource_map(r, s1_, CUCORE_GRAPHICS_MAP_HINT_NONE, &b), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graphics_resource_release(r), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().graphics_resources, 1) << "the buffer holds the registration";
    EXPECT_EQ(calls(), (Calls{"map@1"}));
    EXPECT_EQ(cucore_buffer_release(b), CUCORE_SUCCESS);
    EXPECT_EQ(calls(), (Calls{"map@1", "unmap@1", "unregister"}));
}

TEST_F(GraphicsTest, ViewOutlivingTheBufferKeepsTheMapping) {
    cucore_graphics_resource_t *r = buffer_resource();
    cucore_buffer_t *b = nullptr, *view = nullptr;
    ASSERT_EQ(cucore_graphics_resource_map(r, s1_, CUCORE_GRAPHICS_MAP_HINT_NONE, &b), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_buffer_view(b, 64, 128, &view), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_buffer_release(b), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graphics_resource_release(r), CUCORE_SUCCESS);
    EXPECT_EQ(calls(), (Calls{"map@1"}));
    EXPECT_EQ(cucore_buffer_release(view), CUCORE_SUCCESS);
    EXPECT_EQ(calls(), (Calls{"map@1", "unmap@1", "unregister"}));
}

TEST_F(GraphicsTest, CloseWhileMappedUnmapsThenUnregisters) {
    for (cucore_stream_t *override_stream : {static_cast<cucore_stream_t *>(nullptr), s2_}) {
        const size_t first = calls().size();
        const std::string expected = override_stream ? "unmap@2" : "unmap@1";
        cucore_graphics_resource_t *r = buffer_resource();
        cucore_buffer_t *b = nullptr;
        ASSERT_EQ(cucore_graphics_resource_map(r, s1_, CUCORE_GRAPHICS_MAP_HINT_NONE, &b), CUCORE_SUCCESS);
        EXPECT_EQ(cucore_graphics_resource_close(r, override_stream), CUCORE_SUCCESS) << message();
        EXPECT_EQ(size_of(b), 0u);
        EXPECT_EQ(cucore_graphics_resource_close(r, nullptr), CUCORE_SUCCESS) << "idempotent";
        EXPECT_EQ(cucore_buffer_release(b), CUCORE_SUCCESS);
        EXPECT_EQ(cucore_graphics_resource_release(r), CUCORE_SUCCESS);
        Calls all = calls();
        EXPECT_EQ(Calls(all.begin() + static_cast<long>(first), all.end()), (Calls{"map@1", expected, "unregister"}))
            << "unmap, unregister, and nothing after close";
    }
}

TEST_F(GraphicsTest, AfterCloseEveryCallIsInvalidState) {
    cucore_graphics_resource_t *r = buffer_resource();
    ASSERT_EQ(cucore_graphics_resource_close(r, nullptr), CUCORE_SUCCESS);
    cucore_buffer_t *b = nullptr;
    EXPECT_EQ(cucore_graphics_resource_map(r, s1_, CUCORE_GRAPHICS_MAP_HINT_NONE, &b), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("closed"), std::string::npos) << message();
    EXPECT_EQ(cucore_graphics_resource_unmap(r, nullptr), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("closed"), std::string::npos) << message();
    cucore_opaque_array_t *a = nullptr;
    cucore_mipmapped_array_t *m = nullptr;
    EXPECT_EQ(cucore_graphics_resource_map_array(r, s1_, 0, 0, 0, &a), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(cucore_graphics_resource_map_mipmapped_array(r, s1_, 0, &m), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(cucore_graphics_resources_map(&r, 1, s1_, &b), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(mapped(r), 0);
    EXPECT_EQ(cu(r), nullptr);
    EXPECT_EQ(cucore_graphics_resource_release(r), CUCORE_SUCCESS);
    EXPECT_EQ(calls(), (Calls{"unregister"}));
}

TEST_F(GraphicsTest, DoubleMapAndUnmapWhenNotMappedAreClearErrors) {
    cucore_graphics_resource_t *r = buffer_resource();
    EXPECT_EQ(cucore_graphics_resource_unmap(r, nullptr), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("is not mapped"), std::string::npos) << message();
    cucore_buffer_t *b = nullptr, *again = nullptr;
    ASSERT_EQ(cucore_graphics_resource_map(r, s1_, CUCORE_GRAPHICS_MAP_HINT_NONE, &b), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graphics_resource_map(r, s1_, CUCORE_GRAPHICS_MAP_HINT_NONE, &again), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("already mapped"), std::string::npos) << message();
    EXPECT_EQ(again, nullptr);
    cucore_opaque_array_t *a = nullptr;
    EXPECT_EQ(cucore_graphics_resource_map_array(r, s1_, 0, 0, 0, &a), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(cucore_buffer_release(b), CUCORE_SUCCESS);
    // A buffer maps as a pointer only.
    EXPECT_EQ(cucore_graphics_resource_map_array(r, s1_, 0, 0, 0, &a), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("GL buffer, which maps as a pointer"), std::string::npos) << message();
    EXPECT_EQ(cucore_graphics_resource_unmap(r, nullptr), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(cucore_graphics_resource_release(r), CUCORE_SUCCESS);
    EXPECT_EQ(calls(), (Calls{"map@1", "unmap@1", "unregister"}));
}

TEST_F(GraphicsTest, MapHintsSetTheDriverMapFlags) {
    cucore_graphics_resource_t *r = buffer_resource();
    cucore_buffer_t *b = nullptr;
    ASSERT_EQ(cucore_graphics_resource_map(r, s1_, CUCORE_GRAPHICS_MAP_HINT_READ_ONLY, &b), CUCORE_SUCCESS);
    EXPECT_EQ(fake::graphics_map_flags(cu(r)), CU_GRAPHICS_MAP_RESOURCE_FLAGS_READ_ONLY);
    EXPECT_EQ(cucore_buffer_release(b), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_graphics_resource_map(r, s1_, CUCORE_GRAPHICS_MAP_HINT_WRITE_DISCARD, &b), CUCORE_SUCCESS);
    EXPECT_EQ(fake::graphics_map_flags(cu(r)), CU_GRAPHICS_MAP_RESOURCE_FLAGS_WRITE_DISCARD);
    EXPECT_EQ(cucore_buffer_release(b), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graphics_resource_map(r, s1_, 3, &b), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("argument 'hint' is 3"), std::string::npos) << message();
    EXPECT_EQ(cucore_graphics_resource_release(r), CUCORE_SUCCESS);
}

// ---- Release-path failures are reported -----------------------------------------------

TEST_F(GraphicsTest, ReleasePathFailuresAreReported) {
    expects_release_errors_ = true;
    ReleaseErrors errors;
    cucore_set_release_error_handler(&ReleaseErrors::record, &errors);
    cucore_graphics_resource_t *r = buffer_resource();
    cucore_buffer_t *b = nullptr;
    ASSERT_EQ(cucore_graphics_resource_map(r, s1_, CUCORE_GRAPHICS_MAP_HINT_NONE, &b), CUCORE_SUCCESS);
    fake::fail_entry("cuGraphicsUnmapResources", CUDA_ERROR_UNKNOWN);
    EXPECT_EQ(cucore_buffer_release(b), CUCORE_SUCCESS);
    ASSERT_EQ(errors.messages.size(), 1u);
    EXPECT_NE(errors.messages[0].find("unmapping a graphics resource"), std::string::npos) << errors.messages[0];
    fake::fail_entry("");
    EXPECT_EQ(mapped(r), 0) << "the library lets the mapping go";
    // The fake still has it mapped: the driver's unmap is done by hand, then a failed unregister is reported.
    CUgraphicsResource raw = cu(r);
    ASSERT_EQ(fake::table().cuGraphicsUnmapResources(1, &raw, nullptr), CUDA_SUCCESS);
    fake::fail_entry("cuGraphicsUnregisterResource", CUDA_ERROR_UNKNOWN);
    EXPECT_EQ(cucore_graphics_resource_release(r), CUCORE_SUCCESS);
    ASSERT_EQ(errors.messages.size(), 2u);
    EXPECT_NE(errors.messages[1].find("unregistering a graphics resource"), std::string::npos) << errors.messages[1];
    fake::fail_entry("");
    cucore_set_release_error_handler(nullptr, nullptr);
    ASSERT_EQ(fake::table().cuGraphicsUnregisterResource(raw), CUDA_SUCCESS);  // what the fake refused
}

// Issue 12: of the failures injected into release paths, those of the graphics destructor were silent (the
// context query and restore were neither counted nor reported, and a failed query "restored" the caller's
// context to NULL). Every driver call of every graphics release fails in turn here, the caller having a context
// of its own current: each failure is counted once, the caller's context is back unless restoring it is what
// failed, and nothing stays registered, mapped or dangling. (The driver's unmap and unregister fail after doing
// their work, as a release the driver carried out but reported, so that one failure is one error.)
TEST_F(GraphicsTest, EveryReleasePathFailureIsCounted) {
    expects_release_errors_ = true;
    struct Release {
        const char *name;
        bool image;           // the resource is a GL image (mapped as an array)
        bool mapped;          // a mapping is made (a buffer or an array)
        bool resource_first;  // the resource is released before its mapping, which then ends both
    };
    const Release releases[] = {
        {"a mapped buffer", false, true, false},
        {"a mapped array", true, true, false},
        {"an unmapped resource", false, false, false},
        {"a resource and then its mapped buffer", false, true, true},
        {"a resource and then its mapped array", true, true, true},
    };
    const CUcontext callers = fake::make_foreign_context(0);
    for (const Release &release : releases) {
        SCOPED_TRACE(release.name);
        std::vector<std::string> clean;  // the calls of the release when nothing fails (i = 0)
        for (long i = 0; i <= static_cast<long>(clean.size()); ++i) {
            cucore_graphics_resource_t *r = release.image ? image_resource() : buffer_resource();
            cucore_buffer_t *b = nullptr;
            cucore_opaque_array_t *a = nullptr;
            if (release.mapped && release.image) {
                ASSERT_EQ(cucore_graphics_resource_map_array(r, s1_, 0, 0, 0, &a), CUCORE_SUCCESS) << message();
            } else if (release.mapped) {
                ASSERT_EQ(cucore_graphics_resource_map(r, s1_, 0, &b), CUCORE_SUCCESS) << message();
            }
            if (release.resource_first) {
                ASSERT_EQ(cucore_graphics_resource_release(r), CUCORE_SUCCESS);  // the mapping holds it
                r = nullptr;
            }
            const std::string failing = i > 0 ? clean[i - 1] : "";
            SCOPED_TRACE("failing call " + std::to_string(i) + " (" + failing + ")");
            const uint64_t before = release_errors();
            fake::set_current_context(callers);
            fake::reset_calls();
            fake::fail_call(i, CUDA_ERROR_UNKNOWN,
                            failing.rfind("cuGraphics", 0) == 0 ? fake::Failure::after_work : fake::Failure::refuse);
            const cucore_status_t released[3] = {cucore_buffer_release(b), cucore_opaque_array_release(a),
                                                 cucore_graphics_resource_release(r)};  // NULL: no-ops
            fake::fail_call(0);
            const std::vector<std::string> log = fake::call_log();
            const CUcontext current = fake::current_context();
            fake::set_current_context(nullptr);
            for (cucore_status_t status : released) EXPECT_EQ(status, CUCORE_SUCCESS) << "releases never fail";
            if (i == 0) {
                clean = log;
                EXPECT_EQ(release_errors(), before) << "a release that meets no failure reports none";
                EXPECT_EQ(current, callers);
            } else {
                ASSERT_EQ(log[i - 1], failing) << "the calls before the failure are those of the clean release";
                EXPECT_EQ(release_errors(), before + 1) << "each failure in a release is counted, once";
                // A restore is a cuCtxSetCurrent that does not follow the query of a bind.
                const bool restore_failed = failing == "cuCtxSetCurrent" && (i < 2 || log[i - 2] != "cuCtxGetCurrent");
                if (!restore_failed) {
                    EXPECT_EQ(current, callers) << "the caller's context is restored";
                }
            }
            EXPECT_EQ(fake::counters().graphics_mapped, 0) << "nothing stays mapped";
            EXPECT_EQ(fake::counters().graphics_resources, 0) << "nothing stays registered";
            EXPECT_EQ(fake::graphics_order_violations(), 0) << "unregistered while mapped";
            EXPECT_EQ(live(CUCORE_OBJECT_GRAPHICS_RESOURCE), 0u);
            EXPECT_EQ(live(CUCORE_OBJECT_OPAQUE_ARRAY), 0u);
            if (HasFailure()) return;  // one iteration's failures, not every later one's
        }
        EXPECT_GE(clean.size(), 4u) << "the context query, the bind, the driver's release and the restore";
    }
}

TEST_F(GraphicsTest, ExplicitUnmapAndCloseFailuresAreReturned) {
    cucore_graphics_resource_t *r = buffer_resource();
    cucore_buffer_t *b = nullptr;
    ASSERT_EQ(cucore_graphics_resource_map(r, s1_, CUCORE_GRAPHICS_MAP_HINT_NONE, &b), CUCORE_SUCCESS);
    CUgraphicsResource raw = cu(r);
    fake::fail_entry("cuGraphicsUnmapResources", CUDA_ERROR_UNKNOWN);
    EXPECT_EQ(cucore_graphics_resource_unmap(r, nullptr), CUCORE_ERROR_CUDA);
    EXPECT_NE(message().find("cuGraphicsUnmapResources"), std::string::npos) << message();
    fake::fail_entry("");
    EXPECT_EQ(mapped(r), 0) << "the mapping is over either way";
    EXPECT_EQ(size_of(b), 0u);
    EXPECT_EQ(cucore_buffer_release(b), CUCORE_SUCCESS);
    ASSERT_EQ(fake::table().cuGraphicsUnmapResources(1, &raw, nullptr), CUDA_SUCCESS);  // what the fake refused
    fake::fail_entry("cuGraphicsUnregisterResource", CUDA_ERROR_UNKNOWN);
    EXPECT_EQ(cucore_graphics_resource_close(r, nullptr), CUCORE_ERROR_CUDA);
    EXPECT_NE(message().find("cuGraphicsUnregisterResource"), std::string::npos) << message();
    fake::fail_entry("");
    EXPECT_EQ(cucore_graphics_resource_close(r, nullptr), CUCORE_SUCCESS) << "closed either way";
    EXPECT_EQ(cucore_graphics_resource_release(r), CUCORE_SUCCESS);
    ASSERT_EQ(fake::table().cuGraphicsUnregisterResource(raw), CUDA_SUCCESS);
}

// Issue 12: a close whose context bind failed marked the resource closed, so neither a second close nor the
// destructor unregistered it.
TEST_F(GraphicsTest, CloseWhoseContextBindFailsUnregistersLater) {
    cucore_graphics_resource_t *r = buffer_resource();
    ASSERT_EQ(fake::counters().graphics_resources, 1);
    fake::set_current_context(nullptr);  // the close must bind the resource's context
    fake::fail_entry("cuCtxSetCurrent", CUDA_ERROR_UNKNOWN);
    EXPECT_EQ(cucore_graphics_resource_close(r, nullptr), CUCORE_ERROR_CUDA);
    EXPECT_NE(message().find("cuCtxSetCurrent"), std::string::npos) << message();
    fake::fail_entry("");
    EXPECT_EQ(fake::counters().graphics_resources, 1) << "nothing was unregistered";
    EXPECT_NE(cu(r), nullptr) << "the resource is still open";
    EXPECT_EQ(cucore_graphics_resource_close(r, nullptr), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::counters().graphics_resources, 0) << "the second close unregisters";
    EXPECT_EQ(cucore_graphics_resource_release(r), CUCORE_SUCCESS);

    // The same failure, then the last release: the destructor unregisters.
    r = buffer_resource();
    fake::set_current_context(nullptr);
    fake::fail_entry("cuCtxSetCurrent", CUDA_ERROR_UNKNOWN);
    EXPECT_EQ(cucore_graphics_resource_close(r, nullptr), CUCORE_ERROR_CUDA);
    fake::fail_entry("");
    EXPECT_EQ(cucore_graphics_resource_release(r), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().graphics_resources, 0) << "the last release unregisters";
}

// ---- Batch map ------------------------------------------------------------------------

TEST_F(GraphicsTest, BatchMapIsOneDriverCallAndEachBufferUnmapsOnItsOwn) {
    cucore_graphics_resource_t *r[3] = {buffer_resource(1), buffer_resource(2), buffer_resource(3)};
    cucore_buffer_t *b[3] = {};
    fake::reset_calls();
    ASSERT_EQ(cucore_graphics_resources_map(r, 3, s1_, b), CUCORE_SUCCESS) << message();
    std::vector<std::string> log = fake::call_log();
    EXPECT_EQ(std::count(log.begin(), log.end(), "cuGraphicsMapResources"), 1);
    uint64_t addresses[3] = {};
    for (int i = 0; i < 3; ++i) {
        ASSERT_NE(b[i], nullptr);
        ASSERT_EQ(cucore_buffer_address(b[i], &addresses[i]), CUCORE_SUCCESS);
        EXPECT_EQ(addresses[i], reinterpret_cast<uint64_t>(fake::graphics_bytes(cu(r[i]))->data()));
        EXPECT_EQ(mapped(r[i]), 1);
    }
    EXPECT_EQ(cucore_buffer_release(b[1]), CUCORE_SUCCESS);
    EXPECT_EQ(mapped(r[1]), 0);
    EXPECT_EQ(mapped(r[0]), 1);
    for (int i : {0, 2}) EXPECT_EQ(cucore_buffer_release(b[i]), CUCORE_SUCCESS);
    for (auto *resource : r) EXPECT_EQ(cucore_graphics_resource_release(resource), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().graphics_mapped, 0);
}

TEST_F(GraphicsTest, BatchMapRefusesBadSetsAndMapsNothing) {
    cucore_graphics_resource_t *r[2] = {buffer_resource(1), buffer_resource(2)};
    cucore_buffer_t *b[2] = {reinterpret_cast<cucore_buffer_t *>(0x1), reinterpret_cast<cucore_buffer_t *>(0x1)};
    cucore_graphics_resource_t *twice[2] = {r[0], r[0]};
    EXPECT_EQ(cucore_graphics_resources_map(twice, 2, s1_, b), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("twice"), std::string::npos) << message();
    EXPECT_EQ(b[0], nullptr);
    EXPECT_EQ(b[1], nullptr);
    EXPECT_EQ(cucore_graphics_resources_map(r, 0, s1_, b), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_graphics_resources_map(nullptr, 2, s1_, b), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_graphics_resources_map(r, 2, s1_, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_graphics_resource_t *with_garbage[2] = {r[0], reinterpret_cast<cucore_graphics_resource_t *>(0xdead)};
    EXPECT_EQ(cucore_graphics_resources_map(with_garbage, 2, s1_, b), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_NE(message().find("'resources[1]'"), std::string::npos) << "names the element: " << message();
    EXPECT_EQ(mapped(r[0]), 0) << "nothing mapped when an element is bad";
    cucore_buffer_t *one = nullptr;
    ASSERT_EQ(cucore_graphics_resource_map(r[1], s1_, CUCORE_GRAPHICS_MAP_HINT_NONE, &one), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graphics_resources_map(r, 2, s1_, b), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(mapped(r[0]), 0) << "nothing else mapped";
    EXPECT_EQ(cucore_buffer_release(one), CUCORE_SUCCESS);
    // A driver failure in the middle unmaps everything.
    fake::fail_entry("cuGraphicsResourceGetMappedPointer", CUDA_ERROR_UNKNOWN);
    EXPECT_EQ(cucore_graphics_resources_map(r, 2, s1_, b), CUCORE_ERROR_CUDA);
    fake::fail_entry("");
    EXPECT_EQ(fake::counters().graphics_mapped, 0);
    for (auto *resource : r) EXPECT_EQ(cucore_graphics_resource_release(resource), CUCORE_SUCCESS);
}

// ---- Arrays ---------------------------------------------------------------------------

TEST_F(GraphicsTest, BatchUnmapIsOneDriverCallOnTheMappingStream) {
    cucore_graphics_resource_t *r[3] = {buffer_resource(1), buffer_resource(2), buffer_resource(3)};
    cucore_buffer_t *b[3] = {};
    ASSERT_EQ(cucore_graphics_resources_map(r, 3, s2_, b), CUCORE_SUCCESS) << message();
    fake::reset_calls();
    size_t mark = calls().size();
    ASSERT_EQ(cucore_graphics_resources_unmap(r, 3, nullptr), CUCORE_SUCCESS) << message();
    std::vector<std::string> log = fake::call_log();
    EXPECT_EQ(std::count(log.begin(), log.end(), "cuGraphicsUnmapResources"), 1) << "one driver call";
    EXPECT_EQ(calls_after(mark), (Calls{"unmap@2", "unmap@2", "unmap@2"})) << "on the mapping stream";
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(mapped(r[i]), 0);
        EXPECT_EQ(size_of(b[i]), 0u) << "the mapped buffer reads as closed";
    }
    mark = calls().size();
    for (auto *buffer : b) EXPECT_EQ(cucore_buffer_release(buffer), CUCORE_SUCCESS);
    EXPECT_TRUE(calls_after(mark).empty()) << "the buffers' release unmaps nothing more";
    // The override stream; images too.
    cucore_graphics_resource_t *image = image_resource();
    cucore_opaque_array_t *array = nullptr;
    ASSERT_EQ(cucore_graphics_resource_map_array(image, s1_, 0, 0, 0, &array), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graphics_resources_map(r, 2, s1_, b), CUCORE_SUCCESS) << message();
    cucore_graphics_resource_t *mixed[3] = {image, r[0], r[1]};
    mark = calls().size();
    ASSERT_EQ(cucore_graphics_resources_unmap(mixed, 3, s2_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(calls_after(mark), (Calls{"unmap@2", "unmap@2", "unmap@2"}));
    void *raw_array = nullptr;
    EXPECT_EQ(cucore_opaque_array_handle(array, &raw_array), CUCORE_ERROR_INVALID_STATE) << "the array is gone";
    mark = calls().size();
    EXPECT_EQ(cucore_opaque_array_release(array), CUCORE_SUCCESS);
    for (int i = 0; i < 2; ++i) EXPECT_EQ(cucore_buffer_release(b[i]), CUCORE_SUCCESS);
    EXPECT_TRUE(calls_after(mark).empty());
    for (auto *resource : r) EXPECT_EQ(cucore_graphics_resource_release(resource), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graphics_resource_release(image), CUCORE_SUCCESS);
}

TEST_F(GraphicsTest, BatchUnmapRefusesBadSetsAndUnmapsNothing) {
    cucore_graphics_resource_t *r[3] = {buffer_resource(1), buffer_resource(2), buffer_resource(3)};
    cucore_buffer_t *b[3] = {};
    ASSERT_EQ(cucore_graphics_resource_map(r[0], s1_, 0, &b[0]), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_graphics_resource_map(r[1], s2_, 0, &b[1]), CUCORE_SUCCESS) << message();
    const size_t mark = calls().size();
    EXPECT_EQ(cucore_graphics_resources_unmap(r, 2, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("different streams"), std::string::npos) << message();
    EXPECT_EQ(cucore_graphics_resources_unmap(r, 3, s1_), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("resources[2] is not mapped"), std::string::npos) << message();
    cucore_graphics_resource_t *twice[2] = {r[0], r[0]};
    EXPECT_EQ(cucore_graphics_resources_unmap(twice, 2, s1_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find("twice"), std::string::npos) << message();
    EXPECT_EQ(cucore_graphics_resources_unmap(r, 0, s1_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_graphics_resources_unmap(nullptr, 2, s1_), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_graphics_resource_t *with_garbage[2] = {r[0], reinterpret_cast<cucore_graphics_resource_t *>(0xdead)};
    EXPECT_EQ(cucore_graphics_resources_unmap(with_garbage, 2, s1_), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_NE(message().find("'resources[1]'"), std::string::npos) << message();
    EXPECT_EQ(cucore_graphics_resources_unmap(r, 2, reinterpret_cast<cucore_stream_t *>(0xdead)),
              CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_TRUE(calls_after(mark).empty()) << "nothing reached the driver";
    EXPECT_EQ(mapped(r[0]), 1);
    EXPECT_EQ(mapped(r[1]), 1);
    ASSERT_EQ(cucore_graphics_resource_close(r[2], nullptr), CUCORE_SUCCESS);
    cucore_graphics_resource_t *with_closed[2] = {r[0], r[2]};
    EXPECT_EQ(cucore_graphics_resources_unmap(with_closed, 2, s1_), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("resources[1] is closed"), std::string::npos) << message();
    // A driver failure: returned, and the resources count as unmapped.
    CUgraphicsResource raw[2] = {cu(r[0]), cu(r[1])};
    fake::fail_entry("cuGraphicsUnmapResources", CUDA_ERROR_UNKNOWN);
    EXPECT_EQ(cucore_graphics_resources_unmap(r, 2, s1_), CUCORE_ERROR_CUDA);
    EXPECT_NE(message().find("cuGraphicsUnmapResources"), std::string::npos) << message();
    fake::fail_entry("");
    EXPECT_EQ(mapped(r[0]), 0);
    EXPECT_EQ(mapped(r[1]), 0);
    EXPECT_EQ(size_of(b[0]), 0u);
    ASSERT_EQ(fake::table().cuGraphicsUnmapResources(2, raw, nullptr), CUDA_SUCCESS);  // what the fake refused
    for (int i = 0; i < 2; ++i) EXPECT_EQ(cucore_buffer_release(b[i]), CUCORE_SUCCESS);
    for (auto *resource : r) EXPECT_EQ(cucore_graphics_resource_release(resource), CUCORE_SUCCESS);
}

TEST_F(GraphicsTest, ReportedReleaseErrorsReachTheHandler) {
    expects_release_errors_ = true;
    ReleaseErrors errors;
    uint64_t before = 0, after = 0;
    ASSERT_EQ(cucore_release_error_count(&before), CUCORE_SUCCESS);
    cucore_set_release_error_handler(&ReleaseErrors::record, &errors);
    cucore_report_release_error(CUCORE_ERROR_CUDA, 999, "a scoped batch could not unmap");
    cucore_report_release_error(CUCORE_ERROR_INVALID_STATE, 0, nullptr);
    cucore_set_release_error_handler(nullptr, nullptr);
    ASSERT_EQ(cucore_release_error_count(&after), CUCORE_SUCCESS);
    EXPECT_EQ(after - before, 2u);
    ASSERT_EQ(errors.messages.size(), 2u);
    EXPECT_EQ(errors.messages[0], "a scoped batch could not unmap");
    EXPECT_EQ(errors.messages[1], "");
}

TEST_F(GraphicsTest, MappedArrayCopiesAndUnmapsWithItsLastReference) {
    cucore_graphics_resource_t *image = image_resource(CUCORE_GRAPHICS_REGISTER_SURFACE_LOAD_STORE);
    cucore_buffer_t *b = nullptr;
    EXPECT_EQ(cucore_graphics_resource_map(image, s1_, CUCORE_GRAPHICS_MAP_HINT_NONE, &b), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("GL image, which maps as arrays"), std::string::npos) << message();
    cucore_opaque_array_t *a = nullptr;
    ASSERT_EQ(cucore_graphics_resource_map_array(image, s2_, CUCORE_GRAPHICS_MAP_HINT_WRITE_DISCARD, 0, 0, &a),
              CUCORE_SUCCESS)
        << message();
    // A mapped GL image is an opaque array like any other, but not the library's to destroy.
    cucore_opaque_array_info_t info = CUCORE_OPAQUE_ARRAY_INFO_INIT;
    ASSERT_EQ(cucore_opaque_array_info(a, &info), CUCORE_SUCCESS) << message();
    EXPECT_EQ(info.width, fake::kGlImageWidth);
    EXPECT_EQ(info.height, fake::kGlImageHeight);
    EXPECT_EQ(info.depth, 0u);
    EXPECT_EQ(info.kind, CUCORE_ARRAY_KIND_PLAIN);
    EXPECT_EQ(info.num_channels, 4u);
    EXPECT_EQ(info.element_size, 4u);
    EXPECT_EQ(info.format, CUCORE_ARRAY_FORMAT_UINT8);
    EXPECT_EQ(info.flags, uint32_t{CUCORE_ARRAY_FLAG_SURFACE_LOAD_STORE}) << "registered for surface load/store";
    EXPECT_EQ(info.is_owned, 0u);
    EXPECT_EQ(info.num_levels, 1u);
    EXPECT_EQ(info.size_bytes, fake::kGlImageWidth * fake::kGlImageHeight * 4);
    void *raw = nullptr;
    ASSERT_EQ(cucore_opaque_array_handle(a, &raw), CUCORE_SUCCESS);
    EXPECT_NE(raw, nullptr);
    const size_t bytes = fake::kGlImageWidth * fake::kGlImageHeight * 4;
    std::vector<unsigned char> pattern(bytes), back(bytes, 0);
    for (size_t i = 0; i < bytes; ++i) pattern[i] = static_cast<unsigned char>(i * 7 + 3);
    ASSERT_EQ(cucore_opaque_array_copy_from_host(a, pattern.data(), bytes, s2_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(*fake::graphics_bytes(cu(image), 0), pattern);
    ASSERT_EQ(cucore_opaque_array_copy_to_host(a, back.data(), bytes, s2_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(back, pattern);
    EXPECT_EQ(cucore_opaque_array_copy_to_host(a, back.data(), bytes - 1, s2_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_NE(message().find(std::to_string(bytes - 1)), std::string::npos) << message();
    EXPECT_EQ(cucore_opaque_array_copy_from_host(a, nullptr, bytes, s2_), CUCORE_ERROR_INVALID_ARGUMENT);
    // A region of it: row 2, elements 3 to 6.
    std::vector<unsigned char> region(4 * 4, 0x77);
    cucore_opaque_array_copy_t copy = CUCORE_OPAQUE_ARRAY_COPY_INIT;
    copy.src_memory.host = region.data();
    copy.dst_array.array = a;
    copy.dst_array.x = 3;
    copy.dst_array.y = 2;
    copy.width = 4;
    ASSERT_EQ(cucore_opaque_array_copy(&copy, s2_), CUCORE_SUCCESS) << message();
    std::vector<unsigned char> expected = pattern;
    std::fill(expected.begin() + (2 * fake::kGlImageWidth + 3) * 4, expected.begin() + (2 * fake::kGlImageWidth + 7) * 4,
              0x77);
    EXPECT_EQ(*fake::graphics_bytes(cu(image), 0), expected);
    // To and from a buffer: a view of a mapped GL buffer of the same size, and the whole (larger) buffer.
    cucore_graphics_resource_t *vbo = buffer_resource();
    cucore_buffer_t *whole = nullptr, *view = nullptr;
    ASSERT_EQ(cucore_graphics_resource_map(vbo, s2_, CUCORE_GRAPHICS_MAP_HINT_NONE, &whole), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_buffer_view(whole, 0, bytes, &view), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_opaque_array_copy_to_buffer(a, view, s2_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(std::memcmp(fake::graphics_bytes(cu(vbo))->data(), expected.data(), bytes), 0);
    std::memset(fake::graphics_bytes(cu(vbo))->data(), 0x5A, bytes);
    ASSERT_EQ(cucore_opaque_array_copy_from_buffer(a, view, s2_), CUCORE_SUCCESS) << message();
    EXPECT_EQ(fake::graphics_bytes(cu(image), 0)->at(17), 0x5A);
    ASSERT_EQ(cucore_opaque_array_copy_from_buffer(a, whole, s2_), CUCORE_SUCCESS) << "a larger buffer: its start";
    cucore_buffer_t *short_view = nullptr;
    ASSERT_EQ(cucore_buffer_view(whole, 0, bytes - 4, &short_view), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_opaque_array_copy_from_buffer(a, short_view, s2_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_buffer_release(short_view), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_buffer_release(view), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_buffer_release(whole), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graphics_resource_release(vbo), CUCORE_SUCCESS);
    // The array holds the mapping, which holds the registration.
    EXPECT_EQ(cucore_graphics_resource_retain(image), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graphics_resource_release(image), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graphics_resource_release(image), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().graphics_resources, 1);
    EXPECT_EQ(cucore_opaque_array_retain(a), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().graphics_mapped, 1);
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().graphics_resources, 0);
    EXPECT_EQ(fake::counters().arrays, 0) << "the driver's array, never cuArrayDestroy'd by the library";
    std::vector<std::string> c = calls();
    ASSERT_GE(c.size(), 2u);
    EXPECT_EQ(c[c.size() - 2], "unmap@2");
    EXPECT_EQ(c.back(), "unregister");
}

TEST_F(GraphicsTest, ClosingAMappedArrayDoesNotUnmapWhileAnotherHolderLives) {
    cucore_graphics_resource_t *image = image_resource();
    cucore_opaque_array_t *a = nullptr, *b = nullptr;
    ASSERT_EQ(cucore_graphics_resource_map_array(image, s1_, 0, 0, 0, &a), CUCORE_SUCCESS) << message();
    cucore_mipmapped_array_t *m = nullptr;
    EXPECT_EQ(cucore_graphics_resource_map_mipmapped_array(image, s1_, 0, &m), CUCORE_ERROR_INVALID_STATE)
        << "already mapped";
    ASSERT_EQ(cucore_opaque_array_retain(a), CUCORE_SUCCESS);
    b = a;
    EXPECT_EQ(cucore_opaque_array_close(a), CUCORE_SUCCESS);
    EXPECT_EQ(mapped(image), 0) << "the array's share was the mapping's last holder";
    cucore_opaque_array_info_t info = CUCORE_OPAQUE_ARRAY_INFO_INIT;
    EXPECT_EQ(cucore_opaque_array_info(b, &info), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_opaque_array_release(b), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graphics_resource_release(image), CUCORE_SUCCESS);
    EXPECT_EQ(calls(), (Calls{"map@1", "unmap@1", "unregister"}));
}

TEST_F(GraphicsTest, MipmappedArrayLevelsShareTheMapping) {
    cucore_graphics_resource_t *image = image_resource();
    cucore_mipmapped_array_t *mip = nullptr;
    cucore_opaque_array_t *level = nullptr;
    ASSERT_EQ(cucore_graphics_resource_map_mipmapped_array(image, s1_, CUCORE_GRAPHICS_MAP_HINT_NONE, &mip),
              CUCORE_SUCCESS)
        << message();
    cucore_opaque_array_info_t info = CUCORE_OPAQUE_ARRAY_INFO_INIT;
    ASSERT_EQ(cucore_mipmapped_array_info(mip, &info), CUCORE_SUCCESS) << message();
    EXPECT_EQ(info.num_levels, 2u) << "counted by asking the driver for levels";
    EXPECT_EQ(info.width, fake::kGlImageWidth);
    EXPECT_EQ(info.height, fake::kGlImageHeight);
    EXPECT_EQ(info.is_owned, 0u);
    void *raw = nullptr;
    ASSERT_EQ(cucore_mipmapped_array_handle(mip, &raw), CUCORE_SUCCESS);
    EXPECT_NE(raw, nullptr);
    ASSERT_EQ(cucore_mipmapped_array_level(mip, 1, &level), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_opaque_array_info(level, &info), CUCORE_SUCCESS);
    EXPECT_EQ(info.width, fake::kGlImageWidth / 2);
    EXPECT_EQ(info.height, fake::kGlImageHeight / 2);
    EXPECT_EQ(info.num_levels, 1u);
    std::vector<unsigned char> small(info.width * info.height * 4, 0x42);
    ASSERT_EQ(cucore_opaque_array_copy_from_host(level, small.data(), small.size(), s1_), CUCORE_SUCCESS);
    EXPECT_EQ(*fake::graphics_bytes(cu(image), 1), small);
    cucore_opaque_array_t *missing = reinterpret_cast<cucore_opaque_array_t *>(0x1);
    EXPECT_EQ(cucore_mipmapped_array_level(mip, 2, &missing), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(missing, nullptr);
    EXPECT_NE(message().find("2 levels"), std::string::npos) << "names the count: " << message();
    EXPECT_EQ(cucore_mipmapped_array_release(mip), CUCORE_SUCCESS);
    EXPECT_EQ(mapped(image), 1) << "the level holds the mapping";
    EXPECT_EQ(cucore_opaque_array_release(level), CUCORE_SUCCESS);
    EXPECT_EQ(mapped(image), 0);
    EXPECT_EQ(cucore_graphics_resource_release(image), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().mipmapped_arrays, 0) << "the driver's, never destroyed by the library";
}

TEST_F(GraphicsTest, ArraysOfAnEndedMappingAreInvalidState) {
    cucore_graphics_resource_t *image = image_resource();
    cucore_opaque_array_t *a = nullptr;
    ASSERT_EQ(cucore_graphics_resource_map_array(image, s1_, CUCORE_GRAPHICS_MAP_HINT_NONE, 0, 1, &a), CUCORE_SUCCESS);
    cucore_opaque_array_t *bad = nullptr;
    EXPECT_EQ(cucore_graphics_resource_unmap(image, s2_), CUCORE_SUCCESS) << message();
    void *raw = nullptr;
    EXPECT_EQ(cucore_opaque_array_handle(a, &raw), CUCORE_ERROR_INVALID_STATE);
    EXPECT_NE(message().find("unmapped or closed"), std::string::npos) << message();
    cucore_opaque_array_info_t info = CUCORE_OPAQUE_ARRAY_INFO_INIT;
    EXPECT_EQ(cucore_opaque_array_info(a, &info), CUCORE_ERROR_INVALID_STATE);
    std::vector<unsigned char> host(256);
    EXPECT_EQ(cucore_opaque_array_copy_to_host(a, host.data(), host.size(), s1_), CUCORE_ERROR_INVALID_STATE);
    cucore_texture_object_t *t = reinterpret_cast<cucore_texture_object_t *>(0x1);
    cucore_resource_descriptor_t resource = CUCORE_RESOURCE_DESCRIPTOR_INIT;
    resource.kind = CUCORE_RESOURCE_KIND_OPAQUE_ARRAY;
    resource.array = a;
    EXPECT_EQ(cucore_texture_object_create(nullptr, &resource, nullptr, &t), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(t, nullptr);
    EXPECT_EQ(cucore_opaque_array_close(a), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graphics_resource_map_array(image, s1_, 0, 1, 0, &bad), CUCORE_ERROR_CUDA) << "no layer 1";
    EXPECT_EQ(bad, nullptr);
    EXPECT_EQ(mapped(image), 0);
    // A mipmapped array and its level after a close of the resource.
    cucore_mipmapped_array_t *mip = nullptr;
    cucore_opaque_array_t *level = nullptr;
    ASSERT_EQ(cucore_graphics_resource_map_mipmapped_array(image, s1_, 0, &mip), CUCORE_SUCCESS) << message();
    ASSERT_EQ(cucore_mipmapped_array_level(mip, 0, &level), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_graphics_resource_close(image, nullptr), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_mipmapped_array_info(mip, &info), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(cucore_opaque_array_info(level, &info), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(cucore_mipmapped_array_level(mip, 1, &bad), CUCORE_ERROR_INVALID_STATE);
    EXPECT_EQ(cucore_opaque_array_release(level), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_mipmapped_array_release(mip), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graphics_resource_release(image), CUCORE_SUCCESS);
    EXPECT_EQ(calls(), (Calls{"map@1", "unmap@2", "map@1", "unmap@1", "map@1", "unmap@1", "unregister"}));
}

// A texture or surface object over a mapped GL image holds the mapping (and so the registration) until it goes.
TEST_F(GraphicsTest, TexturesAndSurfacesOverAMappedImageKeepTheMapping) {
    cucore_graphics_resource_t *image = image_resource(CUCORE_GRAPHICS_REGISTER_SURFACE_LOAD_STORE);
    cucore_opaque_array_t *a = nullptr;
    ASSERT_EQ(cucore_graphics_resource_map_array(image, s2_, 0, 0, 0, &a), CUCORE_SUCCESS) << message();
    void *raw = nullptr;
    ASSERT_EQ(cucore_opaque_array_handle(a, &raw), CUCORE_SUCCESS);
    cucore_resource_descriptor_t resource = CUCORE_RESOURCE_DESCRIPTOR_INIT;
    resource.kind = CUCORE_RESOURCE_KIND_OPAQUE_ARRAY;
    resource.array = a;
    cucore_texture_object_options_t o = CUCORE_TEXTURE_OBJECT_OPTIONS_INIT;
    o.read_mode = CUCORE_READ_MODE_NORMALIZED_FLOAT;
    o.filter_mode = CUCORE_FILTER_MODE_LINEAR;
    cucore_texture_object_t *t = nullptr;
    ASSERT_EQ(cucore_texture_object_create(nullptr, &resource, &o, &t), CUCORE_SUCCESS) << message();
    cucore_surface_object_t *s = nullptr;
    ASSERT_EQ(cucore_surface_object_create(nullptr, &resource, &s), CUCORE_SUCCESS) << message();
    uint64_t handle = 0;
    ASSERT_EQ(cucore_texture_object_handle(t, &handle), CUCORE_SUCCESS);
    fake::TextureRecord record;
    ASSERT_TRUE(fake::texture_record(handle, record));
    EXPECT_EQ(record.resource.res.array.hArray, static_cast<CUarray>(raw));
    EXPECT_EQ(record.texture.filterMode, CU_TR_FILTER_MODE_LINEAR);
    EXPECT_EQ(record.texture.flags, 0u) << "bytes read as normalized floats";
    // The array and the resource go; the texture and surface keep the mapping.
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graphics_resource_release(image), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().graphics_mapped, 1);
    EXPECT_EQ(cucore_surface_object_release(s), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().graphics_mapped, 1) << "the texture still holds it";
    EXPECT_EQ(calls(), (Calls{"map@2"}));
    EXPECT_EQ(cucore_texture_object_release(t), CUCORE_SUCCESS);
    EXPECT_EQ(calls(), (Calls{"map@2", "unmap@2", "unregister"})) << "unmapped on the mapping stream, then unregistered";
    EXPECT_EQ(fake::resource_violations(), 0) << "nothing unmapped under a live texture or surface";

    // Without SURFACE_LOAD_STORE at registration the mapped array has no surface flag: refused.
    image = image_resource();
    ASSERT_EQ(cucore_graphics_resource_map_array(image, s1_, 0, 0, 0, &a), CUCORE_SUCCESS) << message();
    resource.array = a;
    EXPECT_EQ(cucore_surface_object_create(nullptr, &resource, &s), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graphics_resource_release(image), CUCORE_SUCCESS);
    EXPECT_EQ(fake::counters().graphics_resources, 0);
}

// A texture over a GL image's mipmapped array holds the mapping too.
TEST_F(GraphicsTest, ATextureOverAMappedMipmappedArrayKeepsTheMapping) {
    cucore_graphics_resource_t *image = image_resource();
    cucore_mipmapped_array_t *mip = nullptr;
    ASSERT_EQ(cucore_graphics_resource_map_mipmapped_array(image, s1_, 0, &mip), CUCORE_SUCCESS) << message();
    cucore_resource_descriptor_t resource = CUCORE_RESOURCE_DESCRIPTOR_INIT;
    resource.kind = CUCORE_RESOURCE_KIND_MIPMAPPED_ARRAY;
    resource.mipmapped_array = mip;
    cucore_texture_object_t *t = nullptr;
    ASSERT_EQ(cucore_texture_object_create(nullptr, &resource, nullptr, &t), CUCORE_SUCCESS) << message();
    EXPECT_EQ(cucore_mipmapped_array_close(mip), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_mipmapped_array_release(mip), CUCORE_SUCCESS);
    EXPECT_EQ(mapped(image), 1) << "the texture holds the mapping";
    EXPECT_EQ(cucore_texture_object_release(t), CUCORE_SUCCESS);
    EXPECT_EQ(mapped(image), 0);
    EXPECT_EQ(cucore_graphics_resource_release(image), CUCORE_SUCCESS);
}

// ---- Threads --------------------------------------------------------------------------

TEST_F(GraphicsTest, ConcurrentMapsOfOneResourceSerialize) {
    cucore_graphics_resource_t *r = buffer_resource();
    std::atomic<int> maps{0}, refused{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 200; ++i) {
                cucore_buffer_t *b = nullptr;
                cucore_status_t status =
                    cucore_graphics_resource_map(r, t % 2 ? s1_ : s2_, CUCORE_GRAPHICS_MAP_HINT_NONE, &b);
                if (status == CUCORE_SUCCESS) {
                    ++maps;
                    if (i % 3 == 0) {
                        cucore_graphics_resource_unmap(r, nullptr);  // may race with another thread's map: any status
                    }
                    EXPECT_EQ(cucore_buffer_release(b), CUCORE_SUCCESS);
                } else {
                    EXPECT_EQ(status, CUCORE_ERROR_INVALID_STATE) << message();
                    ++refused;
                }
            }
        });
    for (std::thread &thread : threads) thread.join();
    EXPECT_EQ(maps + refused, 800);
    EXPECT_GT(maps.load(), 0);
    EXPECT_EQ(mapped(r), 0);
    EXPECT_EQ(cucore_graphics_resource_release(r), CUCORE_SUCCESS);
    // The driver saw strictly alternating maps and unmaps.
    Calls all = calls();
    ASSERT_EQ(all.size(), 2 * static_cast<size_t>(maps.load()) + 1);
    for (size_t i = 0; i + 1 < all.size(); ++i) EXPECT_EQ(all[i].substr(0, 4), i % 2 ? "unma" : "map@") << i;
}

// ---- GL devices -----------------------------------------------------------------------

TEST_F(GraphicsTest, GlDevices) {
    uint32_t count = 0;
    ASSERT_EQ(cucore_gl_get_devices(CUCORE_GL_DEVICES_ALL, nullptr, 0, &count), CUCORE_SUCCESS) << message();
    EXPECT_EQ(count, 1u);
    int ordinals[4] = {-1, -1, -1, -1};
    fake::set_gl_device(1);
    ASSERT_EQ(cucore_gl_get_devices(CUCORE_GL_DEVICES_CURRENT_FRAME, ordinals, 4, &count), CUCORE_SUCCESS);
    EXPECT_EQ(count, 1u);
    EXPECT_EQ(ordinals[0], 1);
    EXPECT_EQ(ordinals[1], -1);
    EXPECT_EQ(cucore_gl_get_devices(0, ordinals, 4, &count), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_gl_get_devices(CUCORE_GL_DEVICES_ALL, nullptr, 4, &count), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_gl_get_devices(CUCORE_GL_DEVICES_ALL, ordinals, 4, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    fake::set_gl_device(-1);
    EXPECT_NE(cucore_gl_get_devices(CUCORE_GL_DEVICES_NEXT_FRAME, ordinals, 4, &count), CUCORE_SUCCESS);
    EXPECT_NE(message().find("no NVIDIA GL context is current"), std::string::npos) << message();
}

// ---- Handles and arguments ------------------------------------------------------------

TEST_F(GraphicsTest, EveryHandleArgumentIsChecked) {
    cucore_graphics_resource_t *released = buffer_resource();
    ASSERT_EQ(cucore_graphics_resource_release(released), CUCORE_SUCCESS);
    cucore_graphics_resource_t *garbage = reinterpret_cast<cucore_graphics_resource_t *>(0x1234);
    auto *wrong_type = reinterpret_cast<cucore_graphics_resource_t *>(s1_);
    cucore_buffer_t *b = nullptr;
    cucore_opaque_array_t *a = nullptr;
    cucore_mipmapped_array_t *m = nullptr;
    void *raw = nullptr;
    int flag = 0;
    for (cucore_graphics_resource_t *r : {static_cast<cucore_graphics_resource_t *>(nullptr), garbage, released,
                                          wrong_type}) {
        EXPECT_EQ(cucore_graphics_resource_retain(r), CUCORE_ERROR_INVALID_HANDLE);
        if (r) {
            EXPECT_EQ(cucore_graphics_resource_release(r), CUCORE_ERROR_INVALID_HANDLE);
        }
        EXPECT_EQ(cucore_graphics_resource_map(r, s1_, 0, &b), CUCORE_ERROR_INVALID_HANDLE);
        EXPECT_EQ(cucore_graphics_resources_map(&r, 1, s1_, &b), CUCORE_ERROR_INVALID_HANDLE);
        EXPECT_EQ(cucore_graphics_resource_map_array(r, s1_, 0, 0, 0, &a), CUCORE_ERROR_INVALID_HANDLE);
        EXPECT_EQ(cucore_graphics_resource_map_mipmapped_array(r, s1_, 0, &m), CUCORE_ERROR_INVALID_HANDLE);
        EXPECT_EQ(cucore_graphics_resource_unmap(r, nullptr), CUCORE_ERROR_INVALID_HANDLE);
        EXPECT_EQ(cucore_graphics_resource_is_mapped(r, &flag), CUCORE_ERROR_INVALID_HANDLE);
        EXPECT_EQ(cucore_graphics_resource_close(r, nullptr), CUCORE_ERROR_INVALID_HANDLE);
        EXPECT_EQ(cucore_graphics_resource_handle(r, &raw), CUCORE_ERROR_INVALID_HANDLE);
    }
    // The arrays of a mapping are opaque arrays: handle_test.cpp checks their handle arguments.
    // Bad devices and streams.
    cucore_graphics_resource_t *r = nullptr;
    EXPECT_EQ(cucore_graphics_resource_from_gl_buffer(nullptr, 7, 0, &r), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(cucore_graphics_resource_from_gl_image(reinterpret_cast<cucore_device_t *>(s1_), 9, kTexture2D, 0, &r),
              CUCORE_ERROR_INVALID_HANDLE);
    r = buffer_resource();
    EXPECT_EQ(cucore_graphics_resource_map(r, nullptr, 0, &b), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(cucore_graphics_resources_map(&r, 1, nullptr, &b), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(cucore_graphics_resource_unmap(r, reinterpret_cast<cucore_stream_t *>(0x99)),
              CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(cucore_graphics_resource_close(r, reinterpret_cast<cucore_stream_t *>(0x99)),
              CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(mapped(r), 0);
    EXPECT_EQ(cucore_graphics_resource_release(r), CUCORE_SUCCESS);
}

TEST_F(GraphicsTest, NullOutPointersAreInvalidArguments) {
    EXPECT_EQ(cucore_graphics_resource_from_gl_buffer(dev_, 7, 0, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_graphics_resource_from_gl_image(dev_, 9, kTexture2D, 0, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_graphics_resource_t *r = buffer_resource();
    cucore_graphics_resource_t *image = image_resource();
    EXPECT_EQ(cucore_graphics_resource_map(r, s1_, 0, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_graphics_resource_map_array(image, s1_, 0, 0, 0, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_graphics_resource_map_mipmapped_array(image, s1_, 0, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_graphics_resource_is_mapped(r, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_graphics_resource_handle(r, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_opaque_array_t *a = nullptr;
    ASSERT_EQ(cucore_graphics_resource_map_array(image, s1_, 0, 0, 0, &a), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_opaque_array_handle(a, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_opaque_array_info(a, nullptr), CUCORE_ERROR_INVALID_ARGUMENT);
    cucore_opaque_array_info_t bad_size = CUCORE_OPAQUE_ARRAY_INFO_INIT;
    bad_size.struct_size = 2;
    EXPECT_EQ(cucore_opaque_array_info(a, &bad_size), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_opaque_array_copy_to_host(a, nullptr, 512, s1_), CUCORE_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(cucore_opaque_array_release(a), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graphics_resource_release(image), CUCORE_SUCCESS);
    EXPECT_EQ(cucore_graphics_resource_release(r), CUCORE_SUCCESS);
}

// ---- Fault injection of every create path ---------------------------------------------

TEST_F(GraphicsTest, FaultInjectionOfEveryCreatePath) {
    expects_release_errors_ = true;
    struct Path {
        const char *name;
        std::function<cucore_status_t(void **)> create;
        std::function<void(void *)> release;
    };
    cucore_graphics_resource_t *vbo = buffer_resource(5);
    cucore_graphics_resource_t *vbo2 = buffer_resource(6);
    cucore_graphics_resource_t *image = image_resource();
    auto release_buffer = [](void *h) { EXPECT_EQ(cucore_buffer_release(static_cast<cucore_buffer_t *>(h)), 0); };
    auto release_array = [](void *h) {
        EXPECT_EQ(cucore_opaque_array_release(static_cast<cucore_opaque_array_t *>(h)), 0);
    };
    auto release_mipmapped = [](void *h) {
        EXPECT_EQ(cucore_mipmapped_array_release(static_cast<cucore_mipmapped_array_t *>(h)), 0);
    };
    auto release_resource = [](void *h) {
        EXPECT_EQ(cucore_graphics_resource_release(static_cast<cucore_graphics_resource_t *>(h)), 0);
    };
    cucore_mipmapped_array_t *mip = nullptr;
    cucore_buffer_t *second = nullptr;  // resources_map's second buffer
    std::vector<Path> paths = {
        {"from_gl_buffer",
         [&](void **h) {
             return cucore_graphics_resource_from_gl_buffer(dev_, 8, 0,
                                                            reinterpret_cast<cucore_graphics_resource_t **>(h));
         },
         release_resource},
        {"from_gl_image",
         [&](void **h) {
             return cucore_graphics_resource_from_gl_image(dev_, 8, kTexture2D, 0,
                                                           reinterpret_cast<cucore_graphics_resource_t **>(h));
         },
         release_resource},
        {"map",
         [&](void **h) {
             return cucore_graphics_resource_map(vbo, s1_, CUCORE_GRAPHICS_MAP_HINT_READ_ONLY,
                                                 reinterpret_cast<cucore_buffer_t **>(h));
         },
         release_buffer},
        {"resources_map",
         [&](void **h) {
             cucore_graphics_resource_t *both[2] = {vbo, vbo2};
             cucore_buffer_t *out[2] = {};
             cucore_status_t status = cucore_graphics_resources_map(both, 2, s1_, out);
             if (status != CUCORE_SUCCESS) {
                 EXPECT_EQ(out[1], nullptr);
             }
             second = out[1];
             *h = out[0];
             return status;
         },
         [&](void *h) {
             EXPECT_EQ(cucore_buffer_release(second), 0);
             EXPECT_EQ(cucore_buffer_release(static_cast<cucore_buffer_t *>(h)), 0);
         }},
        {"map_array",
         [&](void **h) {
             return cucore_graphics_resource_map_array(image, s1_, CUCORE_GRAPHICS_MAP_HINT_WRITE_DISCARD, 0, 0,
                                                       reinterpret_cast<cucore_opaque_array_t **>(h));
         },
         release_array},
        {"map_mipmapped_array",
         [&](void **h) {
             return cucore_graphics_resource_map_mipmapped_array(image, s1_, CUCORE_GRAPHICS_MAP_HINT_NONE,
                                                                 reinterpret_cast<cucore_mipmapped_array_t **>(h));
         },
         release_mipmapped},
        {"array_level",
         [&](void **h) {
             return cucore_mipmapped_array_level(mip, 1, reinterpret_cast<cucore_opaque_array_t **>(h));
         },
         release_array},
    };
    for (const Path &path : paths) {
        SCOPED_TRACE(path.name);
        const bool needs_mip = std::string(path.name) == "array_level";
        int failures = 0;
        for (long i = 1; i < 50; ++i) {
            if (needs_mip) {
                ASSERT_EQ(cucore_graphics_resource_map_mipmapped_array(image, s1_, 0, &mip), CUCORE_SUCCESS);
            }
            const size_t live_before = live(CUCORE_OBJECT_ANY);
            const fake::Counters before = fake::counters();
            fake::reset_calls();
            fake::fail_call(i, CUDA_ERROR_OUT_OF_MEMORY);
            void *handle = reinterpret_cast<void *>(0x1);
            cucore_status_t status = path.create(&handle);
            const long made = fake::calls();
            fake::fail_call(0);
            std::string log;
            for (const std::string &call : fake::call_log()) log += call + " ";
            SCOPED_TRACE("failing call " + std::to_string(i) + " of: " + log);
            if (made < i) {
                ASSERT_EQ(status, CUCORE_SUCCESS) << message();
                path.release(handle);
                if (needs_mip) cucore_mipmapped_array_release(mip);
                break;
            }
            if (status == CUCORE_SUCCESS) {
                path.release(handle);  // a failure in a call the path does not depend on
            } else {
                ++failures;
                EXPECT_EQ(handle, nullptr) << "out-pointer cleared";
            }
            if (needs_mip) cucore_mipmapped_array_release(mip);
            EXPECT_EQ(live(CUCORE_OBJECT_ANY), live_before - (needs_mip ? 1 : 0))
                << "no half-made object (the mipmapped array goes; its mapping is no object of the handle table)";
            const fake::Counters after = fake::counters();
            EXPECT_EQ(after.graphics_resources, before.graphics_resources);
            EXPECT_EQ(after.graphics_mapped, 0) << "nothing stays mapped";
        }
        EXPECT_GE(failures, 1);
    }
    for (auto *resource : {vbo, vbo2, image}) EXPECT_EQ(cucore_graphics_resource_release(resource), CUCORE_SUCCESS);
}

// ---- C++ façade -----------------------------------------------------------------------

TEST_F(GraphicsTest, FacadeMapsForAScope) {
    cucore::Device device = cucore::Device::get(0);
    cucore::Stream stream = cucore::Stream::borrow(s1_);
    cucore::GraphicsResource res = cucore::GraphicsResource::from_gl_buffer(
        device, 7, cucore::GraphicsRegisterFlags::write_discard);
    EXPECT_NE(res.handle(), nullptr);
    {
        auto buf = res.map(stream);
        EXPECT_EQ(buf.size(), fake::kGlBufferSize);
        EXPECT_TRUE(res.is_mapped());
        try {
            (void)res.map(stream);
            ADD_FAILURE() << "double map";
        } catch (const cucore::Error &error) {
            EXPECT_EQ(error.status(), CUCORE_ERROR_INVALID_STATE);
        }
    }
    EXPECT_FALSE(res.is_mapped()) << "unmapped at scope end";
    size_t mark = 0;
    std::vector<cucore::GraphicsResource> both = {
        res, cucore::GraphicsResource::from_gl_buffer(device, 8, cucore::GraphicsRegisterFlags::none)};
    {
        cucore::MappedBuffers buffers = cucore::GraphicsResource::map_all(both, stream);
        EXPECT_EQ(buffers.size(), 2u);
        EXPECT_TRUE(both[1].is_mapped());
        res.unmap(stream);
        EXPECT_FALSE(res.is_mapped());
        EXPECT_EQ(buffers[0].size(), 0u);
        mark = calls().size();
    }  // unmaps what the batch still maps (both[1]), in one call
    EXPECT_EQ(calls_after(mark), (Calls{"unmap@1"}));
    EXPECT_FALSE(both[1].is_mapped());
    {
        cucore::MappedBuffers buffers = cucore::GraphicsResource::map_all(both, stream);
        cucore::MappedBuffers moved = std::move(buffers);
        EXPECT_TRUE(buffers.empty());
        mark = calls().size();
        moved.unmap();
        EXPECT_EQ(calls_after(mark), (Calls{"unmap@1", "unmap@1"}));
        EXPECT_TRUE(moved.empty());
        EXPECT_FALSE(both[0].is_mapped());
        mark = calls().size();
    }
    EXPECT_TRUE(calls_after(mark).empty()) << "nothing left to unmap";
    {
        cucore::MappedBuffers buffers = cucore::GraphicsResource::map_all(both, stream);
        cucore::GraphicsResource::unmap_all(both, stream);
        EXPECT_FALSE(both[0].is_mapped());
        EXPECT_FALSE(both[1].is_mapped());
        try {
            cucore::GraphicsResource::unmap_all(both);
            ADD_FAILURE() << "unmap of unmapped resources";
        } catch (const cucore::Error &error) {
            EXPECT_EQ(error.status(), CUCORE_ERROR_INVALID_STATE);
        }
    }
    {  // a failing unmap at scope end goes to the release-error path
        expects_release_errors_ = true;
        uint64_t before = 0, after = 0;
        ASSERT_EQ(cucore_release_error_count(&before), CUCORE_SUCCESS);
        CUgraphicsResource raw[2] = {static_cast<CUgraphicsResource>(both[0].handle()),
                                     static_cast<CUgraphicsResource>(both[1].handle())};
        {
            cucore::MappedBuffers buffers = cucore::GraphicsResource::map_all(both, stream);
            fake::fail_entry("cuGraphicsUnmapResources", CUDA_ERROR_UNKNOWN);
        }
        fake::fail_entry("");
        ASSERT_EQ(cucore_release_error_count(&after), CUCORE_SUCCESS);
        EXPECT_EQ(after - before, 1u);
        EXPECT_FALSE(both[0].is_mapped());
        ASSERT_EQ(fake::table().cuGraphicsUnmapResources(2, raw, nullptr), CUDA_SUCCESS);
    }
    // The façade's arrays of a mapped image (cucore::OpaqueArray, cucore::MipmappedArray) are tested with the
    // façade of cucore/opaque_array.hpp.
    EXPECT_EQ(cucore::gl_get_devices(), std::vector<int>{0});
    res.close(stream);
    EXPECT_EQ(res.handle(), nullptr);
    EXPECT_EQ(calls().back(), "unregister");
}

}  // namespace
