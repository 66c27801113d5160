// C ABI: the one reading of the arguments graph definitions and graph builders share
// (instantiation options, DOT output).
#pragma once

#include "capi/capi.hpp"
#include "core/stream.hpp"
#include "cucore/graph.h"

namespace cucore::capi {

// Instantiation options: the struct read, its flags known; `upload` gets the upload stream (or null).
inline cucore_graph_complete_options_t read_complete_options(const cucore_graph_complete_options_t *options,
                                                             core::Stream *&upload) {
    static constexpr cucore_graph_complete_options_t kDefaults = CUCORE_GRAPH_COMPLETE_OPTIONS_INIT;
    static constexpr uint32_t kKnownFlags = CUCORE_GRAPH_COMPLETE_AUTO_FREE_ON_LAUNCH |
                                            CUCORE_GRAPH_COMPLETE_DEVICE_LAUNCH |
                                            CUCORE_GRAPH_COMPLETE_USE_NODE_PRIORITY;
    const cucore_graph_complete_options_t resolved = read_options(options, kDefaults, "options");
    check_flags(resolved.flags, kKnownFlags, "options.flags");
    upload = get_optional(resolved.upload_stream, "options.upload_stream");
    return resolved;
}

// A DOT file's path (not NULL or empty) and flags (the driver's bits 0..15).
inline void check_dot_arguments(const char *path, uint32_t flags) {
    if (!path || !*path) core::throw_invalid_argument("argument 'path' is NULL or empty");
    check_flags(flags, (1u << 16) - 1u, "flags");
}

}  // namespace cucore::capi
