# shellcheck shell=bash disable=SC2034  # the host_* variables are the caller's
# Sourced by scripts/demo for --host: find or build a compositor, start it headless on pixman
# with the plugin or stock, and stop it. The hosts run as tests/compositors/test_compositors.cpp
# runs them (same environment and configs), so what the demo shows is what the tests check.
#
#   host_resolve NAME BUILDDIR   sets host_bin, host_prefix, host_label, host_how, host_stock_how;
#                                builds sway/labwc/cage with tests/compositors/build-hosts if
#                                needed; exits 3 with one line when the host cannot be had
#   host_start RUN LOGDIR        RUN is plugin or stock; starts the host in the background in a
#                                private XDG_RUNTIME_DIR; sets host_pid, host_runtime, host_socket
#   host_stop                    SIGTERM (as a session manager sends), waits; sets host_status
#
# Needs from the caller: root (the repository, the current directory) and say().

host_fail() { say "scripts/demo: --host $host_name: $*"; exit 3; }

# Builds (or finds cached) sway, labwc and cage for this build's wlroots; sets host_prefix.
host_build_hosts() {
	local build=$1
	local sources=${PIXELPORT_SOURCES:-}
	[[ -z $sources && -d ../shared/sources ]] && sources=$(cd ../shared/sources && pwd)
	if [[ -z $sources || ! -d $sources ]]; then
		local built=$build/compositors/wlr-$host_series/prefix
		if [[ -x $built/bin/$host_name ]]; then
			say "no release sources (../shared/sources or PIXELPORT_SOURCES): using the $host_name built before in ${built#"$root"/}"
			host_prefix=$built
			return
		fi
		host_fail "no release sources to build $host_name from (../shared/sources, or PIXELPORT_SOURCES=DIR); --host tinywl or reference need none"
	fi
	# The same folder, meson and ccache settings as scripts/test: one cache for both.
	local meson=meson
	[[ $host_series != 0.18 && -f subprojects/.bootstrap-meson ]] && meson=$(cat subprojects/.bootstrap-meson)
	if [[ ! -x $build/compositors/wlr-$host_series/prefix/bin/$host_name ]]; then
		say "building the real compositors for wlroots $host_series (wlroots with drm/libinput, sway, labwc, cage)"
		say "  from $sources into ${build#"$root"/}/compositors/: 15 to 25 minutes on 2 cores the first time, cached after"
	fi
	local t0=$SECONDS
	host_prefix=$(CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1} MESON=$meson \
		tests/compositors/build-hosts "$host_series" "$sources" "$build/compositors" 2> >(sed -u 's/^/  /' >&2)) ||
		host_fail "tests/compositors/build-hosts failed (its log above)"
	((SECONDS - t0 < 5)) || say "  compositors ready in $((SECONDS - t0)) s"
}

host_resolve() {
	host_name=$1
	local build=$2 v
	host_build=$build
	host_preload=$build/hosts/preload/libpixelport-preload.so
	host_prefix=""
	# The wlroots release this build uses: its soname (0.18, 0.19), and the full version.
	host_series=$(ldd "$build/hosts/compositor/pixelport-compositor" 2>/dev/null | grep -o 'libwlroots-0\.[0-9]*' | head -1)
	host_series=${host_series#libwlroots-}
	[[ -n $host_series ]] || host_fail "cannot tell which wlroots $build/hosts/compositor/pixelport-compositor uses (ldd)"
	local wlr_version
	wlr_version=$(python3 -c '
import json, sys
try:
    j = json.load(open(sys.argv[1] + "/meson-info/intro-projectinfo.json"))
    print(next(s["version"] for s in j["subprojects"] if s["name"].startswith("wlroots")))
except Exception:
    pass' "$build" || true)
	# wlroots 0.20 is not a subproject: the bootstrap's prefix, else the system's.
	[[ -n $wlr_version ]] || wlr_version=$(sed -n 's/^Version: *//p' \
		"$root/subprojects/.wlroots-$host_series/prefix/lib/pkgconfig/wlroots-$host_series.pc" 2>/dev/null || true)
	[[ -n $wlr_version ]] || wlr_version=$(pkg-config --modversion "wlroots-$host_series" 2>/dev/null || echo "$host_series")
	case $host_name in
	reference)
		host_bin=$build/hosts/compositor/pixelport-compositor
		local v
		v=$("$host_bin" --version 2>/dev/null | grep -o '[0-9][0-9.]*' | head -1 || true)
		host_label="pixelport-compositor${v:+ $v} on wlroots $wlr_version"
		host_how="loaded by pixelport-compositor"
		host_stock_how="--no-plugin: wlroots' own wl_shm"
		;;
	tinywl)
		# Built by the wlroots subproject (examples=true); a system wlroots has none.
		# (|| true: a build on the bootstrap's wlroots 0.20 has no subprojects/ folder.)
		host_bin=$(find "$build/subprojects" -path '*/tinywl/tinywl' -type f -perm -u+x 2>/dev/null | head -1 || true)
		# wlroots 0.20 from the bootstrap's prefix: its tinywl is installed there.
		[[ -n $host_bin || ! -x $root/subprojects/.wlroots-0.20/prefix/bin/tinywl || $host_series != 0.20 ]] ||
			host_bin=$root/subprojects/.wlroots-0.20/prefix/bin/tinywl
		[[ -n $host_bin ]] || host_fail "no tinywl in $build/subprojects (it is built with wlroots from subprojects/, not with a system wlroots)"
		host_label="tinywl of wlroots $wlr_version"
		host_how="LD_PRELOAD=libpixelport-preload.so"
		host_stock_how="no LD_PRELOAD"
		;;
	sway|labwc|cage)
		if [[ -n ${PIXELPORT_HOSTS_PREFIX:-} ]]; then
			# Already built (the tests name the compositors suite's prefix), or /usr for a
			# distribution's compositor on its own libwlroots: used as it is.
			host_prefix=$PIXELPORT_HOSTS_PREFIX
			[[ -x $host_prefix/bin/$host_name ]] || host_fail "no $host_prefix/bin/$host_name (PIXELPORT_HOSTS_PREFIX)"
		else
			host_build_hosts "$build"
		fi
		host_bin=$host_prefix/bin/$host_name
		[[ -x $host_bin ]] || host_fail "build-hosts gave no $host_bin"
		case $host_name in
		cage) v=$(LD_LIBRARY_PATH=$host_prefix/lib "$host_bin" -v 2>&1 | grep -o '[0-9][0-9.]*' | head -1 || true) ;;
		*) v=$(LD_LIBRARY_PATH=$host_prefix/lib "$host_bin" --version 2>&1 | grep -o '[0-9][0-9.]*' | head -1 || true) ;;
		esac
		local wv
		wv=$(sed -n 's/^Version: *//p' "$host_prefix/lib/pkgconfig/wlroots-$host_series.pc" 2>/dev/null ||
			pkg-config --modversion "wlroots-$host_series" 2>/dev/null || true)
		host_label="$host_name ${v:-?} on wlroots ${wv:-$host_series}"
		host_how="LD_PRELOAD=libpixelport-preload.so"
		host_stock_how="no LD_PRELOAD"
		;;
	*) host_fail "unknown host (sway, labwc, cage, tinywl or reference)" ;;
	esac
	[[ $host_name == reference || -f $host_preload ]] || host_fail "no $host_preload (build incomplete?)"
}

# True once something listens on a wayland-* socket in $1; prints its name.
host_socket_ready() {
	python3 - "$1" <<'PY'
import os, socket, sys
d = sys.argv[1]
for name in sorted(os.listdir(d)):
    if not name.startswith("wayland-") or name.endswith(".lock"):
        continue
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(os.path.join(d, name))
    except OSError:
        continue
    finally:
        s.close()
    print(name)
    sys.exit(0)
sys.exit(1)
PY
}

host_start() {
	local run=$1 logdir=$2
	host_runtime=$(mktemp -d)
	chmod 0700 "$host_runtime"
	host_runtimes+=("$host_runtime")
	local env=(WLR_BACKENDS=headless WLR_RENDERER=pixman WLR_HEADLESS_OUTPUTS=1 WLR_LIBINPUT_NO_DEVICES=1
		"XDG_RUNTIME_DIR=$host_runtime" "HOME=$host_runtime" "XDG_CONFIG_HOME=$host_runtime/config")
	# A prefix of build-hosts has its own wlroots, libinput, ... (not /usr: the system's are found anyway).
	[[ -n $host_prefix && -e $host_prefix/lib/libwlroots-$host_series.so ]] && env+=("LD_LIBRARY_PATH=$host_prefix/lib")
	if [[ $run == plugin && $host_name != reference ]]; then
		env+=("LD_PRELOAD=$host_preload" "PIXELPORT_TIMING_LOG=$logdir/compositor-timing.jsonl"
			"PIXELPORT_TIMING_TRACE=$logdir/compositor-trace.json" "PIXELPORT_TIMING_SUMMARY=$logdir/compositor-timing-summary.txt"
			"PIXELPORT_STATS_FILE=$logdir/plugin-stats.json")
	fi
	local argv=()
	case $host_name in
	reference)
		argv=("$host_bin" --log-level error --output 1280x720@60)
		if [[ $run == plugin ]]; then
			argv+=(--timing-log "$logdir/compositor-timing.jsonl" --timing-trace "$logdir/compositor-trace.json")
		else
			argv+=(--no-plugin)
		fi
		;;
	tinywl) argv=("$host_bin") ;;
	sway)
		# Windows floating at the output's origin without borders, so that the sweep's grim
		# screenshots see the frame where it was put (as in tests/compositors).
		mkdir -p "$host_runtime/config"
		cat >"$host_runtime/config/sway.conf" <<'EOF'
default_border none
default_floating_border none
floating_minimum_size 1 x 1
for_window [app_id=".*"] floating enable, move absolute position 0 0
EOF
		argv=("$host_bin" -c "$host_runtime/config/sway.conf")
		;;
	labwc)
		mkdir -p "$host_runtime/config/labwc"
		cat >"$host_runtime/config/labwc/rc.xml" <<'EOF'
<labwc_config>
  <windowRules>
    <windowRule identifier="*" serverDecoration="no">
      <action name="MoveTo" x="0" y="0"/>
    </windowRule>
  </windowRules>
</labwc_config>
EOF
		argv=("$host_bin" -C "$host_runtime/config/labwc")
		;;
	cage)
		# cage needs an application and waits for it on SIGTERM: one that shows a small frame
		# and ends when the compositor goes away; the sweep's windows stack above it.
		argv=("$host_bin" -- "$host_build/client-demo/pixelport-paint" --format XRGB8888 --size 8x8 --seed 99)
		;;
	esac
	env -u WAYLAND_DISPLAY -u WAYLAND_SOCKET -u DISPLAY -u LD_PRELOAD "${env[@]}" "${argv[@]}" \
		>>"$logdir/compositor.log" 2>&1 </dev/null &
	host_pid=$!
	host_socket=""
	local i
	for ((i = 0; i < 500; i++)); do
		host_socket=$(host_socket_ready "$host_runtime" || true)
		[[ -n $host_socket ]] && break
		if ! kill -0 "$host_pid" 2>/dev/null; then
			wait "$host_pid" || true
			host_pid=""
			return 1
		fi
		sleep 0.02
	done
	[[ -n $host_socket ]] || { host_stop; return 1; }
	# cage: its application's window first, so that the sweep's windows stack above it.
	[[ $host_name == cage ]] && sleep 0.3
	return 0
}

host_stop() {
	host_status=0
	[[ -n ${host_pid:-} ]] || return 0
	# tinywl has no SIGTERM handler (it dies at once): let the plugin's log writer catch up.
	[[ $host_name == tinywl ]] && sleep 0.5
	kill -TERM "$host_pid" 2>/dev/null || true
	local i
	for ((i = 0; i < 500; i++)); do
		kill -0 "$host_pid" 2>/dev/null || break
		sleep 0.02
	done
	if kill -0 "$host_pid" 2>/dev/null; then
		say "  $host_name did not exit within 10 s of SIGTERM: killed"
		kill -KILL "$host_pid" 2>/dev/null || true
	fi
	wait "$host_pid" 2>/dev/null || host_status=$?
	host_pid=""
}
