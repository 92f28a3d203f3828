"""Every ``PAYNB_*`` environment variable paynb, its tests and its scripts read: one list.

A ``PAYNB_*`` variable that is not here means its user meant to configure something
paynb does not know (``PAYNB_BASEURL`` for ``PAYNB_BASE_URL``): :func:`unknown_names`
finds them, and :func:`paynb.connect`, :meth:`paynb.Client.from_env` and
:class:`paynb.Client` refuse to start with one set (:func:`paynb.config.check_names`),
rather than connect somewhere the user did not mean. A new variable is registered here
first; ``tests/test_env.py`` fails on any ``PAYNB_*`` name read in ``paynb/``,
``scripts/``, ``benchmarks/``, ``tests/``, the Makefile or CI that is missing.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping

__all__ = ["CONNECTION", "VARIABLES", "closest", "unknown_names"]

#: The connection settings, by the client setting each one fills.
CONNECTION: dict[str, str] = {
    "base_url": "PAYNB_BASE_URL",
    "auth_url": "PAYNB_AUTH_URL",
    "company_code": "PAYNB_COMPANY_CODE",
    "client_id": "PAYNB_CLIENT_ID",
    "client_secret": "PAYNB_CLIENT_SECRET",
    "username": "PAYNB_USERNAME",
    "password": "PAYNB_PASSWORD",
}

VARIABLES: dict[str, str] = {
    "PAYNB_BASE_URL": "the service's address (connection setting)",
    "PAYNB_AUTH_URL": "the token server's address; paynb posts to it + /connect/token "
                      "(connection setting)",
    "PAYNB_COMPANY_CODE": "the company every call acts for (connection setting)",
    "PAYNB_CLIENT_ID": "the API client (connection setting)",
    "PAYNB_CLIENT_SECRET": "the API client's secret (connection setting; a secret)",
    "PAYNB_USERNAME": "the user (connection setting)",
    "PAYNB_PASSWORD": "the user's password (connection setting; a secret)",
    "PAYNB_PROFILE": "the profile paynb.connect() uses, before any PAYNB_* settings",
    "PAYNB_CONFIG": "another configuration file instead of the default one",
    "PAYNB_JOURNAL": "another journal file, or a team's postgresql:// journal; off turns "
                     "the journal off",
    "PAYNB_SANDBOX_FILE": "where the demo sandbox announces itself",
    "PAYNB_SANDBOX_DB": "where the demo sandbox keeps its data",
    "PAYNB_CHROMIUM": "the Chromium the browser tests drive (scripts/ensure_browser.sh)",
    "PAYNB_TEST_MOMENT": "the moment paynb's tests run at, the wall clock moved (a name of "
                         "tests/_moments.py or an ISO 8601 time; tests/conftest.py)",
    "PAYNB_DOCS_NOTEBOOKS": "executed copies of the notebooks the docs build shows "
                            "(scripts/docs_hooks.py)",
    "PAYNB_NOTIFY": "paynb monitor's notification URLs, separated by whitespace (a secret)",
}
"""Each variable and what it does."""


def unknown_names(environ: Mapping[str, str] | None = None) -> list[str]:
    """The ``PAYNB_*`` variables set in ``environ`` (default: the process's) that paynb
    does not know, sorted. The prefix is compared in any case (``paynb_journal`` too)."""
    environ = os.environ if environ is None else environ
    return sorted(name for name in environ
                  if name.upper().startswith("PAYNB_") and name not in VARIABLES)


def closest(name: str) -> str | None:
    """The known variable ``name`` most resembles (a misspelling of), or None."""
    found = difflib.get_close_matches(name.upper(), sorted(VARIABLES), n=1, cutoff=0.6)
    return found[0] if found else None
