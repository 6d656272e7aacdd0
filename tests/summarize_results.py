#!/usr/bin/env python3
"""Prints 'N passed, N failed' over every test case of the last `bazel test`.

Reads the JUnit XML that Bazel keeps per test target (gtest writes one case per
TEST; a target that died before writing its own XML counts as one failure).
Usage: summarize_results.py TESTLOGS_DIR BAZEL_EXIT_CODE
"""
import os
import sys
import xml.etree.ElementTree as ElementTree


def count(testlogs):
    passed = failed = 0
    skipped = []
    for root, _, files in os.walk(testlogs):
        if "test.xml" not in files:
            continue
        try:
            tree = ElementTree.parse(os.path.join(root, "test.xml"))
        except ElementTree.ParseError:
            failed += 1
            continue
        cases = list(tree.iter("testcase"))
        for case in cases:
            if case.find("failure") is not None or case.find("error") is not None:
                failed += 1
            elif case.get("status", "run") == "run" and case.find("skipped") is None:
                passed += 1
            else:
                skipped.append(f"{case.get('classname')}.{case.get('name')}")
    return passed, failed, skipped


def main():
    testlogs, bazel_rc = sys.argv[1], int(sys.argv[2])
    passed, failed, skipped = count(testlogs) if testlogs else (0, 0, [])
    # Skipped cases (a GPU test on a host without one) are neither passed
    # nor failed; name them so that nobody reads them as passing.
    if skipped:
        print(f"{len(skipped)} skipped: {', '.join(sorted(skipped))}")
    # A build failure or a crashed target has no failing case of its own.
    if bazel_rc != 0 and failed == 0:
        failed = 1
    print(f"{passed} passed, {failed} failed")
    return 0 if bazel_rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
