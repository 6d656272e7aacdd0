#!/bin/bash
# deb_test.sh's part inside the clean container: /pkg holds fleetplan.deb
# and unmet.deb (the same package with one more Depends, on a package that
# does not exist). Installs the package with dpkg alone, uses it from a
# folder that is in no checkout, purges it, and sees dpkg refuse unmet.deb.
# Prints PASS, or FAIL lines.
set -uo pipefail

failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
expect_in() {  # expect_in NEEDLE HAYSTACK WHAT
  [[ $2 == *"$1"* ]] || fail "$3: expected '$1' in: $2"
}

ldconfig

# Clean: dpkg knows no fleetplan and none of its files is here.
dpkg-query -W fleetplan >/dev/null 2>&1 && fail "dpkg already knows fleetplan"
for path in /usr/bin/fleetplan /usr/lib/fleetplan /usr/share/doc/fleetplan; do
  [[ -e $path ]] && fail "$path exists before the install"
done

out=$(dpkg -i /pkg/fleetplan.deb 2>&1) || { echo "FAIL: dpkg -i: $out" >&2; exit 1; }
out=$(dpkg-query -W -f '${Status}' fleetplan 2>&1)
[[ $out == "install ok installed" ]] || fail "dpkg says fleetplan is: $out"

# Every library the installed binaries link is here, so in a package dpkg
# knows; and those they open when first used (debian-control.in).
while read -r file; do
  [[ -f $file ]] && cmp -s -n 4 "$file" <(printf '\177ELF') || continue
  out=$(ldd "$file" 2>&1) || fail "ldd $file: $out"
  [[ $out != *"not found"* ]] || fail "$file needs a library no installed package ships: $out"
done < <(dpkg -L fleetplan)
for soname in libcurl.so.4 libarchive.so.13 libssh.so.4 libcrypto.so.3; do
  [[ $(ldconfig -p) == *"$soname "* ]] || fail "$soname, opened when first used, is not installed"
done

for file in /usr/share/man/man1/fleetplan.1.gz /usr/share/man/man1/fleetplan-apply.1.gz \
            /usr/share/bash-completion/completions/fleetplan \
            /usr/share/zsh/vendor-completions/_fleetplan \
            /usr/share/doc/fleetplan/README.md.gz; do
  [[ -s $file ]] || fail "$file is not installed"
done
zcat /usr/share/man/man1/fleetplan-apply.1.gz | grep -q '^\.TH' || fail "fleetplan-apply.1.gz is no man page"

mkdir -p /root/away
cd /root/away || exit 1
out=$(fleetplan version 2>&1) || fail "fleetplan version: $out"
expect_in "fleetplan $(dpkg-query -W -f '${Version}' fleetplan)" "$out" "fleetplan version"

demo=/usr/share/doc/fleetplan/examples/local-demo.toml
out=$(fleetplan plan "$demo" 2>&1) || fail "plan of the demo: $out"
expect_in "program=/usr/lib/fleetplan/train" "$out" "plan of the demo"

fleetplan apply "$demo" >apply.out 2>&1 || fail "apply of the demo: $(tail -20 apply.out)"
expect_in '"event":"done"' "$(cat apply.out)" "apply of the demo"
out=$(fleetplan status "$demo" 2>&1) || fail "status of the demo: $out"
expect_in "succeeded" "$out" "status of the demo"

# Removed as it came.
out=$(dpkg --purge fleetplan 2>&1) || fail "dpkg --purge: $out"
[[ ! -e /usr/bin/fleetplan && ! -e /usr/lib/fleetplan ]] || fail "dpkg --purge left fleetplan's files"

# dpkg checks the Depends against what it knows is installed: with one
# more, which nothing meets, it unpacks the package but will not configure it.
out=$(dpkg -i /pkg/unmet.deb 2>&1) && fail "dpkg accepted an unmet Depends: $out"
expect_in "depends on fleetplan-no-such-package" "$out" "dpkg -i with an unmet Depends"

((failures == 0)) && echo "PASS"
exit $((failures > 0))
