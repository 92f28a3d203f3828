"""Screenshots of the forms and of 01_quickstart's chart, as JupyterLab shows them.

Runs the same machinery as the browser test (``tests/browser/labdriver.py``): a fresh
sandbox, JupyterLab on a temporary copy of the notebooks, Debian's Chromium headless.
A small gallery notebook, written into that temporary directory, shows each form in a
state worth seeing (filled in, a route checked, a preview fetched); each form's widget
is cropped out of the page::

    .venv/bin/python scripts/screenshots.py [--out docs/img]

writes ``forms/{ach,rcc,bulk,void,instant,rtp,explorer}.png`` and ``quickstart.png``
under ``--out``. PNGs are reduced to a 256-colour palette to stay small.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "browser"))

import labdriver  # noqa: E402  (lives with the browser test, which shares it)

#: The gallery notebook: one cell per form, each left in a state a user meets.
GALLERY = [
    """\
from decimal import Decimal

import pandas as pd

import paynb
from paynb.forms import (AchForm, BulkSubmitForm, InstantCardForm, RccForm, RtpForm,
                         StatusExplorer, VoidForm)

client = paynb.connect()


def fill(form, values):
    for wire, value in values.items():
        form.fields[wire].value = value
    return form


ach_item = {
    "firstSignerFirstName": "Jane", "firstSignerLastName": "Doe", "state": "NY",
    "zip": "10001", "bankRoutingNumber": "021000021", "bankAccountNumber": "000123456789",
    "achAccountType": "Checking", "achEntryClass": "PPD", "achTransactionType": "Credit",
    "amount": "125.40",
}""",
    # A complete ACH credit, ready to submit.
    """fill(AchForm(client), {**ach_item, "yourReferenceNumber": "REFUND-2026-0042"})""",
    # An RCC item with a routing number that fails the ABA checksum.
    """\
fill(RccForm(client), {
    "firstSignerFirstName": "Sam", "firstSignerLastName": "Lee", "address1": "1 Main St",
    "city": "Springfield", "state": "IL", "zip": "62701",
    "yourReferenceNumber": "RCC-2026-0007", "bankRoutingNumber": "021000022",
    "bankAccountNumber": "000987654321", "amount": "49.99",
})""",
    # Three rows, the third with an account number the service refuses.
    """\
batch = pd.DataFrame([
    {**ach_item, "yourReferenceNumber": f"BATCH-2026-{n}", "amount": Decimal(amount),
     "bankAccountNumber": account}
    for n, (amount, account) in enumerate(
        [("10.00", "111122223333"), ("20.50", "444455556666"), ("30.25", "7777'8888")], 1)
])
BulkSubmitForm(client, items=batch)""",
    # Two waiting items and a returned one: the preview flags the one that cannot be voided.
    """\
waiting = [int(client.ach.submit({**ach_item, "yourReferenceNumber": f"VOID-2026-{n}"})
               ["achItemId"]) for n in (1, 2)]
returned = int(client.ach.list(status=["R"], progress=False)["achItemId"].iloc[0])
VoidForm(client, items=[*waiting, returned])""",
    # Route checked, payment filled in, ready to send.
    """\
card_form = fill(InstantCardForm(client), {"cardNumber": "4111111111111111"})
card_form.check_button.click()
fill(card_form, {"nameOnCard": "JANE DOE", "cardExpiration": "12/2030",
                 "totPassword": "123456", "amount": "1500",
                 "yourReferenceNumber": "IC-2026-0001"})""",
    # Route checked, payment half filled in: the status line says what is missing.
    """\
rtp_form = fill(RtpForm(client), {"routingNumber": "021000021"})
rtp_form.check_button.click()
fill(rtp_form, {"name": "Jane Doe", "firstName": "Jane", "lastName": "Doe"})""",
    # Blocked and invalid ACH items: a short table, the counts and the plot.
    """\
explorer = StatusExplorer(client, load=False)
explorer.statuses.value = ("I", "B")
explorer.refresh_button.click()
explorer""",
]

#: The CSS name of each form (``paynb-form-<name>``), in the gallery's order.
FORMS = ["ach", "rcc", "bulk", "void", "instant", "rtp", "explorer"]
#: What each form's status line says once the page shows the state the gallery set up.
READY = {"ach": "Ready to submit", "rcc": "To fix", "bulk": "", "void": "",
         "instant": "Ready to send", "rtp": "Missing", "explorer": "loaded"}


def _small_png(path: Path) -> None:
    """Rewrite ``path`` with a 256-colour palette (UI pictures lose nothing visible)."""
    from PIL import Image

    with Image.open(path) as image:
        reduced = image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT)
    reduced.save(path, optimize=True)


def _lab_window(lab: labdriver.Lab, chart: object, target: Path) -> Path:
    """The whole JupyterLab window of a laptop screen, the chart in view, no side bar."""
    page = lab.page
    size = page.viewport_size
    page.set_viewport_size({"width": 1280, "height": 800})
    try:
        page.locator(".jp-SideBar.jp-mod-left .lm-TabBar-tab[data-id='filebrowser']").click()
        page.wait_for_selector("#jp-left-stack", state="hidden")
        chart.scroll_into_view_if_needed()
        page.mouse.move(0, 0)
        page.screenshot(path=str(target))
    finally:
        page.set_viewport_size(size)
    return target


def take(out: Path) -> list[Path]:
    """Take every screenshot into ``out``; returns the files written."""
    from playwright.sync_api import expect

    forms_dir = out / "forms"
    forms_dir.mkdir(parents=True, exist_ok=True)
    written = []
    # A tall window: an element taller than the window would be shot with the page's
    # chrome over its lower part.
    with labdriver.running_lab(["01_quickstart.ipynb"], seed_items=1000,
                               viewport=(1700, 2400)) as lab:
        page = lab.open("01_quickstart.ipynb")
        lab.run_all()
        chart = lab.cell("status_summary").locator(".jp-OutputArea-output img").last
        target = out / "quickstart.png"
        chart.screenshot(path=str(target))
        written.append(target)
        written.append(_lab_window(lab, chart, out / "quickstart_lab.png"))

        lab.write_notebook("forms_gallery.ipynb", GALLERY)
        page = lab.open("forms_gallery.ipynb")
        lab.run_all()
        page.mouse.move(0, 0)  # no hover highlight on a button
        for name in FORMS:
            form = page.locator(f"{labdriver.PANEL} .paynb-form-{name}")
            expect(form.locator(".paynb-status")).to_contain_text(READY[name])
            target = forms_dir / f"{name}.png"
            form.screenshot(path=str(target))
            written.append(target)
    for path in written:
        _small_png(path)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img",
                        help="directory for quickstart.png and forms/*.png")
    args = parser.parse_args(argv)
    for path in take(args.out):
        print(f"{path} ({path.stat().st_size // 1024} KB)")  # noqa: T201  (a CLI reports)
    return 0


if __name__ == "__main__":
    sys.exit(main())
