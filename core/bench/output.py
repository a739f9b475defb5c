"""Benchmark outputs: results.json, table.md (shaped like the paper's Table 3, led by the
relevance measures — topical precision, key-source recall, discovery recall, sources
last/first — then the truth measures: support, fact accuracy, stale claims, freshness),
charts.html (plotly), and a one-line summary.

Per system: topical precision, key-source recall, cited sources and words are means over
every step (each R(t), first report included); discovery recall is pooled over the steps
with a window (relevant pages surfaced / relevant pages new, all windows and questions
together); sources last/first is, per question, the sources the system's report at the
last year cites over those its report at the first year cites, averaged over questions.
``final`` holds the same at the last year only (what the issue's targets are about for
LCT). New-evidence recall (the share of window-new relevant pages a report cites) is still
in results.json but retired as a goal: discovery recall measures the search instead."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from statistics import mean
from typing import Any

HEADLINE = (
    "topical_precision",
    "key_source_recall",
    "key_source_recall_budget",
    "discovery_recall",
    "sources_last_first",
)
SIZE = ("cited", "words")
#: the targets for final LCT reports: (metric, "≥" or "≤", bound); key sources are
#: counted against what the source budget can hold, and a report may end under it
TARGETS = (
    ("topical_precision", "≥", 0.85),
    ("key_source_recall_budget", "≥", 0.85),
    ("discovery_recall", "≥", 0.95),
)
LABELS = {
    "topical_precision": "topical precision",
    "key_source_recall": "key-source recall",
    "key_source_recall_budget": "key-source recall at the budget",
    "discovery_recall": "discovery recall",
    "sources_last_first": "sources last/first",
}
MEANS = ("topical_precision", "key_source_recall", "key_source_recall_budget")
TRUTH = ("support", "fact_accuracy", "stale_claims", "uncited_sentences", "freshness")
CONT = ("content_rouge_l", "content_bleu4", "outline_rouge_l", "outline_em_f1")
COST = ("llm_calls", "tokens_in", "tokens_out", "searches", "fetches", "seconds")
OTHER = ("citation_validity",)
RACE = ("comprehensiveness", "insight", "instruction_following", "readability")
PAPER = (
    "Paper (arXiv 2610.11566), IOEDR(OC) on the Long-Chain Task: content ROUGE-L 0.68 vs 0.17 "
    "for regeneration; outline exact-match F1 0.67 vs 0.04; tokens ×0.67; searches ×0.39 — "
    "with an LLM writer. Ours (above) uses the offline extractive writer, not their LLM; "
    "quality is checked against the corpus, not judged: support (cited sentences anchored "
    "verbatim in the snapshot they cite), fact accuracy (status changes of cited sources the "
    "next version states; pooled over steps), stale claims (mean per step)."
)


def _avg(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return round(mean(vals), 4) if vals else None


def aggregate(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Means per system; continuity only where there is a previous version."""
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        by[r["system"]].append(r)
    out: dict[str, dict[str, Any]] = {}
    for system, rows in by.items():
        steps = [r for r in rows if r.get("continuity")]  # updates / later rebuilds
        agg: dict[str, Any] = {"n": len(steps) or len(rows)}
        for k in CONT:
            agg[k] = _avg([r["continuity"][k] for r in steps])
        basis = steps or rows
        for k in COST:
            agg[k] = _avg([r["cost"].get(k) for r in basis])
        for k in ("support", "freshness", "new_evidence_recall", *OTHER):
            agg[k] = _avg([r.get(k) for r in basis])
        agg.update(relevance_means(rows))
        agg["sources_last_first"] = sources_last_first(rows)
        agg["final"] = {
            **relevance_means(final_rows(rows)),
            "sources_last_first": agg["sources_last_first"],
        }
        stale = [_stale(r) for r in basis]
        agg["stale_claims"] = _avg(stale)
        agg["stale_citations"] = agg["stale_claims"]  # the name older result files use
        agg["stale_claims_total"] = int(sum(v for v in stale if v is not None))
        uncited = [r.get("uncited_sentences") for r in basis]
        agg["uncited_sentences"] = _avg(uncited)
        agg["uncited_sentences_total"] = int(sum(v for v in uncited if v is not None))
        facts = [(r.get("fact_accuracy"), r.get("fact_changes") or 0) for r in basis]
        facts = [(a, n) for a, n in facts if a is not None and n]
        n_facts = sum(n for _a, n in facts)
        agg["central_removed"] = sum(r.get("central_removed") or 0 for r in rows)
        agg["central_removed_relevant"] = sum(r.get("central_removed_relevant") or 0 for r in rows)
        agg["fact_changes"] = n_facts
        agg["fact_accuracy"] = round(sum(a * n for a, n in facts) / n_facts, 4) if n_facts else None
        judged = [r["race"] for r in rows if isinstance(r.get("race"), dict)]
        if judged:
            for k in (*RACE, "overall"):
                agg[f"race_{k}"] = _avg([j.get(k) for j in judged])
        out[system] = agg
    return out


def relevance_means(rows: list[dict[str, Any]]) -> dict[str, float | None]:
    """Means of topical precision, key-source recall, cited sources and words over
    ``rows``; discovery recall pooled (surfaced / new, over every window of ``rows``)."""
    out = {k: _avg([r.get(k) for r in rows]) for k in MEANS}
    out["discovery_recall"] = pooled_discovery(rows)
    out.update({k: _avg([r.get(k) for r in rows]) for k in SIZE})
    return out


def pooled_discovery(rows: list[dict[str, Any]]) -> float | None:
    new = sum(r.get("discovery_new") or 0 for r in rows)
    found = sum(r.get("discovery_found") or 0 for r in rows)
    return round(found / new, 4) if new else None


def _by_question(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """question → its records, earliest t first."""
    out: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in sorted(rows, key=lambda r: r["t"]):
        out[r["question"]].append(r)
    return out


def final_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each question's record at its last year."""
    return [q[-1] for q in _by_question(rows).values()]


def sources_last_first(rows: list[dict[str, Any]]) -> float | None:
    """Mean over questions of cited sources at the last year / at the first year (a
    question with a single step, or a first report citing nothing, is left out)."""
    ratios = []
    for q in _by_question(rows).values():
        first, last = q[0].get("cited"), q[-1].get("cited")
        if len(q) > 1 and first and last is not None:
            ratios.append(last / first)
    return _avg(ratios)


def _stale(record: dict[str, Any]) -> float | None:
    value = record.get("stale_claims", record.get("stale_citations"))
    return float(value) if value is not None else None


def interval_table(agg: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The paper's Table 4 shape: each SST gap vs the baseline (ratios)."""
    base = agg.get("baseline")
    rows = []
    if not base:
        return rows
    for system in sorted(s for s in agg if s.startswith("sst")):
        a = agg[system]
        gap = 1 if system == "sst" else int(system.split("@")[1])

        def ratio(k: str, a: dict[str, Any] = a) -> float | None:
            return round(a[k] / base[k], 3) if a.get(k) is not None and base.get(k) else None

        quality = (a["citation_validity"] or 0) * (a["support"] or 0)
        base_q = (base["citation_validity"] or 0) * (base["support"] or 0)
        rows.append(
            {
                "gap_years": gap,
                "normalised_quality": round(quality / base_q, 3) if base_q else None,
                "support": a["support"],
                "fact_accuracy": a["fact_accuracy"],
                "stale_claims": a["stale_claims"],
                "content_rouge_l": a["content_rouge_l"],
                "outline_em_f1": a["outline_em_f1"],
                "searches_x": ratio("searches"),
                "fetches_x": ratio("fetches"),
                "tokens_in_x": ratio("tokens_in"),
            }
        )
    return rows


def _fmt(v: Any) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:.3f}" if abs(v) < 100 else f"{v:.0f}"
    return str(v)


def table_md(agg: dict[str, dict[str, Any]], intervals: list[dict[str, Any]]) -> str:
    names = {"baseline": "Regenerate (OEDR)", "sst": "Evergreen SST", "lct": "Evergreen LCT"}
    order = ["baseline", "sst", "lct"] + sorted(s for s in agg if s.startswith("sst@"))
    cols = HEADLINE + SIZE + TRUTH + CONT + COST + OTHER
    if any("race_overall" in a for a in agg.values()):
        cols = (*cols, "race_overall")  # LLM judge vs regeneration; 0.5 = as good
    head = "| system | " + " | ".join(cols) + " |"
    lines = [head, "|" + "---|" * (len(cols) + 1)]
    for system in order:
        if system in agg:
            a = agg[system]
            label = names.get(system) or f"Evergreen SST, {system.split('@')[1]}-year gap"
            lines.append(f"| {label} | " + " | ".join(_fmt(a.get(c)) for c in cols) + " |")
    base = agg.get("baseline", {})
    ratios = []
    for system in ("sst", "lct"):
        if system in agg and base.get("searches"):
            a = agg[system]
            parts = []
            for k in ("searches", "fetches", "tokens_in"):
                if base.get(k):
                    parts.append(f"{k} ×{a[k] / base[k]:.2f}")
            ratios.append(f"- {names[system]} vs regenerate: " + ", ".join(parts))
    text = "\n".join(lines) + "\n\n" + "\n".join(ratios) + "\n\n"
    text += final_table(agg, order, names) + "\n"
    if "lct" in agg:
        text += (
            f"Central sources removed by LCT updates (among the first hits of the search for "
            f"the question or a facet at t): {agg['lct']['central_removed']}, of them relevant: "
            f"{agg['lct']['central_removed_relevant']}.\n\n"
        )
    text += PAPER + "\n"
    if intervals:
        keys = list(intervals[0])
        text += "\n| " + " | ".join(keys) + " |\n|" + "---|" * len(keys) + "\n"
        for row in intervals:
            text += "| " + " | ".join(_fmt(row[k]) for k in keys) + " |\n"
    return text


def step_table(records: list[dict[str, Any]]) -> str:
    """Per step t, mean over questions: LCT's topical precision and key-source recall at
    the budget beside regenerating's as of the same t (an update must never be less on
    topic than starting over)."""
    by: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        by[(r["system"], r["t"])].append(r)
    years = sorted({t for system, t in by if system == "lct"})
    if not years or not any(("baseline", t) in by for t in years):
        return ""
    lines = [
        "Per step (mean over questions): LCT vs regenerating as of the same t.",
        "",
        "| t | precision LCT | precision regenerate | key at budget LCT"
        " | key at budget regenerate |",
        "|---|---|---|---|---|",
    ]
    worse = 0
    for t in years:
        row = [
            _avg([r.get(k) for r in by.get((system, t), [])])
            for k in ("topical_precision", "key_source_recall_budget")
            for system in ("lct", "baseline")
        ]
        worse += row[0] is not None and row[1] is not None and row[0] < row[1]
        lines.append(f"| {t} | " + " | ".join(_fmt(v) for v in row) + " |")
    lines += ["", f"Steps where LCT is less on topic than regenerating: {worse} of {len(years)}."]
    return "\n".join(lines) + "\n"


def final_table(agg: dict[str, dict[str, Any]], order: list[str], names: dict[str, str]) -> str:
    """The last year's values per system, with the issue's targets for final LCT reports."""
    cols = (*HEADLINE, *SIZE)
    lines = [
        "Final year (each question's last report; sources last/first over the whole run):",
        "",
        "| system | " + " | ".join(cols) + " |",
        "|" + "---|" * (len(cols) + 1),
    ]
    for system in order:
        if system in agg and "final" in agg[system]:
            label = names.get(system) or f"Evergreen SST, {system.split('@')[1]}-year gap"
            final = agg[system]["final"]
            lines.append(f"| {label} | " + " | ".join(_fmt(final.get(c)) for c in cols) + " |")
    bounds = {k: f"{op} {bound:g}" for k, op, bound in TARGETS}
    lines.append("| target (final LCT) | " + " | ".join(bounds.get(c, "") for c in cols) + " |")
    text = "\n".join(lines) + "\n"
    if "lct" in agg and "final" in agg["lct"]:
        text += "\n" + targets_line(agg["lct"]["final"]) + "\n"
    return text


def targets_line(final: dict[str, Any]) -> str:
    """'Final LCT vs targets: 1 of 4 met — topical precision 0.45 (≥ 0.7) no, …'."""
    parts, met = [], 0
    for k, op, bound in TARGETS:
        value = final.get(k)
        ok = value is not None and (value >= bound if op == "≥" else value <= bound)
        met += ok
        parts.append(f"{LABELS[k]} {_fmt(value)} ({op} {bound:g}) {'yes' if ok else 'no'}")
    return f"Final LCT vs targets: {met} of {len(TARGETS)} met — " + ", ".join(parts)


def charts_html(records: list[dict[str, Any]], path: Path) -> None:
    import plotly.graph_objects as go  # lazy: plotly takes ~1 s to load, only for the charts
    from plotly.subplots import make_subplots

    panels: list[tuple[str, Any]] = [
        ("Topical precision (cited ∩ relevant / cited)", lambda r: r.get("topical_precision")),
        (
            "Key-source recall (key sources existing at t cited)",
            lambda r: r.get("key_source_recall"),
        ),
        ("Discovery recall (relevant new pages surfaced)", lambda r: r.get("discovery_recall")),
        ("Cited sources per report", lambda r: r.get("cited")),
        ("Words per report", lambda r: r.get("words")),
        (
            "Content ROUGE-L vs previous version",
            lambda r: r["continuity"]["content_rouge_l"] if r.get("continuity") else None,
        ),
        ("Support (cited sentences anchored in their snapshot)", lambda r: r.get("support")),
        (
            "Fact accuracy (status changes of cited sources stated)",
            lambda r: r.get("fact_accuracy"),
        ),
        ("Stale claims", _stale),
        ("Freshness", lambda r: r.get("freshness")),
        ("Searches per step", lambda r: r["cost"].get("searches")),
    ]
    fig = make_subplots(rows=len(panels), cols=1, subplot_titles=[t for t, _ in panels])
    by: dict[str, dict[int, list[dict[str, Any]]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        by[r["system"]][r["t"]].append(r)
    for system, per_t in sorted(by.items()):
        ts = sorted(per_t)
        for row, (_title, fn) in enumerate(panels, start=1):
            fig.add_trace(
                go.Scatter(
                    x=ts,
                    y=[_avg([fn(r) for r in per_t[t]]) for t in ts],
                    name=system,
                    legendgroup=system,
                    showlegend=row == 1,
                ),
                row=row,
                col=1,
            )
    fig.update_layout(height=300 * len(panels), title="Evergreen temporal benchmark")
    fig.write_html(str(path), include_plotlyjs=True)


def summary_line(agg: dict[str, dict[str, Any]]) -> str:
    names = {"baseline": "regenerate", "sst": "SST", "lct": "LCT"}
    parts = []
    for system in ("baseline", "sst", "lct"):
        a = agg.get(system)
        if not a:
            continue
        s = (
            f"{names[system]}: {_headline(a)}, support {_fmt(a.get('support'))}, fact accuracy "
            f"{_fmt(a.get('fact_accuracy'))}, stale claims {_fmt(a.get('stale_claims_total'))}, "
            f"uncited sentences {_fmt(a.get('uncited_sentences_total'))}, freshness "
            f"{_fmt(a.get('freshness'))}, content ROUGE-L {_fmt(a.get('content_rouge_l'))}"
        )
        base = agg.get("baseline", {})
        if system != "baseline" and base.get("searches") and a.get("searches") is not None:
            s += f", searches ×{a['searches'] / base['searches']:.2f}"
        parts.append(s)
    if agg.get("lct", {}).get("final"):
        parts.append(f"final LCT: {_headline(agg['lct']['final'])}")
    return "; ".join(parts) or "nothing was run"


def _headline(a: dict[str, Any]) -> str:
    return ", ".join(f"{LABELS[k]} {_fmt(a.get(k))}" for k in HEADLINE)


def write_outputs(out: Path, records: list[dict[str, Any]], config: dict[str, Any]) -> str:
    agg = aggregate(records)
    intervals = interval_table(agg)
    (out / "results.json").write_text(
        json.dumps(
            {"config": config, "aggregate": agg, "intervals": intervals, "records": records},
            indent=2,
            sort_keys=True,
        )
    )
    steps = step_table(records)
    (out / "table.md").write_text(table_md(agg, intervals) + ("\n" + steps if steps else ""))
    charts_html(records, out / "charts.html")
    line = summary_line(agg)
    (out / "summary.txt").write_text(line + "\n")
    return line
