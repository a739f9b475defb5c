"""Evidence: the report's evidence pool — each source's last check, change kind and
snapshot history, and the diff between any two snapshots of a source — and, from the
shared pool, which other reports cite each source and when any report last checked it."""

from __future__ import annotations

import streamlit as st

from core.app.evidence_views import (
    evidence_pool,
    snapshot_claims_html,
    snapshot_diff_html,
    snapshot_rows,
)
from core.app.view_text import esc, link_html
from core.dates import iso
from core.engine.checks import source_use
from core.store.db import session_scope
from pages._shared import pick_report, style, watch_runs


def _sim(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _reasons(texts: list[str]) -> str:
    """A snapshot's reasons, one per line (commas are inside many of them)."""
    return "<br>".join(esc(t) for t in texts) or "—"


def _snapshot_label(snap: dict, snaps: list[dict]) -> str:
    """A snapshot as the analyst picks it: its as-of date, and its fetch time when two
    snapshots share that date (never the database id)."""
    same_day = [s for s in snaps if s["as_of"] == snap["as_of"]]
    when = f"as of {snap['as_of']}" if snap["as_of"] else f"fetched {snap['fetched_at']}"
    if len(same_day) > 1 and snap["as_of"]:
        when += f" (fetched {snap['fetched_at']})"
    return when


LOOK_WORDS = {
    "fetched": "read",
    "not_modified": "unchanged (HTTP 304, no body read)",
    "gone": "gone",
    "error": "could not be read",
}


def _others(use: dict, report_id: int) -> list[dict]:
    return [r for r in use["reports"] if r["id"] != report_id]


def _shared_cell(use: dict, report_id: int) -> str:
    others = _others(use, report_id)
    if not others:
        return "—"
    names = ", ".join(f"{r['title']} (report {r['id']})" for r in others)
    label = f"{len(others)} other report{'s' if len(others) != 1 else ''}"
    return f'<span title="{esc(names)}">{esc(label)}</span>'


def _look_line(use: dict, report_id: int) -> str:
    """The shared pool's word on a source: who else cites it, its last look by anyone."""
    others = _others(use, report_id)
    parts = []
    if others:
        names = ", ".join(f"{r['title']} (report {r['id']})" for r in others)
        parts.append(f"Also cited by {names}.")
    look = use["last_check"]
    if look is not None:
        who = f" by report {look['report_id']}'s update" if look["report_id"] else ""
        served = look["served"]
        parts.append(
            f"Last checked {iso(look['checked_at'])}{who}: "
            f"{LOOK_WORDS.get(look['outcome'], look['outcome'])}"
            + (f"; that check served {served} reports." if served > 1 else ".")
        )
    return " ".join(parts)


def pool_table(rows: list[dict], use: dict[int, dict], report_id: int) -> None:
    body = "".join(
        "<tr>"
        f"<td>[{esc(r['marker'])}]</td>"
        f"<td>{link_html(r['url'], r['title'] or r['url'])}"
        f'<div class="eg-url">{esc(r["url"])}</div></td>'
        f"<td>{esc(r['last_checked'] or 'not yet')}</td>"
        f'<td><span class="eg-kind eg-kind-{esc(r["status"])}">{esc(r["status_label"])}</span>'
        "</td>"
        f"<td>{esc(r['snapshots'])}</td>"
        f"<td>{esc(r['latest_as_of'] or '—')}</td>"
        f"<td>{_shared_cell(use[r['source_id']], report_id)}</td>"
        "</tr>"
        for r in rows
    )
    st.html(
        '<table class="eg-ev"><thead><tr><th>[n]</th><th>Source</th><th>Last checked</th>'
        "<th>Change</th><th>Snapshots</th><th>Newest as of</th><th>Also cited by</th>"
        "</tr></thead>"
        f"<tbody>{body}</tbody></table>"
    )


def source_detail(entry: dict, use: dict, report_id: int) -> None:
    with session_scope() as session:
        snaps = snapshot_rows(session, entry["source_id"])
    st.html(
        f'<div class="eg-card-head">[{esc(entry["marker"])}] '
        f"{link_html(entry['url'], entry['title'] or entry['url'])}</div>"
    )
    line = _look_line(use, report_id)
    if line:
        st.caption(line)
    rows = "".join(
        "<tr>"
        f"<td>{esc(s['as_of'] or '—')}</td>"
        f"<td>{esc(s['fetched_at'] or '—')}</td>"
        f'<td><span class="eg-kind eg-kind-{esc(s["change_kind"])}">'
        f"{esc(s['kind_label'])}</span></td>"
        f"<td>{_sim(s['similarity'])}</td>"
        f"<td>{_reasons(s['reason_texts'])}</td>"
        f"<td>{esc(s['chars']) if s['has_content'] else 'not fetched'}</td>"
        "</tr>"
        for s in snaps
    )
    st.html(
        '<table class="eg-ev"><thead><tr><th>As of</th><th>Fetched</th>'
        "<th>Change</th><th>Similarity</th><th>Why</th><th>Characters</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )
    with_content = [s for s in snaps if s["has_content"]]
    if len(with_content) < 2:
        st.caption("Fewer than two fetched snapshots: nothing to compare yet.")
        return
    ids = [s["id"] for s in with_content]
    label = {s["id"]: _snapshot_label(s, with_content) for s in with_content}
    c1, c2 = st.columns(2)
    a = c1.selectbox("From snapshot", ids, index=len(ids) - 2, format_func=label.get, key="snap_a")
    b = c2.selectbox("To snapshot", ids, index=len(ids) - 1, format_func=label.get, key="snap_b")
    with session_scope() as session:
        claims = snapshot_claims_html(session, b)
        diff = snapshot_diff_html(session, a, b)
    if claims:
        st.markdown("**Changed claims** (recorded when the newer snapshot was taken)")
        st.html(claims)
    st.html(diff)


def main() -> None:
    style()
    st.title("Evidence")
    report_id = pick_report(key="evidence_report_pick")
    if report_id is None:
        return
    watch_runs(report_id)  # a run committed elsewhere: a new version to show
    with session_scope() as session:
        pool = evidence_pool(session, report_id)
        use = source_use(session, [p["source_id"] for p in pool])
    if not pool:
        st.info("This report's evidence pool is empty.")
        return
    st.caption(f"{len(pool)} source(s) in this report's evidence pool.")
    pool_table(pool, use, report_id)
    markers = [p["marker"] for p in pool]
    titles = {p["marker"]: f"[{p['marker']}] {p['title'] or p['url']}" for p in pool}
    marker = st.selectbox("Source", markers, format_func=titles.get, key="evidence_source")
    entry = next(p for p in pool if p["marker"] == marker)
    source_detail(entry, use[entry["source_id"]], report_id)


main()
