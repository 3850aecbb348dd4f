#include "server/subscriptions/inspect_algebra.h"

#include <vector>

namespace rt::subscriptions::algebra {

DocPtr text(const QByteArray &bytes)
{
    auto doc = std::make_shared<Doc>();
    doc->type = Doc::Type::Text;
    doc->text = bytes;
    return doc;
}

DocPtr concat(DocPtr a, DocPtr b)
{
    auto doc = std::make_shared<Doc>();
    doc->type = Doc::Type::Cons;
    doc->left = std::move(a);
    doc->right = std::move(b);
    return doc;
}

DocPtr concat3(DocPtr a, DocPtr b, DocPtr c)
{
    return concat(concat(std::move(a), std::move(b)), std::move(c));
}

DocPtr nest(DocPtr child, int indent)
{
    auto doc = std::make_shared<Doc>();
    doc->type = Doc::Type::Nest;
    doc->indent = indent;
    doc->left = std::move(child);
    return doc;
}

DocPtr lineBreak(const QByteArray &flat, bool flex)
{
    auto doc = std::make_shared<Doc>();
    doc->type = Doc::Type::Break;
    doc->text = flat;
    doc->flex = flex;
    return doc;
}

DocPtr group(DocPtr child)
{
    auto doc = std::make_shared<Doc>();
    doc->type = Doc::Type::Group;
    doc->left = std::move(child);
    return doc;
}

DocPtr glue(DocPtr a, const QByteArray &s, DocPtr b, bool flex)
{
    return concat3(std::move(a), lineBreak(s, flex), std::move(b));
}

bool isSimple(const DocPtr &doc)
{
    switch (doc->type) {
    case Doc::Type::Text:
        return true;
    case Doc::Type::Cons:
        return isSimple(doc->left) && isSimple(doc->right);
    default:
        return false;
    }
}

namespace {

enum class Mode { Flat, Break };

struct Entry
{
    enum class Kind { Doc, GroupOver, Tail } kind = Kind::Doc;
    int indent = 0;
    Mode mode = Mode::Flat;
    const Doc *doc = nullptr;
    bool savedBreak = false; // Tail
};

// Inspect.Algebra.fits?/4 for the subset above. `entries` is consumed from the back.
bool fits(qint64 width, qint64 column, bool broke, std::vector<Entry> entries)
{
    while (true) {
        if (column > width && broke) {
            return false;
        }
        if (entries.empty()) {
            return true;
        }
        const Entry entry = entries.back();
        entries.pop_back();
        switch (entry.kind) {
        case Entry::Kind::Tail:
            broke = entry.savedBreak;
            continue;
        case Entry::Kind::GroupOver:
            return broke;
        case Entry::Kind::Doc:
            break;
        }
        const Doc *doc = entry.doc;
        switch (doc->type) {
        case Doc::Type::Text:
            column += doc->text.size();
            break;
        case Doc::Type::Break:
            if (entry.mode == Mode::Break) {
                return true;
            }
            column += doc->text.size();
            broke = true;
            break;
        case Doc::Type::Group:
            entries.push_back({ Entry::Kind::Tail, 0, Mode::Flat, nullptr, broke });
            entries.push_back(
                    { Entry::Kind::Doc, entry.indent, Mode::Flat, doc->left.get(), false });
            break;
        case Doc::Type::Nest:
            entries.push_back({ Entry::Kind::Doc, entry.indent + doc->indent, entry.mode,
                                doc->left.get(), false });
            break;
        case Doc::Type::Cons:
            entries.push_back(
                    { Entry::Kind::Doc, entry.indent, entry.mode, doc->right.get(), false });
            entries.push_back(
                    { Entry::Kind::Doc, entry.indent, entry.mode, doc->left.get(), false });
            break;
        }
    }
}

// Inspect.Algebra.format/2.

} // namespace

QByteArray format(const DocPtr &root, qint64 width)
{
    QByteArray out;
    qint64 column = 0;
    std::vector<Entry> stack;
    stack.push_back({ Entry::Kind::Doc, 0, Mode::Flat, root.get(), false });
    const auto newline = [&](int indent) {
        out.append('\n');
        out.append(QByteArray(indent, ' '));
        column = indent;
    };
    while (!stack.empty()) {
        const Entry entry = stack.back();
        stack.pop_back();
        if (entry.kind != Entry::Kind::Doc) {
            continue; // group_over markers
        }
        const Doc *doc = entry.doc;
        switch (doc->type) {
        case Doc::Type::Text:
            out.append(doc->text);
            column += doc->text.size();
            break;
        case Doc::Type::Cons:
            stack.push_back(
                    { Entry::Kind::Doc, entry.indent, entry.mode, doc->right.get(), false });
            stack.push_back({ Entry::Kind::Doc, entry.indent, entry.mode, doc->left.get(), false });
            break;
        case Doc::Type::Nest:
            stack.push_back({ Entry::Kind::Doc, entry.indent + doc->indent, entry.mode,
                              doc->left.get(), false });
            break;
        case Doc::Type::Break:
            if (doc->flex) {
                column += doc->text.size();
                if (width == Infinite || entry.mode == Mode::Flat
                    || fits(width, column, true, stack)) {
                    out.append(doc->text);
                } else {
                    newline(entry.indent);
                }
            } else if (entry.mode == Mode::Break) {
                newline(entry.indent);
            } else {
                out.append(doc->text);
                column += doc->text.size();
            }
            break;
        case Doc::Type::Group: {
            const bool flat = width == Infinite
                    || fits(width, column, false,
                            { { Entry::Kind::Doc, entry.indent, Mode::Flat, doc->left.get(),
                                false } });
            stack.push_back({ Entry::Kind::GroupOver, 0, Mode::Flat, nullptr, false });
            stack.push_back({ Entry::Kind::Doc, entry.indent, flat ? Mode::Flat : Mode::Break,
                              doc->left.get(), false });
            break;
        }
        }
    }
    return out;
}

} // namespace rt::subscriptions::algebra
