"""crc with log-normal workers as a vectorised NumPy program:

    gcsim sweep --n 100 --s 0..50 --dist lognormal:mu=0,sigma=1 --trials T

Each worker's time is exp(N(0, 1)); crc with tolerance s completes at the
(n-s)-th smallest.

usage: python3 bench/numpy_lognormal.py [trials] [seed]
"""
import numpy as np

from numpy_common import arguments, chunks, k_of_n, write

trials, seed, rng = arguments(1_000_000)
n = 100
s = np.arange(0, 51)
k = n - s

times = []
for c in chunks(trials, n):
    x = rng.lognormal(0.0, 1.0, size=(c, n))
    x.sort(axis=1)
    times.append(k_of_n(x, k))
times = np.concatenate(times)
write("crc", n, s, k, times, uncoded=times[:, 0])
