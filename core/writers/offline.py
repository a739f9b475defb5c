"""The offline extractive writer: readable, cited sections with no model at all.

Sections are built from the most relevant sentences of their sources (ranked by
TF-IDF overlap with the heading and the question, de-duplicated, grouped per
source in document order), every sentence carrying its [n] citation. The
outline comes from clustering the retrieved pages; headings from each
cluster's dominant title terms. Revisions touch only sentences tied to changed
claims. Everything is deterministic.

The choice of sentences is ``core.writers.sentence_choice``; the clustering and its
headings are ``core.writers.outline_clusters``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from core.domain.citations import cited_markers, closed_code_spans
from core.domain.declared_fields import stated_fields
from core.domain.facets import Facet, subject_of
from core.domain.keyfacts import declared_line
from core.domain.passages import sentence_key
from core.domain.prune import is_fact_line
from core.domain.report_render import escape_heading_lines
from core.domain.sentences import claim_groups, name_page, split_cited_sentences
from core.domain.text import clean_inline, idf_table, page_terms, phrase_pattern, terms, tfidf
from core.states import ChangeKind
from core.writers.base import (
    ClaimUpdate,
    Draft,
    Evidence,
    EvidenceChange,
    Extension,
    OutlineItem,
    declared_news,
)
from core.writers.outline_clusters import (
    agglomerate,
    heading_for,
    linker,
    theme_name,
    themed,
)
from core.writers.revision import merge_summaries, revise_sentence, supersedes
from core.writers.sentence_choice import select_sentences

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

    def sentence_limit(self, pages: int) -> int:
        """The sentences a new section quotes: ``sentences_per_section``; a section drawing
        on several pages (three or more), two per page, up to twice that. A theme that
        took in pages sharing no theme of their own holds what several sections did; at
        seven sentences, a report on the sample's folder fell from 12 cited pages to 8."""
        base = self.sentences_per_section
        return base if pages < 3 else max(base, min(2 * pages, 2 * base))

    def new_sentence_limit(self, pages: int) -> int:
        """The sentences an update quotes from the new pages it adds to a section: half a
        new section's, and two per page when more pages came (up to a new section's
        most). Every new page sent here has passed the report's source budget; at three
        sentences for however many came, a Swift concurrency update wrote one of the four
        actor proposals placed in "Actors and isolation" ("`sending` parameter and result
        values" and "`@isolated(any)` Function Types" were left out, while the review
        said all four fit). The section's word budget then trims (``fit_words``)."""
        base = max(2, self.sentences_per_section // 2)
        return max(base, min(2 * pages, 2 * self.sentences_per_section))

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
        bags = [page_terms(e.title, e.content[:4000]) for e in docs]
        idf = idf_table(bags)
        vecs = [tfidf(b, idf) for b in bags]
        k = max(1, min(max_sections, round(len(docs) ** 0.5) + 1, len(docs)))
        title_idf = idf_table(terms(e.title) for e in docs)
        link = linker(vecs)
        clusters = themed(
            agglomerate(len(vecs), k, link),
            link,
            lambda c: theme_name([docs[i] for i in c], title_idf) is not None,
        )
        items: list[tuple[int, OutlineItem]] = []
        used: set[str] = set()
        for members in clusters:
            members = sorted(members, key=lambda i: (docs[i].rank, docs[i].marker))
            inside = set(members)
            rest = [d for i, d in enumerate(docs) if i not in inside]
            heading = heading_for([docs[i] for i in members], title_idf, question, rest)
            base, n = heading, 2
            while heading.casefold() in used:
                heading, n = f"{base} ({n})", n + 1
            used.add(heading.casefold())
            best = min(docs[i].rank for i in members)
            items.append((best, OutlineItem(heading, 2, tuple(docs[i].marker for i in members))))
        return [item for _, item in sorted(items, key=lambda x: (x[0], x[1].heading))]

    # -- writing ----------------------------------------------------------------------
    def write_section(
        self, question: str, heading: str, evidence: Sequence[Evidence], *, brief: bool = False
    ) -> Draft:
        # reading costs nothing here: ``brief`` changes nothing
        chosen = select_sentences(
            question, heading, evidence, self.sentence_limit(len(evidence)), self.per_source
        )
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
                for group in claim_groups(split_cited_sentences(line)):
                    # the sentences a citation covers: a dropped claim takes its lead-in
                    *lead, sentence = group
                    updates = by_sentence.get(sentence_key(sentence))
                    if not updates:
                        kept.extend([*lead, sentence])
                        continue
                    revised = [r for r in revise_sentence(sentence, updates) if r not in kept]
                    if revised:
                        kept.extend([*lead, *revised])
                if kept:
                    kept_lines.append(" ".join(merge_summaries(kept)))
            if kept_lines:
                paragraphs.append("\n".join(kept_lines) if len(lines) > 1 else kept_lines[0])
        _state_declared_news(paragraphs, changes)
        if new_evidence:
            room = self.new_sentence_limit(len(new_evidence))
            for ev, sentences in select_sentences(
                question, heading, new_evidence, room, self.per_source
            ):
                fresh: list[str] = []
                named_at: int | None = None  # where the line naming the page went
                for i, sentence in enumerate(_lines(ev, sentences)):
                    cited = _cite(sentence, ev.marker)
                    # a new fact that contradicts what the section says about the same
                    # thing replaces that sentence instead of standing beside it
                    at = _replace_superseded(paragraphs, cited)
                    if at is None:
                        fresh.append(cited)
                    elif i == 0:
                        named_at = at
                if fresh and named_at is not None:
                    # the rest follows the line that names the page: in a paragraph of
                    # their own, "the developers" or "this proposal" would be nobody's
                    _insert_after(paragraphs, named_at, ev.marker, fresh)
                elif fresh:
                    fresh[0] = name_page(fresh[0], clean_inline(ev.title))
                    paragraphs.append(" ".join(fresh))
        _drop_former_status(paragraphs, old_body, changes)
        body = escape_heading_lines("\n\n".join(paragraphs))
        return Draft(body=body, markers=cited_markers(body))

    def extend_sections(self, question: str, parts: Sequence[Extension]) -> list[Draft]:
        # one section at a time: extracting costs no request
        return [
            self.revise_section(question, p.heading, p.body, p.changes, p.new_evidence)
            for p in parts
        ]

    def summarise_change(self, title: str, change: EvidenceChange) -> str:
        if change.kind == ChangeKind.GONE:
            return f"{title}: the page no longer exists."
        counts = Counter(c.kind for c in change.claims)
        parts = [f"{n} {kind}" for kind, n in sorted(counts.items())]
        what = "; ".join(change.reasons[:3]) if change.reasons else "wording"
        claims = f" ({', '.join(parts)} claims)" if parts else ""
        return f"{title}: {change.kind} — {what}{claims}."


# -- helpers --------------------------------------------------------------------------
def fact_sentence(ev: Evidence) -> str | None:
    """A one-line summary of what a source declares of itself — its status or stage, and
    its other lifecycle fields (versions, milestones, dates, what replaced it), under the
    page's own labels and whatever the fields are called (``declared_line``) — if it
    declares a status or stage."""
    return declared_line(clean_inline(ev.title) or ev.url, ev.content)


def _paragraph(ev: Evidence, sentences: list[str]) -> str:
    return " ".join(_cite(s, ev.marker) for s in _lines(ev, sentences))


def _lines(ev: Evidence, sentences: list[str]) -> list[str]:
    """A source's paragraph: its fact line, if any, then its sentences — the first named
    after the page when it speaks of "this proposal" and no fact line names it."""
    fact = fact_sentence(ev)
    if fact:
        return [fact, *sentences]
    if not sentences:
        return []
    return [name_page(sentences[0], clean_inline(ev.title)), *sentences[1:]]


def _cite(sentence: str, marker: int) -> str:
    """``Sentence [n].`` — the marker inside the sentence, before its final stop; a
    backtick the sentence leaves open (it began inside a code span of its page) dropped,
    or the citation and the sentences after it would read as code."""
    sentence = closed_code_spans(sentence)
    if sentence[-1:] in ".!?":
        return f"{sentence[:-1]} [{marker}]{sentence[-1]}"
    return f"{sentence} [{marker}]"


def _state_declared_news(paragraphs: list[str], changes: Sequence[EvidenceChange]) -> None:
    """A cited page whose status changed gets its new status stated in the section (a
    summary of its declared fields before the first sentence citing it alone, else the
    first citing it), unless a sentence citing it already states that field. Where it
    has no sentence of its own, only one it shares in another page's paragraph (opened
    by that page's status line), its status goes in a paragraph of its own after that
    one: the release report's "Python 3.5 Release Schedule" paragraph had gathered the
    status lines of four other schedules before the sentence all five share."""
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
        alone = [(i, s) for i, s in citing if cited_markers(s) == [change.marker]]
        i, first = (alone or citing)[0]
        line = _cite(fact, change.marker)
        opener = split_cited_sentences(paragraphs[i])[0]
        if alone or not is_fact_line(opener) or change.marker in cited_markers(opener):
            paragraphs[i] = paragraphs[i].replace(first, f"{line} {first}", 1)
        else:  # after the status lines set apart before it: in the order they changed
            at = i + 1
            while at < len(paragraphs) and _status_alone(paragraphs[at]):
                at += 1
            paragraphs.insert(at, line)


_DECLARED = re.compile(r"^header (?P<label>[^:]+): (?P<before>.+?) → (?P<after>.+)$")


def _former_statuses(changes: Sequence[EvidenceChange]) -> dict[int, re.Pattern[str]]:
    """marker → the status (or stage) its page declared before this update, as a
    whole-phrase pattern: "Draft" of a page now Final. Only the value's first clause
    ("Active review" of "Active review (March 1 – 14)"), and not when the new value holds
    it ("Accepted" → "Accepted with revisions")."""
    out: dict[int, re.Pattern[str]] = {}
    for change in changes:
        labels = {label.casefold() for label in declared_news(change)}
        for reason in change.reasons:
            m = _DECLARED.match(reason)
            if m is None or m.group("label").strip().casefold() not in labels:
                continue
            before = re.split(r"[(;,]", m.group("before"), maxsplit=1)[0].strip(" .*`")
            after = m.group("after").casefold()
            if len(before) >= 4 and before.casefold() not in after:
                out[change.marker] = phrase_pattern(before, ignore_case=True)
    return out


def _drop_former_status(
    paragraphs: list[str], old_body: str, changes: Sequence[EvidenceChange]
) -> None:
    """Leave out the sentences this revision would add that name their page's former
    status ("The HGA published draft rules on 4 December 2025 …" quoted anew from a page
    whose rules are now Final): true of their day, they read as the news; the page's
    status line says where it stands now. Sentences the section had are not touched,
    nor a status line."""
    former = _former_statuses(changes)
    if not former:
        return
    for i, para in enumerate(paragraphs):
        if _is_list(para):
            continue
        parts = split_cited_sentences(para)
        kept = [
            s
            for s in parts
            if s in old_body
            or is_fact_line(s)
            or not any(m in former and former[m].search(s) for m in cited_markers(s))
        ]
        if len(kept) != len(parts):
            paragraphs[i] = " ".join(kept)
    paragraphs[:] = [p for p in paragraphs if p.strip()]


def _status_alone(para: str) -> bool:
    """Is the paragraph one page's status line and nothing else?"""
    parts = split_cited_sentences(para)
    return len(parts) == 1 and is_fact_line(parts[0])


def _replace_superseded(paragraphs: list[str], sentence: str) -> int | None:
    """Put ``sentence`` in place of the first sentence it supersedes; the index of its
    paragraph, or None if it supersedes none."""
    for i, para in enumerate(paragraphs):
        if _is_list(para) or para.lstrip().startswith(("```", "    ")):
            continue
        parts = split_cited_sentences(para)
        for j, old in enumerate(parts):
            if supersedes(sentence, old):
                parts[j] = sentence
                paragraphs[i] = " ".join(dict.fromkeys(parts))
                return i
    return None


def _insert_after(paragraphs: list[str], at: int, marker: int, sentences: list[str]) -> None:
    """``sentences`` into paragraph ``at``, after the last sentence there citing
    ``marker``."""
    parts = split_cited_sentences(paragraphs[at])
    last = max((j for j, s in enumerate(parts) if marker in cited_markers(s)), default=-1)
    parts[last + 1 : last + 1] = [s for s in sentences if s not in parts]
    paragraphs[at] = " ".join(parts)


def _is_list(para: str) -> bool:
    return all(
        line.lstrip().startswith(("- ", "* ", "+ ", "|")) or line[:1].isdigit()
        for line in para.split("\n")
        if line.strip()
    )
