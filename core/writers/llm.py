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
revision gets the claims whose passages changed (``ClaimUpdate``) as ``<claim>`` blocks
and replies with edits to the sentences that change (``core.writers.edits``);
a reply that still states one of those sentences unchanged gets one repair round, and if
the repair does no better the draft is returned with a "needs attention" note.

This module holds the writer operations. Requests, retries, the per-run budget, cost
records and the call log are the model client's (``core.writers.model_client``); the
reply schemas are ``core.writers.replies``, what goes into a prompt
``core.writers.prompt_material``, the checks of a reply's text
``core.writers.reply_checks`` and of its quotes ``core.writers.quote_check``; the
bench's judge is ``core.bench.judge``.
Fetched text is untrusted: it only ever enters a prompt inside ``<source>``
tags, with the instruction not to follow directions found there.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

import openai
from pydantic import BaseModel

from core import config
from core.domain.citations import cited_markers
from core.domain.facets import Facet
from core.domain.passages import sentence_key
from core.domain.sentences import cited_sentences
from core.engine import costs
from core.errors import EvergreenError
from core.states import ChangeKind
from core.writers.base import (
    BudgetExceeded,
    ClaimUpdate,
    Draft,
    Evidence,
    EvidenceChange,
    Extension,
    OutlineItem,
    WriterFailed,
)
from core.writers.edits import apply_edits
from core.writers.model_client import CALL_LOG, ModelClient
from core.writers.offline import OfflineWriter
from core.writers.prompt_material import (
    claim_passages,
    describe_change,
    describe_claim,
    enclosed,
    new_sources,
    one_line,
    quote_source,
    revision_bundle,
    stale_problem,
    telling,
)
from core.writers.prompts import load_prompt
from core.writers.quote_check import with_quotes
from core.writers.replies import (
    ChangeSummary,
    FlawedReply,
    InvalidReply,
    OutlinePlan,
    QueryPlan,
    SectionAdditions,
    SectionEdits,
    SectionText,
)
from core.writers.reply_checks import checked_draft, clean_heading, may_empty, still_stated

log = logging.getLogger("evergreen.llm")
T = TypeVar("T", bound=BaseModel)


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
                raise InvalidReply("the list of queries is empty")
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
                heading = clean_heading(s.heading)
                ids = tuple(dict.fromkeys(i for i in s.source_ids if i in known))
                dropped += sum(1 for i in s.source_ids if i not in known)
                if not heading or not ids or heading.casefold() in seen:
                    continue
                seen.add(heading.casefold())
                items.append(OutlineItem(heading, 2, ids))
            if dropped:
                log.info("outline: dropped %d unknown source ids", dropped)
            if not items:
                raise InvalidReply("no section has a heading and at least one allowed source id")
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

    def write_section(
        self, question: str, heading: str, evidence: Sequence[Evidence], *, brief: bool = False
    ) -> Draft:
        docs = sorted(evidence, key=lambda e: (e.rank, e.marker))
        if not docs:
            return Draft(body="")
        allowed = {e.marker for e in docs}
        texts = {e.marker: e.content for e in docs}
        notes: list[str] = []

        def check(out: SectionText) -> Draft:
            draft = checked_draft(out.body, heading, allowed, set(), notes, require_cite=True)
            return with_quotes(draft, out.quotes, texts)

        return self.ask(
            "write_section",
            "writer",
            SectionText,
            check,
            question=question,
            heading=heading,
            sources=new_sources(docs, f"{heading}. {question}") if brief else self._bundle(docs),
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
        if not claims and not gone:  # nothing to rewrite: at most a paragraph to add
            if not changes and not new_evidence:
                return Draft(body=old_body, markers=cited_markers(old_body))
            return self._extend(question, heading, old_body, changes, new_evidence)
        current = [c.new for c in changes if c.new is not None] + list(new_evidence)
        allowed = (set(cited_markers(old_body)) | {e.marker for e in current}) - gone
        texts = {e.marker: e.content for e in current}
        empty_ok = may_empty(old_body, claims, new_evidence, current, gone)
        notes: list[str] = []

        def check(out: SectionEdits) -> Draft:
            body = out.whole if out.whole is not None else apply_edits(old_body, out.edits, out.add)
            if not body.strip():
                if empty_ok:
                    return Draft(body="", markers=[], notes=[])
                raise InvalidReply(
                    "the edits leave the section empty; remove only the sentences whose "
                    "sources no longer support them"
                )
            draft = checked_draft(body, heading, allowed, gone, notes, require_cite=False)
            draft = with_quotes(draft, out.quotes, texts)
            stale = still_stated(draft.body, claims)
            if stale:
                count = len({sentence_key(u.sentence) for u in stale})
                draft.notes.append(
                    f"needs attention: {count} sentence(s) still state what the source no "
                    "longer says"
                )
                raise FlawedReply(stale_problem(stale), draft)
            return draft

        return self.ask(
            "revise_section",
            "writer",
            SectionEdits,
            check,
            question=question,
            heading=heading,
            current=old_body.replace("</current_section", "&lt;/current_section"),
            claims="\n\n".join(describe_claim(u) for u in claims) or "(none)",
            changes="\n\n".join(
                describe_change(c, claim_passages(claims, c.marker), additions=True)
                for c in changes
            )
            or "(none: only new sources)",
            sources=(
                revision_bundle(changes, new_evidence, f"{heading}. {question}")
                if current
                else "(none)"
            ),
            source_ids=", ".join(str(m) for m in sorted(allowed)) or "(none)",
        )

    def _extend(
        self,
        question: str,
        heading: str,
        old_body: str,
        changes: Sequence[EvidenceChange],
        new_evidence: Sequence[Evidence],
    ) -> Draft:
        """Nothing the section says is wrong — only new sources arrived, or a cited page
        says something new (a status no sentence states): the model writes the paragraph
        they add and the section stands above it as it was, byte for byte. It is not sent
        back to be re-typed (a revision's reply was the whole section: as many output
        tokens as writing it) and cannot be altered by a model that was asked to keep it."""
        part = _Gain.of(question, Extension(heading, old_body, changes, new_evidence))
        if part is None:  # what changed was markup: nothing to add
            return Draft(body=old_body, markers=cited_markers(old_body))
        notes: list[str] = []
        return self.ask(
            "extend_section",
            "writer",
            SectionText,
            lambda out: part.drafted(out.body, out.quotes, notes),
            question=question,
            heading=heading,
            current=part.current_text,
            changes=part.changes,
            sources=part.sources,
            source_ids=part.source_ids,
        )

    def extend_sections(self, question: str, parts: Sequence[Extension]) -> list[Draft]:
        """The sections that only gain, extended in one request: each section's rules,
        question and reply format would otherwise be paid for once per section. Each
        part is checked as ``_extend`` checks it (its own sources, quotes and allowed
        ids); a reply that leaves a section out gets the repair round."""
        out = [Draft(body=p.body, markers=cited_markers(p.body)) for p in parts]
        gains = {i: g for i, p in enumerate(parts) if (g := _Gain.of(question, p)) is not None}
        if len(gains) == 1:
            ((i, _gain),) = gains.items()
            p = parts[i]
            out[i] = self._extend(question, p.heading, p.body, p.changes, p.new_evidence)
            return out
        if not gains:
            return out
        order = list(gains)  # the section with id n is parts[order[n - 1]]
        notes: dict[int, list[str]] = {i: [] for i in order}

        def check(reply: SectionAdditions) -> list[Draft]:
            given = {a.section: a for a in reversed(reply.sections)}  # the first entry wins
            missing = [n for n in range(1, len(order) + 1) if n not in given]
            if missing:
                raise InvalidReply(
                    "no entry for section(s) " + ", ".join(map(str, missing)) + "; give one "
                    'entry per section, with an empty "body" when it has nothing to add'
                )
            return [
                gains[i].drafted(given[n].body, given[n].quotes, notes[i])
                for n, i in enumerate(order, 1)
            ]

        drafts = self.ask(
            "extend_sections",
            "writer",
            SectionAdditions,
            check,
            question=question,
            sections="\n\n".join(gains[i].block(n) for n, i in enumerate(order, 1)),
            count=len(order),
        )
        for i, draft in zip(order, drafts, strict=True):
            out[i] = draft
        return out

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
                lambda out: one_line(out.summary, 300) or plain,
                title=one_line(title, 200),
                kind=change.kind,
                details=describe_change(change),
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
        flawed: FlawedReply | None = None  # the latest usable but flawed result
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
                except FlawedReply as exc:
                    problem, flawed = str(exc), exc
                except InvalidReply as exc:
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
    def _bundle(self, docs: Sequence[Evidence]) -> str:
        per = max(1500, min(self.source_chars, self.bundle_chars // max(1, len(docs))))
        return "\n\n".join(quote_source(e, per) for e in docs)


@dataclass(frozen=True)
class _Gain:
    """What one extension shows its model and what its reply may cite."""

    question: str
    part: Extension
    told: tuple[tuple[EvidenceChange, str], ...]  # the changes it tells, with their lines

    @classmethod
    def of(cls, question: str, part: Extension) -> _Gain | None:
        """None when there is nothing to add: no new source and no change that tells."""
        told = tuple(telling(part.changes))
        return cls(question, part, told) if told or part.new_evidence else None

    @cached_property
    def evidence(self) -> list[Evidence]:
        shown = [c.new for c, _text in self.told if c.new is not None]
        return shown + list(self.part.new_evidence)

    @property
    def changes(self) -> str:
        return "\n\n".join(text for _c, text in self.told) or "(none: only new sources)"

    @property
    def sources(self) -> str:
        p = self.part
        shown = [c for c, _text in self.told]
        return revision_bundle(shown, p.new_evidence, f"{p.heading}. {self.question}")

    @property
    def source_ids(self) -> str:
        return ", ".join(str(m) for m in sorted({e.marker for e in self.evidence}))

    @property
    def current_text(self) -> str:
        return enclosed(self.part.body) or "(empty)"

    def block(self, n: int) -> str:
        """The section as the ``extend_sections`` prompt shows it, with id ``n``."""
        return (
            f'<section id="{n}">\nSection heading: {enclosed(self.part.heading)}\n\n'
            f"The section as it stands (kept as it is):\n<current_section>\n"
            f"{self.current_text}\n</current_section>\n\n"
            f"What changed in the sources it cites:\n\n{self.changes}\n\n"
            f"Sources (changed and new ones):\n\n{self.sources}\n\n"
            f"Allowed citation ids: {self.source_ids}.\n</section>"
        )

    def drafted(self, body: str, quotes: Sequence[Any], notes: list[str]) -> Draft:
        """The section with the reply's paragraph after it, byte for byte as it was; a
        sentence citing none of the shown sources restates the section, or nothing: it
        goes."""
        old = self.part.body
        if not body.strip():
            return Draft(body=old, markers=cited_markers(old), notes=[])
        fresh = {e.marker for e in self.evidence}
        texts = {e.marker: e.content for e in self.evidence}
        added = checked_draft(body, self.part.heading, fresh, set(), notes, require_cite=True)
        cited = [sentence for _pos, sentence, _markers in cited_sentences(added.body)]
        added = with_quotes(Draft(" ".join(cited), notes=added.notes), quotes, texts)
        whole = f"{old.rstrip()}\n\n{added.body}" if old.strip() else added.body
        return Draft(whole, cited_markers(whole), added.notes, added.quotes)


# -- module helpers ------------------------------------------------------------------------
def _metered() -> bool:
    """Whether a writer call is being metered (so a model call's cost can be recorded)."""
    return costs.active_stage() is not None
