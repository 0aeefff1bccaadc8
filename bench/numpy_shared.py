"""crc on a shared ingress link as a vectorised NumPy program:

    gcsim sweep --n 100 --s 0..50 --comm-time 0.3 --link shared --trials T

The master receives one message at a time, first come first served in the
order the workers finish (crates/gcsim/src/comm.rs): with finish times sorted,
f_(1) <= ... <= f_(n), the j-th message arrives at
a_(j) = max(a_(j-1), f_(j)) + tau * message. Unrolled, a_(j) is
j*tau + max over i <= j of (f_(i) - (i-1)*tau) with message 1 (crc sends one
gradient-sized message at every s), a running maximum along each row.
Arrivals come in finish order, so crc with tolerance s completes at the
(n-s)-th arrival. Under the fixed load the finish times do not depend on s:
one sort serves every s.

usage: python3 bench/numpy_shared.py [trials] [seed]
"""
import numpy as np

from numpy_common import arguments, chunks, k_of_n, write

trials, seed, rng = arguments(100_000)
n, tau = 100, 0.3
s = np.arange(0, 51)
k = n - s
j = np.arange(n)

times = []
for c in chunks(trials, n):
    f = rng.exponential(1.0, size=(c, n))
    f.sort(axis=1)
    a = np.maximum.accumulate(f - j * tau, axis=1) + (j + 1) * tau
    times.append(k_of_n(a, k))
times = np.concatenate(times)
write("crc", n, s, k, times, uncoded=times[:, 0])
