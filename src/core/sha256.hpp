// SHA-256 (FIPS 180-4), incremental, for program cache keys. The context is a
// plain value: a program hashes its fixed parts once and copies the state for
// each compile, so a cache lookup hashes only the target and name expressions.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace cucore::core {

class Sha256 {
  public:
    using Digest = std::array<uint8_t, 32>;
    Sha256() noexcept;
    void update(const void *data, size_t size) noexcept;
    // A length-prefixed field (8-byte little-endian size, then the bytes), so
    // that adjacent fields can never run into each other.
    void field(const void *data, size_t size) noexcept;
    void field(const std::string &text) noexcept { field(text.data(), text.size()); }
    void number(uint64_t value) noexcept;  // 8 bytes, little-endian
    Digest finish() noexcept;             // the context is spent afterwards

  private:
    void block(const uint8_t *data) noexcept;
    uint32_t state_[8];
    uint64_t length_ = 0;  // bytes absorbed
    uint8_t buffer_[64];
    size_t buffered_ = 0;
};

// Lower-case hex of bytes.
std::string to_hex(const uint8_t *bytes, size_t size);

}  // namespace cucore::core
