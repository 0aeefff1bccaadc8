"""crc with random transfer times on dedicated links, as vectorised NumPy:

    gcsim sweep --n 100 --s 0..50 --comm-dist exp:rate=2 --trials T

Worker i finishes at X_i ~ exp(1) and its message (one gradient: crc's
message is 1 at every s) takes C_i ~ exp(2), drawn independently per trial
and worker; it arrives at X_i + C_i on its own link (src/comm.rs). crc with
tolerance s completes at the (n-s)-th smallest arrival.

usage: python3 bench/numpy_transfers.py [trials] [seed]
"""
import numpy as np

from numpy_common import arguments, chunks, k_of_n, write

trials, seed, rng = arguments(100_000)
n = 100
s = np.arange(0, 51)
k = n - s

times = []
for c in chunks(trials, 2 * n):
    a = rng.exponential(1.0, size=(c, n))
    a += rng.exponential(0.5, size=(c, n))
    a.sort(axis=1)
    times.append(k_of_n(a, k))
times = np.concatenate(times)
write("crc", n, s, k, times, uncoded=times[:, 0])
