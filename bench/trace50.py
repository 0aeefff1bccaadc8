"""Writes the 50 MB step-time trace the trace benches read: 64 workers,
exponential times plus a floor of 0.5, seeded, to the path given.

    python3 bench/trace50.py PATH
"""
import random
import sys

random.seed(1)
with open(sys.argv[1], "w") as f:
    f.write("step,worker,time\n")
    step = 0
    while f.tell() < 50_000_000:
        for w in range(64):
            f.write(f"{step},{w},{random.expovariate(1.0) + 0.5:.6f}\n")
        step += 1
