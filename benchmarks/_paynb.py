"""The paynb side of the cases, and the naive baseline an analyst would write instead.

Kept in one place so that every case calls paynb the same way, and so that
the baseline is plainly what the issue describes: a sequential ``requests``
loop over pages building ``pd.DataFrame``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import requests

if TYPE_CHECKING:
    import pandas as pd

    from benchmarks._server import Served

__all__ = ["ACH_PATH", "baseline_list", "build_frame", "fetch_pages", "paynb_client", "token"]

ACH_PATH = "/api/v3/AchTransactions/companycode/{company}"


def paynb_client(served: Served, **options: Any) -> Any:
    """A ``paynb.Client`` on the benchmark sandbox, without journal or progress bar noise."""
    import paynb

    options.setdefault("journal", None)
    return paynb.Client(**served.client_kwargs(), **options)


def paynb_list(served: Served, *, max_items: int | None = None, **options: Any,
               ) -> pd.DataFrame:
    """The ACH items (up to ``max_items``) through ``client.ach.list()``: a fresh client
    (``options`` are its settings), so the token is counted too."""
    client = paynb_client(served, **options)
    try:
        return client.ach.list(progress=False, max_items=max_items)
    finally:
        close = getattr(client, "close", None)
        if close:
            close()


def token(session: requests.Session, served: Served) -> str:
    """A bearer token by the spec's password grant."""
    answer = session.post(f"{served.auth_url}/connect/token", timeout=60,
                          data={"grant_type": "password", **served.credentials})
    answer.raise_for_status()
    return answer.json()["access_token"]


def baseline_list(served: Served, page_size: int, *, max_items: int | None = None,
                  ) -> pd.DataFrame:
    """The naive way: one page after another with requests, then ``pd.DataFrame``
    (stopping after ``max_items`` records, as ``client.ach.list(max_items=...)`` does)."""
    import pandas as pd

    session = requests.Session()
    headers = {"Authorization": f"Bearer {token(session, served)}"}
    url = served.base_url + ACH_PATH.format(company=served.company_code)
    records: list[dict[str, Any]] = []
    page = 0
    while True:
        answer = session.get(url, params={"page": page, "pageSize": page_size},
                             headers=headers, timeout=60)
        answer.raise_for_status()
        batch = answer.json()["transactions"]
        records.extend(batch)
        if len(batch) < page_size or (max_items is not None and len(records) >= max_items):
            break
        page += 1
    session.close()
    return pd.DataFrame(records[:max_items])


def fetch_pages(served: Served, page_size: int, pages: int, workers: int = 1) -> list[bytes]:
    """Raw bodies of pages ``0..pages-1`` (HTTP only, nothing parsed), on ``workers`` threads."""
    from concurrent.futures import ThreadPoolExecutor

    session = requests.Session()
    adapter = requests.adapters.HTTPAdapter(pool_connections=1, pool_maxsize=max(workers, 1))
    session.mount("http://", adapter)
    headers = {"Authorization": f"Bearer {token(session, served)}"}
    url = served.base_url + ACH_PATH.format(company=served.company_code)

    def one(page: int) -> bytes:
        answer = session.get(url, params={"page": page, "pageSize": page_size},
                             headers=headers, timeout=60)
        answer.raise_for_status()
        return answer.content

    try:
        if workers <= 1:
            return [one(page) for page in range(pages)]
        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(one, range(pages)))
    finally:
        session.close()


def build_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """paynb's typed ACH frame from wire records, the way ``client.ach.list()`` builds it."""
    from paynb import frames

    return frames.to_frame(records, "ach")
