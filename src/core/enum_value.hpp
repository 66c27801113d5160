// Reading an enum that came from outside the library (a C argument, a field of
// a caller's struct, a DLPack tensor) without undefined behaviour.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace cucore::core {

// The int32_t an enum argument or field holds, read from its bytes. C lets a
// caller pass any value of the enum's integer type (a negative one too), but
// C++ gives an enum without a fixed type only the values of its enumerators'
// bit width (0 .. 2^31-1 for cucore's, which all have a FORCE_INT32 member), so
// reading such a value as the enum is undefined behaviour (UBSan aborts).
// Every enum from outside is read through this, by reference, before anything
// compares or switches on it, and converted back only once known to be valid.
template <class Enum>
inline int32_t enum_value(const Enum &value) noexcept {
    static_assert(std::is_enum_v<Enum> && sizeof(Enum) == sizeof(int32_t), "a C enum of fixed size");
    int32_t raw;
    std::memcpy(&raw, &value, sizeof raw);
    return raw;
}

}  // namespace cucore::core
