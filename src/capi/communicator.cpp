// C ABI: communicators (NCCL collectives).
#include "capi/capi.hpp"

using namespace cucore;

extern "C" {

cucore_status_t cucore_communicator_library_version(int *version) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(version, "version");
        result = core::Communicator::library_version();
    });
}

cucore_status_t cucore_data_type_size(cucore_data_type_t type, uint32_t *size) {
    return capi::guarded(__func__, [&] {
        uint32_t &result = capi::out(size, "size");
        result = core::data_type_size(capi::check_data_type(type, "type"));
    });
}

cucore_status_t cucore_communicator_id_create(cucore_communicator_id_t *id) {
    return capi::guarded(__func__, [&] {
        cucore_communicator_id_t &result = capi::out(id, "id");
        core::Communicator::make_id(result);
    });
}

cucore_status_t cucore_communicator_create(cucore_device_t *device, const cucore_communicator_id_t *id,
                                           int rank_count, int rank, cucore_communicator_t **communicator) {
    return capi::guarded(__func__, [&] {
        cucore_communicator_t *&result = capi::out(communicator, "communicator");
        core::Device &object = capi::get(device, "device");
        capi::require(id, "id");
        capi::check_rank(rank_count, rank);
        result = capi::give_new<cucore_communicator_t>(core::Communicator::create(object, *id, rank_count, rank));
    });
}

cucore_status_t cucore_communicator_create_all(cucore_device_t *const *devices, size_t count,
                                               cucore_communicator_t **communicators) {
    return capi::guarded(__func__, [&] {
        capi::out_array(communicators, count, "communicators");
        capi::require_nonzero(count, "count", "device");
        capi::require_array(devices, count, "devices");
        const std::vector<core::Device *> objects = capi::get_all(devices, count, "devices");
        size_t total = 0;
        capi::give_list(core::Communicator::create_all(objects), communicators, count, total, "communicators");
    });
}

cucore_status_t cucore_communicator_rank(const cucore_communicator_t *communicator, int *rank) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(rank, "rank");
        result = capi::get(communicator, "communicator").rank();
    });
}

cucore_status_t cucore_communicator_rank_count(const cucore_communicator_t *communicator, int *count) {
    return capi::guarded(__func__, [&] {
        int &result = capi::out(count, "count");
        result = capi::get(communicator, "communicator").rank_count();
    });
}

cucore_status_t cucore_communicator_device(const cucore_communicator_t *communicator, cucore_device_t **device) {
    return capi::guarded(__func__, [&] {
        cucore_device_t *&result = capi::out(device, "device");
        result = capi::give<cucore_device_t>(capi::get(communicator, "communicator").context().device_ref());
    });
}

cucore_status_t cucore_communicator_handle(const cucore_communicator_t *communicator, void **nccl_comm) {
    return capi::guarded(__func__, [&] {
        void *&result = capi::out(nccl_comm, "nccl_comm");
        result = capi::get(communicator, "communicator").handle();
    });
}

cucore_status_t cucore_communicator_check(cucore_communicator_t *communicator) {
    return capi::guarded(__func__, [&] { capi::get(communicator, "communicator").check(); });
}

cucore_status_t cucore_communicator_all_reduce(cucore_communicator_t *communicator, cucore_buffer_t *send,
                                               cucore_buffer_t *recv, uint64_t count, cucore_data_type_t type,
                                               cucore_reduce_op_t op, cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        capi::get(communicator, "communicator")
            .all_reduce(capi::get(send, "send"), capi::get(recv, "recv"), count, capi::check_data_type(type, "type"),
                        capi::check_reduce_op(op, "op"), capi::get(stream, "stream"));
    });
}

cucore_status_t cucore_communicator_all_gather(cucore_communicator_t *communicator, cucore_buffer_t *send,
                                               cucore_buffer_t *recv, uint64_t send_count, cucore_data_type_t type,
                                               cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        capi::get(communicator, "communicator")
            .all_gather(capi::get(send, "send"), capi::get(recv, "recv"), send_count,
                        capi::check_data_type(type, "type"), capi::get(stream, "stream"));
    });
}

cucore_status_t cucore_communicator_reduce_scatter(cucore_communicator_t *communicator, cucore_buffer_t *send,
                                                   cucore_buffer_t *recv, uint64_t recv_count,
                                                   cucore_data_type_t type, cucore_reduce_op_t op,
                                                   cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        capi::get(communicator, "communicator")
            .reduce_scatter(capi::get(send, "send"), capi::get(recv, "recv"), recv_count,
                            capi::check_data_type(type, "type"), capi::check_reduce_op(op, "op"),
                            capi::get(stream, "stream"));
    });
}

cucore_status_t cucore_communicator_broadcast(cucore_communicator_t *communicator, cucore_buffer_t *send,
                                              cucore_buffer_t *recv, uint64_t count, cucore_data_type_t type,
                                              int root, cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        capi::get(communicator, "communicator")
            .broadcast(capi::get_optional(send, "send"), capi::get(recv, "recv"), count,
                       capi::check_data_type(type, "type"), root, capi::get(stream, "stream"));
    });
}

cucore_status_t cucore_communicator_reduce(cucore_communicator_t *communicator, cucore_buffer_t *send,
                                           cucore_buffer_t *recv, uint64_t count, cucore_data_type_t type,
                                           cucore_reduce_op_t op, int root, cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        capi::get(communicator, "communicator")
            .reduce(capi::get(send, "send"), capi::get_optional(recv, "recv"), count,
                    capi::check_data_type(type, "type"), capi::check_reduce_op(op, "op"), root,
                    capi::get(stream, "stream"));
    });
}

cucore_status_t cucore_communicator_send(cucore_communicator_t *communicator, cucore_buffer_t *buffer,
                                         uint64_t count, cucore_data_type_t type, int peer, cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        capi::get(communicator, "communicator")
            .send(capi::get(buffer, "buffer"), count, capi::check_data_type(type, "type"), peer,
                  capi::get(stream, "stream"));
    });
}

cucore_status_t cucore_communicator_recv(cucore_communicator_t *communicator, cucore_buffer_t *buffer,
                                         uint64_t count, cucore_data_type_t type, int peer, cucore_stream_t *stream) {
    return capi::guarded(__func__, [&] {
        capi::get(communicator, "communicator")
            .recv(capi::get(buffer, "buffer"), count, capi::check_data_type(type, "type"), peer,
                  capi::get(stream, "stream"));
    });
}

cucore_status_t cucore_communicator_group_start(void) {
    return capi::guarded(__func__, [&] { core::Communicator::group_start(); });
}

cucore_status_t cucore_communicator_group_end(void) {
    return capi::guarded(__func__, [&] { core::Communicator::group_end(); });
}

int cucore_communicator_group_depth(void) { return core::Communicator::group_depth(); }

}  // extern "C"
