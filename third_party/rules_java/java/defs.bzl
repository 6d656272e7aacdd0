"""Stand-in for @rules_java: Bazel 4's native Java rules, which its tools reference."""

java_binary = native.java_binary
java_import = native.java_import
java_library = native.java_library
java_runtime = native.java_runtime
java_toolchain = native.java_toolchain
