#pragma once

#include <QByteArrayView>
#include <QStringView>

#include <cstdint>

namespace rt::cluster::placement {

// Hashes and a small RNG whose results are the same in every process, on every machine and in
// every build: placement decisions made independently by several nodes must agree, so nothing
// here may depend on a per-process seed (qHash's is randomised) or on the platform's byte order.

// 64-bit FNV-1a over raw bytes, continuing from `state` (start with FnvOffsetBasis).
constexpr std::uint64_t FnvOffsetBasis = 0xcbf29ce484222325ULL;
std::uint64_t fnv1a64(QByteArrayView bytes, std::uint64_t state = FnvOffsetBasis);

// FNV-1a over the UTF-8 encoding of `text` (the encoding is fixed, so the hash of a tenant id is
// the same wherever it is computed).
std::uint64_t fnv1a64(QStringView text, std::uint64_t state = FnvOffsetBasis);

// FNV-1a over the 8 bytes of `value`, little-endian whatever the host order.
std::uint64_t fnv1a64(std::uint64_t value, std::uint64_t state);

// SplitMix64 (Steele, Lea, Flood 2014): a tiny, well-mixed generator. Two generators seeded with
// the same value yield the same sequence everywhere.
class SplitMix64
{
public:
    explicit SplitMix64(std::uint64_t seed) : m_state(seed) { }
    std::uint64_t next();
    // Uniform in [0, bound) for bound >= 1 (multiply-shift; the bias is below 2^-32 for the
    // node counts placement sees). Returns 0 for bound == 0.
    std::uint32_t below(std::uint32_t bound);

private:
    std::uint64_t m_state;
};

} // namespace rt::cluster::placement
