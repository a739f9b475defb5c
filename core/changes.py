"""Classify how a source changed between two snapshots.

The method we follow skips unchanged sources by hash, then uses a character
similarity gate (rapidfuzz ``fuzz.ratio`` / 100 against tau = 0.9) and computes
claim-level diffs only for sources that changed. We go one step further: a
small edit that keeps the similarity above tau can still be *material* (a
status, a number, a date, a version, a decision word, a header field), so texts
above the gate are diffed claim by claim and checked for such edits.

Kinds, from least to most change:

- ``unchanged``: same text (up to line endings); nothing else is computed.
- ``minor``: similarity >= tau and no material reason (markup, link style,
  header housekeeping, typo fixes). Claims are kept for display.
- ``material``: similarity >= tau but at least one material reason.
- ``changed``: similarity < tau (a rewrite); claims are computed.

Everything here is pure, deterministic and regex based, so it is fast enough
to run over thousands of page versions (the 2,489 consecutive version pairs of
the PEP corpus take about 18 s). On that corpus's keyword-derived ground truth,
96% of the materially changed pairs come out ``material`` or ``changed`` and 99%
of the changed-but-not-material ones come out ``minor``.
"""

from __future__ import annotations

import difflib
import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

from rapidfuzz import fuzz, process

ChangeKind = Literal["unchanged", "minor", "material", "changed"]
ClaimKind = Literal["modified", "added", "removed"]

DEFAULT_TAU = 0.9
#: minimum ``fuzz.ratio`` for an old and a new sentence to count as one modified claim
PAIR_MIN_RATIO = 60.0
#: at most this many reasons are returned (the rest are summarised in one line)
MAX_REASONS = 40
#: this many net new (or dropped) words of prose make a change material by volume
MATERIAL_PROSE_WORDS = 150
#: replaced blocks larger than this (old x new sentences) are paired within a band
_MAX_PAIR_CELLS = 250_000
#: a header block must lie within this many characters of the top
_HEADER_SCAN_CHARS = 65_536

__all__ = [
    "ChangeKind",
    "ChangeResult",
    "ClaimChange",
    "DEFAULT_TAU",
    "HOUSEKEEPING_HEADERS",
    "claim_diff",
    "classify_change",
    "content_hash",
    "header_fields",
    "material_reasons",
    "split_sentences",
]


# --------------------------------------------------------------------------- hashing


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def content_hash(text: str) -> str:
    """SHA-256 hex digest of ``text`` with line endings normalised to ``\\n`` (nothing else)."""
    return hashlib.sha256(_normalise_newlines(text).encode("utf-8")).hexdigest()


# --------------------------------------------------------------------------- sentences

# A line made only of markup characters: rst section under/overlines, table
# borders (``+----+``, ``===== =====``), transitions, bare comment markers.
_MARKUP_LINE = re.compile(r"^\s*(?:[=\-~^\"'`#*+_.:|<>]{2,}[ \t=\-~^\"'`#*+_.:|<>]*)?\s*$")
_UNDERLINE = re.compile(r"^\s*([=\-~^\"'`#*+_.:])\1{2,}\s*$")
_TABLE_BORDER = re.compile(r"^\s*(?:\+[-=+]+\+|=+(?:\s+=+)+|-+(?:\s+-+)+)\s*$")
_MARKUP_CHARS = frozenset("=-~^\"'`#*+_.:|<>")
_ITEM_FIRST_CHARS = frozenset("-*+•#(.")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)]|#\.|\(?[a-zA-Z0-9]{1,3}\))\s+\S")
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+\S")
_FIELD_LINE = re.compile(r"^([A-Za-z][A-Za-z0-9_-]*):(?:[ \t]+\S|[ \t]*$)")
_WS = re.compile(r"\s+")
# Sentence end: . ! ? (optionally closed by quotes/brackets) followed by space and
# something that can start a sentence.
_SENT_END = re.compile(r"(?<=[.!?])[\"')\]*`]*\s+(?=[\"'(\[*`]*(?:[A-Z0-9]|:[\w-]+:`))")
_ABBREV_END = re.compile(
    r"(?:\b(?:e\.g|i\.e|etc|vs|cf|al|approx|no|nos|fig|figs|mr|mrs|ms|dr|prof|st|jr|sr|inc|ltd|"
    r"co|corp|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec|vol|ed|eds|p|pp|sec|ch|"
    r"[A-Za-z])\.)[\"')\]*`]*$",
    re.IGNORECASE,
)

_ENUMERATOR = re.compile(r"^(?:\.\.|\(?(?:\d{1,3}|[A-Za-z]|#|[ivxlcIVXLC]{1,5})[.)])$")
# An rst comment: ".." alone or followed by text that is not a directive, target,
# footnote/citation or substitution definition.
_RST_COMMENT = re.compile(r"^(\s*)\.\.(?:\s*$|\s+(?!\[|_|\||[\w:+-]+::)\S)")
_EMACS_START = re.compile(r"^\s*(?:\.\.\s*)?Local Variables:\s*$")
_EMACS_END = re.compile(r"^\s*End:\s*$")
_EXPLICIT_MARKUP = re.compile(r"^\s*\.\.\s")


def _header_block_end(lines: list[str]) -> int:
    """Number of leading lines that form an RFC-822 style header block (0 if none)."""
    n = 0
    fields = 0
    for line in lines:
        if _FIELD_LINE.match(line):
            fields += 1
        elif fields and line[:1] in (" ", "\t") and line.strip():
            pass  # continuation line
        else:
            break
        n += 1
    if fields >= 2 and (n == len(lines) or not lines[n].strip()):
        return n
    return 0


def _split_segment(segment: str) -> list[str]:
    text = _WS.sub(" ", segment).strip()
    if not text:
        return []
    parts = _SENT_END.split(text)
    out: list[str] = []
    for part in parts:
        part = part.strip()
        if not part:
            continue
        # only the tail can end in an abbreviation; searching it keeps this linear
        if out and (_ABBREV_END.search(out[-1][-20:]) or _ENUMERATOR.match(out[-1])):
            out[-1] = f"{out[-1]} {part}"
        else:
            out.append(part)
    return out


def _split_header(lines: list[str]) -> tuple[int, list[str]]:
    """Index of the first body line, and one unit per header field.

    Handles YAML front matter and an RFC-822 block; fields (with their
    continuation lines) are units of their own and are never sentence-split.
    """
    start = 0
    if lines and lines[0].strip() == "---":
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                start = i + 1
                break
        head = lines[1 : start - 1] if start else []
    else:
        start = _header_block_end(lines)
        head = lines[:start]
    units: list[str] = []
    for line in head:
        if _FIELD_LINE.match(line) or not units:
            units.append(line)
        else:
            units[-1] += " " + line
    return start, [u for u in (_WS.sub(" ", u).strip() for u in units) if u]


def split_sentences(text: str) -> list[str]:
    """Split ``text`` into sentence/claim units.

    Units end at sentence ends (``. ! ?`` followed by a capital or digit), blank
    lines, list items, section titles and header fields. Markup-only lines
    (rst under/overlines, table borders, transitions) are dropped and whitespace
    is collapsed. Deterministic and regex-only.
    """
    lines = _normalise_newlines(text).split("\n")
    start, out = _split_header(lines)
    segments: list[str] = []

    cur: list[str] = []
    table = False

    def flush() -> None:
        if cur:
            segments.append(" ".join(cur))
            cur.clear()

    body = lines[start:]
    comment_indent: int | None = None
    emacs = False
    for i, line in enumerate(body):
        stripped = line.strip()
        first = stripped[:1]
        if emacs or (first == "L" or first == ".") and _EMACS_START.match(line):
            flush()  # editor settings block ("Local Variables: ... End:"), not content
            emacs = not _EMACS_END.match(line)
            continue
        if comment_indent is not None:
            if not stripped or len(line) - len(line.lstrip()) > comment_indent:
                continue  # inside an rst comment
            comment_indent = None
        if not stripped:
            flush()
            table = False
            continue
        if first == ".":
            m = _RST_COMMENT.match(line)
            if m:
                flush()
                comment_indent = len(m.group(1))
                continue
        if first in _MARKUP_CHARS:
            if _TABLE_BORDER.match(line):
                flush()
                table = True
                continue
            if _MARKUP_LINE.match(line):
                flush()
                continue
        if table or first == "|":
            flush()
            segments.append(stripped)
            continue
        nxt = body[i + 1].lstrip()[:1] if i + 1 < len(body) else ""
        if nxt and nxt in _MARKUP_CHARS:
            under = body[i + 1]
            if _UNDERLINE.match(under) and len(under.strip()) >= len(stripped) - 2:
                flush()  # section title
                segments.append(stripped)
                continue
        if (first in _ITEM_FIRST_CHARS or first.isalnum()) and (
            _LIST_ITEM.match(line) or _MD_HEADING.match(line) or _EXPLICIT_MARKUP.match(line)
        ):
            flush()
        cur.append(stripped)
    flush()

    for seg in segments:
        out.extend(_split_segment(seg))
    return out


def _header_units(text: str) -> list[str]:
    """The header-field units :func:`split_sentences` yields for ``text``."""
    return _split_header(_normalise_newlines(text[:_HEADER_SCAN_CHARS]).split("\n"))[1]


# --------------------------------------------------------------------------- claims


@dataclass
class ClaimChange:
    """One changed claim: ``modified`` (both sides), ``added`` or ``removed``."""

    before: str | None
    after: str | None

    @property
    def kind(self) -> ClaimKind:
        if self.before is None:
            return "added"
        if self.after is None:
            return "removed"
        return "modified"

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "before": self.before, "after": self.after}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ClaimChange:
        return cls(before=data.get("before"), after=data.get("after"))


_ROLE = re.compile(r":[\w-]+(?::[\w-]+)?:(?=`)")
_RST_LINK = re.compile(r"`([^`<]*?)\s*<([^>`]*)>`_{0,2}")
_MD_LINK = re.compile(r"!?\[([^\]]*)\]\(([^)\s]*)(?:\s+\"[^\"]*\")?\)")
_NORM_DROP = re.compile(r"[`*_<>\\]")
_NEEDS_NORM = re.compile(r"[`*_<>\\]|\]\(|- ")
_HYPHEN_BREAK = re.compile(r"(\w)- (\w)")  # "comma- delimited": a line-wrap artefact


def _link_text(match: re.Match[str]) -> str:
    return match.group(1) or match.group(2)


def _normalise(sentence: str) -> str:
    """Comparison key: casefolded, links collapsed to their text, markup and extra space removed."""
    if not _NEEDS_NORM.search(sentence):  # fast path: plain prose
        s = _WS.sub(" ", sentence).strip()
        return (s[:-1] if s.endswith("::") else s).casefold()
    s = _ROLE.sub("", sentence)
    s = _RST_LINK.sub(_link_text, s)
    s = _MD_LINK.sub(_link_text, s)
    s = _NORM_DROP.sub("", s)
    s = _HYPHEN_BREAK.sub(r"\1-\2", s)
    s = _WS.sub(" ", s).strip()
    if s.endswith("::"):  # rst literal-block marker
        s = s[:-1]
    return s.casefold()


def _pair_block(old_keys: list[str], new_keys: list[str]) -> list[tuple[int | None, int | None]]:
    """Pair the sentences of one replaced block by best ``fuzz.ratio`` >= PAIR_MIN_RATIO.

    Greedy, best score first, each sentence used once. Returns ``(i, j)`` pairs
    (indexes into the block) in document order, with ``None`` for an unpaired
    side. Very large blocks are compared within a diagonal band only.
    """
    n_old, n_new = len(old_keys), len(new_keys)
    candidates: list[tuple[float, int, int]] = []
    if n_old and n_new:
        band = None
        if n_old * n_new > _MAX_PAIR_CELLS:
            band = max(25, _MAX_PAIR_CELLS // (2 * n_old))
        for i, key in enumerate(old_keys):
            lo, hi = 0, n_new
            if band is not None:
                centre = i * n_new // n_old
                lo, hi = max(0, centre - band), min(n_new, centre + band + 1)
            for _, score, j in process.extract(
                key,
                new_keys[lo:hi],
                scorer=fuzz.ratio,
                processor=None,
                score_cutoff=PAIR_MIN_RATIO,
                limit=None,
            ):
                candidates.append((-score, i, lo + j))
    candidates.sort()
    pairs: dict[int, int] = {}
    used_new: set[int] = set()
    for _, i, j in candidates:
        if i not in pairs and j not in used_new:
            pairs[i] = j
            used_new.add(j)

    out: list[tuple[int | None, int | None]] = []
    j_next = 0
    for i in range(n_old):
        if i in pairs:
            j = pairs[i]
            for k in range(j_next, j):  # new sentences before this pair's partner
                if k not in used_new:
                    out.append((None, k))
            out.append((i, j))
            j_next = max(j_next, j + 1)
        else:
            out.append((i, None))
    out.extend((None, k) for k in range(j_next, n_new) if k not in used_new)
    return out


def _claim_diff_all(old: str, new: str) -> list[ClaimChange]:
    a = split_sentences(old)
    b = split_sentences(new)
    keys: dict[str, str] = {}  # most sentences occur on both sides: normalise each once
    ak = [keys[s] if s in keys else keys.setdefault(s, _normalise(s)) for s in a]
    bk = [keys[s] if s in keys else keys.setdefault(s, _normalise(s)) for s in b]
    matcher = difflib.SequenceMatcher(None, ak, bk, autojunk=False)
    changes: list[ClaimChange] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        if tag == "delete":
            changes.extend(ClaimChange(a[i], None) for i in range(i1, i2))
        elif tag == "insert":
            changes.extend(ClaimChange(None, b[j]) for j in range(j1, j2))
        else:
            for i, j in _pair_block(ak[i1:i2], bk[j1:j2]):
                before = a[i1 + i] if i is not None else None
                after = b[j1 + j] if j is not None else None
                if before is not None and after is not None and ak[i1 + i] == bk[j1 + j]:
                    continue
                changes.append(ClaimChange(before, after))
    # A sentence that was only moved is not a change: cancel removed/added pairs
    # with the same normalised text.
    removed = Counter(_normalise(c.before) for c in changes if c.kind == "removed")
    added = Counter(_normalise(c.after) for c in changes if c.kind == "added")
    moved = removed & added
    if moved:
        drop_removed = moved.copy()
        drop_added = moved.copy()
        kept: list[ClaimChange] = []
        for c in changes:
            if c.kind == "removed" and drop_removed[_normalise(c.before)] > 0:
                drop_removed[_normalise(c.before)] -= 1
                continue
            if c.kind == "added" and drop_added[_normalise(c.after)] > 0:
                drop_added[_normalise(c.after)] -= 1
                continue
            kept.append(c)
        changes = kept
    return changes


def claim_diff(old: str, new: str, limit: int | None = 200) -> list[ClaimChange]:
    """Sentence-level diff of ``old`` and ``new``.

    Sentences are aligned with :class:`difflib.SequenceMatcher` on their
    normalised form (so markup/link/case/whitespace-only edits vanish); inside
    each replaced block, sentences are paired by best ``fuzz.ratio`` >= 60 as
    ``modified`` and the rest are ``added``/``removed``. Sentences that merely
    moved are dropped. At most ``limit`` changes are returned (``None``: all).
    """
    changes = _claim_diff_all(old, new)
    return changes if limit is None else changes[:limit]


# --------------------------------------------------------------------------- headers

#: Header fields whose changes are bookkeeping, not content (compared casefolded).
#: ``resolution`` is special-cased: adding one is material (a decision was recorded),
#: changing or dropping its link is not.
HOUSEKEEPING_HEADERS = frozenset(
    {
        "post-history",
        "last-modified",
        "version",
        "content-type",
        "created",
        "author",
        "sponsor",
        "discussions-to",
        "topic",
        "pep",
        "resolution",
        "date",
        "updated",
        "last-updated",
        "lastmod",
        "modified",
    }
)


def _header_items(text: str) -> list[tuple[str, str]]:
    """(original key, value) pairs of the header block at the very top of ``text``."""
    # A header sits at the top: never split a whole 100 KB page to read it.
    lines = _normalise_newlines(text.lstrip("\ufeff")[:_HEADER_SCAN_CHARS]).split("\n")
    items: list[tuple[str, str]] = []
    if lines and lines[0].strip() == "---":
        end = None
        for i in range(1, len(lines)):
            if lines[i].strip() in ("---", "..."):
                end = i
                break
        if end is None:
            return []
        block = lines[1:end]
    else:
        block = lines[: _header_block_end(lines)]
    for line in block:
        m = re.match(r"^([A-Za-z][A-Za-z0-9_ -]*?)\s*:(?:\s+(.*)|\s*$)", line)
        if m and line[:1] not in (" ", "\t", "-"):
            items.append((m.group(1).strip(), (m.group(2) or "").strip()))
        elif items and line.strip() and not line.lstrip().startswith("#"):
            key, value = items[-1]
            extra = line.strip()
            if extra.startswith("- "):  # YAML list item
                extra = extra[2:].strip()
            items[-1] = (key, f"{value} {extra}".strip() if value else extra)
    return [(k, _strip_quotes(v)) for k, v in items]


def _strip_quotes(value: str) -> str:
    value = _WS.sub(" ", value).strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    return value


def _fields(items: list[tuple[str, str]], aliases: dict[str, str] | None = None) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in items:
        k = key.casefold()
        if aliases:
            k = aliases.get(k, k)
        out[k] = f"{out[k]}, {value}" if out.get(k) else value
    return out


def header_fields(text: str) -> dict[str, str]:
    """Header fields at the very top of ``text``, keys casefolded.

    Understands an RFC-822 style block (``Status: Accepted``, indented
    continuation lines; at least two fields, ended by a blank line), as in PEP
    files, and YAML front matter between ``---`` lines (flat ``key: value``
    pairs; list items are joined). Repeated keys are joined with ``, ``.
    """
    return _fields(_header_items(text))


#: Renamed header fields, compared as one (old name -> current name).
_HEADER_ALIASES = {"bdfl-delegate": "pep-delegate"}
#: Fields naming people: compared without e-mail addresses.
_PEOPLE_HEADERS = frozenset({"author", "sponsor", "pep-delegate", "bdfl-delegate"})
_EMAIL = re.compile(r"<[^<>\s]*@[^<>\s]*>|\S+@\S+|\S+ at \S+\.\w+")


def _header_value_key(key: str, value: str) -> str:
    if key in _PEOPLE_HEADERS:
        value = _EMAIL.sub(" ", value)
    return _normalise(value).strip(" .,;")


def _short(value: str, width: int = 120) -> str:
    return value if len(value) <= width else value[: width - 1] + "…"


def _header_reasons(
    old_items: list[tuple[str, str]], new_items: list[tuple[str, str]]
) -> list[str]:
    names = {_HEADER_ALIASES.get(k.casefold(), k.casefold()): k for k, _ in old_items + new_items}
    h_old = _fields(old_items, _HEADER_ALIASES)
    h_new = _fields(new_items, _HEADER_ALIASES)
    reasons: list[str] = []
    for key in sorted(set(h_old) | set(h_new), key=lambda k: (k != "status", k)):
        before = h_old.get(key, "")
        after = h_new.get(key, "")
        if _header_value_key(key, before) == _header_value_key(key, after):
            continue
        if key == "resolution":
            if before or not after:
                continue  # link moved or dropped: housekeeping
        elif key in HOUSEKEEPING_HEADERS:
            continue
        reasons.append(
            f"header {names[key]}: {_short(before) or '(none)'} → {_short(after) or '(none)'}"
        )
    return reasons


# --------------------------------------------------------------------------- material tokens

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
# months that can start a year-less date ("May 5" is too often the verb)
_MONTH_DAY = _MONTH.replace("may|", "")
_TIME = r"\d{1,2}:\d{2}(?::\d{2})?(?:\s?[ap]\.?m\.?)?"
_DATE = re.compile(
    r"(?<![\w.])(?:"
    r"\d{4}-\d{1,2}-\d{1,2}(?:[T ]\d{1,2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)?"  # ISO
    r"|\d{1,2}[-/ ]" + _MONTH + r"\.?[-/ ,]+\d{4}"  # 13-Jun-2000, 13 June 2000
    r"|" + _MONTH + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?,?\s+\d{4}"  # June 13, 2000
    r"|" + _MONTH + r"\.?,?\s+\d{4}"  # Mar 2026
    r"|" + _MONTH_DAY + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?(?![\d:.,]\d)"  # June 13
    r"|\d{1,2}(?:st|nd|rd|th)?\s+" + _MONTH + r"\b"  # 13 June
    r"|(?:Q[1-4]|H[12])\s*[-/]?\s*\d{4}"  # Q3 2026, H1 2027
    r"|\d{1,2}/\d{1,2}/\d{2,4}"  # 01/02/2026
    r"|\d{4}-\d{2}(?![\d-])"  # 2026-03
    r"|" + _TIME + r")(?![\w])",
    re.IGNORECASE,
)
_VERSION = re.compile(
    r"(?<![\w.])(?:"
    r"v\d+(?:\.\d+)*(?:[-.]?(?:a|b|rc|alpha|beta|dev|post)\d*)?"  # v2, v2.1
    r"|\d+\.\d+\.\d+(?:\.\d+)*(?:(?:a|b|rc|\.dev|\.post)\d*)?"  # 3.12.0, 1.2.3rc1
    r"|\d+\.\d+(?:a|b|rc|\.dev|\.post)\d*"  # 3.13a1
    r"|(?<=python )\d+(?:\.\d+)?"  # Python 3.12
    r"|(?<=version )\d+(?:\.\d+)+"  # version 2.1
    r")(?![\w.]\w)",
    re.IGNORECASE,
)
_NUMBER = re.compile(
    r"(?<![\w.,])(?:[$€£¥]\s?)?(?:\d+(?:[.,]\d+)*[½¼¾⅓⅔⅛]?|[½¼¾⅓⅔⅛])"
    r"(?:\s?%|\s?percent\b)?(?:[A-Za-z]{1,3})?(?![\w])",  # 2nd, 10ms, 5GB, 3pm
    re.IGNORECASE,
)

# Decision/status words: (pattern, canonical form, strong). Strong words count in
# any changed claim; weak ones (negations, RFC 2119 keywords, "implemented", ...)
# only when they flip inside a modified claim, because new prose is full of them.
_DECISION_WORDS: list[tuple[str, str, bool]] = [
    (r"accept(?:ed|s|ing|ance)?", "accepted", True),
    (r"approv(?:e|ed|es|ing|al)", "approved", True),
    (r"final(?:i[sz]ed|i[sz]es|i[sz]e|i[sz]ing|i[sz]ation)?", "final", True),
    (r"reject(?:ed|s|ing|ion)?", "rejected", True),
    (r"deprecat(?:e|ed|es|ing|ion)", "deprecated", True),
    (r"supersed(?:e|ed|es|ing)", "superseded", True),
    (r"withdr(?:aw|awn|ew|aws|awing|awal)", "withdrawn", True),
    (r"defer(?:red|s|ring|ral)?", "deferred", True),
    (r"draft(?:ed|s)?", "draft", True),
    (r"provisional(?:ly)?", "provisional", True),
    (r"active", "active", True),
    (r"postpon(?:e|ed|es|ing|ement)", "postponed", True),
    (r"cancel(?:l?ed|s|l?ing|l?ation)?", "cancelled", True),
    (r"operational", "operational", True),
    (r"propos(?:e|ed|es|ing|al|als)", "proposed", True),
    (r"suspend(?:ed|s|ing)?|suspension", "suspended", True),
    (r"repeal(?:ed|s|ing)?", "repealed", True),
    (r"in force", "in force", True),
    (r"delay(?:ed|s|ing)?", "delayed", True),
    (r"obsolete[ds]?", "obsolete", True),
    (r"abandon(?:ed|s|ing)?", "abandoned", True),
    (r"retir(?:e|ed|es|ing)", "retired", True),
    (r"end[- ]of[- ]life", "end-of-life", True),
    (r"eol", "end-of-life", True),
    (r"implemented", "implemented", True),
    (r"released", "released", False),
    (r"complete[ds]?", "completed", False),
    (r"resolved", "resolved", False),
    (r"no longer", "no longer", False),
    (r"not|cannot|can't|won't|don't|doesn't|isn't|aren't|wasn't", "not", False),
    (r"never", "never", False),
]
_WEAK_DECISIONS = frozenset(
    [canon for _, canon, strong in _DECISION_WORDS if not strong]
    + ["MUST NOT", "SHALL NOT", "SHOULD NOT", "MUST", "SHALL", "SHOULD", "REQUIRED", "MAY"]
)
_PHRASES = ("in force", "no longer", "end[- ]of[- ]life")
_SINGLE_WORDS = [(p, c) for p, c, _ in _DECISION_WORDS if p not in _PHRASES]
_DECISION_WORD = re.compile(
    "(?:" + "|".join(f"({pat})" for pat, _ in _SINGLE_WORDS) + ")", re.IGNORECASE
)
_DECISION_PHRASE = re.compile(r"\b(in force|no longer|end[- ]of[- ]life)\b", re.IGNORECASE)
_ALPHA_WORD = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)?")
_decision_cache: dict[str, str | None] = {}


def _decision_canon(word: str) -> str | None:
    """Canonical decision word for ``word`` (one word, any case), or None."""
    key = word.casefold()
    if key not in _decision_cache:
        if len(_decision_cache) > 50_000:
            _decision_cache.clear()
        m = _DECISION_WORD.fullmatch(key)
        _decision_cache[key] = _SINGLE_WORDS[(m.lastindex or 1) - 1][1] if m else None
    return _decision_cache[key]


_NORMATIVE = re.compile(r"\b(MUST NOT|SHALL NOT|SHOULD NOT|MUST|SHALL|SHOULD|REQUIRED|MAY)\b")
_CARDINALS = (
    "two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety "
    "hundred thousand million billion trillion dozen"
)
_NUMBER_WORD = re.compile(r"\b(" + "|".join(_CARDINALS.split()) + r")\b", re.IGNORECASE)
# A figure spelled out in words is the same figure ("5 to 10" -> "five to ten" is style).
_CARDINAL_VALUE = {
    w: str(v)
    for v, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
} | {"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70",
     "eighty": "80", "ninety": "90", "hundred": "100", "thousand": "1000", "dozen": "12"}

# Things whose digits are not figures: URLs, link targets, references, footnotes, code-ish ids.
_URL = re.compile(r"(?:https?://|ftp://|www\.)[^\s<>`\"')\]]+", re.IGNORECASE)
_LINK_TARGET = re.compile(r"<[^<>\s]*(?:/|\.|#|@)[^<>\s]*>")
_MD_TARGET = re.compile(r"\]\([^)]*\)")
_FOOTNOTE = re.compile(r"\[(?:\d+|#[\w-]*|\*|[\w-]*\d[\w-]*)\]_?|\.\. \[[^\]]*\]")
_REFERENCE = re.compile(
    r"\b(?:PEPs?|RFCs?|bpo|gh|GH|BPO|issues?|bugs?|patch|PR|pull request|SF|"
    r"CVE)[\s:#-]*\d+(?:\s*(?:,|and|or)\s*\d+)*"
    r"|:(?:pep|rfc|issue|gh|cve|pypi):`[^`]*`"
    r"|#\d+",
)
_HAS_NORMATIVE = re.compile(r"MUST|SHALL|SHOULD|REQUIRED|MAY")
_HAS_DIGIT = re.compile(r"[\d½¼¾⅓⅔⅛]")
# identifiers with digits (utf8, x86_64, 0x1F, 3rdparty, 1e10): not figures
_IDENT_NUMBER = re.compile(
    r"[\w.]*[A-Za-z_][\w.]*\d[\w.]*|\d+(?:_|[A-Za-z]{4,}|[A-Za-z]{1,3}\d)\w*"
)
_ENUM_PREFIX = re.compile(r"^\s*(?:\(?\d{1,3}[.)]|#\.|\(?[a-zA-Z][.)])\s+")
_REPEATED_WORD = re.compile(r"\b([^\W\d_]+)(?:\s+\1\b)+", re.IGNORECASE)
# Page furniture whose dates move on every edit: copyright years, "last updated" stamps.
_BOILERPLATE = re.compile(
    r"(?:©|\(c\)|copyright)(?:\s*(?:©|\(c\)))?\s*\d{4}(?:\s*[-–]\s*\d{2,4})?"
    r"|\b(?:last\s+)?(?:updated|modified|edited|reviewed|revised)(?:\s+(?:on|at))?:?\s+"
    r"(?:" + _DATE.pattern + r")(?:,?\s+(?:at\s+)?" + _TIME + r")?",
    re.IGNORECASE,
)
# Bibliography entries and link targets: citations, not claims.
_REF_ENTRY = re.compile(r"^\s*(?:\.\.\s+(?:\[[^\]]+\]|_)|\[[\w#*-]+\]\s)")
_WORD = re.compile(r"[^\W\d_]{4,}")
_PROSE_WORD = re.compile(r"[^\W\d_]{2,}")


def _scrub(text: str) -> str:
    s = _BOILERPLATE.sub(" ", text)
    s = _ENUM_PREFIX.sub(" ", s)
    s = _URL.sub(" ", s)
    s = _RST_LINK.sub(lambda m: f" {m.group(1)} ", s)
    s = _MD_LINK.sub(lambda m: f" {m.group(1)} ", s)
    s = _LINK_TARGET.sub(" ", s)
    s = _MD_TARGET.sub(" ", s)
    s = _FOOTNOTE.sub(" ", s)
    s = _REFERENCE.sub(" ", s)
    s = s.replace("``", " ").replace("`", " ").replace("*", " ")
    return _REPEATED_WORD.sub(r"\1", s)


Token = tuple[str, str]


def _material_tokens(text: str) -> Counter[Token]:
    """Multiset of (category, token) items in ``text`` that make an edit material.

    Categories: ``date``, ``version``, ``number`` (digits, money, percentages,
    fractions, cardinal words) and ``decision`` (status/decision words, negations
    and RFC 2119 keywords).
    """
    tokens: Counter[Token] = Counter()
    s = _scrub(text)

    def take(pattern: re.Pattern[str], category: str, s: str, fold: bool = True) -> str:
        def repl(m: re.Match[str]) -> str:
            token = _WS.sub(" ", m.group(0)).strip()
            tokens[(category, token.casefold() if fold else token)] += 1
            return " "

        return pattern.sub(repl, s)

    if _HAS_DIGIT.search(s):
        s = take(_DATE, "date", s)
        s = take(_VERSION, "version", s)
        s = _IDENT_NUMBER.sub(" ", s)
        for m in _NUMBER.finditer(s):
            tok = m.group(0).replace(" ", "").casefold().replace("percent", "%")
            tokens[("number", tok)] += 1
    s = take(_NORMATIVE, "decision", s, fold=False) if _HAS_NORMATIVE.search(s) else s
    for m in _NUMBER_WORD.finditer(s):
        tokens[("number", m.group(0).casefold())] += 1
    for word in _ALPHA_WORD.findall(s):
        canon = _decision_canon(word)
        if canon:
            tokens[("decision", canon)] += 1
    for m in _DECISION_PHRASE.finditer(s):
        phrase = m.group(0).casefold()
        tokens[("decision", "end-of-life" if phrase.startswith("end") else phrase)] += 1
    return tokens


def _undo_typo_fixes(before: str, after: str) -> str:
    """``after`` with words that merely fix a typo of a ``before`` word put back.

    A word that is new in ``after`` and within ``fuzz.ratio`` >= 80 of a word
    that disappeared from ``before`` is a spelling fix ("accpetance" ->
    "acceptance"), unless the old word was itself a different decision word.
    """
    wb = {w.casefold() for w in _WORD.findall(before)}
    wa = {w.casefold() for w in _WORD.findall(after)}
    gone = sorted(wb - wa)
    new = sorted(wa - wb)
    if not gone or not new:
        return after
    mapping: dict[str, str] = {}
    for w in new:
        best = process.extractOne(w, gone, scorer=fuzz.ratio, processor=None, score_cutoff=80)
        if best is None:
            continue
        g = best[0]
        g_tokens = _material_tokens(g)
        if g_tokens and g_tokens != _material_tokens(w):
            continue
        mapping[w] = g
    if not mapping:
        return after
    return _WORD.sub(lambda m: mapping.get(m.group(0).casefold(), m.group(0)), after)


def _format_reason(category: str, removed: list[str], added: list[str]) -> str:
    if category == "decision":
        left = ", ".join(f"'{t}'" for t in removed) or "(none)"
        right = ", ".join(f"'{t}'" for t in added) or "(none)"
        return f"decision word: {left} → {right}"
    if removed and added:
        return f"{category} {', '.join(removed)} → {', '.join(added)}"
    if removed:
        return f"{category} {', '.join(removed)} removed"
    return f"{category} {', '.join(added)} added"


def _is_ref_entry(sentence: str | None) -> bool:
    return bool(sentence) and bool(_REF_ENTRY.match(sentence))


def _cancel_spelled_figures(words_side: Counter[Token], digits_side: Counter[Token]) -> None:
    """Drop figures that only changed between digits and words, from both sides."""
    for (category, value), n in list(words_side.items()):
        digit = _CARDINAL_VALUE.get(value)
        if category != "number" or digit is None:
            continue
        k = min(n, digits_side[("number", digit)])
        if k:
            words_side[(category, value)] -= k
            digits_side[("number", digit)] -= k
    words_side += Counter()  # drop zero counts
    digits_side += Counter()


def _is_weak(token: Token) -> bool:
    category, value = token
    if category == "decision":
        return value in _WEAK_DECISIONS
    return category == "number" and value.isalpha()


def _prose_words(text: str) -> Counter[str]:
    return Counter(w.casefold() for w in _PROSE_WORD.findall(_scrub(text)))


@dataclass
class _ClaimTokens:
    before: Counter[Token]
    after: Counter[Token]
    paired: bool  # a modified claim: weak tokens may be reported
    reportable: bool  # False for bibliography entries: they only cancel moves


def material_reasons(old: str, new: str, claims: list[ClaimChange] | None = None) -> list[str]:
    """Human-readable reasons why the change from ``old`` to ``new`` is material.

    - Header fields (see :func:`header_fields`): any change except housekeeping
      fields (:data:`HOUSEKEEPING_HEADERS`; adding a ``Resolution`` is material).
    - In changed claims only: numbers, dates, versions and status/decision words
      that occur on one side but not the other. Tokens are compared as multisets
      pooled over all changed claims (so moved, merged or re-split sentences
      cancel out), and each surviving difference is reported against the claim
      it came from. Weak tokens (negations, RFC 2119 keywords, number words)
      only count when they flip inside a modified claim; bibliography entries
      and link targets never count on their own. Digits inside URLs, link
      targets, references (PEP 8, RFC 822, #123) and footnote markers are
      ignored, and spelling fixes ("accpetance" -> "acceptance") are undone first.
    - Volume: at least :data:`MATERIAL_PROSE_WORDS` net new (or dropped) words
      of prose, even without any figure in them.

    An empty list means the change is not material.
    """
    if claims is None:
        claims = _claim_diff_all(old, new)
    old_items = _header_items(old)
    new_items = _header_items(new)
    reasons = _header_reasons(old_items, new_items)
    header_units = set(_header_units(old)) | set(_header_units(new))

    entries: list[_ClaimTokens] = []
    words_before: Counter[str] = Counter()
    words_after: Counter[str] = Counter()
    for c in claims:
        if c.before in header_units or c.after in header_units:
            continue  # header fields are judged above, field by field
        ref = _is_ref_entry(c.before) or _is_ref_entry(c.after)
        if c.before is not None and c.after is not None:
            after = _undo_typo_fixes(c.before, c.after)
            entry = _ClaimTokens(_material_tokens(c.before), _material_tokens(after), True, not ref)
        else:
            entry = _ClaimTokens(
                _material_tokens(c.before) if c.before else Counter(),
                _material_tokens(c.after) if c.after else Counter(),
                False,
                not ref,
            )
        if not ref:
            words_before.update(_prose_words(c.before or ""))
            words_after.update(_prose_words(c.after or ""))
        if entry.before != entry.after:
            entries.append(entry)

    pooled_before: Counter[Token] = Counter()
    pooled_after: Counter[Token] = Counter()
    for e in entries:
        pooled_before.update(e.before)
        pooled_after.update(e.after)
    left_removed = pooled_before - pooled_after
    left_added = pooled_after - pooled_before
    _cancel_spelled_figures(left_removed, left_added)
    _cancel_spelled_figures(left_added, left_removed)

    seen: set[str] = set()
    for e in entries:
        if not e.reportable:
            continue
        removed = (e.before - e.after) & left_removed
        added = (e.after - e.before) & left_added
        if not e.paired:
            removed = Counter({t: n for t, n in removed.items() if not _is_weak(t)})
            added = Counter({t: n for t, n in added.items() if not _is_weak(t)})
        if not removed and not added:
            continue
        left_removed -= removed
        left_added -= added
        for category in ("decision", "date", "version", "number"):
            r = sorted(t for (cat, t), n in removed.items() if cat == category for _ in range(n))
            a = sorted(t for (cat, t), n in added.items() if cat == category for _ in range(n))
            if r or a:
                reason = _format_reason(category, r, a)
                if reason not in seen:
                    seen.add(reason)
                    reasons.append(reason)

    new_words = sum((words_after - words_before).values())
    gone_words = sum((words_before - words_after).values())
    if max(new_words, gone_words) >= MATERIAL_PROSE_WORDS:
        reasons.append(f"text: {new_words} words of new prose, {gone_words} words dropped")

    if len(reasons) > MAX_REASONS:
        extra = len(reasons) - MAX_REASONS + 1
        reasons = reasons[: MAX_REASONS - 1] + [f"… and {extra} more"]
    return reasons


# --------------------------------------------------------------------------- classification


@dataclass
class ChangeResult:
    """How a source changed; see the module docstring for the kinds."""

    kind: ChangeKind
    similarity: float | None
    claims: list[ClaimChange] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "similarity": self.similarity,
            "claims": [c.as_dict() for c in self.claims],
            "reasons": list(self.reasons),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChangeResult:
        return cls(
            kind=data["kind"],
            similarity=data.get("similarity"),
            claims=[ClaimChange.from_dict(c) for c in data.get("claims", [])],
            reasons=list(data.get("reasons", [])),
        )


def classify_change(
    old: str, new: str, tau: float = DEFAULT_TAU, limit: int | None = 200
) -> ChangeResult:
    """Classify the change from ``old`` to ``new``.

    Same :func:`content_hash` -> ``unchanged`` (no similarity, no diff). Else
    ``similarity = fuzz.ratio(old, new) / 100``; below ``tau`` -> ``changed``
    with claims; otherwise ``material`` if :func:`material_reasons` finds any,
    else ``minor``. Reasons are computed from all claims; at most ``limit``
    claims are kept in the result.
    """
    if content_hash(old) == content_hash(new):
        return ChangeResult("unchanged", None, [], [])
    a = _normalise_newlines(old)
    b = _normalise_newlines(new)
    # A cutoff lets rapidfuzz skip most of the work above tau; below it we pay for
    # the exact value once more (rare: most changes are small).
    cutoff = min(max(tau, 0.0), 1.0) * 100.0
    score = fuzz.ratio(a, b, processor=None, score_cutoff=cutoff) if cutoff > 0 else 0.0
    if score == 0.0:
        score = fuzz.ratio(a, b, processor=None)
    similarity = score / 100.0
    claims = _claim_diff_all(a, b)
    kept = claims if limit is None else claims[:limit]
    if similarity < tau:
        return ChangeResult("changed", similarity, kept, [])
    reasons = material_reasons(a, b, claims)
    return ChangeResult("material" if reasons else "minor", similarity, kept, reasons)
