"""paynb benchmarks: paynb against the code an analyst would otherwise write, and the limit.

Run ``python -m benchmarks`` (or ``make bench``); ``--quick`` for a smoke run on
tiny sizes, ``--only 1,4`` for some cases. Each case runs paynb and its
baseline interleaved (A, B, A, B, ...) for several rounds and reports medians
in one table: case, paynb, baseline, ratio, limit, target, met?.

The sandbox runs in its own process (see :mod:`benchmarks._server` for why),
so on a 2-core machine the client and the service each have a core and the
client's timings are not inflated by the server holding the client's GIL.
"""
