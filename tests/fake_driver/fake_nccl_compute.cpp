// The substitute NCCL's arithmetic (fake_nccl.hpp has the model): a matched
// operation's inputs read through the driver (or directly, for postings of a
// replayed capture), reduced or gathered on the host, written back.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "fake_nccl_state.hpp"

namespace fake::nccl::detail {
namespace {

// A small float format: its exponent and mantissa bits, bias, and whether the
// all-ones exponent is infinity / NaN (IEEE) or, as in e4m3, only S.1111.111 is NaN.
struct Format {
    int exponent_bits, mantissa_bits, bias;
    bool ieee;
};
constexpr Format kHalf{5, 10, 15, true}, kE4M3{4, 3, 7, false}, kE5M2{5, 2, 15, true};

float decode(unsigned bits, Format f) {
    const unsigned mantissa_mask = (1u << f.mantissa_bits) - 1, exponent_max = (1u << f.exponent_bits) - 1;
    const bool negative = (bits >> (f.exponent_bits + f.mantissa_bits)) & 1u;
    const unsigned e = (bits >> f.mantissa_bits) & exponent_max, m = bits & mantissa_mask;
    double v;
    if (f.ieee && e == exponent_max)
        v = m ? NAN : INFINITY;
    else if (!f.ieee && e == exponent_max && m == mantissa_mask)
        v = NAN;
    else if (e == 0)
        v = std::ldexp(static_cast<double>(m), 1 - f.bias - f.mantissa_bits);
    else
        v = std::ldexp(static_cast<double>(m | (1u << f.mantissa_bits)), static_cast<int>(e) - f.bias - f.mantissa_bits);
    return static_cast<float>(negative ? -v : v);
}

// Rounds to nearest even; too large: infinity (IEEE) or NaN (e4m3).
unsigned encode(float x, Format f) {
    const unsigned sign = std::signbit(x) ? 1u << (f.exponent_bits + f.mantissa_bits) : 0u;
    const unsigned exponent_max = (1u << f.exponent_bits) - 1, mantissa_mask = (1u << f.mantissa_bits) - 1;
    const unsigned nan = (exponent_max << f.mantissa_bits) | mantissa_mask;
    const unsigned infinity = f.ieee ? exponent_max << f.mantissa_bits : nan;
    const unsigned largest = f.ieee ? ((exponent_max - 1) << f.mantissa_bits) | mantissa_mask
                                    : (exponent_max << f.mantissa_bits) | (mantissa_mask - 1);
    if (std::isnan(x)) return sign | nan;
    const double a = std::fabs(static_cast<double>(x));
    if (std::isinf(a)) return sign | infinity;
    if (a == 0) return sign;
    int e;
    std::frexp(a, &e);
    e -= 1;  // a in [2^e, 2^(e+1))
    if (e < 1 - f.bias) e = 1 - f.bias;  // subnormal: steps of 2^(1 - bias - M)
    // q in [2^M, 2^(M+1)] for a normal (2^(M+1): rounding carried), [0, 2^M] for a subnormal; either way
    // the bits are ((e + bias - 1) << M) + q.
    const double q = std::nearbyint(std::ldexp(a, f.mantissa_bits - e));
    const double bits = std::ldexp(static_cast<double>(e + f.bias - 1), f.mantissa_bits) + q;
    return bits > largest ? sign | infinity : sign | static_cast<unsigned>(bits);
}

float bf16_decode(unsigned bits) {
    const uint32_t u = bits << 16;
    float v;
    std::memcpy(&v, &u, sizeof v);
    return v;
}
unsigned bf16_encode(float x) {
    uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    if (std::isnan(x)) return (u >> 16) | 0x40u;
    u += 0x7FFFu + ((u >> 16) & 1u);
    return u >> 16;
}

// Element codecs: a type's bytes as the value computed with.
template <class T>
struct Native {
    using Value = T;
    static constexpr size_t size = sizeof(T);
    static Value load(const unsigned char *p) {
        T v;
        std::memcpy(&v, p, sizeof v);
        return v;
    }
    static void store(unsigned char *p, Value v) { std::memcpy(p, &v, sizeof v); }
    static Value round(Value v) { return v; }
};
template <size_t Size, unsigned (*Encode)(float), float (*Decode)(unsigned)>
struct Small {
    using Value = float;
    static constexpr size_t size = Size;
    static Value load(const unsigned char *p) {
        unsigned bits = 0;
        std::memcpy(&bits, p, Size);  // little-endian
        return Decode(bits);
    }
    static void store(unsigned char *p, Value v) {
        const unsigned bits = Encode(v);
        std::memcpy(p, &bits, Size);
    }
    static Value round(Value v) { return Decode(Encode(v)); }
};
unsigned half_encode(float x) { return encode(x, kHalf); }
float half_decode(unsigned b) { return decode(b, kHalf); }
unsigned e4m3_encode(float x) { return encode(x, kE4M3); }
float e4m3_decode(unsigned b) { return decode(b, kE4M3); }
unsigned e5m2_encode(float x) { return encode(x, kE5M2); }
float e5m2_decode(unsigned b) { return decode(b, kE5M2); }

template <class V>
V apply(V a, V b, n::RedOp op) {
    if constexpr (std::is_integral_v<V>) {
        using U = std::make_unsigned_t<V>;  // wraps, as the device does
        switch (op) {
            case n::kProd: return static_cast<V>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
            case n::kMax: return a < b ? b : a;
            case n::kMin: return b < a ? b : a;
            default: return static_cast<V>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
        }
    } else {
        switch (op) {
            case n::kProd: return a * b;
            case n::kMax: return a < b ? b : a;
            case n::kMin: return b < a ? b : a;
            default: return a + b;
        }
    }
}

// out[i] = op over ranks of in[r][i], in rank order.
template <class C>
void reduce_as(const std::vector<const unsigned char *> &in, unsigned char *out, size_t elements, n::RedOp op) {
    using V = typename C::Value;
    const size_t ranks = in.size();
    const n::RedOp step = op == n::kAvg ? n::kSum : op;
    for (size_t i = 0; i < elements; ++i) {
        V acc{};
        for (size_t r = 0; r < ranks; ++r) {
            V x = C::load(in[r] + i * C::size);
            if constexpr (!std::is_integral_v<V>)
                if (op == n::kAvg) x = C::round(x * (V(1) / static_cast<V>(ranks)));  // NCCL's pre-multiplied sum
            acc = r == 0 ? x : C::round(apply(acc, x, step));
        }
        if constexpr (std::is_integral_v<V>)
            if (op == n::kAvg) acc = static_cast<V>(acc / static_cast<V>(ranks));
        C::store(out + i * C::size, acc);
    }
}

void reduce(const std::vector<const unsigned char *> &in, unsigned char *out, size_t elements, n::DataType type,
            n::RedOp op) {
    switch (type) {
        case n::kInt8: return reduce_as<Native<int8_t>>(in, out, elements, op);
        case n::kUint8: return reduce_as<Native<uint8_t>>(in, out, elements, op);
        case n::kInt32: return reduce_as<Native<int32_t>>(in, out, elements, op);
        case n::kUint32: return reduce_as<Native<uint32_t>>(in, out, elements, op);
        case n::kInt64: return reduce_as<Native<int64_t>>(in, out, elements, op);
        case n::kUint64: return reduce_as<Native<uint64_t>>(in, out, elements, op);
        case n::kFloat16: return reduce_as<Small<2, half_encode, half_decode>>(in, out, elements, op);
        case n::kFloat32: return reduce_as<Native<float>>(in, out, elements, op);
        case n::kFloat64: return reduce_as<Native<double>>(in, out, elements, op);
        case n::kBfloat16: return reduce_as<Small<2, bf16_encode, bf16_decode>>(in, out, elements, op);
        case n::kFloat8e4m3: return reduce_as<Small<1, e4m3_encode, e4m3_decode>>(in, out, elements, op);
        default: return reduce_as<Small<1, e5m2_encode, e5m2_decode>>(in, out, elements, op);
    }
}

bool builtin(CUstream s) { return s == nullptr || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD; }

// One driver copy in `p`'s stream order (or a direct one), binding `p`'s context for a built-in stream.
CUresult copy(const Posting &p, void *dst, const void *src, size_t bytes) {
    if (bytes == 0) return CUDA_SUCCESS;
    const Driver &d = state().driver;
    if (p.replayed || !d.cuMemcpyAsync) {
        std::memmove(dst, src, bytes);
        return CUDA_SUCCESS;
    }
    const bool bind = builtin(p.stream) && d.cuCtxGetCurrent && d.cuCtxSetCurrent;
    CUcontext saved = nullptr;
    if (bind) {
        d.cuCtxGetCurrent(&saved);
        d.cuCtxSetCurrent(p.context);
    }
    const CUresult r = d.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src), bytes,
                                       p.stream);
    if (bind) d.cuCtxSetCurrent(saved);
    return r;
}

std::string rank_text(const Posting &p) { return "rank " + std::to_string(p.comm->rank); }

// Why the postings of a collective cannot be one operation ("" if they can).
std::string mismatch(const Job &job) {
    const Posting &a = job.parts.front();
    for (const Posting &b : job.parts) {
        std::string what;
        if (b.kind != a.kind)
            what = std::string("a ") + kind_name(b.kind) + " matched a " + kind_name(a.kind);
        else if (b.count != a.count)
            what = "count " + std::to_string(b.count) + " matched count " + std::to_string(a.count);
        else if (b.type != a.type)
            what = "type " + std::to_string(b.type) + " matched type " + std::to_string(a.type);
        else if (b.op != a.op && a.kind != Kind::all_gather && a.kind != Kind::broadcast)
            what = "op " + std::to_string(b.op) + " matched op " + std::to_string(a.op);
        else if (b.root != a.root && (a.kind == Kind::broadcast || a.kind == Kind::reduce))
            what = "root " + std::to_string(b.root) + " matched root " + std::to_string(a.root);
        if (!what.empty()) return std::string(kind_name(a.kind)) + " of " + rank_text(b) + ": " + what + " of rank 0";
    }
    return "";
}

}  // namespace

size_t type_size(n::DataType type) {
    switch (type) {
        case n::kInt8:
        case n::kUint8:
        case n::kFloat8e4m3:
        case n::kFloat8e5m2: return 1;
        case n::kFloat16:
        case n::kBfloat16: return 2;
        case n::kInt32:
        case n::kUint32:
        case n::kFloat32: return 4;
        case n::kInt64:
        case n::kUint64:
        case n::kFloat64: return 8;
        default: return 0;
    }
}

void compute(Job &job) {
    const Posting &first = job.parts.front();
    const size_t element = type_size(first.type);
    if (first.kind == Kind::send) {
        const Posting &s = job.parts[0], &r = job.parts[1];
        if (s.count * element != r.count * type_size(r.type)) {
            fault(job, n::kInvalidUsage,
                  "a send of " + std::to_string(s.count * element) + " bytes from " + rank_text(s) +
                      " matched a receive of " + std::to_string(r.count * type_size(r.type)) + " bytes on " +
                      rank_text(r));
            return;
        }
        std::vector<unsigned char> data(s.count * element);
        if (copy(s, data.data(), s.send, data.size()) != CUDA_SUCCESS ||
            copy(r, r.recv, data.data(), data.size()) != CUDA_SUCCESS) {
            fault(job, n::kUnhandledCudaError, "a copy of a send from " + rank_text(s) + " to " + rank_text(r) +
                                                    " failed (memory freed or too small?)");
            return;
        }
    } else {
        if (const std::string why = mismatch(job); !why.empty()) {
            fault(job, n::kInvalidUsage, why);
            return;
        }
        const size_t ranks = job.parts.size(), count = first.count, bytes = count * element;
        // Inputs: what each rank sends (only the root's for a broadcast).
        std::vector<std::vector<unsigned char>> inputs(ranks);
        const size_t input_bytes = first.kind == Kind::reduce_scatter ? bytes * ranks : bytes;
        bool ok = true;
        for (size_t r = 0; r < ranks && ok; ++r) {
            const Posting &p = job.parts[r];
            if (first.kind == Kind::broadcast && p.comm->rank != first.root) continue;
            inputs[r].resize(input_bytes);
            ok = copy(p, inputs[r].data(), p.send, input_bytes) == CUDA_SUCCESS;
        }
        // Outputs: what each rank receives (only the root's for a reduce).
        std::vector<unsigned char> result;
        std::vector<const unsigned char *> in;
        for (const auto &input : inputs) in.push_back(input.data());
        switch (first.kind) {
            case Kind::all_reduce:
            case Kind::reduce:
                result.resize(bytes);
                reduce(in, result.data(), count, first.type, first.op);
                break;
            case Kind::reduce_scatter:
                result.resize(bytes * ranks);
                reduce(in, result.data(), count * ranks, first.type, first.op);
                break;
            case Kind::all_gather:
                for (const auto &input : inputs) result.insert(result.end(), input.begin(), input.end());
                break;
            default: result = inputs[static_cast<size_t>(first.root)]; break;
        }
        for (size_t r = 0; r < ranks && ok; ++r) {
            const Posting &p = job.parts[r];
            if (first.kind == Kind::reduce && p.comm->rank != first.root) continue;
            const unsigned char *out = result.data();
            size_t out_bytes = result.size();
            if (first.kind == Kind::reduce_scatter) {
                out += r * bytes;
                out_bytes = bytes;
            }
            ok = copy(p, p.recv, out, out_bytes) == CUDA_SUCCESS;
        }
        if (!ok) {
            fault(job, n::kUnhandledCudaError,
                  std::string("a copy of a ") + kind_name(first.kind) + " failed (memory freed or too small?)");
            return;
        }
    }
    Lock lock(state().mutex);
    ++state().completed;
}

}  // namespace fake::nccl::detail
