"""clang_fuzzer: a libFuzzer binary built with clang, beside the gcc build.

Why not Bazel's C++ rules: the auto-configured toolchain is gcc, and
switching it to clang (`--repo_env=CC=clang`) reconfigures @local_config_cc
for every target, rebuilding the whole tree and flipping the cache each time
one goes between the normal and the fuzzing build. Instead this rule reads
what the cc_library deps already declare (sources, headers, defines and link
flags through CcInfo) and compiles those sources once more with clang's
`-fsanitize=fuzzer,address,undefined`, in an aspect's actions, so that a
library shared by several fuzz targets is compiled once. The gcc build is
untouched; clang-14 and libclang-rt-14-dev (tools/install-deps.sh
--test-beds) provide the compiler and the libFuzzer runtime.
System libraries (Abseil, RE2) are linked as built by Debian, not
instrumented.
"""

_CLANG = "/usr/bin/clang++-14"
_SANITIZERS = "address,undefined"

_FuzzObjectsInfo = provider(
    doc = "The objects of a target and of everything it depends on, " +
          "compiled for fuzzing.",
    fields = {"objects": "depset of .o Files"},
)

def _compile(ctx, src, context):
    obj = ctx.actions.declare_file("%s.fuzz_objs/%s.o" % (ctx.label.name, src.short_path))
    args = ctx.actions.args()
    args.add_all([
        "-std=c++17",
        "-O1",
        "-g",
        "-fno-omit-frame-pointer",
        "-fsanitize=fuzzer-no-link," + _SANITIZERS,
        "-fno-sanitize-recover=all",
        "-iquote",
        ".",
        "-iquote",
        ctx.bin_dir.path,
    ])
    args.add_all(context.defines, format_each = "-D%s")
    args.add_all(context.includes, before_each = "-I")
    args.add_all(context.quote_includes, before_each = "-iquote")
    args.add_all(context.system_includes, before_each = "-isystem")
    args.add_all(["-c", src.path, "-o", obj.path])
    ctx.actions.run(
        executable = _CLANG,
        arguments = [args],
        inputs = depset([src], transitive = [context.headers]),
        outputs = [obj],
        mnemonic = "ClangFuzzCompile",
        progress_message = "Compiling %s for fuzzing" % src.short_path,
    )
    return obj

# Each library is compiled for fuzzing once, in the aspect on it, however
# many fuzz targets link it.
def _fuzz_objects_aspect_impl(target, ctx):
    own = []
    if CcInfo in target:
        context = target[CcInfo].compilation_context
        own = [
            _compile(ctx, f, context)
            for f in getattr(ctx.rule.files, "srcs", [])
            if f.extension in ["cc", "cpp"]
        ]
    transitive = [
        dep[_FuzzObjectsInfo].objects
        for dep in getattr(ctx.rule.attr, "deps", [])
        if _FuzzObjectsInfo in dep
    ]
    return [_FuzzObjectsInfo(objects = depset(own, transitive = transitive))]

_fuzz_objects_aspect = aspect(
    implementation = _fuzz_objects_aspect_impl,
    attr_aspects = ["deps"],
)

def _clang_fuzzer_impl(ctx):
    cc_info = cc_common.merge_cc_infos(cc_infos = [dep[CcInfo] for dep in ctx.attr.deps])
    own = [_compile(ctx, src, cc_info.compilation_context) for src in ctx.files.srcs]
    objects = depset(
        own,
        transitive = [dep[_FuzzObjectsInfo].objects for dep in ctx.attr.deps],
    ).to_list()
    link_flags = []
    for linker_input in cc_info.linking_context.linker_inputs.to_list():
        link_flags.extend(linker_input.user_link_flags)
    binary = ctx.actions.declare_file(ctx.label.name)
    args = ctx.actions.args()
    args.add_all(["-fsanitize=fuzzer," + _SANITIZERS, "-o", binary.path])
    args.add_all(objects)
    args.add_all(link_flags)
    ctx.actions.run(
        executable = _CLANG,
        arguments = [args],
        inputs = objects,
        outputs = [binary],
        mnemonic = "ClangFuzzLink",
        progress_message = "Linking %s" % binary.short_path,
    )
    return [DefaultInfo(files = depset([binary]), executable = binary)]

clang_fuzzer = rule(
    implementation = _clang_fuzzer_impl,
    doc = "A libFuzzer binary: `srcs` (defining LLVMFuzzerTestOneInput) and " +
          "every source of the cc_library `deps`, compiled with clang and " +
          "-fsanitize=fuzzer,address,undefined.",
    attrs = {
        "srcs": attr.label_list(allow_files = [".cc"]),
        "deps": attr.label_list(providers = [CcInfo], aspects = [_fuzz_objects_aspect]),
    },
    executable = True,
)
