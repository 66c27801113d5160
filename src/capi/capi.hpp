// Helpers for the extern "C" layer: argument checks, handle resolution, and the
// catch-all that turns core::Error into a status and the thread's last error.
// No CUDA logic lives in src/capi.
#pragma once

#include <cstdio>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "core/context.hpp"
#include "core/device.hpp"
#include "core/error.hpp"
#include "core/event.hpp"
#include "core/diagnostics.hpp"
#include "core/handle.hpp"
#include "core/handle_table.hpp"
#include "core/kernel.hpp"
#include "core/memory.hpp"
#include "core/linker.hpp"
#include "core/object_code.hpp"
#include "core/program.hpp"
#include "core/program_cache.hpp"
#include "core/graphics.hpp"
#include "core/stream.hpp"
#include "capi/handle_types.hpp"  // generated: CoreOf<>
#include "cucore.h"

namespace cucore::capi {

// Runs `body`; returns CUCORE_SUCCESS or the status of what it threw, with the
// thread's last error set to "<function>: <message>".
template <class Body>
inline cucore_status_t guarded(const char *function, Body &&body) noexcept {
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

// The object behind a handle argument (no reference taken).
template <class Handle>
inline typename CoreOf<Handle>::type &get(const Handle *handle, const char *argument) {
    return *static_cast<typename CoreOf<Handle>::type *>(
        core::handles::resolve(handle, CoreOf<Handle>::kind, argument));
}

// The object behind an optional handle argument (NULL stays NULL; no reference taken).
template <class Handle>
inline typename CoreOf<Handle>::type *get_optional(const Handle *handle, const char *argument) {
    return handle ? &get(handle, argument) : nullptr;
}

// The objects behind an array of handle arguments (no references taken); a
// bad element is named "<argument>[i]" in the message.
template <class Handle>
inline std::vector<typename CoreOf<Handle>::type *> get_all(Handle *const *handles, size_t count,
                                                           const char *argument) {
    if (count && !handles)
        core::throw_invalid_argument(std::string("argument '") + argument + "' is NULL with a count of " +
                                     std::to_string(count));
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

// Hands a new reference to the C caller as its handle. References to immortal
// objects are not counted inside the library, but the caller's must be, so that
// its release is checked like any other.
template <class Handle, class T>
inline Handle *give(core::Ref<T> object) noexcept {
    T *raw = object.detach();
    if (raw->immortal()) core::handles::retain_counted(raw);
    return static_cast<Handle *>(core::handles::encode(raw));
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

// Reads a versioned options struct: NULL gives `defaults`; a smaller
// struct_size (an older caller) reads only the fields it has; a larger one (a
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

// A reserved field, which must be 0.
inline void require_zero(uint32_t value, const char *argument) {
    if (value != 0) core::throw_invalid_argument(std::string("argument '") + argument + "' must be 0");
}

// A 0/1 switch.
inline void check_switch(uint32_t value, const char *argument) {
    if (value > 1) core::throw_invalid_argument(std::string("argument '") + argument + "' must be 0 or 1");
}

// Rejects flag bits outside `known`.
inline void check_flags(uint32_t flags, uint32_t known, const char *argument) {
    if (flags & ~known)
        core::throw_invalid_argument(std::string("argument '") + argument + "' has unknown flag bits 0x" +
                                     [](uint32_t v) { char b[16]; std::snprintf(b, sizeof b, "%x", v); return std::string(b); }(flags & ~known));
}

}  // namespace cucore::capi
