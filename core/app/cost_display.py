"""How the screens show what a run cost: each stage's colour, which meters are worth
showing, what a run saved against starting over (``saved``, ``headline``), a meter's
value and its comparison with from scratch in words, and what "writer calls" counts.

Pure functions of the numbers ``core.app.cost_views`` reads.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from typing import Any

from core.engine.costs import COST_LABELS, LLM_FIELDS, METER_FIELDS, POOL_FIELDS

STAGE_COLORS = {
    # from scratch
    "plan": "#7c3aed",
    "search": "#0891b2",
    "outline": "#a855f7",
    "write": "#db2777",
    # an update
    "resolve": "#65a30d",
    "refresh": "#16a34a",
    "discover": "#0e7490",
    "fetch": "#2563eb",
    "prune": "#4d7c0f",
    "propose": "#9333ea",
    "commit": "#0f766e",
    "revise": "#d97706",
    "extend": "#ea580c",
    "add": "#dc2626",
}
OTHER_COLORS = ("#4b5563", "#92400e", "#1e3a8a", "#831843", "#365314", "#134e4a")


def stage_color(stage: str) -> str:
    """The colour of a stage: the same stage has the same colour in every run and screen
    (a stage not in STAGE_COLORS gets one picked by its name, not by its position)."""
    return STAGE_COLORS.get(stage) or OTHER_COLORS[zlib.crc32(stage.encode()) % len(OTHER_COLORS)]


def visible_fields(llm: bool, *totals: Mapping[str, Any]) -> list[str]:
    """The meters worth showing: an LLM-only meter (LLM calls, tokens, $) is hidden when
    the writer makes no LLM calls and no total given has any of it (always zero); the
    shared pool's meters (bytes read, 304s, checks it served) when none of them is used."""

    def used(key: str) -> bool:
        return any(float(t.get(key, 0) or 0) for t in totals)

    return [
        k
        for k in METER_FIELDS
        if (llm or k not in LLM_FIELDS or used(k)) and (k not in POOL_FIELDS or used(k))
    ]


HEADLINE = (  # (name, fields summed, unit words)
    ("searches", ("searches",)),
    ("fetches", ("fetches",)),
    ("tokens", ("tokens_in", "tokens_out")),
    ("usd", ("usd",)),
    ("seconds", ("seconds",)),
)


def saved(
    run: Mapping[str, Any], scratch: Mapping[str, Any], fields: Sequence[str] = METER_FIELDS
) -> list[dict[str, Any]]:
    """What the run saved against starting over, per headline measure (searches, fetches,
    tokens, $, time) among ``fields``: ``saved`` is positive when the run spent less,
    ``share`` the part of the from-scratch cost saved (None when that cost is zero)."""
    out = []
    for name, keys in HEADLINE:
        if not any(k in fields for k in keys):
            continue
        mine = sum(float(run.get(k, 0) or 0) for k in keys)
        base = sum(float(scratch.get(k, 0) or 0) for k in keys)
        if name == "seconds" and not base:
            continue  # no baseline time to compare with
        share = (base - mine) / base if base else None
        out.append(
            {"name": name, "run": mine, "scratch": base, "saved": base - mine, "share": share}
        )
    return out


UNITS = {"searches": "searches", "fetches": "fetches", "tokens": "tokens"}


def format_value(name: str, value: float) -> str:
    """A measure as the screens show it: $ with cents (never $0.0000), time in seconds
    or minutes, counts with thousands separators."""
    if name == "usd":
        if 0 < abs(value) < 0.005:
            return "<$0.01"
        return f"${value:,.2f}"
    if name == "seconds":
        if value >= 60:
            return f"{int(value // 60)} min {value % 60:.0f} s"
        return f"{value:.1f} s" if value >= 1 else f"{value:.2f} s"
    return f"{int(round(value)):,}"


def meter_value(field: str, value: float) -> str:
    """A meter's value: $, time and bytes as such, any other field a count."""
    if field == "bytes":
        return format_bytes(value)
    return format_value(field if field in ("usd", "seconds") else "count", value)


def format_bytes(value: float) -> str:
    """1,234,567 → "1.2 MB" (decimal units, as browsers and servers count)."""
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(value) >= size:
            return f"{value / size:.1f} {unit}"
    return f"{int(value)} B"


def meter_delta(field: str, value: float, base: float) -> tuple[str | None, str]:
    """A meter's comparison with from scratch, in words ("12 fewer than from scratch",
    "0.30 s more than from scratch"), and its colour: good, bad or off."""
    if not (base or value) or field in ("not_modified", "shared_checks"):
        return None, "off"  # (starting over asks for every page: nothing to compare)
    if field == "bytes" and not base:
        return None, "off"  # a baseline that estimates pages, not bytes: no comparison
    if value == base:
        return "same as from scratch", "off"
    diff = meter_value(field, abs(base - value))
    if value < base:
        less = "less" if field in ("usd", "seconds", "bytes") else "fewer"
        return f"{diff} {less} than from scratch", "good"
    return f"{diff} more than from scratch", "bad"


def _saved_phrase(row: Mapping[str, Any]) -> str:
    name, mine, base, diff = row["name"], row["run"], row["scratch"], row["saved"]
    unit = f" {UNITS[name]}" if name in UNITS else ""
    if diff < 0:
        both = f"{format_value(name, mine)} vs {format_value(name, base)}"
        return f"{format_value(name, -diff)}{unit} more ({both})"
    pct = f" ({row['share']:.0%})" if row["share"] is not None else ""
    if name == "seconds":
        return f"{format_value(name, diff)} of {format_value(name, base)}{pct}"
    return f"{format_value(name, diff)} of {format_value(name, base)}{unit}{pct}"


def headline(
    run: Mapping[str, Any], scratch: Mapping[str, Any], fields: Sequence[str] = METER_FIELDS
) -> str:
    """One line: what this run saved against starting over, e.g. "Saved vs starting over:
    8 of 9 searches (89%), 0 of 18 fetches (0%), 0.05 s of 0.12 s (58%)"."""
    rows = [r for r in saved(run, scratch, fields) if r["run"] or r["scratch"]]
    if not rows:
        return "Saved vs starting over: nothing to compare (neither spent anything)."
    return "Saved vs starting over: " + ", ".join(_saved_phrase(r) for r in rows) + "."


def writer_note(llm: bool, writer_calls: int, llm_calls: int) -> str:
    """What "writer calls" counts, for the configured writer."""
    calls = f"{writer_calls} writer call{'s' if writer_calls != 1 else ''}"
    counted = (
        "one per section the writer drafted or revised, one for all the sections it only "
        "added to, and one per outline"
    )
    if not llm:
        return (
            f"{calls}: {counted}. The offline writer is extractive — it picks sentences "
            "from the sources — so it makes no LLM calls and spends no tokens or $."
        )
    return (
        f"{calls}: {counted}; they made {llm_calls} LLM call{'s' if llm_calls != 1 else ''} "
        "(retries and checks included)."
    )


def scratch_caption(costs: Sequence[Mapping[str, Any]]) -> str:
    """Where History's from-scratch bars come from: each update's stored baseline."""
    stored = sum(1 for c in costs if c["stored"])
    bases = list(dict.fromkeys(c["basis"] for c in costs))
    when = (
        "each update's from-scratch cost as it stood when the update finished"
        if stored == len(costs)
        else f"the baseline stored with {stored} of {len(costs)} updates; the others computed today"
    )
    return f"From scratch: {when} — {'; '.join(bases)}."


def label_of(field: str) -> str:
    return COST_LABELS.get(field, field)
