#!/bin/sh
# Make sure the browser tests (tests/browser) can run: Debian's Chromium and the
# playwright package. Called by `make test` before pytest:
#
#     scripts/ensure_browser.sh [PYTHON]       # PYTHON: the venv's interpreter
#
# Installs Chromium with apt-get when it is missing and we are root on a system
# with apt-get; installs playwright into PYTHON's environment with pip when it is
# missing. Never downloads a browser through playwright. Never fails the build:
# where nothing can be installed it says so, and the browser tests skip loudly.
# PAYNB_CHROMIUM points at another Chromium binary (default /usr/bin/chromium).

PYTHON="${1:-.venv/bin/python}"
CHROMIUM="${PAYNB_CHROMIUM:-/usr/bin/chromium}"

say() { echo "ensure_browser: $*" >&2; }

if [ ! -x "$CHROMIUM" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        say "Chromium is missing at $CHROMIUM: installing Debian's chromium package (apt-get)..."
        if DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null 2>&1 \
            && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
                chromium >/dev/null 2>&1 && [ -x "$CHROMIUM" ]; then
            say "installed $("$CHROMIUM" --version 2>/dev/null | tail -n 1)"
        else
            say "WARNING: apt-get did not give a Chromium at $CHROMIUM; the browser tests will be SKIPPED."
        fi
    else
        say "WARNING: no Chromium at $CHROMIUM and no way to install it here (needs root and" \
            "apt-get); the browser tests will be SKIPPED."
    fi
fi

if [ -x "$PYTHON" ] && ! "$PYTHON" -c "import playwright" >/dev/null 2>&1; then
    say "the playwright package is missing: installing it with pip..."
    if ! "$PYTHON" -m pip install --quiet playwright >/dev/null 2>&1; then
        say "WARNING: pip could not install playwright; the browser tests will be SKIPPED."
    fi
fi

exit 0
