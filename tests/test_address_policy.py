"""The address policy binds the browser, URLs are read as browsers read them, and
credentials inside URLs are never shown or stored.

Trap servers listen on loopback addresses the policy refuses (127.0.0.2 and [::1]; the
tests allow only 127.0.0.1, where the site under test lives). A trap counts every TCP
connection it accepts: each test asserts it saw none. Browser tests skip only when no
Chromium is installed and CI is not "true"."""

from __future__ import annotations

import asyncio
import http.client
import os
import re
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import select

from core.errors import EvergreenError
from core.sources.urlpolicy import UrlPolicy, UrlRefused
from core.sources.web import WebFetcher
from tests.conftest import run_cli
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.tavily_server import FakeTavily
from tests.fakes.website import Page, Website, html_page
from tests.helpers.web import FETCH_MODES, HAVE_CHROMIUM, LOOPBACK, NEEDS_CHROMIUM

MODES = FETCH_MODES
TEXT = (
    "Grid batteries kept getting cheaper through the year while new projects came online. "
    "Analysts expect prices to keep falling as cell makers add capacity."
)
SECRET = "hunter2-very-secret"


class Trap:
    """An HTTP server on an address the policy must refuse; counts every connection."""

    def __init__(self, host: str) -> None:
        class Server(ThreadingHTTPServer):
            address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
            daemon_threads = True

            def process_request(self, request: Any, client_address: Any) -> None:
                trap.connections += 1
                super().process_request(request, client_address)

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                body = b"<html><body><h1>Trap</h1><p>trap secret</p></body></html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        trap = self
        self.host = host
        self.connections = 0
        self.server = Server((host, 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def authority(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    def url(self, path: str = "/", scheme: str = "http") -> str:
        return f"{scheme}://{self.authority}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def traps() -> Iterator[list[Trap]]:
    made = [Trap("127.0.0.2"), Trap("::1")]
    yield made
    for trap in made:
        trap.close()


def wait_for(predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


# -- URLs read the way browsers read them ----------------------------------------------------
@pytest.mark.parametrize(
    ("url", "browser_host"),
    [
        ("http://127.0.0.1:18900\\@public2.example/x", "127.0.0.1"),
        ("http://0x7f000001/", "127.0.0.1"),
        ("http://2130706433/", "127.0.0.1"),
        ("http://127.1/", "127.0.0.1"),
    ],
)
def test_urls_python_and_browsers_read_differently_are_refused(url: str, browser_host: str) -> None:
    policy = UrlPolicy.from_allowlist(["public2.example", "2130706433", "0x7f000001", "127.1"])
    with pytest.raises(UrlRefused, match="read this URL differently") as err:
        policy.check(url)
    assert f"a browser would request {browser_host}" in str(err.value)


def test_the_policy_decides_on_the_host_a_browser_requests() -> None:
    policy = UrlPolicy.from_allowlist([".example", "::1"])
    target = policy.check("http://Bücher.example/x")  # an IDN host is not a disagreement
    assert (target.host, target.port, target.addresses) == ("xn--bcher-kva.example", 80, ())
    target = policy.check("http://[0:0::1]:8080/")
    assert (target.host, target.port) == ("[::1]", 8080)
    assert [str(a) for a in target.addresses] == ["::1"]


# -- the proxy every browser request goes through ---------------------------------------------
@pytest.fixture
def proxy() -> Iterator[Any]:
    from core.sources.policy_proxy import PolicyProxy

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    started = asyncio.run_coroutine_threadsafe(PolicyProxy(LOOPBACK).start(), loop).result(10)
    yield started
    asyncio.run_coroutine_threadsafe(started.close(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


def via_proxy(proxy: Any, url: str) -> tuple[int, str]:
    conn = http.client.HTTPConnection("127.0.0.1", int(proxy.url.rsplit(":", 1)[1]), timeout=10)
    try:
        conn.request("GET", url)
        reply = conn.getresponse()
        return reply.status, reply.read().decode()
    finally:
        conn.close()


def tunnel_via_proxy(proxy: Any, authority: str) -> None:
    host, _, port = authority.rpartition(":")
    conn = http.client.HTTPConnection("127.0.0.1", int(proxy.url.rsplit(":", 1)[1]), timeout=10)
    conn.set_tunnel(host.strip("[]"), int(port))
    try:
        conn.connect()
    finally:
        conn.close()


def test_proxy_refuses_before_any_connection_and_passes_allowed_requests(
    proxy: Any, traps: list[Trap]
) -> None:
    with Website({"/ok": Page([html_page("Allowed", TEXT)])}) as site:
        status, body = via_proxy(proxy, site.link("/ok"))
        assert status == 200 and "Allowed" in body and site.hits["/ok"] == 1
        tunnel_via_proxy(proxy, f"127.0.0.1:{site.server.port}")  # CONNECT to an allowed host
    for trap in traps:
        status, body = via_proxy(proxy, trap.url("/secret"))
        assert status == 403 and "loopback address" in body
        with pytest.raises(OSError, match="403"):
            tunnel_via_proxy(proxy, trap.authority)
        status, body = via_proxy(proxy, f"http://127.0.0.1:1\\@{trap.authority}/")
        assert status in (400, 403)
    assert [t.connections for t in traps] == [0, 0]
    assert len(proxy.refused) >= 4


# -- the fetcher, in both modes ---------------------------------------------------------------
@pytest.fixture(params=MODES)
def fetcher(request: pytest.FixtureRequest) -> Iterator[WebFetcher]:
    f = WebFetcher(policy=LOOPBACK, browser=request.param, delay=0, timeout=15, attempts=1)
    yield f
    f.close()


@pytest.mark.parametrize("trap_index", [0, 1], ids=["127.0.0.2", "ipv6-loopback"])
def test_redirect_to_a_refused_address_never_reaches_it(
    fetcher: WebFetcher, traps: list[Trap], trap_index: int
) -> None:
    trap = traps[trap_index]
    pages = {
        "/jump": Page([""], status=302, headers={"Location": trap.url("/secret")}),
        "/jump-tls": Page([""], status=302, headers={"Location": trap.url("/s", "https")}),
    }
    with Website(pages) as site:
        with pytest.raises(UrlRefused, match="loopback address"):
            fetcher.fetch(site.link("/jump"))
        with pytest.raises(UrlRefused, match="loopback address"):
            fetcher.fetch(site.link("/jump-tls"))
        assert site.hits["/jump"] == 1 and site.hits["/jump-tls"] == 1
    time.sleep(0.3)
    assert trap.connections == 0


def test_unreachable_hosts_fail_as_before_not_as_the_proxy_answer(fetcher: WebFetcher) -> None:
    port = closed_port()
    pages = {"/away": Page([""], status=302, headers={"Location": f"http://127.0.0.1:{port}/"})}
    fetcher.attempts = 3  # a server error would be tried again
    waits: list[float | None] = []
    decide = fetcher._retry_wait

    def retry_wait(url: str, result: Any, attempt: int) -> tuple[float | None, str]:
        wait, note = decide(url, result, attempt)
        waits.append(wait)
        return wait, note

    fetcher._retry_wait = retry_wait  # type: ignore[method-assign]
    with Website(pages) as site:
        for url in (f"http://127.0.0.1:{port}/x", site.link("/away")):
            waits.clear()
            with pytest.raises(EvergreenError) as err:
                fetcher.fetch(url)
            assert not isinstance(err.value, UrlRefused)
            # the status, not a port that holds the digits ("127.0.0.1:50235")
            assert not re.search(r"\b502\b", str(err.value))
            assert str(err.value).startswith("Cannot fetch")
            assert waits == [None]  # one attempt: not retried as a server error
        assert site.hits["/away"] == 1


def test_backslash_userinfo_url_is_refused_before_any_request(
    fetcher: WebFetcher, traps: list[Trap]
) -> None:
    allow = UrlPolicy.from_allowlist(["127.0.0.1", "public2.example"])
    fetcher.policy = allow
    for trap in traps:
        with pytest.raises(UrlRefused, match="read this URL differently"):
            fetcher.fetch(f"http://{trap.authority}\\@public2.example/x")
    time.sleep(0.3)
    assert [t.connections for t in traps] == [0, 0]


def hostile_page(traps: list[Trap]) -> str:
    """A page whose sub-resources and scripts reach for both traps, then for the site."""
    tags, calls = [], []
    for n, trap in enumerate(traps):
        tags += [
            f"<img src='{trap.url(f'/img{n}.png')}'>",
            f"<script src='{trap.url(f'/s{n}.js')}'></script>",
            f"<link rel='stylesheet' href='{trap.url(f'/c{n}.css')}'>",
            f"<iframe src='{trap.url(f'/frame{n}')}'></iframe>",
            f"<iframe src='{trap.url(f'/tls{n}', 'https')}'></iframe>",
        ]
        calls += [
            f"fetch('{trap.url(f'/fetch{n}')}').catch(() => 0);",
            f"navigator.sendBeacon('{trap.url(f'/beacon{n}')}', 'x');",
            f"try {{ new WebSocket('ws://{trap.authority}/ws{n}'); }} catch (e) {{}}",
            f"new Worker(URL.createObjectURL(new Blob([\"fetch('{trap.url(f'/w{n}')}')\"])));",
        ]
    script = "<script>" + "\n".join(calls) + "\nfetch('/after-traps');</script>"
    return html_page("Storage outlook", TEXT).replace(
        "</body>", "".join(tags) + "<img src='/after-traps.png'>" + script + "</body>"
    )


@NEEDS_CHROMIUM
def test_sub_resources_and_script_requests_never_reach_a_refused_address(
    traps: list[Trap],
) -> None:
    pages = {
        "/page": Page([hostile_page(traps)]),
        "/after-traps": Page(["ok"], "text/plain"),
        "/after-traps.png": Page(["ok"], "text/plain"),
    }
    with (
        Website(pages) as site,
        WebFetcher(policy=LOOPBACK, browser="chromium", delay=0, timeout=15) as f,
    ):
        page = f.fetch(site.link("/page"))
        assert "Grid batteries kept getting cheaper" in page.content
        assert "trap secret" not in page.content
        # the browser did make the page's requests: the ones after the traps' arrived
        assert wait_for(lambda: site.hits["/after-traps"] >= 1)
        assert site.hits["/after-traps.png"] >= 1
        time.sleep(0.5)
    assert [t.connections for t in traps] == [0, 0]


@NEEDS_CHROMIUM
@pytest.mark.parametrize("how", ["script", "meta-refresh"])
def test_page_navigating_itself_to_a_refused_address_never_reaches_it(
    traps: list[Trap], how: str
) -> None:
    target = traps[0].url("/nav")
    jump = (
        f"<script>location.href = '{target}';</script>"
        if how == "script"
        else f"<meta http-equiv='refresh' content='0;url={target}'>"
    )
    body = html_page("Moving", TEXT).replace("</head>", jump + "</head>")
    with (
        Website({"/moving": Page([body])}) as site,
        WebFetcher(policy=LOOPBACK, browser="chromium", delay=0, timeout=15) as f,
    ):
        try:
            page = f.fetch(site.link("/moving"))
        except UrlRefused:
            pass
        else:
            assert "trap secret" not in page.content
        time.sleep(0.5)
    assert traps[0].connections == 0


# -- end to end: a search hit that a browser reads differently --------------------------------
QUESTION = "What do grid batteries cost, and which chemistries are used for grid storage?"
TAVILY_KEY = "tvly-policy-0123456789"


def browser_mode() -> str:
    return "chromium" if HAVE_CHROMIUM or os.environ.get("CI") == "true" else "http"


def test_create_from_search_hits_never_reaches_a_refused_address(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, traps: list[Trap]
) -> None:
    from core.engine.creation import create_report
    from tests.fakes.env import use_loopback_providers

    pages = {
        f"/{name}": Page([html_page(f"{name.title()} batteries", f"{name.title()} {TEXT}")])
        for name in ("lfp", "nmc", "flow")
    }
    pages["/hop"] = Page([""], status=302, headers={"Location": traps[1].url("/hop")})
    with Website(pages) as site:
        hostile = [f"http://{traps[0].authority}\\@public2.example/x", site.link("/hop")]

        def results(body: dict[str, Any]) -> list[dict[str, Any]]:
            urls = [*hostile, *(site.link(f"/{n}") for n in ("lfp", "nmc", "flow"))]
            return [{"url": u, "title": "hit", "content": "snippet", "score": 0.9} for u in urls]

        with FakeTavily(results, key=TAVILY_KEY) as tavily, FakeOpenAI() as llm:
            use_loopback_providers(
                monkeypatch, tavily=tavily, tavily_key=TAVILY_KEY, llm=llm,
                openai_key="sk-unused", home=workspace, browser=browser_mode(),
            )  # fmt: skip
            monkeypatch.setenv("EVERGREEN_FETCH_ALLOWLIST", "127.0.0.1,public2.example")
            made = create_report(QUESTION, source="web")
        time.sleep(0.3)
        assert [t.connections for t in traps] == [0, 0]
        assert made["version"] == 1 and made["sources"] == 3
        assert site.hits["/lfp"] >= 1 and site.hits["/hop"] >= 1


# -- credentials inside URLs ------------------------------------------------------------------
def test_redact_credentials_in_text() -> None:
    from core.redact import redact_credentials

    assert redact_credentials(f"at http://bob:{SECRET}@127.0.0.1:9/v1: down") == (
        "at http://***@127.0.0.1:9/v1: down"
    )
    assert redact_credentials(f"postgresql://u:{SECRET}@db/x and https://a.example/p@q") == (
        "postgresql://***@db/x and https://a.example/p@q"
    )
    assert redact_credentials(f"http://u:p@ss:{SECRET}@h/") == "http://***@h/"  # last "@"
    assert str(EvergreenError(f"Cannot fetch http://me:{SECRET}@h/x.")) == (
        "Cannot fetch http://***@h/x."
    )
    # secrets in the query: named for one, whatever the case or prefix; others stay
    assert redact_credentials(f"http://h/s?Token={SECRET}&q=storage&x_api_key={SECRET}#f") == (
        "http://h/s?Token=***&q=storage&x_api_key=***#f"
    )
    assert redact_credentials(f"http://h/?access_token={SECRET};page=2") == (
        "http://h/?access_token=***;page=2"
    )
    assert redact_credentials("http://h/?keyword=storage&monkey=1") == (
        "http://h/?keyword=storage&monkey=1"
    )


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("where", ["user-info", "query"])
def test_search_endpoint_credentials_are_neither_printed_nor_stored(
    workspace: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    from core.engine.creation import create_report
    from core.store.db import session_scope
    from core.store.models import UpdateRun

    base = (
        f"http://evergreen:{SECRET}@127.0.0.1:{closed_port()}"
        if where == "user-info"
        else f"http://127.0.0.1:{closed_port()}/?token={SECRET}"
    )
    env = {
        "TAVILY_API_KEY": TAVILY_KEY,
        "TAVILY_BASE_URL": base,
        "EVERGREEN_CONFIG": str(workspace / "none.toml"),
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(EvergreenError, match="cannot be reached") as err:
        create_report(QUESTION, source="web")
    assert SECRET not in str(err.value) and "***" in str(err.value)
    with session_scope() as session:
        errors = [r.error or "" for r in session.exec(select(UpdateRun)).all()]
    assert errors and all(SECRET not in e for e in errors)
    assert any("cannot be reached" in e for e in errors)
    cli = run_cli(workspace, "create", QUESTION, "--source", "web", env=env, timeout=120)
    assert cli.returncode != 0 and "cannot be reached" in cli.stdout + cli.stderr
    assert SECRET not in cli.stdout + cli.stderr


def test_settings_show_no_credentials_in_the_model_endpoint(
    app: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.settings import get_settings

    monkeypatch.setenv("OPENAI_BASE_URL", f"https://team:{SECRET}@llm.example/v1")
    monkeypatch.setenv("EVERGREEN_LLM", "openai")
    assert get_settings().describe()["openai_base_url"] == "https://***@llm.example/v1"
    app.switch_page("pages/settings.py").run()
    assert not app.exception, app.exception
    values = app.dataframe[0].value["value"].tolist()
    assert "https://***@llm.example/v1" in values
    assert SECRET not in repr(app._tree)
