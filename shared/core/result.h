#pragma once

#include <QString>

#include <utility>
#include <variant>

namespace rt {

// An error with a machine-readable code and a human-readable message. Modules define their own
// code enums; this one is for places that only need to carry a message.
struct Error
{
    QString message;
};

// Either a value or an error (std::expected is not available in GCC 12). Untrusted input is
// answered with a Result, never an exception or a crash.
template <typename T, typename E = Error>
class [[nodiscard]] Result
{
public:
    // Implicit on purpose: a value or an error converts to a Result.
    Result(T value) : m_state(std::in_place_index<0>, std::move(value)) { }
    Result(E error) : m_state(std::in_place_index<1>, std::move(error)) { }

    bool ok() const { return m_state.index() == 0; }
    explicit operator bool() const { return ok(); }

    T &value() & { return std::get<0>(m_state); }
    const T &value() const & { return std::get<0>(m_state); }
    T &&value() && { return std::get<0>(std::move(m_state)); }
    const T &operator*() const & { return value(); }
    T &operator*() & { return value(); }
    const T *operator->() const { return &value(); }
    T *operator->() { return &value(); }

    const E &error() const & { return std::get<1>(m_state); }
    E &&error() && { return std::get<1>(std::move(m_state)); }

private:
    std::variant<T, E> m_state;
};

} // namespace rt
