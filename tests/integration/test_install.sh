#!/usr/bin/env bash
# A plain `meson install` into a DESTDIR installs pixelport only: the plugin, the preload module,
# the public header, pixelport.pc, the programs and man pages; the bundled wlroots/wayland/libdrm
# (and pixman for wlroots 0.19) only as private libraries in LIBDIR/pixelport/, each one needed
# by an installed program or library. `--skip-subprojects` installs the same files. A tiny C
# program builds against the installed pixelport.pc and runs; the installed programs run from
# there with the private libraries (RUNPATH), none from the build tree.
# Usage (meson test): test_install.sh BUILD_DIR PREFIX LIBDIR BINDIR INCLUDEDIR MANDIR
set -euo pipefail
build=$1 prefix=$2 libdir=$3 bindir=$4 includedir=$5 mandir=$6
fail() { echo "FAIL: $*" >&2; exit 1; }
dest=$(mktemp -d) shadow=$(mktemp -d) dest2=$(mktemp -d)
trap 'rm -rf "$dest" "$shadow" "$dest2" "$dest.log"' EXIT
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
# install_into DESTDIR [OPTION]: meson install into DESTDIR; prints the files installed, one a line.
install_into() {
  "${meson[@]}" install -C "$shadow" --no-rebuild --quiet --destdir "$1" "${@:2}" >"$dest.log" 2>&1 ||
    { cat "$dest.log" >&2; fail "meson install ${*:2} failed"; }
  (cd "$1" && find . \( -type f -o -type l \) | sed 's|^\./|/|' | sort)
}
files=$(install_into "$dest")
skipped=$(install_into "$dest2" --skip-subprojects)
[[ $files == "$skipped" ]] ||
  fail "plain and --skip-subprojects installs differ: $(diff <(echo "$files") <(echo "$skipped") | grep '^[<>]')"
root="$dest$prefix"
abs() { [[ $1 == /* ]] && echo "$dest$1" || echo "$root/$1"; }
L=$(abs "$libdir") B=$(abs "$bindir") I=$(abs "$includedir") M=$(abs "$mandir")

# What must be there.
want=("$L/libpixelport.so" "$L/libpixelport-preload.so" "$I/pixelport/pixelport.h" "$L/pkgconfig/pixelport.pc")
for p in pixelport-compositor pixelport-paint pixelport-sweep pixelport-compare; do
  want+=("$B/$p")
  if command -v scdoc >/dev/null; then want+=("$M/man1/$p.1"); fi
done
# The compositor comparison: a script, and its modules where it looks for them (PREFIX/share).
py=$root/share/pixelport/python
want+=("$B/pixelport-compositors" "$py/compositors_report.py" "$py/ratios.py" "$py/videoplay.py")
if command -v scdoc >/dev/null; then want+=("$M/man1/pixelport-compositors.1"); fi
for f in "${want[@]}"; do [[ -e $f ]] || fail "not installed: ${f#"$dest"}"; done
[[ -x $B/pixelport-compositors ]] || fail "pixelport-compositors is not executable"
"$B/pixelport-compositors" --help >/dev/null || fail "the installed pixelport-compositors does not find its modules"
echo "installed ($(wc -l <<<"$files") files, the same with --skip-subprojects):"
sed 's/^/  /' <<<"$files"

# Nothing else but the private folder's shared libraries (no headers, no .pc, no programs).
priv=${L#"$dest"}/pixelport/
extra=$(printf '%s\n' "${want[@]#"$dest"}" | sort | comm -13 - <(grep -v "^$priv" <<<"$files") || true)
[[ -z $extra ]] || fail "installed but not pixelport's: $extra"
elfs=("$L/libpixelport.so" "$L/libpixelport-preload.so")
for p in pixelport-compositor pixelport-paint pixelport-sweep pixelport-compare; do elfs+=("$B/$p"); done
private=()
for f in $(grep "^$priv" <<<"$files" || true); do
  [[ $f =~ ^$priv(lib[^/]+\.so(\.[0-9]+)*)$ && ! -L $dest$f ]] || fail "not a shared library in the private folder: $f"
  private+=("${BASH_REMATCH[1]}")
done
# Each private library is needed (NEEDED) by an installed program or library, or by another one.
needed_by() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'; }
needed=$(for f in "${elfs[@]}" "${private[@]/#/$L/pixelport/}"; do needed_by "$f"; done | sort -u)
for lib in "${private[@]}"; do
  grep -qxF "$lib" <<<"$needed" || fail "private library $lib is needed by nothing installed"
done
echo "private libraries: ${private[*]:-none}"

# A tiny consumer against the installed pixelport.pc: a C host that makes the plugin and the
# globals it wants on a display, with destroy listeners, and lets the display destroy them. It
# takes libwayland-server's and wlroots' functions from the process (libpixelport.so needs both),
# and libwayland's wl_listener as libwayland-server-core.h lays it out (stable ABI).
cat >"$dest/consumer.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pixelport/pixelport.h>
#include <stdio.h>
struct wl_list { struct wl_list *prev, *next; };
struct wl_listener { struct wl_list link; void (*notify)(struct wl_listener *listener, void *data); };
static int plugin_gone, shm_gone;
static void on_plugin_gone(struct wl_listener *l, void *data) { (void)l; (void)data; plugin_gone++; }
static void on_shm_gone(struct wl_listener *l, void *data) { (void)l; (void)data; shm_gone++; }
int main(void) {
	printf("header ABI %u, library ABI %u\n", (unsigned)PIXELPORT_ABI_VERSION, (unsigned)pixelport_abi_version);
	/* Versioned structs, as a C host fills them. */
	struct pixelport_options options = {.struct_size = sizeof options, .convert_threads = 2};
	struct pixelport_stats stats = {.struct_size = sizeof stats, .native_uploads = 7};
	pixelport_get_stats(NULL, &stats);
	if (options.struct_size == 0 || stats.native_uploads != 0) return 1;
	struct wl_display *(*display_create)(void) = (struct wl_display * (*)(void)) dlsym(RTLD_DEFAULT, "wl_display_create");
	void (*display_destroy)(struct wl_display *) = (void (*)(struct wl_display *))dlsym(RTLD_DEFAULT, "wl_display_destroy");
	struct wlr_renderer *(*pixman_create)(void) =
		(struct wlr_renderer * (*)(void)) dlsym(RTLD_DEFAULT, "wlr_pixman_renderer_create");
	void (*renderer_destroy)(struct wlr_renderer *) =
		(void (*)(struct wlr_renderer *))dlsym(RTLD_DEFAULT, "wlr_renderer_destroy");
	if (!display_create || !display_destroy || !pixman_create || !renderer_destroy) return 2;
	struct wl_display *display = display_create();
	struct wlr_renderer *renderer = pixman_create();
	struct pixelport_plugin *pp = pixelport_create(display, renderer, &options);
	if (pp == NULL) return 3;
	/* The globals this host wants, each once; wl_shm 3 does not exist. */
	struct pixelport_shm *shm = pixelport_shm_create(pp, 2);
	if (shm == NULL || pixelport_shm_create(pp, 2) != NULL || pixelport_shm_create(pp, 3) != NULL) return 4;
	if (pixelport_stream_manager_create(pp, 1) == NULL || pixelport_timing_manager_create(pp, 3) == NULL) return 5;
	struct wl_listener plugin_listener = {.notify = on_plugin_gone}, shm_listener = {.notify = on_shm_gone};
	pixelport_add_destroy_listener(pp, &plugin_listener);
	pixelport_shm_add_destroy_listener(shm, &shm_listener);
	pixelport_shm_destroy(shm);
	if (shm_gone != 1 || pixelport_shm_create(pp, 1) == NULL) return 6;
	pixelport_color_representation_manager_destroy(NULL);
	display_destroy(display); /* takes the plugin and its globals */
	renderer_destroy(renderer);
	if (plugin_gone != 1 || shm_gone != 1) return 7;
	printf("globals made, destroyed and gone with the display\n");
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
out=$(env -u LD_LIBRARY_PATH LD_LIBRARY_PATH="$L" "$dest/consumer" 2>&1) || fail "consumer (status $?): $out"
echo "consumer: $out"
[[ $out =~ "header ABI "([0-9]+)", library ABI "([0-9]+) && ${BASH_REMATCH[1]} == "${BASH_REMATCH[2]}" ]] ||
  fail "consumer printed: $out"
[[ $out == *"globals made, destroyed and gone with the display"* ]] || fail "consumer printed: $out"
# The installed programs find their libraries in DESTDIR alone (rpath), not in the build tree:
# each private library from the private folder.
# Whatever needs a private library names the private folder in its RUNPATH.
for f in "${elfs[@]}"; do
  [[ $f == "$L"/* ]] && want_rp='$ORIGIN/pixelport' || want_rp='$ORIGIN/../'"$libdir/pixelport"
  rp=$(readelf -d "$f" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
  for lib in "${private[@]}"; do
    if grep -qxF "$lib" < <(needed_by "$f") && [[ ":$rp:" != *":$want_rp:"* ]]; then
      fail "${f##*/} needs $lib but its RUNPATH ($rp) does not name $want_rp"
    fi
  done
done
for p in pixelport-compositor pixelport-sweep pixelport-compare pixelport-paint; do
  v=$(env -u LD_LIBRARY_PATH "$B/$p" --version) || fail "$p --version"
  [[ $v == "$p "* ]] || fail "$p --version printed: $v"
  resolved=$(env -u LD_LIBRARY_PATH ldd "$B/$p")
  if grep -q "$build\|not found" <<<"$resolved"; then
    echo "$resolved" >&2
    fail "$p resolves libraries outside DESTDIR"
  fi
  for lib in "${private[@]}"; do
    r=$(awk -v l="$lib" '$1 == l {print $3}' <<<"$resolved")
    [[ -z $r || $(realpath "$r") == $(realpath "$L/pixelport/$lib") ]] ||
      fail "$p takes $lib from $r, not from the private folder"
  done
done
echo "ok: pixelport only, pixelport.pc works, programs run from DESTDIR"
