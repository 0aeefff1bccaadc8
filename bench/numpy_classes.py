"""crc on a heterogeneous cluster as a vectorised NumPy program:

    gcsim sweep --n 100 --s 0..50 --workers 50:exp:rate=1 --workers 50:exp:rate=0.5 --trials T

Fifty workers of exp(1) and fifty of exp(0.5) (mean 2); crc decodes from any
n - s of them, so the iteration time is the (n-s)-th smallest of all 100
times, whatever their placement.

usage: python3 bench/numpy_classes.py [trials] [seed]
"""
import numpy as np

from numpy_common import arguments, chunks, k_of_n, write

trials, seed, rng = arguments(1_000_000)
n = 100
s = np.arange(0, 51)
k = n - s
scale = np.repeat([1.0, 2.0], 50)

times = []
for c in chunks(trials, n):
    x = rng.exponential(1.0, size=(c, n))
    x *= scale
    x.sort(axis=1)
    times.append(k_of_n(x, k))
times = np.concatenate(times)
write("crc", n, s, k, times, uncoded=times[:, 0])
