#!/usr/bin/python3
"""Plots of `grove accuracy` files (headless; Debian's python3-matplotlib, -h5py, -numpy).
From the first file: left, the fraction of particles whose relative acceleration error exceeds x,
one curve per theta (or alpha), with horizontal lines at 0.5, 0.1 and 0.01 (Octgrav Fig. 4);
middle, the median and 99th percentile against the swept parameter with the fitted power law.
Right, for every file: median and 99th percentile against interactions per particle, the
cost-accuracy front of each opening criterion (pass one file swept with --mac geometric and one
with --mac relative to compare them).

    /usr/bin/python3 scripts/plot_accuracy.py accuracy.hdf5 [relative.hdf5 ...] -o accuracy.png
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


def parameter(f):
    """The swept parameter: theta, or alpha for the relative criterion (files before it: theta)."""
    return text(f.attrs["parameter"]) if "parameter" in f.attrs else "theta"


def mac(f):
    return text(f.attrs["mac"]) if "mac" in f.attrs else "geometric"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", metavar="file")
    ap.add_argument("-o", "--output", default="accuracy.png")
    ap.add_argument("--component", default="all", help="all, bulge, disk or halo")
    args = ap.parse_args()
    fig, ax = plt.subplots(1, 3, figsize=(15, 4.6))
    with h5py.File(args.files[0], "r") as f:
        param = parameter(f)
        symbol = "θ" if param == "theta" else "α"
        values = f[param][:].ravel()
        pct = f["percentiles"][:]
        levels = list(f.attrs["percentile_levels"])
        amp, exp = f.attrs["fit_median_amplitude"], f.attrs["fit_median_exponent"]
        cmap = plt.get_cmap("viridis")
        for k in range(len(values)):
            g = f[f"{param}_{k:03d}"]
            if args.component not in g:
                sys.exit(f"no component '{args.component}' in {args.files[0]}")
            x, y = fraction_above(g[args.component])
            ax[0].loglog(x, np.maximum(y, 1e-7), color=cmap(k / max(1, len(values) - 1)),
                         label=f"{symbol} = {values[k]:.2g}")
        for level in (0.5, 0.1, 0.01):
            ax[0].axhline(level, color="grey", lw=0.7, ls="--")
        ax[0].set(xlabel="relative acceleration error x", ylabel="fraction of particles with error > x",
                  ylim=(1e-4, 1.1), title=f"{args.component} particles ({mac(f)} criterion)")
        ax[0].legend(fontsize=7, ncol=2)
        i50, i99 = levels.index(50.0), levels.index(99.0)
        ax[1].loglog(values, pct[:, i50], "o-", label="median")
        ax[1].loglog(values, pct[:, i99], "s-", label="99th percentile")
        tt = np.geomspace(values.min(), values.max(), 50)
        ax[1].loglog(tt, amp * tt**exp, "k--", lw=0.8, label=f"fit {amp:.2g} {symbol}^{exp:.2f}")
        ax[1].set(xlabel="opening angle θ" if param == "theta" else "error bound α",
                  ylabel="relative acceleration error", title="all particles")
        ax[1].legend(fontsize=8)
        fig.suptitle(f"{text(f.attrs['source'])}: N = {int(f.attrs['N'])}, nleaf {f.attrs['nleaf']}, "
                     f"ncrit {f.attrs['ncrit']}, {text(f.attrs['tree_engine'])}")
    for n, path in enumerate(args.files):
        with h5py.File(path, "r") as f:
            param = parameter(f)
            values = f[param][:].ravel()
            pct = f["percentiles"][:]
            levels = list(f.attrs["percentile_levels"])
            i50, i99 = levels.index(50.0), levels.index(99.0)
            cost = (f["node_interactions_per_particle"][:] + f["leaf_interactions_per_particle"][:]).ravel()
            colour = f"C{n}"
            ax[2].loglog(cost, pct[:, i50], "o--", color=colour, label=f"{mac(f)}: median")
            ax[2].loglog(cost, pct[:, i99], "s-", color=colour, label=f"{mac(f)}: 99th percentile")
            for v, x, y in zip(values, cost, pct[:, i99]):
                ax[2].annotate(f"{v:.2g}", (x, y), fontsize=7, xytext=(3, 3), textcoords="offset points")
    ax[2].set(xlabel="interactions per particle", ylabel="relative acceleration error (all particles)",
              title="cost against accuracy")
    ax[2].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
