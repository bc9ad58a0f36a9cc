#!/usr/bin/python3
"""Relative acceleration error of one force snapshot against a reference snapshot.

usage: compare_forces.py REFERENCE.hdf5 TEST.hdf5

Matches particles by ParticleIDs and prints the 50th, 90th and 99th percentiles and the maximum
of |a_test - a_ref| / |a_ref| (DESIGN.md section 1), per particle type and for all particles.
Needs Debian's python3-h5py and python3-numpy (run with /usr/bin/python3).
"""
import sys

import h5py
import numpy as np


def load(path):
    with h5py.File(path, "r") as f:
        out = {}
        for name in sorted(f.keys()):
            if not name.startswith("PartType"):
                continue
            g = f[name]
            if "Acceleration" not in g:
                sys.exit(f"{path}: {name} has no Acceleration (run grove forces first)")
            out[name] = (g["ParticleIDs"][:], g["Acceleration"][:])
        if not out:
            sys.exit(f"{path}: no particle groups")
        return out


def percentiles(err):
    p50, p90, p99 = np.percentile(err, [50, 90, 99])
    return f"{p50:10.3e} {p90:10.3e} {p99:10.3e} {err.max():10.3e}"


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    ref, test = load(sys.argv[1]), load(sys.argv[2])
    print(f"{'particles':>12} {'count':>9} {'median':>10} {'90%':>10} {'99%':>10} {'max':>10}")
    all_err = []
    for name, (ids_ref, acc_ref) in ref.items():
        if name not in test:
            sys.exit(f"{sys.argv[2]} lacks {name}")
        ids_test, acc_test = test[name]
        order_ref, order_test = np.argsort(ids_ref), np.argsort(ids_test)
        if not np.array_equal(ids_ref[order_ref], ids_test[order_test]):
            sys.exit(f"{name}: the two files hold different particles")
        a_ref, a_test = acc_ref[order_ref], acc_test[order_test]
        err = np.linalg.norm(a_test - a_ref, axis=1) / np.linalg.norm(a_ref, axis=1)
        all_err.append(err)
        print(f"{name:>12} {err.size:9d} {percentiles(err)}")
    if len(all_err) > 1:
        err = np.concatenate(all_err)
        print(f"{'all':>12} {err.size:9d} {percentiles(err)}")


if __name__ == "__main__":
    main()
