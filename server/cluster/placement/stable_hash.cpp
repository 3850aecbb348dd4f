#include "server/cluster/placement/stable_hash.h"

#include <QByteArray>

namespace rt::cluster::placement {

namespace {

constexpr std::uint64_t FnvPrime = 0x100000001b3ULL;

} // namespace

std::uint64_t fnv1a64(QByteArrayView bytes, std::uint64_t state)
{
    for (const char c : bytes) {
        state ^= static_cast<std::uint8_t>(c);
        state *= FnvPrime;
    }
    return state;
}

std::uint64_t fnv1a64(QStringView text, std::uint64_t state)
{
    return fnv1a64(QByteArrayView(text.toUtf8()), state);
}

std::uint64_t fnv1a64(std::uint64_t value, std::uint64_t state)
{
    for (int i = 0; i < 8; ++i) {
        state ^= (value >> (8 * i)) & 0xffU;
        state *= FnvPrime;
    }
    return state;
}

std::uint64_t SplitMix64::next()
{
    m_state += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = m_state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

std::uint32_t SplitMix64::below(std::uint32_t bound)
{
    if (bound == 0) {
        return 0;
    }
    // The high 32 bits of (random32 * bound) are uniform enough over [0, bound).
    const std::uint64_t random32 = next() >> 32;
    return static_cast<std::uint32_t>((random32 * bound) >> 32);
}

} // namespace rt::cluster::placement
