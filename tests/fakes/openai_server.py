"""A fake OpenAI-compatible chat server on 127.0.0.1: scripted replies, realistic usage.

With nothing scripted it answers every structured request plausibly from the prompt
itself (queries from the question, an outline from the <source> tags, sections that
quote each source's first sentence with its [id]); `script()` queues special replies
for the next requests: malformed JSON, an empty reply, unknown citation ids, an HTTP
status (429 with Retry-After, 500, ...), or a reply slower than the client's timeout.

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
from typing import Any

from tests.fakes.loopback import LoopbackServer, Reply, Request

SOURCE = re.compile(
    r'<source id="(\d+)">\ntitle: (.*?)\n(?:url: .*?\n)?---\n(.*?)\n</source>', re.S
)
SENTENCE = re.compile(r"[A-Z][^.!?\n]{30,300}[.!?]")


def tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4)) if text else 0


@dataclass
class Step:
    kind: str  # ok | malformed | empty | unknown_ids | status | slow
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
            content = json.dumps(self.answer(body, unknown_ids=step.kind == "unknown_ids"))
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
    def answer(self, body: dict[str, Any], *, unknown_ids: bool = False) -> dict[str, Any]:
        schema = _schema_name(body)
        user = body["messages"][-1]["content"]
        if body["messages"][-1]["content"].startswith("Your previous reply"):
            user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        sources = [(int(i), t, c) for i, t, c in SOURCE.findall(user)]
        if schema == "QueryPlan":
            q = _field(user, "Research question")
            return {"queries": [q, f"{q} latest", f"{q} costs"][:3]}
        if schema == "OutlinePlan":
            sections = []
            for k in range(0, len(sources), 2):
                group = sources[k : k + 2]
                sections.append(
                    {"heading": group[0][1][:60], "source_ids": [i for i, _, _ in group]}
                )
            return {"sections": sections}
        if schema == "SectionText":
            current = re.search(r"<current_section>\n(.*?)\n</current_section>", user, re.S)
            if current:
                return {"body": _revise(current.group(1), user, sources, unknown_ids)}
            parts = []
            for i, _title, content in sources:
                m = SENTENCE.search(content)
                if m:
                    parts.append(f"{m.group(0)[:-1]} [{i}].")
            if unknown_ids:
                parts.append("An invented study says otherwise [99][4242].")
            return {"body": " ".join(parts)}
        if schema == "RaceJudgement":
            # longer, better-cited reports score higher: deterministic and plausible
            def score(tag: str) -> dict[str, float]:
                m = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", user, re.S)
                text = m.group(1) if m else ""
                base = min(10.0, 2.0 + len(text) / 1500 + text.count("[") / 20)
                return {d: round(base, 2) for d in ("comprehensiveness", "insight",
                                                     "instruction_following", "readability")}

            return {"report_a": score("report_a"), "report_b": score("report_b"),
                    "rationale": "compared by length and citations"}
        if schema == "ChangeSummary":
            return {
                "summary": f"{_field(user, 'Source')} changed ({_field(user, 'Kind of change')})."
            }
        return {}


def _revise(body: str, user: str, sources: list[tuple[int, str, str]], unknown_ids: bool) -> str:
    """Apply each "was → now" claim (in place if quoted, else appended, cited), then add
    a sentence from each new source: the smallest edit, as the prompt asks."""
    changed: set[int] = set()
    marker = 0
    lines = user.splitlines()
    for k, line in enumerate(lines):
        head = re.match(r"Source \[(\d+)\]", line)
        if head:
            marker = int(head.group(1))
            changed.add(marker)
        was = re.match(r'\s+- was: "(.*)"$', line)
        now = re.match(r'\s+now: "(.*)"$', lines[k + 1]) if k + 1 < len(lines) else None
        if was and now:
            before, after = was.group(1).rstrip("."), now.group(1).rstrip(".")
            if before in body:
                body = body.replace(before, after)
            else:
                body += f" {after} [{marker}]."
    extra = []
    for i, _title, content in sources:
        m = SENTENCE.search(content)
        if i not in changed and m:
            extra.append(f"{m.group(0)[:-1]} [{i}].")
    if unknown_ids:
        extra.append("An invented study says otherwise [99].")
    return body + ("\n\n" + " ".join(extra) if extra else "")


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
