"""One OpenAI-compatible chat server, as the LLM writer talks to it: structured requests,
retries, the per-run budget, cost records and the call log.

``request`` sends one chat completion asking for a pydantic schema
(``chat.completions.parse``; a server that refuses ``json_schema``, as llama.cpp does,
gets ``json_object`` plus the schema from then on) and returns the reply's text, the
parsed object or None, and what was wrong with it. Transient failures (429 honouring
Retry-After, 5xx, timeouts, dropped connections) are retried on tenacity with exponential
backoff and jitter; a failure that stays is one EvergreenError / WriterFailed line that
never holds a key. Every HTTP call is recorded with ``core.engine.costs.record`` (tokens from
``usage``, cached tokens, $ from the price table) under the engine's current stage and
logged to the workspace's ``logs/llm_calls.jsonl`` (CALL_LOG) — never the prompt text.

What to ask and how to check the answer is the writer's (``core.writers.llm``).
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import openai
from pydantic import BaseModel, ValidationError
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt
from tenacity.wait import wait_random_exponential

from core.dates import retry_after_seconds
from core.engine import costs
from core.errors import EvergreenError
from core.writers.base import BudgetExceeded, WriterFailed
from core.writers.prompts import Prompt

log = logging.getLogger("evergreen.llm")
T = TypeVar("T", bound=BaseModel)

CALL_LOG = "logs/llm_calls.jsonl"  # relative to the workspace folder


@dataclass
class CallRecord:
    """One HTTP call to the model server, as logged (never the prompt text or a key)."""

    at: str
    writer: str  # this writer instance (one per run)
    stage: str
    prompt: str  # name@version
    model: str
    mode: str  # json_schema | json_object
    status: str  # ok (valid for the schema) | invalid | http 429 | timeout | ...
    tokens_in: int = 0
    tokens_out: int = 0
    cached_tokens: int = 0
    usd: float = 0.0
    seconds: float = 0.0


class ModelClient:
    """Requests to one model server for one writer (one per run)."""

    name = "openai"  # the provider name cost events carry

    def __init__(
        self,
        client: openai.OpenAI,
        *,
        price_for: Callable[[str], Any] | None = None,
        budget_tokens: int | None = None,
        budget_usd: float | None = None,
        secrets: Sequence[str] = (),
        attempts: int = 4,
        backoff: float = 1.0,
        backoff_max: float = 30.0,
        max_retry_after: float = 60.0,
        log_path: Path | None = None,
    ) -> None:
        self.client = client
        self.price_for = price_for
        self.budget_tokens = budget_tokens
        self.budget_usd = budget_usd
        self._secrets = [s for s in secrets if s]
        self.attempts = max(1, attempts)
        self.backoff = backoff
        self.backoff_max = backoff_max
        self.max_retry_after = max_retry_after
        self.log_path = log_path
        self.mode = "json_schema"  # becomes json_object when the server refuses json_schema
        self.calls: list[CallRecord] = []
        self.id = uuid.uuid4().hex[:12]
        self._lock = threading.Lock()

    def request(
        self, prompt: Prompt, model: str, messages: list[dict[str, str]], schema: type[T]
    ) -> tuple[str, T | None, str]:
        """One structured request with retries: (content, parsed or None, problem)."""
        self._check_budget(messages)
        if self.mode == "json_schema":
            try:
                return self._with_retries(lambda: self._request(prompt, model, messages, schema))
            except openai.APIStatusError as exc:
                if exc.status_code not in (400, 422, 500, 501) or not _about_format(exc):
                    raise self._failure(exc, model) from None
                log.warning(
                    "%s refused json_schema output (HTTP %s); using json_object with the "
                    "schema from now on.",
                    model,
                    exc.status_code,
                )
                self.mode = "json_object"
            except openai.OpenAIError as exc:
                raise self._failure(exc, model) from None
        try:
            return self._with_retries(lambda: self._request(prompt, model, messages, schema))
        except openai.OpenAIError as exc:
            raise self._failure(exc, model) from None

    def _request(
        self, prompt: Prompt, model: str, messages: list[dict[str, str]], schema: type[T]
    ) -> tuple[str, T | None, str]:
        mode = self.mode
        start = time.perf_counter()
        try:
            if mode == "json_schema":
                raw = self.client.chat.completions.with_raw_response.parse(
                    model=model, messages=messages, response_format=schema
                )
            else:
                raw = self.client.chat.completions.with_raw_response.create(
                    model=model,
                    messages=messages,
                    response_format={"type": "json_object", "schema": schema.model_json_schema()},
                )
        except openai.APIStatusError as exc:
            self._record(prompt, model, mode, f"http {exc.status_code}", start)
            raise
        except openai.APITimeoutError:
            self._record(prompt, model, mode, "timeout", start)
            raise
        except openai.APIConnectionError:
            self._record(prompt, model, mode, "connection error", start)
            raise
        try:
            data = raw.http_response.json()
        except ValueError:
            self._record(prompt, model, mode, "not json", start)
            return "", None, "the server's reply was not a chat completion"
        usage = data.get("usage") or {}
        choice = (data.get("choices") or [{}])[0]
        content = ((choice.get("message") or {}).get("content")) or ""
        problem = ""
        parsed: T | None = None
        if choice.get("finish_reason") == "length":
            problem = "the reply was cut off at the token limit; answer more briefly"
        elif not content.strip():
            problem = "the reply was empty"
        else:
            try:
                parsed = schema.model_validate_json(_strip_fences(content))
            except ValidationError as exc:
                problem = f"not valid JSON for the schema ({_short_error(exc)})"
        self._record(prompt, model, mode, "ok" if parsed is not None else "invalid", start, usage)
        return content, parsed, problem

    # -- retries -------------------------------------------------------------------------------
    def _with_retries(self, fn: Callable[[], Any]) -> Any:
        def wait(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            after = _retry_after(exc)
            if after is not None:
                return min(after, self.max_retry_after)
            return wait_random_exponential(multiplier=self.backoff, max=self.backoff_max)(state)

        def log_retry(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            log.warning(
                "model call failed (%s); retry %d/%d in %.1fs",
                self.scrub(_describe_error(exc)),
                state.attempt_number,
                self.attempts - 1,
                state.next_action.sleep if state.next_action else 0.0,
            )

        retrying = Retrying(
            stop=stop_after_attempt(self.attempts),
            wait=wait,
            retry=retry_if_exception(_transient),
            before_sleep=log_retry,
            reraise=True,
        )
        return retrying(fn)

    def _failure(self, exc: Exception, model: str) -> EvergreenError:
        """The exception to raise for a call that finally failed; never holds a key."""
        what = self.scrub(_describe_error(exc))
        if isinstance(exc, openai.AuthenticationError | openai.PermissionDeniedError):
            return EvergreenError(
                f"The model server refused the credentials (HTTP {exc.status_code}); check "
                "OPENAI_API_KEY and OPENAI_BASE_URL."
            )
        if isinstance(exc, openai.NotFoundError):
            return EvergreenError(
                f"The model server has no model {model!r} (HTTP 404); check "
                "EVERGREEN_MODEL_* and OPENAI_BASE_URL."
            )
        if isinstance(exc, openai.APIConnectionError) and not isinstance(
            exc, openai.APITimeoutError
        ):
            return EvergreenError(
                f"Cannot reach the model server ({what}) after {self.attempts} attempts; "
                "check OPENAI_BASE_URL and that the server is running."
            )
        return WriterFailed(f"{model} did not answer usably after {self.attempts} attempts: {what}")

    # -- budget, costs, log --------------------------------------------------------------------
    def _check_budget(self, messages: list[dict[str, str]]) -> None:
        estimate = sum(len(m["content"]) for m in messages) // 4
        if self.budget_tokens is not None:
            used = int(costs.spent("tokens_in") + costs.spent("tokens_out"))
            if used + estimate > self.budget_tokens:
                raise BudgetExceeded(
                    f"token budget of {self.budget_tokens:,} reached ({used:,} used; the next "
                    f"call needs about {estimate:,})"
                )
        if self.budget_usd is not None:
            used_usd = costs.spent("usd")
            if used_usd >= self.budget_usd:
                raise BudgetExceeded(
                    f"budget of ${self.budget_usd:.4f} reached (${used_usd:.4f} spent)"
                )

    def _record(
        self,
        prompt: Prompt,
        model: str,
        mode: str,
        status: str,
        start: float,
        usage: dict[str, Any] | None = None,
    ) -> None:
        usage = usage or {}
        tokens_in = int(usage.get("prompt_tokens") or 0)
        tokens_out = int(usage.get("completion_tokens") or 0)
        cached = int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0)
        usd = 0.0
        if self.price_for is not None:
            price = self.price_for(model)
            usd = (
                (tokens_in - cached) * price.input
                + cached * price.cached_input
                + tokens_out * price.output
            ) / 1_000_000
        costs.record(
            self.name,
            model,
            prompt.label,
            llm_calls=1,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cached_tokens=cached,
            usd=usd,
        )
        rec = CallRecord(
            at=datetime.now(UTC).isoformat(timespec="milliseconds"),
            writer=self.id,
            stage=_stage(),
            prompt=prompt.label,
            model=model,
            mode=mode,
            status=status,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cached_tokens=cached,
            usd=round(usd, 8),
            seconds=round(time.perf_counter() - start, 3),
        )
        with self._lock:
            self.calls.append(rec)
            if self.log_path is not None:
                try:
                    self.log_path.parent.mkdir(parents=True, exist_ok=True)
                    with self.log_path.open("a", encoding="utf-8") as fh:
                        fh.write(json.dumps(asdict(rec)) + "\n")
                except OSError as exc:  # the log is a convenience; costs are in the DB
                    log.warning("cannot write the LLM call log: %s", exc)

    def scrub(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return re.sub(r"\b(sk|tvly)-[A-Za-z0-9_-]{8,}", r"\1-***", text)


# -- module helpers ----------------------------------------------------------------------
def _stage() -> str:
    return costs.active_stage() or ""


def _strip_fences(content: str) -> str:
    text = content.strip()
    m = re.match(r"\A```(?:json)?\s*\n(.*)\n```\s*\Z", text, re.S)
    return m.group(1) if m else text


def _short_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ())) or "reply"
    return f"{where}: {err.get('msg')}"


def _transient(exc: BaseException) -> bool:
    if isinstance(exc, openai.RateLimitError | openai.APITimeoutError | openai.APIConnectionError):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code >= 500 and not _about_format(exc)
    return False


def _about_format(exc: openai.APIStatusError) -> bool:
    """Does the error complain about the structured-output request itself?"""
    text = f"{exc.message} {getattr(exc, 'body', '')}".lower()
    return any(w in text for w in ("json_schema", "response_format", "schema", "grammar"))


def _retry_after(exc: BaseException | None) -> float | None:
    """What a rate-limited model server asks to wait: ``retry-after-ms`` (OpenAI's), else
    ``Retry-After``."""
    if not isinstance(exc, openai.APIStatusError):
        return None
    headers = exc.response.headers
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    return retry_after_seconds(headers.get("retry-after"))


def _describe_error(exc: BaseException | None) -> str:
    if exc is None:
        return "unknown error"
    if isinstance(exc, openai.APITimeoutError):
        return "timed out"
    if isinstance(exc, openai.APIStatusError):
        msg = exc.message if isinstance(exc.message, str) else ""
        return f"HTTP {exc.status_code} {_flat(msg, 200)}".strip()
    if isinstance(exc, openai.APIConnectionError):
        return "connection failed"
    return type(exc).__name__


def _flat(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
