"""Rewrite a corpus into the layout of long templated pages — the layout Evergreen is
measured on but that none of the public corpora has — to check that relevance does not
depend on a page's layout.

Each page version keeps its URL, title, date and text, but is written as many
enhancement-proposal repositories write theirs: the fields its header declared become a
YAML front matter (keys lower-cased, dashes for spaces), then the title, a table of
contents listing a fixed template's headings and the page's own, and a release checklist
of template instructions, identical on every page, before the page's own text (its header
block removed). A benchmark of the same questions on both corpora shows what the layout
alone costs:

    python scripts/templated_corpus.py ../shared/corpora/peps/peps_corpus.jsonl.gz OUT.jsonl.gz
    EVERGREEN_HOME=WS python -m core.cli corpus add peps_templated OUT.jsonl.gz
    EVERGREEN_HOME=WS python -m core.cli bench --corpus peps_templated \\
        --queries ../shared/corpora/peps/queries.json --out DIR --task lct

The output is a scratch file for a benchmark: keep it out of the repository.
"""

from __future__ import annotations

import gzip
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.domain.header_blocks import page_body  # noqa: E402
from core.domain.keyfacts import read_key_facts  # noqa: E402

TEMPLATE_HEADINGS = (
    "Release Signoff Checklist",
    "Summary",
    "Motivation",
    "Goals",
    "Non-Goals",
    "Proposal",
    "User Stories (Optional)",
    "Notes/Constraints/Caveats (Optional)",
    "Risks and Mitigations",
    "Design Details",
    "Test Plan",
    "Graduation Criteria",
    "Upgrade / Downgrade Strategy",
    "Version Skew Strategy",
    "Production Readiness Review Questionnaire",
    "Implementation History",
    "Drawbacks",
    "Alternatives",
    "Infrastructure Needed (Optional)",
)
CHECKLIST = """## Release Signoff Checklist

Items marked with (R) are required *prior to targeting to a milestone / release*.

- [ ] (R) Enhancement issue in release milestone, which links to this document
- [ ] (R) Design details are appropriately documented
- [ ] (R) Test plan is in place, giving consideration to reviewers' input
- [ ] (R) Graduation criteria is in place
- [ ] (R) Production readiness review completed
- [ ] (R) Production readiness review approved
- [ ] "Implementation History" section is up-to-date for milestone
- [ ] User-facing documentation has been created in the documentation repository
- [ ] Supporting documentation, e.g. design proposals, mailing list discussions, meeting
  notes, and relevant pull requests, have been linked here

<!--
**Note:** This checklist is iterative and should be reviewed and updated every time
this document is updated with new information. Provide a simplified and
layman-accessible explanation of the change, and fill in every section of the template
below before asking for a review.
-->
"""
_HEADING = re.compile(r"^(?:#{1,6}\s+(.+)|(.+)\n[=\-~^]{3,}\s*)$", re.M)


def _key(label: str) -> str:
    return re.sub(r"[\s_]+", "-", label.strip().casefold())


def _yaml_value(value: str) -> str:
    return json.dumps(" ".join(value.split()), ensure_ascii=False)


def templated(title: str, content: str) -> str:
    """The page in the templated layout (see the module docstring)."""
    facts = [f for f in read_key_facts(content) if f.value and f.raw]
    front = ["---", f"title: {_yaml_value(title)}"]
    seen = {"title"}
    for fact in facts:
        key = _key(fact.label)
        if key in seen:
            continue
        seen.add(key)
        front.append(f"{key}: {_yaml_value(fact.value)}")
    front.append("---")
    body = page_body(content).strip()
    own = [(m.group(1) or m.group(2)).strip() for m in _HEADING.finditer(body)][:30]
    toc = ["## Table of Contents", ""]
    for heading in [*TEMPLATE_HEADINGS, *own]:
        anchor = re.sub(r"[^a-z0-9 -]", "", heading.casefold()).replace(" ", "-")
        toc.append(f"- [{heading}](#{anchor})")
    return "\n".join([*front, "", f"# {title}", "", *toc, "", CHECKLIST, body, ""])


def main(source: str, target: str) -> int:
    count = 0
    with (
        gzip.open(source, "rt", encoding="utf-8") as src,
        gzip.open(target, "wt", encoding="utf-8") as dst,
    ):
        for line in src:
            record = json.loads(line)
            # the record's other fields (ids the queries name pages by) stay as they were
            record["content"] = templated(record.get("title") or "", record["content"])
            dst.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    print(f"{count} page versions written to {target}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(
            __doc__.splitlines()[0] + "\nusage: templated_corpus.py CORPUS.jsonl.gz OUT.jsonl.gz"
        )
    sys.exit(main(sys.argv[1], sys.argv[2]))
