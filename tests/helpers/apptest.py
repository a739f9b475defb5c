"""Checks on a Streamlit AppTest run, shared by the app tests."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest


def ok(at: AppTest) -> AppTest:
    assert not at.exception, at.exception
    return at
