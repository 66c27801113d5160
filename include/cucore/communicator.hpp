// libcucore C++ façade: collective communication between GPUs through NCCL
// (over cucore/communicator.h). NCCL is loaded at run time on first use
// (CUCORE_NCCL_PATH, else libnccl.so.2); where it is missing every call here
// throws Error with NOT_SUPPORTED naming what was tried.
//
//   std::vector<cucore::Device> devs = {cucore::Device(0), cucore::Device(1)};
//   std::vector<cucore::Communicator> comms = cucore::Communicator::create_all(devs);
//   {
//       cucore::Group group;                               // one thread drives both ranks
//       for (std::size_t i = 0; i < comms.size(); ++i)
//           comms[i].all_reduce<float>(bufs[i], bufs[i], streams[i]);   // in place, a sum
//       group.end();                                       // throws on NCCL's failure
//   }
//
// Operations keep the communicator, their buffers and their stream alive until
// the stream has passed them. Counts are in elements; 0 means "all of it" (the
// count follows from the buffers, whose sizes must then match exactly).
#ifndef CUCORE_COMMUNICATOR_HPP
#define CUCORE_COMMUNICATOR_HPP

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "buffer.hpp"
#include "common.hpp"
#include "communicator.h"
#include "device.hpp"
#include "stream.hpp"

namespace cucore {

// Element types of collective operations (cucore_data_type_t; NCCL's ncclDataType_t).
enum class DataType : int {
    int8 = CUCORE_DATA_TYPE_INT8,
    uint8 = CUCORE_DATA_TYPE_UINT8,
    int32 = CUCORE_DATA_TYPE_INT32,
    uint32 = CUCORE_DATA_TYPE_UINT32,
    int64 = CUCORE_DATA_TYPE_INT64,
    uint64 = CUCORE_DATA_TYPE_UINT64,
    float16 = CUCORE_DATA_TYPE_FLOAT16,
    float32 = CUCORE_DATA_TYPE_FLOAT32,
    float64 = CUCORE_DATA_TYPE_FLOAT64,
    bfloat16 = CUCORE_DATA_TYPE_BFLOAT16,
    float8_e4m3 = CUCORE_DATA_TYPE_FLOAT8_E4M3,  // NCCL 2.24 or later (NOT_SUPPORTED before)
    float8_e5m2 = CUCORE_DATA_TYPE_FLOAT8_E5M2,
};

// Reductions (cucore_reduce_op_t; NCCL's ncclRedOp_t). avg divides the sum by
// the number of ranks (integer types: truncated).
enum class ReduceOp : int {
    sum = CUCORE_REDUCE_SUM,
    prod = CUCORE_REDUCE_PROD,
    max = CUCORE_REDUCE_MAX,
    min = CUCORE_REDUCE_MIN,
    avg = CUCORE_REDUCE_AVG,
};

// Tags naming the 2-byte float types for the typed operations, which C++17 has
// no type for (their bits, for host copies): comm.all_reduce<cucore::float16>(...).
struct float16 {
    std::uint16_t bits;
};
struct bfloat16 {
    std::uint16_t bits;
};

namespace detail {
template <typename T> struct DataTypeOf;  // no data type for T: name one with the DataType overload
template <> struct DataTypeOf<std::int8_t> { static constexpr DataType value = DataType::int8; };
template <> struct DataTypeOf<std::uint8_t> { static constexpr DataType value = DataType::uint8; };
template <> struct DataTypeOf<std::int32_t> { static constexpr DataType value = DataType::int32; };
template <> struct DataTypeOf<std::uint32_t> { static constexpr DataType value = DataType::uint32; };
template <> struct DataTypeOf<std::int64_t> { static constexpr DataType value = DataType::int64; };
template <> struct DataTypeOf<std::uint64_t> { static constexpr DataType value = DataType::uint64; };
template <> struct DataTypeOf<float16> { static constexpr DataType value = DataType::float16; };
template <> struct DataTypeOf<float> { static constexpr DataType value = DataType::float32; };
template <> struct DataTypeOf<double> { static constexpr DataType value = DataType::float64; };
template <> struct DataTypeOf<bfloat16> { static constexpr DataType value = DataType::bfloat16; };
template <typename T> struct DataTypeOf<const T> : DataTypeOf<T> {};

inline cucore_data_type_t to_c(DataType type) noexcept { return static_cast<cucore_data_type_t>(type); }
inline cucore_reduce_op_t to_c(ReduceOp op) noexcept { return static_cast<cucore_reduce_op_t>(op); }
} // namespace detail

// The data type of element type T (float: DataType::float32; float16 and bfloat16: the tags above).
template <typename T> inline constexpr DataType data_type_of = detail::DataTypeOf<T>::value;

// The size in bytes of one element of `type` (1, 2, 4 or 8; needs no NCCL). Throws Error: INVALID_ARGUMENT.
inline std::uint32_t data_type_size(DataType type) {
    std::uint32_t size = 0;
    detail::check(cucore_data_type_size(detail::to_c(type), &size));
    return size;
}

// The version of the NCCL libcucore loaded (NCCL_VERSION_CODE, e.g. 22809 for
// 2.28.9); loads it if needed. Throws Error: NOT_SUPPORTED (NCCL missing).
inline int communicator_library_version() {
    int version = 0;
    detail::check(cucore_communicator_library_version(&version));
    return version;
}

// The bytes that name one communicator clique across processes
// (cucore_communicator_id_t; NCCL's ncclUniqueId): plain data, passed to every
// process that joins as is.
class CommunicatorId {
public:
    static constexpr std::size_t size = CUCORE_COMMUNICATOR_ID_BYTES;
    using Bytes = std::array<std::uint8_t, size>;

    // All zeros (no clique): make one with create() or from_bytes().
    CommunicatorId() noexcept = default;

    // A new id (ncclGetUniqueId, which opens a listening socket for the ranks to meet).
    // Throws Error: NOT_SUPPORTED (NCCL missing), CUDA.
    static CommunicatorId create() {
        cucore_communicator_id_t raw{};
        detail::check(cucore_communicator_id_create(&raw));
        return from_c(raw);
    }
    // The id of bytes another process sent (bytes() there).
    static CommunicatorId from_bytes(const Bytes &bytes) noexcept {
        CommunicatorId id;
        id.bytes_ = bytes;
        return id;
    }
    // The same from `length` bytes at `data`. Throws Error: INVALID_ARGUMENT unless length is `size`.
    static CommunicatorId from_bytes(const void *data, std::size_t length) {
        if (data == nullptr || length != size)
            throw Error(CUCORE_ERROR_INVALID_ARGUMENT, 0,
                        "CommunicatorId::from_bytes: needs exactly CUCORE_COMMUNICATOR_ID_BYTES (128) bytes");
        CommunicatorId id;
        std::memcpy(id.bytes_.data(), data, size);
        return id;
    }

    const Bytes &bytes() const noexcept { return bytes_; }
    const std::uint8_t *data() const noexcept { return bytes_.data(); }

    cucore_communicator_id_t to_c() const noexcept {
        cucore_communicator_id_t raw{};
        std::memcpy(raw.internal, bytes_.data(), size);
        return raw;
    }
    static CommunicatorId from_c(const cucore_communicator_id_t &raw) noexcept {
        CommunicatorId id;
        std::memcpy(id.bytes_.data(), raw.internal, size);
        return id;
    }

    friend bool operator==(const CommunicatorId &a, const CommunicatorId &b) noexcept { return a.bytes_ == b.bytes_; }
    friend bool operator!=(const CommunicatorId &a, const CommunicatorId &b) noexcept { return a.bytes_ != b.bytes_; }

private:
    Bytes bytes_{};
};

// One rank of a group of GPUs that reduce, gather and exchange buffers together
// (cucore_communicator_t; NCCL's ncclComm_t); holds its device's primary context.
// Operations take a stream of the communicator's device and device (or managed)
// buffers of it; send and receive may be one buffer (in place). Each has an
// overload naming the DataType and a typed one, comm.all_reduce<float>(...).
// Every operation throws Error: INVALID_HANDLE, INVALID_ARGUMENT (unset type or
// op; with count 0, buffers whose sizes do not match; else a buffer smaller
// than count elements; a buffer or stream of another device; root or peer out
// of range), INVALID_STATE (the stream is captured outside a cucore graph
// builder), NOT_SUPPORTED (no NCCL), CUDA (NCCL's error).
class Communicator : public Handle<Communicator, cucore_communicator_t> {
public:
    Communicator() noexcept = default;

    // Joins clique `id` as rank `rank` of `rank_count` on `device` (ncclCommInitRank).
    // Blocks until every rank has joined (from its process or thread, or inside a
    // Group when one thread creates several). Throws Error: INVALID_HANDLE,
    // INVALID_ARGUMENT (rank_count < 1, rank out of range), NOT_SUPPORTED, OUT_OF_MEMORY, CUDA.
    static Communicator create(const Device &device, const CommunicatorId &id, int rank_count, int rank) {
        const cucore_communicator_id_t raw_id = id.to_c();
        cucore_communicator_t *raw = nullptr;
        detail::check(cucore_communicator_create(device.get(), &raw_id, rank_count, rank, &raw));
        return adopt(raw);
    }

    // One process driving several GPUs: rank i on devices[i] (ncclCommInitAll); all or
    // nothing. Throws Error: INVALID_HANDLE, INVALID_ARGUMENT (none, a device twice),
    // NOT_SUPPORTED, OUT_OF_MEMORY, CUDA.
    static std::vector<Communicator> create_all(const std::vector<Device> &devices) {
        std::vector<cucore_device_t *> raw_devices;
        raw_devices.reserve(devices.size());
        for (const Device &d : devices) raw_devices.push_back(d.get());
        std::vector<cucore_communicator_t *> raw(devices.size(), nullptr);
        detail::check(cucore_communicator_create_all(raw_devices.data(), raw_devices.size(), raw.data()));
        std::vector<Communicator> out;
        out.reserve(raw.size());
        for (cucore_communicator_t *c : raw) out.push_back(adopt(c));
        return out;
    }

    // This communicator's rank, and the number of ranks of its clique.
    int rank() const {
        int v = 0;
        detail::check(cucore_communicator_rank(handle_, &v));
        return v;
    }
    int rank_count() const {
        int v = 0;
        detail::check(cucore_communicator_rank_count(handle_, &v));
        return v;
    }
    // The device it runs on.
    Device device() const {
        cucore_device_t *raw = nullptr;
        detail::check(cucore_communicator_device(handle_, &raw));
        return Device::adopt(raw);
    }
    // The ncclComm_t, for calling NCCL directly (the communicator still owns it).
    void *handle() const {
        void *v = nullptr;
        detail::check(cucore_communicator_handle(handle_, &v));
        return v;
    }
    // Throws Error (CUDA, naming NCCL's error) if NCCL reported an asynchronous
    // failure on the communicator (ncclCommGetAsyncError).
    void check() const { detail::check(cucore_communicator_check(handle_)); }

    // Reduces every rank's `send` into every rank's `recv` (ncclAllReduce).
    void all_reduce(const Buffer &send, const Buffer &recv, DataType type, const Stream &stream,
                    ReduceOp op = ReduceOp::sum, std::uint64_t count = 0) const {
        detail::check(cucore_communicator_all_reduce(handle_, send.get(), recv.get(), count, detail::to_c(type),
                                                     detail::to_c(op), stream.get()));
    }
    template <typename T>
    void all_reduce(const Buffer &send, const Buffer &recv, const Stream &stream, ReduceOp op = ReduceOp::sum,
                    std::uint64_t count = 0) const {
        all_reduce(send, recv, data_type_of<T>, stream, op, count);
    }

    // Concatenates every rank's `send_count` elements (0: all of `send`; `recv` is then
    // rank_count times its size) into every rank's `recv`, in rank order (ncclAllGather).
    void all_gather(const Buffer &send, const Buffer &recv, DataType type, const Stream &stream,
                    std::uint64_t send_count = 0) const {
        detail::check(cucore_communicator_all_gather(handle_, send.get(), recv.get(), send_count,
                                                     detail::to_c(type), stream.get()));
    }
    template <typename T>
    void all_gather(const Buffer &send, const Buffer &recv, const Stream &stream, std::uint64_t send_count = 0) const {
        all_gather(send, recv, data_type_of<T>, stream, send_count);
    }

    // Reduces every rank's `send` (rank_count * recv_count elements) and leaves block r
    // in rank r's `recv` (ncclReduceScatter); recv_count 0: all of `recv`.
    void reduce_scatter(const Buffer &send, const Buffer &recv, DataType type, const Stream &stream,
                        ReduceOp op = ReduceOp::sum, std::uint64_t recv_count = 0) const {
        detail::check(cucore_communicator_reduce_scatter(handle_, send.get(), recv.get(), recv_count,
                                                         detail::to_c(type), detail::to_c(op), stream.get()));
    }
    template <typename T>
    void reduce_scatter(const Buffer &send, const Buffer &recv, const Stream &stream, ReduceOp op = ReduceOp::sum,
                        std::uint64_t recv_count = 0) const {
        reduce_scatter(send, recv, data_type_of<T>, stream, op, recv_count);
    }

    // Copies rank `root`'s `send` into every rank's `recv` (ncclBroadcast). Only the
    // root reads `send`: other ranks may pass an empty Buffer().
    void broadcast(const Buffer &send, const Buffer &recv, DataType type, int root, const Stream &stream,
                   std::uint64_t count = 0) const {
        detail::check(cucore_communicator_broadcast(handle_, send.get(), recv.get(), count, detail::to_c(type), root,
                                                    stream.get()));
    }
    template <typename T>
    void broadcast(const Buffer &send, const Buffer &recv, int root, const Stream &stream,
                   std::uint64_t count = 0) const {
        broadcast(send, recv, data_type_of<T>, root, stream, count);
    }

    // Reduces every rank's `send` into rank `root`'s `recv` (ncclReduce). Only the
    // root writes `recv`: other ranks may pass an empty Buffer().
    void reduce(const Buffer &send, const Buffer &recv, DataType type, int root, const Stream &stream,
                ReduceOp op = ReduceOp::sum, std::uint64_t count = 0) const {
        detail::check(cucore_communicator_reduce(handle_, send.get(), recv.get(), count, detail::to_c(type),
                                                 detail::to_c(op), root, stream.get()));
    }
    template <typename T>
    void reduce(const Buffer &send, const Buffer &recv, int root, const Stream &stream, ReduceOp op = ReduceOp::sum,
                std::uint64_t count = 0) const {
        reduce(send, recv, data_type_of<T>, root, stream, op, count);
    }

    // Sends `count` elements (0: all) of `buffer` to rank `peer` (ncclSend), which
    // receives them with recv (ncclRecv). A send and its receive on one thread need a Group.
    void send(const Buffer &buffer, DataType type, int peer, const Stream &stream, std::uint64_t count = 0) const {
        detail::check(cucore_communicator_send(handle_, buffer.get(), count, detail::to_c(type), peer, stream.get()));
    }
    template <typename T>
    void send(const Buffer &buffer, int peer, const Stream &stream, std::uint64_t count = 0) const {
        send(buffer, data_type_of<T>, peer, stream, count);
    }
    void recv(const Buffer &buffer, DataType type, int peer, const Stream &stream, std::uint64_t count = 0) const {
        detail::check(cucore_communicator_recv(handle_, buffer.get(), count, detail::to_c(type), peer, stream.get()));
    }
    template <typename T>
    void recv(const Buffer &buffer, int peer, const Stream &stream, std::uint64_t count = 0) const {
        recv(buffer, data_type_of<T>, peer, stream, count);
    }
};

// A group on the calling thread (ncclGroupStart/End): the operations and
// creations made while it is open are handed to NCCL together when the
// outermost group ends. One thread driving several ranks needs one. end() ends
// it and throws NCCL's failure; a group still open at scope end is ended there,
// a failure going to the release-error path (cucore_release_error_count), as a
// destructor cannot throw. Groups nest; a Group belongs to its thread. Move-only.
class Group {
public:
    // Opens a group. Throws Error: NOT_SUPPORTED (no NCCL), CUDA.
    Group() {
        detail::check(cucore_communicator_group_start());
        open_ = true;
    }
    Group(Group &&other) noexcept : open_(other.open_) { other.open_ = false; }
    Group &operator=(Group &&other) noexcept {
        if (this != &other) {
            end_quietly();
            open_ = other.open_;
            other.open_ = false;
        }
        return *this;
    }
    Group(const Group &) = delete;
    Group &operator=(const Group &) = delete;
    ~Group() { end_quietly(); }

    // Ends the group (at the outermost end the grouped operations start; what they
    // use stays held until their streams pass them, also when NCCL fails). Throws
    // Error: INVALID_STATE (already ended), CUDA (NCCL's failure).
    void end() {
        if (!open_)
            throw Error(CUCORE_ERROR_INVALID_STATE, 0, "cucore::Group::end: the group has ended already");
        open_ = false;
        detail::check(cucore_communicator_group_end());
    }
    // Whether this group is still open.
    bool is_open() const noexcept { return open_; }

    // How many groups are open on the calling thread (0: none). Never throws.
    static int depth() noexcept { return cucore_communicator_group_depth(); }

private:
    void end_quietly() noexcept {
        if (!open_) return;
        open_ = false;
        if (cucore_communicator_group_end() != CUCORE_SUCCESS)
            cucore_report_release_error(cucore_last_error_status(), cucore_last_cuda_result(),
                                        cucore_last_error_message());
    }

    bool open_ = false;
};

} // namespace cucore

#endif // CUCORE_COMMUNICATOR_HPP
