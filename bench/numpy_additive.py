"""crc under the additive load as a vectorised NumPy program:

    gcsim sweep --n 100 --s 0..50 --load-model additive --trials T

Under `additive` a worker's time for load l is the sum of l independent
unit draws, X_1 + ... + X_l (exponential(1) here, so Gamma(l, 1)); crc with
tolerance s gives every worker load s+1 and completes at the (n-s)-th
smallest. Each trial draws 51 units per worker, and a running sum over the
units gives every load's times on the same draws; one sort per load.

usage: python3 bench/numpy_additive.py [trials] [seed]
"""
import numpy as np

from numpy_common import arguments, chunks, write

trials, seed, rng = arguments(100_000)
n = 100
s = np.arange(0, 51)
k = n - s
units = len(s)

times = []
for c in chunks(trials, n * units):
    x = rng.exponential(1.0, size=(c, units, n))
    np.cumsum(x, axis=1, out=x)  # x[:, l-1, i]: worker i's time at load l
    x.sort(axis=2)
    times.append(x[:, s, k - 1])
times = np.concatenate(times)
write("crc", n, s, k, times, uncoded=times[:, 0])
