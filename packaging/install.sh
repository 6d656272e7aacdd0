#!/usr/bin/env bash
# Installs fleetplan from this checkout:
#
#   bazel run //:install -- [--prefix=DIR] [--destdir=DIR]
#
#   PREFIX/bin/fleetplan                          the command
#   PREFIX/lib/fleetplan/fleetplan-agent, train   found by fleetplan beside itself
#   PREFIX/lib/fleetplan/fleetplan-dashboard      the dashboard's server, run by fleetplan dashboard
#   PREFIX/share/man/man1/fleetplan*.1.gz         man fleetplan, man fleetplan-apply, ...
#   PREFIX/share/bash-completion/completions/fleetplan
#   PREFIX/share/zsh/site-functions/_fleetplan    (vendor-completions for /usr)
#   PREFIX/share/doc/fleetplan/*.md.gz            the user's docs
#   PREFIX/share/doc/fleetplan/examples/local-demo.toml   the local demo, on the installed trainer
#
# --prefix: default ~/.local; a relative one is taken from where you ran
# bazel. --destdir: write under DIR/PREFIX instead, as for a package
# (//packaging:deb installs with --prefix=/usr into its staging folder).
set -euo pipefail

usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; }

prefix=""
destdir=""
while (($#)); do
  case $1 in
    --prefix=*) prefix=${1#--prefix=} ;;
    --prefix) prefix=${2:?--prefix needs a folder}; shift ;;
    --destdir=*) destdir=${1#--destdir=} ;;
    -h|--help) usage; exit 0 ;;
    *) echo "install: unknown argument $1" >&2; usage >&2; exit 2 ;;
  esac
  shift
done
absolute() {
  if [[ $1 == /* ]]; then echo "$1"; else echo "${BUILD_WORKING_DIRECTORY:-$PWD}/$1"; fi
}
if [[ -z $prefix ]]; then
  [[ -n ${HOME:-} ]] || { echo "install: no HOME; give --prefix" >&2; exit 2; }
  prefix="$HOME/.local"
fi
prefix=$(absolute "$prefix")
[[ -z $destdir ]] || destdir=$(absolute "$destdir")

# This script's runfiles: beside it under `bazel run`, else the test's.
if [[ -d "$0.runfiles/fleetplan" ]]; then
  files="$0.runfiles/fleetplan"
elif [[ -n ${RUNFILES_DIR:-${TEST_SRCDIR:-}} ]]; then
  files="${RUNFILES_DIR:-$TEST_SRCDIR}/fleetplan"
else
  echo "install: run me with \`bazel run //:install\`" >&2
  exit 2
fi

root="$destdir$prefix"
put() {  # put MODE SOURCE DEST
  install -D -m "$1" "$files/$2" "$root/$3"
}
# As Debian packages them (policy 12.3): man pages and docs gzipped, without
# a name or time in the header, so the same files give the same bytes.
put_gzipped() {  # put_gzipped SOURCE DEST
  mkdir -p "$(dirname "$root/$2")"
  gzip -9 -n -c "$files/$1" >"$root/$2"
  chmod 0644 "$root/$2"
}
put 0755 tools/fleetplan bin/fleetplan
put 0755 tools/agent/fleetplan-agent lib/fleetplan/fleetplan-agent
put 0755 tools/fleetplan-dashboard lib/fleetplan/fleetplan-dashboard
put 0755 trainer/train lib/fleetplan/train
for page in "$files"/packaging/man/*.1; do
  put_gzipped "packaging/man/${page##*/}" "share/man/man1/${page##*/}.gz"
done
put 0644 packaging/fleetplan.bash share/bash-completion/completions/fleetplan
# Debian's zsh looks in vendor-completions for what packages install in /usr,
# and in site-functions under /usr/local.
zsh_dir=share/zsh/site-functions
[[ $prefix == /usr ]] && zsh_dir=share/zsh/vendor-completions
put 0644 packaging/_fleetplan "$zsh_dir/_fleetplan"
docs="share/doc/fleetplan"
for doc in README.md docs/plan-and-apply.md docs/spec-format.md docs/security.md; do
  put_gzipped "$doc" "$docs/${doc##*/}.gz"
done
mkdir -p "$root/$docs/examples"
sed "s|@PREFIX@|$prefix|g" "$files/packaging/local-demo.toml" >"$root/$docs/examples/local-demo.toml"
chmod 0644 "$root/$docs/examples/local-demo.toml"

echo "install: fleetplan is in $root/bin"
[[ -n $destdir ]] && exit 0
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "install: $prefix/bin is not on your PATH; add it (export PATH=\"$prefix/bin:\$PATH\")" ;;
esac
echo "install: try: fleetplan plan $prefix/share/doc/fleetplan/examples/local-demo.toml"
echo "install: zsh completion: add $prefix/$zsh_dir to fpath before compinit"
