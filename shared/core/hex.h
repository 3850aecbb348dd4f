#pragma once

// Hexadecimal digits, for the decoders that meet them (percent-encoding, chunk sizes) and the
// encoders that write them. Pure; any thread.
namespace rt {

// The value of a hexadecimal digit ('0'-'9', 'a'-'f', 'A'-'F'); -1 for any other byte.
constexpr int hexDigitValue(char c)
{
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

// The upper-case digit of the low four bits of `value`.
constexpr char upperHexDigit(int value)
{
    return "0123456789ABCDEF"[value & 0xF];
}

} // namespace rt
