"""Where the comments, string literals and char literals of Rust source are:
shared by scripts/check-floors.py and scripts/check-names.py (imported from
the scripts' own folder). Python 3 standard library only.
"""

import re


def spans(text):
    """Yield (kind, start, end, body) for each comment ("comment": line,
    block with nesting, doc), string literal ("string": plain, raw `r#"…"#`,
    byte `b"…"`, `br"…"`; body = what lies between the quotes, escapes as
    written) and char literal ("char": 'a', '\\n', '\\u{1F}'; not a lifetime
    such as 'a), in order; body is "" but for strings."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            yield "comment", i, j, ""
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            yield "comment", i, j, ""
            i = j
        elif c in "rb" and re.match(r'(?:br|r|b)#*"', text[i:i + 10]) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'(br|r|b)(#*)"', text[i:])
            start = i + len(m.group(0))
            if "r" in m.group(1):
                close = '"' + m.group(2)
                j = text.find(close, start)
                j = n if j < 0 else j
                yield "string", i, min(n, j + len(close)), text[start:j]
                i = j + len(close)
            else:
                j = start
                while j < n and text[j] != '"':
                    j += 2 if text[j] == "\\" else 1
                yield "string", i, min(n, j + 1), text[start:j]
                i = j + 1
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            yield "string", i, min(n, j + 1), text[i + 1:j]
            i = j + 1
        elif c == "'":
            m = re.match(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'", text[i:])
            if m:
                yield "char", i, i + len(m.group(0)), ""
                i += len(m.group(0))
            else:
                i += 1  # a lifetime
        else:
            i += 1


def blank(text, kinds=("comment", "string", "char")):
    """`text` with the spans of `kinds` blanked out (newlines kept)."""
    out, last = [], 0
    for kind, start, end, _ in spans(text):
        if kind in kinds:
            out.append(text[last:start])
            out.append(re.sub(r"[^\n]", " ", text[start:end]))
            last = end
    out.append(text[last:])
    return "".join(out)


def closing_brace(text, i):
    """Index of the `}` that closes the `{` at `text[i]` (in text whose
    comments and strings are blanked), or len(text) when it never closes."""
    depth, j = 0, i
    while j < len(text):
        if text[j] == "{":
            depth += 1
        elif text[j] == "}":
            depth -= 1
            if depth == 0:
                return j
        j += 1
    return len(text)
