"""Compile options for code that includes <torch/torch.h> (Debian's libtorch-dev)."""

TORCH_COPTS = [
    "-isystem",
    "/usr/include/torch/csrc/api/include",
    # LibTorch's own headers trip these.
    "-Wno-unused-variable",
    "-Wno-unused-but-set-variable",
    "-Wno-deprecated-declarations",
]
