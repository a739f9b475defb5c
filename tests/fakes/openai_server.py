"""A fake OpenAI-compatible chat server on 127.0.0.1: scripted replies, realistic usage.

With nothing scripted it answers every structured request plausibly from the prompt
itself (queries from the question, an outline from the <source> tags, sections that
quote each source's first sentence with its [id], and give that sentence as the quote
supporting it); a revision replaces each sentence named in a <claim> block with the
block's "now:" passage, cited with the same id (and drops it when every passage is
gone), and replies with those edits as the revise prompt asks; asked only to extend a
section (or several at once), it gives the new sources' paragraph. `script()` queues
special replies for the next requests: malformed JSON, an empty reply, unknown citation
ids, quotes no source contains (`bad_quotes`), no edits whatever the claims say
(`ignore_claims`), an HTTP status (429 with Retry-After, 500, ...), or a reply slower
than the client's timeout.

Usage accounting: tokens ≈ characters / 4 (the usual rule of thumb for English text with
OpenAI's tokenisers), prompt = every message plus the response schema; cached tokens
follow OpenAI's prompt caching (the longest prefix shared with an earlier prompt, in
128-token steps, once it reaches 1,024 tokens).
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from tests.fakes.loopback import LoopbackServer, Reply, Request

SOURCE = re.compile(
    r'<source id="(\d+)">\ntitle: (.*?)\n(?:url: .*?\n)?(?:declares: .*?\n)?---\n(.*?)\n</source>',
    re.S,
)
SECTION = re.compile(r'<section id="(\d+)">\n(.*?)\n</section>', re.S)  # extend_sections
DECLARES = re.compile(r'<source id="(\d+)">\n(?:[^\n]*\n){1,2}?declares: (.*?)\n---\n')
STATUS = re.compile(r"\b(?:Status|Stage): [^;]+")
# a sentence may wrap over lines, never into a blank line (a paragraph's end), a list item
# or an excerpt's "[…]" (text left out)
SENTENCE = re.compile(r"[A-Z](?:[^.!?\n]|\n(?![ \t]*(?:\n|[-*+•] |\d+[.)] |\[…\]))){30,300}[.!?]")
FIELD_LINE = re.compile(r"^\s*(?:[-*+]\s+)?(?:\*\*)?[A-Za-z][\w ()/-]{0,40}(?:\*\*)?:\s")
SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[-\"'(\[\w])")  # between two sentences
MARKUP_LINE = re.compile(r"^\s*(?:\.\.|#|\||>)")


def first_sentence(content: str) -> str | None:
    """The first prose sentence of a page, as a plausible model would quote it: not a
    header field ("Author: …"), a heading, a table row, a directive or a footnote, not
    begun inside a word or address, and not cut short at "e.g." or inside "2.7". A
    sentence wrapped over lines is read whole (a model reads past a line break), its
    spacing made one line."""
    for m in SENTENCE.finditer(content):
        line_start = content.rfind("\n", 0, m.start()) + 1
        line = content[line_start : content.find("\n", m.start()) % (len(content) + 1)]
        if FIELD_LINE.match(line) or MARKUP_LINE.match(line):
            continue
        before = content[m.start() - 1 : m.start()]
        if before and not (before.isspace() or before in "(\"'"):
            continue  # inside a word or an address ("…/TP40014097-CH26"): not a start
        after = content[m.end() : m.end() + 1]
        if after and not after.isspace():
            continue  # "2.7", "e.g.x": not a sentence end
        if re.search(r"\[\d+\]", m.group(0)) or re.search(r"\b(?:e\.g|i\.e|vs|cf)\.$", m.group(0)):
            continue
        return " ".join(m.group(0).split())
    return None


CLAIM = re.compile(r'<claim source="(\d+)">\n(.*?)\n</claim>', re.S)
EXTEND = "The section as it stands (kept as it is)"  # the extend_section prompt
BAD_QUOTE = "A passage that none of the sources contains, invented for this reply."


def tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4)) if text else 0


@dataclass
class Step:
    kind: str  # ok | malformed | empty | unknown_ids | bad_quotes | ignore_claims | status | slow
    content: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


class FakeOpenAI:
    def __init__(self, *, refuse_json_schema: bool = False) -> None:
        self.refuse_json_schema = refuse_json_schema
        self.requests: list[dict[str, Any]] = []  # every request body received
        self.headers: list[dict[str, str]] = []
        self.replies: list[dict[str, Any]] = []  # every 200 reply sent (with usage)
        self._script: deque[Step] = deque()
        self._prompts: list[str] = []
        self._lock = threading.Lock()
        self.server = LoopbackServer(self._handle)

    # -- control --------------------------------------------------------------------
    def script(self, *steps: Step | str) -> None:
        for s in steps:
            self._script.append(Step(s) if isinstance(s, str) else s)

    @property
    def base_url(self) -> str:
        return f"{self.server.url}/v1"

    def __enter__(self) -> FakeOpenAI:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.stop()

    def usage_totals(self) -> dict[str, int]:
        out = {"calls": len(self.replies), "prompt": 0, "completion": 0, "cached": 0}
        for r in self.replies:
            u = r["usage"]
            out["prompt"] += u["prompt_tokens"]
            out["completion"] += u["completion_tokens"]
            out["cached"] += u["prompt_tokens_details"]["cached_tokens"]
        return out

    # -- serving ----------------------------------------------------------------------
    def _handle(self, req: Request) -> Reply:
        if not req.path.endswith("/chat/completions"):
            return Reply(404, {"error": {"message": "not found"}})
        body = req.json()
        with self._lock:
            self.requests.append(body)
            self.headers.append(req.headers)
            step = self._script.popleft() if self._script else Step("ok")
        fmt = (body.get("response_format") or {}).get("type")
        if self.refuse_json_schema and fmt == "json_schema":
            return Reply(
                500,
                {
                    "error": {
                        "code": 500,
                        "message": "Unsupported response_format type: json_schema",
                        "type": "server_error",
                    }
                },
            )
        if step.kind == "status":
            return Reply(
                step.status,
                step.content or {"error": {"message": "scripted"}},
                headers=step.headers,
            )
        if step.kind == "slow":
            time.sleep(step.delay)
        if step.kind == "malformed":
            content = '{"body": "The reply stops in the middle of a str'
        elif step.kind == "empty":
            content = ""
        elif step.content is not None:
            content = step.content if isinstance(step.content, str) else json.dumps(step.content)
        else:
            content = json.dumps(self.answer(body, kind=step.kind))
        return Reply(200, self._completion(body, content))

    def _completion(self, body: dict[str, Any], content: str) -> dict[str, Any]:
        prompt = "".join(m.get("content") or "" for m in body["messages"])
        prompt += json.dumps(body.get("response_format") or {})
        with self._lock:
            lcp = max((_common_prefix(prompt, p) for p in self._prompts), default=0)
            self._prompts.append(prompt)
        cached = (tokens(prompt[:lcp]) // 128) * 128 if tokens(prompt[:lcp]) >= 1024 else 0
        reply = {
            "id": f"chatcmpl-{len(self.replies) + 1}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": tokens(prompt),
                "completion_tokens": tokens(content),
                "total_tokens": tokens(prompt) + tokens(content),
                "prompt_tokens_details": {"cached_tokens": cached},
            },
        }
        with self._lock:
            self.replies.append(reply)
        return reply

    # -- plausible answers ------------------------------------------------------------
    def answer(
        self, body: dict[str, Any], *, unknown_ids: bool = False, kind: str = "ok"
    ) -> dict[str, Any]:
        unknown_ids = unknown_ids or kind == "unknown_ids"
        schema = _schema_name(body)
        user = body["messages"][-1]["content"]
        if body["messages"][-1]["content"].startswith("Your previous reply"):
            user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        sources = [(int(i), t, c) for i, t, c in SOURCE.findall(user)]
        if schema == "QueryPlan":
            q = _field(user, "Research question")
            return {"queries": [q, f"{q} latest", f"{q} costs"][:3]}
        if schema == "OutlinePlan":
            parts = re.findall(r"^- (.+): sources ([\d, ]+)$", user, re.M)
            if parts:  # as the prompt asks: the question's parts are the sections
                return {
                    "sections": [
                        {"heading": name, "source_ids": [int(i) for i in ids.split(",")]}
                        for name, ids in parts
                    ]
                }
            sections = []
            for k in range(0, len(sources), 2):
                group = sources[k : k + 2]
                sections.append(
                    {"heading": group[0][1][:60], "source_ids": [i for i, _, _ in group]}
                )
            return {"sections": sections}
        if schema == "SectionEdits":  # a revision: the sentences that change, and an addition
            current = re.search(r"<current_section>\n(.*?)\n</current_section>", user, re.S)
            old = current.group(1) if current else ""
            if kind == "ignore_claims":
                return {"edits": [], "add": "", "quotes": []}
            edited, added, quotes = _revise(old, user, sources, unknown_ids)
            if kind == "bad_quotes":
                quotes = [{**q, "quote": BAD_QUOTE} for q in quotes]
            return {"edits": _edits(old, edited), "add": added, "quotes": quotes}
        if schema == "SectionText":
            current = re.search(r"<current_section>\n(.*?)\n</current_section>", user, re.S)
            if current and EXTEND in user:  # only the paragraph the sources add
                text, quotes = _added(current.group(1), user, sources, unknown_ids)
            else:
                parts, quotes = [], []
                declared = {int(i): d for i, d in DECLARES.findall(user)}
                for i, title, content in sources:
                    status = STATUS.search(declared.get(i, ""))
                    if status:  # as the prompt asks: the item's current status first
                        parts.append(f"{title} — {status.group(0)} [{i}].")
                        quotes.append(_quote(parts[-1], i, status.group(0)))
                    first = first_sentence(content)
                    if first:
                        parts.append(f"{first[:-1]} [{i}].")
                        quotes.append(_quote(parts[-1], i, first))
                if unknown_ids:
                    parts.append("An invented study says otherwise [99][4242].")
                text = " ".join(parts)
            if kind == "bad_quotes":
                quotes = [{**q, "quote": BAD_QUOTE} for q in quotes]
            return {"body": text, "quotes": quotes}
        if schema == "SectionAdditions":  # several extensions at once: each on its own
            entries = []
            for n, block in SECTION.findall(user):
                current = re.search(r"<current_section>\n(.*?)\n</current_section>", block, re.S)
                mine = [(int(i), t, c) for i, t, c in SOURCE.findall(block)]
                text, quotes = _added(current.group(1) if current else "", block, mine, unknown_ids)
                if kind == "bad_quotes":
                    quotes = [{**q, "quote": BAD_QUOTE} for q in quotes]
                entries.append({"section": int(n), "body": text, "quotes": quotes})
            return {"sections": entries}
        if schema == "RaceJudgement":
            # longer, better-cited reports score higher: deterministic and plausible
            def score(tag: str) -> dict[str, float]:
                m = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", user, re.S)
                text = m.group(1) if m else ""
                base = min(10.0, 2.0 + len(text) / 1500 + text.count("[") / 20)
                return {
                    d: round(base, 2)
                    for d in (
                        "comprehensiveness",
                        "insight",
                        "instruction_following",
                        "readability",
                    )
                }

            return {
                "report_a": score("report_a"),
                "report_b": score("report_b"),
                "rationale": "compared by length and citations",
            }
        if schema == "ChangeSummary":
            return {
                "summary": f"{_field(user, 'Source')} changed ({_field(user, 'Kind of change')})."
            }
        return {}


def _quote(sentence: str, source_id: int, quote: str) -> dict[str, Any]:
    return {"sentence": sentence, "source_id": source_id, "quote": quote}


def _apply_claims(body: str, user: str) -> tuple[str, set[int], list[dict[str, Any]]]:
    """Replace each sentence named in a <claim> block by its "now:" passages, cited with
    the block's id (dropped when every passage is gone): (body, claim ids, quotes)."""
    ids: set[int] = set()
    quotes: list[dict[str, Any]] = []
    for marker, block in CLAIM.findall(user):
        ids.add(int(marker))
        sentence = _field(block, "sentence")
        now = [n.strip() for n in re.findall(r"^now: (.*)$", block, re.M)]
        revised = {
            f"{prose} [{marker}].": n for n in now if not n.startswith("(") and (prose := _prose(n))
        }
        # the sentence as written in the body, wherever its lines wrap (every copy of it)
        pattern = r"\s+".join(re.escape(w) for w in sentence.split())
        while sentence and (m := re.search(pattern, body)):
            start, end = m.start(), m.end()
            if not revised:  # dropped, with one space beside it
                if body[start - 1 : start] == " ":
                    start -= 1
                elif body[end : end + 1] == " ":
                    end += 1
            body = body[:start] + " ".join(revised) + body[end:]
            if " ".join(revised) and re.search(pattern, " ".join(revised)):
                break  # the revision restates the sentence: nothing left to replace
        quotes += [_quote(r, int(marker), n) for r, n in revised.items()]
    return body, ids, quotes


def _revise(
    body: str, user: str, sources: list[tuple[int, str, str]], unknown_ids: bool
) -> tuple[str, str, list[dict[str, Any]]]:
    """Rewrite each sentence a <claim> names with its new passage, apply each remaining
    "was → now" change to a sentence that states its old words, add a changed source's
    new declared status no sentence states, then a sentence from each new source: the
    smallest edit, as the prompt asks. Returns (the section edited in place, what is
    added after it, quotes)."""
    body, claimed, quotes = _apply_claims(body, user)
    changed: set[int] = set()
    added: list[str] = []
    marker = 0
    lines = user.splitlines()
    for k, line in enumerate(lines):
        head = re.match(r"Source \[(\d+)\]", line)
        if head:
            marker = int(head.group(1))
            changed.add(marker)
        was = re.match(r'\s+- was: "(.*)"$', line)
        now = re.match(r'\s+now: "(.*)"$', lines[k + 1]) if k + 1 < len(lines) else None
        if was and now and marker not in claimed:  # a claim block says it more precisely
            before, after = was.group(1).rstrip("."), _prose(now.group(1))
            if not after:
                continue  # code or markup: nothing a writer would put in prose
            # only the sentences that cite this source and state the old words; a change
            # no sentence states is not added (the prompt asks for the smallest edit)
            for sentence in [x for x in _sentences_citing(body, marker) if before in x]:
                body = body.replace(sentence, sentence.replace(before, after))
    declared = {int(i): d for i, d in DECLARES.findall(user)}
    for i, title, _content in sources:  # a declared status the section does not state yet
        status = STATUS.search(declared.get(i, ""))
        said = _sentences_citing(f"{body} {' '.join(added)}", i)
        if i in changed and status and not any(status.group(0) in x for x in said):
            added.append(f"{title} — {status.group(0)} [{i}].")
            quotes.append(_quote(added[-1], i, status.group(0)))
    extra, more = _new_paragraph([s for s in sources if s[0] not in changed], unknown_ids)
    text = "\n\n".join(part for part in (" ".join(added), extra) if part)
    return body, text, quotes + more


def _edits(before: str, after: str) -> list[dict[str, str]]:
    """The sentence edits that turn ``before`` into ``after`` (as the revise prompt asks:
    each changed sentence as it stood, and what replaces it)."""
    a, b = _split(before), _split(after)
    out: list[dict[str, str]] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        olds, news = a[i1:i2], b[j1:j2]
        if op == "equal":
            continue
        if not olds:  # inserted: said with the sentence before it (or after, at the start)
            anchor = a[i1 - 1] if i1 else a[0]
            joined = [anchor, *news] if i1 else [*news, anchor]
            out.append({"old": anchor, "new": " ".join(joined)})
        elif len(olds) == len(news):
            out += [{"old": o, "new": n} for o, n in zip(olds, news, strict=True)]
        else:
            out.append({"old": olds[0], "new": " ".join(news)})
            out += [{"old": o, "new": ""} for o in olds[1:]]
    return out


def _split(body: str) -> list[str]:
    """The sentences of ``body``, paragraph by paragraph."""
    return [
        s.strip()
        for para in re.split(r"\n\s*\n", body)
        for s in SENTENCE_BREAK.split(para)
        if s.strip()
    ]


def _added(
    body: str, user: str, sources: list[tuple[int, str, str]], unknown_ids: bool
) -> tuple[str, list[dict[str, Any]]]:
    """What a revision would add after ``body`` (a changed source's new status, a
    sentence from each new source), without the section: (text, quotes). An extension
    keeps the section as it stands, so what the revision would edit in place is not
    made."""
    _edited, text, quotes = _revise(body, user, sources, unknown_ids)
    return text, [q for q in quotes if q["sentence"] in text]


def _new_paragraph(
    sources: list[tuple[int, str, str]], unknown_ids: bool
) -> tuple[str, list[dict[str, Any]]]:
    """A sentence from each new source (its first prose sentence), cited, with quotes."""
    extra, quotes = [], []
    for i, _title, content in sources:
        first = first_sentence(content)
        if first:
            extra.append(f"{first[:-1]} [{i}].")
            quotes.append(_quote(extra[-1], i, first))
    if unknown_ids:
        extra.append("An invented study says otherwise [99].")
    return " ".join(extra), quotes


def _prose(passage: str) -> str:
    """A page passage as a model would restate it in a sentence: list markers and markup
    dropped; "" for code, directives and table rows, which it would not copy."""
    text = " ".join(passage.split()).strip()
    if MARKUP_LINE.match(text) or re.search(r"^(?:def|class|import|from)\s|[{}=]|::", text):
        return ""
    text = re.sub(r"^(?:[-*+•]|\d+[.)])\s+", "", text).replace("**", "").replace("``", "")
    return text.rstrip(".…: ")


def _sentences_citing(body: str, marker: int) -> list[str]:
    """The sentences of ``body`` (as written) that end citing ``marker``."""
    parts = SENTENCE_BREAK.split(body)
    return [p.strip() for p in parts if re.search(rf"\[{marker}\][.!?]?$", p.strip())]


def _schema_name(body: dict[str, Any]) -> str:
    fmt = body.get("response_format") or {}
    if fmt.get("type") == "json_schema":
        return fmt["json_schema"]["name"]
    return (fmt.get("schema") or {}).get("title", "")


def _field(text: str, label: str) -> str:
    m = re.search(rf"^{re.escape(label)}: (.*)$", text, re.M)
    return m.group(1).strip() if m else ""


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i
