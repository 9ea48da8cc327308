// pixelport-probe-client: a well-behaved client that measures how well the compositor serves it
// while something else happens (a hostile client, a fuzzer). It maps a 32x32 XRGB8888 window,
// prints "probe ready" once its first frame is shown, then every 10 ms sends a wl_display.sync
// (if none is outstanding) and commits a new frame (if the last one's frame callback came).
//
// On SIGUSR1 it prints one line and goes on; on SIGTERM it prints the line and exits 0:
//   probe roundtrips=N worst_roundtrip_us=N frames=N worst_frame_gap_us=N
// Each line covers the time since the previous line (or the start): roundtrips answered, the
// slowest of them (a sync still unanswered counts with its age so far, so a frozen compositor
// shows even if it never answers), frame callbacks received and the longest time between two.
// If the connection dies it prints the line with " error=TEXT" appended and exits 1.
// Usage: pixelport-probe-client   (WAYLAND_DISPLAY names the compositor)
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "wayland_client.hpp"

using namespace pixelport::client;

namespace {

constexpr int kSize = 32;
constexpr uint64_t kTickNs = 10'000'000;

volatile sig_atomic_t got_term = 0, got_usr1 = 0;

struct Probe {
	Connection conn;
	Window window;
	ShmPool pool;
	wl_buffer *buffers[2] = {};
	int next_buffer = 0;

	wl_callback *sync = nullptr;
	uint64_t sync_sent = 0;
	wl_callback *frame = nullptr;
	uint64_t last_frame = 0; // ns of the last frame callback (or of the first commit)
	bool first_frame_seen = false;

	// Since the last report.
	uint64_t roundtrips = 0, worst_roundtrip = 0, frames = 0, worst_gap = 0;

	void report(const char *error) {
		uint64_t now = now_ns();
		uint64_t worst_rt = worst_roundtrip;
		if (sync != nullptr) worst_rt = std::max(worst_rt, now - sync_sent);
		uint64_t gap = worst_gap;
		if (first_frame_seen) gap = std::max(gap, now - last_frame);
		printf("probe roundtrips=%llu worst_roundtrip_us=%llu frames=%llu worst_frame_gap_us=%llu%s%s\n",
			static_cast<unsigned long long>(roundtrips), static_cast<unsigned long long>(worst_rt / 1000),
			static_cast<unsigned long long>(frames), static_cast<unsigned long long>(gap / 1000),
			error != nullptr ? " error=" : "", error != nullptr ? error : "");
		fflush(stdout);
		roundtrips = worst_roundtrip = frames = worst_gap = 0;
	}

	void send_sync() {
		static const wl_callback_listener listener = {
			.done =
				[](void *data, wl_callback *cb, uint32_t) {
					auto *p = static_cast<Probe *>(data);
					uint64_t rt = now_ns() - p->sync_sent;
					p->roundtrips++;
					p->worst_roundtrip = std::max(p->worst_roundtrip, rt);
					wl_callback_destroy(cb);
					p->sync = nullptr;
				},
		};
		sync = wl_display_sync(conn.display);
		sync_sent = now_ns();
		wl_callback_add_listener(sync, &listener, this);
	}

	void commit_frame() {
		static const wl_callback_listener listener = {
			.done =
				[](void *data, wl_callback *cb, uint32_t) {
					auto *p = static_cast<Probe *>(data);
					uint64_t now = now_ns();
					if (p->first_frame_seen) {
						p->frames++;
						p->worst_gap = std::max(p->worst_gap, now - p->last_frame);
					} else {
						p->first_frame_seen = true;
						printf("probe ready\n");
						fflush(stdout);
					}
					p->last_frame = now;
					wl_callback_destroy(cb);
					p->frame = nullptr;
				},
		};
		wl_surface_attach(window.surface, buffers[next_buffer], 0, 0);
		next_buffer ^= 1;
		wl_surface_damage_buffer(window.surface, 0, 0, kSize, kSize);
		frame = wl_surface_frame(window.surface);
		wl_callback_add_listener(frame, &listener, this);
		wl_surface_commit(window.surface);
	}
};

} // namespace

int main() {
	// Signals are only taken inside ppoll: no event is lost between a check and the wait.
	sigset_t block, none;
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGUSR1);
	sigprocmask(SIG_BLOCK, &block, nullptr);
	sigemptyset(&none);
	struct sigaction sa = {};
	sa.sa_handler = [](int sig) {
		if (sig == SIGTERM) got_term = 1;
		if (sig == SIGUSR1) got_usr1 = 1;
	};
	sigaction(SIGTERM, &sa, nullptr);
	sigaction(SIGUSR1, &sa, nullptr);

	Probe p;
	std::string error;
	if (!p.conn.connect(&error) || !p.window.create(&p.conn, "probe", &error) ||
		!p.pool.create(&p.conn, 2 * kSize * kSize * 4, &error)) {
		fprintf(stderr, "pixelport-probe-client: %s\n", error.c_str());
		return 1;
	}
	auto *px = static_cast<uint32_t *>(p.pool.data);
	for (int i = 0; i < kSize * kSize; i++) {
		px[i] = 0xff20a040;
		px[kSize * kSize + i] = 0xff40a020;
	}
	for (int b = 0; b < 2; b++) {
		p.buffers[b] = wl_shm_pool_create_buffer(
			p.pool.pool, b * kSize * kSize * 4, kSize, kSize, kSize * 4, WL_SHM_FORMAT_XRGB8888);
	}
	p.commit_frame();

	uint64_t next_tick = now_ns();
	wl_display *d = p.conn.display;
	for (;;) {
		if (got_term) {
			p.report(nullptr);
			return 0;
		}
		if (got_usr1) {
			got_usr1 = 0;
			p.report(nullptr);
		}
		uint64_t now = now_ns();
		if (now >= next_tick) {
			if (p.sync == nullptr) p.send_sync();
			if (p.frame == nullptr) p.commit_frame();
			next_tick = now + kTickNs;
		}
		while (wl_display_prepare_read(d) != 0) {
			if (wl_display_dispatch_pending(d) < 0) break;
		}
		if (wl_display_flush(d) < 0 && errno != EAGAIN) {
			wl_display_cancel_read(d);
			p.report(strerror(errno));
			return 1;
		}
		pollfd pfd = {wl_display_get_fd(d), POLLIN, 0};
		uint64_t wait = next_tick > now_ns() ? next_tick - now_ns() : 0;
		timespec ts = {static_cast<time_t>(wait / 1000000000u), static_cast<long>(wait % 1000000000u)};
		int n = ppoll(&pfd, 1, &ts, &none);
		if (n <= 0) {
			wl_display_cancel_read(d);
			continue;
		}
		if (wl_display_read_events(d) < 0 || wl_display_dispatch_pending(d) < 0) {
			p.report(p.conn.error_text().c_str());
			return 1;
		}
	}
}
