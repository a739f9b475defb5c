"""Revising one cited sentence whose supporting passages changed, without a model.

The sentence keeps its own words wherever the change can be carried over exactly:

- a declared field ("Capacity: 100 MW / 400 MWh" → "160 MW / 650 MWh") whose old value
  the sentence states is replaced by the new value;
- a prose passage the sentence paraphrases is aligned with the sentence word by word;
  the stretch they share is replaced by the new passage's stretch, so the sentence's own
  subject stays ("The Tessaly Storage Price Index … stood at $134/kWh", not "The index
  stood at").

The result must state every new figure and status of the changed passages and none of
the old ones; otherwise the sentence is replaced by what the source now says, quoted
(fields as "Title — Field: value"). A sentence whose passages are all gone is dropped
(or loses only that citation when another source still backs it).
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from collections.abc import Sequence

from core.domain.citations import cited_markers, format_citation, strip_citations
from core.domain.declared_fields import field_of, stated_fields
from core.domain.passage_changes import STATUS_STEMS
from core.domain.passages import normalise, passages
from core.domain.text import clean_inline, stem
from core.states import ClaimOutcome
from core.writers.base import ClaimUpdate
from core.writers.edits import splice

_TOKEN = re.compile(r"[$€£¥]?\w+(?:[.,/]\w+)*%?")


def _material_tokens(text: str) -> Counter[str]:
    out: Counter[str] = Counter()
    for m in _TOKEN.finditer(clean_inline(text)):
        word = m.group(0)
        low = word.casefold().lstrip("$€£¥").rstrip("%")
        if any(c.isdigit() for c in word):
            out[low.replace(",", "")] += 1
        elif stem(low) in STATUS_STEMS or low in ("not", "no", "never"):
            out[stem(low)] += 1
    return out


def _states(text: str, old: str, new: str, original: str | None = None) -> bool:
    """Does ``text`` say the new passage's figures and statuses and none of the old ones?

    A figure of the old passage may stay as often as the new passage also has it, plus as
    often as the ``original`` sentence had it beyond what the old passage explains.
    """
    before, after = _material_tokens(old), _material_tokens(new)
    added, removed = after - before, before - after
    if not added and not removed:
        return False
    have = _material_tokens(text)
    had = _material_tokens(original if original is not None else text)
    if not all(have[t] >= n for t, n in added.items()):
        return False
    return all(have[t] <= after[t] + max(0, had[t] - before[t]) for t in removed)


def _has_figure(text: str) -> bool:
    return any(c.isdigit() for c in text)


def _article(text: str, at: int, word: str) -> str:
    """Fix "a"/"an" just before position ``at`` for the word that now follows it."""
    m = re.search(r"\b([Aa])(n?)\s+$", text[:at])
    if not m:
        return text
    wanted = "n" if word[:1].casefold() in "aeiou" else ""
    return text[: m.start(2)] + wanted + text[m.end(2) :]


def _substitute_field(text: str, old: tuple[str, str], new: tuple[str, str]) -> str | None:
    if normalise(old[0]) != normalise(new[0]):
        return None  # a renamed field ("Expected operation" → "Operation") changes meaning
    before = clean_inline(old[1]).replace("**", "").strip(" .")
    after = clean_inline(new[1]).replace("**", "").strip(" .")
    if not before or not after:
        return None
    m = re.search(rf"(?<!\w){re.escape(before)}(?!\w)", text, re.IGNORECASE)
    if not m:
        return None
    labelled = re.search(rf"{re.escape(old[0])}\W{{0,4}}$", text[: m.start()], re.IGNORECASE)
    if _material_tokens(before) != Counter() and not labelled and not _has_figure(before):
        # A status in prose ("a proposed project awaiting a decision") carries meaning the
        # rest of the sentence leans on; only a figure is safe to swap in place.
        return None
    found = m.group(0)
    if found[:1].islower() and not after[:2].isupper():
        after = after[:1].lower() + after[1:]
    out = text[: m.start()] + after + text[m.end() :]
    return _article(out, m.start(), after)


def _project(text: str, old: str, new: str) -> str | None:
    """Replace the stretch ``text`` shares with ``old`` by the matching stretch of ``new``."""
    s_tok = list(_TOKEN.finditer(text))
    o_tok = list(_TOKEN.finditer(old))
    n_tok = list(_TOKEN.finditer(new))
    if not s_tok or not o_tok or not n_tok:
        return None
    s_words = [m.group(0).casefold() for m in s_tok]
    o_words = [m.group(0).casefold() for m in o_tok]
    n_words = [m.group(0).casefold() for m in n_tok]
    blocks = [
        b
        for b in difflib.SequenceMatcher(
            None, s_words, o_words, autojunk=False
        ).get_matching_blocks()
        if b.size >= 2 or (b.size == 1 and any(c.isdigit() for c in s_words[b.a]))
    ]
    if not blocks:
        return None
    s_lo, s_hi = blocks[0].a, blocks[-1].a + blocks[-1].size
    o_lo, o_hi = blocks[0].b, blocks[-1].b + blocks[-1].size
    ops = difflib.SequenceMatcher(None, o_words, n_words, autojunk=False).get_opcodes()

    def to_new(i: int) -> int:
        for tag, i1, i2, j1, _j2 in ops:
            if i1 <= i < i2:
                return j1 + (i - i1) if tag == "equal" else j1
        return len(n_words)

    n_lo = 0 if (o_lo == 0 or s_lo == 0) else to_new(o_lo)
    n_hi = len(n_words) if (o_hi == len(o_words) or s_hi == len(s_words)) else to_new(o_hi)
    if n_hi <= n_lo:
        return None
    a = 0 if s_lo == 0 else s_tok[s_lo].start()
    b = len(text) if s_hi == len(s_words) else s_tok[s_hi - 1].end()
    c = 0 if n_lo == 0 else n_tok[n_lo].start()
    d = len(new) if n_hi == len(n_words) else n_tok[n_hi - 1].end()
    middle = new[c:d].strip()
    if a > 0 and middle[:1].isupper() and not middle[1:2].isupper():
        middle = middle[:1].lower() + middle[1:]
    return (text[:a] + middle + text[b:]).strip()


def _substitute(text: str, old: str, new: str) -> str | None:
    old_clean, new_clean = clean_inline(old), clean_inline(new)
    fo, fn = field_of(old_clean), field_of(new_clean)
    if fo and fn:
        out = _substitute_field(text, fo, fn)
    else:
        out = _project(text, old_clean.rstrip(".!?"), new_clean.rstrip(".!?"))
    if out is None or out == text or not _states(out, old, new, text):
        return None
    return out


def _cite(text: str, markers: Sequence[int]) -> str:
    """``text`` cited as one group, ``Text [1, 2].``: the way every writer cites (a
    revision had written ``[1][2]``, so a sentence cited ``[1, 2]`` when written read
    ``[1][2]`` once an update dropped a third source from it)."""
    text = text.strip().rstrip(".!?;:, ")
    return f"{text} {format_citation(markers)}."


FIELD_VALUE_CHARS = 80  # a longer "Label: text" line is prose, not a declared value


def _quoted(update: ClaimUpdate) -> list[str]:
    """What the source now says in place of the changed passages, as cited sentences: its
    changed fields as one line with the fields the sentence stated that the page still
    declares as they were (a revision keeps a project's size beside its new status), then
    its changed prose."""
    title = clean_inline(update.title).strip(" .") or "The source"
    fields: list[str] = []
    prose: list[str] = []
    changed = {
        field[0].casefold()
        for old, _new in update.passages
        if (field := field_of(clean_inline(old).lstrip("-*+• ")))
    }
    for exact in update.intact:  # what the sentence said that the page still declares
        field = field_of(clean_inline(exact).lstrip("-*+• ").strip())
        if field is None or field[0].casefold() in changed:
            continue
        value = field[1].replace("**", "").strip(" .")
        if len(value) <= FIELD_VALUE_CHARS:  # a value, not a list item's sentence
            fields.append(f"{field[0]}: {value}")
    for _old, new in update.passages:
        if new is None:
            continue
        for p in passages(new):
            text = clean_inline(p.text).lstrip("-*+• ").strip()
            field = field_of(text)
            if field is not None:
                fields.append(f"{field[0]}: {field[1].replace('**', '').strip(' .')}")
            elif len(text) >= 20 and text not in prose:
                prose.append(text)
    out = []
    if fields:
        out.append(_cite(f"{title} — {'; '.join(dict.fromkeys(fields))}", [update.marker]))
    out.extend(_cite(p, [update.marker]) for p in prose)
    return out


def _summary(sentence: str) -> tuple[str, list[tuple[str, str]]] | None:
    """(title, declared fields) of a summary of declared fields ("Title — Status:
    Accepted; Type: …"), else None."""
    head, sep, _tail = strip_citations(sentence).rstrip(".").partition(" — ")
    fields = stated_fields(sentence)
    return (head, fields) if sep and fields else None


def _revise_summary(
    sentence: str, summary: tuple[str, list[tuple[str, str]]], updates: Sequence[ClaimUpdate]
) -> list[str]:
    """A summary of declared fields (``_summary``), each field set to what the page
    declares now; a field the page no longer declares is left out."""
    markers = cited_markers(sentence)
    head = summary[0]
    fields: list[tuple[str, str] | None] = list(summary[1])
    for update in updates:
        for old, new in update.passages:
            before = field_of(clean_inline(old).lstrip("-*+• "))
            after = field_of(clean_inline(new).lstrip("-*+• ")) if new else None
            if before is None:
                continue
            if normalise(before[0]) == "title" and after is not None:
                head = _plain_value(after[1])
                continue
            for i, item in enumerate(fields):
                if item is not None and normalise(item[0]) == normalise(before[0]):
                    fields[i] = (item[0], _plain_value(after[1])) if after else None
    kept = [f"{label}: {value}" for label, value in (f for f in fields if f is not None)]
    if not kept:
        return []
    return [_cite(f"{head} — {'; '.join(kept)}", markers)]


def settle_summaries(
    body: str, updates: Sequence[ClaimUpdate]
) -> tuple[str, list[ClaimUpdate], list[ClaimUpdate]]:
    """(``body`` with each summary of declared fields whose every changed passage is a
    field set to what its page declares now, the updates still to do, those settled).

    "Literature Overview for Type Hints — Status: Draft [1]." after the page went Final
    needs no writer: the value is the page's own. A summary resting on anything that is
    not a field line (a title heading that changed, a passage gone with no field) is left
    to the writer, as is one not found in ``body`` as written."""
    groups: dict[str, list[ClaimUpdate]] = {}
    for u in updates:
        groups.setdefault(u.sentence, []).append(u)
    left: list[ClaimUpdate] = []
    settled: list[ClaimUpdate] = []
    for sentence, group in groups.items():
        fields_only = all(u.passages for u in group) and all(
            field_of(clean_inline(old).lstrip("-*+• ")) is not None
            for u in group
            for old, _new in u.passages
        )
        if _summary(sentence) is None or not fields_only or sentence not in body:
            left.extend(group)
            continue
        revised = " ".join(revise_sentence(sentence, group))
        if sentence in revised:  # no field of it moved (a label it does not state)
            left.extend(group)
            continue
        # every copy of it; nothing of it declared any more: it goes, with a space beside it
        body = splice(body, [m.span() for m in re.finditer(re.escape(sentence), body)], revised)
        settled.extend(group)
    return body, left, settled


def merge_summaries(sentences: Sequence[str]) -> list[str]:
    """Summaries of declared fields of one page and one thing, side by side ("Tarnwick —
    Status: FID [5]." then "Tarnwick — Thermal storage: 1,400 MWh [5].", as a revision
    writes a field beside the summary), read as one: "Tarnwick — Status: FID; Thermal
    storage: 1,400 MWh [5]." Fields whose labels repeat are not merged."""
    out: list[str] = []
    for sentence in sentences:
        merged = _merged(out[-1], sentence) if out else None
        if merged is None:
            out.append(sentence)
        else:
            out[-1] = merged
    return out


def _merged(first: str, second: str) -> str | None:
    markers = cited_markers(first)
    if not markers or cited_markers(second) != markers:
        return None
    a, b = _summary(first), _summary(second)
    if a is None or b is None:
        return None
    (head_a, fields_a), (head_b, fields_b) = ((head.strip(), f) for head, f in (a, b))
    labels_a = {normalise(label) for label, _value in fields_a}
    if head_a != head_b or labels_a & {normalise(label) for label, _value in fields_b}:
        return None
    joined = "; ".join(f"{label}: {value}" for label, value in [*fields_a, *fields_b])
    return _cite(f"{head_a} — {joined}", markers)


def _plain_value(value: str) -> str:
    return value.replace("**", "").replace("__", "").strip(" .")


def revise_sentence(sentence: str, updates: Sequence[ClaimUpdate]) -> list[str]:
    """The sentences that replace ``sentence`` (cited), [] to drop it."""
    summary = _summary(sentence)
    if summary is not None:
        return _revise_summary(sentence, summary, updates)
    markers = cited_markers(sentence)
    text = strip_citations(sentence).rstrip(".!?")
    gone = {
        u.marker
        for u in updates
        if u.outcome == ClaimOutcome.GONE and all(new is None for _old, new in u.passages)
    }
    original = text
    failed: list[ClaimUpdate] = []
    for update in updates:
        if update.marker in gone:
            continue
        for old, new in update.passages:
            if new is None:
                failed.append(update)
                break
            if text != original and _states(text, old, new, original):
                continue  # an earlier passage's substitution already says it
            result = _substitute(text, old, new)
            if result is None:
                failed.append(update)
                break
            text = result
    if failed:
        out: list[str] = []
        for update in dict.fromkeys(failed):
            out.extend(s for s in _quoted(update) if s not in out)
        return out
    remaining = [m for m in markers if m not in gone]
    if not remaining:
        return []
    return [_cite(text, remaining)]


_NAME = re.compile(r"(?<![.!?]\s)\b[A-Z][\w'-]+(?:\s+(?:of\s+)?[A-Z][\w'-]+)+")


#: capitalised only because they open a sentence: no part of the name that follows
_OPENERS = frozenset("the a an on in at by for from since this these our its".split())


def _names(text: str) -> list[frozenset[tuple[str, str]]]:
    """Each proper name's adjacent capitalised word pairs ("Copperline Storage"), so that
    "MWh Copperline Storage Park" and "Copperline Storage Park" share a name. In a
    summary of declared fields ("Title — Status: Draft; Type: Standards Track") only the
    title names the thing: field values are shared by many pages."""
    text = text.partition(" — ")[0]
    names: list[frozenset[tuple[str, str]]] = []
    for m in _NAME.finditer(text):
        words = [w.removesuffix("'s").casefold() for w in m.group(0).split() if w != "of"]
        words = [w for w in words if not w.isupper() or len(w) > 4]
        while words and words[0] in _OPENERS:  # "The Halvard Grid Authority" at a start
            words = words[1:]
        pairs = frozenset(zip(words, words[1:], strict=False))
        if pairs:
            names.append(pairs)
    return names


def _same_thing(a: str, b: str) -> bool:
    """Do ``a`` and ``b`` name one thing: a whole name of one found within a name of the
    other ("Copperline Storage Park" in "MWh Copperline Storage Park")? A shared part is
    not enough: "Package Manager Resources" and "Package Manager Target Based Dependency
    Resolution" are two proposals."""
    names_a, names_b = _names(a), _names(b)
    return any(x <= y or y <= x for x in names_a for y in names_b)


def _status_stems(text: str) -> set[str]:
    return {t for t in _material_tokens(text) if not any(c.isdigit() for c in t)}


def supersedes(new: str, old: str) -> bool:
    if stated_fields(old):
        return False  # a summary of a page's declared fields is revised from that page
    return _supersedes(new, old)


def _supersedes(new: str, old: str) -> bool:
    """Does ``new`` state a different status for a thing ``old`` names too?

    Both sentences name the same multi-word proper name and state a status or decision,
    and the statuses differ ("Copperline Storage Park … is awaiting a planning board
    decision" vs "… approved Copperline Storage Park on 3 March"). Figures alone never
    count: two numbers about one project often describe different things.
    """
    a, b = strip_citations(new), strip_citations(old)
    if not _same_thing(a, b):
        return False
    sa, sb = _status_stems(a), _status_stems(b)
    return bool(sa - sb and sb - sa)
