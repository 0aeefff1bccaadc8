"""crc with log-normal workers as a vectorised NumPy program:

    gcsim sweep --n 100 --s 0..50 --dist lognormal:mu=0,sigma=1 --trials T

Each worker's time is exp(N(0, 1)); crc with tolerance s completes at the
(n-s)-th smallest.

usage: python3 bench/numpy_lognormal.py [trials] [seed]
"""
from numpy_common import crc_sweep

crc_sweep(1_000_000, lambda rng, c, n: rng.lognormal(0.0, 1.0, size=(c, n)))
