"""Keeps docs/architecture.md's package table true: every package the table
lists names, in its "depends on" column, each fleetplan package its BUILD
file's libraries and binaries depend on (tests and test-only targets aside),
and names no fleetplan package they do not; and that no transport depends on
another.

Reads the BUILD files of the source tree this test's data comes from."""

import os
import re
import sys

# The table's short names for fleetplan's packages.
def short_name(package):
    if package.startswith("tools/"):
        return package[len("tools/"):]
    return package


def expand(name):
    # plugins/{local,ssh} -> plugins/local, plugins/ssh
    m = re.match(r"^(.*)\{([^}]*)\}(.*)$", name)
    if not m:
        return [name]
    return [m.group(1) + part + m.group(3) for part in m.group(2).split(",")]


def table_rows(doc):
    rows = {}
    section = doc[doc.index("## Packages"):]
    for line in section.splitlines()[3:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        for name in re.findall(r"`([^`]+)`", cells[0]):
            for package in expand(name):
                rows[package] = cells[2]
    return rows


def build_deps(root, package):
    """The fleetplan packages the non-test targets of `package` depend on."""
    text = open(os.path.join(root, package, "BUILD")).read()
    deps = set()
    # Each rule call: name(...) at the start of a line, to the next one.
    for rule in re.split(r"\n(?=[a-z_]+\()", text):
        kind = rule.split("(", 1)[0].strip()
        if kind.endswith("_test") or "testonly = True" in rule or "fuzz" in kind:
            continue
        for block in re.findall(r"\bdeps = \[(.*?)\]", rule, re.S):
            for label in re.findall(r'"//([a-z_/]+)[:"]', block):
                if label != package:
                    deps.add(label)
    return deps


def main():
    doc_path = os.path.realpath(
        os.path.join(os.environ["TEST_SRCDIR"], "fleetplan", "docs", "architecture.md"))
    root = os.path.dirname(os.path.dirname(doc_path))
    rows = table_rows(open(doc_path).read())
    known = set(rows)
    problems = []
    for package, said in sorted(rows.items()):
        if not os.path.exists(os.path.join(root, package, "BUILD")):
            problems.append(f"{package}: the table lists it, but it has no BUILD file")
            continue
        words = set(re.findall(r"[a-z_]+(?:/[a-z_]+)?", said))
        actual = {short_name(d) for d in build_deps(root, package) if d in known}
        for dep in sorted(actual - words):
            problems.append(f"{package}: depends on {dep}, which the table does not say")
        listed = {short_name(p) for p in known} & words
        for dep in sorted(listed - actual - {short_name(package)}):
            problems.append(f"{package}: the table says it depends on {dep}; its BUILD does not")
        # A transport never depends on another; what they share is in
        # plugins/common.
        if package.startswith("plugins/"):
            for dep in sorted(actual):
                if dep.startswith("plugins/") and dep != "plugins/common":
                    problems.append(f"{package}: depends on another transport, {dep}")
    for problem in problems:
        print(problem)
    print(f"{len(rows)} packages checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
