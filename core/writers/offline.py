"""The offline extractive writer: readable, cited sections with no model at all.

Sections are built from the most relevant sentences of their sources (ranked by
TF-IDF overlap with the heading and the question, de-duplicated, grouped per
source in document order), every sentence carrying its [n] citation. The
outline comes from clustering the retrieved pages; headings from each
cluster's dominant title terms. Revisions touch only sentences tied to changed
claims. Everything is deterministic.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from rapidfuzz import fuzz

from core.citations import cited_markers
from core.declared_fields import stated_fields
from core.facets import Facet, subject_of
from core.keyfacts import header_fields
from core.passages import sentence_key
from core.report_state import escape_heading_lines
from core.sentences import refers_back, split_cited_sentences
from core.states import ChangeKind
from core.text import (
    STOP,
    clean_inline,
    cosine,
    idf_table,
    quotable_sentences,
    terms,
    tfidf,
)
from core.writers.base import (
    ClaimUpdate,
    Draft,
    Evidence,
    EvidenceChange,
    OutlineItem,
    declared_news,
)
from core.writers.revision import revise_sentence, supersedes

FACT_FIELDS = ("status", "type", "created", "python-version")
_CLAUSE_SPLIT = re.compile(r"[:;?,()]|\b(?:and|or|which|what|how|while|whether)\b", re.I)


class OfflineWriter:
    """Extractive writer; implements core.writers.base.Writer."""

    name = "offline"
    mode_note = (
        "Written in offline extractive mode: every sentence is quoted from the source "
        "it cites; no language model was used."
    )

    def __init__(self, sentences_per_section: int = 7, per_source: int = 3) -> None:
        self.sentences_per_section = sentences_per_section
        self.per_source = per_source

    # -- planning -------------------------------------------------------------------
    def plan_queries(self, question: str, max_queries: int = 4) -> list[str]:
        """The whole question, then its topic (the first clause's naming words), then each
        later clause with the topic added: "which type-system features were proposed"
        alone matches every page that declares a status; with "static typing Python" it
        asks about typing. Asking words ("how", "is", "have been") are left out."""
        queries = [" ".join(question.split())]
        clauses = [subject_of(c) for c in _CLAUSE_SPLIT.split(question) if c and c.strip()]
        clauses = [c for c in clauses if len(terms(c)) >= 2]
        if not clauses:
            return queries
        topic = clauses[0]
        for clause in clauses:
            query = clause if clause == topic else f"{clause} {topic}"
            if query not in queries:
                queries.append(query)
        return queries[:max_queries]

    def propose_outline(
        self,
        question: str,
        evidence: Sequence[Evidence],
        max_sections: int = 6,
        facets: Sequence[Facet] = (),
    ) -> list[OutlineItem]:
        docs = list(evidence)
        if not docs:
            return []
        known = {e.marker for e in docs}
        by_facet = [
            OutlineItem(f.name, 2, tuple(m for m in f.markers if m in known)) for f in facets
        ]
        if sum(1 for item in by_facet if item.markers) >= 2:  # the question's own parts
            return [item for item in by_facet if item.markers][:max_sections]
        bags = [terms(f"{e.title} " * 3 + e.content[:4000]) for e in docs]
        idf = idf_table(bags)
        vecs = [tfidf(b, idf) for b in bags]
        k = max(1, min(max_sections, round(len(docs) ** 0.5) + 1, len(docs)))
        clusters = _agglomerate(vecs, k)
        title_idf = idf_table(terms(e.title) for e in docs)
        items: list[tuple[int, OutlineItem]] = []
        used: set[str] = set()
        for members in clusters:
            members = sorted(members, key=lambda i: (docs[i].rank, docs[i].marker))
            heading = _heading_for([docs[i] for i in members], title_idf, question)
            base, n = heading, 2
            while heading.casefold() in used:
                heading, n = f"{base} ({n})", n + 1
            used.add(heading.casefold())
            best = min(docs[i].rank for i in members)
            items.append((best, OutlineItem(heading, 2, tuple(docs[i].marker for i in members))))
        return [item for _, item in sorted(items, key=lambda x: (x[0], x[1].heading))]

    # -- writing ----------------------------------------------------------------------
    def write_section(self, question: str, heading: str, evidence: Sequence[Evidence]) -> Draft:
        chosen = self._select(question, heading, evidence, self.sentences_per_section)
        paragraphs = []
        used: list[int] = []
        for ev, sentences in chosen:
            paragraphs.append(_paragraph(ev, sentences))
            used.append(ev.marker)
        return Draft(body=escape_heading_lines("\n\n".join(paragraphs)), markers=used)

    def revise_section(
        self,
        question: str,
        heading: str,
        old_body: str,
        changes: Sequence[EvidenceChange],
        new_evidence: Sequence[Evidence],
        claims: Sequence[ClaimUpdate] = (),
    ) -> Draft:
        by_sentence: dict[str, list[ClaimUpdate]] = {}
        for claim in claims:
            by_sentence.setdefault(sentence_key(claim.sentence), []).append(claim)
        paragraphs: list[str] = []
        for para in old_body.split("\n\n"):
            if para.lstrip().startswith(("```", "    ")):
                paragraphs.append(para)  # code is kept verbatim
                continue
            lines = para.split("\n") if _is_list(para) else [para]
            kept_lines = []
            for line in lines:
                kept: list[str] = []
                for sentence in split_cited_sentences(line):
                    updates = by_sentence.get(sentence_key(sentence))
                    if not updates:
                        kept.append(sentence)
                        continue
                    for revised in revise_sentence(sentence, updates):
                        if revised not in kept:
                            kept.append(revised)
                if kept:
                    kept_lines.append(" ".join(kept))
            if kept_lines:
                paragraphs.append("\n".join(kept_lines) if len(lines) > 1 else kept_lines[0])
        _state_declared_news(paragraphs, changes)
        if new_evidence:
            room = max(2, self.sentences_per_section // 2)
            for ev, sentences in self._select(question, heading, new_evidence, room):
                fresh = []
                for sentence in [s for s in [fact_sentence(ev)] if s] + sentences:
                    cited = _cite(sentence, ev.marker)
                    # a new fact that contradicts what the section says about the same
                    # thing replaces that sentence instead of standing beside it
                    if not _replace_superseded(paragraphs, cited):
                        fresh.append(cited)
                if fresh:
                    paragraphs.append(" ".join(fresh))
        body = escape_heading_lines("\n\n".join(paragraphs))
        return Draft(body=body, markers=cited_markers(body))

    def summarise_change(self, title: str, change: EvidenceChange) -> str:
        if change.kind == ChangeKind.GONE:
            return f"{title}: the page no longer exists."
        counts = Counter(c.kind for c in change.claims)
        parts = [f"{n} {kind}" for kind, n in sorted(counts.items())]
        what = "; ".join(change.reasons[:3]) if change.reasons else "wording"
        claims = f" ({', '.join(parts)} claims)" if parts else ""
        return f"{title}: {change.kind} — {what}{claims}."

    # -- selection ----------------------------------------------------------------------
    def _select(
        self, question: str, heading: str, evidence: Sequence[Evidence], limit: int
    ) -> list[tuple[Evidence, list[str]]]:
        candidates: list[tuple[Evidence, int, str]] = []
        for ev in evidence:
            for pos, s in enumerate(quotable_sentences(ev.content)):
                candidates.append((ev, pos, s))
        if not candidates:
            return []
        idf = idf_table(terms(s) for _, _, s in candidates)
        target = tfidf(terms(heading) * 2 + terms(question), idf)
        title_vecs = {ev.marker: tfidf(terms(ev.title), idf) for ev in evidence}
        scored = sorted(
            (
                (
                    -(
                        cosine(tfidf(terms(s), idf), target)
                        + 0.3 * cosine(title_vecs[ev.marker], target)
                    )
                    * (MARKETING_PENALTY if _selling(s) else 1.0),
                    ev.rank,
                    pos,
                    ev.marker,
                    s,
                )
                for ev, pos, s in candidates
            ),
        )
        # a section drawing on many sources quotes fewer sentences of each, so it can
        # cite more of them (at least two each)
        per_source = max(2, min(self.per_source, limit // max(1, len(evidence))))
        picked: dict[int, list[tuple[int, str]]] = {}
        order: list[int] = []
        chosen_texts: list[str] = []
        lookup = {ev.marker: ev for ev in evidence}
        for neg, _rank, pos, marker, s in scored:
            if len(chosen_texts) >= limit or neg > -0.02:
                break
            if len(picked.get(marker, [])) >= per_source:
                continue
            if any(fuzz.token_set_ratio(s, t) > 85 for t in chosen_texts):
                continue
            group = [(pos, s)]
            if refers_back(s):  # "It is the largest …": only with the sentence before it
                before = quotable_sentences(lookup[marker].content)[pos - 1] if pos else None
                if before is None or refers_back(before):
                    continue
                if (pos - 1, before) not in picked.get(marker, []):
                    group.insert(0, (pos - 1, before))
            else:
                intro = _introduction(s, pos, lookup[marker], chosen_texts)
                if intro is not None and intro not in picked.get(marker, []):
                    group.insert(0, intro)
            picked.setdefault(marker, []).extend(group)
            if marker not in order:
                order.append(marker)
            chosen_texts.extend(t for _p, t in group)
        for marker in picked:
            picked[marker] = list(dict.fromkeys(picked[marker]))
        return [(lookup[m], [s for _, s in sorted(picked[m])]) for m in order]


# -- helpers --------------------------------------------------------------------------
_OPENING_NAME = re.compile(r"[A-Z][\w'’-]*")


def _short_name(sentence: str, title: str) -> str | None:
    """The fuller name a sentence's opening word shortens, read from its page's title:
    "Saltmarsh was founded …" on a page titled "Saltmarsh Cells SaltCore module" →
    "Saltmarsh Cells" (None when the sentence opens with no such short form)."""
    m = _OPENING_NAME.match(sentence)
    if m is None:
        return None
    words = title.split()
    for i, word in enumerate(words[:-1]):
        if word == m.group(0) and words[i + 1][:1].isupper():
            full = f"{word} {words[i + 1]}"
            return None if sentence.startswith(full) else full
    return None


def _introduction(
    sentence: str, pos: int, ev: Evidence, chosen: Sequence[str]
) -> tuple[int, str] | None:
    """The page's sentence that introduces the name ``sentence`` opens with in short
    form ("Saltmarsh Cells launched …" before "Saltmarsh was founded …"), when nothing
    quoted so far names it in full; None when there is none before it."""
    full = _short_name(sentence, clean_inline(ev.title))
    if full is None or any(full in text for text in chosen):
        return None
    earlier = quotable_sentences(ev.content)[:pos]
    return next(((i, text) for i, text in enumerate(earlier) if full in text), None)


#: words of brochure copy: a sentence selling rather than stating scores lower
_MARKETING = re.compile(
    r"\b(?:world[- ]class|leading|best[- ]in[- ]class|cutting[- ]edge|state[- ]of[- ]the[- ]art|"
    r"innovative|revolutionary|seamless(?:ly)?|unparalleled|unmatched|trusted|premier|"
    r"game[- ]chang\w*|next[- ]generation|industry[- ]leading|exceptional|proud(?:ly)?|"
    r"passionate|empower\w*|delight\w*|award[- ]winning)\b|!",
    re.I,
)
MARKETING_PENALTY = 0.2  # a brochure sentence scores this share: quoted only when nothing else fits


def _selling(sentence: str) -> bool:
    """Brochure copy: at least two selling words, or an exclamation mark."""
    return len(_MARKETING.findall(sentence)) >= 2 or "!" in sentence


def fact_sentence(ev: Evidence) -> str | None:
    """A one-line summary of a source's header fields (status, type, dates), if any."""
    fields = header_fields(ev.content)
    facts = [f"{k.capitalize()}: {fields[k]}" for k in FACT_FIELDS if fields.get(k)]
    if not fields.get("status") or not facts:
        return None
    title = clean_inline(ev.title) or ev.url
    return f"{title} — {'; '.join(facts)}."


def _paragraph(ev: Evidence, sentences: list[str]) -> str:
    fact = fact_sentence(ev)
    lines = ([fact] if fact else []) + sentences
    return " ".join(_cite(s, ev.marker) for s in lines)


def _cite(sentence: str, marker: int) -> str:
    """``Sentence [n].`` — the marker inside the sentence, before its final stop."""
    if sentence[-1:] in ".!?":
        return f"{sentence[:-1]} [{marker}]{sentence[-1]}"
    return f"{sentence} [{marker}]"


def _state_declared_news(paragraphs: list[str], changes: Sequence[EvidenceChange]) -> None:
    """A cited page whose status changed gets its new status stated in the section (a
    summary of its declared fields before the first sentence citing it), unless a sentence
    citing it already states that field."""
    for change in changes:
        labels = declared_news(change)
        if not labels or change.new is None:
            continue
        fact = fact_sentence(change.new)
        citing = [
            (i, sentence)
            for i, para in enumerate(paragraphs)
            for sentence in split_cited_sentences(para)
            if change.marker in cited_markers(sentence)
        ]
        if fact is None or not citing:
            continue
        said = {
            label.casefold() for _i, sentence in citing for label, _v in stated_fields(sentence)
        }
        if all(label.casefold() in said for label in labels):
            continue
        i, first = citing[0]
        paragraphs[i] = paragraphs[i].replace(first, f"{_cite(fact, change.marker)} {first}", 1)


def _replace_superseded(paragraphs: list[str], sentence: str) -> bool:
    """Put ``sentence`` in place of the first sentence it supersedes; False if none."""
    for i, para in enumerate(paragraphs):
        if _is_list(para) or para.lstrip().startswith(("```", "    ")):
            continue
        parts = split_cited_sentences(para)
        for j, old in enumerate(parts):
            if supersedes(sentence, old):
                parts[j] = sentence
                paragraphs[i] = " ".join(dict.fromkeys(parts))
                return True
    return False


def _is_list(para: str) -> bool:
    return all(
        line.lstrip().startswith(("- ", "* ", "+ ", "|")) or line[:1].isdigit()
        for line in para.split("\n")
        if line.strip()
    )


def _agglomerate(vecs: list[dict[str, float]], k: int) -> list[list[int]]:
    """Average-link agglomerative clustering down to k clusters (deterministic)."""
    clusters = [[i] for i in range(len(vecs))]
    sim = {(i, j): cosine(vecs[i], vecs[j]) for i in range(len(vecs)) for j in range(i)}

    def link(a: list[int], b: list[int]) -> float:
        total = sum(sim[(max(i, j), min(i, j))] for i in a for j in b)
        return total / (len(a) * len(b))

    while len(clusters) > k:
        best = (-1.0, 0, 0)
        for x in range(len(clusters)):
            for y in range(x):
                s = link(clusters[x], clusters[y])
                if s > best[0]:
                    best = (s, x, y)
        _, x, y = best
        clusters[y] = sorted(clusters[y] + clusters[x])
        del clusters[x]
    return clusters


def _heading_for(members: list[Evidence], title_idf: dict[str, float], question: str) -> str:
    """A heading from the cluster's dominant title words (title-cased, 2–4 words)."""
    if len(members) == 1:
        return _short_title(members[0].title)
    phrase = _shared_phrase([clean_inline(ev.title) for ev in members])
    if phrase:
        return phrase
    words: Counter[str] = Counter()
    surface: dict[str, str] = {}
    for ev in members:
        seen: set[str] = set()
        for w in re.findall(r"[^\W_][\w-]*", clean_inline(ev.title)):
            key = terms(w)
            if not key or key[0] in seen:
                continue
            seen.add(key[0])
            words[key[0]] += 1
            surface.setdefault(key[0], w)
    ranked = sorted(
        words, key=lambda t: (-(words[t] * title_idf.get(t, 1.0)) if words[t] > 1 else 0, t)
    )
    top = [surface[t] for t in ranked if words[t] > 1][:3]
    if not top:
        return _short_title(members[0].title)
    top = [w if w.isupper() else w.capitalize() if i == 0 else w.lower() for i, w in enumerate(top)]
    return top[0] if len(top) == 1 else f"{', '.join(top[:-1])} and {top[-1]}"


def _shared_phrase(titles: list[str]) -> str | None:
    """The longest run of two or more words (no stop word at either end) that at least
    two titles share — "Type hints" from "Type Hints for …" and "… Type Hints" — as a
    heading; None when no titles share one."""
    counts: Counter[tuple[str, ...]] = Counter()
    surface: dict[tuple[str, ...], str] = {}
    for title in titles:
        words = re.findall(r"[^\W_][\w'-]*", title)
        seen: set[tuple[str, ...]] = set()
        for n in (4, 3, 2):
            for i in range(len(words) - n + 1):
                run = words[i : i + n]
                if run[0].casefold() in STOP or run[-1].casefold() in STOP:
                    continue
                key = tuple(w.casefold() for w in run)
                if key not in seen:
                    seen.add(key)
                    counts[key] += 1
                    surface.setdefault(key, " ".join(run))
    shared = [k for k, n in counts.items() if n >= 2]
    if not shared:
        return None
    best = max(shared, key=lambda k: (len(k), counts[k], -len(surface[k])))
    text = surface[best]
    return text[0].upper() + text[1:] if not text[:1].isupper() else text


def _short_title(title: str, limit: int = 70) -> str:
    text = clean_inline(title).strip(" .") or "Sources"
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"
