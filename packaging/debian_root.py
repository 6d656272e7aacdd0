#!/usr/bin/env python3
"""Makes a Debian root filesystem from this machine's installed packages.

    debian_root.py ROOT PACKAGE...

ROOT gets the base system (the Essential and Priority: required packages,
what a debian:12 image holds), the PACKAGEs (each may be "a | b": the first
one installed) and every package those depend on, as this machine has them
installed: their files (dpkg -L), their dpkg records (status, info, the
alternatives links that point into them, triggers, diversions) and nothing
else. So a package installed into it with `dpkg -i` finds exactly the
dependencies a clean system would have after apt installed them, and a
library no installed package ships is missing there.

No registry is reachable from the test bed and most of the base system
came with the machine, not as a .deb in /var/cache/apt/archives, so the
files are copied from / rather than unpacked from archives. Prints the
packages, one a line.
"""

import os
import subprocess
import sys

DPKG = "/var/lib/dpkg"


def installed_packages():
    """name -> (dependency text, priority, essential), and virtual -> names."""
    fields = "${Package}\t${db:Status-Abbrev}\t${Pre-Depends}, ${Depends}\t${Provides}\t${Priority}\t${Essential}\n"
    out = subprocess.run(["dpkg-query", "-W", "-f", fields], check=True,
                         capture_output=True, text=True).stdout
    packages, provided = {}, {}
    for line in out.splitlines():
        name, status, depends, provides, priority, essential = line.split("\t")
        if not status.startswith("ii"):
            continue
        packages[name] = (depends, priority, essential)
        for virtual in provides.split(","):
            virtual = virtual.strip().split(" ")[0]
            if virtual:
                provided.setdefault(virtual, []).append(name)
    return packages, provided


def resolve(alternatives, packages, provided):
    """The first installed package of "a (>= 1) | b:any | c", or None."""
    for alternative in alternatives.split("|"):
        name = alternative.strip().split(" ")[0].split(":")[0]
        if name in packages:
            return name
        if name in provided:
            return sorted(provided[name])[0]
    return None


def closure(wanted, packages, provided):
    missing = [w for w in wanted if resolve(w, packages, provided) is None]
    if missing:
        sys.exit(f"debian_root: not installed here: {', '.join(missing)}")
    todo = [resolve(w, packages, provided) for w in wanted]
    todo += [n for n, (_, priority, essential) in packages.items()
             if priority == "required" or essential == "yes"]
    seen = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for dependency in packages[name][0].split(","):
            if dependency.strip():
                found = resolve(dependency, packages, provided)
                if found:
                    todo.append(found)
    return sorted(seen)


def real_path(path):
    """`path` with its folders resolved: /bin/sh is /usr/bin/sh on merged /usr."""
    return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))


def package_files(names):
    out = subprocess.run(["dpkg-query", "-L", *names], check=True,
                         capture_output=True, text=True).stdout
    # Lines that are not paths say where a file is diverted.
    paths = {real_path(line) for line in out.splitlines() if line.startswith("/")}
    return {p for p in paths if os.path.lexists(p)}


def alternatives_links(files):
    """The alternatives' links whose chosen target is among `files`."""
    links = set()
    folder = os.path.join(DPKG, "alternatives")
    for name in os.listdir(folder):
        with open(os.path.join(folder, name)) as f:
            lines = f.read().split("\n")
        pairs = [(name, lines[1])]  # the master link, then the slaves
        i = 2
        while i + 1 < len(lines) and lines[i]:
            pairs.append((lines[i], lines[i + 1]))
            i += 2
        for alternative, link in pairs:
            chosen = os.path.join("/etc/alternatives", alternative)
            if os.path.islink(chosen) and real_path(os.readlink(chosen)) in files:
                links |= {chosen, real_path(link)}
                links.add(os.path.join(folder, name))
    return {l for l in links if os.path.lexists(l)}


def copy_tree(paths, root):
    """Copies `paths` (no recursion), keeping modes, owners and links."""
    listing = "\0".join(sorted(p.lstrip("/") or "." for p in paths)).encode()
    pack = subprocess.Popen(["tar", "-C", "/", "--no-recursion", "--null", "-T", "-", "-cf", "-"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    unpack = subprocess.Popen(["tar", "-C", root, "--keep-directory-symlink", "-xpf", "-"],
                              stdin=pack.stdout)
    pack.stdout.close()
    pack.stdin.write(listing)
    pack.stdin.close()
    if pack.wait() != 0 or unpack.wait() != 0:
        sys.exit("debian_root: copying the packages' files failed")


def write_dpkg_database(root, names):
    database = root + DPKG
    for folder in ("info", "updates", "triggers", "alternatives"):
        os.makedirs(os.path.join(database, folder), exist_ok=True)
    status = subprocess.run(["dpkg-query", "-s", *names], check=True,
                            capture_output=True, text=True).stdout
    with open(os.path.join(database, "status"), "w") as f:
        f.write(status)
    chosen = set(names)
    info = os.path.join(DPKG, "info")
    for entry in os.listdir(info):
        owner = entry.rsplit(".", 1)[0].split(":")[0]
        if owner in chosen or entry == "format":  # format: the database's layout
            with open(os.path.join(info, entry), "rb") as src, \
                 open(os.path.join(database, "info", entry), "wb") as dst:
                dst.write(src.read())
            os.chmod(os.path.join(database, "info", entry), os.stat(os.path.join(info, entry)).st_mode)
    # Triggers the chosen packages are interested in: "PATH-OR-NAME PACKAGE".
    interests = os.path.join(DPKG, "triggers", "File")
    kept = []
    if os.path.exists(interests):
        with open(interests) as f:
            kept = [l for l in f if l.split()[-1].split(":")[0] in chosen]
    with open(os.path.join(database, "triggers", "File"), "w") as f:
        f.writelines(kept)
    open(os.path.join(database, "triggers", "Unincorp"), "w").close()
    # Diversions: three lines each (file, diverted to, by package).
    diverted = []
    if os.path.exists(os.path.join(DPKG, "diversions")):
        with open(os.path.join(DPKG, "diversions")) as f:
            lines = f.read().splitlines()
        for i in range(0, len(lines) - 2, 3):
            if lines[i + 2] in chosen or lines[i + 2] == ":":
                diverted += lines[i:i + 3]
    with open(os.path.join(database, "diversions"), "w") as f:
        f.write("".join(l + "\n" for l in diverted))
    for empty in ("available", "statoverride"):
        open(os.path.join(database, empty), "w").close()
    if os.path.exists(os.path.join(DPKG, "arch")):
        with open(os.path.join(DPKG, "arch")) as src, open(os.path.join(database, "arch"), "w") as dst:
            dst.write(src.read())


def write_system_files(root):
    """What a fresh system has that no package ships: users, /tmp, links."""
    for name in os.listdir("/"):
        if os.path.islink("/" + name) and os.readlink("/" + name).startswith("usr/"):
            os.symlink(os.readlink("/" + name), os.path.join(root, name))  # merged /usr
    for folder, mode in (("tmp", 0o1777), ("var/tmp", 0o1777), ("var/log", 0o755), ("root", 0o700),
                         ("etc", 0o755), ("proc", 0o755), ("sys", 0o755), ("dev", 0o755), ("run", 0o755)):
        os.makedirs(os.path.join(root, folder), exist_ok=True)
        os.chmod(os.path.join(root, folder), mode)


def write_users(root):
    # base-passwd's postinst makes these from its masters on a new system.
    for name in ("passwd", "group"):
        with open(f"/usr/share/base-passwd/{name}.master") as src, \
             open(os.path.join(root, "etc", name), "w") as dst:
            dst.write(src.read())


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root, wanted = sys.argv[1], sys.argv[2:]
    packages, provided = installed_packages()
    names = closure(wanted, packages, provided)
    os.makedirs(root, exist_ok=True)
    os.chmod(root, 0o755)
    write_system_files(root)
    files = package_files(names)
    copy_tree(files | alternatives_links(files), root)
    write_dpkg_database(root, names)
    write_users(root)
    print("\n".join(names))


if __name__ == "__main__":
    main()
