"""Ground truth for the benchmark, read from a queries file (``queries.json``).

Each query lists its relevant pages and, per year, which were new, changed and
changed materially, and which key facts (statuses) changed — derived from the corpus
versions independently of the engine. Everything is keyed by URL. A page may be named
by its URL, by an object with a ``url``, or by a bare id (``563``, ``"SE-0296"``, an
object such as ``{"pep": 563}``); ids are resolved through the corpus: the page whose
record metadata holds that integer (:meth:`Corpus.urls_for_ids`). An id that names no
page, or several, is an error.

A relevant page given as an object may carry a ``score`` (how central it is to the
question, in the queries file's own units: 0–14 for the PEPs, 0–12 for Swift); the
benchmark's key sources are the relevant pages scored near the question's best
(:meth:`QuerySpec.key_sources`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.errors import EvergreenError
from core.sources.base import canonical_url

if TYPE_CHECKING:
    from core.sources.corpus import Corpus

#: a bare id: "563", "0563", "SE-0296", "PEP 8" (a short prefix, then the number)
_ID = re.compile(r"^\s*(?:[A-Za-z]{1,12}[- ]?)?0*(\d{1,9})\s*$")
#: "482: Draft -> Final", "SE-0296: Accepted -> Implemented (Swift 5.5)"
_STATUS_CHANGE = re.compile(r"^\s*(?P<page>.+?):\s+(?P<before>.*?)\s*(?:->|→)\s*(?P<after>.+?)\s*$")
_EVENT_VALUES = frozenset({"before", "after"})


@dataclass(frozen=True)
class StatusChange:
    """A key fact of a page that changed from ``before`` to ``after``."""

    url: str
    before: str
    after: str


@dataclass(frozen=True)
class YearTruth:
    new: frozenset[str] = frozenset()
    changed: frozenset[str] = frozenset()
    material_changed: frozenset[str] = frozenset()
    status_changes: tuple[StatusChange, ...] = ()


@dataclass(frozen=True)
class QuerySpec:
    id: str
    query: str
    relevant: frozenset[str]
    per_year: dict[int, YearTruth] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)  # relevant url → its score

    def key_sources(self, share: float) -> set[str]:
        """The relevant pages whose score is at least ``share`` × the question's highest
        score (the question's own scale); none when the queries file gives no scores."""
        if not self.scores:
            return set()
        floor = share * max(self.scores.values()) - 1e-9  # 0.9 × 14 is 12.600000000000001
        return {u for u, score in self.scores.items() if score >= floor}

    def material_between(self, start: int, end: int) -> set[str]:
        """Pages that changed materially in years (start, end]."""
        return {u for y in range(start + 1, end + 1) for u in self._year(y).material_changed}

    def new_between(self, start: int, end: int) -> set[str]:
        """Relevant pages that first appeared in years (start, end]."""
        return {u for y in range(start + 1, end + 1) for u in self._year(y).new} & self.relevant

    def status_changes_between(self, start: int, end: int) -> dict[str, StatusChange]:
        """url → its status change over years (start, end]: the value before the first
        change and after the last; a page that changed back is left out."""
        out: dict[str, StatusChange] = {}
        for y in range(start + 1, end + 1):
            for c in self._year(y).status_changes:
                first = out.get(c.url)
                out[c.url] = StatusChange(c.url, first.before if first else c.before, c.after)
        return {u: c for u, c in out.items() if _same(c.before) != _same(c.after)}

    def _year(self, year: int) -> YearTruth:
        return self.per_year.get(year, YearTruth())


def _same(value: str) -> str:
    return " ".join(value.split()).casefold()


# --------------------------------------------------------------------------- page names


@dataclass(frozen=True)
class _IdRef:
    """A page named by id, resolved later: candidate (metadata key or None, id) pairs."""

    label: str
    candidates: tuple[tuple[str | None, int], ...]


_Page = str | _IdRef


def _as_id(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and "://" not in value:
        m = _ID.match(value)
        if m:
            return int(m.group(1))
    return None


def score_of(item: Any) -> float | None:
    """The ``score`` of a relevant item given as an object, if it has a numeric one."""
    if not isinstance(item, Mapping):
        return None
    value = item.get("score")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def page_of(item: Any) -> _Page:
    """A URL, or an id to resolve through the corpus."""
    if isinstance(item, Mapping):
        if item.get("url"):
            return str(item["url"])
        pairs = tuple(
            (str(k), v)
            for k, v in item.items()
            if k not in _EVENT_VALUES and isinstance(v, int) and not isinstance(v, bool)
        )
        if not pairs:
            raise ValueError(f"{json.dumps(item)[:80]} names no page (no url, no integer id)")
        label = "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
        return _IdRef(label, pairs)
    ident = _as_id(item)
    if ident is not None:
        return _IdRef(str(item).strip(), ((None, ident),))
    return str(item)


class _Resolver:
    """Resolves every id of a queries file in a few passes over the corpus metadata."""

    def __init__(self, corpus: Corpus | None, file: str) -> None:
        self.corpus = corpus
        self.file = file
        self.found: dict[tuple[str | None, int], list[str]] = {}

    def prepare(self, pages: Iterable[_Page]) -> None:
        refs = [p for p in pages if isinstance(p, _IdRef)]
        if not refs:
            return
        if self.corpus is None:
            raise EvergreenError(
                f"{self.file} names pages by id ({_names(r.label for r in refs)}); "
                "give a corpus to resolve them to URLs."
            )
        by_key: dict[str | None, set[int]] = {}
        for r in refs:
            for key, ident in r.candidates:
                by_key.setdefault(key, set()).add(ident)
        for key, idents in by_key.items():
            for ident, urls in self.corpus.urls_for_ids(idents, key).items():
                self.found[(key, ident)] = urls
        missing, ambiguous = [], []
        for r in refs:
            urls = {u for c in r.candidates for u in self.found.get(c, [])}
            if not urls:
                missing.append(r.label)
            elif len(urls) > 1:
                ambiguous.append(r.label)
        problems = []
        if missing:
            problems.append(f"no page has id {_names(missing)}")
        if ambiguous:
            problems.append(f"several pages have id {_names(ambiguous)}")
        if problems:
            raise EvergreenError(
                f"{self.file}: in corpus {self.corpus.name!r}, " + "; ".join(problems) + "."
            )

    def url(self, page: _Page) -> str:
        if isinstance(page, str):
            return canonical_url(page)
        (url,) = {u for c in page.candidates for u in self.found.get(c, [])}
        return canonical_url(url)


def _names(labels: Iterable[str], limit: int = 12) -> str:
    unique = list(dict.fromkeys(labels))
    shown = ", ".join(unique[:limit])
    return shown + (f" … ({len(unique)} in all)" if len(unique) > limit else "")


def _status_changes(row: Mapping[str, Any]) -> list[tuple[_Page, str, str]]:
    """(page, before, after) from ``status_change_events`` when present, else from the
    ``status_changes`` strings ("482: Draft -> Final")."""
    if "status_change_events" in row:
        return [
            (page_of(e), str(e["before"] or ""), str(e["after"] or ""))
            for e in row["status_change_events"] or []
        ]
    out = []
    for text in row.get("status_changes") or []:
        m = _STATUS_CHANGE.match(str(text))
        if m is None:
            raise ValueError(f"status change {text!r} is not 'PAGE: BEFORE -> AFTER'")
        out.append((page_of(m["page"]), m["before"], m["after"]))
    return out


def load_queries(path: str | Path, corpus: Corpus | None = None) -> list[QuerySpec]:
    """The queries of ``path``, every page named by URL (ids resolved through ``corpus``)."""
    file = Path(path).expanduser()
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        raw = []
        for q in data["queries"]:
            per_year = {
                int(year): (
                    [page_of(x) for x in row.get("new", [])],
                    [page_of(x) for x in row.get("changed", [])],
                    [page_of(x) for x in row.get("material_changed", [])],
                    _status_changes(row),
                )
                for year, row in (q.get("per_year") or {}).items()
            }
            items = q.get("relevant", [])
            relevant = [page_of(x) for x in items]
            scores = [score_of(x) for x in items]
            raw.append((str(q["id"]), str(q["query"]), relevant, per_year, scores))
    except FileNotFoundError:
        raise EvergreenError(f"No queries file at {file}.") from None
    except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise EvergreenError(
            f"{file.name} is not a queries file ({type(exc).__name__}: {exc}); expected "
            '{"queries": [{"id", "query", "relevant", "per_year"}]}.'
        ) from None
    if not raw:
        raise EvergreenError(f"{file.name} holds no queries.")
    resolver = _Resolver(corpus, file.name)
    resolver.prepare(
        p
        for _id, _q, relevant, per_year, _scores in raw
        for group in (
            relevant,
            *(x for new, ch, mat, _s in per_year.values() for x in (new, ch, mat)),
            (p for *_x, events in per_year.values() for p, _b, _a in events),
        )
        for p in group
    )
    url = resolver.url
    return [
        QuerySpec(
            id=qid,
            query=query,
            relevant=frozenset(url(p) for p in relevant),
            per_year={
                year: YearTruth(
                    new=frozenset(url(p) for p in new),
                    changed=frozenset(url(p) for p in changed),
                    material_changed=frozenset(url(p) for p in material),
                    status_changes=tuple(StatusChange(url(p), b, a) for p, b, a in events),
                )
                for year, (new, changed, material, events) in per_year.items()
            },
            scores=_scores(url, relevant, scores),
        )
        for qid, query, relevant, per_year, scores in raw
    ]


def _scores(
    url: Callable[[_Page], str], relevant: list[_Page], scores: list[float | None]
) -> dict[str, float]:
    """url → score of the relevant pages that have one (the highest, if named twice)."""
    out: dict[str, float] = {}
    for page, score in zip(relevant, scores, strict=True):
        if score is not None:
            key = url(page)
            out[key] = max(score, out.get(key, score))
    return out
