#pragma once

#include "shared/core/big_endian.h"

#include <QByteArray>
#include <QByteArrayView>

#include <optional>

// Big-endian field helpers shared by the cluster frame codecs (envelopes, interest frames).
// Internal to server/pubsub: not part of the module's API.
namespace rt::pubsub::detail {

class ByteWriter
{
public:
    explicit ByteWriter(qsizetype reserve = 0) { m_bytes.reserve(reserve); }

    void u8(quint8 value) { appendBigEndian(m_bytes, value); }
    void u32(quint32 value) { appendBigEndian(m_bytes, value); }
    void u64(quint64 value) { appendBigEndian(m_bytes, value); }
    // u32 length + bytes.
    void bytes(QByteArrayView value) { appendLengthPrefixed(m_bytes, value); }

    QByteArray take() { return std::move(m_bytes); }

private:
    QByteArray m_bytes;
};

// Reads fields off untrusted bytes (shared/core's BigEndianReader), one optional per field so
// that each decoder can say which field was missing. A read past the end yields nullopt and
// leaves the reader failed: every later read yields nullopt too.
class ByteReader
{
public:
    explicit ByteReader(QByteArrayView bytes) : m_reader(bytes) { }

    std::optional<quint8> u8() { return checked(m_reader.u8()); }
    std::optional<quint32> u32() { return checked(m_reader.u32()); }
    std::optional<quint64> u64() { return checked(m_reader.u64()); }
    // u32 length + bytes; the length must fit in what remains (so a hostile length never
    // makes us allocate more than the frame holds).
    std::optional<QByteArray> bytes() { return checked(m_reader.lengthPrefixed()); }

    qsizetype remaining() const { return m_reader.failed() ? 0 : m_reader.remaining(); }
    bool atEnd() const { return m_reader.atEnd(); }

private:
    template <typename T>
    std::optional<T> checked(T value) const
    {
        if (m_reader.failed()) {
            return std::nullopt;
        }
        return value;
    }

    BigEndianReader m_reader;
};

} // namespace rt::pubsub::detail
