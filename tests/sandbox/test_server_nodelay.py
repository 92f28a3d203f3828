"""The sandbox answers kept-alive connections without Nagle's delay.

Without TCP_NODELAY on the server's connections, uvicorn's separate writes of
the answer's head and body meet the client's delayed ACK and every request on a
reused connection waits ~40 ms. Checked on the socket option, not on a timing.
"""

from __future__ import annotations

import socket

import requests

from paynb.sandbox import serve


def test_kept_alive_connections_have_tcp_nodelay() -> None:
    with serve(port=0, seed_items=10) as sb, requests.Session() as session:
        for _ in range(2):  # the second request reuses the connection
            assert session.get(f"{sb.base_url}/sandbox/info", timeout=10).status_code == 200
        connections = list(sb._server.server_state.connections)
        assert connections
        for protocol in connections:
            sock = protocol.transport.get_extra_info("socket")
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
