#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QtEndian>

#include <type_traits>

// Big-endian fields for the node-link frame codecs (presence, counters, stats): writing them
// and reading them back off untrusted bytes.
namespace rt {

// Appends `value` in network byte order (a one-byte type is appended as is).
template <typename T>
requires std::is_integral_v<T>
void appendBigEndian(QByteArray &out, T value)
{
    char raw[sizeof(T)];
    qToBigEndian(value, raw);
    out.append(raw, sizeof(raw));
}

// Appends a u32 length and the bytes.
inline void appendLengthPrefixed(QByteArray &out, QByteArrayView bytes)
{
    appendBigEndian(out, static_cast<quint32>(bytes.size()));
    out.append(bytes);
}

// Reads big-endian fields off untrusted bytes. Every read checks what remains first; a read
// past the end (or fail()) makes the reader failed, and after the first failure every read
// fails and yields zero or empty, so callers check failed() once where a value steers the
// parse. Never touches memory outside the view, never allocates more than the input holds.
class BigEndianReader
{
public:
    explicit BigEndianReader(QByteArrayView data) : m_data(data) { }

    bool failed() const { return m_failed; }
    qsizetype remaining() const { return m_data.size() - m_pos; }
    bool atEnd() const { return !m_failed && m_pos == m_data.size(); }
    void fail() { m_failed = true; }

    template <typename T>
    requires std::is_integral_v<T> T read()
    {
        if (!take(sizeof(T))) {
            return 0;
        }
        return qFromBigEndian<T>(m_data.data() + m_pos - static_cast<qsizetype>(sizeof(T)));
    }
    quint8 u8() { return read<quint8>(); }
    quint16 u16() { return read<quint16>(); }
    quint32 u32() { return read<quint32>(); }
    quint64 u64() { return read<quint64>(); }

    // The next `size` bytes (a view into the input).
    QByteArrayView bytes(qsizetype size)
    {
        if (size < 0 || !take(size)) {
            m_failed = true;
            return {};
        }
        return m_data.sliced(m_pos - size, size);
    }
    // A u32 length and that many bytes (see appendLengthPrefixed); the length must fit in what
    // remains, so a forged length never makes us allocate more than the frame holds.
    QByteArray lengthPrefixed()
    {
        const quint32 size = u32();
        if (m_failed || size > static_cast<quint64>(remaining())) {
            m_failed = true;
            return {};
        }
        return bytes(static_cast<qsizetype>(size)).toByteArray();
    }

private:
    bool take(qsizetype size)
    {
        if (m_failed || size > remaining()) {
            m_failed = true;
            return false;
        }
        m_pos += size;
        return true;
    }

    QByteArrayView m_data;
    qsizetype m_pos = 0;
    bool m_failed = false;
};

} // namespace rt
