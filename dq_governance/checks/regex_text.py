"""Java regex text that matches the same strings faster: ASCII ranges in bracket classes spelled out.

Java's `Pattern` compiles each single character of a bracket class below 256 into one bitmap, but each range
(`A-Z`) into a predicate of its own, joined to the others by a chain of lambdas that it calls for every
character it tests. `[A-Za-z0-9._%+\\-]` is four calls deep per character; spelled out, it is one bitmap lookup.
On 2M e-mail addresses, the check engine's e-mail pattern took 0.77 s spelled with ranges and 0.40 s spelled
out (a count of `NOT RLIKE` over cached rows, less the count alone).

A range `x-y` is, by Java's definition, the union of the single characters x to y, so spelling it out matches
the same strings. The rewrite is done only where that is plain to see: a class made of ASCII letters, digits,
punctuation, ranges between two letters or digits, escaped punctuation, and a `-` first or last, in a pattern
with no inline flags, no `\\Q` quoting and no `\\c` control character. Anything else (nested classes, `&&`,
`\\d`, `\\p{..}`, a `-` that is neither a range nor first or last, `(?i)`) leaves the pattern exactly as it was
written.
"""

from __future__ import annotations

import re

from pyspark.sql import Column

#: a group that sets flags, `(?i)` or `(?-u:` say: case-insensitive or comment mode change what a class means
_INLINE_FLAGS = re.compile(r"\(\?[a-zA-Z-]")
_ASCII_WORD = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_ASCII_PUNCT = frozenset(chr(c) for c in range(33, 127)) - _ASCII_WORD
#: punctuation that is itself in a class unless escaped; the rest (\\ [ ] ^ - &) has a meaning there
_CLASS_LITERALS = _ASCII_PUNCT - frozenset("\\[]^-&")


class _Unplain(Exception):
    """The class (or the pattern) is not one this module rewrites."""


def bitmap_classes(pattern: str) -> str:
    """`pattern` with the ASCII ranges of its plain bracket classes spelled out; unchanged when not plain."""
    if "\\Q" in pattern or _INLINE_FLAGS.search(pattern):
        return pattern
    out: list[str] = []
    i = 0
    try:
        while i < len(pattern):
            ch = pattern[i]
            if ch == "\\":
                if pattern.startswith("c", i + 1):
                    raise _Unplain  # \cX is one control character whatever X is: \c[ opens no class
                out.append(pattern[i:i + 2])
                i += 2
            elif ch == "[":
                text, i = _class(pattern, i)
                out.append(text)
            else:
                out.append(ch)
                i += 1
    except _Unplain:
        return pattern
    return "".join(out)


def rlike(text: Column, pattern: str) -> Column:
    """`text RLIKE pattern`, with `pattern`'s plain classes spelled out (the same matches, faster)."""
    return text.rlike(bitmap_classes(pattern))


def _class(pattern: str, start: int) -> tuple[str, int]:
    """The class opening at `start`, rewritten, and the index after its `]`."""
    i = start + 1
    negated = pattern.startswith("^", i)
    i += negated
    first = i  # a - first or last in the class is itself, as in [-+0-9] or [A-Za-z0-9._%+-]
    members: list[str] = []
    items = ranges = 0  # members as written (a range is one), and how many of them are ranges
    while True:
        if i >= len(pattern):
            raise _Unplain
        ch = pattern[i]
        if ch == "]" and members:
            break
        if ch == "\\":
            escaped = pattern[i + 1:i + 2]
            if escaped not in _ASCII_PUNCT:
                raise _Unplain  # \d, \p{..}, \x41, \u00e9, \n, \0: classes or code points of their own
            members.append(escaped)
            items += 1
            i += 2
        elif ch in _ASCII_WORD and pattern.startswith("-", i + 1) and pattern[i + 2:i + 3] in _ASCII_WORD:
            low, high = ch, pattern[i + 2]
            if low > high:
                raise _Unplain  # Java refuses it; keep its error
            members.extend(chr(c) for c in range(ord(low), ord(high) + 1))
            items += 1
            ranges += 1
            i += 3
        elif ch in _ASCII_WORD or ch in _CLASS_LITERALS or (ch == "-" and (i == first or _closes(pattern, i + 1))):
            members.append(ch)
            items += 1
            i += 1
        else:
            raise _Unplain  # a - inside, [ & ^ ], whitespace, non-ASCII: left to Java's own reading
    if ranges == 0 or items == 1:
        return pattern[start:i + 1], i + 1  # no range, or one range alone: already a single predicate
    unique = dict.fromkeys(members)
    body = "".join(m if m in _ASCII_WORD or m in _CLASS_LITERALS else "\\" + m for m in unique)
    return "[" + ("^" if negated else "") + body + "]", i + 1


def _closes(pattern: str, i: int) -> bool:
    return pattern[i:i + 1] == "]"
