// Communicators (issue 19) and device peer access: NULL, garbage, released
// and wrong-type handles in every handle argument of communicator.h
// (INVALID_HANDLE naming the argument, out-pointers cleared, no driver or NCCL
// call), and NULL out-pointers (INVALID_ARGUMENT naming them). Kept apart from
// handle_test.cpp and argument_test.cpp, which are at their size limit; the
// peer access functions' handle rows are in handle_test.cpp's table.
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "fake_nccl.hpp"
#include "test_support.hpp"

namespace {

// The valid objects the rows pass in their other arguments (handle_world.hpp's
// World is handle_test.cpp's alone; these are the few a communicator call takes).
struct World {
    cucore_device_t *device = nullptr;
    cucore_stream_t *stream = nullptr;
    cucore_event_t *event = nullptr;
    cucore_memory_resource_t *resource = nullptr;
    cucore_buffer_t *buffer = nullptr;
    World() {
        EXPECT_EQ(cucore_device_get(0, &device), CUCORE_SUCCESS);
        EXPECT_EQ(cucore_stream_create(device, nullptr, &stream), CUCORE_SUCCESS);
        EXPECT_EQ(cucore_event_create(device, nullptr, &event), CUCORE_SUCCESS);
        EXPECT_EQ(cucore_device_memory_resource_get_default(device, &resource), CUCORE_SUCCESS);
        EXPECT_EQ(cucore_memory_resource_allocate(resource, 64, stream, &buffer), CUCORE_SUCCESS);
    }
    ~World() {
        cucore_buffer_release(buffer);
        cucore_memory_resource_release(resource);
        cucore_event_release(event);
        cucore_stream_release(stream);
        cucore_device_release(device);
    }
    World(const World &) = delete;
    World &operator=(const World &) = delete;
};

// One handle argument of one function: calls it with `handle` there; `cleared`: every out-pointer reads NULL/0.
struct Call {
    std::string name;
    std::string argument;
    cucore_object_type_t type;
    std::function<cucore_status_t(void *handle, const World &w, bool &cleared)> call;
};

template <class T>
T *as(void *handle) {
    return static_cast<T *>(handle);
}

bool is_release(const Call &call) { return call.name.size() > 8 && call.name.rfind("_release") == call.name.size() - 8; }

// A released device, buffer or stream (handle_test.cpp's way: made and released).
void *released_handle(cucore_object_type_t type, const World &w) {
    switch (type) {
        case CUCORE_OBJECT_DEVICE: {
            cucore_device_t *d = nullptr;
            cucore_device_get(0, &d);
            cucore_device_release(d);
            return d;
        }
        case CUCORE_OBJECT_BUFFER: {
            cucore_buffer_t *b = nullptr;
            cucore_memory_resource_allocate(w.resource, 64, w.stream, &b);
            cucore_buffer_release(b);
            return b;
        }
        default: {
            cucore_stream_t *s = nullptr;
            cucore_stream_create(w.device, nullptr, &s);
            cucore_stream_release(s);
            return s;
        }
    }
}

class CommunicatorArgumentTest : public FakeDriverTest {
  protected:
    void SetUp() override {
        FakeDriverTest::SetUp();
        fake::nccl::install();
    }
    void TearDown() override {
        EXPECT_EQ(live(CUCORE_OBJECT_COMMUNICATOR), 0u);
        fake::nccl::uninstall();
        FakeDriverTest::TearDown();
    }
    void expect_rejected(const Call &call, void *handle, const World &w, const char *kind) {
        SCOPED_TRACE(call.name + "(" + call.argument + " = " + kind + ")");
        fake::reset_calls();
        bool cleared = false;
        cucore_clear_last_error();
        const cucore_status_t status = call.call(handle, w, cleared);
        EXPECT_EQ(status, CUCORE_ERROR_INVALID_HANDLE) << message();
        EXPECT_TRUE(cleared) << "out-pointers must read NULL/0 after a failure";
        const std::string text = message();
        EXPECT_EQ(text.rfind(call.name + ":", 0), 0u) << text;
        EXPECT_NE(text.find("'" + call.argument + "'"), std::string::npos) << text;
        EXPECT_EQ(fake::calls(), 0) << "a handle must be validated before any driver call";
    }
    // Expects INVALID_ARGUMENT from `function` naming `argument`, with no driver or NCCL call.
    void expect_null(cucore_status_t status, const char *function, const char *argument) {
        SCOPED_TRACE(std::string(function) + " " + argument);
        EXPECT_EQ(status, CUCORE_ERROR_INVALID_ARGUMENT) << message();
        EXPECT_EQ(message().rfind(std::string(function) + ":", 0), 0u) << message();
        EXPECT_NE(message().find(argument), std::string::npos) << message();
        EXPECT_EQ(fake::calls(), 0) << "arguments are checked before any driver call";
        EXPECT_EQ(fake::nccl::calls(), 0) << "and before any NCCL call";
        fake::reset_calls();
        fake::nccl::reset_calls();
    }
};

TEST_F(CommunicatorArgumentTest, EveryHandleArgumentIsChecked) {
    World w;
    using CM = cucore_communicator_t;
    using D = cucore_device_t;
    using B = cucore_buffer_t;
    using S = cucore_stream_t;
    static CM *comm = nullptr;  // a live communicator of one rank on w.device (the rows' valid one)
    ASSERT_EQ(cucore_communicator_create_all(&w.device, 1, &comm), CUCORE_SUCCESS) << message();
    CM *released = nullptr;
    ASSERT_EQ(cucore_communicator_create_all(&w.device, 1, &released), CUCORE_SUCCESS);
    ASSERT_EQ(cucore_communicator_release(released), CUCORE_SUCCESS);
    const cucore_object_type_t C = CUCORE_OBJECT_COMMUNICATOR, DV = CUCORE_OBJECT_DEVICE, BF = CUCORE_OBJECT_BUFFER,
                               ST = CUCORE_OBJECT_STREAM;
    const auto F = CUCORE_DATA_TYPE_FLOAT32;
    const auto SUM = CUCORE_REDUCE_SUM;
    const std::vector<Call> calls = {
        {"cucore_communicator_create", "device", DV, [](void *h, const World &, bool &c) { cucore_communicator_id_t id{}; CM *v = as<CM>(h); auto s = cucore_communicator_create(as<D>(h), &id, 1, 0, &v); c = v == nullptr; return s; }},
        {"cucore_communicator_create_all", "devices[0]", DV, [](void *h, const World &, bool &c) { D *d[1] = {as<D>(h)}; CM *v[1] = {as<CM>(h)}; auto s = cucore_communicator_create_all(d, 1, v); c = v[0] == nullptr; return s; }},
        {"cucore_communicator_retain", "communicator", C, [](void *h, const World &, bool &c) { c = true; return cucore_communicator_retain(as<CM>(h)); }},
        {"cucore_communicator_release", "communicator", C, [](void *h, const World &, bool &c) { c = true; return cucore_communicator_release(as<CM>(h)); }},
        {"cucore_communicator_rank", "communicator", C, [](void *h, const World &, bool &c) { int v = 9; auto s = cucore_communicator_rank(as<CM>(h), &v); c = v == 0; return s; }},
        {"cucore_communicator_rank_count", "communicator", C, [](void *h, const World &, bool &c) { int v = 9; auto s = cucore_communicator_rank_count(as<CM>(h), &v); c = v == 0; return s; }},
        {"cucore_communicator_device", "communicator", C, [](void *h, const World &, bool &c) { D *v = as<D>(h); auto s = cucore_communicator_device(as<CM>(h), &v); c = v == nullptr; return s; }},
        {"cucore_communicator_handle", "communicator", C, [](void *h, const World &, bool &c) { void *v = h; auto s = cucore_communicator_handle(as<CM>(h), &v); c = v == nullptr; return s; }},
        {"cucore_communicator_check", "communicator", C, [](void *h, const World &, bool &c) { c = true; return cucore_communicator_check(as<CM>(h)); }},
        {"cucore_communicator_all_reduce", "communicator", C, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_all_reduce(as<CM>(h), w.buffer, w.buffer, 0, F, SUM, w.stream); }},
        {"cucore_communicator_all_reduce", "send", BF, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_all_reduce(comm, as<B>(h), w.buffer, 0, F, SUM, w.stream); }},
        {"cucore_communicator_all_reduce", "recv", BF, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_all_reduce(comm, w.buffer, as<B>(h), 0, F, SUM, w.stream); }},
        {"cucore_communicator_all_reduce", "stream", ST, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_all_reduce(comm, w.buffer, w.buffer, 0, F, SUM, as<S>(h)); }},
        {"cucore_communicator_all_gather", "communicator", C, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_all_gather(as<CM>(h), w.buffer, w.buffer, 0, F, w.stream); }},
        {"cucore_communicator_all_gather", "send", BF, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_all_gather(comm, as<B>(h), w.buffer, 0, F, w.stream); }},
        {"cucore_communicator_all_gather", "recv", BF, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_all_gather(comm, w.buffer, as<B>(h), 0, F, w.stream); }},
        {"cucore_communicator_all_gather", "stream", ST, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_all_gather(comm, w.buffer, w.buffer, 0, F, as<S>(h)); }},
        {"cucore_communicator_reduce_scatter", "communicator", C, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_reduce_scatter(as<CM>(h), w.buffer, w.buffer, 0, F, SUM, w.stream); }},
        {"cucore_communicator_reduce_scatter", "send", BF, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_reduce_scatter(comm, as<B>(h), w.buffer, 0, F, SUM, w.stream); }},
        {"cucore_communicator_reduce_scatter", "recv", BF, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_reduce_scatter(comm, w.buffer, as<B>(h), 0, F, SUM, w.stream); }},
        {"cucore_communicator_reduce_scatter", "stream", ST, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_reduce_scatter(comm, w.buffer, w.buffer, 0, F, SUM, as<S>(h)); }},
        {"cucore_communicator_broadcast", "communicator", C, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_broadcast(as<CM>(h), w.buffer, w.buffer, 0, F, 0, w.stream); }},
        {"cucore_communicator_broadcast", "send", BF, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_broadcast(comm, as<B>(h), w.buffer, 0, F, 0, w.stream); }},
        {"cucore_communicator_broadcast", "recv", BF, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_broadcast(comm, w.buffer, as<B>(h), 0, F, 0, w.stream); }},
        {"cucore_communicator_broadcast", "stream", ST, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_broadcast(comm, w.buffer, w.buffer, 0, F, 0, as<S>(h)); }},
        {"cucore_communicator_reduce", "communicator", C, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_reduce(as<CM>(h), w.buffer, w.buffer, 0, F, SUM, 0, w.stream); }},
        {"cucore_communicator_reduce", "send", BF, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_reduce(comm, as<B>(h), w.buffer, 0, F, SUM, 0, w.stream); }},
        {"cucore_communicator_reduce", "recv", BF, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_reduce(comm, w.buffer, as<B>(h), 0, F, SUM, 0, w.stream); }},
        {"cucore_communicator_reduce", "stream", ST, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_reduce(comm, w.buffer, w.buffer, 0, F, SUM, 0, as<S>(h)); }},
        {"cucore_communicator_send", "communicator", C, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_send(as<CM>(h), w.buffer, 0, F, 0, w.stream); }},
        {"cucore_communicator_send", "buffer", BF, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_send(comm, as<B>(h), 0, F, 0, w.stream); }},
        {"cucore_communicator_send", "stream", ST, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_send(comm, w.buffer, 0, F, 0, as<S>(h)); }},
        {"cucore_communicator_recv", "communicator", C, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_recv(as<CM>(h), w.buffer, 0, F, 0, w.stream); }},
        {"cucore_communicator_recv", "buffer", BF, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_recv(comm, as<B>(h), 0, F, 0, w.stream); }},
        {"cucore_communicator_recv", "stream", ST, [=](void *h, const World &w, bool &c) { c = true; return cucore_communicator_recv(comm, w.buffer, 0, F, 0, as<S>(h)); }},
    };
    void *released_of[] = {nullptr, nullptr, nullptr, nullptr};  // by argument type: device, buffer, stream
    auto released_for = [&](cucore_object_type_t type) -> void * {
        if (type == C) return released;
        const int k = type == DV ? 0 : type == BF ? 1 : 2;
        if (!released_of[k]) released_of[k] = released_handle(type, w);
        return released_of[k];
    };
    for (const Call &call : calls) {
        const bool takes_communicator = call.type == C;
        fake::nccl::reset_calls();
        if (is_release(call)) {
            bool cleared;
            EXPECT_EQ(call.call(nullptr, w, cleared), CUCORE_SUCCESS) << call.name << ": NULL is a no-op";
        } else if (!(call.name == "cucore_communicator_broadcast" && call.argument == "send") &&
                   !(call.name == "cucore_communicator_reduce" && call.argument == "recv")) {  // NULL: not this rank's
            expect_rejected(call, nullptr, w, "NULL");
        }
        expect_rejected(call, reinterpret_cast<void *>(0xdeadbeef), w, "0xdeadbeef");
        expect_rejected(call, released_for(call.type), w, "released");
        void *other = takes_communicator ? static_cast<void *>(w.event) : static_cast<void *>(comm);
        expect_rejected(call, other, w, "wrong type");
        EXPECT_NE(message().find(std::string("is a ") +
                                 cucore_object_type_name(takes_communicator ? CUCORE_OBJECT_EVENT : C) + " handle"),
                  std::string::npos)
            << message();
        EXPECT_EQ(fake::nccl::calls(), 0) << call.name << ": a handle is validated before any NCCL call";
    }
    EXPECT_EQ(cucore_communicator_release(released), CUCORE_ERROR_INVALID_HANDLE);
    EXPECT_EQ(cucore_communicator_release(comm), CUCORE_SUCCESS);
    comm = nullptr;
    EXPECT_EQ(fake::nccl::live_comms(), 0);
}


TEST_F(CommunicatorArgumentTest, NullOutPointersAndArrays) {
    cucore_device_t *d = device(0);
    cucore_communicator_t *c = nullptr;
    ASSERT_EQ(cucore_communicator_create_all(&d, 1, &c), CUCORE_SUCCESS) << message();
    cucore_communicator_id_t id{};
    fake::reset_calls();
    fake::nccl::reset_calls();
    expect_null(cucore_communicator_library_version(nullptr), "cucore_communicator_library_version", "'version'");
    expect_null(cucore_data_type_size(CUCORE_DATA_TYPE_INT8, nullptr), "cucore_data_type_size", "'size'");
    expect_null(cucore_communicator_id_create(nullptr), "cucore_communicator_id_create", "'id'");
    cucore_communicator_t *out = reinterpret_cast<cucore_communicator_t *>(1);
    expect_null(cucore_communicator_create(d, nullptr, 1, 0, &out), "cucore_communicator_create", "'id'");
    EXPECT_EQ(out, nullptr);
    expect_null(cucore_communicator_create(d, &id, 1, 0, nullptr), "cucore_communicator_create", "'communicator'");
    cucore_communicator_t *outs[1] = {reinterpret_cast<cucore_communicator_t *>(1)};
    expect_null(cucore_communicator_create_all(nullptr, 1, outs), "cucore_communicator_create_all", "'devices'");
    EXPECT_EQ(outs[0], nullptr);
    expect_null(cucore_communicator_create_all(&d, 1, nullptr), "cucore_communicator_create_all", "'communicators'");
    expect_null(cucore_communicator_rank(c, nullptr), "cucore_communicator_rank", "'rank'");
    expect_null(cucore_communicator_rank_count(c, nullptr), "cucore_communicator_rank_count", "'count'");
    expect_null(cucore_communicator_device(c, nullptr), "cucore_communicator_device", "'device'");
    expect_null(cucore_communicator_handle(c, nullptr), "cucore_communicator_handle", "'nccl_comm'");
    cucore_device_t *devices[1] = {nullptr};
    expect_null(cucore_communicator_create_all(devices, 0, outs), "cucore_communicator_create_all", "'count' is 0");
    EXPECT_EQ(cucore_communicator_release(c), CUCORE_SUCCESS);
    cucore_device_release(d);
}

}  // namespace
