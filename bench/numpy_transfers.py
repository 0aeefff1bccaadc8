"""crc with random transfer times on dedicated links, as vectorised NumPy:

    gcsim sweep --n 100 --s 0..50 --comm-dist exp:rate=2 --trials T

Worker i finishes at X_i ~ exp(1) and its message (one gradient: crc's
message is 1 at every s) takes C_i ~ exp(2), drawn independently per trial
and worker; it arrives at X_i + C_i on its own link (crates/gcsim/src/comm.rs). crc with
tolerance s completes at the (n-s)-th smallest arrival.

usage: python3 bench/numpy_transfers.py [trials] [seed]
"""
from numpy_common import crc_sweep


def arrivals(rng, c, n):
    """Each worker's finish time plus its message's transfer time."""
    a = rng.exponential(1.0, size=(c, n))
    a += rng.exponential(0.5, size=(c, n))
    return a


crc_sweep(100_000, arrivals, draws_per_trial=200)
