"""The LLM writer: any OpenAI-compatible chat server (OpenAI, vLLM, Ollama, llama.cpp).

Each writer operation renders one versioned template from ``prompts/`` and asks for
structured output (``chat.completions.parse`` with a pydantic model; servers that refuse
``json_schema``, as llama.cpp does, get ``json_object`` plus the schema instead). Replies
are validated with pydantic and checked (citations, headings, emptiness); an unusable
reply gets one repair round, then the writer raises WriterFailed and the engine keeps
that section as it was.

Sections come back with a quote per cited sentence and source (``SectionText.quotes``);
each quote is checked against the text of the source the model was given, and only the
quotes found there reach ``Draft.quotes`` (the engine anchors claims with them). A
revision gets the claims whose passages changed (``ClaimUpdate``) as ``<claim>`` blocks;
a reply that still states one of those sentences unchanged gets one repair round, and if
the repair does no better the draft is returned with a "needs attention" note.

Requests, retries, the per-run budget, cost records and the call log are the model
client's (``core.writers.model_client``); the bench's judge is ``core.bench.judge``.
Fetched text is untrusted: it only ever enters a prompt inside ``<source>``
tags, with the instruction not to follow directions found there.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import openai
from pydantic import BaseModel, Field, ValidationError, field_validator
from rapidfuzz import fuzz, process

from core import costs
from core.citations import Citation, cited_markers, format_citation, rewrite_citations
from core.claims import cited_sentences
from core.errors import EvergreenError
from core.facets import Facet
from core.key_fact import typed
from core.keyfacts import read_key_facts
from core.passages import sentence_key
from core.report_state import escape_heading_lines
from core.states import ChangeKind, ClaimOutcome
from core.text import clean_inline, figures
from core.validation import strip_controls
from core.writers.base import (
    BudgetExceeded,
    ClaimUpdate,
    Draft,
    Evidence,
    EvidenceChange,
    OutlineItem,
    WriterFailed,
)
from core.writers.model_client import CALL_LOG, ModelClient
from core.writers.offline import OfflineWriter
from core.writers.prompts import load_prompt

log = logging.getLogger("evergreen.llm")
T = TypeVar("T", bound=BaseModel)


# -- structured outputs ------------------------------------------------------------------
class QueryPlan(BaseModel):
    queries: list[str]


class OutlineSection(BaseModel):
    heading: str
    source_ids: list[int]


class OutlinePlan(BaseModel):
    sections: list[OutlineSection]


class SentenceQuote(BaseModel):
    sentence: str  # the sentence as written in the body, [n] markers included
    source_id: int
    quote: str  # verbatim text of that source supporting the sentence


class SectionText(BaseModel):
    body: str
    # default_factory keeps "default" out of the JSON schema (strict mode rejects it)
    quotes: list[SentenceQuote] = Field(default_factory=list)

    @field_validator("quotes", mode="before")
    @classmethod
    def _usable_quotes(cls, value: Any) -> list[Any]:
        """Quotes are optional: a reply without them, or with a garbled one, still parses."""
        if not isinstance(value, list):
            return []
        out: list[Any] = []
        for item in value:
            try:
                out.append(SentenceQuote.model_validate(item))
            except ValidationError:
                continue
        return out


class ChangeSummary(BaseModel):
    summary: str


QUOTE_MATCH = 90.0  # fuzz.partial_ratio of a quote within its source to count as found
QUOTE_MIN_CHARS = 8  # a shorter quote proves nothing
SENTENCE_MATCH = 85.0  # fuzz.ratio for a quote's sentence to name a sentence of the body


class _Invalid(Exception):
    """A reply that parsed but cannot be used; its message goes into the repair prompt."""


class _Flawed(_Invalid):
    """A reply that can be used but has a flaw worth one repair round; ``result`` is
    returned when the repair does no better."""

    def __init__(self, problem: str, result: Any) -> None:
        super().__init__(problem)
        self.result = result


# -- citation and body hygiene -----------------------------------------------------------
_LEADING_HEADING = re.compile(r"\A\s*#{1,6}[ \t]+([^\n]*)\n+")
_TAG = re.compile(r"<(/?)(source|current_section|claim)", re.I)  # the prompts' delimiters


def filter_citations(body: str, allowed: set[int]) -> tuple[str, list[int]]:
    """The body with every citation id outside ``allowed`` removed, and the dropped ids
    (one entry per dropped id of each citation; the citation grammar is
    :mod:`core.citations`)."""
    dropped: list[int] = []

    def fix(citation: Citation) -> str | None:
        keep = [i for i in citation.markers if i in allowed]
        dropped.extend(i for i in citation.markers if i not in allowed)
        if len(keep) == len(citation.markers):
            return None
        return format_citation(keep) if keep else ""

    return rewrite_citations(body, fix), dropped


def clean_body(body: str, heading: str) -> str:
    """Model prose made safe for a section body: no leading copy of the heading, no
    links, images, autolinks, link definitions or raw HTML (``core.untrusted``: only the
    [n] citations name sources), no bidi overrides, no heading lines."""
    from core.untrusted import clean_markdown

    text = clean_markdown(body).strip()
    m = _LEADING_HEADING.match(text)
    if m and m.group(1).strip(" #*").casefold() == heading.strip().casefold():
        text = text[m.end() :]
    text = re.sub(r"\n{3,}", "\n\n", text).strip()
    return escape_heading_lines(text)


REVISION_HEAD_CHARS = 800  # a changed source's head shown to a revision
REVISION_NEW_CHARS = 2000  # a source shown to a revision without changed claims


def quote_source(ev: Evidence, limit: int, text: str | None = None) -> str:
    """A source as quoted, delimited, untrusted material (``text``: the part of it to
    show, by default its content; its declared facts are always read from the whole)."""
    content = re.sub(r"\n{3,}", "\n\n", (ev.content if text is None else text).strip())
    if len(content) > limit:
        content = content[:limit].rsplit(" ", 1)[0] + " […]"
    # Nothing inside may close (or open) the delimiter.
    content = _TAG.sub(r"&lt;\1\2", content)
    title = " ".join((ev.title or ev.url).split()).replace("<", "&lt;")
    declared = "; ".join(
        f"{f.label}: {f.value}" for f in read_key_facts(ev.content) if typed(f) and f.value
    )
    declares = _TAG.sub(r"&lt;\1\2", f"declares: {_one_line(declared)}\n") if declared else ""
    return (
        f'<source id="{ev.marker}">\ntitle: {title}\nurl: {ev.url}\n{declares}---\n'
        f"{content}\n</source>"
    )


def _one_line(text: str | None, limit: int = 400) -> str:
    flat = _TAG.sub(r"&lt;\1\2", " ".join((text or "").split()))
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


# -- the writer --------------------------------------------------------------------------
class LlmWriter:
    """Implements core.writers.base.Writer against an OpenAI-compatible server."""

    name = "openai"

    def __init__(
        self,
        client: openai.OpenAI,
        *,
        planner: str,
        writer: str,
        summariser: str,
        price_for: Callable[[str], Any] | None = None,
        budget_tokens: int | None = None,
        budget_usd: float | None = None,
        secrets: Sequence[str] = (),
        attempts: int = 4,
        backoff: float = 1.0,
        backoff_max: float = 30.0,
        max_retry_after: float = 60.0,
        source_chars: int = 6000,
        bundle_chars: int = 40000,
        log_path: Path | None = None,
    ) -> None:
        self.models = {"planner": planner, "writer": writer, "summariser": summariser}
        self.model = ModelClient(
            client,
            price_for=price_for,
            budget_tokens=budget_tokens,
            budget_usd=budget_usd,
            secrets=secrets,
            attempts=attempts,
            backoff=backoff,
            backoff_max=backoff_max,
            max_retry_after=max_retry_after,
            log_path=log_path,
        )
        self.source_chars = source_chars
        self.bundle_chars = bundle_chars
        self._fallback = OfflineWriter()
        self.mode_note = (
            f"Written by a language model ({writer}) from the cited sources; every citation "
            "was checked against the sources the model was given. Review before relying on it."
        )

    @classmethod
    def from_settings(cls, settings: Any) -> LlmWriter:
        key = settings.openai_api_key.get_secret_value() if settings.openai_api_key else ""
        base_url = settings.openai_base_url or None
        if not key and not base_url:
            raise EvergreenError(
                "The openai writer needs OPENAI_API_KEY (for OpenAI) or OPENAI_BASE_URL (for "
                "a compatible server such as vLLM, Ollama or llama.cpp); set one, or use "
                "EVERGREEN_LLM=offline."
            )
        from core import config

        client = openai.OpenAI(
            base_url=base_url,
            api_key=key or "not-needed",  # self-hosted servers ignore it; the SDK wants one
            max_retries=0,
            timeout=settings.llm_timeout,
        )
        return cls(
            client,
            planner=settings.model_planner,
            writer=settings.model_writer,
            summariser=settings.model_summariser,
            price_for=settings.price_for,
            budget_tokens=settings.budget_tokens,
            budget_usd=settings.budget_usd,
            secrets=[key],
            log_path=config.workspace_dir() / CALL_LOG,
        )

    # -- the Writer protocol ---------------------------------------------------------------
    def plan_queries(self, question: str, max_queries: int = 4) -> list[str]:
        def check(out: QueryPlan) -> list[str]:
            queries = list(
                dict.fromkeys(" ".join(q.split())[:200] for q in out.queries if q.strip())
            )
            if not queries:
                raise _Invalid("the list of queries is empty")
            return queries[:max_queries]

        return self.ask(
            "plan_queries",
            "planner",
            QueryPlan,
            check,
            question=question,
            max_queries=max_queries,
        )

    def propose_outline(
        self,
        question: str,
        evidence: Sequence[Evidence],
        max_sections: int = 6,
        facets: Sequence[Facet] = (),
    ) -> list[OutlineItem]:
        docs = sorted(evidence, key=lambda e: (e.rank, e.marker))
        if not docs:
            return []
        known = {e.marker for e in docs}
        excerpt = max(300, min(800, self.bundle_chars // len(docs)))

        def check(out: OutlinePlan) -> list[OutlineItem]:
            items: list[OutlineItem] = []
            seen: set[str] = set()
            dropped = 0
            for s in out.sections:
                heading = _clean_heading(s.heading)
                ids = tuple(dict.fromkeys(i for i in s.source_ids if i in known))
                dropped += sum(1 for i in s.source_ids if i not in known)
                if not heading or not ids or heading.casefold() in seen:
                    continue
                seen.add(heading.casefold())
                items.append(OutlineItem(heading, 2, ids))
            if dropped:
                log.info("outline: dropped %d unknown source ids", dropped)
            if not items:
                raise _Invalid("no section has a heading and at least one allowed source id")
            return items[:max_sections]

        return self.ask(
            "propose_outline",
            "planner",
            OutlinePlan,
            check,
            question=question,
            max_sections=max_sections,
            sources="\n\n".join(quote_source(e, excerpt) for e in docs),
            source_ids=", ".join(str(e.marker) for e in docs),
            facets="\n".join(
                f"- {f.name}: sources {', '.join(str(m) for m in f.markers if m in known)}"
                for f in facets
                if any(m in known for m in f.markers)
            )
            or "(the question names no parts; find its themes in the sources)",
        )

    def write_section(self, question: str, heading: str, evidence: Sequence[Evidence]) -> Draft:
        docs = sorted(evidence, key=lambda e: (e.rank, e.marker))
        if not docs:
            return Draft(body="")
        allowed = {e.marker for e in docs}
        texts = {e.marker: e.content for e in docs}
        notes: list[str] = []

        def check(out: SectionText) -> Draft:
            draft = self._draft(out.body, heading, allowed, set(), notes, require_cite=True)
            return _with_quotes(draft, out.quotes, texts)

        return self.ask(
            "write_section",
            "writer",
            SectionText,
            check,
            question=question,
            heading=heading,
            sources=self._bundle(docs),
            source_ids=", ".join(str(m) for m in sorted(allowed)),
        )

    def revise_section(
        self,
        question: str,
        heading: str,
        old_body: str,
        changes: Sequence[EvidenceChange],
        new_evidence: Sequence[Evidence],
        claims: Sequence[ClaimUpdate] = (),
    ) -> Draft:
        gone = {c.marker for c in changes if c.kind == ChangeKind.GONE or c.new is None}
        current = [c.new for c in changes if c.new is not None] + list(new_evidence)
        allowed = (set(cited_markers(old_body)) | {e.marker for e in current}) - gone
        texts = {e.marker: e.content for e in current}
        # markers each old sentence loses because every passage it rested on is gone
        lost: dict[str, set[int]] = {}
        for u in claims:
            if _all_gone(u):
                lost.setdefault(sentence_key(u.sentence), set()).add(u.marker)
        may_empty = (not current and set(cited_markers(old_body)) <= gone) or (
            bool(claims)
            and not new_evidence
            and all(
                set(markers) <= gone | lost.get(sentence_key(sentence), set())
                for _pos, sentence, markers in cited_sentences(old_body)
            )
        )
        notes: list[str] = []

        def check(out: SectionText) -> Draft:
            if not out.body.strip():
                if may_empty:
                    return Draft(body="", markers=[], notes=[])
                raise _Invalid(
                    "the section text is empty; return the whole section, unchanged where "
                    "nothing affects it"
                )
            draft = self._draft(out.body, heading, allowed, gone, notes, require_cite=False)
            draft = _with_quotes(draft, out.quotes, texts)
            stale = _still_stated(draft.body, claims)
            if stale:
                count = len({sentence_key(u.sentence) for u in stale})
                draft.notes.append(
                    f"needs attention: {count} sentence(s) still state what the source no "
                    "longer says"
                )
                raise _Flawed(_stale_problem(stale), draft)
            return draft

        return self.ask(
            "revise_section",
            "writer",
            SectionText,
            check,
            question=question,
            heading=heading,
            current=old_body.replace("</current_section", "&lt;/current_section"),
            claims="\n\n".join(_describe_claim(u) for u in claims) or "(none)",
            changes="\n\n".join(_describe_change(c) for c in changes) or "(none: only new sources)",
            sources=self._revision_bundle(changes, new_evidence, claims) if current else "(none)",
            source_ids=", ".join(str(m) for m in sorted(allowed)) or "(none)",
        )

    def summarise_change(self, title: str, change: EvidenceChange) -> str:
        """One sentence for the reviewer. Outside a metered writer call (where the engine
        cannot record its cost) and on any failure, the extractive summary is used."""
        plain = self._fallback.summarise_change(title, change)
        if change.kind == ChangeKind.GONE or not _metered():
            return plain
        try:
            return self.ask(
                "summarise_change",
                "summariser",
                ChangeSummary,
                lambda out: _one_line(out.summary, 300) or plain,
                title=_one_line(title, 200),
                kind=change.kind,
                details=_describe_change(change),
            )
        except (WriterFailed, BudgetExceeded):
            return plain

    # -- one operation: render, call, validate, repair once -------------------------------
    def ask(
        self,
        op: str,
        role: str,
        schema: type[T],
        check: Callable[[T], Any],
        **values: object,
    ) -> Any:
        prompt = load_prompt(op)
        model = self.models[role]
        messages = prompt.render(**values)
        problem = "no reply"
        flawed: _Flawed | None = None  # the latest usable but flawed result
        for attempt in (1, 2):
            try:
                content, parsed, problem = self.model.request(prompt, model, messages, schema)
            except (WriterFailed, BudgetExceeded):
                if flawed is None:
                    raise
                break  # the repair could not be asked: the flawed result is better than none
            if parsed is not None:
                try:
                    return check(parsed)
                except _Flawed as exc:
                    problem, flawed = str(exc), exc
                except _Invalid as exc:
                    problem = str(exc)
            if attempt == 1:
                repair = load_prompt("repair").render(
                    problem=problem, schema=json.dumps(schema.model_json_schema())
                )
                messages = [*messages, {"role": "assistant", "content": content or ""}, *repair]
        if flawed is not None:
            log.warning("%s: kept a flawed reply after one repair attempt (%s)", op, flawed)
            return flawed.result
        raise WriterFailed(
            f"{model} gave no usable {op.replace('_', ' ')} after one repair attempt ({problem})"
        )

    # -- helpers ---------------------------------------------------------------------------------
    def _revision_bundle(
        self,
        changes: Sequence[EvidenceChange],
        new_evidence: Sequence[Evidence],
        claims: Sequence[ClaimUpdate],
    ) -> str:
        """What a revision shows the model: of a changed source only its head (where it
        declares its status) and the passages its changed claims now rest on — the
        section already says the rest — and of a new source a shorter excerpt than a
        first report's. An update costs a fraction of writing the section again."""
        parts = []
        for change in changes:
            if change.new is None:
                continue
            now = [new for u in claims if u.marker == change.marker for _old, new in u.passages]
            focus = [p for p in dict.fromkeys(now) if p]
            head = change.new.content[:REVISION_HEAD_CHARS]
            text = "\n\n[…]\n\n".join([head, *focus]) if focus else None
            limit = REVISION_HEAD_CHARS + sum(len(p) + 10 for p in focus) + 20
            parts.append(quote_source(change.new, limit if focus else REVISION_NEW_CHARS, text))
        parts.extend(quote_source(e, REVISION_NEW_CHARS) for e in new_evidence)
        return "\n\n".join(parts)

    def _bundle(self, docs: Sequence[Evidence]) -> str:
        per = max(1500, min(self.source_chars, self.bundle_chars // max(1, len(docs))))
        return "\n\n".join(quote_source(e, per) for e in docs)

    def _draft(
        self,
        body: str,
        heading: str,
        allowed: set[int],
        gone: set[int],
        notes: list[str],
        *,
        require_cite: bool,
    ) -> Draft:
        text = clean_body(body, heading)
        text, dropped = filter_citations(text, allowed)
        # "word ." → "word." (a model's stray space), but never ".py" or ":pep:"
        text = re.sub(r"[ \t]+([.,;:!?])(?=\s|$)", r"\1", text).strip()
        unknown = [i for i in dropped if i not in gone]
        of_gone = len(dropped) - len(unknown)
        if not text:
            raise _Invalid("the section text is empty")
        markers = cited_markers(text)
        if require_cite and not markers:
            raise _Invalid(
                "no sentence cites an allowed source id; cite every factual sentence with "
                f"[n], n one of {', '.join(map(str, sorted(allowed)))}"
            )
        notes[:] = []
        if unknown:
            notes.append(
                f"dropped {len(unknown)} unknown citation{'s' * (len(unknown) != 1)} "
                f"({', '.join(f'[{i}]' for i in sorted(set(unknown)))})"
            )
        if of_gone:
            notes.append(f"dropped {of_gone} citation{'s' * (of_gone != 1)} of gone sources")
        return Draft(body=text, markers=markers, notes=list(notes))


# -- module helpers ------------------------------------------------------------------------
def _metered() -> bool:
    """Whether a writer call is being metered (so a model call's cost can be recorded)."""
    return costs.active_stage() is not None


def _clean_heading(text: str) -> str:
    heading = strip_controls(text.replace("#", " ").replace("*", "")).strip(" .:-")
    heading = re.sub(r"^\d+(?:\.\d+)*[.)]?\s+", "", heading)
    return heading[:80]


def _describe_change(c: EvidenceChange) -> str:
    if c.kind == ChangeKind.GONE or c.new is None:
        return (
            f"Source [{c.marker}]: gone — the page no longer exists. Sentences citing "
            f"[{c.marker}] must drop that citation, and be removed if nothing else supports them."
        )
    lines = [f"Source [{c.marker}] ({_one_line(c.new.title, 150)}): {c.kind}"]
    if c.reasons:
        lines.append("  reasons: " + "; ".join(_one_line(r, 200) for r in list(c.reasons)[:6]))
    for claim in list(c.claims)[:12]:
        if claim.before and claim.after:
            lines.append(
                f'  - was: "{_one_line(claim.before)}"\n    now: "{_one_line(claim.after)}"'
            )
        elif claim.after:
            lines.append(f'  - added: "{_one_line(claim.after)}"')
        elif claim.before:
            lines.append(f'  - removed: "{_one_line(claim.before)}"')
    return "\n".join(lines)


def _all_gone(u: ClaimUpdate) -> bool:
    """Does the source no longer say anything the claim rested on?"""
    return u.outcome == ClaimOutcome.GONE and all(new is None for _old, new in u.passages)


def _describe_claim(u: ClaimUpdate) -> str:
    """One claim to rewrite, as a <claim> block: the sentence, then each passage it rested
    on as it was and as the source now has it."""
    lines = [f'<claim source="{u.marker}">', f"sentence: {_one_line(u.sentence, 1500)}"]
    if u.title:
        lines.append(f"title: {_one_line(u.title, 150)}")
    for old, new in u.passages:
        lines.append(f"was: {_one_line(old, 800)}")
        lines.append(f"now: {_one_line(new, 800) if new is not None else '(gone)'}")
    if not u.passages:
        lines.append("now: (gone)" if u.outcome == ClaimOutcome.GONE else "now: (changed)")
    if u.differences:
        diffs = dict.fromkeys(_one_line(d, 200) for d in u.differences)
        lines.append("differences: " + "; ".join(list(diffs)[:8]))
    lines.append("</claim>")
    return "\n".join(lines)


def _still_stated(body: str, claims: Sequence[ClaimUpdate]) -> list[ClaimUpdate]:
    """The claims ``body`` still states unrevised: the same sentence, still citing the
    same source (markers, markup and spacing aside)."""
    cited = {
        (sentence_key(sentence), marker)
        for _pos, sentence, markers in cited_sentences(body)
        for marker in markers
    }
    return [u for u in claims if (sentence_key(u.sentence), u.marker) in cited]


def _stale_problem(stale: Sequence[ClaimUpdate]) -> str:
    sentences = list(dict.fromkeys((_one_line(u.sentence, 300), u.marker) for u in stale))
    named = "; ".join(f'"{s}" (its <claim source="{m}"> block)' for s, m in sentences[:6])
    return (
        f"{len(sentences)} sentence(s) named in the <claim> blocks are unchanged and still "
        f"cite the source that no longer says them: {named}. Rewrite each so it states what "
        'its "now" passages say (the new figure, date or status, never the old one), or '
        "drop it when every passage is gone; keep every other sentence exactly as it is"
    )


# -- quotes --------------------------------------------------------------------------------
_TYPOGRAPHY = str.maketrans(
    {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-",
     "\u2014": "-", "\u2212": "-", "\u00a0": " ", "\u2026": "..."}
)  # fmt: skip
_MARKUP = re.compile(r"[*_`#>|~]+")
_ELLIPSIS = re.compile(r"\s*\[?\.\.\.\]?\s*")


def _plain(text: str) -> str:
    """Text as compared for quoting: markup and [n] markers gone, typography and spacing
    normalised, case folded."""
    text = _MARKUP.sub(" ", clean_inline(text.translate(_TYPOGRAPHY)))
    return " ".join(text.split()).casefold()


def _found(quote: str, source: str) -> bool:
    """Is ``quote`` (plain) in ``source`` (plain), verbatim or nearly (fuzz.partial_ratio
    >= QUOTE_MATCH, with every figure of the quote there)? An elided quote ("a ... b") must
    have each of its parts there."""
    parts = [p.strip(" .,;:\"'") for p in _ELLIPSIS.split(quote)]
    parts = [p for p in parts if p]
    if not parts or sum(len(p) for p in parts) < QUOTE_MIN_CHARS:
        return False
    for part in parts:
        if part in source:
            continue
        if len(part) < QUOTE_MIN_CHARS or len(part) > len(source):
            return False
        found = fuzz.partial_ratio_alignment(part, source, score_cutoff=QUOTE_MATCH)
        if found is None:
            return False
        # a near match forgives typos and spacing, never a figure the source does not have
        near = source[max(0, found.dest_start - 12) : found.dest_end + 12]
        if not _figures(part) <= _figures(near):
            return False
    return True


def _figures(text: str) -> set[str]:
    return {m.replace(",", "") for m in figures(text)}


def _body_sentence(
    said: str, marker: int, units: Sequence[tuple[str, str, set[int]]]
) -> str | None:
    """The sentence of the body (as written there) that the model's ``said`` names, among
    those citing ``marker``: the same words, else the closest by fuzz.ratio."""
    key = sentence_key(said)
    if not key:
        return None
    candidates = [(sentence, k) for sentence, k, markers in units if marker in markers]
    for sentence, k in candidates:
        if k == key:
            return sentence
    best = process.extractOne(
        key, [k for _s, k in candidates], scorer=fuzz.ratio, score_cutoff=SENTENCE_MATCH
    )
    return candidates[best[2]][0] if best else None


def _with_quotes(draft: Draft, quotes: Sequence[SentenceQuote], sources: dict[int, str]) -> Draft:
    """``draft`` with the model's quotes that its sources hold, one per cited sentence and
    source, and a note counting the quotes not found in their sources."""
    units = [
        (sentence, sentence_key(sentence), set(markers))
        for _pos, sentence, markers in cited_sentences(draft.body)
    ]
    plain: dict[int, str] = {}
    kept: dict[tuple[str, int], dict[str, object]] = {}
    missed: list[int] = []
    for q in quotes:
        if q.source_id not in sources:
            log.info("quote of source [%d], which the writer was not given: ignored", q.source_id)
            continue
        sentence = _body_sentence(q.sentence, q.source_id, units)
        if sentence is None or (sentence, q.source_id) in kept:
            continue  # a sentence the section does not have (or no longer cites it)
        if q.source_id not in plain:
            plain[q.source_id] = _plain(sources[q.source_id])
        if not _found(_plain(q.quote), plain[q.source_id]):
            missed.append(q.source_id)
            continue
        quote = " ".join(q.quote.split())
        kept[(sentence, q.source_id)] = {
            "sentence": sentence,
            "marker": q.source_id,
            "quote": quote,
        }
    draft.quotes = list(kept.values())
    if missed:
        ids = ", ".join(f"[{m}]" for m in sorted(set(missed)))
        what = (
            f"{len(missed)} quotes not found in their sources (sentences citing {ids})"
            if len(missed) > 1
            else f"1 quote not found in its source (sentence citing {ids})"
        )
        draft.notes.append(what)
    return draft
