"""Prompt templates: one file per LLM operation in ``prompts/``, versioned.

A template is Markdown with YAML front matter naming it, its version and its
variables, then an optional ``[system]`` part and a ``[user]`` part::

    ---
    name: write_section
    version: "1"
    variables: [question, heading, sources]
    ---
    [system]
    You write one section ...
    [user]
    Question: {{question}}

Placeholders are ``{{name}}``. Loading checks that the placeholders are exactly the
declared variables; rendering requires every variable and substitutes in one pass,
so text inside a value (a fetched page, say) is never expanded again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from core.config import prompts_dir
from core.domain.headers import split_front_matter
from core.errors import EvergreenError

PROMPTS_DIR = prompts_dir()
_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}")
_PART = re.compile(r"^\[(system|user)\][ \t]*$", re.M)


@dataclass(frozen=True)
class Prompt:
    name: str
    version: str
    variables: tuple[str, ...]
    system: str
    user: str

    @property
    def label(self) -> str:
        """``name@version``, as recorded with every call."""
        return f"{self.name}@{self.version}"

    def render(self, **values: object) -> list[dict[str, str]]:
        """Chat messages with every ``{{variable}}`` filled in."""
        missing = [v for v in self.variables if v not in values]
        extra = [k for k in values if k not in self.variables]
        if missing or extra:
            raise EvergreenError(
                f"Prompt {self.label}: missing variables {missing or '-'}, "
                f"unknown variables {extra or '-'}."
            )
        text = {k: str(v) for k, v in values.items()}

        def fill(template: str) -> str:
            return _PLACEHOLDER.sub(lambda m: text[m.group(1)], template)

        messages = [{"role": "system", "content": fill(self.system)}] if self.system else []
        return [*messages, {"role": "user", "content": fill(self.user)}]


def parse_prompt(text: str, where: str = "prompt") -> Prompt:
    try:
        meta, body = split_front_matter(text)
    except ValueError as exc:
        raise EvergreenError(f"{where}: {exc}.") from None
    if not meta:
        raise EvergreenError(f"{where}: no front matter (name, version, variables).")
    parts = _PART.split(body)
    # ['', 'system', text, 'user', text]
    sections = dict(zip(parts[1::2], parts[2::2], strict=True))
    if "user" not in sections or set(sections) - {"system", "user"}:
        raise EvergreenError(f"{where}: needs a [user] part (and may have a [system] part).")
    sections.setdefault("system", "")
    name, version = meta.get("name"), meta.get("version")
    variables = tuple(meta.get("variables") or ())
    if not name or version is None:
        raise EvergreenError(f"{where}: front matter needs name and version.")
    used = set(_PLACEHOLDER.findall(sections["system"] + sections["user"]))
    if used != set(variables):
        raise EvergreenError(
            f"{where}: placeholders {sorted(used)} differ from declared variables "
            f"{sorted(variables)}."
        )
    return Prompt(
        name=str(name),
        version=str(version),
        variables=variables,
        system=sections["system"].strip(),
        user=sections["user"].strip(),
    )


@lru_cache(maxsize=32)
def load_prompt(name: str, folder: Path = PROMPTS_DIR) -> Prompt:
    """The template ``prompts/NAME.md``."""
    path = folder / f"{name}.md"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        raise EvergreenError(f"Prompt template {path} is missing; reinstall Evergreen.") from None
    prompt = parse_prompt(text, str(path))
    if prompt.name != name:
        raise EvergreenError(f"{path}: front matter names it {prompt.name!r}, not {name!r}.")
    return prompt
