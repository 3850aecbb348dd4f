#pragma once

#include <QByteArray>

#include <limits>
#include <memory>

// The subset of Elixir's Inspect.Algebra that elixir_inspect needs to lay terms out as Elixir
// prints them: text, concat, nest (always), break (strict or flex), group (normal), and the
// pretty printer's fits?/format. Internal to server/subscriptions; pure, any thread.
namespace rt::subscriptions::algebra {

struct Doc;
using DocPtr = std::shared_ptr<const Doc>;

struct Doc
{
    enum class Type { Text, Cons, Nest, Break, Group } type = Type::Text;
    QByteArray text; // Text: the bytes; Break: the flat string
    bool flex = false; // Break
    int indent = 0; // Nest
    DocPtr left; // Cons left, Nest/Group child
    DocPtr right; // Cons right
};

inline constexpr qint64 Infinite = std::numeric_limits<qint64>::max();

DocPtr text(const QByteArray &bytes);
DocPtr concat(DocPtr a, DocPtr b);
DocPtr concat3(DocPtr a, DocPtr b, DocPtr c);
DocPtr nest(DocPtr child, int indent);
DocPtr lineBreak(const QByteArray &flat, bool flex);
DocPtr group(DocPtr child);
// glue(a, s, b) / flex_glue(a, s, b)
DocPtr glue(DocPtr a, const QByteArray &s, DocPtr b, bool flex);
// Container_doc's "simple?" test: only texts (and concatenations of texts).
bool isSimple(const DocPtr &doc);
// The document laid out in `width` columns (Infinite: on one line).
QByteArray format(const DocPtr &root, qint64 width);

} // namespace rt::subscriptions::algebra
