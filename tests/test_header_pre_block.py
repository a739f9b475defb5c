"""Header blocks inside a preformatted block (issue 41: declared fields in any layout).

A page may declare its fields as ``Key: value`` lines inside an HTML ``<pre>`` block
(MediaWiki pages) or a Markdown fence at its top, continuation lines indented further.
The header reader reads such a block as a header — key facts, header units that are not
quotable prose — and never a code sample further down a page.
"""

from __future__ import annotations

import gzip
import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.domain.header_blocks import header_blocks, page_body
from core.domain.header_changes import header_units
from core.domain.keyfacts import declared_line, fact_changes, fact_map, read_key_facts
from core.domain.page_units import split_sentences
from tests.test_header_robustness import _read_all, fields

CORPORA = Path(__file__).resolve().parents[2] / "shared" / "corpora"

MEDIAWIKI_PAGE = """\
<pre>
  PIP: 341
  Layer: Consensus (soft fork)
  Title: Taproot: version 1 spending rules
  Author: Ada Example <ada@example.org>
          Bob Example <bob@example.org>
  Status: Final
  Type: Standards Track
  Created: 2020-01-19
</pre>

==Abstract==

This document proposes a new spending rule. It is deployed.

==Specification==

<pre>
  Example: this is not a header
  Status: not a field of the page
</pre>
"""

FENCED_PAGE = """\
# Proposal 7: A made-up process

```
  Number: 7
  Title: A made-up process
  Authors: Ada Example <ada@example.org>
           Bob Example <bob@example.org>
  Status: Draft
  Type: Process
  Created: 2025-01-09
```

## Abstract

The process is described here.
"""


def _facts(text: str) -> dict[str, str]:
    return {f.key: f.value for f in read_key_facts(text)}


def test_a_mediawiki_pre_block_is_a_header() -> None:
    blocks = header_blocks(MEDIAWIKI_PAGE)
    assert [b.layout for b in blocks] == ["pre-block"]
    block = blocks[0]
    assert MEDIAWIKI_PAGE[block.start : block.end].startswith("<pre>")
    assert MEDIAWIKI_PAGE[block.start : block.end].endswith("</pre>")
    facts = _facts(MEDIAWIKI_PAGE)
    assert facts["status"] == "Final"
    assert facts["type"] == "Standards Track"
    assert facts["layer"] == "Consensus (soft fork)"
    assert facts["title"] == "Taproot: version 1 spending rules"  # a colon inside a value
    status = fact_map(read_key_facts(MEDIAWIKI_PAGE))["status"]
    assert status.kind == "status"
    assert status.raw == "Status: Final"  # from the key, not the block's indentation
    assert MEDIAWIKI_PAGE[status.start : status.start + len(status.raw)] == status.raw


def test_continuation_lines_are_joined_to_their_field() -> None:
    facts = fact_map(read_key_facts(MEDIAWIKI_PAGE))
    author = facts["author"]
    assert author.value == "Ada Example <ada@example.org> Bob Example <bob@example.org>"
    assert author.raw.endswith("Bob Example <bob@example.org>")
    assert "bob" not in facts  # the continuation line is no field of its own
    fenced = fact_map(read_key_facts(FENCED_PAGE))
    assert fenced["authors"].value.endswith("Bob Example <bob@example.org>")


def test_a_fenced_markdown_header_after_a_title_is_read() -> None:
    blocks = header_blocks(FENCED_PAGE)
    assert [b.layout for b in blocks] == ["pre-block"]
    assert _facts(FENCED_PAGE)["status"] == "Draft"
    tilde = FENCED_PAGE.replace("```", "~~~~")
    assert _facts(tilde)["status"] == "Draft"


def test_a_status_change_in_the_block_is_a_key_fact_change() -> None:
    later = MEDIAWIKI_PAGE.replace("Status: Final", "Status: Replaced", 1)
    assert fact_changes(read_key_facts(MEDIAWIKI_PAGE), read_key_facts(later)) == [
        ("Status", "Final", "Replaced")
    ]
    assert declared_line("PIP 341", MEDIAWIKI_PAGE) == (
        "PIP 341 — Status: Final; Created: 2020-01-19."
    )


def test_the_block_is_header_not_quotable_prose() -> None:
    units = split_sentences(MEDIAWIKI_PAGE)
    assert units[:3] == [
        "PIP: 341",
        "Layer: Consensus (soft fork)",
        "Title: Taproot: version 1 spending rules",
    ]
    assert "Author: Ada Example <ada@example.org> Bob Example <bob@example.org>" in units
    assert "<pre>" not in units[:8] and "</pre>" not in units[:9]
    assert not any("PIP: 341 Layer" in u for u in units)  # never one run of prose
    # every field of the block is judged as a key fact, not as a claim
    assert {"Status: Final", "Type: Standards Track", "PIP: 341"} <= header_units(
        header_blocks(MEDIAWIKI_PAGE)
    )
    body = page_body(MEDIAWIKI_PAGE)
    assert "Status: Final" not in body and "It is deployed." in body


def test_a_pre_block_further_down_is_not_a_header() -> None:
    page = "==Abstract==\n\nA sample follows.\n\n<pre>\n  Status: 200\n  Type: json\n</pre>\n"
    assert header_blocks(page) == []
    # the code sample of the MediaWiki page is not read either: one block, the first
    assert len(header_blocks(MEDIAWIKI_PAGE)) == 1
    assert "not a field of the page" not in _facts(MEDIAWIKI_PAGE).values()
    fenced = "# Tool\n\n## Usage\n\n```\nStatus: ok\nType: text\n```\n"
    assert header_blocks(fenced) == []


def test_a_code_block_at_the_top_is_not_a_header() -> None:
    for page in (
        "<pre>\n  x = 1\n  Status: Final\n</pre>\n",  # a line that is no field
        "```python\nStatus: Final\nType: x\n```\n",  # a fence with an info string is code
        "<pre>\n  Status: Final\n\n  Type: x\n</pre>\n",  # a blank line inside
        "<pre>\n  Status: Final\n</pre>\n",  # one field only
        "<pre>\n  Status: Final\n  Type: x\n",  # never closed
    ):
        assert header_blocks(page) == [], page


def test_a_block_after_a_comment_or_a_short_lead_is_a_header() -> None:
    commented = "<!-- generated: do not edit -->\n\n" + MEDIAWIKI_PAGE
    assert _facts(commented)["status"] == "Final"
    lead = "{{template}}\n\nNOTICE: this is a work in progress.\n\n" + MEDIAWIKI_PAGE
    assert _facts(lead)["status"] == "Final"
    # after a lead, a block that declares no status or stage is no header
    untyped = lead.replace("  Status: Final\n", "")
    assert "status" not in _facts(untyped)
    assert header_blocks(untyped) == []
    long_lead = "".join(f"Line {n} of a long introduction.\n" for n in range(40))
    assert header_blocks(long_lead + "\n" + MEDIAWIKI_PAGE) == []


def test_other_layouts_still_win_at_the_top() -> None:
    page = "Status: Draft\nType: Process\n\n<pre>\n  Status: Final\n  Type: x\n</pre>\n"
    blocks = header_blocks(page)
    assert [b.layout for b in blocks] == ["rfc822"]
    assert _facts(page)["status"] == "Draft"


pre_layout = st.sampled_from(
    [
        "<pre>\n{}\n</pre>\n\nBody.",
        "```\n{}\n```\n\nBody.",
        "~~~\n{}",  # never closed
        "# Title\n\n<!-- a\n{}\n\n<pre>\n{}\n</pre>",
        "{{{{t}}}}\nLead: x\n\n<pre>\n  {}\n      {}\n</pre>\n\n<pre>\n{}\n</pre>",
    ]
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(layout=pre_layout, body=fields)
def test_generated_pre_blocks_never_crash_a_reader(layout: str, body: str) -> None:
    text = layout.replace("{}", body)
    _read_all(text)
    for block in header_blocks(text):
        for fact in block.facts:
            assert text[fact.start : fact.start + len(fact.raw)] == fact.raw


# --------------------------------------------------------------------------- a real corpus

_FIRST_PRE = re.compile(r"^(?:<pre>|```)[ \t]*\n(.*?)\n(?:</pre>|```)[ \t]*$", re.M | re.S)
_STATUS_LINE = re.compile(r"^[ \t]*Status:[ \t]*(.*?)[ \t]*$", re.M)


def test_every_bip_page_with_a_status_in_its_pre_block_declares_its_status() -> None:
    """Every page version of the shared BIP corpus whose first preformatted block holds a
    ``Status:`` line gets a status key fact with that line's value."""
    path = CORPORA / "bips" / "bips_corpus.jsonl.gz"
    if not path.exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI has the public corpora, but {path} is missing")
        pytest.skip(f"no BIP corpus at {path}")
    with_status = 0
    missing: list[str] = []
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            record = json.loads(line)
            content = record.get("content") or ""
            block = _FIRST_PRE.search(content)
            status = _STATUS_LINE.search(block.group(1)) if block else None
            if status is None:
                continue
            with_status += 1
            facts = fact_map(read_key_facts(content))
            got = facts["status"].value if "status" in facts else None
            if got != " ".join(status.group(1).split()):
                missing.append(f"{record['url']} {record['as_of']}: {got!r}")
    assert with_status >= 700, with_status  # the corpus holds 719 page versions
    assert not missing, f"{len(missing)} of {with_status}: " + "; ".join(missing[:5])
