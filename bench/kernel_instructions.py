#!/usr/bin/python3
"""Instructions per interaction of the direct-summation, Hermite and tree list kernels, in their PTX.

Compiles gpu/direct.cu, gpu/hermite.cu and gpu/evaluate.cu to PTX for sm_90 with the build's include folders,
finds in each kernel the innermost loop that computes an inverse square root (one per
interaction), and divides its instructions, by pipe, by the number of inverse square roots in it.
Prints one row per kernel and the rate limit those counts imply on an H100 SXM (132 SMs,
1.98 GHz): per SM and clock the FP32 pipes take 128 lanes, the FP64 pipes 64, the special-function
units 16, conversions from and to 64-bit types 16 (the CUDA C++ Programming Guide's throughput
table for compute capability 9.0), and the four schedulers issue 128 lanes of instructions of any
kind; the tightest of the five bounds is the limit. PTX is what ptxas starts from: its arithmetic
maps one to one onto SASS except for double-precision reciprocal roots, and loops with branches
(the guarded variants) count their rarely taken blocks too, so those rows are upper counts. The
double kernels therefore write their reciprocal root out (rsqrt_fast in src/core/host_device.hpp:
a hardware estimate and one FP64 refinement) instead of calling the emulated rsqrt.approx.f64.
Moves of immediates and negations are not counted: SASS takes both as operands.

Usage: bench/kernel_instructions.py [BUILD_DIR] [--nvcc NVCC] [--check HEADER]
BUILD_DIR defaults to build; needs nvcc. --check compares the counts with the table in HEADER
(gpu/kernel_costs.hpp, which grove bench direct|hermite prints the limits from) and exits 1
naming every row that differs from the counts rounded to 0.1, or that no kernel matches.
"""
import collections
import os
import re
import subprocess
import sys
import tempfile

SMS, CLOCK_GHZ = 132, 1.98
LANES = {"fp32": 128, "fp64": 64, "mufu": 16, "conv64": 16}
PIPES = ("fp32", "fp64", "mufu", "conv64", "other")


def kernels(ptx):
    for part in re.split(r"\n(?=\.(?:visible \.)?entry )", ptx):
        m = re.match(r"\.(?:visible \.)?entry (\S+)\(", part)
        if m:
            yield m.group(1), part


def basic_blocks(body):
    blocks, label = [], "entry"
    current = []
    for line in body.split("\n"):
        s = line.strip()
        m = re.match(r"^(\$L__BB\S+):", s)
        if m:
            blocks.append((label, current))
            label, current = m.group(1), []
            continue
        if not s or s.startswith(("//", ".", "{", "}", ")")):
            continue
        if re.match(r"mov\.b32\s+%[fr]\d+, %[fr]\d+;", s):
            continue  # a register renamed between types (an accumulator kept in a struct): no SASS
        if re.match(r"mov\.f(?:32|64)\s+%fd?\d+, 0[dDfF][0-9A-Fa-f]+;", s) or re.match(r"neg\.f(?:32|64)\s", s):
            continue  # an immediate or a negation: SASS folds both into the instruction that uses them
        current.append(s)
    blocks.append((label, current))
    return blocks


def pipe(instruction):
    op = instruction.split()[1] if instruction.startswith("@") else instruction.split()[0]
    if op.startswith(("ld.", "st.")):
        return "other"  # a load or store of floats takes an issue slot, not an arithmetic pipe
    if op.startswith(("rsqrt", "sqrt", "rcp", "ex2", "lg2", "sin", "cos")):
        return "mufu"
    if op.startswith("cvt") and "f64" in op:
        return "conv64"
    if "f64" in op:
        return "fp64"
    if "f32" in op:
        return "fp32"
    return "other"


def innermost_loop(blocks):
    """The hot loop: of the innermost loops (label ... backward branch to it, holding no other
    loop) that compute an rsqrt, the one with the most per iteration, i.e. the most unrolled (the
    kernels unroll their common path and leave rare ones, like the tile holding a target's own
    index, rolled), and of those the shortest (the tree's leaf kernel has the same loop with and
    without the test for a target's own index). Returns (instructions, rsqrts, blocks)."""
    index = {label: i for i, (label, _) in enumerate(blocks)}
    loops = []
    for i, (_, body) in enumerate(blocks):
        for s in body:
            m = re.search(r"\bbra(?:\.uni)?\s+(\$L__BB\S+);", s)
            if m and m.group(1) in index and index[m.group(1)] <= i:
                loops.append((index[m.group(1)], i))
    best = None
    for start, end in loops:
        if any(start <= a and b <= end and (a, b) != (start, end) for a, b in loops):
            continue  # not innermost
        loop = [s for _, b in blocks[start:end + 1] for s in b]
        roots = sum("rsqrt" in s for s in loop)
        if roots and (best is None or roots > best[1] or (roots == best[1] and len(loop) < len(best[0]))):
            best = (loop, roots, end - start + 1)
    return best


def count_all(build, root, nvcc):
    """Yields (mangled kernel name, loop blocks, per-interaction counts by pipe)."""
    includes = [f"-I{build}/include/{d}" for d in ("gpu", "tree", "core")] + ["-isystem=/usr/include/eigen3"]
    with tempfile.TemporaryDirectory() as tmp:
        for source in ("direct", "hermite", "evaluate"):
            ptx_path = os.path.join(tmp, source + ".ptx")
            subprocess.run([nvcc, "-O3", "-DNDEBUG", "-arch=sm_90", "-std=c++17", "--expt-relaxed-constexpr",
                            "-Xcompiler=-fopenmp", *includes, "-ptx", os.path.join(root, "gpu", source + ".cu"),
                            "-o", ptx_path], check=True, stderr=subprocess.DEVNULL)
            for name, body in kernels(open(ptx_path).read()):
                found = innermost_loop(basic_blocks(body))
                if found:
                    loop, roots, nblocks = found
                    count = collections.Counter(pipe(s) for s in loop)
                    yield name, nblocks, {k: count[k] / roots for k in PIPES}


def check(rows, header):
    number = r",\s*([\d.]+)"
    table = re.findall(r'\{\s*"([^"]+)",\s*"([^"]+)"' + number * len(PIPES) + r"\s*\}", open(header).read())
    if not table:
        print(f"{header}: no rows found")
        return 1
    failed = 0
    for label, key, *numbers in table:
        matches = [per for name, _, per in rows if key in name]
        if len(matches) != 1:
            print(f"{label}: {len(matches)} kernels match '{key}'")
            failed += 1
            continue
        counted = [matches[0][k] for k in PIPES]
        if any(abs(float(n) - round(c, 1)) > 1e-9 for n, c in zip(numbers, counted)):
            print(f"{label}: {header} says {', '.join(numbers)}; the PTX has "
                  f"{', '.join(f'{c:.1f}' for c in counted)} ({', '.join(PIPES)})")
            failed += 1
    print(f"{len(table) - failed} of {len(table)} kernels as {header} says")
    return 1 if failed else 0


def main():
    args = sys.argv[1:]
    options = {"--check": None, "--nvcc": "nvcc"}
    for option in options:
        if option in args:
            i = args.index(option)
            options[option] = args[i + 1]
            del args[i:i + 2]
    header = options["--check"]
    build = args[0] if args else "build"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    rows = list(count_all(build, root, options["--nvcc"]))
    if header:
        return check(rows, header)
    print(f"PTX instructions per interaction (sm_90; limits for {SMS} SMs at {CLOCK_GHZ} GHz)\n")
    print("| kernel | loop blocks | FP32 | FP64 | MUFU | 64-bit conversions | other | all | limit (interactions/s) "
          "| bound by |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, nblocks, per in rows:
        total = sum(per.values())
        bounds = {k: per[k] / LANES[k] for k in LANES if per[k] > 0}
        bounds["issue"] = total / 128
        bound = max(bounds, key=bounds.get)
        limit = SMS * CLOCK_GHZ * 1e9 / bounds[bound]
        short = re.sub(r"^_ZN5grove(?:3gpu)?\d+_GLOBAL__N__\w+?_cu_[0-9a-f]{8}\d+", "", name)[:48]
        print(f"| {short} | {nblocks} | {per['fp32']:.1f} | {per['fp64']:.1f} | {per['mufu']:.1f} | "
              f"{per['conv64']:.1f} | {per['other']:.1f} | {total:.1f} | {limit:.3g} | {bound} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
