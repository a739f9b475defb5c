"""The Review screen through Streamlit's AppTest: what a decision redraws and what it
rebuilds. A card is a cached read model of its own proposal, so an analyst's edit builds
that one card again, not the run's every diff; a decision updates the pending count and
Commit at once (the bars rerun with the card), not at the screen's next poll.

Runs are done synchronously here (EVERGREEN_JOBS=sync), on the sample report updated to
2026-04-15.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from sqlmodel import select
from streamlit.testing.v1 import AppTest

import pages._cards as cards
from core.db import session_scope
from core.models import SectionProposal


def ok(at: AppTest) -> AppTest:
    assert not at.exception, at.exception
    return at


def review_update(at: AppTest) -> AppTest:
    """Update the sample report to 2026-04-15 and open its run on the Review screen."""
    at.selectbox(key="asof_1").select("2026-04-15").run()
    ok(at.button(key="update_1").click().run())
    return ok(at.switch_page("pages/review.py").run())


def pending_line(at: AppTest) -> tuple[int, int]:
    for caption in at.caption:
        found = re.fullmatch(r"(\d+) of (\d+) section\(s\) still pending\.", caption.value)
        if found:
            return int(found[1]), int(found[2])
    raise AssertionError("no pending count on the screen")


def decision_keys(at: AppTest) -> list[str]:
    """The sections in screen order, by the key of their first decision button."""
    prefixes = ("approve:", "keep:")
    return [b.key.split(":", 1)[1] for b in at.button if b.key.startswith(prefixes)]


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The keys of the cards built (not taken from the cache) from now on."""
    keys: list[str] = []
    real = cards.review_card

    def counting(session: Any, proposal: SectionProposal, as_of: Any) -> dict[str, Any]:
        keys.append(proposal.key)
        return real(session, proposal, as_of)

    monkeypatch.setattr(cards, "review_card", counting)
    return keys


def test_an_edit_builds_its_own_card_again_and_no_other(app: AppTest, built: list[str]) -> None:
    at = review_update(app)
    assert built and len(built) == len(set(built))  # each card built once on opening
    built.clear()
    at.text_area(key="edit:preamble").input("_Sample data; revised by the analyst._")
    ok(at.button(key="save:preamble").click().run())
    assert built == ["preamble"]
    assert "approved (edited)" in "\n".join(h.proto.body for h in at.get("html"))


def test_a_decision_is_a_cache_hit_for_every_card(app: AppTest, built: list[str]) -> None:
    at = review_update(app)
    first = decision_keys(at)[0]
    built.clear()
    ok(at.button(key=f"reject:{first}").click().run())
    assert built == []
    with session_scope() as session:
        p = session.exec(select(SectionProposal).where(SectionProposal.key == first)).one()
        assert p.decision == "rejected"


def test_a_decision_updates_the_pending_count_and_commit_at_once(app: AppTest) -> None:
    at = review_update(app)
    keys = decision_keys(at)
    pending, total = pending_line(at)
    assert total == len(keys) and pending >= 2 and at.button(key="commit").disabled
    for key in keys:
        names = {b.key for b in at.button}
        button = at.button(key=f"approve:{key}" if f"approve:{key}" in names else f"keep:{key}")
        if button.disabled:  # decided already
            continue
        ok(button.click().run())
        pending -= 1
        assert pending_line(at) == (pending, total)
        assert at.button(key="commit").disabled == (pending > 0)
    assert pending == 0 and at.button(key="approve_all").disabled
