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


# Where the house rules hold: no function over 60 lines, no class over 15
# data members (docs/architecture.md, "House rules").
HOUSE_RULE_PACKAGES = ["tools/apply", "tools/agent"]
MAX_FUNCTION_LINES = 60
MAX_DATA_MEMBERS = 15


def long_functions(path):
    """Functions defined at column 0 whose body runs over the limit."""
    lines = open(path).read().split("\n")
    found, start = [], None
    for i, line in enumerate(lines):
        if start is None:
            if (re.match(r"^[A-Za-z].*\(", line) and not line.rstrip().endswith(";")
                    and not re.match(r"^(namespace|using|#|class|struct|enum|inline constexpr|constexpr|ABSL_FLAG|TEST)", line)):
                start = i
        elif line == "}":
            if i - start + 1 > MAX_FUNCTION_LINES:
                found.append(f"{path}:{start + 1}: a function of {i - start + 1} lines")
            start = None
        elif line.startswith("}"):
            start = None
    return found


def crowded_classes(path):
    """Classes and structs declaring more data members (name ending in _)."""
    text = open(path).read()
    found = []
    for m in re.finditer(r"^( *)(class|struct) (\w+)[^;{]*\{", text, re.M):
        indent = m.group(1)
        end = text.find("\n" + indent + "};", m.end())
        members = 0
        for line in text[m.end():end].split("\n"):
            # A declaration at the class's own depth: a type, then the name.
            if re.match(r"^" + indent + r"  [A-Za-z_][\w:<>,\*& ]*[ \*&]\w+_"
                        r"( ABSL_GUARDED_BY\([^)]*\))?( =[^;]*| \{[^;]*\})?;", line):
                members += 1
        if members > MAX_DATA_MEMBERS:
            found.append(f"{path}: {m.group(3)} holds {members} data members")
    return found


def house_rules(root):
    problems = []
    for package in HOUSE_RULE_PACKAGES:
        folder = os.path.join(root, package)
        for name in sorted(os.listdir(folder)):
            if name.endswith("_test.cc") or not name.endswith((".cc", ".h")):
                continue
            path = os.path.join(folder, name)
            shown = os.path.join(package, name)
            problems += [p.replace(path, shown) for p in long_functions(path) + crowded_classes(path)]
    return problems


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
    problems += house_rules(root)
    for problem in problems:
        print(problem)
    print(f"{len(rows)} packages checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
