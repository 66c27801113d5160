// Helpers for the extern "C" layer: argument checks, handle resolution, and the
// catch-all that turns core::Error into a status and the thread's last error.
// No CUDA logic lives in src/capi.
//
// This layer validates every argument and every field of the C ABI's structs
// that can be judged from the call's own values (see docs/architecture.md,
// "Where arguments are validated"); the validators at the end of this file are
// the one set every capability uses. Core judges values against its objects.
#pragma once

#include <cctype>
#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "core/communicator.hpp"
#include "core/context.hpp"
#include "core/device.hpp"
#include "core/enum_value.hpp"
#include "core/error.hpp"
#include "core/event.hpp"
#include "core/diagnostics.hpp"
#include "core/call_frame.hpp"
#include "core/handle.hpp"
#include "core/kernel.hpp"
#include "core/buffer.hpp"
#include "core/memory_resource.hpp"
#include "core/linker.hpp"
#include "core/object_code.hpp"
#include "core/program.hpp"
#include "core/program_cache.hpp"
#include "core/graphics.hpp"
#include "core/opaque_array.hpp"
#include "core/texture.hpp"
#include "core/stream.hpp"
#include "capi/handle_types.hpp"  // generated: CoreOf<>
#include "capi/struct_fields.hpp"  // generated: FieldsOf<>
#include "cucore.h"

namespace cucore::capi {

// Runs `body`; returns CUCORE_SUCCESS or the status of what it threw, with the
// thread's last error set to "<function>: <message>". The objects of the handles
// the body resolves with get() are held until it returns (core::CallFrame).
template <class Body>
inline cucore_status_t guarded(const char *function, Body &&body) noexcept {
    core::CallFrame frame;
    try {
        body();
        return CUCORE_SUCCESS;
    } catch (const core::Error &error) {
        return core::set_last_error(function, error.status(), error.what(), error.cuda_result());
    } catch (const std::bad_alloc &) {
        return core::set_last_error(function, CUCORE_ERROR_OUT_OF_MEMORY, "out of host memory", 0);
    } catch (const std::exception &error) {
        return core::set_last_error(function, CUCORE_ERROR_INTERNAL, error.what(), 0);
    } catch (...) {
        return core::set_last_error(function, CUCORE_ERROR_INTERNAL, "unknown exception", 0);
    }
}

// The object behind a handle argument, held until the call returns.
template <class Handle>
inline typename CoreOf<Handle>::type &get(const Handle *handle, const char *argument) {
    return *static_cast<typename CoreOf<Handle>::type *>(
        core::CallFrame::hold(handle, CoreOf<Handle>::kind, argument));
}

// The object behind an optional handle argument (NULL stays NULL), held until the call returns.
template <class Handle>
inline typename CoreOf<Handle>::type *get_optional(const Handle *handle, const char *argument) {
    return handle ? &get(handle, argument) : nullptr;
}

// An array argument may be NULL only while its count (or capacity: `count_name`) is 0.
template <class T>
inline void require_array(T *array, size_t count, const char *argument, const char *count_name = "count") {
    if (count && !array)
        core::throw_invalid_argument(std::string("argument '") + argument + "' is NULL with a " + count_name + " of " +
                                     std::to_string(count));
}

// The objects behind an array of handle arguments, held until the call returns; a
// bad element is named "<argument>[i]" in the message.
template <class Handle>
inline std::vector<typename CoreOf<Handle>::type *> get_all(Handle *const *handles, size_t count,
                                                           const char *argument) {
    require_array(handles, count, argument);
    std::vector<typename CoreOf<Handle>::type *> objects;
    objects.reserve(count);
    for (size_t i = 0; i < count; ++i) {
        try {
            objects.push_back(&get(handles[i], argument));
        } catch (const core::Error &) {  // the element's name is built only for the message
            const std::string element = std::string(argument) + "[" + std::to_string(i) + "]";
            objects.push_back(&get(handles[i], element.c_str()));  // throws again, naming it
        }
    }
    return objects;
}

// Checks an out-pointer and clears it, so it reads NULL/0 if the call fails.
template <class T>
inline T &out(T *pointer, const char *argument) {
    if (!pointer) core::throw_invalid_argument(std::string("argument '") + argument + "' is NULL");
    *pointer = T{};
    return *pointer;
}

// Hands a new reference to the C caller as its handle (a user reference, made
// from the library reference `object` carries).
template <class Handle, class T>
inline Handle *give(core::Ref<T> object) {
    return static_cast<Handle *>(core::handles::hand_out(object.detach()));
}

// give() for an object the call has just made (core's create and allocate paths), never handed out before.
template <class Handle, class T>
inline Handle *give_new(core::Ref<T> object) {
    return static_cast<Handle *>(core::handles::hand_out_new(object.detach()));
}

template <class Handle>
inline void retain(Handle *handle) {
    core::handles::retain(handle, CoreOf<Handle>::kind, CoreOf<Handle>::argument);
}

template <class Handle>
inline void release(Handle *handle) {
    if (!handle) return;  // NULL is a no-op
    core::handles::release(handle, CoreOf<Handle>::kind, CoreOf<Handle>::argument);
}

// A list answer: new handles for the first `capacity` objects in `out` (the other slots NULL) and the whole
// list's size in `total`; a failure part way (no room for a handle) gives none.
template <class Handle, class T>
inline void give_list(std::vector<core::Ref<T>> objects, Handle **out, size_t capacity, size_t &total,
                      const char *argument) {
    require_array(out, capacity, argument, "capacity");
    for (size_t i = 0; i < capacity; ++i) out[i] = nullptr;
    size_t given = 0;
    try {
        for (; given < objects.size() && given < capacity; ++given) out[given] = give<Handle>(std::move(objects[given]));
    } catch (...) {
        for (size_t i = 0; i < given; ++i) {
            release(out[i]);
            out[i] = nullptr;
        }
        throw;
    }
    total = objects.size();
}

// Reads a versioned options struct: NULL gives `defaults`; a smaller
// struct_size (an older caller) reads only the fields it has (one that ends
// inside a field is refused); a larger one (a
// newer caller) is accepted only if the fields this library does not know are 0.
template <class Options>
inline Options read_options(const Options *options, const Options &defaults, const char *argument) {
    if (!options) return defaults;
    const uint32_t size = options->struct_size;
    if (size < sizeof(uint32_t))
        core::throw_invalid_argument(std::string("argument '") + argument + "' has struct_size " +
                                     std::to_string(size) + "; initialise it with its _OPTIONS_INIT macro");
    if (size > sizeof(Options)) {
        if (size > 4096)
            core::throw_invalid_argument(std::string("argument '") + argument + "' has an implausible struct_size " +
                                         std::to_string(size));
        const unsigned char *tail = reinterpret_cast<const unsigned char *>(options) + sizeof(Options);
        for (uint32_t i = 0; i < size - sizeof(Options); ++i)
            if (tail[i])
                throw core::Error(CUCORE_ERROR_NOT_SUPPORTED,
                                  std::string("argument '") + argument +
                                      "' sets fields this version of libcucore does not know (struct_size " +
                                      std::to_string(size) + ", known " + std::to_string(sizeof(Options)) + ")");
    }
    if (size < sizeof(Options))
        for (const FieldSpan &field : FieldsOf<Options>::fields)  // an older struct ends between fields
            if (field.offset < size && size < field.offset + field.size)
                core::throw_invalid_argument(std::string("argument '") + argument + "' has struct_size " +
                                             std::to_string(size) + ", which ends inside its field '" + field.name +
                                             "'; initialise it with its _OPTIONS_INIT macro");
    Options result = defaults;
    std::memcpy(&result, options, size < sizeof(Options) ? size : sizeof(Options));
    result.struct_size = sizeof(Options);
    return result;
}

// Fills a caller's versioned out struct (struct_size set by its _INIT macro):
// an older caller's smaller struct gets the fields it has; struct_size stays.
template <class Struct>
inline void write_versioned(Struct *out, const Struct &value, const char *argument, const char *init_macro) {
    if (!out) core::throw_invalid_argument(std::string("argument '") + argument + "' is NULL");
    const uint32_t size = out->struct_size;
    if (size < sizeof(uint32_t))
        core::throw_invalid_argument(std::string("argument '") + argument + "' has struct_size " +
                                     std::to_string(size) + "; initialise it with " + init_macro);
    const size_t copied = size < sizeof(Struct) ? size : sizeof(Struct);
    std::memcpy(reinterpret_cast<unsigned char *>(out) + sizeof(uint32_t),
                reinterpret_cast<const unsigned char *>(&value) + sizeof(uint32_t), copied - sizeof(uint32_t));
}

// An out-pointer the caller may leave NULL: cleared when given, so it reads
// NULL/0 if the call fails; returns it for writing (or NULL).
template <class T>
inline T *optional_out(T *pointer) noexcept {
    if (pointer) *pointer = T{};
    return pointer;
}

// An input pointer (data or function) that must not be NULL.
template <class Pointer>
inline void require(Pointer pointer, const char *argument) {
    if (!pointer) core::throw_invalid_argument(std::string("argument '") + argument + "' is NULL");
}

// A fixed-size out array: checked and cleared, so it reads zeros if the call fails.
inline uint8_t *out_bytes(uint8_t *bytes, size_t size, const char *argument) {
    if (!bytes) core::throw_invalid_argument(std::string("argument '") + argument + "' is NULL");
    std::memset(bytes, 0, size);
    return bytes;
}

// ---- Validators: each failure is INVALID_ARGUMENT naming the argument or field ("options.debug") ----

// A reserved field, which must be 0.
inline void require_zero(uint32_t value, const char *argument) {
    if (value != 0) core::throw_invalid_argument(std::string("argument '") + argument + "' must be 0");
}

// A 0/1 switch; returns it.
inline uint32_t check_switch(uint32_t value, const char *argument) {
    if (value > 1) core::throw_invalid_argument(std::string("argument '") + argument + "' must be 0 or 1");
    return value;
}

// An enum argument or field: its value read as the int32_t it is (core::enum_value: never as the enum before it
// is known valid), INVALID_ARGUMENT naming it and its value unless `valid(raw)`; returns it as the enum.
// `expected` says what it must be ("must be CUCORE_TOGGLE_DEFAULT, ..."): a C string, so that a valid value costs
// no allocation (these checks sit on create paths the benchmarks time).
template <class Enum, class Valid>
inline Enum check_enum(const Enum &value, Valid valid, const char *argument, const char *expected) {
    const int32_t raw = core::enum_value(value);
    if (!valid(raw))
        core::throw_invalid_argument(std::string("argument '") + argument + "' (" + std::to_string(raw) + ") " +
                                     expected);
    return static_cast<Enum>(raw);
}

// An enum argument or field whose values are first..last.
template <class Enum>
inline Enum check_enum_range(const Enum &value, int32_t first, int32_t last, const char *argument,
                             const char *expected) {
    return check_enum(value, [first, last](int32_t raw) { return raw >= first && raw <= last; }, argument, expected);
}

// An array out-argument of `count` handles: checked like require_array and cleared, so it reads NULLs if the
// call fails.
template <class Handle>
inline void out_array(Handle **array, size_t count, const char *argument) {
    require_array(array, count, argument);
    for (size_t i = 0; i < count; ++i) array[i] = nullptr;
}

// A count that must be at least 1 (`what` says what it counts, for the message).
inline void require_nonzero(size_t count, const char *argument, const char *what) {
    if (count == 0) core::throw_invalid_argument(std::string("argument '") + argument + "' is 0; name at least one " + what);
}

// A clique of `rank_count` ranks (at least 1) and `rank`, one of them.
inline void check_rank(int rank_count, int rank) {
    if (rank_count < 1)
        core::throw_invalid_argument("argument 'rank_count' is " + std::to_string(rank_count) + "; at least 1");
    if (rank < 0 || rank >= rank_count)
        core::throw_invalid_argument("argument 'rank' is " + std::to_string(rank) + "; ranks are 0.." +
                                     std::to_string(rank_count - 1));
}

// A collective's element type: one of the named types (not UNSET).
inline cucore_data_type_t check_data_type(const cucore_data_type_t &type, const char *argument) {
    return check_enum_range(type, CUCORE_DATA_TYPE_INT8, CUCORE_DATA_TYPE_FLOAT8_E5M2, argument,
                            "must name a data type, CUCORE_DATA_TYPE_INT8 .. CUCORE_DATA_TYPE_FLOAT8_E5M2");
}

// A collective's reduction: CUCORE_REDUCE_SUM (0, the default) .. CUCORE_REDUCE_AVG.
inline cucore_reduce_op_t check_reduce_op(const cucore_reduce_op_t &op, const char *argument) {
    return check_enum_range(op, CUCORE_REDUCE_SUM, CUCORE_REDUCE_AVG, argument,
                            "must be CUCORE_REDUCE_SUM, _PROD, _MAX, _MIN or _AVG");
}

// A compile target (cucore_program_compile, cucore_program_cache_key): PTX, CUBIN or LTOIR (the program's
// code type then decides which of them it can produce).
inline cucore_code_type_t check_compile_target(const cucore_code_type_t &target, const char *argument) {
    return check_enum(
        target,
        [](int32_t raw) { return raw == CUCORE_CODE_PTX || raw == CUCORE_CODE_CUBIN || raw == CUCORE_CODE_LTOIR; },
        argument, "must be CUCORE_CODE_PTX, CUCORE_CODE_CUBIN or CUCORE_CODE_LTOIR");
}

// An array format (cucore_array_format_t): one this library offers, or UNSET where `allow_unset` (core then says
// what is missing where it matters).
inline cucore_array_format_t check_array_format(const cucore_array_format_t &format, const char *argument,
                                                bool allow_unset) {
    return check_enum(
        format,
        [allow_unset](int32_t raw) {
            return (allow_unset && raw == CUCORE_ARRAY_FORMAT_UNSET) ||
                   core::array_format_traits(raw) != nullptr;
        },
        argument, "must be a cucore_array_format_t (CUCORE_ARRAY_FORMAT_UINT8, ..., CUCORE_ARRAY_FORMAT_FLOAT32, "
                  "the normalized, BC and 101010_2 formats)");
}

// A cucore_toggle_t (DEFAULT, ON or OFF); returns it.
inline cucore_toggle_t check_toggle(const cucore_toggle_t &value, const char *argument) {
    return check_enum_range(value, CUCORE_TOGGLE_DEFAULT, CUCORE_TOGGLE_OFF, argument,
                            "must be CUCORE_TOGGLE_DEFAULT, CUCORE_TOGGLE_ON or CUCORE_TOGGLE_OFF");
}

// Rejects flag bits outside `known`.
inline void check_flags(uint32_t flags, uint32_t known, const char *argument) {
    if (flags & ~known)
        core::throw_invalid_argument(std::string("argument '") + argument + "' has unknown flag bits 0x" +
                                     [](uint32_t v) { char b[16]; std::snprintf(b, sizeof b, "%x", v); return std::string(b); }(flags & ~known));
}

// The strings of a (pointer, count) argument: the array may be NULL only with a
// count of 0, and no string in it may be NULL ("<argument>[i]" is named).
inline std::vector<std::string> string_list(const char *const *array, size_t count, const char *argument) {
    require_array(array, count, argument);
    std::vector<std::string> result;
    result.reserve(count);
    for (size_t i = 0; i < count; ++i) {
        if (!array[i])
            core::throw_invalid_argument(std::string("argument '") + argument + "[" + std::to_string(i) + "]' is NULL");
        result.emplace_back(array[i]);
    }
    return result;
}

// A location (cucore_location_t): a known type, and an id >= 0 where the type has one (device, NUMA node).
inline void check_location(const cucore_location_t &location, const char *argument) {
    switch (core::enum_value(location.type)) {
        case CUCORE_LOCATION_DEVICE:
            if (location.id < 0)
                core::throw_invalid_argument(std::string("argument '") + argument + "' names device " +
                                             std::to_string(location.id));
            return;
        case CUCORE_LOCATION_HOST_NUMA:
            if (location.id < 0)
                core::throw_invalid_argument(std::string("argument '") + argument + "' names NUMA node " +
                                             std::to_string(location.id));
            return;
        case CUCORE_LOCATION_HOST:
        case CUCORE_LOCATION_HOST_NUMA_CURRENT: return;
        default:
            core::throw_invalid_argument(std::string("argument '") + argument + "' has an unknown location type (" +
                                         std::to_string(core::enum_value(location.type)) + ")");
    }
}

// An access (cucore_access_t): NONE, READ or READ_WRITE.
inline cucore_access_t check_access(const cucore_access_t &access, const char *argument) {
    return check_enum(
        access,
        [](int32_t raw) { return raw == CUCORE_ACCESS_NONE || raw == CUCORE_ACCESS_READ || raw == CUCORE_ACCESS_READ_WRITE; },
        argument, "is unknown: it must be CUCORE_ACCESS_NONE, CUCORE_ACCESS_READ or CUCORE_ACCESS_READ_WRITE");
}

// The numbers of a (pointer, count) argument: the array may be NULL only with a count of 0.
inline std::vector<uint32_t> number_list(const uint32_t *array, size_t count, const char *argument) {
    require_array(array, count, argument);
    return std::vector<uint32_t>(array, array + count);
}

// A GPU architecture: "sm_90", "sm_90a", "compute_90" as given; "90" / "90a" become "sm_90" / "sm_90a".
inline std::string check_arch(const char *arch, const char *argument) {
    const std::string text = arch;
    std::string digits = text;
    std::string prefix = "sm_";
    if (text.rfind("sm_", 0) == 0) {
        digits = text.substr(3);
    } else if (text.rfind("compute_", 0) == 0) {
        prefix = "compute_";
        digits = text.substr(8);
    }
    size_t i = 0;
    while (i < digits.size() && std::isdigit(static_cast<unsigned char>(digits[i]))) ++i;
    const bool suffix_ok = i == digits.size() || (i + 1 == digits.size() && (digits[i] == 'a' || digits[i] == 'f'));
    if (i < 2 || i > 3 || !suffix_ok)
        core::throw_invalid_argument(std::string("argument '") + argument + "' (\"" + text +
                                     "\") is not an architecture such as \"sm_90\", \"compute_90\" or \"90\"");
    return prefix + digits;
}

// The flags of an event's options (cucore_event_create*, cucore_stream_record): known bits, and not
// INTERPROCESS with TIMING (the driver shares only events without timing).
inline uint32_t read_event_flags(const cucore_event_options_t *options) {
    if (!options) return 0;  // the defaults, without copying them (events are created on hot paths)
    constexpr cucore_event_options_t defaults = CUCORE_EVENT_OPTIONS_INIT;
    const cucore_event_options_t resolved = read_options(options, defaults, "options");
    check_flags(resolved.flags, CUCORE_EVENT_TIMING | CUCORE_EVENT_BLOCKING_SYNC | CUCORE_EVENT_INTERPROCESS,
                "options.flags");
    if ((resolved.flags & CUCORE_EVENT_INTERPROCESS) && (resolved.flags & CUCORE_EVENT_TIMING))
        core::throw_invalid_argument("argument 'options.flags' combines CUCORE_EVENT_INTERPROCESS with "
                                     "CUCORE_EVENT_TIMING; the driver shares only events without timing");
    return resolved.flags;
}

}  // namespace cucore::capi
