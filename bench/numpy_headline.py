"""The headline job as a vectorised NumPy program:

    gcsim sweep --n 100 --s 0..50 --trials T

crc under the fixed load with exponential(1) workers: draw a trials x n
matrix, sort each row once, and read the order statistic k = n - s of every
row for s = 0..50 (crc decodes from any n - s workers; Tandon et al. 2017).

usage: python3 bench/numpy_headline.py [trials] [seed]
"""
from numpy_common import crc_sweep

crc_sweep(1_000_000, lambda rng, c, n: rng.exponential(1.0, size=(c, n)))
