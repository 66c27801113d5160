#include "core/communicator.hpp"

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "core/buffer.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/graph_attachments.hpp"
#include "core/owned.hpp"
#include "core/release.hpp"
#include "core/stream.hpp"

namespace cucore::core {
namespace nc = driver::nccl;

namespace {

// NCCL's element type and reduction for the library's (valid: the C ABI checked them, the one place that does).
nc::DataType nccl_type(cucore_data_type_t type) {
    constexpr nc::DataType kTypes[] = {nc::kInt8,    nc::kUint8,   nc::kInt32,   nc::kUint32,
                                       nc::kInt64,   nc::kUint64,  nc::kFloat16, nc::kFloat32,
                                       nc::kFloat64, nc::kBfloat16, nc::kFloat8e4m3, nc::kFloat8e5m2};
    static_assert(CUCORE_DATA_TYPE_INT8 == 1 && CUCORE_DATA_TYPE_FLOAT8_E5M2 == 12, "kTypes follows the enum");
    if ((type == CUCORE_DATA_TYPE_FLOAT8_E4M3 || type == CUCORE_DATA_TYPE_FLOAT8_E5M2) &&
        driver::nccl_api().version < nc::kFloat8Version)
        throw Error(CUCORE_ERROR_NOT_SUPPORTED, "8-bit float collectives need NCCL 2.24 or later; NCCL " +
                                                    std::to_string(driver::nccl_api().version) + " is loaded");
    return kTypes[type - CUCORE_DATA_TYPE_INT8];
}

nc::RedOp nccl_op(cucore_reduce_op_t op) {
    static_assert(CUCORE_REDUCE_SUM == nc::kSum && CUCORE_REDUCE_PROD == nc::kProd && CUCORE_REDUCE_MAX == nc::kMax &&
                      CUCORE_REDUCE_MIN == nc::kMin && CUCORE_REDUCE_AVG == nc::kAvg,
                  "the library's reductions are NCCL's values");
    return static_cast<nc::RedOp>(op);
}

// Destroys a communicator a create path made (reported, never thrown).
struct DestroyComm {
    CUcontext context;
    void operator()(nc::Comm comm) const noexcept {
        ScopedContext bind(context, ScopedContext::ReleasePath{"destroying an NCCL communicator"});
        run_reported("destroying an NCCL communicator",
                     [comm] { CUCORE_NCCL_COMM(comm, ncclCommDestroy, comm); });
    }
};

// What one enqueued operation uses, released once its stream has passed it.
struct Held {
    Ref<Communicator> communicator;
    Ref<Buffer> send, recv;
    Ref<Stream> stream;
};

// The calling thread's groups: how deep, and what grouped operations hold
// until the outermost group end has handed them to NCCL.
struct GroupState {
    int depth = 0;
    std::vector<std::pair<Ref<Stream>, std::shared_ptr<void>>> pending;
};
thread_local GroupState t_group;

std::string bytes(uint64_t n) { return std::to_string(n) + (n == 1 ? " byte" : " bytes"); }

// One buffer of an operation: it must hold `factor` times the operation's count.
struct Side {
    Buffer *buffer;
    const char *name;
    uint64_t factor;
};

// The operation's element count: `count`, or with 0 the one `base`'s size
// gives (the sizes of `other` must then match exactly). Checks the sizes.
uint64_t resolve_count(uint64_t count, uint32_t element, const Side &base, const Side &other) {
    if (count == 0) {
        const uint64_t size = base.buffer->size();
        if (size % element)
            throw_invalid_argument(std::string("'") + base.name + "' holds " + bytes(size) +
                                   ", not a whole number of " + std::to_string(element) + "-byte elements");
        count = size / element;
        if (other.buffer && other.buffer->size() != size * other.factor)
            throw_invalid_argument(std::string("mismatched sizes: '") + other.name + "' holds " +
                                   bytes(other.buffer->size()) + " where '" + base.name + "' (" + bytes(size) +
                                   ") needs " + bytes(size * other.factor));
        return count;
    }
    for (const Side *side : {&base, &other}) {
        if (!side->buffer) continue;
        const unsigned __int128 need = static_cast<unsigned __int128>(count) * element * side->factor;
        if (need > side->buffer->size())
            throw_invalid_argument(std::string("'") + side->name + "' holds " + bytes(side->buffer->size()) + "; " +
                                   std::to_string(count) + (side->factor > 1 ? " x " + std::to_string(side->factor) : "") +
                                   " elements of " + std::to_string(element) + " bytes need more");
    }
    return count;
}

}  // namespace

uint32_t data_type_size(cucore_data_type_t type) noexcept {
    switch (type) {
        case CUCORE_DATA_TYPE_INT8:
        case CUCORE_DATA_TYPE_UINT8:
        case CUCORE_DATA_TYPE_FLOAT8_E4M3:
        case CUCORE_DATA_TYPE_FLOAT8_E5M2: return 1;
        case CUCORE_DATA_TYPE_FLOAT16:
        case CUCORE_DATA_TYPE_BFLOAT16: return 2;
        case CUCORE_DATA_TYPE_INT32:
        case CUCORE_DATA_TYPE_UINT32:
        case CUCORE_DATA_TYPE_FLOAT32: return 4;
        default: return 8;
    }
}

// What an operation names: its buffers (either may be null where the operation allows it), the count they
// give, and the NCCL call that enqueues it.
struct Communicator::Operation {
    Buffer *send;
    Buffer *recv;
    Stream &stream;
    std::function<nc::Result(CUstream)> enqueue;
    const char *entry_point;
    const char *send_name = "send";  // the C argument each buffer came from (send and recv take 'buffer')
    const char *recv_name = "recv";
};

Communicator::Communicator(Ref<Context> context, nc::Comm comm, int rank, int rank_count) noexcept
    : Object(CUCORE_OBJECT_COMMUNICATOR), context_(std::move(context)), comm_(comm), rank_(rank),
      rank_count_(rank_count) {}

Communicator::~Communicator() { DestroyComm{context_->cu()}(comm_); }

int Communicator::library_version() { return driver::nccl_api().version; }

void Communicator::make_id(cucore_communicator_id_t &id) {
    nc::UniqueId unique{};
    CUCORE_NCCL(ncclGetUniqueId, &unique);
    static_assert(sizeof unique == sizeof id.internal, "ncclUniqueId is 128 bytes");
    std::memcpy(id.internal, unique.internal, sizeof id.internal);
}

Ref<Communicator> Communicator::create(Device &device, const cucore_communicator_id_t &id, int rank_count, int rank) {
    driver::nccl_api();  // NOT_SUPPORTED before anything is made
    Ref<Context> context = device.primary_context();
    nc::UniqueId unique;
    static_assert(sizeof unique == sizeof id.internal, "ncclUniqueId is 128 bytes");
    std::memcpy(unique.internal, id.internal, sizeof unique.internal);
    nc::Comm comm = nullptr;
    {
        ScopedContext bind(context->cu(), ScopedContext::RestoreAlways{});
        CUCORE_NCCL(ncclCommInitRank, &comm, rank_count, unique, rank);
    }
    Owned<nc::Comm, DestroyComm> box(comm, DestroyComm{context->cu()});
    Ref<Communicator> made = make<Communicator>(std::move(context), comm, rank, rank_count);
    box.release();
    return made;
}

std::vector<Ref<Communicator>> Communicator::create_all(const std::vector<Device *> &devices) {
    driver::nccl_api();
    std::vector<int> ordinals;
    std::vector<Ref<Context>> contexts;
    for (size_t i = 0; i < devices.size(); ++i) {
        const int ordinal = devices[i]->ordinal();
        for (size_t j = 0; j < i; ++j)
            if (ordinals[j] == ordinal)
                throw_invalid_argument("devices[" + std::to_string(j) + "] and devices[" + std::to_string(i) +
                                       "] are both device " + std::to_string(ordinal));
        ordinals.push_back(ordinal);
        contexts.push_back(devices[i]->primary_context());  // NCCL works in the primary contexts
    }
    std::vector<nc::Comm> comms(devices.size(), nullptr);
    {
        ScopedContext keep(nullptr, ScopedContext::RestoreAlways{});  // NCCL switches devices as it goes
        CUCORE_NCCL(ncclCommInitAll, comms.data(), static_cast<int>(comms.size()), ordinals.data());
    }
    std::vector<Owned<nc::Comm, DestroyComm>> boxes;
    boxes.reserve(comms.size());
    for (size_t i = 0; i < comms.size(); ++i) boxes.emplace_back(comms[i], DestroyComm{contexts[i]->cu()});
    std::vector<Ref<Communicator>> made;
    made.reserve(comms.size());
    for (size_t i = 0; i < comms.size(); ++i)
        made.push_back(make<Communicator>(contexts[i], comms[i], static_cast<int>(i), static_cast<int>(comms.size())));
    for (auto &box : boxes) box.release();
    return made;
}

void Communicator::check() {
    nc::Result async = nc::kSuccess;
    CUCORE_NCCL_COMM(comm_, ncclCommGetAsyncError, comm_, &async);
    if (async != nc::kSuccess && async != nc::kInProgress)
        driver::throw_nccl(async, "an earlier operation on the communicator (ncclCommGetAsyncError)", comm_);
}

void Communicator::submit(const Operation &operation) {
    const int ordinal = context_->device().ordinal();
    for (auto [buffer, name] : {std::pair{operation.send, operation.send_name}, std::pair{operation.recv, operation.recv_name}}) {
        if (!buffer) continue;
        buffer->check_open(name);
        if (!buffer->device_accessible() || (buffer->device_id() != ordinal && !buffer->is_managed()))
            throw_invalid_argument(std::string("'") + name + "' is " +
                                   (buffer->device_id() < 0 ? std::string("host memory")
                                                            : "memory of device " + std::to_string(buffer->device_id())) +
                                   "; the communicator runs on device " + std::to_string(ordinal));
    }
    Stream &stream = operation.stream;
    if (stream.device_ordinal() != ordinal)
        throw_invalid_argument("'stream' is a stream of device " + std::to_string(stream.device_ordinal()) +
                               "; the communicator runs on device " + std::to_string(ordinal));
    GraphAttachments *sink = stream.capture_sink();
    if (!sink && stream.shared() && stream.capture_status() != CUCORE_CAPTURE_STATUS_NONE)
        throw Error(CUCORE_ERROR_INVALID_STATE,
                    "'stream' is being captured outside a cucore graph builder, so no graph would hold what the "
                    "operation uses; capture it with a graph builder");
    // Made before the operation is enqueued, so that nothing can fail once it is.
    auto held = std::make_shared<Held>(Held{Ref<Communicator>(this), Ref<Buffer>(operation.send),
                                            Ref<Buffer>(operation.recv), Ref<Stream>(&stream)});
    if (t_group.depth > 0) t_group.pending.reserve(t_group.pending.size() + 1);
    {
        ScopedContext bind(context_->cu(), ScopedContext::RestoreAlways{});
        std::lock_guard<std::mutex> lock(mutex_);
        driver::check_nccl(operation.enqueue(stream.cu()), operation.entry_point, comm_);
    }
    if (sink) {
        sink->keep(Ref<Object>(this));
        if (operation.send) sink->keep_buffer(*operation.send);
        if (operation.recv) sink->keep_buffer(*operation.recv);
    } else if (t_group.depth > 0) {
        t_group.pending.emplace_back(held->stream, std::move(held));
    } else {
        // The stream first: the order in which arguments are made is unspecified, and the held copy is moved.
        Ref<Stream> on = held->stream;
        release_after({std::move(on)}, std::move(held));
    }
}

void Communicator::all_reduce(Buffer &send, Buffer &recv, uint64_t count, cucore_data_type_t type,
                              cucore_reduce_op_t op, Stream &stream) {
    const nc::DataType t = nccl_type(type);
    const nc::RedOp o = nccl_op(op);
    count = resolve_count(count, data_type_size(type), {&send, "send", 1}, {&recv, "recv", 1});
    const void *s = reinterpret_cast<const void *>(send.address());
    void *r = reinterpret_cast<void *>(recv.address());
    submit({&send, &recv, stream, [&](CUstream cu) {
                return driver::nccl_api().table->ncclAllReduce(s, r, count, t, o, comm_, cu);
            }, "ncclAllReduce"});
}

void Communicator::all_gather(Buffer &send, Buffer &recv, uint64_t send_count, cucore_data_type_t type,
                              Stream &stream) {
    const nc::DataType t = nccl_type(type);
    send_count = resolve_count(send_count, data_type_size(type), {&send, "send", 1},
                               {&recv, "recv", static_cast<uint64_t>(rank_count_)});
    const void *s = reinterpret_cast<const void *>(send.address());
    void *r = reinterpret_cast<void *>(recv.address());
    submit({&send, &recv, stream, [&](CUstream cu) {
                return driver::nccl_api().table->ncclAllGather(s, r, send_count, t, comm_, cu);
            }, "ncclAllGather"});
}

void Communicator::reduce_scatter(Buffer &send, Buffer &recv, uint64_t recv_count, cucore_data_type_t type,
                                  cucore_reduce_op_t op, Stream &stream) {
    const nc::DataType t = nccl_type(type);
    const nc::RedOp o = nccl_op(op);
    recv_count = resolve_count(recv_count, data_type_size(type), {&recv, "recv", 1},
                               {&send, "send", static_cast<uint64_t>(rank_count_)});
    const void *s = reinterpret_cast<const void *>(send.address());
    void *r = reinterpret_cast<void *>(recv.address());
    submit({&send, &recv, stream, [&](CUstream cu) {
                return driver::nccl_api().table->ncclReduceScatter(s, r, recv_count, t, o, comm_, cu);
            }, "ncclReduceScatter"});
}

namespace {
void check_rank(int rank, int rank_count, const char *argument) {
    if (rank < 0 || rank >= rank_count)
        throw_invalid_argument(std::string("argument '") + argument + "' is " + std::to_string(rank) +
                               "; ranks are 0.." + std::to_string(rank_count - 1));
}
}  // namespace

void Communicator::broadcast(Buffer *send, Buffer &recv, uint64_t count, cucore_data_type_t type, int root,
                             Stream &stream) {
    const nc::DataType t = nccl_type(type);
    check_rank(root, rank_count_, "root");
    if (rank_ == root && !send) throw_invalid_argument("argument 'send' is NULL on the root rank, which sends it");
    Buffer *source = rank_ == root ? send : nullptr;  // only the root's is read
    count = resolve_count(count, data_type_size(type), {&recv, "recv", 1}, {source, "send", 1});
    const void *s = source ? reinterpret_cast<const void *>(source->address()) : nullptr;
    void *r = reinterpret_cast<void *>(recv.address());
    submit({source, &recv, stream, [&](CUstream cu) {
                return driver::nccl_api().table->ncclBroadcast(s, r, count, t, root, comm_, cu);
            }, "ncclBroadcast"});
}

void Communicator::reduce(Buffer &send, Buffer *recv, uint64_t count, cucore_data_type_t type, cucore_reduce_op_t op,
                          int root, Stream &stream) {
    const nc::DataType t = nccl_type(type);
    const nc::RedOp o = nccl_op(op);
    check_rank(root, rank_count_, "root");
    if (rank_ == root && !recv) throw_invalid_argument("argument 'recv' is NULL on the root rank, which receives");
    Buffer *target = rank_ == root ? recv : nullptr;  // only the root's is written
    count = resolve_count(count, data_type_size(type), {&send, "send", 1}, {target, "recv", 1});
    const void *s = reinterpret_cast<const void *>(send.address());
    void *r = target ? reinterpret_cast<void *>(target->address()) : nullptr;
    submit({&send, target, stream, [&](CUstream cu) {
                return driver::nccl_api().table->ncclReduce(s, r, count, t, o, root, comm_, cu);
            }, "ncclReduce"});
}

void Communicator::send(Buffer &buffer, uint64_t count, cucore_data_type_t type, int peer, Stream &stream) {
    const nc::DataType t = nccl_type(type);
    check_rank(peer, rank_count_, "peer");
    count = resolve_count(count, data_type_size(type), {&buffer, "buffer", 1}, {nullptr, "", 1});
    const void *s = reinterpret_cast<const void *>(buffer.address());
    submit({&buffer, nullptr, stream, [&](CUstream cu) {
                return driver::nccl_api().table->ncclSend(s, count, t, peer, comm_, cu);
            }, "ncclSend", "buffer", "recv"});
}

void Communicator::recv(Buffer &buffer, uint64_t count, cucore_data_type_t type, int peer, Stream &stream) {
    const nc::DataType t = nccl_type(type);
    check_rank(peer, rank_count_, "peer");
    count = resolve_count(count, data_type_size(type), {&buffer, "buffer", 1}, {nullptr, "", 1});
    void *r = reinterpret_cast<void *>(buffer.address());
    submit({nullptr, &buffer, stream, [&](CUstream cu) {
                return driver::nccl_api().table->ncclRecv(r, count, t, peer, comm_, cu);
            }, "ncclRecv", "send", "buffer"});
}

void Communicator::group_start() {
    CUCORE_NCCL(ncclGroupStart);
    ++t_group.depth;
}

void Communicator::group_end() {
    if (t_group.depth == 0)
        throw Error(CUCORE_ERROR_INVALID_STATE, "no group is open on this thread (cucore_communicator_group_start)");
    nc::Result result;
    {
        ScopedContext keep(nullptr, ScopedContext::RestoreAlways{});  // NCCL switches devices as it launches
        result = driver::nccl_api().table->ncclGroupEnd();
    }
    if (--t_group.depth == 0) {
        // Whatever NCCL answered, operations it took may run: their holds go on their streams now.
        auto pending = std::move(t_group.pending);
        t_group.pending.clear();
        for (auto &[stream, held] : pending) release_after({stream}, std::move(held));
    }
    driver::check_nccl(result, "ncclGroupEnd");
}

int Communicator::group_depth() noexcept { return t_group.depth; }

}  // namespace cucore::core
