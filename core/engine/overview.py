"""The top of a report: a short answer to the question and a table of key facts.

Both are built by the engine from what the report already says and cites — no writer
call, so they cost nothing and cannot say more than the sections and their sources:

- **Overview**: one sentence counting the tracked items by their current status (from
  the table), then, for each of the first sections, the cited sentence of that section
  that best answers the question (quoted as the section has it, with its citation).
- **Key facts**: one row per cited source that declares a status (or stage) near its
  top — the item, its current value, and since when, if the page states that date —
  each row cited. Updates rebuild it from the newest snapshots, so it is the first
  thing an update revises when a declared status changes. A value that states a plan
  whose date is over by the version's date ("due to start in August 2026", in October)
  is listed under the table as past its date, with what another cited page says of
  the item.

A report's sections are stored under fixed keys (:data:`OVERVIEW_KEY`,
:data:`KEY_FACTS_KEY`); the writer's own sections never use them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date

from core.domain.citations import strip_citations
from core.domain.expectations import past_due
from core.domain.key_fact import KeyFact
from core.domain.keyfacts import read_key_facts
from core.domain.passage_changes import STATUS_STEMS
from core.domain.report_state import SectionDoc
from core.domain.sentences import cited_sentences, points_in_page, refers_back
from core.domain.text import clean_inline, phrase_pattern, quotable_sentences, stem

Scorer = Callable[[Sequence[str]], list[float]]
OVERVIEW_KEY = "overview"
KEY_FACTS_KEY = "key-facts"
OVERVIEW_HEADING = "Overview"
KEY_FACTS_HEADING = "Key facts"
DERIVED_KEYS = (OVERVIEW_KEY, KEY_FACTS_KEY)
DERIVED_HEADINGS = (OVERVIEW_HEADING, KEY_FACTS_HEADING)  # slugs: the keys above
MAX_ROWS = 24
ANSWER_SECTIONS = 4  # the overview quotes at most this many sections
LEAD_BONUS = 0.05  # a paragraph's opening sentence is preferred by this much relevance
#: date fields that say since when a status holds (the decision, not the creation)
_SINCE_KEY = re.compile(
    r"resolution|status-date|decided|decision|accepted|approved|adopted|effective|final|since"
)
_BOLD = re.compile(r"\*\*(.+?)\*\*")


@dataclass(frozen=True)
class FactRow:
    marker: int
    item: str
    status: str
    since: str
    label: str = "Status"  # the page's own name for the field ("Status", "status", "Stage")


def _status(facts: Sequence[KeyFact]) -> KeyFact | None:
    for kind in ("status", "stage"):
        for f in facts:
            if f.kind == kind and f.value:
                return f
    return None


def _status_value(fact: KeyFact) -> str:
    """The declared value as the page shows it: its bold part when the line has one
    ("**Implemented (Swift 5.5)** ([Acceptance post](…))" → "Implemented (Swift 5.5)")."""
    bold = _BOLD.search(fact.raw)
    value = clean_inline(bold.group(1)) if bold else fact.value
    return value.replace("|", "/").strip()


_DATE = re.compile(
    r"\b\d{1,2}[- ](?:[A-Z][a-z]{2,8})[- ]\d{4}\b|\b\d{4}-\d{2}-\d{2}\b"
    r"|\b(?:[A-Z][a-z]{2,8}) \d{1,2}, \d{4}\b"
)


def _since(facts: Sequence[KeyFact]) -> str:
    """The date the page gives for its decision ("Resolution: 24-Oct-2023"), if any."""
    for f in facts:
        if _SINCE_KEY.search(f.key) and (m := _DATE.search(f.value)):
            return m.group(0)
    return ""


def _item(title: str, limit: int = 80) -> str:
    text = clean_inline(title).replace("|", "/").strip(" .") or "Untitled"
    return text if len(text) <= limit else text[: limit - 1].rsplit(" ", 1)[0] + "…"


def fact_rows(order: Sequence[int], pages: Mapping[int, tuple[str, str]]) -> list[FactRow]:
    """A row for each marker of ``order`` (as the report first cites them) whose page
    (``pages``: marker → (title, content)) declares a status."""
    rows: list[FactRow] = []
    for marker in dict.fromkeys(order):
        if marker not in pages:
            continue
        title, content = pages[marker]
        facts = read_key_facts(content)
        status = _status(facts)
        if status is None:
            continue
        rows.append(
            FactRow(marker, _item(title), _status_value(status), _since(facts), status.label)
        )
    return rows[:MAX_ROWS]


def key_facts_body(rows: Sequence[FactRow], due: Sequence[PastDue] = (), as_of: str = "") -> str:
    """The key facts as a Markdown table, each row cited. A "Since" column when at least
    half the rows have a decision date; fewer, and the dates stand in their status cells
    ("Withdrawn since 31-Jan-2025") rather than in a column of dashes. Then the rows whose
    value is past its date (``due``, as of ``as_of``), each with what another source of
    the report says of the item."""
    if not rows:
        return ""
    column = sum(1 for r in rows if r.since) * 2 >= len(rows)
    head = (
        "| Item | Status | Since |\n| --- | --- | --- |"
        if column
        else "| Item | Status |\n| --- | --- |"
    )
    lines = [head]
    for r in rows:
        status = r.status if column or not r.since else f"{r.status} since {r.since}"
        cells = [r.item, f"{status} [{r.marker}]"] + ([r.since or "—"] if column else [])
        lines.append("| " + " | ".join(cells) + " |")
    table = "\n".join(lines)
    if not due:
        return table
    items = []
    for d in due:
        line = f"- {d.row.item}: {d.row.status.rstrip(' .')} [{d.row.marker}]."
        if d.mention:
            line += f" Elsewhere in this report: {d.mention[1]} [{d.mention[0]}]."
        items.append(line)
    lead = f"**Past their date as of {as_of}:**" if as_of else "**Past their date:**"
    return f"{table}\n\n{lead}\n\n" + "\n".join(items)


@dataclass(frozen=True)
class PastDue:
    """A row whose value expects something by a date now over, and a sentence another
    cited page gives about the item (marker, text)."""

    row: FactRow
    mention: tuple[int, str] | None


def past_due_rows(
    rows: Sequence[FactRow], pages: Mapping[int, tuple[str, str]], as_of: date
) -> list[PastDue]:
    """The rows whose status states an expectation whose date is over by ``as_of``
    ("Funded; construction due to start in August 2026", read in October), each with
    the latest-cited other page's sentence naming the item, if one does."""
    due = [row for row in rows if past_due(row.status, as_of)]
    return [PastDue(row, _mention(row, pages, as_of)) for row in due]


def _mention(
    row: FactRow, pages: Mapping[int, tuple[str, str]], as_of: date
) -> tuple[int, str] | None:
    """(marker, sentence): a sentence of another page (the latest to join the report
    first) that names ``row``'s item and is not itself a plan past its date."""
    name = re.split(r"\s*(?:[:(]| — )", row.item, maxsplit=1)[0].strip()
    if len(name) < 8:
        return None
    pattern = phrase_pattern(name, ignore_case=True)
    for marker in sorted(pages, reverse=True):
        if marker == row.marker:
            continue
        for sentence in quotable_sentences(pages[marker][1]):
            if (
                pattern.search(sentence)
                and len(sentence) <= MENTION_MAX
                and not past_due(sentence, as_of)
                and not refers_back(sentence)
                and not points_in_page(sentence)
            ):
                return marker, sentence.rstrip(" .")
    return None


MENTION_MAX = 300  # a longer sentence is not a note under a table


def _status_word(status: str) -> str:
    """A status without its details: "In construction since 14 September 2026" and
    "Funded; construction due …" count as "In construction" and "Funded"."""
    head = re.split(r"\s*(?:[(;,]| since | on | from | until | in \d)", status, maxsplit=1)[0]
    return head.strip() or status


def status_count(rows: Sequence[FactRow]) -> str:
    """ "Of the 9 items tracked below, 4 are Final, 3 Draft and 2 Withdrawn.", or "All 24
    items tracked below are Implemented."; with a status that is a phrase, a list: "Status
    of the 9 items tracked below: Final (2), Financial investment decision reached (1), …"
    ('' if none)"""
    if not rows:
        return ""
    if len(rows) == 1:
        return f"The one item tracked below is {rows[0].status}."
    counts = Counter(_status_word(r.status) for r in rows).most_common()
    (first, n), rest = counts[0], counts[1:]
    if not rest:
        return f"{'Both' if n == 2 else f'All {n}'} items tracked below are {first}."
    if any(len(v.split()) > PHRASE_WORDS for v, _k in counts):
        # "1 Financial investment decision reached" does not read: a phrase is listed
        listed = ", ".join(f"{v} ({k})" for v, k in counts)
        return f"Status of the {len(rows)} items tracked below: {listed}."
    parts = [f"{n} {'is' if n == 1 else 'are'} {first}"] + [f"{k} {v}" for v, k in rest]
    listed = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
    return f"Of the {len(rows)} items tracked below, {listed}."


PHRASE_WORDS = 2  # a status of more words is a phrase, not a word a count can precede


def _candidates(section: SectionDoc, current: Mapping[int, str]) -> list[str]:
    """The section's cited prose sentences that can stand alone at the top of a report:
    no table rows, list items or field lines; none that refers back to a sentence before
    it ("The technology has not yet …", "The demonstration is designed …", "… welcomed
    this provision"); none that
    names a status its source no longer declares ("… published draft rules" of a page now
    Final: true of its day, not the answer now). ``current``: marker → the status its
    source declares now."""
    out = []
    for _pos, sentence, markers in cited_sentences(section.body):
        text = sentence.strip()
        if text in out:
            continue
        if text.startswith(("|", "- ", "* ", "+ ")) or " — " in text.split("[", 1)[0]:
            continue
        if len(strip_citations(text)) < 40 or refers_back(text) or _BARE.match(text):
            continue
        if _POINTS_BACK.search(text) or points_in_page(text) or _names_back(text, section.body):
            continue
        if _names_an_older_status(text, [current[m] for m in markers if m in current]):
            continue
        out.append(text)
    return out


#: "The demonstration is designed …": a thing named only by a common noun was named in
#: the sentences before; at the top of a report it is not (a verb other than an auxiliary
#: cannot be told from an adjective without a parser: "The average installed price …")
_BARE = re.compile(
    r"^(?:The|This|That|These|Those)\s+[a-z][\w-]*\s+"
    r"(?:is|was|are|were|has|have|had|will|would|can|could|may|must|should|does|did)\b"
)


def _names_back(sentence: str, body: str) -> bool:
    """Does ``sentence`` open with "The" and a noun that ends a name ``body`` gives ("The
    regulation applies …" after "the Battery Stewardship Regulation")? It means that thing,
    named in the sentences before it."""
    m = re.match(r"The ([a-z][\w-]*)\b", sentence)
    if m is None:
        return False
    noun = m.group(1)
    named = rf"\b[A-Z][\w-]*(?:\s+[A-Z][\w-]*)*\s+{re.escape(noun.capitalize())}\b"
    return re.search(named, body) is not None


#: "… welcomed this provision": a demonstrative and a noun point at what the sentences
#: before said
_POINTS_BACK = re.compile(r"\b(?:this|these|those)\s+[a-z]")

#: statuses of something not decided yet: a sentence naming one describes an earlier
#: state once its source declares a later one ("published draft rules" of a page now Final)
_EARLY = frozenset(
    stem(w)
    for w in "draft proposed provisional pending planned review awaiting development".split()
)


def _status_stems(text: str) -> set[str]:
    return {stem(w) for w in re.findall(r"[A-Za-z]+", text.casefold())} & STATUS_STEMS


def _names_an_older_status(sentence: str, statuses: Sequence[str]) -> bool:
    early = _status_stems(strip_citations(sentence)) & _EARLY
    return bool(early) and any(early - _status_stems(status) for status in statuses)


def _paragraph_leads(body: str) -> set[str]:
    """The sentences that open a paragraph of ``body``: where a writer states what the
    paragraph is about (the lead an extractive summary does well to prefer)."""
    leads = set()
    for paragraph in re.split(r"\n\s*\n", body):
        found = cited_sentences(paragraph)
        if found:
            leads.add(found[0][1].strip())
    return leads


def answer_sentences(
    sections: Sequence[SectionDoc],
    scorer: Callable[[str], Scorer] | None = None,
    current: Mapping[int, str] | None = None,
) -> list[str]:
    """For each of the first ANSWER_SECTIONS sections, its sentence that best answers the
    question about that section (``scorer(heading)``: texts → relevance scores; without
    it, the section's first sentence). ``current``: marker → the status its source
    declares now (the key facts)."""
    picks: list[str] = []
    for section in [s for s in sections if s.level >= 1][:ANSWER_SECTIONS]:
        options = [s for s in _candidates(section, current or {}) if s not in picks]
        if not options:
            continue
        if scorer is None:
            picks.append(options[0])
            continue
        values = scorer(section.heading)([strip_citations(s) for s in options])
        leads = _paragraph_leads(section.body)
        worth = [
            v + (LEAD_BONUS if s in leads else 0.0) for s, v in zip(options, values, strict=True)
        ]
        picks.append(options[max(range(len(options)), key=lambda i: (worth[i], -i))])
    return picks


def overview_body(rows: Sequence[FactRow], sentences: Sequence[str], changes: str = "") -> str:
    parts = [p for p in [status_count(rows), *sentences] if p]
    return "\n\n".join(p for p in (" ".join(parts), changes) if p)


@dataclass(frozen=True)
class Since:
    """The version an update starts from, as its key-facts table stood then: the date it
    was as of, and marker → the status its table showed (``table_statuses``)."""

    as_of: date
    statuses: Mapping[int, str]


_ROW = re.compile(
    r"^\|\s*(?P<item>[^|]*?)\s*\|\s*(?P<cell>[^|]*?)\s*\[(?P<marker>\d+)\]\s*"
    r"(?:\|[^|]*)?\|\s*$"
)
_SINCE_TAIL = re.compile(r"\s+since\s+\S.*$")


def table_statuses(body: str) -> dict[int, str]:
    """marker → status, read back from a key-facts body this module wrote (its table's
    rows "| item | status [m] | since |"); the rows under the table are not read."""
    out: dict[int, str] = {}
    for line in body.splitlines():
        m = _ROW.match(line.strip())
        if m is not None and not line.startswith("| ---"):
            out.setdefault(int(m.group("marker")), m.group("cell").strip())
    return out


def _bare(status: str) -> str:
    """A status as compared across versions: without a "since …" tail (a table writes the
    decision date in the cell or in its own column), spaces and case."""
    return " ".join(_SINCE_TAIL.sub("", status).split()).casefold()


def status_changes(rows: Sequence[FactRow], since: Since | None, as_of: date | None) -> str:
    """The items whose declared status changed since the version an update starts from:
    a dated heading, then per item its declaration now — "Item — Status: Final [3]", a
    claim checked against the line that declares it like any other — and what the table
    said then (the report's own earlier text, not a source's). '' when none changed."""
    if since is None:
        return ""
    lines = []
    for row in rows:
        before = since.statuses.get(row.marker)
        if before is None or _bare(before) == _bare(row.status):
            continue
        was = _SINCE_TAIL.sub("", before).strip(" .")
        lines.append(
            f"- {row.item} — {row.label}: {row.status} [{row.marker}]. "
            f"On {since.as_of.isoformat()} this report had: {was}."
        )
    if not lines:
        return ""
    span = f"{since.as_of.isoformat()} → {as_of.isoformat()}" if as_of else "since then"
    return f"**Declared status changes, {span}:**\n\n" + "\n".join(lines)


def derived_sections(
    sections: Sequence[SectionDoc],
    pages: Mapping[int, tuple[str, str]],
    scorer: Callable[[str], Scorer] | None = None,
    as_of: date | None = None,
    since: Since | None = None,
) -> list[SectionDoc]:
    """The overview and key-facts sections for a report whose own sections are
    ``sections`` (derived ones among them are ignored) and whose cited pages are
    ``pages`` (marker → (title, content), as of the version, ``as_of``). ``since``: the
    version an update starts from; the overview lists what changed since."""
    own = [s for s in sections if s.key not in DERIVED_KEYS]
    order = [m for s in own for m in s.markers]
    rows = fact_rows(order, pages)
    out = []
    current = {row.marker: row.status for row in rows}
    changes = status_changes(rows, since, as_of)
    body = overview_body(rows, answer_sentences(own, scorer, current), changes)
    if body:
        out.append(SectionDoc(OVERVIEW_KEY, OVERVIEW_HEADING, 2, body))
    table = key_facts_table(rows, cited_pages(order, pages), as_of)
    if table:
        out.append(SectionDoc(KEY_FACTS_KEY, KEY_FACTS_HEADING, 2, table))
    return out


def cited_pages(
    order: Sequence[int], pages: Mapping[int, tuple[str, str]]
) -> dict[int, tuple[str, str]]:
    """The ``pages`` the markers of ``order`` cite."""
    return {m: pages[m] for m in dict.fromkeys(order) if m in pages}


def key_facts_table(
    rows: Sequence[FactRow], cited: Mapping[int, tuple[str, str]], as_of: date | None
) -> str:
    """The key-facts section's body: the table, and the rows past their date by ``as_of``
    with what the other ``cited`` pages say of their items."""
    due = past_due_rows(rows, cited, as_of) if as_of else []
    return key_facts_body(rows, due, as_of.isoformat() if as_of else "")
