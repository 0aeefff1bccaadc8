"""crc on measured times as vectorised NumPy programs, one per way gcsim
uses a trace (crates/gcsim/src/engine/trial/sample.rs):

replay, at the trace's own 64 workers:
    gcsim sweep --n 64 --scheme crc --s 0..31 --dist replay:path=FILE --trace-bootstrap 0 --trials T
each trial draws one recorded step uniformly and gives the workers that
step's 64 times, so correlated and persistent stragglers stay in;

bootstrap, at n = 100:
    gcsim sweep --n 100 --s 0..50 --dist trace:path=FILE --trace-bootstrap 0 --trials T
each worker's time is drawn independently and uniformly from all recorded
times.

Either way crc with tolerance s completes at the (n-s)-th smallest time. The
step-bootstrap widening of gcsim's intervals (--trace-bootstrap) is off, so
std_err is Monte Carlo error alone on both sides. A replay simulates each
trial as gcsim does (the step's times, sorted); with 43 steps one could
instead sort each step once and average, which would make the job trivial
for any program.

usage: python3 bench/numpy_trace.py replay|bootstrap FILE [trials] [seed]
"""
import sys

import numpy as np

from numpy_common import arguments, chunks, k_of_n, read_trace, write

mode, path = sys.argv[1], sys.argv[2]
trials, seed, rng = arguments(1_000_000, skip=2)
table = read_trace(path)
steps, recorded = table.shape
if mode == "replay":
    n = recorded
    s = np.arange(0, n // 2)
elif mode == "bootstrap":
    n = 100
    s = np.arange(0, 51)
    pool = table.ravel()
else:
    sys.exit(f"unknown mode `{mode}`; accepted: replay, bootstrap")
k = n - s

times = []
for c in chunks(trials, n):
    if mode == "replay":
        x = table[rng.integers(0, steps, size=c)]
    else:
        x = pool[rng.integers(0, len(pool), size=(c, n))]
    x.sort(axis=1)
    times.append(k_of_n(x, k))
times = np.concatenate(times)
write("crc", n, s, k, times, uncoded=times[:, 0])
