#!/usr/bin/python3
"""Face-on and edge-on surface density maps of each component of a snapshot (headless).

    /usr/bin/python3 scripts/plot_snapshot.py snapshot.hdf5 -o snapshot.png [--extent 30]
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import h5py  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import LogNorm  # noqa: E402

NAMES = {0: "gas", 1: "halo", 2: "disk", 3: "bulge", 4: "stars", 5: "boundary"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("snapshot")
    ap.add_argument("-o", "--output", default="snapshot.png")
    ap.add_argument("--extent", type=float, default=None, help="half width of the maps (default: 90%% radius of the disk or all)")
    ap.add_argument("--bins", type=int, default=0, help="pixels per side (default: from the particle number)")
    args = ap.parse_args()
    comps = []
    with h5py.File(args.snapshot, "r") as f:
        time = float(f["Header"].attrs["Time"])
        for t in range(6):
            g = f.get(f"PartType{t}")
            if g is None or len(g["Coordinates"]) == 0:
                continue
            pos = g["Coordinates"][:].astype(float)
            mass = g["Masses"][:] if "Masses" in g else np.full(len(pos), f["Header"].attrs["MassTable"][t])
            comps.append((NAMES[t], pos, mass))
    if args.extent is None:
        ref = next((p for n, p, m in comps if n == "disk"), np.concatenate([p for _, p, _ in comps]))
        args.extent = float(np.percentile(np.linalg.norm(ref, axis=1), 90))
    e = args.extent
    fig, ax = plt.subplots(2, len(comps), figsize=(4 * len(comps), 7.6), squeeze=False)
    cmap = plt.get_cmap("magma").copy()
    cmap.set_bad(cmap(0.0))  # empty pixels: the lowest colour, not white
    for k, (name, pos, mass) in enumerate(comps):
        bins = args.bins or int(np.clip(np.sqrt(len(pos)) / 1.5, 40, 400))
        area = (2 * e / bins) ** 2
        for row, (i, j, label) in enumerate(((0, 1, "face-on (x, y)"), (0, 2, "edge-on (x, z)"))):
            h, _, _ = np.histogram2d(pos[:, i], pos[:, j], bins=bins, range=[[-e, e], [-e, e]], weights=mass)
            h = h.T / area
            positive = h[h > 0]
            norm = LogNorm(vmin=max(positive.min(), positive.max() * 1e-5), vmax=positive.max()) if positive.size else None
            ax[row, k].imshow(np.where(h > 0, h, np.nan), origin="lower", extent=[-e, e, -e, e], norm=norm, cmap=cmap,
                              interpolation="nearest")
            ax[row, k].set(title=f"{name}: {label}", xlabel="x" if row else "x", ylabel="y" if row == 0 else "z")
    fig.suptitle(f"{args.snapshot}: t = {time:g}, surface density (mass / length²)")
    fig.tight_layout()
    fig.savefig(args.output, dpi=100)
    print(f"wrote {args.output}")


if __name__ == "__main__":
    main()
