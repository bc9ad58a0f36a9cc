#!/usr/bin/python3
"""Energy error, virial ratio and Lagrangian radii against time from a `grove run` directory's
diagnostics.txt (headless).

    /usr/bin/python3 scripts/plot_run.py RUN_DIR/diagnostics.txt -o run.png
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("diagnostics")
    ap.add_argument("-o", "--output", default="run.png")
    args = ap.parse_args()
    columns = None
    with open(args.diagnostics) as f:
        for line in f:
            if line.startswith("# time"):
                columns = line[1:].split()
    d = np.atleast_2d(np.loadtxt(args.diagnostics))
    col = {name: i for i, name in enumerate(columns)}
    t = d[:, col["time"]]
    fig, ax = plt.subplots(1, 3, figsize=(14, 4))
    ax[0].semilogy(t, np.maximum(np.abs(d[:, col["rel_energy_error"]]), 1e-17))
    ax[0].set(xlabel="time", ylabel="|ΔE / E0|", title="energy")
    ax[1].plot(t, d[:, col["virial_ratio"]])
    ax[1].axhline(1, color="grey", lw=0.7, ls="--")
    ax[1].set(xlabel="time", ylabel="2T / |W|", title="virial ratio")
    for name in ("r10", "r50", "r90"):
        ax[2].plot(t, d[:, col[name]], label=name)
    ax[2].set(xlabel="time", ylabel="radius", yscale="log", title="Lagrangian radii (all mass)")
    ax[2].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
