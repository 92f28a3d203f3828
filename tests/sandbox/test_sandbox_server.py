"""serve(), ensure_running() and its discovery file, file databases, OpenAPI, the CLI."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urljoin

import pytest
import requests
from sandbox_helpers import ACH, Api, ach_item

from paynb import cli
from paynb.sandbox import Credentials, Sandbox, ensure_running, serve
from paynb.sandbox import server as server_module
from paynb.sandbox.scenarios import SCENARIOS

ROOT = Path(__file__).resolve().parents[2]


def test_handle_and_credentials(sandbox):
    assert sandbox.base_url.startswith("http://127.0.0.1:")
    assert sandbox.auth_url == sandbox.base_url
    assert sandbox.company_code == "DEMO1"
    creds = sandbox.credentials
    assert creds.as_dict() == {"client_id": "paynb-sandbox", "client_secret": "sandbox-secret",
                               "username": "analyst", "password": "analyst-password"}
    assert "sandbox-secret" not in repr(creds) and "analyst-password" not in repr(creds)
    assert "secret" not in repr(sandbox)
    assert sandbox.owned


def test_serve_stops_cleanly():
    with serve(port=0, seed_items=0) as sb:
        url = sb.base_url
        assert requests.get(url + "/sandbox/info", timeout=30).json()["sandbox"] is True
    with pytest.raises(requests.ConnectionError):
        requests.get(url + "/sandbox/info", timeout=5)
    sb.close()  # twice is fine


def test_busy_port_raises(sandbox):
    port = int(sandbox.base_url.rsplit(":", 1)[1])
    with pytest.raises(OSError):
        serve(port=port, seed_items=0)


@pytest.mark.parametrize(("option", "value", "message"), [
    ("port", 65536, "port must be a whole number from 0 to 65535"),
    ("port", -1, "port must be a whole number from 0 to 65535"),
    ("seed_items", -5, "seed_items must be a whole number of at least 0; got -5"),
    ("token_ttl", -1, "token_ttl must be a number of seconds of at least 0"),
])
def test_serve_refuses_options_out_of_range(option, value, message):
    with pytest.raises(ValueError, match=message):
        serve(**{"port": 0, "seed_items": 0, option: value})


@pytest.mark.parametrize(("flags", "message"), [
    (["--port", "99999"], "port must be a whole number from 0 to 65535 (0: any free port); "
                          "got 99999"),
    (["--port", "0", "--seed-items", "-5"], "seed_items must be a whole number of at least 0"),
    (["--port", "0", "--error-rate", "2"], "error_rate must be a number from 0 to 1"),
])
def test_cli_says_which_option_is_out_of_range(capsys, flags, message):
    assert cli.main(["sandbox", *flags]) == 2
    out = capsys.readouterr().out
    assert f"paynb sandbox: {message}" in out and "Traceback" not in out
    assert "starting" not in out  # refused before anything was started


def test_file_database_keeps_items_and_seeds_once(tmp_path):
    db = tmp_path / "sandbox.sqlite3"
    item = ach_item()
    with serve(port=0, db=db, seed_items=50) as sb:
        Api(sb).post(ACH, item)
        sb.simulate.advance_clock(days=1)
        total = Api(sb).get(ACH).json()["total"]
    with serve(port=0, db=db, seed_items=5000) as sb:
        api = Api(sb)
        assert api.get(ACH).json()["total"] == total  # not seeded again
        found = api.get(ACH, params={"yourReferenceNumber": item["yourReferenceNumber"]})
        assert found.json()["total"] == 1
        again = api.post(ACH, ach_item()).json()["transaction"]["achItemId"]
        assert again > found.json()["transactions"][0]["achItemId"]
        # the simulated clock survives the restart
        assert sb.simulate.now() - dt.datetime.now(dt.UTC) > dt.timedelta(hours=23)


@pytest.fixture
def discovery(tmp_path, monkeypatch):
    monkeypatch.setenv("PAYNB_SANDBOX_FILE", str(tmp_path / "sandbox.json"))
    monkeypatch.setenv("PAYNB_SANDBOX_DB", str(tmp_path / "demo.sqlite3"))
    yield tmp_path / "sandbox.json"
    if server_module._embedded is not None:
        server_module._stop_embedded(server_module._embedded)
        server_module._embedded = None


def test_ensure_running_starts_once_and_announces(discovery):
    first = ensure_running(seed_items=100)
    assert first.owned
    assert ensure_running() is first
    announced = json.loads(discovery.read_text())
    assert announced["base_url"] == first.base_url
    assert announced["instance_id"] == first.instance_id
    # Another process finds it through the file: simulate that with a fresh lookup.
    found = server_module._announced()
    assert isinstance(found, Sandbox) and not found.owned
    assert found.base_url == first.base_url
    assert Api(found).get(ACH, params={"pageSize": 1}).status_code == 200
    found.close()  # a handle to someone else's sandbox does not stop it
    assert requests.get(first.base_url + "/sandbox/info", timeout=30).ok


def test_ensure_running_reuses_an_announced_sandbox(discovery):
    with serve(port=0, seed_items=0) as sb:
        server_module.announce(sb)
        handle = ensure_running()
        assert handle.base_url == sb.base_url and not handle.owned
        server_module.withdraw(sb)
        assert not discovery.exists()


def test_stale_discovery_file_is_ignored(discovery):
    discovery.write_text(json.dumps({"base_url": "http://127.0.0.1:9", "instance_id": "x"}))
    handle = ensure_running(seed_items=0)
    assert handle.owned and handle.base_url != "http://127.0.0.1:9"


def test_credentials_type():
    creds = Credentials("a", "b", "c", "d")
    assert creds.as_dict()["password"] == "d"
    assert "'b'" not in repr(creds) and "'d'" not in repr(creds)


def test_openapi_documents_bodies_with_the_models(sandbox):
    spec = requests.get(sandbox.base_url + "/openapi.json", timeout=30).json()
    paths = spec["paths"]
    for path in ("/api/v3/AchTransactions/companycode/{companyCode}/many",
                 "/apiv3/RccTransactions/companycode/{companyCode}/many",
                 "/api/v3/InstantTransactinos/companycode/{companyCode}/{uniqueId}",
                 "/api/v3/InstantRtpRoutes/{routingNumber}",
                 "/api/v3/AchNocs/companycode/{companyCode}/export/filetype/{fileType}",
                 "/connect/token", "/sandbox/faults"):
        assert path in paths, path
    body = paths["/api/v3/AchTransactions/companycode/{companyCode}"]["post"]["requestBody"]
    assert body["content"]["application/json"]["schema"]["$ref"].endswith("/AchItem")
    schema = spec["components"]["schemas"]["AchItem"]
    assert "bankRoutingNumber" in schema["properties"]
    assert "AchBulkRequest" in spec["components"]["schemas"]
    docs = requests.get(sandbox.base_url + "/docs", timeout=30)
    assert docs.status_code == 200 and "swagger" in docs.text.lower()


def test_cli_sandbox_prints_where_and_stops(tmp_path):
    env = {"PAYNB_SANDBOX_FILE": str(tmp_path / "sandbox.json"), "PATH": "/usr/bin:/bin"}
    process = subprocess.Popen(
        [sys.executable, "-m", "paynb.cli", "sandbox", "--port", "0", "--seed-items", "10",
         "--token-ttl", "60"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env=env)
    lines = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if line.startswith("Ctrl-C"):
                break
        text = "".join(lines)
        base_url = next(line.split()[2] for line in lines if "base URL" in line)
        assert "auth URL" in text and "DEMO1" in text and "analyst-password" in text
        assert "/docs" in text
        sb = Sandbox(base_url)
        # 10 demo items and the named scenario items (paynb.sandbox.scenarios)
        assert 0 < Api(sb).get(ACH).json()["total"] <= 10 + sum(
            len(s.attempts) for s in SCENARIOS)
        assert json.loads((tmp_path / "sandbox.json").read_text())["base_url"] == base_url
    finally:
        process.terminate()
        out, _ = process.communicate(timeout=30)
    assert process.returncode == 0
    assert "sandbox stopped" in out
    assert not (tmp_path / "sandbox.json").exists()


def test_cli_help_lists_the_flags():
    out = subprocess.run([sys.executable, "-m", "paynb.cli", "sandbox", "--help"],
                         capture_output=True, text=True, check=True).stdout
    for flag in ("--host", "--port", "--db", "--seed-items", "--latency-ms", "--error-rate",
                 "--token-ttl"):
        assert flag in out
    demo = subprocess.run([sys.executable, "-m", "paynb.cli", "demo", "--help"],
                          capture_output=True, text=True, check=True).stdout
    assert "--jupyter-port" in demo



def test_docs_page_needs_no_internet(sandbox):
    """/docs must work on a machine with no internet: every asset comes from the sandbox."""
    page = requests.get(sandbox.base_url + "/docs", timeout=30)
    assert page.status_code == 200
    urls = re.findall(r"""(?:src|href|url)\s*[=:]\s*['"]([^'"]+)['"]""", page.text)
    outside = [u for u in re.findall(r"https?://[^\s'\"<>)]+", page.text)
               if not u.startswith(sandbox.base_url)]
    assert outside == []
    assets = [u for u in urls if u.endswith((".js", ".css", ".png"))]
    assert sorted(Path(u).suffix for u in assets) == [".css", ".js", ".png"]
    for url in assets:
        answer = requests.get(urljoin(sandbox.base_url + "/docs", url), timeout=30)
        assert (url, answer.status_code) == (url, 200)
        assert len(answer.content) > 1000
    assert "/openapi.json" in urls
    assert requests.get(sandbox.base_url + "/redoc", timeout=30).status_code == 404


class _Parsed(Exception):
    """Raised instead of running a command: the arguments were parsed."""


def _cli_defaults(monkeypatch, command: str) -> dict[str, object]:
    """``paynb <command>``'s flags and their defaults, as the CLI parses them."""
    parse = argparse.ArgumentParser.parse_args

    def parsed(self, args=None, namespace=None):
        raise _Parsed(vars(parse(self, args, namespace)))

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parsed)
    with pytest.raises(_Parsed) as caught:
        cli.main([command])
    found = caught.value.args[0]
    return {"--" + name.replace("_", "-"): value for name, value in found.items()
            if name not in ("command", "run")}


def _flag_tables() -> list[dict[str, str]]:
    """The flag tables of docs/sandbox.md's "Starting it": {flag: default cell} each."""
    text = (ROOT / "docs" / "sandbox.md").read_text()
    section = text.split("## Starting it", 1)[1].split("\n## ", 1)[0]
    tables: list[dict[str, str]] = []
    for block in section.split("\n\n"):
        rows = [line.split("|")[1:3] for line in block.splitlines()
                if line.startswith("| `--")]
        if rows:
            tables.append({flag.strip().strip("`").split()[0]: default.strip().strip("`")
                           for flag, default in rows})
    return tables


def _shown(value: object) -> str | None:
    if value is None:
        return None  # documented in words ("in memory")
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int | float):
        return f"{value:g}"
    return str(value)


def test_docs_list_every_cli_flag_with_its_default(monkeypatch):
    sandbox_table, demo_table = _flag_tables()
    for command, documented in (("sandbox", sandbox_table),
                                ("demo", {**sandbox_table, **demo_table})):
        flags = _cli_defaults(monkeypatch, command)
        assert sorted(documented) == sorted(flags), command
        for flag, value in flags.items():
            if _shown(value) is not None:
                assert (command, flag, documented[flag]) == (command, flag, _shown(value))
