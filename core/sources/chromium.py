"""The system Chromium that renders pages for web fetching: finding Debian's executable,
and one headless browser this process starts (on a DevTools port it picks, in a private
profile, every request through the policy proxy) for crawl4ai to attach to over CDP.

crawl4ai's own browser download does not work offline, hence the system Chromium.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

CHROMIUM_CANDIDATES = ("/usr/bin/chromium", "/usr/lib/chromium/chromium", "chromium")


def find_chromium(path: str | None = None) -> str | None:
    """The Chromium executable to drive: ``path`` if given, else Debian's."""
    for candidate in [path] if path else list(CHROMIUM_CANDIDATES):
        found = shutil.which(candidate) if candidate else None
        if found:
            return found
    return None


class Chromium:
    """A headless Chromium this process started, reachable over CDP on 127.0.0.1."""

    def __init__(self, executable: str, proxy: str, timeout: float = 20.0) -> None:
        self.profile = tempfile.mkdtemp(prefix="evergreen-chromium-")
        args = [
            executable,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--no-default-browser-check",
            # every request through the policy proxy, loopback included (no implicit bypass)
            f"--proxy-server={proxy}",
            "--proxy-bypass-list=<-loopback>",
            "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
            "--remote-debugging-port=0",
            "--remote-debugging-address=127.0.0.1",
            f"--user-data-dir={self.profile}",
            "about:blank",
        ]
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own process group: close() ends all its children
        )
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while True:
            text = port_file.read_text() if port_file.exists() else ""
            if text.strip():
                self.port = int(text.split()[0])
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError("Chromium did not open its DevTools port")
            time.sleep(0.05)

    @property
    def cdp_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def close(self) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        shutil.rmtree(self.profile, ignore_errors=True)
