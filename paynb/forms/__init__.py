"""ipywidgets forms for submissions, bulk uploads, voids, instant payments, status exploring,
and the queue of payments awaiting a second person's approval.

Every form is built from the request models of :mod:`paynb.models` (one
builder, :class:`FieldSet`), validates on every change with the shared rules,
keeps its action button disabled until the input is valid, never sends twice,
and leaves its last outcome in ``form.result``::

    import paynb
    from paynb.forms import AchForm
    client = paynb.connect()
    AchForm(client)            # displays itself in the cell
"""

from __future__ import annotations

from paynb.forms.approvals import ApprovalsForm
from paynb.forms.builder import FieldSet, FieldWidget
from paynb.forms.bulk import BulkSubmitForm
from paynb.forms.explorer import StatusExplorer
from paynb.forms.instant import InstantCardForm, RtpForm
from paynb.forms.matching import ExceptionsView
from paynb.forms.nocs import NocForm
from paynb.forms.single import AchForm, PaymentForm, RccForm
from paynb.forms.void import VoidForm

__all__ = ["AchForm", "ApprovalsForm", "BulkSubmitForm", "FieldSet", "FieldWidget",
           "InstantCardForm", "NocForm", "PaymentForm", "RccForm", "RtpForm", "StatusExplorer",
           "VoidForm", "ExceptionsView"]
