"""Receivers of the monitor's notifications on loopback: an SMTP server (aiosmtpd) and an
HTTP endpoint for apprise's ``json://``; helpers that move a sandbox's DEMO1 along."""

from __future__ import annotations

import email
import http.server
import json
import socket
import threading
from collections.abc import Iterator
from email.message import Message
from pathlib import Path
from typing import Any

import pytest


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class JsonReceiver:
    """An HTTP server on 127.0.0.1 keeping the JSON bodies POSTed to it."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        received = self.bodies

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                received.append(json.loads(self.rfile.read(length)))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"json://127.0.0.1:{self.port}/hook"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class SmtpReceiver:
    """An SMTP server (aiosmtpd) on 127.0.0.1 keeping the messages it receives."""

    def __init__(self) -> None:
        from aiosmtpd.controller import Controller

        self.messages: list[Message] = []
        received = self.messages

        class Handler:
            async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
                received.append(email.message_from_bytes(envelope.content))
                return "250 OK"

        self.port = free_port()
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port)
        self.controller.start()

    @property
    def url(self) -> str:
        return (f"mailto://127.0.0.1:{self.port}?from=paynb@example.com"
                "&to=payments-ops@example.com")

    def texts(self) -> list[tuple[str, str]]:
        """(subject, plain-text body) of each message."""
        found = []
        for message in self.messages:
            body = next(part.get_payload(decode=True).decode() for part in message.walk()
                        if part.get_content_type() == "text/plain")
            found.append((str(message["Subject"]), body.replace("\r\n", "\n").strip()))
        return found

    def close(self) -> None:
        self.controller.stop()


@pytest.fixture
def json_receiver() -> Iterator[JsonReceiver]:
    receiver = JsonReceiver()
    yield receiver
    receiver.close()


@pytest.fixture
def smtp_receiver() -> Iterator[SmtpReceiver]:
    receiver = SmtpReceiver()
    yield receiver
    receiver.close()


def secretless_profile(path: Path, sb: Any, company: str, **extra: str) -> Path:
    """A profile ``ops`` in ``path`` for sandbox ``sb`` and ``company``, holding no secret
    (those go in the secrets file, :func:`secrets_file`); ``extra`` keys as TOML values."""
    creds = sb.credentials
    lines = [f'base_url = "{sb.base_url}"', f'auth_url = "{sb.auth_url}"',
             f'company_code = "{company}"', f'client_id = "{creds.client_id}"',
             f'username = "{creds.username}"', *(f"{k} = {v}" for k, v in extra.items())]
    path.write_text("[ops]\n" + "\n".join(lines) + "\n")
    return path


def secrets_file(path: Path, sb: Any, *, mode: int = 0o600) -> Path:
    """The secrets of profile ``ops`` (``sb``'s client secret and password) in ``path``."""
    path.write_text(f'[ops]\nclient_secret = "{sb.credentials.client_secret}"\n'
                    f'password = "{sb.credentials.password}"\n')
    path.chmod(mode)
    return path
