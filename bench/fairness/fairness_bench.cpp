// pixelport-bench-fairness: the hostile-client cases (kCases), each against a fresh
// compositor (with the plugin, and with --no-plugin where stock wlroots has the same path),
// while a probe client does a roundtrip every 10 ms. One line per case: the probe's worst
// roundtrip, the compositor's peak RSS and fds during the attack, and its RSS and fds 1 s
// after the attacker exited, next to the same compositor's idle baseline of the same run.
// A report, not a test: nothing here passes or fails.
//
// The attacker runs as a child process (this program again, with --attack CASE), so "the
// attacker exits" is a real process exit.
#include <drm_fourcc.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "../transport/bench_util.hpp"
#include "cli.hpp"
#include "timing_client.hpp"

using namespace pixelport;
using namespace pixelport::bench;
using client::Connection;

namespace {

struct Options {
	CommonOptions common;
	int attack = -1; // child mode
	int case_only = -1; // --case N
	int streams = 500; // case 2: streams per attacker
	int cycles = 10; // case 3: connect/disconnect cycles
	int big_buffers = 2; // case 4: 1 GiB stream buffers
	int surfaces = 6; // case 5: surfaces showing one 8192x8192 buffer
	int commits = 60; // case 6: commits in one burst
	int hold_ms = 2000; // how long attackers stay before exiting
	int growths = 20000; // case 8: pool growths, a 1x1 buffer after each
	int pools = 15000; // case 9
	int buffers = 100000; // case 10
	int children = 24; // case 11 (case 12: 40)
	int subscriptions = 50000; // case 13
};

struct CaseInfo {
	const char *name;
	bool stock; // stock wlroots has the same path (wl_shm); the stream cases do not
};
const CaseInfo kCases[] = {
	{"0 idle (no attacker)", true},
	{"1 blocking read (O_NONBLOCK cleared)", false},
	{"2 streams that never hang up", false},
	{"3 limits per connection, not client", false},
	{"4 1 GiB stream buffers", false},
	{"5 one big buffer on many surfaces", true},
	{"6 conversion storm", true},
	{"7 own connection as a stream fd", false},
	{"8 pool grown 20,000 times", true},
	{"9 15,000 pools", true},
	{"10 100,000 buffers", true},
	{"11 24 synchronized 2560x1440 NV12 children", true},
	{"12 40 desynchronized 1024x1000 NV12 children", true},
	{"13 50,000 timing subscriptions", false},
};
constexpr int kCaseCount = static_cast<int>(std::size(kCases));

// ---- attackers (child process) ----

[[noreturn]] void die(const char *what) {
	fprintf(stderr, "attacker: %s: %s\n", what, strerror(errno));
	exit(1);
}

void connect_or_die(Connection *c) {
	std::string error;
	if (!c->connect(&error)) {
		fprintf(stderr, "attacker: %s\n", error.c_str());
		exit(1);
	}
}

pp_stream_v1 *pipe_stream(Connection &c, int p[2]) {
	if (pipe2(p, O_CLOEXEC) < 0) die("pipe");
	return pp_stream_manager_v1_create_stream(c.stream_manager, p[0]);
}

// A 1x1 .. WxH wl_shm buffer over a memfd of the exact size (contents: zero).
wl_buffer *shm_buffer(Connection &c, uint32_t shm_format, int w, int h, size_t bytes, size_t stride) {
	int fd = memfd_create("pp-fairness", MFD_CLOEXEC);
	if (fd < 0 || ftruncate(fd, static_cast<off_t>(bytes)) < 0) die("memfd");
	wl_shm_pool *pool = wl_shm_create_pool(c.shm, fd, static_cast<int32_t>(bytes));
	wl_buffer *b = wl_shm_pool_create_buffer(pool, 0, w, h, static_cast<int32_t>(stride), shm_format);
	wl_shm_pool_destroy(pool);
	close(fd);
	return b;
}

int attack(const Options &o, int which, bool stock) {
	Connection c;
	connect_or_die(&c);
	std::vector<int> keep; // fds held until exit
	std::vector<std::unique_ptr<client::Window>> windows; // shown until exit
	if (((which >= 1 && which <= 4) || which == 7 || which == 13) && c.stream_manager == nullptr) {
		fprintf(stderr, "attacker: no pixelport stream global\n");
		return 1;
	}
	switch (which) {
	case 1: { // the compositor's read() blocks once the shared file is blocking
		int p[2];
		pp_stream_v1 *s = pipe_stream(c, p);
		keep = {p[0], p[1]};
		c.roundtrip(); // the compositor set O_NONBLOCK on the file; clear it again
		fcntl(p[0], F_SETFL, fcntl(p[0], F_GETFL) & ~O_NONBLOCK);
		wl_buffer *b = pp_stream_v1_create_buffer(s, 64, 64, DRM_FORMAT_XRGB8888);
		pp_stream_v1_write(s, b, 0, 0, 64, 64, 16384);
		wl_display_flush(c.display);
		char bytes[100] = {};
		if (write(p[1], bytes, sizeof(bytes)) != sizeof(bytes)) die("write");
		break;
	}
	case 2: // datagram sockets never hang up: the streams stay after the client is gone
		for (int i = 0; i < o.streams; i++) {
			int sv[2];
			if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0) die("socketpair");
			pp_stream_v1 *s = pp_stream_manager_v1_create_stream(c.stream_manager, sv[0]);
			wl_buffer *b = pp_stream_v1_create_buffer(s, 1, 1, DRM_FORMAT_XRGB8888);
			pp_stream_v1_write(s, b, 0, 0, 1, 1, 4);
			wl_buffer_destroy(b);
			close(sv[0]);
			close(sv[1]);
			if (i % 64 == 63) c.roundtrip();
		}
		break;
	case 3: // connect, announce, disconnect; keep the pipes' write ends
		for (int k = 0; k < o.cycles; k++) {
			Connection cc;
			connect_or_die(&cc);
			for (int i = 0; i < 64; i++) {
				int p[2];
				pp_stream_v1 *s = pipe_stream(cc, p);
				close(p[0]);
				keep.push_back(p[1]);
				wl_buffer *b = pp_stream_v1_create_buffer(s, 256, 256, DRM_FORMAT_XRGB8888);
				pp_stream_v1_write(s, b, 0, 0, 256, 256, 256 * 256 * 4);
			}
			cc.roundtrip();
		}
		break;
	case 4: { // buffers as big as the advertised limit allows, 1 GiB at most
		int p[2];
		pp_stream_v1 *s = pipe_stream(c, p);
		keep = {p[0], p[1]};
		uint64_t bytes = std::min<uint64_t>(c.stream_max_buffer_bytes, 1ull << 30);
		int side = 1;
		while (static_cast<uint64_t>(side * 2) * (side * 2) * 4 <= bytes) side *= 2;
		for (int i = 0; i < o.big_buffers; i++) pp_stream_v1_create_buffer(s, side, side, DRM_FORMAT_XRGB8888);
		c.roundtrip();
		break;
	}
	case 5: // one 8192x8192 buffer attached to many surfaces
	case 6: { // 60 full-damage commits of a 4096x4096 buffer in one burst
		// NV12 with the plugin (converted); stock has no NV12, so XRGB8888 there.
		int side = which == 5 ? 8192 : 4096;
		bool nv12 = !stock && c.has_shm_format(WL_SHM_FORMAT_NV12);
		size_t stride = nv12 ? side : side * 4;
		size_t bytes = nv12 ? stride * side * 3 / 2 : stride * side;
		wl_buffer *b =
			shm_buffer(c, nv12 ? WL_SHM_FORMAT_NV12 : WL_SHM_FORMAT_XRGB8888, side, side, bytes, stride);
		int n = which == 5 ? o.surfaces : 1;
		for (int i = 0; i < n; i++) {
			auto w = std::make_unique<client::Window>();
			std::string error;
			if (!w->create(&c, "pp-fairness", &error)) {
				fprintf(stderr, "attacker: %s\n", error.c_str());
				return 1;
			}
			windows.push_back(std::move(w));
		}
		int commits = which == 5 ? 1 : o.commits;
		for (int k = 0; k < commits; k++) {
			for (auto &w : windows) {
				wl_surface_attach(w->surface, b, 0, 0);
				wl_surface_damage_buffer(w->surface, 0, 0, side, side);
				wl_surface_commit(w->surface);
			}
		}
		c.roundtrip();
		printf("format %s\n", nv12 ? "NV12" : "XRGB8888");
		fflush(stdout);
		break;
	}
	case 7: { // a converted 8192x8192 frame, then the client's own connection as a data fd
		const int side = 8192;
		wl_buffer *b = shm_buffer(c, WL_SHM_FORMAT_NV12, side, side, side * side * 3 / 2, side);
		auto w = std::make_unique<client::Window>();
		std::string error;
		if (!w->create(&c, "pp-fairness", &error)) return 1;
		wl_surface_attach(w->surface, b, 0, 0);
		wl_surface_damage_buffer(w->surface, 0, 0, side, side);
		wl_surface_commit(w->surface);
		// Long enough for the plugin to convert it (held and converted in bands).
		for (int i = 0; i < 20; i++) {
			c.roundtrip();
			usleep(50000);
		}
		pp_stream_manager_v1_create_stream(c.stream_manager, wl_display_get_fd(c.display));
		c.roundtrip();
		_exit(0);
	}
	case 8: { // one pool grown by a byte at a time, a 1x1 buffer kept after each, one commit
		int32_t size = 4096;
		int fd = memfd_create("pp-fairness", MFD_CLOEXEC);
		if (fd < 0 || ftruncate(fd, size + o.growths) < 0) die("memfd");
		wl_shm_pool *pool = wl_shm_create_pool(c.shm, fd, size);
		wl_buffer *last = nullptr;
		for (int i = 0; i < o.growths; i++) {
			wl_shm_pool_resize(pool, ++size);
			last = wl_shm_pool_create_buffer(pool, 0, 1, 1, 4, WL_SHM_FORMAT_XRGB8888);
			if (i % 1000 == 999) c.roundtrip();
		}
		auto w = std::make_unique<client::Window>();
		std::string error;
		if (!w->create(&c, "pp-fairness", &error)) return 1;
		wl_surface_attach(w->surface, last, 0, 0);
		wl_surface_commit(w->surface);
		c.roundtrip();
		windows.push_back(std::move(w));
		break;
	}
	case 9: // pools of one buffer each (past the plugin's default cap: no_memory)
		for (int i = 0; i < o.pools; i++) {
			shm_buffer(c, WL_SHM_FORMAT_XRGB8888, 1, 1, 4096, 4);
			if (i % 500 == 499 && !c.roundtrip()) break;
		}
		break;
	case 10: { // buffers on one pool
		int fd = memfd_create("pp-fairness", MFD_CLOEXEC);
		if (fd < 0 || ftruncate(fd, 4096) < 0) die("memfd");
		wl_shm_pool *pool = wl_shm_create_pool(c.shm, fd, 4096);
		for (int i = 0; i < o.buffers; i++) {
			wl_shm_pool_create_buffer(pool, 0, 1, 1, 4, WL_SHM_FORMAT_XRGB8888);
			if (i % 5000 == 4999 && !c.roundtrip()) break;
		}
		break;
	}
	case 11: // synchronized children, applied by one parent commit per round, 8 rounds, exit
	case 12: { // desynchronized children, all in one batch per round, 8 rounds
		const bool sync = which == 11;
		const int n = sync ? o.children : o.children * 5 / 3, w = sync ? 2560 : 1024, h = sync ? 1440 : 1000;
		const bool nv12 = !stock && c.has_shm_format(WL_SHM_FORMAT_NV12);
		auto parent = std::make_unique<client::Window>();
		std::string error;
		if (c.subcompositor == nullptr || !parent->create(&c, "pp-fairness", &error)) return 1;
		wl_buffer *small = shm_buffer(c, WL_SHM_FORMAT_XRGB8888, 64, 64, 64 * 64 * 4, 256);
		wl_surface_attach(parent->surface, small, 0, 0);
		std::vector<wl_surface *> kids;
		std::vector<wl_buffer *> buffers; // two per child: full size and 8 px smaller
		for (int i = 0; i < n; i++) {
			wl_surface *s = wl_compositor_create_surface(c.compositor);
			wl_subsurface *sub = wl_subcompositor_get_subsurface(c.subcompositor, s, parent->surface);
			if (!sync) wl_subsurface_set_desync(sub);
			wl_subsurface_set_position(sub, i % 8, i / 8);
			kids.push_back(s);
			for (int k = 0; k < 2; k++) {
				int bw = w - 8 * k, bh = h - 8 * k;
				size_t stride = nv12 ? bw : bw * 4;
				size_t bytes = nv12 ? stride * bh * 3 / 2 : stride * bh;
				buffers.push_back(shm_buffer(
					c, nv12 ? WL_SHM_FORMAT_NV12 : WL_SHM_FORMAT_XRGB8888, bw, bh, bytes, stride));
			}
		}
		wl_surface_commit(parent->surface);
		c.roundtrip();
		for (int r = 0; r < 8; r++) {
			for (int i = 0; i < n; i++) {
				wl_surface_attach(kids[i], buffers[2 * i + r % 2], 0, 0);
				wl_surface_damage_buffer(kids[i], 0, 0, w, h);
				wl_surface_commit(kids[i]);
			}
			wl_surface_commit(parent->surface);
			if (!sync) c.roundtrip();
		}
		if (sync) _exit(0); // gone with everything in flight
		windows.push_back(std::move(parent));
		break;
	}
	case 13: { // subscriptions on one surface (past the default cap of 1024: limit_exceeded)
		client::TimingClient timing(&c, 0, true);
		auto w = std::make_unique<client::Window>();
		std::string error;
		if (!timing.available() || !w->create(&c, "pp-fairness", &error)) return 1;
		for (int i = 0; i < o.subscriptions; i++) {
			pp_timing_manager_v1_subscribe(timing.manager_, w->surface);
			if (i % 5000 == 4999 && !c.roundtrip()) break;
		}
		c.roundtrip();
		_exit(0);
	}
	default: break;
	}
	c.roundtrip();
	printf("verdict %s\n", wl_display_get_error(c.display) == 0 ? "ok" : strerror(wl_display_get_error(c.display)));
	fflush(stdout);
	wl_display_flush(c.display);
	usleep(static_cast<useconds_t>(o.hold_ms) * 1000);
	for (int fd : keep) close(fd);
	return 0;
}

// ---- the measuring side ----

size_t rss_kib(pid_t pid) {
	std::ifstream in("/proc/" + std::to_string(pid) + "/status");
	std::string line;
	while (std::getline(in, line)) {
		if (line.rfind("VmRSS:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10);
	}
	return 0;
}

size_t fd_count(pid_t pid) {
	size_t n = 0;
	std::error_code ec;
	for (auto it = std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/fd", ec);
		!ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
		n++;
	}
	return n;
}

struct Probe {
	std::atomic<bool> stop{false};
	std::atomic<double> worst_ms{0};
	std::atomic<uint64_t> count{0};
	std::thread thread;
	bool start(const std::string &socket, std::string *error) {
		auto conn = std::make_shared<Connection>();
		if (!connect_to(conn.get(), socket, error)) return false;
		thread = std::thread([this, conn] {
			while (!stop) {
				uint64_t t0 = now_ns();
				uint64_t done = sync_done(conn.get(), 30000);
				double ms = static_cast<double>((done ? done : now_ns()) - t0) / 1e6;
				if (ms > worst_ms) worst_ms = ms;
				count++;
				if (!done) break;
				usleep(10000);
			}
		});
		return true;
	}
	void finish() {
		stop = true;
		if (thread.joinable()) thread.join();
	}
};

struct Result {
	bool ran = false;
	std::string note;
	double worst_ms = 0;
	size_t base_rss = 0, peak_rss = 0, after_rss = 0; // KiB
	size_t base_fds = 0, peak_fds = 0, after_fds = 0;
};

Result run_case(const Options &o, const std::string &self, RuntimeDir &dir, int which, bool stock) {
	Result r;
	Compositor comp;
	std::string error;
	std::vector<std::string> args = {"--output", o.common.output};
	if (stock) args.push_back("--no-plugin");
	if (!comp.start(o.common.compositor, dir, args, &error)) {
		r.note = error;
		return r;
	}
	pid_t pid = comp.process.pid();
	{
		// Warm up: one client that shows a frame, as every case's probe and attacker would.
		Connection c;
		client::Window w;
		if (!connect_to(&c, comp.socket_path, &error) || !w.create(&c, "warm-up", &error)) {
			r.note = error;
			return r;
		}
		wl_buffer *b = shm_buffer(c, WL_SHM_FORMAT_XRGB8888, 64, 64, 64 * 64 * 4, 256);
		wl_surface_attach(w.surface, b, 0, 0);
		wl_surface_commit(w.surface);
		sync_done(&c);
		wl_buffer_destroy(b);
	}
	// The baseline includes the probe's connection: "after" is measured while it is still there.
	Probe probe;
	if (!probe.start(comp.socket_path, &error)) {
		r.note = error;
		return r;
	}
	usleep(200000);
	r.base_rss = r.peak_rss = rss_kib(pid);
	r.base_fds = r.peak_fds = fd_count(pid);
	Child attacker;
	attacker.compositor_side = false;
	if (which > 0) {
		std::vector<std::string> argv = {self, "--attack", std::to_string(which), "--hold-ms",
			std::to_string(o.hold_ms), "--streams", std::to_string(o.streams), "--cycles",
			std::to_string(o.cycles), "--big-buffers", std::to_string(o.big_buffers), "--surfaces",
			std::to_string(o.surfaces), "--commits", std::to_string(o.commits), "--growths",
			std::to_string(o.growths), "--pools", std::to_string(o.pools), "--buffers",
			std::to_string(o.buffers), "--children", std::to_string(o.children), "--subscriptions",
			std::to_string(o.subscriptions)};
		if (stock) argv.push_back("--stock");
		if (!attacker.start(argv, {"WAYLAND_DISPLAY=" + comp.socket_path}, comp.log_path, &error)) {
			probe.finish();
			r.note = error;
			return r;
		}
	}
	// Sample while the attacker runs (the idle case: as long as an attacker holds), then
	// for 1 s after it exited.
	uint64_t idle_end = now_ns() + static_cast<uint64_t>(o.hold_ms) * 1000000ull;
	uint64_t kill_at = now_ns() + (static_cast<uint64_t>(o.hold_ms) + 60000) * 1000000ull;
	while (which > 0 ? attacker.running() : now_ns() < idle_end) {
		r.peak_rss = std::max(r.peak_rss, rss_kib(pid));
		r.peak_fds = std::max(r.peak_fds, fd_count(pid));
		if (now_ns() > kill_at) {
			attacker.stop(1000);
			r.note = "attacker killed after 60 s";
		}
		usleep(10000);
	}
	uint64_t after = now_ns() + 1000000000ull;
	while (now_ns() < after) {
		r.peak_rss = std::max(r.peak_rss, rss_kib(pid));
		r.peak_fds = std::max(r.peak_fds, fd_count(pid));
		usleep(10000);
	}
	r.after_rss = rss_kib(pid);
	r.after_fds = fd_count(pid);
	probe.finish();
	r.worst_ms = probe.worst_ms;
	if (!comp.process.running()) r.note = "compositor exited during the case";
	r.ran = true;
	return r;
}

std::string mib(size_t kib) {
	char s[32];
	snprintf(s, sizeof(s), "%.1f", static_cast<double>(kib) / 1024.0);
	return s;
}

} // namespace

int main(int argc, char *argv[]) {
	Options o;
	bool stock = false;
	CLI::App app{"hostile-client cases: probe worst roundtrip, compositor peak RSS and fds"};
	add_common_options(app, &o.common, false);
	app.add_option("--case", o.case_only, "run only case N (0-10)")->transform(cli::Range(0, kCaseCount - 1));
	app.add_option("--streams", o.streams, "case 2: streams the attacker makes")
		->capture_default_str()
		->transform(cli::Range(1, 100000));
	app.add_option("--cycles", o.cycles, "case 3: connections of 64 streams each")
		->capture_default_str()
		->transform(cli::Range(1, 10000));
	app.add_option("--big-buffers", o.big_buffers, "case 4: stream buffers of up to 1 GiB")
		->capture_default_str()
		->transform(cli::Range(0, 64));
	app.add_option("--surfaces", o.surfaces, "case 5: surfaces showing the 8192x8192 buffer")
		->capture_default_str()
		->transform(cli::Range(1, 1000));
	app.add_option("--commits", o.commits, "case 6: commits in the burst")
		->capture_default_str()
		->transform(cli::Range(1, 100000));
	app.add_option("--growths", o.growths, "case 8: pool growths, a 1x1 buffer after each")
		->capture_default_str()
		->transform(cli::Range(1, 1000000));
	app.add_option("--pools", o.pools, "case 9: pools of one buffer each")
		->capture_default_str()
		->transform(cli::Range(1, 1000000));
	app.add_option("--buffers", o.buffers, "case 10: buffers on one pool")
		->capture_default_str()
		->transform(cli::Range(1, 10000000));
	app.add_option("--children", o.children, "case 11: synchronized children (case 12: 5/3 as many)")
		->capture_default_str()
		->transform(cli::Range(1, 1000));
	app.add_option("--subscriptions", o.subscriptions, "case 13: timing subscriptions on one surface")
		->capture_default_str()
		->transform(cli::Range(1, 1000000));
	app.add_option("--hold-ms", o.hold_ms, "how long each attacker stays connected")
		->capture_default_str()
		->transform(cli::Range(0, 3600000));
	app.add_option("--attack", o.attack, "(internal) be the attacker of case N")
		->group("")
		->transform(cli::Range(0, kCaseCount - 1));
	app.add_flag("--stock", stock, "(internal) the attacker faces stock wlroots")->group("");
	if (int rc = cli::parse(app, argc, argv, "pixelport-bench-fairness"); rc >= 0) return rc;
	if (o.attack >= 0) return attack(o, o.attack, stock);
	if (o.common.quick) {
		o.streams = 100;
		o.cycles = 3;
		o.big_buffers = 1;
		o.surfaces = 2;
		o.commits = 10;
		o.hold_ms = 500;
		o.growths = 2000;
		o.pools = 1500;
		o.buffers = 10000;
		o.children = 6;
		o.subscriptions = 5000;
	}

	std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
	RuntimeDir dir;
	printf("pixelport-bench-fairness: %s; attackers hold %d ms; probe roundtrip every 10 ms\n",
		machine_note().c_str(), o.hold_ms);
	printf("peak = highest sample (every 10 ms) from the attacker's start to 1 s after its exit; after = 1 s "
	       "after\n\n");
	Table table({"case", "compositor", "worst rt ms", "vs idle", "base RSS MiB", "peak RSS MiB", "after RSS MiB",
		"base fds", "peak fds", "after fds", "note"});
	double idle_ms[2] = {0, 0};
	for (int which = 0; which < kCaseCount; which++) {
		if (o.case_only >= 0 && which != o.case_only && which != 0) continue;
		for (int s = 0; s < 2; s++) {
			bool on_stock = s == 1;
			if (on_stock && !kCases[which].stock) {
				table.row({kCases[which].name, "stock", "-", "-", "-", "-", "-", "-", "-", "-",
					"no stream global"});
				continue;
			}
			Result r = run_case(o, self, dir, which, on_stock);
			if (!r.ran) {
				table.row({kCases[which].name, on_stock ? "stock" : "plugin", "-", "-", "-", "-", "-",
					"-", "-", "-", r.note});
				continue;
			}
			if (which == 0) idle_ms[s] = r.worst_ms;
			char worst[32];
			snprintf(worst, sizeof(worst), "%.1f", r.worst_ms);
			table.row({kCases[which].name, on_stock ? "stock" : "plugin", worst,
				idle_ms[s] > 0 ? fmt_ratio(r.worst_ms / idle_ms[s]) : "-", mib(r.base_rss),
				mib(r.peak_rss), mib(r.after_rss), std::to_string(r.base_fds),
				std::to_string(r.peak_fds), std::to_string(r.after_fds), r.note});
			// One line per case as it finishes, for logs that are read while it runs.
			printf("case %d %s: worst roundtrip %.1f ms, RSS %s -> peak %s -> after %s MiB, fds %zu -> "
			       "peak %zu -> after %zu%s%s\n",
				which, on_stock ? "stock" : "plugin", r.worst_ms, mib(r.base_rss).c_str(),
				mib(r.peak_rss).c_str(), mib(r.after_rss).c_str(), r.base_fds, r.peak_fds, r.after_fds,
				r.note.empty() ? "" : "; ", r.note.c_str());
			fflush(stdout);
		}
	}
	printf("\n");
	table.print("Hostile-client cases (one fresh compositor per row)");
	return 0;
}
