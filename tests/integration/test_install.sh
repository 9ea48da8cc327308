#!/usr/bin/env bash
# `meson install --skip-subprojects` into a DESTDIR installs pixelport only: the
# plugin, the preload module, the public header, pixelport.pc, the programs and man pages; the
# bundled wlroots/wayland/libdrm only as private libraries in LIBDIR/pixelport/. A tiny C program
# builds against the installed pixelport.pc and runs; the installed programs run from there.
# Usage (meson test): test_install.sh BUILD_DIR PREFIX LIBDIR BINDIR INCLUDEDIR MANDIR
set -euo pipefail
build=$1 prefix=$2 libdir=$3 bindir=$4 includedir=$5 mandir=$6
fail() { echo "FAIL: $*" >&2; exit 1; }
dest=$(mktemp -d) shadow=$(mktemp -d)
trap 'rm -rf "$dest" "$shadow"' EXIT
# meson install writes BUILD/meson-logs/install-log.txt, which another user (the tests run as
# nobody too) cannot: install from a shadow of the build dir, its own meson-private and logs.
for e in "$build"/* "$build"/.[!.]*; do
  [[ -e $e ]] || continue
  case $(basename "$e") in meson-logs|meson-private) ;; *) ln -s "$e" "$shadow/$(basename "$e")" ;; esac
done
cp -r "$build/meson-private" "$shadow/"
mkdir "$shadow/meson-logs"
# The meson that configured the build (the bootstrap's newer one for wlroots 0.19): an older
# one cannot read its install data. build.ninja's regenerate rule names it.
read -ra meson < <(sed -n 's/^ command = \(.*\) --internal regenerate .*/\1/p' "$build/build.ninja" | head -n1)
[[ ${#meson[@]} -gt 0 ]] || meson=(meson)
"${meson[@]}" install -C "$shadow" --skip-subprojects --no-rebuild --quiet --destdir "$dest" >"$dest.log" 2>&1 ||
  { cat "$dest.log" >&2; rm -f "$dest.log"; fail "meson install failed"; }
if grep -q "were installed into" "$dest.log"; then cat "$dest.log" >&2; fail "subprojects installed"; fi
rm -f "$dest.log"
root="$dest$prefix"
abs() { [[ $1 == /* ]] && echo "$dest$1" || echo "$root/$1"; }
L=$(abs "$libdir") B=$(abs "$bindir") I=$(abs "$includedir") M=$(abs "$mandir")

# What must be there.
want=("$L/libpixelport.so" "$L/libpixelport-preload.so" "$I/pixelport/pixelport.h" "$L/pkgconfig/pixelport.pc")
for p in pixelport-compositor pixelport-paint pixelport-sweep pixelport-compare; do
  want+=("$B/$p")
  if command -v scdoc >/dev/null; then want+=("$M/man1/$p.1"); fi
done
for f in "${want[@]}"; do [[ -e $f ]] || fail "not installed: ${f#"$dest"}"; done

# What must not: anything of the subprojects outside the private folder.
files=$(cd "$dest" && find . \( -type f -o -type l \) | sed 's|^\./|/|' | sort)
echo "installed:"
sed 's/^/  /' <<<"$files"
bad=$(grep -v "^${L#"$dest"}/pixelport/" <<<"$files" | grep -Ei 'wayland|wlr|wlroots|drm|tinywl' || true)
[[ -z $bad ]] || fail "bundled subproject files in public folders: $bad"
# The private folder holds shared libraries only (no headers, no .pc).
if [[ -d $L/pixelport ]]; then
  other=$(find "$L/pixelport" -type f ! -name 'lib*.so*' || true)
  [[ -z $other ]] || fail "not a library in the private folder: $other"
fi

# A tiny consumer against the installed pixelport.pc.
cat >"$dest/consumer.c" <<'C'
#include <pixelport/pixelport.h>
#include <stdio.h>
int main(void) {
	printf("header ABI %u, library ABI %u\n", (unsigned)PIXELPORT_ABI_VERSION, (unsigned)pixelport_abi_version);
	return pixelport_abi_version == PIXELPORT_ABI_VERSION ? 0 : 1;
}
C
export PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_PATH=$L/pkgconfig PKG_CONFIG_LIBDIR=$L/pkgconfig
flags=$(pkg-config --cflags --libs pixelport) || fail "pkg-config pixelport"
echo "pkg-config --cflags --libs pixelport: $flags"
# A sanitizer build's library needs its runtime loaded first: the consumer links it too.
san=()
if readelf -d "$L/libpixelport.so" | grep -q 'libasan'; then san=(-fsanitize=address,undefined); export ASAN_OPTIONS=detect_leaks=0:detect_odr_violation=0; fi
# shellcheck disable=SC2086
cc -std=c11 -Wall -Werror "${san[@]}" -o "$dest/consumer" "$dest/consumer.c" $flags || fail "consumer does not build"
out=$(env -u LD_LIBRARY_PATH LD_LIBRARY_PATH="$L" "$dest/consumer") || fail "consumer: $out"
echo "consumer: $out"
[[ $out =~ ^"header ABI "([0-9]+)", library ABI "([0-9]+)$ && ${BASH_REMATCH[1]} == "${BASH_REMATCH[2]}" ]] ||
  fail "consumer printed: $out"
# The installed programs find their libraries in DESTDIR alone (rpath), not in the build tree.
for p in pixelport-compositor pixelport-sweep pixelport-compare pixelport-paint; do
  v=$(env -u LD_LIBRARY_PATH "$B/$p" --version) || fail "$p --version"
  [[ $v == "$p "* ]] || fail "$p --version printed: $v"
  if env -u LD_LIBRARY_PATH ldd "$B/$p" | grep -q "$build\|not found"; then
    env -u LD_LIBRARY_PATH ldd "$B/$p" >&2
    fail "$p resolves libraries outside DESTDIR"
  fi
done
echo "ok: pixelport only, pixelport.pc works, programs run from DESTDIR"
