// libcucore C++ façade: errors, the handle template and library-wide queries.
//
// Header-only C++17 over the C ABI (cucore/common.h); it never includes src/.
// Every class of the façade is one C handle pointer: copy = retain, move =
// steal, destructor = release (never throws). Failures throw cucore::Error,
// which carries the library's status, the driver's CUresult and the library's
// message for the failed call.
#ifndef CUCORE_COMMON_HPP
#define CUCORE_COMMON_HPP

#include <cstddef>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <utility>

#include "common.h"
#include "handle_traits.hpp"  // generated: detail::HandleTraits<> of every handle type

#if defined(__GNUC__)
#  define CUCORE_HPP_COLD __attribute__((noinline, cold))
#else
#  define CUCORE_HPP_COLD
#endif

namespace cucore {

// ---- Errors ---------------------------------------------------------------

// The exception every failing façade call throws. Holds the status, the driver's
// CUresult (0 when the driver did not cause the failure) and the library's
// message of the failed call (cucore_last_error_message() at the time of the
// throw). Copying never throws.
class Error : public std::exception {
public:
    Error(cucore_status_t status, int cuda_result, const char *message)
        : status_(status), cuda_result_(cuda_result),
          message_(message != nullptr && message[0] != '\0' ? message
                                                             : cucore_status_string(status)) {}

    // The library's status (never CUCORE_SUCCESS).
    cucore_status_t status() const noexcept { return status_; }
    // The driver's CUresult if the driver caused the failure, else 0.
    int cuda_result() const noexcept { return cuda_result_; }
    // The name of the status, e.g. "CUCORE_ERROR_INVALID_HANDLE".
    const char *status_name() const noexcept { return cucore_status_string(status_); }
    // The library's message: function, offending argument or object, driver error name.
    const char *what() const noexcept override { return message_.what(); }

private:
    cucore_status_t status_;
    int cuda_result_;
    std::runtime_error message_; // reference-counted string: copies never throw
};

namespace detail {

// Throws the calling thread's last error as cucore::Error (kept out of line so
// the success path of every call stays a compare and a branch).
[[noreturn]] CUCORE_HPP_COLD inline void throw_last_error(cucore_status_t status) {
    throw Error(status, cucore_last_cuda_result(), cucore_last_error_message());
}

inline void check(cucore_status_t status) {
    if (status != CUCORE_SUCCESS) throw_last_error(status);
}

} // namespace detail

// ---- The handle template ----------------------------------------------------

// The one ownership mechanism of the façade: exactly one C handle pointer that
// owns one reference (or nullptr: empty). `Derived` is the façade class (CRTP,
// so adopt() returns it); `CHandle` the C handle type, e.g. cucore_stream_t.
template <typename Derived, typename CHandle>
class Handle {
    using Traits = detail::HandleTraits<CHandle>;

public:
    using c_type = CHandle;

    // An empty handle: calls on it throw Error(CUCORE_ERROR_INVALID_HANDLE).
    constexpr Handle() noexcept = default;

    // Adds a reference (retain). Throws Error if `other` holds an invalid handle.
    Handle(const Handle &other) : handle_(nullptr) {
        if (other.handle_ != nullptr) detail::check(Traits::retain(other.handle_));
        handle_ = other.handle_;
    }

    // Steals the reference; `other` is left empty.
    Handle(Handle &&other) noexcept : handle_(other.handle_) { other.handle_ = nullptr; }

    Handle &operator=(const Handle &other) {
        if (this != &other) {
            Handle copy(other);
            swap(copy);
        }
        return *this;
    }

    Handle &operator=(Handle &&other) noexcept {
        if (this != &other) {
            reset();
            handle_ = other.handle_;
            other.handle_ = nullptr;
        }
        return *this;
    }

    // Drops the reference. Never throws; the library counts failures in release
    // paths (cucore_release_error_count()).
    ~Handle() { reset(); }

    // Takes ownership of one reference the caller owns (e.g. from a C out-parameter).
    static Derived adopt(CHandle *raw) noexcept {
        Derived result;
        static_cast<Handle &>(result).handle_ = raw;
        return result;
    }

    // Adds a reference to a C handle the caller keeps owning and wraps it.
    // Throws Error (INVALID_HANDLE) if `raw` is not a live handle.
    static Derived borrow(CHandle *raw) {
        if (raw != nullptr) detail::check(Traits::retain(raw));
        return adopt(raw);
    }

    // The C handle, still owned by this object (nullptr if empty).
    CHandle *get() const noexcept { return handle_; }

    // Gives up ownership: returns the C handle (whose reference the caller now
    // owns and must release) and leaves this object empty.
    CHandle *release() noexcept {
        CHandle *raw = handle_;
        handle_ = nullptr;
        return raw;
    }

    // Drops the reference now and leaves this object empty.
    void reset() noexcept {
        if (handle_ != nullptr) {
            (void)Traits::release(handle_);
            handle_ = nullptr;
        }
    }

    void swap(Handle &other) noexcept {
        CHandle *tmp = handle_;
        handle_ = other.handle_;
        other.handle_ = tmp;
    }

    // Whether this object holds a handle.
    explicit operator bool() const noexcept { return handle_ != nullptr; }

    // Two objects are equal when they hold the same C handle (the same library
    // object). Device refines this: same device.
    friend bool operator==(const Handle &a, const Handle &b) noexcept { return a.handle_ == b.handle_; }
    friend bool operator!=(const Handle &a, const Handle &b) noexcept { return a.handle_ != b.handle_; }

protected:
    CHandle *handle_ = nullptr;
};

template <typename Derived, typename CHandle>
inline void swap(Handle<Derived, CHandle> &a, Handle<Derived, CHandle> &b) noexcept {
    a.swap(b);
}

// ---- Library-wide queries -----------------------------------------------------

// The library's version, MAJOR * 10000 + MINOR * 100 + PATCH. Never throws.
inline std::uint32_t version() noexcept { return cucore_version(); }

// The library's version as "MAJOR.MINOR.PATCH". Never throws.
inline const char *version_string() noexcept { return cucore_version_string(); }

// The name of a status. Never throws.
inline const char *status_string(cucore_status_t status) noexcept { return cucore_status_string(status); }

// The number of live library objects of `type` (CUCORE_OBJECT_ANY: all).
// Throws Error (INVALID_ARGUMENT) for an unknown type.
inline std::size_t live_object_count(cucore_object_type_t type = CUCORE_OBJECT_ANY) {
    std::size_t count = 0;
    detail::check(cucore_live_object_count(type, &count));
    return count;
}

// How many failures happened inside release paths since the process started.
inline std::uint64_t release_error_count() {
    std::uint64_t count = 0;
    detail::check(cucore_release_error_count(&count));
    return count;
}

} // namespace cucore

#endif // CUCORE_COMMON_HPP
