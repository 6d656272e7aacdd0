#!/usr/bin/env bash
# The install from the checkout, used from outside it: `//:install` into a
# temporary prefix, then the installed fleetplan from a folder that is in no
# workspace: help, man pages, bash completion (subcommands, .toml operands,
# node names from the spec), plan and apply of the installed local demo,
# and the message for a program that is a Bazel label with no workspace.
set -uo pipefail

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
expect_in() {  # expect_in NEEDLE HAYSTACK WHAT
  [[ $2 == *"$1"* ]] || fail "$3: expected '$1' in: $2"
}

scratch=$(mktemp -d /tmp/fleetplan-install-test.XXXXXX)
trap 'rm -rf "$scratch"' EXIT
prefix="$scratch/prefix"
away="$scratch/away"
mkdir -p "$away"

if ! "$RUNFILES_DIR/fleetplan/packaging/install" --prefix="$prefix" >"$scratch/install.out" 2>&1
then
  echo "FAIL: install: $(cat "$scratch/install.out")" >&2
  exit 1
fi
for file in bin/fleetplan lib/fleetplan/fleetplan-agent lib/fleetplan/fleetplan-dashboard \
            lib/fleetplan/train; do
  [[ -x $prefix/$file ]] || fail "$file is not installed"
done

cd "$away" || exit 1
export PATH="$prefix/bin:$PATH"
out=$(fleetplan version) || fail "fleetplan version"
expect_in "fleetplan " "$out" "version"
out=$(fleetplan help) || fail "fleetplan help"
expect_in "  apply " "$out" "help"
out=$(fleetplan plan --help) || fail "fleetplan plan --help"
expect_in "--refresh" "$out" "plan --help"
# dashboard runs its server program from lib/fleetplan: a missing spec is
# that program's answer, not a missing program.
out=$(fleetplan dashboard no-such-spec.toml 2>&1) && fail "dashboard of a missing spec: $out"
[[ $out != *"cannot find the dashboard"* ]] || fail "fleetplan dashboard: $out"
expect_in "no-such-spec.toml" "$out" "dashboard of a missing spec"

# The man pages are the help texts.
out=$(MANPATH="$prefix/share/man" man -P cat fleetplan-apply 2>&1) || fail "man fleetplan-apply: $out"
expect_in "--accept-new-host-keys" "$out" "man fleetplan-apply"
expect_in "EXIT STATUS" "$out" "man fleetplan-apply"

demo="$prefix/share/doc/fleetplan/examples/local-demo.toml"
out=$(fleetplan plan "$demo" 2>&1) || fail "plan of the demo: $out"
expect_in "program=$prefix/lib/fleetplan/train" "$out" "plan of the demo"

# Bash completion, run as bash runs it (compopt only works inside a real
# completion, so it is a no-op here).
complete_words() {  # complete_words WORD... : what <TAB> offers for the last
  bash -c 'compopt() { :; }
    source "$1/share/bash-completion/completions/fleetplan"; shift
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _fleetplan
    printf "%s\n" "${COMPREPLY[@]}"' _ "$prefix" "$@"
}
touch a.toml b.json
mkdir -p folder
expect_in "apply" "$(complete_words fleetplan ap)" "completion of a subcommand"
expect_in "--accept-new-host-keys" "$(complete_words fleetplan apply --acc)" "completion of a flag"
out=$(complete_words fleetplan plan '')
expect_in "a.toml" "$out" "completion of a spec"
expect_in "folder" "$out" "completion of a spec"
[[ $out != *b.json* ]] || fail "plan offers b.json: $out"
expect_in "b.json" "$(complete_words fleetplan apply '')" "completion of a saved plan"
expect_in "localhost" "$(complete_words fleetplan logs "$demo" --node '')" "completion of --node"
expect_in "always" "$(complete_words fleetplan plan --color = '')" "completion of --color="

# The demo trains on the installed trainer, from here.
fleetplan apply "$demo" >"$scratch/apply.out" 2>&1 || fail "apply of the demo: $(tail -20 "$scratch/apply.out")"
expect_in '"event":"done"' "$(cat "$scratch/apply.out")" "apply of the demo"
out=$(fleetplan status "$demo" 2>&1) || fail "status of the demo: $out"
expect_in "succeeded" "$out" "status of the demo"

# A Bazel label needs a workspace, and this folder is in none.
sed 's|^program = .*|program = "//trainer:train"|' "$demo" >label.toml
out=$(fleetplan apply label.toml 2>&1)
status=$?
[[ $status == 2 ]] || fail "apply of a label outside a workspace exited $status: $out"
expect_in "is a Bazel label" "$out" "apply of a label"
expect_in "--workspace DIR" "$out" "apply of a label"

((failures == 0)) && echo "PASS"
exit $((failures > 0))
