"""The commands of `fleetplan` that act on a spec.

Each is also a binary of its own (`bazel run //tools:NAME`) and has a man
page, fleetplan-NAME(1).
"""

COMMANDS = [
    "plan",
    "apply",
    "status",
    "logs",
    "stop",
    "exec",
    "stacks",
    "top",
    "dashboard",
]
