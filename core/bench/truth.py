"""Ground truth for the benchmark, read from a queries file (``queries.json``).

Each query lists its relevant pages and, per year, which were new, changed and
changed materially — derived from the corpus versions independently of the engine.
Pages are named by ``url`` or, in the PEP corpus, by ``pep`` number.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core.errors import EvergreenError

PEP_URL = "https://peps.python.org/pep-{:04d}/"


@dataclass(frozen=True)
class YearTruth:
    new: frozenset[str] = frozenset()
    changed: frozenset[str] = frozenset()
    material_changed: frozenset[str] = frozenset()


@dataclass(frozen=True)
class QuerySpec:
    id: str
    query: str
    relevant: frozenset[str]
    per_year: dict[int, YearTruth] = field(default_factory=dict)

    def material_between(self, start: int, end: int) -> set[str]:
        """Pages that changed materially in years (start, end]."""
        return {u for y in range(start + 1, end + 1) for u in self._year(y).material_changed}

    def new_between(self, start: int, end: int) -> set[str]:
        """Relevant pages that first appeared in years (start, end]."""
        return {u for y in range(start + 1, end + 1) for u in self._year(y).new} & self.relevant

    def _year(self, year: int) -> YearTruth:
        return self.per_year.get(year, YearTruth())


def url_of(item: Any) -> str:
    if isinstance(item, dict):
        if item.get("url"):
            return str(item["url"])
        return PEP_URL.format(int(item["pep"]))
    if isinstance(item, int) or (isinstance(item, str) and item.isdigit()):
        return PEP_URL.format(int(item))
    return str(item)


def load_queries(path: str | Path) -> list[QuerySpec]:
    file = Path(path).expanduser()
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
        specs = []
        for q in data["queries"]:
            per_year = {
                int(year): YearTruth(
                    new=frozenset(url_of(x) for x in row.get("new", [])),
                    changed=frozenset(url_of(x) for x in row.get("changed", [])),
                    material_changed=frozenset(url_of(x) for x in row.get("material_changed", [])),
                )
                for year, row in (q.get("per_year") or {}).items()
            }
            specs.append(
                QuerySpec(
                    id=str(q["id"]),
                    query=str(q["query"]),
                    relevant=frozenset(url_of(x) for x in q.get("relevant", [])),
                    per_year=per_year,
                )
            )
    except FileNotFoundError:
        raise EvergreenError(f"No queries file at {file}.") from None
    except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise EvergreenError(
            f"{file.name} is not a queries file ({type(exc).__name__}: {exc}); expected "
            '{"queries": [{"id", "query", "relevant", "per_year"}]}.'
        ) from None
    if not specs:
        raise EvergreenError(f"{file.name} holds no queries.")
    return specs
