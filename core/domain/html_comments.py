"""HTML comments (and tags) taken out of text in one linear pass.

``re.sub(r"<!--.*?-->", …)`` reads from every ``<!--`` to the end of the text when no
``-->`` follows it: a page or a value of thousands of unclosed ``<!--`` costs the square of
its length. :func:`replace_html` gives the same result as that pattern (or as ``<!--.*?-->``
alternated with a tag pattern, the comment tried first) and stops looking for ``-->`` once
none is left.
"""

from __future__ import annotations

import re

__all__ = ["replace_html"]

_OPEN = "<!--"
_CLOSE = "-->"
_COMMENT_ONLY = re.compile(re.escape(_OPEN))


def replace_html(text: str, repl: str, tag: re.Pattern[str] | None = None) -> str:
    """``text`` with each HTML comment — and, given ``tag``, each match of it — replaced by
    ``repl``, left to right, as ``re.compile("<!--.*?-->|" + tag.pattern, re.S).sub``
    would (``tag`` must not match ``<!--``; it must not match across a ``<`` either)."""
    if _OPEN not in text and tag is None:
        return text
    pattern = _COMMENT_ONLY if tag is None else re.compile(f"({re.escape(_OPEN)})|{tag.pattern}")
    pieces: list[str] = []
    pos = at = 0
    closes = True  # a "-->" may still follow
    while (m := pattern.search(text, at)) is not None:
        if m.group(0) == _OPEN and (tag is None or m.group(1) is not None):
            end = text.find(_CLOSE, m.end()) if closes else -1
            if end < 0:  # an unclosed comment: no later one closes either
                closes = False
                at = m.start() + 1
                continue
            stop = end + len(_CLOSE)
        else:
            stop = m.end()
        pieces.append(text[pos : m.start()])
        pieces.append(repl)
        pos = at = stop
    pieces.append(text[pos:])
    return "".join(pieces)
