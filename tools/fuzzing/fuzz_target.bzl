"""fuzz_target: a libFuzzer binary, a target that runs it, and a short test.

    fuzz_target(
        name = "x_fuzzer",          # bazel run //pkg:x_fuzzer -- -max_total_time=600
        srcs = ["x_fuzzer.cc"],     # defines LLVMFuzzerTestOneInput
        deps = [":x"],              # cc_library targets, compiled again with clang
        dict = "x_fuzzer.dict",     # libFuzzer -dict
        seeds = ["fuzz_corpus/x"],  # folders of checked-in inputs
    )

makes `x_fuzzer_bin` (clang_fuzzer), `x_fuzzer` (run_fuzzer.sh over the
seeds; findings under /tmp/fleetplan-fuzz/) and `x_fuzzer_test`, which
fuzzes for `test_seconds` on one core in `bazel test`.
"""

load("//tools/fuzzing:fuzzer.bzl", "clang_fuzzer")

def fuzz_target(name, srcs, deps, dict, seeds, test_seconds = 5):
    binary = name + "_bin"
    clang_fuzzer(
        name = binary,
        srcs = srcs,
        deps = deps,
    )
    package = native.package_name()
    data = [dict, ":" + binary] + native.glob([seed + "/*" for seed in seeds])
    args = ["$(location :%s)" % binary, "%s/%s" % (package, dict)]
    args += ["%s/%s" % (package, seed) for seed in seeds]
    args.append("--")
    native.sh_binary(
        name = name,
        srcs = ["//tools/fuzzing:run_fuzzer.sh"],
        args = args,
        data = data,
    )
    native.sh_test(
        name = name + "_test",
        size = "small",
        srcs = ["//tools/fuzzing:run_fuzzer.sh"],
        args = args + [
            "-max_total_time=%d" % test_seconds,
            "-timeout=10",
        ],
        data = data,
        tags = ["cpu:1"],
    )
