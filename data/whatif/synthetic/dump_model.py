#!/usr/bin/env python3
"""Writes the what-if artifact's dependency model of one lane (dp rank 0 of
the first step), as wia.py pickles it under --root (dependency_model/
TRIAL-0.pkl), as JSON: {"deps": {op: [the ops it waits for]}, "groups":
[[the ops of one collective]], "dp_sync": [ops whose collective also joins
every dp rank]}, ops named <optype>_<seq_id>_<stage> as in the artifact.

usage: dump_model.py ROOT/dependency_model/TRIAL-0.pkl OUT.json
"""
import json
import pickle
import sys


def main():
    src, out = sys.argv[1:]
    with open(src, "rb") as f:
        deps, groups, _op2gid, dp_sync = pickle.load(f)
    model = {
        "deps": {op: sorted(set(d)) for op, d in sorted(deps.items())},
        "groups": sorted(sorted(g) for g in groups),
        "dp_sync": sorted(dp_sync),
    }
    with open(out, "w") as f:
        json.dump(model, f, indent=0, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
