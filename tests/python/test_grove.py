"""The grove Python module against the command line: same forces, same runs, same accuracy
numbers; numpy input rules; the GIL released while engines compute."""
import os
import subprocess
import threading
import time

import h5py
import numpy as np
import pytest

import grove

GROVE = os.environ.get("GROVE_EXE", "grove")


def run_grove(*args):
    subprocess.run([GROVE, *map(str, args)], check=True, capture_output=True)


@pytest.fixture(scope="module")
def plummer(tmp_path_factory):
    path = tmp_path_factory.mktemp("py") / "plummer.hdf5"
    snap = grove.ic.plummer(3000, seed=7)
    grove.write(str(path), snap)
    return path, snap


def test_forces_equal_the_command_line(plummer, tmp_path):
    path, snap = plummer
    out = tmp_path / "forces.hdf5"
    run_grove("forces", path, "--engine", "tree-cpu", "--eps", 0.01, "-o", out)
    acc, pot = grove.forces(snap.positions, snap.masses, engine="tree-cpu", eps=0.01)
    cli = grove.read(str(out))
    assert np.array_equal(acc, cli.accelerations)
    assert np.array_equal(pot, cli.potentials)
    assert acc.shape == (3000, 3) and pot.shape == (3000,)


def test_float32_input_and_the_input_rules(plummer):
    _, snap = plummer
    pos, mass = snap.positions, snap.masses
    acc64, _ = grove.forces(pos, mass, engine="direct-cpu", eps=0.01)
    acc32, _ = grove.forces(pos.astype(np.float32), mass.astype(np.float32), engine="direct-cpu", eps=0.01)
    assert np.allclose(acc32, acc64, rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match="C-contiguous"):
        grove.forces(np.asfortranarray(pos), mass)
    with pytest.raises(ValueError, match="C-contiguous"):
        grove.forces(np.ascontiguousarray(np.hstack([pos, pos]))[:, ::2], mass)
    with pytest.raises(ValueError, match=r"shape \(N, 3\)"):
        grove.forces(pos[:, :2].copy(), mass)
    with pytest.raises(ValueError, match="shape"):
        grove.forces(pos, mass[:-1].copy())
    bad = pos.copy()
    bad[5, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        grove.forces(bad, mass)
    with pytest.raises(ValueError, match="negative"):
        grove.forces(pos, -mass)
    with pytest.raises(ValueError, match="float64 or float32"):
        grove.forces(pos.astype(np.int64), mass)
    with pytest.raises(ValueError, match="theta"):
        grove.forces(pos, mass, theta=2.0)
    with pytest.raises(RuntimeError, match="unknown engine"):
        grove.forces(pos, mass, engine="warp-drive")


def test_gpu_engines_without_gpu_are_a_runtime_error(plummer):
    _, snap = plummer
    pos, mass = snap.positions[:100].copy(), snap.masses[:100].copy()
    if grove.gpu_available():
        acc, _ = grove.forces(pos, mass, engine="tree-gpu", eps=0.01)
        assert acc.shape == (100, 3)
    else:
        with pytest.raises(RuntimeError, match="GPU"):
            grove.forces(pos, mass, engine="tree-gpu")
        with pytest.raises(RuntimeError, match="GPU"):
            grove.Simulation(snap, integrator="hermite", engine="direct-gpu", dt_max=1 / 64)


def test_simulation_ends_where_grove_run_ends(plummer, tmp_path):
    path, snap = plummer
    run = tmp_path / "run"
    run_grove("run", path, "-o", run, "--engine", "tree-cpu", "--eps", 0.01, "--dt", 0.01, "--t-end", 0.1)
    sim = grove.Simulation(snap, engine="tree-cpu", eps=0.01, dt=0.01)
    e0 = sim.energy()
    sim.evolve(0.1)
    assert sim.time == pytest.approx(0.1)
    end = grove.read(str(run / "snapshot_0010.hdf5"))
    assert np.array_equal(sim.positions, end.positions)
    assert np.array_equal(sim.velocities, end.velocities)
    rows = [line.split() for line in open(run / "diagnostics.txt") if not line.startswith("#")]
    assert abs((sim.energy() - e0) / e0) == pytest.approx(abs(float(rows[-1][5])), rel=1e-3, abs=1e-12)
    with pytest.raises(ValueError, match="whole number of steps"):
        sim.evolve(0.105)
    out = tmp_path / "sim.hdf5"
    sim.write(str(out))
    assert np.array_equal(grove.read(str(out)).positions, end.positions)


def test_the_three_entry_points_take_the_same_engine_keywords(plummer, tmp_path):
    path, snap = plummer
    # The relative criterion in a Simulation runs as grove run runs it.
    run = tmp_path / "relative"
    run_grove("run", path, "-o", run, "--engine", "tree-cpu", "--eps", 0.01, "--dt", 0.01, "--t-end", 0.03,
              "--mac", "relative", "--alpha", 1e-3)
    keywords = dict(engine="tree-cpu", eps=0.01, nleaf=16, ncrit=32, mac="relative")
    sim = grove.Simulation(snap, dt=0.01, alpha=1e-3, engine="tree-cpu", eps=0.01, mac="relative")
    sim.evolve(0.03)
    end = grove.read(str(run / "snapshot_0003.hdf5"))
    assert np.array_equal(sim.positions, end.positions)
    grove.forces(snap.positions, snap.masses, alpha=1e-3, **keywords)
    grove.accuracy(snap, [1e-3], sample=50, **keywords)
    # The relative criterion's geometric bound, as grove's --theta-max: the same run, another orbit.
    bounded = tmp_path / "bounded"
    run_grove("run", path, "-o", bounded, "--engine", "tree-cpu", "--eps", 0.01, "--dt", 0.01, "--t-end", 0.03,
              "--mac", "relative", "--alpha", 1e-3, "--theta-max", 0.6)
    sim = grove.Simulation(snap, dt=0.01, alpha=1e-3, engine="tree-cpu", eps=0.01, mac="relative", theta_max=0.6)
    sim.evolve(0.03)
    assert np.array_equal(sim.positions, grove.read(str(bounded / "snapshot_0003.hdf5")).positions)
    assert not np.array_equal(sim.positions, end.positions)
    grove.forces(snap.positions, snap.masses, alpha=1e-3, theta_max=0.6, **keywords)
    grove.accuracy(snap, [1e-3], sample=50, theta_max=0.6, **keywords)
    with pytest.raises(ValueError, match="theta_max"):
        grove.forces(snap.positions, snap.masses, engine="tree-cpu", theta_max=0.6)
    # Memory limits, as grove's --gpu-memory and --list-memory: lists in batches of a few groups
    # give the same forces bit for bit.
    whole = grove.forces(snap.positions, snap.masses, engine="tree-cpu", eps=0.01)
    batched = grove.forces(snap.positions, snap.masses, engine="tree-cpu", eps=0.01, list_memory=4096,
                           gpu_memory=1 << 30)
    assert np.array_equal(whole[0], batched[0])
    grove.Simulation(snap, dt=0.01, engine="tree-cpu", eps=0.01, list_memory=4096).evolve(0.01)
    grove.accuracy(snap, [0.5], sample=50, engine="tree-cpu", eps=0.01, list_memory=4096)
    with pytest.raises(ValueError, match="bytes"):
        grove.forces(snap.positions, snap.masses, engine="tree-cpu", list_memory=0)
    # One check for all three: a bogus precision, or a softening whose square overflows.
    for bad in (dict(precision="bogus"), dict(eps=1e155)):
        with pytest.raises(ValueError):
            grove.forces(snap.positions, snap.masses, engine="tree-cpu", **bad)
        with pytest.raises(ValueError):
            grove.Simulation(snap, dt=0.01, engine="tree-cpu", **bad)
    with pytest.raises(ValueError, match="square is finite"):
        grove.accuracy(snap, [0.5], sample=50, engine="tree-cpu", eps=1e155)
    with pytest.raises(ValueError, match="precision"):
        grove.accuracy(snap, [0.5], sample=50, engine="tree-cpu", precision="bogus")


def test_accuracy_equals_grove_accuracy(plummer, tmp_path):
    path, snap = plummer
    out = tmp_path / "accuracy.hdf5"
    run_grove("accuracy", path, "--engine", "tree-cpu", "--theta", "0.5,0.8", "--eps", 0.01, "-o", out)
    table = grove.accuracy(snap, [0.5, 0.8], engine="tree-cpu", eps=0.01)
    with h5py.File(out) as f:
        assert np.array_equal(table["theta"], f["theta"][:].ravel())
        assert np.array_equal(table["all"], f["percentiles"][:])
    assert table["all"].shape == (2, len(table["levels"]))
    # The relative criterion through both paths: the same alphas, the same percentiles.
    run_grove("accuracy", path, "--engine", "tree-cpu", "--mac", "relative", "--alpha", "1e-3,1e-2", "--eps", 0.01,
              "-o", out)
    table = grove.accuracy(snap, [1e-3, 1e-2], engine="tree-cpu", eps=0.01, mac="relative")
    with h5py.File(out) as f:
        assert f.attrs["mac"] in (b"relative", "relative")
        assert np.array_equal(table["alpha"], f["alpha"][:].ravel())
        assert np.array_equal(table["all"], f["percentiles"][:])
    assert table["all"][0, 2] < table["all"][1, 2]  # a smaller alpha, a smaller p99
    with pytest.raises(ValueError, match="alpha"):
        grove.accuracy(snap, [2.0], engine="tree-cpu", mac="relative")
    with pytest.raises(ValueError, match="geometric"):
        grove.forces(snap.positions, snap.masses, mac="barnes")


def test_the_gil_is_released_while_computing():
    snap = grove.ic.uniform(6000, seed=3)
    spans = []

    def work():
        start = time.perf_counter()
        grove.forces(snap.positions, snap.masses, engine="direct-cpu", eps=0.01)
        spans.append((start, time.perf_counter()))

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    (a0, a1), (b0, b1) = spans
    overlap = min(a1, b1) - max(a0, b0)
    assert overlap > 0.5 * min(a1 - a0, b1 - b0)


def test_snapshots_and_models_round_trip(tmp_path):
    g = grove.ic.galaxy(3000, seed=2)
    assert set(np.unique(g.types)) == {1, 2, 3}
    assert g.header["units"] == "gadget" and g.header["G"] == pytest.approx(43007.1, rel=1e-5)
    path = tmp_path / "g.hdf5"
    grove.write(str(path), g)
    back = grove.read(str(path))
    assert len(back) == 3000
    assert set(back.ids) == set(g.ids)
    with pytest.raises(ValueError, match="unknown galaxy option"):
        grove.ic.galaxy(100, disk_colour=1.0)
    with pytest.raises(RuntimeError):
        grove.read(str(tmp_path / "missing.hdf5"))


def test_block_simulation_ends_where_grove_run_ends(tmp_path):
    # Block time steps (timestep="block": dt_max, eta, and the dynamical time's cap eta_dyn) as
    # `grove run --timestep block` takes them, to the bit, on a galaxy whose centre the cap shortens.
    path = tmp_path / "galaxy.hdf5"
    snap = grove.ic.galaxy(4000, seed=3)
    grove.write(str(path), snap)
    run = tmp_path / "block"
    run_grove("run", path, "-o", run, "--engine", "tree-cpu", "--eps", 0.05, "--timestep", "block",
              "--dt-max", 0.004, "--eta", 0.02, "--t-end", 0.008)
    sim = grove.Simulation(snap, engine="tree-cpu", eps=0.05, timestep="block", dt_max=0.004, eta=0.02)
    e0 = sim.energy()
    sim.evolve(0.008)
    mine, end = sim.snapshot, grove.read(str(run / "snapshot_0002.hdf5"))
    a, b = np.argsort(mine.ids), np.argsort(end.ids)  # the file holds the types one after another
    assert np.array_equal(mine.positions[a], end.positions[b])
    assert np.array_equal(mine.velocities[a], end.velocities[b])
    assert abs((sim.energy() - e0) / e0) < 1e-3
    # Without the cap some particles step otherwise, or the cap tested nothing here.
    plain = grove.Simulation(snap, engine="tree-cpu", eps=0.05, timestep="block", dt_max=0.004, eta=0.02,
                             eta_dyn=0)
    plain.evolve(0.008)
    assert not np.array_equal(plain.positions, mine.positions)
    for bad in [dict(timestep="blocks", dt_max=0.004), dict(timestep="block", dt=0.01),
                dict(dt=0.01, eta_dyn=0.2), dict(timestep="block", dt_max=0.004, eta_dyn=-1)]:
        with pytest.raises(ValueError):
            grove.Simulation(snap, engine="tree-cpu", eps=0.05, **bad)


def test_hermite_simulation_conserves_energy():
    p = grove.ic.plummer(500, seed=2)
    sim = grove.Simulation(p, integrator="hermite", engine="direct-cpu", eps=1 / 256, dt_max=1 / 64, eta=0.01)
    e0 = sim.energy()
    sim.evolve(0.125)
    assert sim.time == 0.125
    assert abs((sim.energy() - e0) / e0) < 1e-6
    with pytest.raises(RuntimeError, match="runs on direct"):
        grove.Simulation(p, integrator="hermite", engine="tree-cpu", dt_max=1 / 64)


def test_simulations_are_safe_across_threads_and_signals(plummer, tmp_path):
    import os, pathlib, signal, threading
    path, snap = plummer
    # Two threads evolving one Simulation, a third reading it: one evolve at a time, the same end.
    alone = grove.Simulation(snap, engine="tree-cpu", eps=0.01, dt=0.01)
    alone.evolve(0.2)
    shared = grove.Simulation(snap, engine="tree-cpu", eps=0.01, dt=0.01)
    errors = []

    def run(target):
        try:
            target()
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=run, args=(lambda: shared.evolve(0.2),)) for _ in range(2)]
    threads.append(threading.Thread(target=run, args=(lambda: [shared.positions for _ in range(20)],)))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert shared.time == pytest.approx(0.2)
    assert np.array_equal(shared.positions, alone.positions)
    # Ctrl-C stops evolve after the step in which it arrived, with that step's particles.
    long_run = grove.Simulation(snap, engine="tree-cpu", eps=0.01, dt=0.01)
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        long_run.evolve(1e4)
    timer.join()
    steps = long_run.time / 0.01
    assert 0 < steps < 1e6 and steps == pytest.approx(round(steps))
    # Values no run can reach are refused at once instead of running forever or doing nothing.
    with pytest.raises(ValueError, match="finite"):
        long_run.evolve(float("inf"))
    with pytest.raises(ValueError, match="finite power of two"):
        grove.Simulation(snap, integrator="hermite", engine="direct-cpu", dt_max=float("inf"))
    # Paths as str or pathlib.Path.
    out = pathlib.Path(tmp_path) / "p.hdf5"
    grove.write(out, snap)
    assert np.array_equal(grove.read(out).positions, snap.positions)
    long_run.write(pathlib.Path(tmp_path) / "q.hdf5")
    assert grove.read(str(pathlib.Path(tmp_path) / "q.hdf5")).positions.shape == snap.positions.shape


def test_work_that_cannot_fit_is_refused_before_it_starts(plummer):
    path, snap = plummer
    with pytest.raises(MemoryError, match="largest N that fits"):
        grove.ic.plummer(10**12)
    with pytest.raises(MemoryError, match="largest N that fits"):
        grove.ic.galaxy(10**12)


def test_other_formats_read_and_convert(plummer, tmp_path):
    path, snap = plummer
    for fmt, name in (("tipsy", "p.tipsy"), ("gadget1", "p.g1"), ("gadget2", "p.g2")):
        out = tmp_path / name
        grove.convert(path, out, format=fmt)
        back = grove.read(out, units="nbody")
        assert len(back.masses) == len(snap.masses)
        order = np.argsort(back.ids)
        assert np.allclose(back.positions[order], snap.positions[np.argsort(snap.ids)], rtol=1e-6, atol=1e-6)
        assert back.header["G"] == 1.0
    with pytest.raises(ValueError, match="tipsy"):
        grove.convert(path, tmp_path / "x", format="fits")
    with pytest.raises(ValueError, match="units"):
        grove.read(path, units="furlongs")



def test_softening_by_type_in_every_entry_point(tmp_path):
    snap = grove.ic.galaxy(3000, seed=3)
    types = snap.types
    assert set(np.unique(types)) == {1, 2, 3}
    lengths = {"halo": 0.2, 2: 0.05, "bulge": 0.02}
    path = tmp_path / "galaxy.hdf5"
    grove.write(str(path), snap)
    out = tmp_path / "forces.hdf5"
    run_grove("forces", path, "--engine", "direct-cpu", "--eps-type", "halo=0.2,2=0.05,bulge=0.02", "-o", out)
    G = snap.header["G"]
    acc, pot = grove.forces(snap.positions, snap.masses, engine="direct-cpu", G=G, eps_type=lengths, types=types)
    cli = grove.read(str(out))
    mine, theirs = np.argsort(snap.ids), np.argsort(cli.ids)  # the file holds the types one after another
    assert np.allclose(acc[mine], cli.accelerations[theirs], rtol=1e-12, atol=0)
    # The pair rule by hand for one particle.
    i = 5
    eps = np.array([0, 0.2, 0.05, 0.02, 0, 0])[types]
    d = snap.positions - snap.positions[i]
    r2 = (d * d).sum(axis=1) + (eps[i] ** 2 + eps ** 2) / 2
    r2[i] = np.inf
    by_hand = G * (snap.masses[:, None] * d / r2[:, None] ** 1.5).sum(axis=0)
    assert np.allclose(acc[i], by_hand, rtol=1e-10)
    with pytest.raises(ValueError, match="give types"):
        grove.forces(snap.positions, snap.masses, engine="direct-cpu", eps_type=lengths)
    with pytest.raises(ValueError, match="unknown particle type 'dust'"):
        grove.forces(snap.positions, snap.masses, engine="direct-cpu", eps_type="dust=1", types=types)
    with pytest.raises(ValueError, match="types"):
        grove.forces(snap.positions, snap.masses, engine="direct-cpu", eps_type=lengths, types=types[:10])
    table = grove.accuracy(snap, [0.5], engine="tree-cpu", eps_type=lengths, sample=300)
    assert table["all"][0, 0] < 1e-2 and "bulge" in table
    sim = grove.Simulation(snap, engine="tree-cpu", dt=1e-4, eps_type="halo=0.2,disk=0.05,bulge=0.02")
    e0 = sim.energy()
    sim.evolve(1e-3)
    assert abs((sim.energy() - e0) / e0) < 1e-3
