#include "core/ipc_descriptor.hpp"

#include <cstring>
#include <string>

#include "core/error.hpp"

namespace cucore::core::ipc {

namespace {

constexpr char kBufferMagic[8] = {'C', 'U', 'C', 'O', 'R', 'E', 'I', 'B'};
constexpr uint32_t kBufferVersion = 1;
constexpr size_t kKindOffset = 12, kPoolIdOffset = 16, kSizeOffset = 32, kDataOffset = 40, kReservedOffset = 104,
                 kBufferChecksumOffset = 120;
static_assert(kDataOffset + 64 == kReservedOffset && kBufferChecksumOffset + 8 == CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE,
              "the buffer descriptor fields fill it exactly");

constexpr char kEventMagic[3] = {'C', 'U', 'E'};
constexpr uint8_t kEventVersion = 1;
constexpr size_t kHandleOffset = 4, kEventChecksumOffset = 68;
static_assert(kEventChecksumOffset + 4 == CUCORE_IPC_EVENT_DESCRIPTOR_SIZE, "the event descriptor fields fill it");

uint64_t fnv1a64(const uint8_t *bytes, size_t size) noexcept {
    uint64_t hash = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 0x100000001b3ull;
    return hash;
}

uint32_t fnv1a32(const uint8_t *bytes, size_t size) noexcept {
    uint32_t hash = 0x811c9dc5u;
    for (size_t i = 0; i < size; ++i) hash = (hash ^ bytes[i]) * 0x01000193u;
    return hash;
}

// Little-endian, whatever the host: a descriptor may be stored or logged.
template <class T>
void put(uint8_t *at, T value) noexcept {
    for (size_t i = 0; i < sizeof(T); ++i) at[i] = static_cast<uint8_t>(static_cast<uint64_t>(value) >> (8 * i));
}
template <class T>
T get(const uint8_t *at) noexcept {
    uint64_t value = 0;
    for (size_t i = 0; i < sizeof(T); ++i) value |= static_cast<uint64_t>(at[i]) << (8 * i);
    return static_cast<T>(value);
}

void check_size(const uint8_t *bytes, uint64_t size, uint64_t expected, const char *what) {
    if (!bytes) throw_invalid_argument("argument 'descriptor' is NULL");
    if (size < expected)
        throw_invalid_argument(std::string("argument 'descriptor' is truncated: ") + std::to_string(size) +
                               " bytes, but " + what + " has " + std::to_string(expected));
    if (size > expected)
        throw_invalid_argument(std::string("argument 'descriptor' has ") + std::to_string(size) + " bytes, but " +
                               what + " has exactly " + std::to_string(expected));
}

[[noreturn]] void corrupted(const char *what, const std::string &why) {
    throw_invalid_argument(std::string("argument 'descriptor' is a corrupted ") + what + " (" + why + ")");
}

}  // namespace

std::string hex(const PoolId &id) {
    static const char digits[] = "0123456789abcdef";
    std::string text;
    for (uint8_t byte : id) {
        text += digits[byte >> 4];
        text += digits[byte & 15];
    }
    return text;
}

BufferDescriptor encode_buffer(const BufferExport &exported) noexcept {
    BufferDescriptor d{};
    std::memcpy(d.data(), kBufferMagic, sizeof kBufferMagic);
    put<uint32_t>(d.data() + 8, kBufferVersion);
    put<uint32_t>(d.data() + kKindOffset, static_cast<uint32_t>(exported.kind));
    std::memcpy(d.data() + kPoolIdOffset, exported.pool_id.data(), exported.pool_id.size());
    put<uint64_t>(d.data() + kSizeOffset, exported.size);
    std::memcpy(d.data() + kDataOffset, exported.data.data(), exported.data.size());
    put<uint64_t>(d.data() + kBufferChecksumOffset, fnv1a64(d.data(), kBufferChecksumOffset));
    return d;
}

BufferExport decode_buffer(const uint8_t *bytes, uint64_t size) {
    check_size(bytes, size, CUCORE_IPC_BUFFER_DESCRIPTOR_SIZE, "a buffer descriptor");
    if (std::memcmp(bytes, kBufferMagic, sizeof kBufferMagic) != 0)
        throw_invalid_argument("argument 'descriptor' is not a libcucore buffer descriptor (bad magic)");
    const uint32_t version = get<uint32_t>(bytes + 8);
    if (version != kBufferVersion)
        throw_invalid_argument("argument 'descriptor' has format version " + std::to_string(version) +
                               "; this libcucore reads version " + std::to_string(kBufferVersion));
    if (get<uint64_t>(bytes + kBufferChecksumOffset) != fnv1a64(bytes, kBufferChecksumOffset))
        corrupted("buffer descriptor", "checksum mismatch");
    BufferExport exported;
    // Compared as the integer it is on the wire: only a known kind becomes the enum.
    const uint32_t kind = get<uint32_t>(bytes + kKindOffset);
    if (kind != CUCORE_MEMORY_RESOURCE_DEVICE && kind != CUCORE_MEMORY_RESOURCE_PINNED)
        corrupted("buffer descriptor", "unknown pool kind " + std::to_string(kind));
    exported.kind = static_cast<cucore_memory_resource_kind_t>(kind);
    for (size_t i = kReservedOffset; i < kBufferChecksumOffset; ++i)
        if (bytes[i] != 0) corrupted("buffer descriptor", "reserved bytes are not zero");
    std::memcpy(exported.pool_id.data(), bytes + kPoolIdOffset, exported.pool_id.size());
    exported.size = get<uint64_t>(bytes + kSizeOffset);
    if (exported.size == 0) corrupted("buffer descriptor", "size 0");
    std::memcpy(exported.data.data(), bytes + kDataOffset, exported.data.size());
    return exported;
}

EventDescriptor encode_event(const CUipcEventHandle &handle) noexcept {
    EventDescriptor d{};
    std::memcpy(d.data(), kEventMagic, sizeof kEventMagic);
    d[3] = kEventVersion;
    std::memcpy(d.data() + kHandleOffset, &handle, sizeof handle);
    put<uint32_t>(d.data() + kEventChecksumOffset, fnv1a32(d.data(), kEventChecksumOffset));
    return d;
}

CUipcEventHandle decode_event(const uint8_t *bytes, uint64_t size) {
    check_size(bytes, size, CUCORE_IPC_EVENT_DESCRIPTOR_SIZE, "an event descriptor");
    if (std::memcmp(bytes, kEventMagic, sizeof kEventMagic) != 0)
        throw_invalid_argument("argument 'descriptor' is not a libcucore event descriptor (bad magic)");
    if (bytes[3] != kEventVersion)
        throw_invalid_argument("argument 'descriptor' has format version " + std::to_string(bytes[3]) +
                               "; this libcucore reads version " + std::to_string(kEventVersion));
    if (get<uint32_t>(bytes + kEventChecksumOffset) != fnv1a32(bytes, kEventChecksumOffset))
        corrupted("event descriptor", "checksum mismatch");
    CUipcEventHandle handle;
    std::memcpy(&handle, bytes + kHandleOffset, sizeof handle);
    return handle;
}

}  // namespace cucore::core::ipc
