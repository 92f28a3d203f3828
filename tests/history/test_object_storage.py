"""The history on object storage: an S3-compatible server (moto's, in server mode) that
the test starts on 127.0.0.1; synced, read back by paynb and by the other engines, with
the options given once to ``sync``."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator

import pandas as pd
import pytest

import paynb
from paynb.errors import ValidationError
from paynb.history import History
from paynb.sandbox import serve

from .test_history import ach_item, assert_same_as_lists

pytest.importorskip("moto.server")


@pytest.fixture(scope="module")
def s3() -> Iterator[dict[str, str]]:
    """A bucket on a local S3 server (moto's server mode, in a process of its own: deltalake
    holds the interpreter while it waits for some answers, so a server in this process
    would never answer), and the storage options that reach it."""
    import boto3
    import requests

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p",
                               str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                requests.get(url, timeout=5)
                break
            # Not listening yet, or busy loading its services on a loaded machine.
            except (requests.ConnectionError, requests.Timeout):
                assert time.monotonic() < deadline and server.poll() is None, "moto did not start"
                time.sleep(0.1)
        options = {"AWS_ENDPOINT_URL": url, "AWS_ACCESS_KEY_ID": "test",
                   "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1",
                   "AWS_ALLOW_HTTP": "true"}
        boto3.client("s3", endpoint_url=url, aws_access_key_id="test",
                     aws_secret_access_key="test", region_name="us-east-1"
                     ).create_bucket(Bucket="payments")
        yield options
    finally:
        server.terminate()
        server.wait(30)


def test_a_history_on_s3_syncs_reads_and_is_read_by_other_engines(s3):
    import polars as pl
    from deltalake import DeltaTable

    uri = "s3://payments/history/demo"
    with serve(port=0, seed_items=120, seed=6) as sb, sb.connect(journal=None) as client:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the guards' notice of a client with no history
            client.ach.submit_many([ach_item(f"S3-W-{n}", 800 + n) for n in range(10)])
        client.sync(path=uri, storage_options=s3, progress=False)
        assert client.history.path == uri  # remembered, with its options
        assert_same_as_lists(client, client.history)
        waiting = client.ach.list(status="W", progress=False)["achItemId"].tolist()
        sb.simulate.force_status(waiting[0], "R", code="R01")
        changed = client.sync(progress=False).set_index("kind")
        assert changed.loc["ach", "written"] == 1 and changed.loc["ach", "events"] == 1
        assert_same_as_lists(client, client.history)
        history = History(uri, storage_options=s3, company=client.company_code)
        pd.testing.assert_frame_equal(history.ach(), client.ach.list(progress=False))
        assert history.events("ach", item_id=waiting[0])["itemStatus"].tolist() == ["W", "R"]
        statuses = history.sql("select itemStatus, count(*) as n from ach group by 1")
        assert dict(zip(statuses["itemStatus"], statuses["n"], strict=True)) == \
            client.ach.list(progress=False)["itemStatus"].astype(str).value_counts().to_dict()
        # Other engines, given the same options.
        ids = sorted(client.ach.list(progress=False)["achItemId"])
        assert sorted(DeltaTable(f"{uri}/ach", storage_options=s3).to_pandas()["achItemId"]) \
            == ids
        assert sorted(pl.scan_delta(f"{uri}/ach", storage_options=s3).collect()["achItemId"]
                      .to_list()) == ids
    with pytest.warns(paynb.PaynbWarning, match="no Delta table of a paynb history"):
        assert History("s3://payments/mistyped", storage_options=s3).ach().empty


def test_storage_options_are_checked():
    with pytest.raises(ValidationError, match="storage_options"):
        History("s3://payments/x", storage_options="AWS_REGION=us-east-1")  # type: ignore[arg-type]
