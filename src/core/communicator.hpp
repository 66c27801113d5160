// Communicators: NCCL's collectives on library buffers and streams
// (include/cucore/communicator.h).
//
// A communicator holds its device's primary context and the ncclComm_t, which
// it destroys last. Each operation enqueued through it holds the
// communicator, its buffers and its stream until the stream passes it, by the
// library's one mechanism for that (release_after, core/graph_attachments.hpp);
// inside a group those holds wait on the calling thread until the outermost
// group end has handed the operations to NCCL. A stream captured by a graph
// builder gives them to the graph instead.
#pragma once

#include <mutex>
#include <vector>

#include "core/context.hpp"
#include "core/handle.hpp"
#include "core/thread_cache.hpp"
#include "cucore/communicator.h"
#include "driver/nccl.hpp"

namespace cucore::core {

class Buffer;
class Device;
class Stream;

class Communicator final : public Object, public Pooled<Communicator> {
  public:
    // The loaded NCCL's NCCL_VERSION_CODE (loads it; NOT_SUPPORTED when missing).
    static int library_version();
    // A new clique id (ncclGetUniqueId).
    static void make_id(cucore_communicator_id_t &id);
    // Rank `rank` of `rank_count` (checked by the C ABI) in clique `id` on `device` (ncclCommInitRank).
    static Ref<Communicator> create(Device &device, const cucore_communicator_id_t &id, int rank_count, int rank);
    // One communicator per device (at least one), ranks in order (ncclCommInitAll); all or none.
    static std::vector<Ref<Communicator>> create_all(const std::vector<Device *> &devices);

    Communicator(Ref<Context> context, driver::nccl::Comm comm, int rank, int rank_count) noexcept;
    ~Communicator() override;  // ncclCommDestroy in its context; a failure is reported

    int rank() const noexcept { return rank_; }
    int rank_count() const noexcept { return rank_count_; }
    Context &context() const noexcept { return *context_; }
    driver::nccl::Comm handle() const noexcept { return comm_; }
    // Throws what ncclCommGetAsyncError reports, if anything.
    void check();

    // The collectives (see communicator.h for counts of 0 and which buffers may be null).
    void all_reduce(Buffer &send, Buffer &recv, uint64_t count, cucore_data_type_t type, cucore_reduce_op_t op,
                    Stream &stream);
    void all_gather(Buffer &send, Buffer &recv, uint64_t send_count, cucore_data_type_t type, Stream &stream);
    void reduce_scatter(Buffer &send, Buffer &recv, uint64_t recv_count, cucore_data_type_t type,
                        cucore_reduce_op_t op, Stream &stream);
    void broadcast(Buffer *send, Buffer &recv, uint64_t count, cucore_data_type_t type, int root, Stream &stream);
    void reduce(Buffer &send, Buffer *recv, uint64_t count, cucore_data_type_t type, cucore_reduce_op_t op, int root,
                Stream &stream);
    void send(Buffer &buffer, uint64_t count, cucore_data_type_t type, int peer, Stream &stream);
    void recv(Buffer &buffer, uint64_t count, cucore_data_type_t type, int peer, Stream &stream);

    // NCCL's thread-local groups (ncclGroupStart / ncclGroupEnd), counted per thread.
    static void group_start();
    static void group_end();
    static int group_depth() noexcept;

  private:
    struct Operation;
    // Checks the buffers and stream, runs `enqueue` (the NCCL call) under this
    // communicator's lock in its context, then holds what the operation uses.
    void submit(const Operation &operation);

    Ref<Context> context_;
    driver::nccl::Comm comm_;
    int rank_;
    int rank_count_;
    std::mutex mutex_;  // NCCL communicators are not safe to use from two threads at once
};

// The size in bytes of an element of `type` (valid: the C ABI checked it).
uint32_t data_type_size(cucore_data_type_t type) noexcept;

}  // namespace cucore::core
