"""What changed in the source passages a claim rests on, said in plain words."""

from __future__ import annotations

from typing import Any


def claim_change_text(check: dict[str, Any]) -> str:
    """What changed in the passages a claim relied on, in plain words: the differing
    figures, dates and statuses, or "passage gone"."""
    diffs: list[str] = []
    gone = 0
    for passage in check.get("passages") or []:
        if passage.get("outcome") == "gone" or passage.get("new") is None:
            gone += 1
            continue
        for d in passage.get("differences") or []:
            if d and d not in diffs:
                diffs.append(str(d))
    parts = ["; ".join(diffs)] if diffs else []
    if gone:
        parts.append("passage gone" if gone == 1 else f"{gone} passages gone")
    if not parts:
        return "passage gone" if check.get("outcome") == "gone" else "passage reworded"
    return "; ".join(parts)
