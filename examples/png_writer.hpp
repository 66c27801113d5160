// A small PNG writer for the examples: 8-bit RGBA, no interlace, filter 0.
// Compressed with zlib's compress() when the build found zlib
// (CUCORE_EXAMPLES_HAVE_ZLIB), else stored (uncompressed) deflate blocks, so it
// needs no library at all.
#ifndef CUCORE_EXAMPLES_PNG_WRITER_HPP
#define CUCORE_EXAMPLES_PNG_WRITER_HPP

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#ifdef CUCORE_EXAMPLES_HAVE_ZLIB
#include <zlib.h>
#endif

namespace png_writer {

namespace detail {

inline std::uint32_t crc32(const std::uint8_t *data, std::size_t size, std::uint32_t crc = 0) {
    static const std::vector<std::uint32_t> table = [] {
        std::vector<std::uint32_t> t(256);
        for (std::uint32_t n = 0; n < 256; ++n) {
            std::uint32_t c = n;
            for (int k = 0; k < 8; ++k) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
            t[n] = c;
        }
        return t;
    }();
    crc = ~crc;
    for (std::size_t i = 0; i < size; ++i) crc = table[(crc ^ data[i]) & 0xFFu] ^ (crc >> 8);
    return ~crc;
}

inline void put32(std::vector<std::uint8_t> &out, std::uint32_t v) {
    out.push_back(static_cast<std::uint8_t>(v >> 24));
    out.push_back(static_cast<std::uint8_t>(v >> 16));
    out.push_back(static_cast<std::uint8_t>(v >> 8));
    out.push_back(static_cast<std::uint8_t>(v));
}

inline void chunk(std::vector<std::uint8_t> &out, const char type[4], const std::vector<std::uint8_t> &data) {
    put32(out, static_cast<std::uint32_t>(data.size()));
    const std::size_t start = out.size();
    out.insert(out.end(), type, type + 4);
    out.insert(out.end(), data.begin(), data.end());
    put32(out, crc32(out.data() + start, out.size() - start));
}

// A zlib stream of `raw`: compress() when available, else stored blocks.
inline std::vector<std::uint8_t> zlib_stream(const std::vector<std::uint8_t> &raw) {
#ifdef CUCORE_EXAMPLES_HAVE_ZLIB
    uLongf size = compressBound(static_cast<uLong>(raw.size()));
    std::vector<std::uint8_t> packed(size);
    if (compress(packed.data(), &size, raw.data(), static_cast<uLong>(raw.size())) == Z_OK) {
        packed.resize(size);
        return packed;
    }
#endif
    std::vector<std::uint8_t> out = {0x78, 0x01};  // deflate, 32 KiB window, no dictionary
    std::size_t pos = 0;
    do {
        const std::size_t len = raw.size() - pos < 65535 ? raw.size() - pos : 65535;
        const bool last = pos + len == raw.size();
        out.push_back(last ? 1 : 0);  // BFINAL, BTYPE 00 (stored)
        out.push_back(static_cast<std::uint8_t>(len));
        out.push_back(static_cast<std::uint8_t>(len >> 8));
        out.push_back(static_cast<std::uint8_t>(~len));
        out.push_back(static_cast<std::uint8_t>(~len >> 8));
        out.insert(out.end(), raw.begin() + static_cast<std::ptrdiff_t>(pos),
                   raw.begin() + static_cast<std::ptrdiff_t>(pos + len));
        pos += len;
    } while (pos < raw.size());
    std::uint32_t a = 1, b = 0;  // Adler-32
    for (std::uint8_t byte : raw) {
        a = (a + byte) % 65521u;
        b = (b + a) % 65521u;
    }
    put32(out, (b << 16) | a);
    return out;
}

} // namespace detail

// The PNG file bytes of a width x height RGBA8 image, rows top to bottom.
inline std::vector<std::uint8_t> encode_rgba(const std::uint8_t *rgba, std::uint32_t width, std::uint32_t height) {
    std::vector<std::uint8_t> raw;
    raw.reserve(static_cast<std::size_t>(height) * (1 + 4 * static_cast<std::size_t>(width)));
    for (std::uint32_t y = 0; y < height; ++y) {
        raw.push_back(0);  // filter: none
        const std::uint8_t *row = rgba + static_cast<std::size_t>(y) * width * 4;
        raw.insert(raw.end(), row, row + static_cast<std::size_t>(width) * 4);
    }
    std::vector<std::uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
    std::vector<std::uint8_t> header;
    detail::put32(header, width);
    detail::put32(header, height);
    header.insert(header.end(), {8, 6, 0, 0, 0});  // 8 bits, RGBA, deflate, filter 0, no interlace
    detail::chunk(png, "IHDR", header);
    detail::chunk(png, "IDAT", detail::zlib_stream(raw));
    detail::chunk(png, "IEND", {});
    return png;
}

// Writes the PNG to `path`; false (errno set) when the file cannot be written.
inline bool write_rgba(const std::string &path, const std::uint8_t *rgba, std::uint32_t width,
                       std::uint32_t height) {
    const std::vector<std::uint8_t> png = encode_rgba(rgba, width, height);
    std::FILE *f = std::fopen(path.c_str(), "wb");
    if (f == nullptr) return false;
    const bool ok = std::fwrite(png.data(), 1, png.size(), f) == png.size();
    return std::fclose(f) == 0 && ok;
}

} // namespace png_writer

#endif // CUCORE_EXAMPLES_PNG_WRITER_HPP
