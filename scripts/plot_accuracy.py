#!/usr/bin/python3
"""Plots of a `grove accuracy` file (headless; Debian's python3-matplotlib, -h5py, -numpy):
left, the fraction of particles whose relative acceleration error exceeds x, one curve per theta,
with horizontal lines at 0.5, 0.1 and 0.01 (Octgrav Fig. 4); middle, the median and 99th
percentile against theta with the fitted power law; right, median error against tree time, the
cost-accuracy front.

    /usr/bin/python3 scripts/plot_accuracy.py accuracy.hdf5 -o accuracy.png
"""
import argparse
import sys

import matplotlib

matplotlib.use("Agg")
import h5py  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def text(value):
    return value.decode() if isinstance(value, bytes) else str(value)


def fraction_above(group):
    if "sorted_errors" in group:
        e = group["sorted_errors"][:].ravel()
        e = e[e > 0]
        return e, 1.0 - np.arange(1, len(e) + 1) / len(e)
    return group["cdf_x"][:].ravel(), group["cdf_fraction_above"][:].ravel()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("-o", "--output", default="accuracy.png")
    ap.add_argument("--component", default="all", help="all, bulge, disk or halo")
    args = ap.parse_args()
    with h5py.File(args.file, "r") as f:
        theta = f["theta"][:].ravel()
        pct = f["percentiles"][:]
        levels = list(f.attrs["percentile_levels"])
        tree_s = f["tree_seconds"][:].ravel()
        amp, exp = f.attrs["fit_median_amplitude"], f.attrs["fit_median_exponent"]
        fig, ax = plt.subplots(1, 3, figsize=(15, 4.6))
        cmap = plt.get_cmap("viridis")
        for k in range(len(theta)):
            g = f[f"theta_{k:03d}"]
            if args.component not in g:
                sys.exit(f"no component '{args.component}' in {args.file}")
            x, y = fraction_above(g[args.component])
            ax[0].loglog(x, np.maximum(y, 1e-7), color=cmap(k / max(1, len(theta) - 1)), label=f"θ = {theta[k]:.2g}")
        for level in (0.5, 0.1, 0.01):
            ax[0].axhline(level, color="grey", lw=0.7, ls="--")
        ax[0].set(xlabel="relative acceleration error x", ylabel="fraction of particles with error > x",
                  ylim=(1e-4, 1.1), title=f"{args.component} particles")
        ax[0].legend(fontsize=7, ncol=2)
        i50, i99 = levels.index(50.0), levels.index(99.0)
        ax[1].loglog(theta, pct[:, i50], "o-", label="median")
        ax[1].loglog(theta, pct[:, i99], "s-", label="99th percentile")
        tt = np.linspace(theta.min(), theta.max(), 50)
        ax[1].loglog(tt, amp * tt**exp, "k--", lw=0.8, label=f"fit {amp:.2g} θ^{exp:.2f}")
        ax[1].set(xlabel="opening angle θ", ylabel="relative acceleration error", title="all particles")
        ax[1].legend(fontsize=8)
        ax[2].loglog(1e3 * tree_s, pct[:, i50], "o-", label="median")
        ax[2].loglog(1e3 * tree_s, pct[:, i99], "s-", label="99th percentile")
        for t, x, y in zip(theta, 1e3 * tree_s, pct[:, i50]):
            ax[2].annotate(f"{t:.2g}", (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
        ax[2].set(xlabel="tree time per force evaluation (ms, build included)", ylabel="relative acceleration error",
                  title=f"cost against accuracy ({text(f.attrs['tree_engine'])})")
        ax[2].legend(fontsize=8)
        fig.suptitle(f"{text(f.attrs['source'])}: N = {int(f.attrs['N'])}, nleaf {f.attrs['nleaf']}, ncrit {f.attrs['ncrit']}")
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
