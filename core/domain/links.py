"""The Markdown inline-link grammar, for every module that reads links out of text.

``[text](destination "title")``, as CommonMark writes it: the text may hold escaped
characters and one level of balanced brackets (``[see [1]](…)``), the destination may be
written in angle brackets (``<a b>``) or hold balanced parentheses
(``…/Foo_(bar)``), and the title may be quoted with ``"``, ``'`` or parentheses. An
escaped ``\\[`` starts no link.

- :data:`MD_LINK` — a link or an image (``![alt](src)``, group ``image`` set); what a
  reader that reduces links to their text uses (:func:`strip_md_links`);
- :data:`INLINE_LINK` — a link, never an image;
- :data:`LINKISH` — a bracketed text, optionally followed by a destination or by a
  ``[label]`` (reference links), for a reader that resolves those too.

Named groups: ``text``, ``url`` (may be None), ``title`` (with its quotes), and in
:data:`LINKISH` ``label``. Used by the report parser (:mod:`core.domain.report_parse`), the
reference-entry reader (:mod:`core.domain.reference_entries`), the claim diff and material
tokens, key-fact values and the writers' text helpers (:mod:`core.domain.text`).
"""

from __future__ import annotations

import re

__all__ = [
    "DEST",
    "HTTP",
    "INLINE_LINK",
    "LINKISH",
    "LINK_TEXT",
    "LINK_TITLE",
    "MD_LINK",
    "link_text",
    "strip_md_links",
    "unangle",
    "unescape_link_text",
]

#: link text: escapes, any character but brackets, one level of balanced brackets
LINK_TEXT = r"(?:\\.|[^\[\]\\]|\[(?:\\.|[^\[\]\\])*\])*"
_URL_CH = r"[^\s()<>\x00]"
#: a destination: ``<…>``, or characters with balanced parentheses
DEST = rf"<[^<>\n]*>|{_URL_CH}+(?:\({_URL_CH}*\){_URL_CH}*)*|(?:\({_URL_CH}*\){_URL_CH}*)+"
#: a link title, with its quotes
LINK_TITLE = r"\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*'|\((?:\\.|[^()\\])*\)"
_TAIL = rf"\(\s*(?P<url>{DEST})?(?:\s+(?P<title>{LINK_TITLE}))?\s*\)"

MD_LINK = re.compile(rf"(?<!\\)(?P<image>!)?\[(?P<text>{LINK_TEXT})\]{_TAIL}")
INLINE_LINK = re.compile(rf"(?<![!\\])\[(?P<text>{LINK_TEXT})\]{_TAIL}")
#: a full reference link, ``[text][label]``, its text in group 1
MD_REF_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
LINKISH = re.compile(
    rf"(?<![!\\])\[(?P<text>{LINK_TEXT})\]"
    rf"(?:{_TAIL}|\[(?P<label>(?:\\.|[^\[\]\\])*)\])?"
)


#: a web address's scheme
HTTP = re.compile(r"https?://", re.I)


def link_text(match: re.Match[str]) -> str:
    """A link's text, or its destination when the text is empty."""
    return match.group("text").strip() or unangle(match.group("url") or "")


def unangle(url: str) -> str:
    """A destination without the angle brackets it may be written in (``<a b>``)."""
    url = url.strip()
    return url[1:-1] if len(url) >= 2 and url[0] == "<" and url[-1] == ">" else url


def unescape_link_text(text: str) -> str:
    """Link text with its backslash-escaped punctuation (``\\[``, ``\\!``, ``\\*`` …) read
    back."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text)


def strip_md_links(text: str) -> str:
    """``text`` with each Markdown link and image reduced to its text."""
    if "](" not in text:
        return text
    return MD_LINK.sub(lambda m: m.group("text"), text)
