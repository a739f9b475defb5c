"""Metadata blocks at the top of a page or a report: YAML front matter and RFC-822 headers.

The one reader of ``key: value`` metadata for every module that needs it: the key facts of
a page (:mod:`core.domain.keyfacts`, and through it the change classifier), a folder corpus's
records (:mod:`core.sources.corpus`) and an imported report's title
(:mod:`core.domain.report_parse`). Two layouts, each read by a library:

- **YAML front matter** — a ``---`` line, YAML, a ``---`` (or ``...``) line — is read
  with PyYAML's safe loader (``yaml.compose`` for each field's lines, ``yaml.safe_load``
  for the typed mapping): a list stays a list, a comment is not part of a value, a
  quoted value loses its quotes, a nested mapping keeps its keys; a value PyYAML cannot
  build (``created: 2017-28-08``, ``!!int abc``) is kept as its text, with a warning in
  the log — a header never stops a reader. A block that is not
  valid YAML (an unquoted ``: `` inside a title is common) is still read, line by line as
  an RFC-822 block whose list items (``- a``) continue the field before them, if every
  line of it is a field, a continuation, a list item, a comment or blank;
  :attr:`FrontMatter.error` then says why YAML refused it.
- **RFC-822 header blocks** — ``Key: value`` lines, a line that starts with a space or a
  tab continuing the field before it (as in e-mail and in PEP files) — have their values
  unfolded by :mod:`email.parser` (``email.policy.default``: continuation lines joined,
  RFC 2047 encoded words decoded).

A field's label is what precedes its colon: a letter or ``_`` first, then word
characters and ``. ( ) / & ' + -``, up to five space-separated words ("Review Manager"),
and the colon is followed by a blank or the end of the line (so ``https://…`` is not a
field). RFC 5322 allows no spaces in a field name; labels with spaces are accepted here
because pages write them, and are handed to :mod:`email.parser` under a placeholder name.

Every function works on a list of lines (no line breaks) and returns line indexes, so a
caller can map fields back to offsets in its text. Where a block begins and whether it
counts (how many fields, what must follow it) is the caller's rule.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from email import policy
from email.parser import HeaderParser
from typing import Any

import yaml
from yaml.constructor import SafeConstructor

__all__ = [
    "FIELD",
    "FIELD_VALUE",
    "MAX_VALUE_CHARS",
    "FrontMatter",
    "HeaderField",
    "front_matter",
    "front_matter_end",
    "is_delimiter",
    "read_rfc822",
    "read_yaml_fields",
    "split_front_matter",
]

_LABEL = r"[A-Za-z_][\w.()/&'+-]*(?: [\w.()/&'+-]+){0,4}"
#: one field's first line: (label, value or None)
#: (the value runs to the line's last character other than a space or a tab, read without
#: backtracking: a line with a long run of blanks inside costs no more than a short one)
FIELD_VALUE = r"(\S(?:[ \t]*+[^ \t\n])*+)"
FIELD = re.compile(r"^(" + _LABEL + r")[ \t]*:(?:[ \t]+" + FIELD_VALUE + r"|)[ \t]*$")
_LIST_ITEM = re.compile(r"^[ \t]*-(?:[ \t]+|$)")
#: characters ``str.splitlines`` breaks at besides ``\n``: blanks inside a value
_LINE_BREAKING = re.compile("[\r\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")

log = logging.getLogger(__name__)
_SURROGATE = re.compile("[\ud800-\udfff]")
_SafeLoader: type[Any] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_HEADER_PARSER = HeaderParser(policy=policy.default)
#: a value the parser returns as written (less leading blanks): printable ASCII and tabs
_PLAIN = re.compile(r"[\t\x20-\x7e]*")


@dataclass(frozen=True)
class HeaderField:
    """One field of a metadata block.

    ``value`` is text (continuation lines unfolded; a YAML list joined with ``", "``);
    ``first`` and ``last`` are the indexes of the field's first and last line in the
    lines the reader was given.
    """

    label: str
    value: str
    first: int
    last: int


@dataclass(frozen=True)
class FrontMatter:
    """A front matter block: lines ``start`` (the opening ``---``) to ``end`` (the closing
    delimiter), its fields in order, and ``data``, the YAML mapping (``{}`` when the block
    is empty or not valid YAML; then ``error`` says why)."""

    start: int
    end: int
    fields: tuple[HeaderField, ...]
    data: dict[Any, Any]
    error: str | None = None


def is_delimiter(line: str, closing: bool = False) -> bool:
    """``---`` (and, closing a front matter, ``...``) with optional trailing blanks."""
    text = line.rstrip()
    return text == "---" or (closing and text == "...")


def front_matter_end(lines: Sequence[str], start: int) -> int | None:
    """Index of the line closing a front matter opened at line ``start``, if any."""
    for j in range(start + 1, len(lines)):
        if is_delimiter(lines[j], closing=True):
            return j
    return None


# --------------------------------------------------------------------------- RFC-822


def _unfold(groups: list[list[str]]) -> list[str]:
    """The values of fields given as their lines (the first line's value, then its
    continuation lines), unfolded by :mod:`email.parser`.

    A plain value — one line of printable ASCII with no encoded word (``=?``) — comes out
    of the parser as written, less the blanks before it (``test_headers.py`` holds the
    two ways to the same values): it is read as such, and only the other fields go
    through the parser, which costs about a millisecond per page header (a third of an
    update's header reading, issue 42)."""
    values = [_plain_value(lines) for lines in groups]
    slow = [k for k, value in enumerate(values) if value is None]
    if slow:
        parsed = _parse_values([groups[k] for k in slow])
        for k, value in zip(slow, parsed, strict=True):
            values[k] = value
    return [value or "" for value in values]


def _plain_value(lines: list[str]) -> str | None:
    """The unfolded value of a one-line field that needs no parser, or None."""
    if len(lines) != 1:
        return None
    value = lines[0]
    if not _PLAIN.fullmatch(value) or "=?" in value:
        return None
    return value.lstrip(" \t")


def _parse_values(groups: list[list[str]]) -> list[str]:
    """The values of ``groups`` as :mod:`email.parser` unfolds and decodes them."""
    text = "".join(
        f"F{k}: {lines[0]}\n" + "".join(f" {line}\n" for line in lines[1:])
        for k, lines in enumerate(groups)
    )
    if _LINE_BREAKING.search(text):  # the parser splits lines at these too
        text = _LINE_BREAKING.sub(" ", text)
    try:
        message = _HEADER_PARSER.parsestr(text)
        values: dict[str, str] = {}
        for name, value in message.items():  # one pass: ``get`` per field is quadratic
            values.setdefault(name.casefold(), str(value))
        return [values.get(f"f{k}", "") for k in range(len(groups))]
    except Exception as exc:  # noqa: BLE001 - the parser's odd input: read as written
        log.warning("header values read as written, not unfolded (%s)", _first_line(exc))
        return [" ".join(" ".join(lines).split()) for lines in groups]


def read_rfc822(
    lines: Sequence[str], start: int = 0, stop: int | None = None, *, lenient: bool = False
) -> tuple[list[HeaderField], int]:
    """The fields of an RFC-822 block from line ``start``, and the index of the first line
    after them.

    A field is a ``Label: value`` line that does not start with a blank; a non-blank line
    that does continues the field before it. The block ends at the first other line (a
    blank line included) or at ``stop``. ``lenient`` (a front matter that is not valid
    YAML): blank and ``#`` comment lines are skipped, and YAML list items (``- a``, even
    unindented) continue the field before them.
    """
    stop = len(lines) if stop is None else min(stop, len(lines))
    labels: list[str] = []
    groups: list[list[str]] = []  # per field: its first line's value, continuation lines
    items: list[list[str]] = []  # per field: its list items (lenient only)
    spans: list[list[int]] = []
    i = start
    while i < stop:
        line = lines[i]
        stripped = line.strip()
        if lenient and (not stripped or stripped.startswith("#")):
            i += 1
            continue
        indented = line[:1] in (" ", "\t")
        m = None if indented else FIELD.match(line)
        if m:
            labels.append(m.group(1))
            groups.append([m.group(2) or ""])
            items.append([])
            spans.append([i, i])
        elif groups and lenient and _LIST_ITEM.match(line):
            if stripped[1:].strip():
                items[-1].append(stripped[1:].strip())
            spans[-1][1] = i
        elif groups and stripped and indented:
            groups[-1].append(stripped)
            spans[-1][1] = i
        else:
            break
        i += 1
    values = _unfold(groups)
    fields = [
        HeaderField(label, ", ".join(v for v in (value.strip(), *listed) if v), s[0], s[1])
        for label, value, listed, s in zip(labels, values, items, spans, strict=True)
    ]
    return fields, i


# --------------------------------------------------------------------------- YAML


#: longest text a YAML value is read as (aliases can make a small block expand without end)
MAX_VALUE_CHARS = 4096


def _node_text(node: yaml.Node) -> str:
    """A YAML value as text: a scalar as written (quotes and comments removed), a list's
    items joined with ``", "``, a mapping as ``key: value`` pairs joined so; cut at
    :data:`MAX_VALUE_CHARS`."""
    parts: list[str] = []
    size = 0

    def walk(n: yaml.Node, depth: int) -> None:
        nonlocal size
        if size > MAX_VALUE_CHARS or depth > 32:
            return
        if isinstance(n, yaml.ScalarNode):
            text = str(n.value)
            if text:
                parts.append(text)
                size += len(text) + 2
        elif isinstance(n, yaml.SequenceNode):
            for item in n.value:
                walk(item, depth + 1)
        elif isinstance(n, yaml.MappingNode):
            for key, value in n.value:
                before = len(parts)
                walk(value, depth + 1)
                label = str(key.value) if isinstance(key, yaml.ScalarNode) else ""
                if label:
                    if len(parts) > before:
                        parts[before] = f"{label}: {parts[before]}"
                    else:
                        parts.append(label)
                    size += len(label) + 2

    walk(node, 0)
    return ", ".join(parts)[:MAX_VALUE_CHARS]


def _last_line(lines: Sequence[str], first: int, end: yaml.Mark, base: int) -> int:
    """The last line a YAML value spans: its end mark's line (the line before, when the
    mark is at the start of a line), less trailing blank and comment lines."""
    last = base + end.line - (1 if end.column == 0 else 0)
    last = min(last, len(lines) - 1)
    while last > first and (not lines[last].strip() or lines[last].lstrip().startswith("#")):
        last -= 1
    return max(last, first)


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0]


def _construct(loader: Any, node: yaml.Node) -> Any:
    """The YAML document ``node`` as Python values. A value PyYAML cannot build — a date
    that is no date (``created: 2017-28-08``), ``!!int abc``, a ``!!binary`` that is not
    base64, an unhashable key — is kept as its text (:func:`_node_text`), with one
    warning: a header's odd value never costs the page its header, or a run its page."""
    try:
        return loader.construct_document(node)
    except Exception as exc:  # noqa: BLE001 - any value PyYAML cannot build
        if not isinstance(node, yaml.MappingNode):
            raise ValueError(_first_line(exc)) from None
        first = exc
    data: dict[Any, Any] = {}
    unread: list[str] = []
    for key, value in node.value:
        if not isinstance(key, yaml.ScalarNode):
            continue  # a complex key: no label to read
        label = _value(key, unread)
        data[label if _hashable(label) else str(key.value)] = _value(value, unread)
    log.warning(
        "header values read as text, not as YAML types (%s): %s",
        _first_line(first),
        ", ".join(unread) or "?",
    )
    return data


def _value(node: yaml.Node, unread: list[str]) -> Any:
    """One YAML value built on its own, or its text when it cannot be."""
    try:
        return SafeConstructor().construct_document(node)
    except Exception:  # noqa: BLE001 - any value PyYAML cannot build is text
        text = _node_text(node)
        unread.append(repr(text[:40]))
        return text


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def read_yaml_fields(
    lines: Sequence[str], start: int, stop: int
) -> tuple[list[HeaderField], dict[Any, Any], str | None]:
    """The top-level fields of the YAML in ``lines[start:stop]``, the loaded mapping, and
    why it is not a YAML mapping (``None`` when it is, or when it is empty).

    Not valid YAML, or YAML that is not a mapping: the lines are read by
    :func:`read_rfc822` (``lenient``); fields are returned only if that reading covers
    every line."""
    # lone surrogates (bytes read with surrogateescape) cannot reach the YAML reader:
    # each is read as U+FFFD, one character for one, so lines and columns stay
    loader = _SafeLoader(_SURROGATE.sub("\ufffd", "\n".join(lines[start:stop])))
    try:
        node = loader.get_single_node()
        data = _construct(loader, node) if node is not None else None
    except (yaml.YAMLError, RecursionError, ValueError) as exc:
        node, data, error = None, None, f"not valid YAML ({_first_line(exc)})"
    else:
        if node is None:
            return [], {}, None
        error = None if isinstance(node, yaml.MappingNode) else "not a mapping"
    finally:
        loader.dispose()
    if error is None and isinstance(node, yaml.MappingNode) and isinstance(data, dict):
        fields = []
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                continue  # a complex key: no label to read
            first = start + key.start_mark.line
            fields.append(
                HeaderField(
                    str(key.value),
                    _node_text(value).strip(),
                    first,
                    _last_line(lines, first, value.end_mark, start),
                )
            )
        return fields, data, None
    fields, end = read_rfc822(lines, start, stop, lenient=True)
    return (fields if end >= stop else []), {}, error or "not a mapping"


def front_matter(lines: Sequence[str], start: int = 0) -> FrontMatter | None:
    """The front matter whose opening ``---`` is line ``start``, or None.

    None when no delimiter closes it, or when its lines are neither YAML nor ``key:
    value`` fields (a Markdown text between two thematic breaks is not front matter).
    An empty block (``---`` then ``---``) is front matter with no fields."""
    if start >= len(lines) or not is_delimiter(lines[start]):
        return None
    end = front_matter_end(lines, start)
    if end is None:
        return None
    fields, data, error = read_yaml_fields(lines, start + 1, end)
    if error is not None and not fields:
        return None
    return FrontMatter(start, end, tuple(fields), data, error)


def split_front_matter(text: str) -> tuple[dict[Any, Any], str]:
    """The YAML front matter at the top of ``text`` (after blank lines) as a mapping, and
    the text after it; ``({}, text)`` when there is none.

    Raises ``ValueError`` when the block reads as ``key: value`` fields but is not a valid
    YAML mapping: a corpus import refuses to guess a record's metadata."""
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if line.strip()), 0)
    found = front_matter(lines, start)
    if found is None:
        return {}, text
    if found.error is not None:
        raise ValueError(f"front matter is {found.error}")
    offset = sum(len(line) + 1 for line in lines[: found.end + 1])
    return found.data, text[offset:]
