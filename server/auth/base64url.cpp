#include "server/auth/base64url.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace rt::auth {

namespace {

constexpr std::int8_t Invalid = -1;

constexpr std::array<std::int8_t, 256> makeDecodeTable()
{
    std::array<std::int8_t, 256> table{};
    table.fill(Invalid);
    constexpr std::string_view Alphabet =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    for (std::size_t i = 0; i < Alphabet.size(); ++i) {
        table[static_cast<unsigned char>(Alphabet[i])] = static_cast<std::int8_t>(i);
    }
    return table;
}

constexpr std::array<std::int8_t, 256> DecodeTable = makeDecodeTable();

} // namespace

std::optional<QByteArray> decodeBase64Url(QByteArrayView text)
{
    qsizetype length = text.size();
    // Strip correct padding only: "xx==" or "xxx=" in the final quartet.
    if (length > 0 && text.at(length - 1) == '=') {
        if (length % 4 != 0) {
            return std::nullopt;
        }
        --length;
        if (text.at(length - 1) == '=') {
            --length;
        }
    }
    if (length % 4 == 1) {
        return std::nullopt;
    }

    QByteArray out;
    out.reserve(length / 4 * 3 + 2);
    std::uint32_t buffer = 0;
    int bits = 0;
    for (qsizetype i = 0; i < length; ++i) {
        const std::int8_t value = DecodeTable[static_cast<unsigned char>(text.at(i))];
        if (value == Invalid) {
            return std::nullopt;
        }
        buffer = (buffer << 6) | static_cast<std::uint32_t>(value);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out.append(static_cast<char>((buffer >> bits) & 0xFFu));
        }
    }
    return out;
}

QByteArray encodeBase64Url(QByteArrayView bytes)
{
    return bytes.toByteArray().toBase64(QByteArray::Base64UrlEncoding
                                        | QByteArray::OmitTrailingEquals);
}

} // namespace rt::auth
