// pixelport-fuzz-client: the session's loop: requests picked by weight, endings and findings.
#include <arpa/inet.h>
#include <drm_fourcc.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "pixelport-timing-v1-client-protocol.h"
#include "pixelport/core/format.hpp"
#include "transport.hpp"
#include "wayland_client.hpp"

#include "fuzz_client.hpp"

namespace pixelport::fuzz_client {

// ---- the loop ----

struct OpKind {
	const char *name;
	int weight;
	void (Session::*fn)();
};

const OpKind kOps[] = {
	{"create_pool", 6, &Session::create_pool},
	{"pool_create_buffer", 10, &Session::pool_create_buffer},
	{"pool_resize", 2, &Session::pool_resize},
	{"pool_grow_storm", 1, &Session::pool_grow_storm},
	{"pool_destroy", 2, &Session::pool_destroy},
	{"pool_truncate", 1, &Session::pool_truncate},
	{"buffer_destroy", 4, &Session::buffer_destroy},
	{"create_surface", 4, &Session::create_surface},
	{"make_toplevel", 3, &Session::make_toplevel},
	{"make_subsurface", 3, &Session::make_subsurface},
	{"subsurface_op", 3, &Session::subsurface_op},
	{"role_destroy", 2, &Session::role_destroy},
	{"surface_destroy", 2, &Session::surface_destroy},
	{"attach", 8, &Session::attach},
	{"damage", 5, &Session::damage},
	{"commit", 10, &Session::commit},
	{"frame", 2, &Session::frame},
	{"scale_transform", 1, &Session::scale_transform},
	{"create_stream", 4, &Session::create_stream},
	{"stream_create_buffer", 6, &Session::stream_create_buffer},
	{"stream_write", 10, &Session::stream_write},
	{"stream_feed", 5, &Session::stream_feed},
	{"stream_unannounced", 1, &Session::stream_unannounced},
	{"stream_clear_nonblock", 2, &Session::stream_clear_nonblock},
	{"stream_close_peer", 1, &Session::stream_close_peer},
	{"stream_destroy", 2, &Session::stream_destroy},
	{"timing_subscribe", 2, &Session::timing_subscribe},
	{"timing_subscribe_storm", 1, &Session::timing_subscribe_storm},
	{"timing_flush", 2, &Session::timing_flush},
	{"timing_destroy", 1, &Session::timing_destroy},
	{"manager_destroy", 1, &Session::manager_destroy},
};

void Session::op() {
	static const int total = [] {
		int t = 0;
		for (const OpKind &k : kOps) t += k.weight;
		return t;
	}();
	int r = static_cast<int>(rng_.below(static_cast<uint32_t>(total)));
	const OpKind *kind = &kOps[0];
	for (const OpKind &k : kOps) {
		if (r < k.weight) {
			kind = &k;
			break;
		}
		r -= k.weight;
	}
	// The same draw either way, so leaving a class out does not shift the rest of the run.
	if (kind->fn == &Session::stream_clear_nonblock && !o_.clear_nonblock) return;
	g_op = ops_;
	g_op_name = kind->name;
	(this->*kind->fn)();
}

bool Session::go(uint64_t deadline_ns) {
	g_conn = index_;
	g_op = 0;
	g_op_name = "connect";
	std::string error;
	if (!conn_.connect(&error)) {
		run_.findings.push_back("compositor-gone: connection " + std::to_string(index_) + " refused: " + error);
		run_.compositor_gone = true;
		return false;
	}
	g_connection_fd = wl_display_get_fd(conn_.display);
	bind_extras();
	run_.connections++;
	uint64_t stalls_at_start = g_stalls;
	// Mostly short connections, some long ones: both early teardown and deep states.
	uint64_t planned = rng_.chance(75) ? static_cast<uint64_t>(rng_.range(1, 300))
					   : static_cast<uint64_t>(rng_.range(300, 3000));
	if (o_.max_ops >= 0) planned = std::min<uint64_t>(planned, static_cast<uint64_t>(o_.max_ops));
	if (log_) fprintf(log_, "c%" PRIu64 " connect, %" PRIu64 " requests planned\n", index_, planned);
	std::string ending = "planned";
	for (ops_ = 0; ops_ < planned; ops_++) {
		if (now_ns() >= deadline_ns) {
			ending = "deadline";
			break;
		}
		op();
		run_.requests++;
		if (rng_.chance(12)) pump(conn_);
		bool check = rng_.chance(3);
		if (check) {
			g_op_name = "fuzz roundtrip";
			uint64_t t0 = now_ns();
			if (!sync_within(conn_, 2000) && wl_display_get_error(conn_.display) == 0) {
				run_.fuzz_stalls++;
				// Where the bytes are: unsent in our socket (the compositor does not read us), or
				// unread on our side.
				int fd = wl_display_get_fd(conn_.display), unsent = -1, unread = -1;
				ioctl(fd, TIOCOUTQ, &unsent);
				ioctl(fd, FIONREAD, &unread);
				int flushed = wl_display_flush(conn_.display);
				char line[240];
				snprintf(line, sizeof(line),
					"fuzz-roundtrip-timeout: %.0f ms, seed %" PRIu64 " connection %" PRIu64
					" op %" PRIu64 " (socket: %d bytes unsent, %d unread; flush %d%s%s)",
					ms_since(t0), o_.seed, index_, ops_, unsent, unread, flushed,
					flushed < 0 ? " " : "", flushed < 0 ? strerror(errno) : "");
				run_.findings.push_back(line);
				ending = "timeout";
				break;
			}
		}
		if (wl_display_get_error(conn_.display) != 0) break;
	}
	if (wl_display_get_error(conn_.display) == 0 && ending != "timeout") sync_within(conn_, 2000);
	int err = wl_display_get_error(conn_.display);
	if (err == EPROTO) {
		const wl_interface *iface = nullptr;
		uint32_t id = 0;
		uint32_t code = wl_display_get_protocol_error(conn_.display, &iface, &id);
		ending = std::string(iface ? iface->name : "?") + "#" + std::to_string(code);
		if (log_) fprintf(log_, "c%" PRIu64 " protocol error %s\n", index_, ending.c_str());
	} else if (err != 0) {
		ending = std::string("disconnected:") + strerror(err);
	}
	run_.endings[ending]++;
	// The last requests of this connection, for the report: kept for good when something
	// was found while it ran, else while it is one of the last few (a stall of the probe is
	// only known once the compositor answers again, often after this connection closed).
	if (g_stalls != stalls_at_start || ending == "timeout") {
		if (run_.kept.size() < 8) run_.kept[index_] = recent_;
	}
	run_.recent[index_] = recent_;
	while (run_.recent.size() > 3) run_.recent.erase(run_.recent.begin());
	return true;
}

} // namespace pixelport::fuzz_client
