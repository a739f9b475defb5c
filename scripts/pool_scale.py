"""The shared evidence pool at scale: many web reports citing overlapping pages of a
loopback site with realistic latency and ETags, updated round after round.

Each report is an analyst's Markdown report citing ~30 pages of the site, imported (so
every report cites exactly its pages); a share of each report's pages is its cluster's,
cited by all five reports of the cluster. Rounds (each report updated once per round,
every update committed):

0. each report's question researched from scratch (what regenerating costs, measured);
1. the first update, which reads every imported citation, today's way (``force_recheck``:
   no shared pool, no conditional requests): every report fetches its own pages;
1b. a day later, a share of the pages changed, today's way again;
2. a day later, the same share changed again, with the shared pool and conditional
   requests: one conditional request per distinct page (HEAD), bodies only for the
   pages that changed, every other report served by those looks;
3. a day later, nothing changed: only 304s;
4. again at once, within the freshness window: every report served by round 3's looks,
   no request.

Per round: page bodies fetched, body bytes, 304s, checks served by the pool, the site's
own count of requests and bytes sent, and seconds. Nothing leaves 127.0.0.1.

    python scripts/pool_scale.py --reports 200 --sources 30 --out /tmp/pool-scale.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TOPICS = [
    "kestrel", "marlin", "heron", "osprey", "plover", "curlew", "dunlin", "godwit",
    "avocet", "bittern", "egret", "ibis", "jacana", "lapwing", "merlin", "nightjar",
    "oriole", "petrel", "quail", "rail", "shrike", "tern", "veery", "wryneck",
    "bunting", "crake", "dipper", "eider", "fulmar", "gannet", "harrier", "jay",
    "kite", "linnet", "martin", "nuthatch", "ouzel", "pipit", "redstart", "siskin",
]  # fmt: skip
ASPECTS = [
    ("prices", "dollars per unit", "wholesale buyers"),
    ("exports", "million tonnes", "shipping firms"),
    ("employment", "thousand jobs", "regional employers"),
    ("capacity", "megawatts", "utility operators"),
    ("investment", "million dollars", "venture funds"),
    ("patents", "filings", "university laboratories"),
    ("imports", "thousand crates", "port authorities"),
    ("subsidies", "million euros", "national ministries"),
    ("recycling", "kilotonnes", "municipal schemes"),
    ("insurance claims", "cases", "insurers"),
    ("training places", "apprentices", "technical colleges"),
    ("retail sales", "thousand units", "online retailers"),
    ("emissions", "kilotonnes of carbon", "heavy industry"),
    ("water use", "million litres", "irrigation districts"),
    ("startups", "new firms", "incubators"),
    ("tariffs", "percent duty", "trade negotiators"),
    ("freight volumes", "containers", "rail operators"),
    ("research grants", "awards", "science councils"),
    ("maintenance backlog", "open orders", "service contractors"),
    ("consumer complaints", "complaints", "ombudsman offices"),
    ("land leases", "hectares", "farm cooperatives"),
    ("bond issuance", "million dollars of bonds", "municipal treasurers"),
    ("energy demand", "gigawatt hours", "industrial users"),
    ("safety inspections", "inspections", "labour inspectors"),
    ("tourism visits", "thousand visitors", "tour operators"),
    ("hospital admissions", "admissions", "public hospitals"),
    ("broadband coverage", "percent of homes", "network builders"),
    ("wage growth", "percent a year", "trade unions"),
    ("housing starts", "dwellings", "home builders"),
    ("court cases", "filings", "commercial courts"),
]
REGIONS = ["northland", "southmarch", "eastvale", "westmoor", "highfield", "lowmere"]


def page_html(title: str, sentences: list[str]) -> str:
    from tests.fakes.website import html_page

    return html_page(title, *sentences)


def build_site(reports: int, sources: int, shared: float, seed: int) -> dict[str, Any]:
    """Clusters of five reports on one topic: a share of each report's sources is the
    cluster's (cited by all five), the rest its own. Each page has two versions whose
    figures differ (the second is what a changed page becomes)."""
    rng = random.Random(seed)
    per_cluster = 5
    clusters = (reports + per_cluster - 1) // per_cluster
    n_shared = round(sources * shared)
    n_own = sources - n_shared
    pages: dict[str, list[str]] = {}
    first: dict[str, tuple[str, str]] = {}  # path → (title, first sentence) as first served
    plan: list[dict[str, Any]] = []

    def make(path: str, topic: str, region: str | None, k: int) -> None:
        where = f" in {region}" if region else ""
        aspect, noun, actor = ASPECTS[k % len(ASPECTS)]
        versions = []
        for v in (0, 1):
            value = 100 + k * 3 + v * 7
            share = 20 + (k % 30) + v * 2
            year = 2020 + k % 6 + v
            versions.append(
                page_html(
                    f"The {topic} market{where}: {aspect} ({k})",
                    [
                        f"In the {topic} market{where}, {aspect} reached {value} {noun} in "
                        f"the latest quarter, the highest level since {year}.",
                        f"{actor.capitalize()} account for {share} percent of {aspect} in "
                        f"the {topic} market{where} this year.",
                        f"The state of the {topic} market{where} depends on {actor}, whose "
                        f"{aspect} note {k} records {noun}.",
                    ],
                )
            )
            if v == 0:
                first[path] = (
                    f"The {topic} market{where}: {aspect} ({k})",
                    f"In the {topic} market{where}, {aspect} reached {value} {noun} in "
                    f"the latest quarter, the highest level since {year}.",
                )
        pages[path] = versions

    for c in range(clusters):
        topic = TOPICS[c % len(TOPICS)] + ("" if c < len(TOPICS) else str(c // len(TOPICS)))
        core = [f"/{topic}/core-{k}" for k in range(n_shared)]
        for k, path in enumerate(core):
            make(path, topic, None, k)
        for r in range(per_cluster):
            if len(plan) >= reports:
                break
            region = REGIONS[r % len(REGIONS)]
            own = [f"/{topic}/{region}-{k}" for k in range(n_own)]
            for k, path in enumerate(own):
                make(path, topic, region, 100 + k)
            plan.append(
                {
                    "question": f"What is the state of the {topic} market in {region}?",
                    "topic": topic,
                    "region": region,
                    "paths": core + own,
                }
            )
    rng.shuffle(plan)
    return {"pages": pages, "first": first, "reports": plan}


def report_markdown(report: dict[str, Any], first: dict[str, tuple[str, str]], link: Any) -> str:
    """An analyst's report citing each of its pages once (the sentence the page opens
    with), three sections, a numbered reference list."""
    paths = report["paths"]
    lines = [f"# {report['question'].rstrip('?')}", ""]
    third = (len(paths) + 2) // 3
    for s, name in enumerate(("Markets", "Players", "Outlook")):
        lines += [f"## {name}", ""]
        chunk = paths[s * third : (s + 1) * third]
        lines.append(" ".join(f"{first[p][1]} [{paths.index(p) + 1}]" for p in chunk))
        lines.append("")
    lines += ["## References", ""]
    for n, p in enumerate(paths, start=1):
        lines += [f"[{n}] [{first[p][0]}]({link(p)})", ""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reports", type=int, default=200)
    ap.add_argument("--sources", type=int, default=30)
    ap.add_argument("--shared", type=float, default=0.6, help="share of a report's sources "
                    "its whole cluster of five reports cites")  # fmt: skip
    ap.add_argument("--changed", type=float, default=0.1, help="share of pages that change")
    ap.add_argument("--latency", type=float, default=0.02, help="seconds per request")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--db", default=None, help="database URL (default: SQLite in --home)")
    ap.add_argument("--home", default=None)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    home = Path(args.home or tempfile.mkdtemp(prefix="evergreen-pool-scale-"))
    os.environ["EVERGREEN_HOME"] = str(home)
    if args.db:
        os.environ["EVERGREEN_DB"] = args.db
    from tests.fakes.tavily_server import FakeTavily
    from tests.fakes.website import Page, Website

    world = build_site(args.reports, args.sources, args.shared, args.seed)
    site = Website({p: Page(v) for p, v in world["pages"].items()},
                   latency=args.latency, validators=True)  # fmt: skip
    by_region = {(r["topic"], r["region"]): r for r in world["reports"]}

    def results(body: dict[str, Any]) -> list[dict[str, Any]]:
        if body.get("start_date"):
            return []  # the window brings nothing new: the rounds measure re-checks
        query = str(body.get("query", "")).lower()
        hit = next(
            (r for (t, g), r in by_region.items() if t in query and g in query),
            None,
        )
        if hit is None:
            return []
        return [
            {"url": site.link(p), "title": p, "content": "snippet", "score": 1 - i / 100}
            for i, p in enumerate(hit["paths"])
        ]

    with site, FakeTavily(results, key="tvly-scale") as tavily:
        env = {
            "TAVILY_API_KEY": "tvly-scale",
            "TAVILY_BASE_URL": tavily.url,
            "EVERGREEN_FETCH_ALLOWLIST": "127.0.0.1",
            "EVERGREEN_FETCH_DELAY": "0",
            "EVERGREEN_FETCH_BROWSER": "http",
            "EVERGREEN_FETCH_PER_HOST": "8",
            "EVERGREEN_TAVILY_RAW_CONTENT": "false",
            "EVERGREEN_CONFIG": str(home / "none.toml"),
            "EVERGREEN_LLM": "offline",
        }
        os.environ.update(env)
        out = run_rounds(world, site, args)
    out["workload"] = {
        "reports": len(world["reports"]),
        "sources_per_report": args.sources,
        "distinct_pages": len(world["pages"]),
        "shared_share": args.shared,
        "changed_share": args.changed,
        "latency_s": args.latency,
    }
    text = json.dumps(out, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


def round_costs(run_ids: list[int]) -> dict[str, float]:
    from sqlmodel import col, select

    from core.store.db import session_scope
    from core.store.models import CostEvent

    keys = ("fetches", "bytes", "not_modified", "shared_checks", "searches")
    with session_scope() as s:
        rows = s.exec(select(CostEvent).where(col(CostEvent.run_id).in_(run_ids))).all()
    return {k: int(sum(getattr(r, k) for r in rows)) for k in keys}


def run_rounds(world: dict[str, Any], site: Any, args: argparse.Namespace) -> dict[str, Any]:
    from core.engine.creation import create_report
    from core.engine.update import update_report

    settings = {"max_sources": args.sources + 10, "results_per_query": args.sources,
                "section_results": args.sources, "max_section_words": 0}  # fmt: skip
    rounds: dict[str, Any] = {}
    rng = random.Random(args.seed)
    paths = sorted(world["pages"])

    def measure(name: str, work: Any) -> list[int]:
        hits, sent = sum(site.hits.values()), site.body_bytes
        not_modified = sum(site.not_modified.values())
        start = time.perf_counter()
        stale.clear()
        run_ids = work()
        rounds[name] = {
            **round_costs(run_ids),
            "stale_claims_after_commit": sum(stale),
            "site_requests": sum(site.hits.values()) - hits,
            "site_304s": sum(site.not_modified.values()) - not_modified,
            "site_body_bytes": site.body_bytes - sent,
            "seconds": round(time.perf_counter() - start, 1),
        }
        print(name, rounds[name], file=sys.stderr, flush=True)
        return run_ids

    report_ids: list[int] = []

    def create_all() -> list[int]:
        """What regenerating costs: each report's question researched from scratch."""
        runs = []
        for r in world["reports"]:
            made = create_report(r["question"], source="web", settings=settings)
            runs.append(made["run_id"])
        return runs

    def import_all() -> list[int]:
        from core.app.importer import import_report
        from core.engine.schedule import save_report_settings
        from core.store.db import session_scope

        for r in world["reports"]:
            text = report_markdown(r, world["first"], site.link)
            with session_scope() as s:
                report, _summary = import_report(s, text, query=r["question"], source="web")
                s.flush()
                # a budget that keeps every source: the rounds measure re-checks, not pruning
                save_report_settings(s, report, max_sources=0, max_section_words=0)
                report_ids.append(int(report.id))
        return []

    stale: list[int] = []

    def update_all(**kw: Any) -> list[int]:
        runs = []
        for rid in report_ids:
            result = update_report(rid, approve_all=True, **kw)
            runs.append(result["run_id"])
            stale.append(int(result.get("stale_citations") or 0))
        return runs

    def change_pages() -> int:
        picked = rng.sample(paths, max(1, round(len(paths) * args.changed)))
        for p in picked:
            site.pages[p].current = 1 - site.pages[p].current  # flip to the other version
        return len(picked)

    measure("0_create_from_scratch", create_all)
    import_all()
    cited = cited_counts(report_ids)
    # the first update reads every imported citation: today each report fetches its own
    measure("1_first_update_without_pool_or_conditional", lambda: update_all(force_recheck=True))
    age_looks()
    changed = change_pages()
    measure("1b_update_without_pool_or_conditional", lambda: update_all(force_recheck=True))
    # a day passes between rounds: the looks of the last round are past the window (a
    # round's own updates, minutes apart, are within it)
    age_looks()
    changed2 = change_pages()
    measure("2_update_with_pool_and_conditional", update_all)
    age_looks()
    measure("3_update_nothing_changed", update_all)
    measure("4_update_again_within_window", update_all)
    scratch = rounds["0_create_from_scratch"]["fetches"] or 1
    for row in rounds.values():
        row["fetches_vs_scratch"] = round(row["fetches"] / scratch, 3)
    return {
        "rounds": rounds,
        "cited_sources": cited,
        "pages_changed_before_rounds_1b_and_2": [changed, changed2],
    }


def age_looks(days: float = 1.0) -> None:
    """Move every stored look back in time, as if ``days`` had passed since."""
    from datetime import timedelta

    from sqlmodel import select

    from core.store.db import session_scope
    from core.store.models import SourceCheck

    with session_scope() as s:
        for check in s.exec(select(SourceCheck)):
            check.checked_at = check.checked_at - timedelta(days=days)
            s.add(check)


def cited_counts(report_ids: list[int]) -> dict[str, float]:
    from collections import Counter

    from core.store.db import session_scope
    from core.store.repository import citations_of, get_report, get_version

    per_report: list[int] = []
    use: Counter[int] = Counter()
    with session_scope() as s:
        for rid in report_ids:
            version = get_version(s, get_report(s, rid))
            sources = {snap.source_id for snap in citations_of(s, version.id).values()}
            per_report.append(len(sources))
            use.update(sources)
    total = sum(per_report) or 1
    shared3 = sum(n for src, n in use.items() if n >= 3)
    return {
        "mean_per_report": round(sum(per_report) / max(1, len(per_report)), 1),
        "distinct": len(use),
        "share_of_citations_to_sources_cited_by_3_or_more": round(shared3 / total, 3),
    }


if __name__ == "__main__":
    main()
