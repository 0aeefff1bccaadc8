"""frc at n = 100 000 as a vectorised NumPy program:

    gcsim sweep --n 100000 --scheme frc --s 0,1,3,9,99 --trials T

Fractional repetition (Tandon et al. 2017, section 4.1): with tolerance s
the workers form n/(s+1) groups of s+1 consecutive workers holding the same
data, so the master has everything once one worker of every group is in:
the iteration time is the maximum over groups of the group's minimum
(exponential(1) workers, fixed load). Each trial's n draws serve every s.
The group minima of small groups are taken as elementwise minima of
strided slices, which NumPy runs several times faster than a reduction
over a short last axis; large groups reduce along the axis.

usage: python3 bench/numpy_frc.py [trials] [seed]
"""
import numpy as np

from numpy_common import arguments, chunks, write

trials, seed, rng = arguments(10_000)
n = 100_000
s = np.array([0, 1, 3, 9, 99])
assert all(n % (v + 1) == 0 for v in s), "frc needs s+1 to divide n"



def frc_time(x, r):
    """Each row's maximum over its groups of r consecutive workers of the group's minimum."""
    if r == 1:
        return x.max(axis=1)
    if r >= 16:
        return x.reshape(len(x), -1, r).min(axis=2).max(axis=1)
    first = x[:, 0::r].copy()
    for i in range(1, r):
        np.minimum(first, x[:, i::r], out=first)
    return first.max(axis=1)


times = []
for c in chunks(trials, n):
    x = rng.exponential(1.0, size=(c, n))
    times.append(np.stack([frc_time(x, v + 1) for v in s], axis=1))
times = np.concatenate(times)
write("frc", n, s, n - s, times, uncoded=times[:, 0])
