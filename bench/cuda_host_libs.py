#!/usr/bin/env python3
"""The shared libraries a set of binaries needs on another Linux host.

    cuda_host_libs.py DEST_DIR HOST_PROVIDED_REGEX BINARY...

Copies into DEST_DIR every library of the binaries' closure (as ldd resolves
it here) except those whose name matches HOST_PROVIDED_REGEX (glibc,
libstdc++, the CUDA libraries: the host's own are used).

A library that a binary or library names (DT_NEEDED) but takes no symbol
from, directly or through anything it needs, is replaced by an empty library
of the same soname: Debian's libtorch_cpu names OpenCV, FFmpeg, ZeroMQ,
LevelDB, LMDB and OpenCL, takes nothing from them, and they pull in some 280
MB more (GDAL, Qt, codecs). The loader is satisfied by the soname; nothing
can call into an empty library, since no loaded object refers to any symbol
of the real one. A library is kept when any kept object refers to a symbol it
defines (whatever library that reference is meant for) or names it in its
version needs, or when it needs nothing that is not kept already (the real
one costs no more than an empty one).

Prints one line per library: "copy NAME SIZE" or "empty NAME (SIZE of the
real one, and what it pulled in, not needed)".
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile


def run(*argv):
    return subprocess.run(argv, check=True, capture_output=True, text=True).stdout


def ldd_paths(files):
    paths = {}
    missing = []
    for line in run("ldd", *files).splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1] == "=>":
            if parts[2] == "not":
                missing.append(parts[0])
            else:
                paths[parts[0]] = parts[2]
    return paths, missing


def needed(path):
    return re.findall(r"\(NEEDED\)\s+Shared library: \[(.*)\]", run("readelf", "-d", path))


def version_files(path):
    return set(re.findall(r"File: (\S+)", run("readelf", "-V", "-W", path)))


def symbols(path, which):
    """Dynamic symbol names (no version), `which`: --defined-only or --undefined-only."""
    out = run("nm", "-D", which, path)
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if not parts:
            continue
        name = parts[-1].split("@")[0]
        if which == "--defined-only" and len(parts) >= 2 and parts[-2] in ("w", "v", "U"):
            continue
        names.add(name)
    return names


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    dest, host_re, roots = sys.argv[1], re.compile(sys.argv[2]), sys.argv[3:]
    paths, missing = ldd_paths(roots)
    if missing:
        sys.exit("not found here: " + ", ".join(sorted(set(missing))))
    libs = {n: p for n, p in paths.items() if not host_re.match(n)}

    undefined = {p: symbols(p, "--undefined-only") for p in roots + list(libs.values())}
    defined = {n: symbols(p, "--defined-only") for n, p in libs.items()}

    # Kept: the roots, and every library that a kept object takes a symbol
    # from or names in its version needs; to a fixed point.
    kept_objects = list(roots)
    kept = set()
    refs = set()
    vfiles = set()
    for p in roots:
        refs |= undefined[p]
        vfiles |= version_files(p)
    changed = True
    while changed:
        changed = False
        for n, p in libs.items():
            if n in kept:
                continue
            if defined[n] & refs or n in vfiles:
                kept.add(n)
                kept_objects.append(p)
                refs |= undefined[p]
                vfiles |= version_files(p)
                changed = True

    # Empty stand-ins for what kept objects name but need nothing from.
    named = set()
    for p in kept_objects:
        named.update(n for n in needed(p) if not host_re.match(n))
    # One whose own closure is all kept (or the host's) costs nothing more:
    # the real one is copied.
    def closure(n, seen):
        for m in needed(libs[n]):
            if not host_re.match(m) and m not in seen:
                seen.add(m)
                closure(m, seen)
        return seen

    for n in sorted(named - kept):
        if closure(n, set()) <= kept:
            kept.add(n)
    empty = sorted(named - kept)

    os.makedirs(dest, exist_ok=True)
    for n in sorted(kept):
        shutil.copyfile(libs[n], os.path.join(dest, n))
        print(f"copy {n} {os.path.getsize(libs[n])}")
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "empty.c")
        with open(src, "w") as f:
            f.write("/* stands in for a library nothing takes a symbol from */\n")
        for n in empty:
            subprocess.run(["cc", "-shared", "-nostdlib", "-Wl,-soname," + n, "-o",
                            os.path.join(dest, n), src], check=True)
            print(f"empty {n} ({os.path.getsize(libs[n])} bytes real)")
    dropped = sorted(set(libs) - kept - set(empty))
    print(f"# not needed at all: {len(dropped)} libraries: {' '.join(dropped)}")


if __name__ == "__main__":
    main()
