"""Particle files as other programs write them, from the formats' specifications, for
tests/core/test_formats.cpp: a big-endian standard tipsy file (gas, dark and star records), a
little-endian tipsy file in Bonsai's variant with 64-bit IDs, GADGET binary format 1 (floats,
32-bit IDs, one type's mass in the header's massarr; also split over two files), GADGET binary
format 2 big-endian (doubles, 64-bit IDs), and a GADGET HDF5 snapshot split over two files. The particles are those of
fixture_particles() below; the test checks them field by field.

usage: /usr/bin/python3 make_format_fixtures.py OUTDIR
"""
import struct
import sys
from pathlib import Path

import numpy as np


def fixture_particles():
    """(types, ids, masses, positions, velocities): 3 gas (type 0), 4 halo (1), 5 stars (4)."""
    types = np.array([0] * 3 + [1] * 4 + [4] * 5)
    n = len(types)
    ids = np.arange(101, 101 + n, dtype=np.uint64)
    masses = np.where(types == 1, 0.25, 0.01 * (1 + np.arange(n)))
    k = np.arange(n, dtype=np.float64)
    pos = np.stack([0.5 * k - 1.0, 0.25 * k, -0.125 * k + 2.0], axis=1)
    vel = np.stack([0.1 * k, -0.2 * k, 0.3 + 0 * k], axis=1)
    return types, ids, masses, pos, vel


def tipsy(path, order, bonsai):
    types, ids, masses, pos, vel = fixture_particles()
    gas, dark, star = (types == 0), (types == 1), (types == 4)
    with open(path, "wb") as f:
        f.write(struct.pack(order + "diiiiiI", 1.5, len(types), 3, gas.sum(), dark.sum(), star.sum(),
                            2 if bonsai else 0))
        for i in np.flatnonzero(gas):
            f.write(struct.pack(order + "12f", masses[i], *pos[i], *vel[i], 1.0, 2.0, 0.05, 0.02, -1.0))
        for i in np.flatnonzero(dark):
            f.write(struct.pack(order + "7f", masses[i], *pos[i], *vel[i]))
            f.write(struct.pack(order + "Q", ids[i]) if bonsai else struct.pack(order + "2f", 0.01, -1.0))
        for i in np.flatnonzero(star):
            f.write(struct.pack(order + "9f", masses[i], *pos[i], *vel[i], 0.02, 0.5))
            f.write(struct.pack(order + "Q", ids[i]) if bonsai else struct.pack(order + "2f", 0.01, -1.0))


def record(f, order, data):
    f.write(struct.pack(order + "I", len(data)))
    f.write(data)
    f.write(struct.pack(order + "I", len(data)))


def gadget_binary(path, order, fmt, real, idtype, rows=None, files=1):
    types, ids, masses, pos, vel = fixture_particles()
    total = [int((types == t).sum()) for t in range(6)]
    if rows is not None:
        types, ids, masses, pos, vel = types[rows], ids[rows], masses[rows], pos[rows], vel[rows]
    npart = [int((types == t).sum()) for t in range(6)]
    massarr = [0.25 if t == 1 else 0.0 for t in range(6)]  # the halo's mass in the header
    header = struct.pack(order + "6i6dddii6Iii4dii6I", *npart, *massarr, 1.5, 0.0, 0, 0, *total, 0, files,
                         0.0, 0.0, 0.0, 0.0, 0, 0, *([0] * 6))
    header += b"\0" * (256 - len(header))
    dt = np.dtype(real).newbyteorder(order)
    blocks = [("HEAD", header), ("POS ", pos.astype(dt).tobytes()), ("VEL ", vel.astype(dt).tobytes()),
              ("ID  ", ids.astype(np.dtype(idtype).newbyteorder(order)).tobytes()),
              ("MASS", masses[types != 1].astype(dt).tobytes()),
              ("U   ", np.full(npart[0], 7.0, dtype=dt).tobytes())]  # a gas block, not read
    with open(path, "wb") as f:
        for name, data in blocks:
            if fmt == 2:
                record(f, order, name.encode() + struct.pack(order + "I", len(data) + 8))
            record(f, order, data)


def split_hdf5(base):
    import h5py
    types, ids, masses, pos, vel = fixture_particles()
    halves = [np.arange(0, 6), np.arange(6, len(types))]
    for k, rows in enumerate(halves):
        with h5py.File(f"{base}.{k}.hdf5", "w") as f:
            h = f.create_group("Header")
            counts = [int((types[rows] == t).sum()) for t in range(6)]
            h.attrs["NumPart_ThisFile"] = np.array(counts, dtype=np.uint32)
            h.attrs["NumPart_Total"] = np.array([int((types == t).sum()) for t in range(6)], dtype=np.uint32)
            h.attrs["MassTable"] = np.zeros(6)
            h.attrs["Time"] = 1.5
            h.attrs["NumFilesPerSnapshot"] = np.int32(2)
            u = f.create_group("Units")
            u.attrs["UnitLength_in_cm"] = 3.085678e21
            u.attrs["UnitMass_in_g"] = 1.989e43
            u.attrs["UnitVelocity_in_cm_per_s"] = 1e5
            for t in range(6):
                sel = rows[types[rows] == t]
                if len(sel) == 0:
                    continue
                g = f.create_group(f"PartType{t}")
                g["Coordinates"] = pos[sel].astype(np.float32)
                g["Velocities"] = vel[sel].astype(np.float32)
                g["Masses"] = masses[sel]
                g["ParticleIDs"] = ids[sel]


def main():
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    tipsy(out / "standard_big_endian.tipsy", ">", bonsai=False)
    tipsy(out / "bonsai_ids.tipsy", "<", bonsai=True)
    gadget_binary(out / "format1.gadget", "<", 1, np.float32, np.uint32)
    gadget_binary(out / "format2_big_endian.gadget", ">", 2, np.float64, np.uint64)
    for k, rows in enumerate((np.arange(0, 5), np.arange(5, 12))):  # GADGET's names: BASE.K
        gadget_binary(out / f"split_binary.{k}", "<", 1, np.float32, np.uint32, rows=rows, files=2)
    split_hdf5(out / "split")


if __name__ == "__main__":
    main()
