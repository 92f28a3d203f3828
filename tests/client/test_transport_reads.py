"""How the transport reads answer bodies: in a few large socket reads (each read lets go of
the interpreter lock, which a list's frame building then holds), and a body cut short is
no answer, retried like a dropped connection."""

from __future__ import annotations

import socket
import threading

import pytest

from paynb.errors import TransportError
from paynb.transport import Transport, make_session


def _serve(answers: list[bytes]) -> tuple[str, threading.Thread]:
    """A loopback HTTP server that sends ``answers`` (raw bytes, then closes the
    connection) to its next connections, one each: for what the sandbox cannot send."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def run() -> None:
        with listener:
            for answer in answers:
                connection, _ = listener.accept()
                with connection:
                    connection.recv(65536)
                    connection.sendall(answer)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return f"http://127.0.0.1:{port}", thread


def _answer(body: bytes, *, length: int | None = None) -> bytes:
    head = (f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body) if length is None else length}\r\n"
            f"Connection: close\r\n\r\n").encode()
    return head + body


def _transport(base_url: str, **options) -> Transport:
    transport = Transport(base_url, None, session=make_session(2), **options)
    transport.sleep = lambda seconds: None
    return transport


def test_a_body_cut_short_is_no_answer_and_the_read_is_retried(caplog):
    whole = b'{"transactions": [' + b",".join(b'{"achItemId": %d}' % n for n in range(50)) + b"]}"
    base_url, server = _serve([_answer(whole[:40], length=len(whole)), _answer(whole)])
    transport = _transport(base_url)
    answer = transport.json("GET", "/api/v3/AchTransactions/companycode/DEMO1",
                            params=[("page", 3), ("pageSize", 50)])
    assert [r["achItemId"] for r in answer["transactions"]] == list(range(50))
    assert "list page 3" in caplog.text and "retry 1 of" in caplog.text
    server.join(5)


def test_a_body_cut_short_every_time_gives_up_as_no_answer():
    body = b'{"transactions": []}' + b" " * 100
    base_url, server = _serve([_answer(body[:10], length=len(body))] * 2)
    transport = _transport(base_url, max_retries=1)
    with pytest.raises(TransportError, match="list page 0"):
        transport.json("GET", "/api/v3/AchTransactions/companycode/DEMO1",
                       params=[("page", 0), ("pageSize", 50)])
    server.join(5)


def test_a_large_body_is_read_in_a_few_socket_reads(monkeypatch):
    body = b'{"transactions": [' + b",".join(
        b'{"achItemId": %d, "name": "%s"}' % (n, b"x" * 1400) for n in range(200)) + b"]}"
    assert len(body) > 280_000
    base_url, server = _serve([_answer(body)])
    reads = []
    receive = socket.socket.recv_into

    def counted(self, *args, **kwargs):
        reads.append(1)
        return receive(self, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "recv_into", counted)
    response = _transport(base_url).request("GET", "/big")
    assert response.content == body
    # requests alone reads 10 KiB at a time: 28 reads or more for this body.
    assert len(reads) < 20, len(reads)
    server.join(5)
