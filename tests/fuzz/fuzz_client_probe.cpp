// pixelport-fuzz-client: the probe connection, and reading and dispatching events with a deadline.
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

// What the probe reads to say what the fuzzer was doing when it stalled.
std::atomic<uint64_t> g_conn{0}, g_op{0};
std::atomic<const char *> g_op_name{"start"};
std::atomic<uint64_t> g_stalls{0};

// Reads and dispatches events, waiting at most timeout_ms. Unlike Connection::dispatch_timeout
// it reads even when the flush failed: a compositor that closed the connection after a
// protocol error left the error event to read, and that is how we learn which error it was.
bool dispatch_within(Connection &c, int timeout_ms) {
	wl_display *d = c.display;
	while (wl_display_prepare_read(d) != 0) {
		if (wl_display_dispatch_pending(d) < 0) return false;
	}
	wl_display_flush(d);
	pollfd pfd = {wl_display_get_fd(d), POLLIN, 0};
	if (poll(&pfd, 1, timeout_ms) <= 0) {
		wl_display_cancel_read(d);
		return false;
	}
	if (wl_display_read_events(d) < 0) return false;
	return wl_display_dispatch_pending(d) >= 0;
}

// wl_display_sync answered within timeout_ms; false on timeout or a dead connection.
bool sync_within(Connection &c, int timeout_ms) {
	bool done = false;
	wl_callback *cb = wl_display_sync(c.display);
	static const wl_callback_listener listener = {
		.done = [](void *data, wl_callback *, uint32_t) { *static_cast<bool *>(data) = true; },
	};
	wl_callback_add_listener(cb, &listener, &done);
	uint64_t deadline = now_ns() + static_cast<uint64_t>(timeout_ms) * 1000000ull;
	while (!done && now_ns() < deadline && wl_display_get_error(c.display) == 0) {
		dispatch_within(c, 20);
	}
	wl_callback_destroy(cb);
	return done;
}

// Reads and dispatches what has arrived, without waiting.
void pump(Connection &c) {
	if (wl_display_get_error(c.display) != 0) return;
	wl_display_dispatch_pending(c.display);
	if (wl_display_prepare_read(c.display) != 0) return;
	wl_display_flush(c.display);
	pollfd pfd = {wl_display_get_fd(c.display), POLLIN, 0};
	if (poll(&pfd, 1, 0) > 0) {
		wl_display_read_events(c.display);
	} else {
		wl_display_cancel_read(c.display);
	}
	wl_display_dispatch_pending(c.display);
}

void Probe::run(const Options &o, uint64_t t_start) {
	Connection c;
	if (!c.connect(&error)) {
		lost = true;
		ready = true;
		ready.notify_all();
		return;
	}
	ready = true;
	ready.notify_all();
	while (!stop) {
		uint64_t conn = g_conn, op = g_op;
		const char *name = g_op_name;
		uint64_t t0 = now_ns();
		bool ok = sync_within(c, 30000);
		double ms = ms_since(t0);
		if (!ok) {
			lost = true;
			error = "probe roundtrip failed: " + c.error_text();
			stalls.push_back({ms, static_cast<double>(t0 - t_start) / 1e9, conn, op, name});
			return;
		}
		count++;
		total_ms += ms;
		worst_ms = std::max(worst_ms, ms);
		if (ms > o.stall_ms) {
			stalls.push_back({ms, static_cast<double>(t0 - t_start) / 1e9, conn, op, name});
			g_stalls++;
		}
		usleep(static_cast<useconds_t>(o.probe_interval_ms) * 1000); // the probe's pace
	}
}

} // namespace pixelport::fuzz_client
