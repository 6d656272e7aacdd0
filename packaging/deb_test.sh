#!/usr/bin/env bash
# The .deb in a clean Debian 12 container: installed with `dpkg -i` alone,
# then plan and apply of its local demo from a folder in no checkout
# (deb_test_in_container.sh).
#
# Clean means: the container holds the base system and the packages the
# .deb depends on and recommends, with everything they depend on, each as
# this machine has it installed, with its dpkg records, and nothing else
# (debian_root.py); no registry is reachable, so that is how the packages
# get there, where `apt-get install ./fleetplan.deb` would fetch them. Its
# /usr is a folder made for this test (bind-mounted: the vfs storage driver
# would copy its 1.3 GB twice), the rest is the imported image. Every
# container, image and folder it makes is removed, pass or fail.
set -uo pipefail

here="$RUNFILES_DIR/fleetplan/packaging"
deb=$(echo "$here"/fleetplan_*.deb)
[[ -f $deb ]] || { echo "FAIL: no package in $here" >&2; exit 1; }

DOCKER_HOST=$("$RUNFILES_DIR/fleetplan/tests/testbed/dockerd.sh" ensure) || exit 1
export DOCKER_HOST

scratch=$(mktemp -d /var/tmp/fleetplan-deb-test.XXXXXX)
tag="fleetplan-deb-test-$$-$RANDOM"
cleanup() {
  docker rm -f "$tag" >/dev/null 2>&1
  docker rmi -f "$tag:latest" >/dev/null 2>&1
  rm -rf "$scratch"
}
trap cleanup EXIT

# The test's copy, and one with a Depends no package meets.
mkdir -p "$scratch/pkg" "$scratch/unmet"
cp "$deb" "$scratch/pkg/fleetplan.deb"
dpkg-deb -R "$deb" "$scratch/unmet"
sed -i 's/^Depends: /Depends: fleetplan-no-such-package, /' "$scratch/unmet/DEBIAN/control"
dpkg-deb --root-owner-group -Znone -b "$scratch/unmet" "$scratch/pkg/unmet.deb" >/dev/null || exit 1
cp "$here/deb_test_in_container.sh" "$scratch/pkg/"

# The root: what the package asks for, resolved against this machine.
wanted=()
for field in Depends Recommends; do
  IFS=, read -ra alternatives <<<"$(dpkg-deb -f "$deb" "$field" | tr "\n" " ")"
  wanted+=("${alternatives[@]}")
done
if ! python3 "$here/debian_root.py" "$scratch/root" "${wanted[@]}" >"$scratch/packages.txt"; then
  echo "FAIL: making the container's root" >&2
  exit 1
fi
echo "the container has $(wc -l <"$scratch/packages.txt") packages"

tar -C "$scratch/root" --exclude=./usr -cf - . | docker import - "$tag:latest" >/dev/null || exit 1
# --network none: nothing is fetched. The demo's ranks meet on loopback.
docker run --name "$tag" --network none \
  -v "$scratch/root/usr:/usr" -v "$scratch/pkg:/pkg:ro" \
  -e PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin -e HOME=/root \
  "$tag:latest" /bin/bash /pkg/deb_test_in_container.sh
