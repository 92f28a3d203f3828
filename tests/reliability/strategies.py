"""Hypothesis strategies for every request field: valid values, and values that break a rule.

Each wire field of :mod:`paynb.models` has a *kind* (name, routing number, amount, ...). For
each kind there is a strategy of values the shared rules accept and one of values they refuse,
built by construction (not by asking the rules), so the tests check the rules as well as the
guarantee that a refused value never leaves the client.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

from hypothesis import strategies as st

from paynb import validation

DIGITS = "0123456789"
ALNUM = DIGITS + "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def routing_number(prefix: str) -> str:
    """The nine-digit ABA number starting with the eight digits ``prefix`` (check digit added)."""
    d = [int(c) for c in prefix]
    partial = 3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + (d[2] + d[5])
    return prefix + str((10 - partial % 10) % 10)


def luhn_complete(prefix: str) -> str:
    """``prefix`` followed by the one digit that makes it pass the Luhn check."""
    for last in DIGITS:
        if validation.luhn_ok(prefix + last):
            return prefix + last
    raise AssertionError("unreachable: one of ten digits always completes a Luhn number")


def _digits(min_size: int, max_size: int) -> st.SearchStrategy[str]:
    return st.text(DIGITS, min_size=min_size, max_size=max_size)


# -- valid values ---------------------------------------------------------------------------

printable_ascii = st.characters(min_codepoint=32, max_codepoint=126)
valid_name = st.text(printable_ascii, min_size=1, max_size=50).filter(lambda s: s.strip())
valid_routing = _digits(8, 8).map(routing_number)
valid_account = st.text(ALNUM + "-", min_size=4, max_size=17)
valid_state = st.sampled_from(sorted(validation.US_STATES))
valid_ach_zip = st.builds(lambda a, sep, b: a + (sep + b if sep else ""), _digits(5, 5),
                          st.sampled_from(["", "-", " "]), _digits(4, 4))
valid_rcc_zip = st.builds(lambda a, ext, b: a + (" " + b if ext else ""), _digits(5, 5),
                          st.booleans(), _digits(4, 4))
valid_amount = st.decimals(min_value=Decimal("0.01"), max_value=validation.MAX_AMOUNT, places=2)
valid_expiration = st.builds(lambda m, y: f"{m:02d}/{y}", st.integers(1, 12),
                             st.integers(dt.date.today().year + 1, dt.date.today().year + 9))
valid_tot = _digits(4, 10)

# -- invalid values, per kind ---------------------------------------------------------------

_not_text = st.one_of(st.integers(), st.booleans(), st.lists(st.integers(), max_size=2))
_blank = st.text(" \t", min_size=0, max_size=3)
_too_long = st.text(printable_ascii, min_size=51, max_size=80).filter(lambda s: len(s.strip()) > 50)
_with_control = st.builds(lambda a, c, b: f"x{a}{c}{b}y", st.text(ALNUM, max_size=5),
                          st.sampled_from(["\x00", "\x07", "\n", "\x1b", "\x7f"]),
                          st.text(ALNUM, max_size=5))

bad_name = st.one_of(_blank, _too_long, _with_control, _not_text)
bad_reference = st.one_of(
    bad_name,
    st.builds(lambda a, b: f"{a}'{b}", st.text(ALNUM, max_size=10), st.text(ALNUM, max_size=10)),
)
bad_routing = st.one_of(
    _digits(0, 8), _digits(10, 12),
    st.builds(lambda d, c: d[:4] + c + d[5:], _digits(9, 9), st.sampled_from("aX-' ")),
    # A correct number with its check digit changed fails the checksum.
    valid_routing.map(lambda r: r[:8] + str((int(r[8]) + 1) % 10)),
    st.integers(0, 999_999_999),
)
bad_account = st.one_of(
    st.text(ALNUM, max_size=3),
    st.text(ALNUM, min_size=18, max_size=25),
    st.builds(lambda a, c, b: a + c + b, st.text(ALNUM, min_size=2, max_size=6),
              st.sampled_from(["'", " ", "/", ".", "_", "#"]),
              st.text(ALNUM, min_size=2, max_size=6)),
    st.integers(),
)
bad_state = st.one_of(
    st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=2, max_size=2)
    .filter(lambda s: s not in validation.US_STATES),
    st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=3, max_size=5),
    _digits(2, 2), _not_text,
)
bad_ach_zip = st.one_of(_digits(0, 4), _digits(6, 8), _digits(5, 5).map(lambda z: z + "-12"),
                        st.builds(lambda z: z[:2] + "A" + z[3:], _digits(5, 5)), st.integers())
bad_rcc_zip = st.one_of(bad_ach_zip, st.builds(lambda a, b: f"{a}-{b}", _digits(5, 5),
                                               _digits(4, 4)))
bad_amount = st.one_of(
    st.decimals(max_value=Decimal(0), allow_nan=False, allow_infinity=False, places=2),
    st.decimals(min_value=Decimal("0.001"), max_value=Decimal(1000), places=3)
    .filter(lambda d: d != d.quantize(Decimal("0.01"))),
    st.decimals(min_value=validation.MAX_AMOUNT + Decimal("0.01"), max_value=Decimal(10) ** 12,
                places=2),
    st.sampled_from(["ten", "1.2.3", "", "NaN", "Infinity", float("nan"), float("inf"), True]),
)
bad_instant_amount = st.one_of(
    st.integers(max_value=0),
    st.integers(min_value=10_000_000_000, max_value=10**13),
    st.decimals(min_value=Decimal("0.1"), max_value=Decimal(1000), places=1)
    .filter(lambda d: d != d.to_integral_value()),
    st.sampled_from(["ten", "", "NaN", True]),
)
bad_card = st.one_of(
    _digits(0, 12), _digits(20, 24),
    # A Luhn-valid number with its last digit changed fails the check.
    _digits(15, 15).map(luhn_complete).map(lambda n: n[:-1] + str((int(n[-1]) + 1) % 10)),
    st.builds(lambda n: n[:6] + "X" + n[7:], _digits(16, 16)),
    st.integers(),
)
bad_expiration = st.one_of(
    st.sampled_from(["13/2030", "00/2030", "1/2030", "01/30", "2030/01", "01-2030", ""]),
    st.builds(lambda m, y: f"{m:02d}/{y}", st.integers(1, 12), st.integers(1990, 2020)),
    st.integers(),
)
bad_tot = st.one_of(_digits(0, 3), _digits(11, 14),
                    st.builds(lambda d: d[:2] + "a" + d[3:], _digits(6, 6)), st.integers())


def bad_literal(allowed: tuple[str, ...]) -> st.SearchStrategy[object]:
    """Values outside a closed set of words (including case variants of the allowed ones)."""
    return st.one_of(
        st.text(ALNUM, min_size=1, max_size=12).filter(lambda s: s not in allowed),
        st.sampled_from([a.upper() for a in allowed if a.upper() not in allowed]
                        or ["Nope"]),
        st.integers(),
    )


# The open sets (account type, entry class, sub-type, payment type code) take any text: an
# unknown value is sent with a warning (docs/validation.md). Refused: what is no text at
# all, or text with control characters.
bad_open_text = st.one_of(_with_control, st.integers(), st.lists(st.integers(), max_size=2))
#: Free text of the documented optional fields (length not shown): control characters.
bad_free_text = bad_open_text
bad_country_code = st.one_of(
    st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=3, max_size=4),
    st.text("ABCDEFGHIJKLMNOPQRSTUVWXYZ", min_size=1, max_size=1), _digits(2, 2),
    st.integers())


def bad_width(width: int) -> st.SearchStrategy[object]:
    """Text longer than a documented width (non-blank after stripping), or no text."""
    return st.one_of(
        st.text(ALNUM, min_size=width + 1, max_size=width + 6),
        st.integers(), st.lists(st.integers(), max_size=2))


#: A whole number that is negative, fractional or no number at all.
bad_whole = st.one_of(st.integers(max_value=-1), st.sampled_from(["x12", 1.5, "1.5", [1]]))
bad_flag = st.one_of(st.sampled_from(["maybe", "2", "oui", "-1"]), st.integers(min_value=2),
                     st.lists(st.booleans(), min_size=1, max_size=2))
bad_date = st.one_of(
    st.sampled_from(["2025-13-01", "2025-02-30", "tomorrow", "11/06/2025", "2025-06-11T25:00"]),
    st.text(ALNUM, min_size=1, max_size=8).filter(lambda s: not s.isdigit()),
    st.booleans(), st.lists(st.integers(), max_size=2))
bad_object = st.one_of(st.integers(), st.text(ALNUM, min_size=1, max_size=5),
                       st.lists(st.integers(), min_size=1, max_size=2))
bad_item_id = st.one_of(st.integers(max_value=0), st.sampled_from(["abc", None, 1.5, "", [1]]))
