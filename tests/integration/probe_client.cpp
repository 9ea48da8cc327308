// pixelport-probe-client: a well-behaved client that measures how well the compositor serves it
// while something else happens (a hostile client, a fuzzer, a video). It maps a 32x32 (--size)
// XRGB8888 window, prints "probe ready" once its first frame is shown, then every 10 ms sends a
// wl_display.sync (if none is outstanding) and commits a new frame (if the last one's frame
// callback came).
//
// On SIGUSR1 it prints one line and goes on; on SIGTERM it prints the line and exits 0:
//   probe roundtrips=N worst_roundtrip_us=N frames=N worst_frame_gap_us=N p50_roundtrip_us=N p99_roundtrip_us=N
// Each line covers the time since the previous line (or the start): roundtrips answered, the
// slowest of them (a sync still unanswered counts with its age so far, so a frozen compositor
// shows even if it never answers), frame callbacks received and the longest time between two;
// then the median and the 99th percentile (nearest rank) of the answered roundtrips (the first
// 1,000,000 of them; with none answered both are worst_roundtrip_us); then, of the slowest
// answered roundtrip, where its time went (/proc/PID/task/TID/schedstat, docs/testing.md,
// "Latencies"): the compositor's main thread running (main_run_us), waiting on a run queue for a
// CPU (main_wait_us), and this client's own thread running (self_run_us) and waiting for a CPU
// (self_wait_us); what is left the compositor's main thread was blocked or idle. The compositor is the socket's peer
// (SO_PEERCRED); its figures are absent when its schedstat cannot be read.
// If the connection dies it prints the line with " error=TEXT" appended and exits 1.
// Usage: pixelport-probe-client [--size N]   (WAYLAND_DISPLAY names the compositor)
//   --size N   the window's side in pixels, 1 to 4096 (default 32)
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "wayland_client.hpp"

using namespace pixelport::client;

namespace {

constexpr int kDefaultSize = 32;
constexpr int kMaxSize = 4096;
constexpr uint64_t kTickNs = 10'000'000;
// Roundtrip times kept for the percentiles between two reports (8 MB at most; at one
// roundtrip per 10 ms that is over two hours).
constexpr size_t kMaxSamples = 1'000'000;

volatile sig_atomic_t got_term = 0, got_usr1 = 0;

// A thread's time on a CPU and waiting on a run queue for one since it started, ns
// (/proc/.../schedstat: "run_ns wait_ns timeslices").
struct SchedTimes {
	uint64_t run_ns = 0, wait_ns = 0;
	bool ok = false;
};

SchedTimes read_schedstat(const std::string &path) {
	SchedTimes t;
	FILE *f = path.empty() ? nullptr : fopen(path.c_str(), "re");
	if (f == nullptr) return t;
	unsigned long long run = 0, wait = 0;
	t.ok = fscanf(f, "%llu %llu", &run, &wait) == 2;
	fclose(f);
	t.run_ns = run;
	t.wait_ns = wait;
	return t;
}

// The nearest-rank percentile (0 < pct <= 100) of sorted samples (not empty).
uint64_t percentile(const std::vector<uint64_t> &sorted, int pct) {
	size_t rank = (sorted.size() * static_cast<size_t>(pct) + 99) / 100; // ceil, 1-based
	return sorted[std::max<size_t>(rank, 1) - 1];
}

struct Probe {
	int size = kDefaultSize;
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

	// The compositor's main thread's schedstat ("" when its pid is unknown) and this thread's.
	std::string main_schedstat;
	SchedTimes main_at_sync, self_at_sync;

	// Since the last report.
	uint64_t roundtrips = 0, worst_roundtrip = 0, frames = 0, worst_gap = 0;
	// Of the slowest answered roundtrip: the main thread's run and wait, this thread's wait, ns.
	SchedTimes worst_main, worst_self;
	std::vector<uint64_t> samples; // answered roundtrips, ns (at most kMaxSamples)

	void report(const char *error) {
		uint64_t now = now_ns();
		uint64_t worst_rt = worst_roundtrip;
		if (sync != nullptr) worst_rt = std::max(worst_rt, now - sync_sent);
		uint64_t gap = worst_gap;
		if (first_frame_seen) gap = std::max(gap, now - last_frame);
		uint64_t p50 = worst_rt, p99 = worst_rt;
		if (!samples.empty()) {
			std::sort(samples.begin(), samples.end());
			p50 = percentile(samples, 50);
			p99 = percentile(samples, 99);
		}
		char sched[160] = "";
		if (worst_main.ok && worst_self.ok) {
			snprintf(sched, sizeof(sched),
				" main_run_us=%llu main_wait_us=%llu self_run_us=%llu self_wait_us=%llu",
				static_cast<unsigned long long>(worst_main.run_ns / 1000),
				static_cast<unsigned long long>(worst_main.wait_ns / 1000),
				static_cast<unsigned long long>(worst_self.run_ns / 1000),
				static_cast<unsigned long long>(worst_self.wait_ns / 1000));
		}
		printf("probe roundtrips=%llu worst_roundtrip_us=%llu frames=%llu worst_frame_gap_us=%llu "
		       "p50_roundtrip_us=%llu p99_roundtrip_us=%llu%s%s%s\n",
			static_cast<unsigned long long>(roundtrips), static_cast<unsigned long long>(worst_rt / 1000),
			static_cast<unsigned long long>(frames), static_cast<unsigned long long>(gap / 1000),
			static_cast<unsigned long long>(p50 / 1000), static_cast<unsigned long long>(p99 / 1000), sched,
			error != nullptr ? " error=" : "", error != nullptr ? error : "");
		fflush(stdout);
		roundtrips = worst_roundtrip = frames = worst_gap = 0;
		worst_main = worst_self = SchedTimes{};
		samples.clear();
	}

	void send_sync() {
		static const wl_callback_listener listener = {
			.done =
				[](void *data, wl_callback *cb, uint32_t) {
					auto *p = static_cast<Probe *>(data);
					uint64_t rt = now_ns() - p->sync_sent;
					p->roundtrips++;
					if (rt > p->worst_roundtrip) {
						SchedTimes m = read_schedstat(p->main_schedstat);
						SchedTimes s = read_schedstat("/proc/thread-self/schedstat");
						p->worst_main = {m.run_ns - p->main_at_sync.run_ns,
							m.wait_ns - p->main_at_sync.wait_ns,
							m.ok && p->main_at_sync.ok};
						p->worst_self = {s.run_ns - p->self_at_sync.run_ns,
							s.wait_ns - p->self_at_sync.wait_ns,
							s.ok && p->self_at_sync.ok};
					}
					p->worst_roundtrip = std::max(p->worst_roundtrip, rt);
					if (p->samples.size() < kMaxSamples) p->samples.push_back(rt);
					wl_callback_destroy(cb);
					p->sync = nullptr;
				},
		};
		main_at_sync = read_schedstat(main_schedstat);
		self_at_sync = read_schedstat("/proc/thread-self/schedstat");
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
		wl_surface_damage_buffer(window.surface, 0, 0, size, size);
		frame = wl_surface_frame(window.surface);
		wl_callback_add_listener(frame, &listener, this);
		wl_surface_commit(window.surface);
	}
};

int usage(FILE *to = stderr) {
	fprintf(to, "usage: pixelport-probe-client [--size N]   (N: the window's side, 1 to %d, default %d)\n",
		kMaxSize, kDefaultSize);
	return 2;
}

} // namespace

int main(int argc, char **argv) {
	int size = kDefaultSize;
	for (int i = 1; i < argc; i++) {
		std::string arg = argv[i];
		if (arg == "--help" || arg == "-h") {
			usage(stdout);
			return 0;
		}
		if (arg != "--size" || i + 1 == argc) return usage();
		char *end = nullptr;
		long v = strtol(argv[++i], &end, 10);
		if (end == argv[i] || *end != '\0' || v < 1 || v > kMaxSize) return usage();
		size = static_cast<int>(v);
	}

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
	p.size = size;
	p.samples.reserve(4096);
	std::string error;
	if (!p.conn.connect(&error) || !p.window.create(&p.conn, "probe", &error) ||
		!p.pool.create(&p.conn, 2 * static_cast<size_t>(size) * size * 4, &error)) {
		fprintf(stderr, "pixelport-probe-client: %s\n", error.c_str());
		return 1;
	}
	ucred peer = {};
	socklen_t peer_len = sizeof(peer);
	if (getsockopt(wl_display_get_fd(p.conn.display), SOL_SOCKET, SO_PEERCRED, &peer, &peer_len) == 0 &&
		peer.pid > 0) {
		// The main thread's id is the process id.
		p.main_schedstat =
			"/proc/" + std::to_string(peer.pid) + "/task/" + std::to_string(peer.pid) + "/schedstat";
	}
	auto *px = static_cast<uint32_t *>(p.pool.data);
	const size_t pixels = static_cast<size_t>(size) * size;
	for (size_t i = 0; i < pixels; i++) {
		px[i] = 0xff20a040;
		px[pixels + i] = 0xff40a020;
	}
	for (int b = 0; b < 2; b++) {
		p.buffers[b] = wl_shm_pool_create_buffer(p.pool.pool, static_cast<int32_t>(b * pixels * 4), size, size,
			size * 4, WL_SHM_FORMAT_XRGB8888);
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
