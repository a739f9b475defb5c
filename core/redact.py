"""Credentials inside URLs are never shown or stored: one helper for every door.

``redact_credentials`` replaces the user-info part of every ``scheme://user:pass@host``
in a text with ``***`` (the whole user-info up to the last ``@`` of the authority, as a
WHATWG parser reads it), and the value of every query parameter named for a secret
(``?token=…``, ``&api_key=…``, ``access_token``, ``sig`` …), leaving the rest of the URL
readable. Error messages (EvergreenError), stored run errors and the Settings screen
pass through it.
"""

from __future__ import annotations

import re

REDACTED = "***"
# scheme "://" then the authority's user-info: anything up to the last "@" before the
# authority ends ("/", "?", "#", "\\" or whitespace end it).
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.\-]*://)[^/?#\\\s]*@")
# a query parameter whose name says it carries a secret, up to the next parameter
_SECRET_PARAM = re.compile(
    r"(?P<name>[?&;](?:[\w.\-]*[_\-.])?(?:token|key|apikey|secret|password|passwd|pwd|auth"
    r"|authorization|sig|signature|credential|credentials|session|code)=)[^&;#\s\"'<>]*",
    re.IGNORECASE,
)


def redact_credentials(text: str) -> str:
    """``text`` with the credentials of every URL in it replaced by ``***``."""
    if "=" in text:
        text = _SECRET_PARAM.sub(lambda m: f"{m.group('name')}{REDACTED}", text)
    if "@" not in text:
        return text
    return _USERINFO.sub(lambda m: f"{m.group('scheme')}{REDACTED}@", text)
