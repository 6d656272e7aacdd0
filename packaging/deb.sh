#!/usr/bin/env bash
# Builds fleetplan's Debian package with dpkg's own tools (//packaging:deb):
#
#   deb.sh OUT.deb INSTALL_SH CONTROL_IN FILE...
#
# OUT.deb is named fleetplan_VERSION_ARCH.deb. FILEs are install.sh's inputs
# as the genrule sees them (execroot paths); they are laid out as its
# runfiles, and install.sh installs them with --prefix=/usr into a staging
# folder: the package has exactly the files of `bazel run //:install`.
# The control file is CONTROL_IN with the version, architecture, installed
# size, and in ${shlibs:Depends} what dpkg-shlibdeps computes from the ELF
# files' shared libraries and the installed packages that ship them.
set -euo pipefail

out=$1 install_sh=$2 control_in=$3
shift 3

name=${out##*/}
IFS=_ read -r package version arch <<<"${name%.deb}"
[[ $package == fleetplan && -n $version && -n $arch ]] || {
  echo "deb: expected OUT named fleetplan_VERSION_ARCH.deb, got $name" >&2
  exit 2
}
if [[ $(dpkg --print-architecture) != "$arch" ]]; then
  echo "deb: this machine's architecture is $(dpkg --print-architecture), not $arch" >&2
  exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
execroot=$PWD

# The inputs as runfiles: generated files lose their bazel-out/CONFIG/bin/.
for file in "$@"; do
  short=$file
  [[ $short =~ ^bazel-out/[^/]+/(bin|genfiles)/(.*)$ ]] && short=${BASH_REMATCH[2]}
  mkdir -p "$work/runfiles/fleetplan/$(dirname "$short")"
  ln -s "$execroot/$file" "$work/runfiles/fleetplan/$short"
done

# dpkg-shlibdeps wants the package's tree where debhelper would put it.
src="$work/src"
stage="$src/debian/fleetplan"
RUNFILES_DIR="$work/runfiles" "$install_sh" --prefix=/usr --destdir="$stage" >/dev/null

printed=$("$stage/usr/bin/fleetplan" version)
if [[ $printed != "fleetplan $version" ]]; then
  echo "deb: the package is named for $version, but fleetplan version prints: $printed" >&2
  exit 1
fi

# dpkg-shlibdeps reads debian/control from where it runs; it maps each
# library the ELF files need to the installed package that ships it (and
# that package's shlibs or symbols file to a minimum version), and fails
# for a library no package ships.
printf 'Source: fleetplan\n\nPackage: fleetplan\nArchitecture: any\n' >"$src/debian/control"
elves=()
while IFS= read -r -d '' file; do
  if cmp -s -n 4 "$file" <(printf '\177ELF'); then elves+=("-e$file"); fi
done < <(find "$stage" -type f -perm -u+x -print0 | sort -z)
# Its warnings (the staging tree is not where the package is installed;
# train links libraries it reaches only through others) say nothing wrong:
# they are shown only when it fails.
depends=$(cd "$src" && dpkg-shlibdeps -O "${elves[@]}" 2>"$work/shlibdeps.err") ||
  { cat "$work/shlibdeps.err" >&2; exit 1; }
shlibs=${depends#shlibs:Depends=}
[[ -n $shlibs ]] || { echo "deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }

control=$(grep -v '^#' "$control_in")
placeholder='${shlibs:Depends}'
[[ $control == *"$placeholder"* ]] || { echo "deb: $control_in has no $placeholder" >&2; exit 1; }
mkdir -p "$stage/DEBIAN"
{
  echo "Package: fleetplan"
  echo "Version: $version"
  echo "Architecture: $arch"
  echo "Installed-Size: $(du -sk "$stage/usr" | cut -f1)"
  echo "${control//"$placeholder"/$shlibs}"
} >"$stage/DEBIAN/control"

# Owned by root whoever builds it.
dpkg-deb --root-owner-group --build "$stage" "$out" >/dev/null
