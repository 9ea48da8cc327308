// pixelport-stream-client: exercises pixelport-stream-v1 the ways a test needs, well-behaved
// or not, and reports: "error CODE INTERFACE" for a protocol error, "ok" otherwise, and
// "holding" when it then stays connected until killed.
// Usage: pixelport-stream-client MODE [ARG...]
//
// Attack modes (each prints "attacking" once the attack is in place, or a verdict):
//   block-pipe HOLD_MS, block-socket HOLD_MS: keeps its own copy of the data fd, clears
//     O_NONBLOCK on it (the flag belongs to the shared open file description), announces 16384
//     bytes on a 64x64 XRGB8888 buffer, sends 100, prints "attacking", holds HOLD_MS, exits.
//   dgram-socket, udp-socket, listening-socket, fifo-read-write, seqpacket-socket,
//     unconnected-socket: create_stream with an fd of that kind (must get invalid_fd).
//   fifo-frame FIFO_PATH: a 32x32 frame through a FIFO opened read-only (must be shown).
//   many-streams N: N streams with an announced, never-sent write each (our ends stay open),
//     then "ok" and "holding".
//   too-many-streams: streams until the compositor's cap (limit_exceeded on the manager).
//   orphan-cycles CYCLES STREAMS: each cycle a child process connects, creates STREAMS streams
//     on pipes whose write ends this (parent) process keeps, announces a 1024x512 XRGB8888
//     frame on each, destroys them and exits without a goodbye. Prints "connected" first (its
//     own connection is up), then "ok" and "holding".
//   big-buffers N: one stream, N buffers of the largest size the limits event allows, one
//     roundtrip: prints "created N in US" (the roundtrip's time) then the verdict.
//   buffer-over-limit: one buffer one row over max_buffer_bytes (limit_exceeded).
//   role-after-held-commit [shm]: commits a stream buffer whose bytes are not sent (or a
//     wl_shm buffer, for comparison) on a surface with no role yet, then makes it an
//     xdg_toplevel (initial commit), sends the bytes, and shows a 32x32 frame (seed 7) on it:
//     the fuzzer's sequence that made wlroots abort.
//   unmap-behind-held-commit [shm|large]: on a configured toplevel, commits a stream buffer
//     whose bytes are not sent (a small wl_shm buffer for comparison, or a 1280x1024 NV12 one
//     the plugin converts in bands), then at once a null attach, a wl_shm buffer (stock wlroots:
//     xdg_surface error 3, unconfigured after the unmap) and a null attach; then sends the
//     bytes: the fuzzer's sequence (seed 1796096318) that made wlroots abort.
//   role-destroyed-behind-held-commit [shm|large] toplevel|xdg-surface: the same held commit,
//     then the toplevel is destroyed and a new one made of the same xdg_surface, committed with
//     a null attach ("configured" once its first configure comes), or the xdg_surface is
//     destroyed too and a new one made (stock wlroots: xdg_wm_base error 3, the surface has a
//     buffer); then the bytes are sent.
#include <drm_fourcc.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "client_verdict.hpp"
#include "pattern.hpp"
#include "pixelport-timing-v1-client-protocol.h"
#include "transport.hpp"
#include "wayland_client.hpp"

using namespace pixelport;
using namespace pixelport::client;

// This client stops mid-protocol on purpose and leaves its objects to the exit: no leak
// reports from LeakSanitizer in the sanitizer build (weak: absent in normal builds).
extern "C" void __lsan_disable(void) __attribute__((weak));

namespace {

Connection conn;
pp_stream_v1 *stream_on_last = nullptr; // the stream blocking_attack() works on

int report() { return test::report(conn); }

void hold() { test::hold(conn); }

// A stream on a fresh socketpair; *data gets our (blocking) end.
pp_stream_v1 *socket_stream(int *data) {
	int fds[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0) exit(3);
	pp_stream_v1 *s = pp_stream_manager_v1_create_stream(conn.stream_manager, fds[0]);
	close(fds[0]);
	*data = fds[1];
	return s;
}

// An XRGB8888 frame of the pattern, tightly packed.
std::vector<uint8_t> frame(int w, int h, uint32_t seed) {
	std::vector<uint8_t> bytes(static_cast<size_t>(w) * h * 4);
	encode_pattern(DRM_FORMAT_XRGB8888, w, h, static_cast<size_t>(w) * 4, bytes.data(), seed, 0, 0, w, h);
	return bytes;
}

void send_bytes(int fd, const uint8_t *p, size_t n) {
	while (n > 0) {
		ssize_t k = write(fd, p, n);
		if (k <= 0) exit(3);
		p += k;
		n -= static_cast<size_t>(k);
	}
}

// A commit the plugin holds, for the modes that act behind it: `kind` "shm" (a small wl_shm
// buffer), "large" (NV12 over the conversion hold threshold, 1.25 Mi pixels) or else a stream
// buffer whose 1024 bytes are announced but not sent until send_announced().
struct HeldCommit {
	ShmPool pool;
	int pipe_write = -1;

	bool commit(wl_surface *surface, const char *kind, std::string *error) {
		const int32_t lw = 1280, lh = 1024;
		if (!pool.create(&conn, 1024 + static_cast<size_t>(lw) * lh * 3 / 2, error)) return false;
		wl_buffer *held;
		if (strcmp(kind, "shm") == 0) {
			held = wl_shm_pool_create_buffer(pool.pool, 0, 16, 16, 64, WL_SHM_FORMAT_XRGB8888);
		} else if (strcmp(kind, "large") == 0) {
			held = wl_shm_pool_create_buffer(pool.pool, 1024, lw, lh, lw, WL_SHM_FORMAT_NV12);
		} else {
			int p[2];
			if (pipe(p) < 0) return false;
			pp_stream_v1 *s = pp_stream_manager_v1_create_stream(conn.stream_manager, p[0]);
			close(p[0]);
			pipe_write = p[1];
			held = pp_stream_v1_create_buffer(s, 16, 16, DRM_FORMAT_XRGB8888);
			pp_stream_v1_write(s, held, 0, 0, 16, 16, 1024); // no byte sent yet
		}
		wl_surface_attach(surface, held, 0, 0);
		wl_surface_damage_buffer(surface, 0, 0, INT32_MAX, INT32_MAX);
		wl_surface_commit(surface);
		return true;
	}
	// The stream's announced bytes (nothing for wl_shm).
	void send_announced() {
		if (pipe_write < 0) return;
		std::vector<uint8_t> zeros(1024);
		send_bytes(pipe_write, zeros.data(), zeros.size());
	}
};

bool show(Window &w, wl_buffer *buffer, int width, int height) {
	CommitWaiter waiter;
	wl_surface_attach(w.surface, buffer, 0, 0);
	wl_surface_damage_buffer(w.surface, 0, 0, width, height);
	waiter.arm(&conn, w.surface);
	wl_surface_commit(w.surface);
	return waiter.wait(&conn, 10000) && waiter.presented;
}

// The timing global, bound through a registry of its own; null when the compositor lacks it.
// Bound at `version` (1: what old clients get; 2: one report event per commit).
pp_timing_manager_v1 *bind_timing_manager(uint32_t version = 1) {
	struct Bind {
		uint32_t version;
		pp_timing_manager_v1 *manager = nullptr;
	} bind{version};
	static const wl_registry_listener listener = {
		.global =
			[](void *data, wl_registry *registry, uint32_t name, const char *interface, uint32_t) {
				auto *b = static_cast<Bind *>(data);
				if (strcmp(interface, pp_timing_manager_v1_interface.name) == 0) {
					b->manager = static_cast<pp_timing_manager_v1 *>(wl_registry_bind(
						registry, name, &pp_timing_manager_v1_interface, b->version));
				}
			},
		.global_remove = [](void *, wl_registry *, uint32_t) {},
	};
	wl_registry *registry = wl_display_get_registry(conn.display);
	wl_registry_add_listener(registry, &listener, &bind);
	conn.roundtrip();
	return bind.manager;
}

// Sleeps `ms` while answering nothing (the attacker may have frozen the compositor), then exits.
[[noreturn]] void hold_then_exit(int ms) {
	printf("attacking\n");
	fflush(stdout);
	usleep(static_cast<useconds_t>(ms) * 1000);
	_exit(0);
}

// Clears O_NONBLOCK on our copy of the data fd, announces 16384 bytes, sends 100, holds.
[[noreturn]] void blocking_attack(int ours, int writer, int hold_ms) {
	Window w;
	std::string e;
	if (!w.create(&conn, "attacker", &e)) exit(3);
	conn.roundtrip(); // the compositor has made the fd non-blocking by now
	int flags = fcntl(ours, F_GETFL);
	if (fcntl(ours, F_SETFL, flags & ~O_NONBLOCK) < 0) exit(3);
	pp_stream_v1 *s = stream_on_last;
	wl_buffer *b = pp_stream_v1_create_buffer(s, 64, 64, DRM_FORMAT_XRGB8888);
	pp_stream_v1_write(s, b, 0, 0, 64, 64, 16384);
	wl_surface_attach(w.surface, b, 0, 0);
	wl_surface_commit(w.surface);
	wl_display_flush(conn.display);
	uint8_t some[100] = {};
	send_bytes(writer, some, sizeof(some));
	hold_then_exit(hold_ms);
}

// create_stream with `fd` (which must end in invalid_fd).
int stream_from_fd(int fd) {
	if (fd < 0) return 3;
	pp_stream_manager_v1_create_stream(conn.stream_manager, fd);
	return report();
}

int simple_error(const std::function<void(pp_stream_v1 *, int)> &act) {
	int data;
	pp_stream_v1 *s = socket_stream(&data);
	act(s, data);
	return report();
}

// The mode's arguments (argv[2] and argv[3]), set by main().
const char *arg2 = "0";
const char *arg3 = nullptr;
const char *go_file = "/nonexistent"; // the file a mode waits for before it goes on
constexpr uint32_t xrgb = DRM_FORMAT_XRGB8888;

// ---- the modes: one function each, named after the mode ----

int mode_block_pipe() {
	int p[2];
	if (pipe(p) < 0) return 3;
	stream_on_last = pp_stream_manager_v1_create_stream(conn.stream_manager, p[0]);
	blocking_attack(p[0], p[1], atoi(arg2));
}

int mode_block_socket() {
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) return 3;
	stream_on_last = pp_stream_manager_v1_create_stream(conn.stream_manager, sv[0]);
	blocking_attack(sv[0], sv[1], atoi(arg2));
}

int mode_dgram_socket() {
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) < 0) return 3;
	return stream_from_fd(sv[0]);
}

int mode_seqpacket_socket() {
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0) return 3;
	return stream_from_fd(sv[0]);
}

int mode_udp_socket() { return stream_from_fd(socket(AF_INET, SOCK_DGRAM, 0)); }

int mode_unconnected_socket() { return stream_from_fd(socket(AF_UNIX, SOCK_STREAM, 0)); }

int mode_listening_socket() {
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	sockaddr_un addr = {};
	addr.sun_family = AF_UNIX;
	// Abstract address: nothing to clean up.
	snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1, "pixelport-listen-%d", getpid());
	if (bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) < 0 || listen(fd, 1) < 0) return 3;
	return stream_from_fd(fd);
}

int mode_fifo_read_write() {
	std::string path = "/tmp/pixelport-fifo-" + std::to_string(getpid());
	if (mkfifo(path.c_str(), 0600) < 0) return 3;
	int fd = open(path.c_str(), O_RDWR);
	unlink(path.c_str());
	return stream_from_fd(fd);
}

int mode_fifo_frame() {
	// Read end first (non-blocking open), then the write end.
	int rd = open(arg2, O_RDONLY | O_NONBLOCK);
	int wr = open(arg2, O_WRONLY);
	if (rd < 0 || wr < 0) return 3;
	pp_stream_v1 *s = pp_stream_manager_v1_create_stream(conn.stream_manager, rd);
	close(rd);
	Window w;
	std::string e;
	if (!w.create(&conn, "stream", &e)) return 3;
	auto px = frame(32, 32, 5);
	wl_buffer *b = pp_stream_v1_create_buffer(s, 32, 32, DRM_FORMAT_XRGB8888);
	pp_stream_v1_write(s, b, 0, 0, 32, 32, static_cast<uint32_t>(px.size()));
	wl_display_flush(conn.display);
	send_bytes(wr, px.data(), px.size());
	if (!show(w, b, 32, 32)) return report();
	report();
	hold();
	return 0;
}

int mode_many_streams() {
	int n = atoi(arg2);
	for (int i = 0; i < n; i++) {
		int data;
		pp_stream_v1 *s = socket_stream(&data); // our end stays open: never a hangup
		wl_buffer *b = pp_stream_v1_create_buffer(s, 1, 1, DRM_FORMAT_XRGB8888);
		pp_stream_v1_write(s, b, 0, 0, 1, 1, 4);
		wl_buffer_destroy(b);
		pp_stream_v1_destroy(s);
	}
	report();
	hold();
	return 0;
}

// Streams until the compositor says no (its default cap is far below 200).
int mode_too_many_streams() {
	for (int i = 0; i < 200; i++) {
		int data;
		socket_stream(&data);
		if (!conn.roundtrip()) break; // one at a time: the error is read, not a broken pipe
	}
	return report();
}

int mode_orphan_cycles() {
	int cycles = atoi(arg2), streams = arg3 != nullptr ? atoi(arg3) : 1;
	std::vector<int> keep; // the write ends: none of the pipes ever hangs up
	printf("connected\n");
	fflush(stdout);
	for (int c = 0; c < cycles; c++) {
		std::vector<int> reads;
		for (int i = 0; i < streams; i++) {
			int p[2];
			if (pipe(p) < 0) return 3;
			reads.push_back(p[0]);
			keep.push_back(p[1]);
		}
		pid_t pid = fork();
		if (pid < 0) return 3;
		if (pid == 0) {
			Connection child;
			std::string e;
			if (!child.connect(&e) || child.stream_manager == nullptr) _exit(3);
			for (int fd : reads) {
				pp_stream_v1 *s = pp_stream_manager_v1_create_stream(child.stream_manager, fd);
				wl_buffer *b = pp_stream_v1_create_buffer(s, 1024, 512, DRM_FORMAT_XRGB8888);
				pp_stream_v1_write(s, b, 0, 0, 1024, 512, 1024 * 512 * 4);
				wl_buffer_destroy(b);
				pp_stream_v1_destroy(s);
			}
			_exit(child.roundtrip() && wl_display_get_error(child.display) == 0 ? 0 : 4);
		}
		for (int fd : reads) close(fd);
		int status = 0;
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			printf("cycle %d failed (status %d)\n", c, status);
			return 0;
		}
	}
	report();
	hold();
	return 0;
}

int mode_big_buffers() {
	int n = atoi(arg2);
	int data;
	pp_stream_v1 *s = socket_stream(&data);
	const int32_t w = 16384; // h stays under 65536 up to 4 GiB
	int32_t h = static_cast<int32_t>(conn.stream_max_buffer_bytes / (4u * w));
	uint64_t t0 = now_ns();
	for (int i = 0; i < n; i++) pp_stream_v1_create_buffer(s, w, h, DRM_FORMAT_XRGB8888);
	conn.roundtrip();
	printf("created %d in %llu\n", n, static_cast<unsigned long long>((now_ns() - t0) / 1000));
	return report();
}

int mode_role_after_held_commit() {
	int p[2];
	if (pipe(p) < 0) return 3;
	pp_stream_v1 *s = pp_stream_manager_v1_create_stream(conn.stream_manager, p[0]);
	close(p[0]);
	wl_buffer *b;
	ShmPool pool;
	std::string e;
	if (strcmp(arg2, "shm") == 0) {
		if (!pool.create(&conn, 1024, &e)) return 3;
		b = wl_shm_pool_create_buffer(pool.pool, 0, 16, 16, 64, WL_SHM_FORMAT_XRGB8888);
	} else {
		b = pp_stream_v1_create_buffer(s, 16, 16, DRM_FORMAT_XRGB8888);
		pp_stream_v1_write(s, b, 0, 0, 16, 16, 1024); // no byte sent yet
	}
	wl_surface *surface = wl_compositor_create_surface(conn.compositor);
	wl_surface_attach(surface, b, 0, 0);
	wl_surface_commit(surface);
	wl_surface_attach(surface, b, 0, 0);
	wl_buffer_destroy(b); // the pending buffer is gone again
	if (!conn.roundtrip()) return report();
	// The role now: its initial commit carries no buffer, as xdg-shell requires.
	Window w;
	w.conn = &conn;
	w.surface = surface;
	w.xsurface = xdg_wm_base_get_xdg_surface(conn.wm_base, surface);
	static const xdg_surface_listener listener = {
		.configure =
			[](void *data, xdg_surface *xs, uint32_t serial) {
				xdg_surface_ack_configure(xs, serial);
				static_cast<Window *>(data)->configured = true;
			},
	};
	xdg_surface_add_listener(w.xsurface, &listener, &w);
	w.toplevel = xdg_surface_get_toplevel(w.xsurface);
	wl_surface_commit(surface);
	if (!conn.roundtrip()) return report();
	if (strcmp(arg2, "shm") != 0) {
		std::vector<uint8_t> zeros(1024);
		send_bytes(p[1], zeros.data(), zeros.size());
	}
	if (!conn.roundtrip() || !w.configured) return report();
	auto px = frame(32, 32, 7);
	wl_buffer *b2 = pp_stream_v1_create_buffer(s, 32, 32, DRM_FORMAT_XRGB8888);
	pp_stream_v1_write(s, b2, 0, 0, 32, 32, static_cast<uint32_t>(px.size()));
	wl_display_flush(conn.display);
	send_bytes(p[1], px.data(), px.size());
	if (!show(w, b2, 32, 32)) return report();
	report();
	hold();
	return 0;
}

int mode_unmap_behind_held_commit() {
	// A configured toplevel; a commit the plugin holds (stream bytes not sent, or a
	// converted NV12 buffer over the hold threshold), then without waiting: a null
	// attach (unmaps, so the next buffer needs a new configure), a buffer, a null attach.
	Window w;
	std::string e;
	if (!w.create(&conn, "unmap-behind-held-commit", &e)) return 3;
	HeldCommit held;
	if (!held.commit(w.surface, arg2, &e)) return 3;
	wl_buffer *small = wl_shm_pool_create_buffer(held.pool.pool, 0, 16, 16, 64, WL_SHM_FORMAT_XRGB8888);
	wl_surface_attach(w.surface, nullptr, 0, 0);
	wl_surface_commit(w.surface);
	wl_surface_attach(w.surface, small, 0, 0);
	wl_surface_commit(w.surface); // stock wlroots: xdg_surface error 3, not configured
	wl_surface_attach(w.surface, nullptr, 0, 0);
	wl_surface_commit(w.surface);
	if (!conn.roundtrip()) return report();
	held.send_announced();
	return report();
}

int mode_role_destroyed_behind_held_commit() {
	// A configured toplevel; a commit the plugin holds, as in unmap-behind-held-commit;
	// then the role object goes and a new one comes: "toplevel" makes a new toplevel
	// of the same xdg_surface and commits it (a null attach), "xdg-surface" destroys
	// the xdg_surface too and makes a new one (the surface had a buffer: stock wlroots
	// answers xdg_wm_base error 3).
	bool whole = arg3 != nullptr && strcmp(arg3, "xdg-surface") == 0;
	Window w;
	std::string e;
	if (!w.create(&conn, "role-destroyed-behind-held-commit", &e)) return 3;
	HeldCommit held;
	if (!held.commit(w.surface, arg2, &e)) return 3;
	xdg_toplevel_destroy(w.toplevel);
	w.toplevel = nullptr;
	if (whole) {
		xdg_surface_destroy(w.xsurface);
		w.xsurface = xdg_wm_base_get_xdg_surface(conn.wm_base, w.surface);
	}
	w.toplevel = xdg_surface_get_toplevel(w.xsurface);
	w.configured = false;
	wl_surface_attach(w.surface, nullptr, 0, 0);
	wl_surface_commit(w.surface); // a new role's initial commit
	if (!conn.roundtrip()) return report();
	held.send_announced();
	// The new toplevel's initial commit asks for its first configure.
	while (!whole && !w.configured && conn.dispatch_timeout(2000)) {
	}
	if (w.configured) printf("configured\n");
	return report();
}

int mode_buffer_over_limit() {
	return simple_error([](pp_stream_v1 *s, int) {
		const int32_t w = 8192;
		int32_t h = static_cast<int32_t>(conn.stream_max_buffer_bytes / (4u * w)) + 1;
		pp_stream_v1_create_buffer(s, w, h, DRM_FORMAT_XRGB8888);
	});
}

int mode_not_a_socket() {
	int fd = memfd_create("x", MFD_CLOEXEC);
	pp_stream_manager_v1_create_stream(conn.stream_manager, fd);
	return report();
}

int mode_write_end_of_pipe() {
	int p[2];
	if (pipe(p) < 0) return 3;
	pp_stream_manager_v1_create_stream(conn.stream_manager, p[1]);
	return report();
}

int mode_unknown_format() {
	return simple_error([](pp_stream_v1 *s, int) { pp_stream_v1_create_buffer(s, 8, 8, 0x12345678); });
}

int mode_zero_size() {
	return simple_error([](pp_stream_v1 *s, int) { pp_stream_v1_create_buffer(s, 0, 8, xrgb); });
}

int mode_negative_size() {
	return simple_error([](pp_stream_v1 *s, int) { pp_stream_v1_create_buffer(s, 8, -8, xrgb); });
}

int mode_huge_size() {
	return simple_error([](pp_stream_v1 *s, int) { pp_stream_v1_create_buffer(s, 65536, 65536, xrgb); });
}

int mode_rect_outside() {
	return simple_error([](pp_stream_v1 *s, int) {
		wl_buffer *b = pp_stream_v1_create_buffer(s, 16, 16, xrgb);
		pp_stream_v1_write(s, b, 8, 8, 16, 16, 16 * 16 * 4);
	});
}

int mode_rect_overflowing() {
	return simple_error([](pp_stream_v1 *s, int) {
		wl_buffer *b = pp_stream_v1_create_buffer(s, 16, 16, xrgb);
		pp_stream_v1_write(s, b, 0x7fffffff, 0, 0x7fffffff, 1, 4);
	});
}

int mode_rect_off_chroma_grid() {
	return simple_error([](pp_stream_v1 *s, int) {
		wl_buffer *b = pp_stream_v1_create_buffer(s, 16, 16, DRM_FORMAT_NV12);
		pp_stream_v1_write(s, b, 1, 0, 4, 2, 12);
	});
}

int mode_bad_length() {
	return simple_error([](pp_stream_v1 *s, int) {
		wl_buffer *b = pp_stream_v1_create_buffer(s, 16, 16, xrgb);
		pp_stream_v1_write(s, b, 0, 0, 16, 16, 16 * 16 * 4 - 1);
	});
}

int mode_foreign_buffer() {
	int d2;
	pp_stream_v1 *other = socket_stream(&d2);
	wl_buffer *b = pp_stream_v1_create_buffer(other, 16, 16, xrgb);
	return simple_error([b](pp_stream_v1 *s, int) { pp_stream_v1_write(s, b, 0, 0, 16, 16, 1024); });
}

int mode_too_many_buffers() {
	return simple_error([](pp_stream_v1 *s, int) {
		for (uint32_t i = 0; i <= conn.stream_max_buffers; i++) pp_stream_v1_create_buffer(s, 4, 4, xrgb);
	});
}

int mode_too_many_bytes_in_flight() {
	return simple_error([](pp_stream_v1 *s, int) {
		wl_buffer *b = pp_stream_v1_create_buffer(s, 4096, 4096, xrgb); // 64 MiB
		for (uint64_t sent = 0; sent <= conn.stream_max_inflight_bytes; sent += 64u << 20) {
			pp_stream_v1_write(s, b, 0, 0, 4096, 4096, 64u << 20);
		}
	});
}

int mode_eof_mid_write() {
	return simple_error([](pp_stream_v1 *s, int data) {
		wl_buffer *b = pp_stream_v1_create_buffer(s, 16, 16, xrgb);
		pp_stream_v1_write(s, b, 0, 0, 16, 16, 1024);
		wl_display_flush(conn.display);
		uint8_t some[10] = {};
		send_bytes(data, some, sizeof(some));
		close(data);
		// The hang-up reaches the compositor through its fd source, not the Wayland
		// socket: give its loop a turn before report()'s roundtrip races it.
		conn.roundtrip();
		usleep(50000);
	});
}

// Extra and unannounced bytes are simply not read; everything else goes on.
int mode_extra_bytes() {
	int data;
	pp_stream_v1 *s = socket_stream(&data);
	Window w;
	std::string e;
	if (!w.create(&conn, "stream", &e)) return 3;
	send_bytes(data, reinterpret_cast<const uint8_t *>("unannounced"), 11);
	conn.roundtrip();
	wl_buffer *b = pp_stream_v1_create_buffer(s, 32, 32, xrgb);
	auto px = frame(32, 32, 1);
	pp_stream_v1_write(s, b, 0, 0, 32, 32, static_cast<uint32_t>(px.size()));
	return report();
}

// The announced buffer goes away before its bytes; the stream stays in step.
int mode_destroy_in_flight() {
	int data;
	pp_stream_v1 *s = socket_stream(&data);
	Window w;
	std::string e;
	if (!w.create(&conn, "stream", &e)) return 3;
	auto px = frame(32, 32, 1);
	wl_buffer *gone = pp_stream_v1_create_buffer(s, 32, 32, xrgb);
	pp_stream_v1_write(s, gone, 0, 0, 32, 32, static_cast<uint32_t>(px.size()));
	wl_buffer_destroy(gone);
	wl_buffer *b = pp_stream_v1_create_buffer(s, 32, 32, xrgb);
	auto px2 = frame(32, 32, 2);
	pp_stream_v1_write(s, b, 0, 0, 32, 32, static_cast<uint32_t>(px2.size()));
	wl_display_flush(conn.display);
	send_bytes(data, px.data(), px.size());
	send_bytes(data, px2.data(), px2.size());
	if (!show(w, b, 32, 32)) return report();
	report();
	hold();
	return 0;
}

// Announces a frame and never sends it: only this client's surface may wait.
int mode_stall() {
	int data;
	pp_stream_v1 *s = socket_stream(&data);
	Window w;
	std::string e;
	if (!w.create(&conn, "stream", &e)) return 3;
	wl_buffer *b = pp_stream_v1_create_buffer(s, 64, 64, xrgb);
	pp_stream_v1_write(s, b, 0, 0, 64, 64, 64 * 64 * 4);
	wl_surface_attach(w.surface, b, 0, 0);
	wl_surface_commit(w.surface);
	report();
	hold();
	return 0;
}

int mode_disconnect_mid_frame() {
	int data;
	pp_stream_v1 *s = socket_stream(&data);
	Window w;
	std::string e;
	if (!w.create(&conn, "stream", &e)) return 3;
	wl_buffer *b = pp_stream_v1_create_buffer(s, 64, 64, xrgb);
	pp_stream_v1_write(s, b, 0, 0, 64, 64, 64 * 64 * 4);
	wl_surface_attach(w.surface, b, 0, 0);
	wl_surface_commit(w.surface);
	auto px = frame(64, 64, 1);
	wl_display_flush(conn.display);
	send_bytes(data, px.data(), px.size() / 2);
	report();
	_exit(0); // no goodbye
}

// Commit A (stream, bytes held back), then commit B (shm) on the same surface: the
// compositor must show neither until A's bytes arrive, then A, then B.
int mode_held_order() {
	int data;
	pp_stream_v1 *s = socket_stream(&data);
	Window w;
	std::string e;
	if (!w.create(&conn, "stream", &e)) return 3;
	const int W = 64, H = 64;
	ShmPool pool0, pool2;
	auto f0 = frame(W, H, 10), f1 = frame(W, H, 11), f2 = frame(W, H, 12);
	if (!pool0.create(&conn, f0.size(), &e) || !pool2.create(&conn, f2.size(), &e)) return 3;
	memcpy(pool0.data, f0.data(), f0.size());
	memcpy(pool2.data, f2.data(), f2.size());
	wl_buffer *b0 = wl_shm_pool_create_buffer(pool0.pool, 0, W, H, W * 4, WL_SHM_FORMAT_XRGB8888);
	wl_buffer *b2 = wl_shm_pool_create_buffer(pool2.pool, 0, W, H, W * 4, WL_SHM_FORMAT_XRGB8888);
	if (!show(w, b0, W, H)) return report();
	wl_buffer *a = pp_stream_v1_create_buffer(s, W, H, xrgb);
	pp_stream_v1_write(s, a, 0, 0, W, H, static_cast<uint32_t>(f1.size()));
	CommitWaiter wa, wb;
	wl_surface_attach(w.surface, a, 0, 0);
	wl_surface_damage_buffer(w.surface, 0, 0, W, H);
	wa.arm(&conn, w.surface);
	wl_surface_commit(w.surface);
	wl_surface_attach(w.surface, b2, 0, 0);
	wl_surface_damage_buffer(w.surface, 0, 0, W, H);
	wb.arm(&conn, w.surface);
	wl_surface_commit(w.surface);
	conn.roundtrip();
	printf("held %d %d\n", wa.done, wb.done);
	fflush(stdout);
	// The test takes a screenshot now (it must still show frame 10), then creates the
	// file named by argv[2] to let us send A's bytes.
	for (int i = 0; i < 1000 && access(go_file, F_OK) != 0; i++) usleep(10 * 1000);
	send_bytes(data, f1.data(), f1.size());
	if (!wb.wait(&conn, 10000)) return report();
	printf("order %s %s\n", wa.presented ? "presented" : "discarded", wb.presented ? "presented" : "discarded");
	report();
	hold();
	return 0;
}

// Three buffers on one stream for two surfaces, writes interleaved.
int mode_interleave() {
	int data;
	pp_stream_v1 *s = socket_stream(&data);
	Window big, small;
	std::string e;
	if (!big.create(&conn, "big", &e) || !small.create(&conn, "small", &e)) return 3;
	auto fb = frame(96, 64, 21), fs = frame(32, 32, 22), fb2 = frame(96, 64, 23);
	wl_buffer *b1 = pp_stream_v1_create_buffer(s, 96, 64, xrgb);
	wl_buffer *b2 = pp_stream_v1_create_buffer(s, 32, 32, xrgb);
	wl_buffer *b3 = pp_stream_v1_create_buffer(s, 96, 64, xrgb);
	// b1 top half, b2 whole, b3 whole, b1 bottom half.
	size_t half = fb.size() / 2;
	pp_stream_v1_write(s, b1, 0, 0, 96, 32, static_cast<uint32_t>(half));
	pp_stream_v1_write(s, b2, 0, 0, 32, 32, static_cast<uint32_t>(fs.size()));
	pp_stream_v1_write(s, b3, 0, 0, 96, 64, static_cast<uint32_t>(fb2.size()));
	pp_stream_v1_write(s, b1, 0, 32, 96, 32, static_cast<uint32_t>(half));
	wl_display_flush(conn.display);
	send_bytes(data, fb.data(), half);
	send_bytes(data, fs.data(), fs.size());
	send_bytes(data, fb2.data(), fb2.size());
	send_bytes(data, fb.data() + half, half);
	if (!show(big, b1, 96, 64) || !show(small, b2, 32, 32)) return report();
	(void)b3;
	report();
	hold();
	return 0;
}

// Subscribes (version 1) to the timing of one of two surfaces and counts what arrives for each.
int mode_subscribe() {
	pp_timing_manager_v1 *manager = bind_timing_manager(1);
	if (manager == nullptr) {
		printf("no timing global\n");
		return 0;
	}
	Window a, b;
	std::string e;
	if (!a.create(&conn, "a", &e) || !b.create(&conn, "b", &e)) return 3;
	struct Seen {
		int info = 0, done = 0, presented = 0;
		uint64_t last_commit = 0;
		bool ordered = true;
	} seen;
	pp_surface_timing_v1 *sub = pp_timing_manager_v1_subscribe(manager, a.surface);
	static const pp_surface_timing_v1_listener listener = {
		.info = [](void *data, pp_surface_timing_v1 *, uint32_t, uint32_t, uint32_t, int32_t, int32_t, uint32_t,
				uint32_t, uint32_t, uint32_t) { static_cast<Seen *>(data)->info++; },
		.timestamp =
			[](void *data, pp_surface_timing_v1 *, uint32_t, uint32_t phase, uint32_t hi, uint32_t lo,
				uint32_t nsec) {
				auto *s = static_cast<Seen *>(data);
				uint64_t ns = ((static_cast<uint64_t>(hi) << 32 | lo) * 1000000000u) + nsec;
				if (phase == PP_SURFACE_TIMING_V1_PHASE_COMMIT) {
					s->ordered = s->ordered && ns > s->last_commit;
					s->last_commit = ns;
				}
			},
		.done =
			[](void *data, pp_surface_timing_v1 *, uint32_t, uint32_t flags, const char *) {
				auto *s = static_cast<Seen *>(data);
				s->done++;
				s->presented += (flags & PP_SURFACE_TIMING_V1_FLAGS_PRESENTED) != 0;
			},
	};
	pp_surface_timing_v1_add_listener(sub, &listener, &seen);
	// a is larger than b, which lies on top of it: both stay visible.
	auto pxa = frame(64, 64, 1), pxb = frame(32, 32, 2);
	SurfaceWriter wa(&conn, a.surface, TransportChoice::ShmReused),
		wb(&conn, b.surface, TransportChoice::StreamSocket);
	Pixels pa = {DRM_FORMAT_XRGB8888, 64, 64, 256, pxa.data(), pxa.size()};
	Pixels pb = {DRM_FORMAT_XRGB8888, 32, 32, 128, pxb.data(), pxb.size()};
	for (int i = 0; i < 3; i++) {
		CommitWaiter w1, w2;
		w1.arm(&conn, a.surface);
		if (!wa.put(pa, nullptr, &e)) return report();
		w2.arm(&conn, b.surface);
		if (!wb.put(pb, nullptr, &e)) return report();
		if (!w1.wait(&conn, 5000) || !w2.wait(&conn, 5000)) {
			printf("frame %d not presented\n", i);
			return report();
		}
	}
	for (int i = 0; i < 50 && seen.done < 3; i++) conn.dispatch_timeout(100);
	printf("info %d done %d presented %d ordered %d\n", seen.info, seen.done, seen.presented, seen.ordered);
	return report();
}

// Version 2: the same commits, each in exactly one report event carrying every phase.
int mode_subscribe_v2() {
	pp_timing_manager_v1 *manager = bind_timing_manager(2);
	if (manager == nullptr) {
		printf("no timing global\n");
		return 0;
	}
	Window a, b;
	std::string e;
	if (!a.create(&conn, "a", &e) || !b.create(&conn, "b", &e)) return 3;
	struct Seen {
		int v1_events = 0, report = 0, presented = 0, phases_ordered = 0, times_size = 0;
		uint32_t last_seq = 0;
		uint64_t last_commit = 0;
		bool ordered = true;
		std::string output;
	} seen;
	pp_surface_timing_v1 *sub = pp_timing_manager_v1_subscribe(manager, a.surface);
	static const pp_surface_timing_v1_listener listener = {
		.info = [](void *data, pp_surface_timing_v1 *, uint32_t, uint32_t, uint32_t, int32_t, int32_t, uint32_t,
				uint32_t, uint32_t, uint32_t) { static_cast<Seen *>(data)->v1_events++; },
		.timestamp = [](void *data, pp_surface_timing_v1 *, uint32_t, uint32_t, uint32_t, uint32_t,
				     uint32_t) { static_cast<Seen *>(data)->v1_events++; },
		.done = [](void *data, pp_surface_timing_v1 *, uint32_t, uint32_t,
				const char *) { static_cast<Seen *>(data)->v1_events++; },
		.report =
			[](void *data, pp_surface_timing_v1 *, uint32_t seq, uint32_t flags, wl_array *values,
				const char *output) {
				auto *s = static_cast<Seen *>(data);
				s->report++;
				s->times_size = static_cast<int>(values->size);
				uint64_t v[PP_SURFACE_TIMING_V1_VALUE_PHASE_COMMIT + 7] = {};
				memcpy(v, values->data, std::min(sizeof(v), values->size));
				const uint64_t *t = v + PP_SURFACE_TIMING_V1_VALUE_PHASE_COMMIT;
				s->ordered = s->ordered && seq > s->last_seq &&
					t[PP_SURFACE_TIMING_V1_PHASE_COMMIT] > s->last_commit;
				s->last_seq = seq;
				s->last_commit = t[PP_SURFACE_TIMING_V1_PHASE_COMMIT];
				// What the shm surface's commits carry: 64x64 XRGB8888, 16 KiB, uploaded, shown.
				bool presented = (flags & PP_SURFACE_TIMING_V1_FLAGS_PRESENTED) != 0;
				s->presented += presented;
				uint64_t transport = v[PP_SURFACE_TIMING_V1_VALUE_TRANSPORT];
				bool shape = (transport == PP_SURFACE_TIMING_V1_TRANSPORT_SHM ||
						     transport == PP_SURFACE_TIMING_V1_TRANSPORT_SHM_NEW_POOL) &&
					v[PP_SURFACE_TIMING_V1_VALUE_FORMAT] == DRM_FORMAT_XRGB8888 &&
					v[PP_SURFACE_TIMING_V1_VALUE_WIDTH] == 64 &&
					v[PP_SURFACE_TIMING_V1_VALUE_HEIGHT] == 64 &&
					v[PP_SURFACE_TIMING_V1_VALUE_BYTES] == 64 * 64 * 4 &&
					v[PP_SURFACE_TIMING_V1_VALUE_DAMAGE_BYTES] == 64 * 64 * 4;
				s->phases_ordered += shape && t[PP_SURFACE_TIMING_V1_PHASE_COMMIT] > 0 &&
					t[PP_SURFACE_TIMING_V1_PHASE_COMMIT] <=
						t[PP_SURFACE_TIMING_V1_PHASE_UPLOAD_START] &&
					t[PP_SURFACE_TIMING_V1_PHASE_UPLOAD_START] <=
						t[PP_SURFACE_TIMING_V1_PHASE_UPLOAD_END] &&
					(!presented ||
						t[PP_SURFACE_TIMING_V1_PHASE_UPLOAD_END] <=
							t[PP_SURFACE_TIMING_V1_PHASE_PRESENT]) &&
					t[PP_SURFACE_TIMING_V1_PHASE_CONVERT_START] == 0 &&
					t[PP_SURFACE_TIMING_V1_PHASE_DATA_COMPLETE] == 0;
				if (output != nullptr) s->output = output;
			},
	};
	pp_surface_timing_v1_add_listener(sub, &listener, &seen);
	auto pxa = frame(64, 64, 1), pxb = frame(32, 32, 2);
	SurfaceWriter wa(&conn, a.surface, TransportChoice::ShmReused),
		wb(&conn, b.surface, TransportChoice::StreamSocket);
	Pixels pa = {DRM_FORMAT_XRGB8888, 64, 64, 256, pxa.data(), pxa.size()};
	Pixels pb = {DRM_FORMAT_XRGB8888, 32, 32, 128, pxb.data(), pxb.size()};
	for (int i = 0; i < 3; i++) {
		CommitWaiter w1, w2;
		w1.arm(&conn, a.surface);
		if (!wa.put(pa, nullptr, &e)) return report();
		w2.arm(&conn, b.surface);
		if (!wb.put(pb, nullptr, &e)) return report();
		if (!w1.wait(&conn, 5000) || !w2.wait(&conn, 5000)) {
			printf("frame %d not presented\n", i);
			return report();
		}
	}
	for (int i = 0; i < 50 && seen.report < 3; i++) conn.dispatch_timeout(100);
	printf("report %d presented %d ordered %d checked %d values %d output %s v1 %d\n", seen.report, seen.presented,
		seen.ordered, seen.phases_ordered, seen.times_size, seen.output.c_str(), seen.v1_events);
	return report();
}

// Version 2, a burst of commits faster than the output: each commit reported exactly
// once, in order, the replaced ones as discarded.
// Two frames as "first"/"one", two after xdg_toplevel.set_title "second" and set_app_id
// "two", each presented before the next (TimingLog: the log's labels follow).
int mode_retitle() {
	Window a;
	std::string e;
	if (!a.create(&conn, "first", &e)) return 3;
	xdg_toplevel_set_app_id(a.toplevel, "one");
	auto px = frame(64, 64, 1);
	SurfaceWriter w(&conn, a.surface, TransportChoice::ShmReused);
	Pixels p = {DRM_FORMAT_XRGB8888, 64, 64, 256, px.data(), px.size()};
	for (int i = 0; i < 4; i++) {
		if (i == 2) {
			xdg_toplevel_set_title(a.toplevel, "second");
			xdg_toplevel_set_app_id(a.toplevel, "two");
		}
		CommitWaiter shown;
		shown.arm(&conn, a.surface);
		if (!w.put(p, nullptr, &e)) return report();
		if (!shown.wait(&conn, 5000)) {
			printf("frame %d not presented\n", i);
			return report();
		}
	}
	printf("ok\n");
	return 0;
}

int mode_subscribe_v2_burst() {
	pp_timing_manager_v1 *manager = bind_timing_manager(2);
	if (manager == nullptr) {
		printf("no timing global\n");
		return 0;
	}
	Window a;
	std::string e;
	if (!a.create(&conn, "a", &e)) return 3;
	struct Seen {
		std::vector<uint32_t> seqs;
		int presented = 0, discarded = 0;
	} seen;
	pp_surface_timing_v1 *sub = pp_timing_manager_v1_subscribe(manager, a.surface);
	static const pp_surface_timing_v1_listener listener = {
		.info = [](void *, pp_surface_timing_v1 *, uint32_t, uint32_t, uint32_t, int32_t, int32_t, uint32_t,
				uint32_t, uint32_t, uint32_t) {},
		.timestamp = [](void *, pp_surface_timing_v1 *, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t) {},
		.done = [](void *, pp_surface_timing_v1 *, uint32_t, uint32_t, const char *) {},
		.report =
			[](void *data, pp_surface_timing_v1 *, uint32_t seq, uint32_t flags, wl_array *, const char *) {
				auto *s = static_cast<Seen *>(data);
				s->seqs.push_back(seq);
				(flags & PP_SURFACE_TIMING_V1_FLAGS_PRESENTED ? s->presented : s->discarded)++;
			},
	};
	pp_surface_timing_v1_add_listener(sub, &listener, &seen);
	auto px = frame(64, 64, 1);
	SurfaceWriter w(&conn, a.surface, TransportChoice::ShmReused);
	Pixels p = {DRM_FORMAT_XRGB8888, 64, 64, 256, px.data(), px.size()};
	constexpr int kCommits = 20;
	CommitWaiter last;
	for (int i = 0; i < kCommits; i++) {
		if (i == kCommits - 1) last.arm(&conn, a.surface);
		if (!w.put(p, nullptr, &e)) return report();
	}
	if (!last.wait(&conn, 5000)) {
		printf("last frame not presented\n");
		return report();
	}
	for (int i = 0; i < 50 && seen.seqs.size() < kCommits; i++) conn.dispatch_timeout(100);
	bool ordered = seen.seqs.size() == kCommits;
	for (size_t i = 1; i < seen.seqs.size(); i++) ordered = ordered && seen.seqs[i] == seen.seqs[i - 1] + 1;
	printf("reports %zu ordered %d last presented %d some discarded %d\n", seen.seqs.size(), ordered,
		seen.presented >= 1, seen.discarded >= 1);
	return report();
}

// Version 3 next to version 2 on the same surface: a burst of 40 commits (more than the
// 31 records one reports event holds), then one more. Every v3 record must equal the v2
// report of the same commit; after the burst a flush brings every finished record at
// once, the last commit's record comes by itself (the batch timer).
int mode_subscribe_v3() {
	pp_timing_manager_v1 *m3 = bind_timing_manager(3), *m2 = bind_timing_manager(2);
	if (m3 == nullptr || m2 == nullptr) {
		printf("no timing global\n");
		return 0;
	}
	Window a;
	std::string e;
	if (!a.create(&conn, "a", &e)) return 3;
	struct Seen {
		std::map<uint32_t, std::vector<uint64_t>> v2; // seq -> flags, output?, values
		std::vector<uint32_t> seqs;
		std::vector<std::string> outputs;
		int events = 0, equal = 0, max_per_event = 0, other = 0, presented = 0;
		uint32_t stride = 0;
		std::string output;
	} seen;
	pp_surface_timing_v1 *sub2 = pp_timing_manager_v1_subscribe(m2, a.surface);
	pp_surface_timing_v1 *sub3 = pp_timing_manager_v1_subscribe(m3, a.surface);
	static const pp_surface_timing_v1_listener l2 = {
		.info = [](void *, pp_surface_timing_v1 *, uint32_t, uint32_t, uint32_t, int32_t, int32_t, uint32_t,
				uint32_t, uint32_t, uint32_t) {},
		.timestamp = [](void *, pp_surface_timing_v1 *, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t) {},
		.done = [](void *, pp_surface_timing_v1 *, uint32_t, uint32_t, const char *) {},
		.report =
			[](void *data, pp_surface_timing_v1 *, uint32_t seq, uint32_t flags, wl_array *values,
				const char *output) {
				auto *s = static_cast<Seen *>(data);
				std::vector<uint64_t> r = {flags};
				const auto *v = static_cast<const uint64_t *>(values->data);
				r.insert(r.end(), v, v + values->size / sizeof(uint64_t));
				s->v2[seq] = r;
				if (output != nullptr) s->output = output;
			},
	};
	static const pp_surface_timing_v1_listener l3 = {
		.info = [](void *data, pp_surface_timing_v1 *, uint32_t, uint32_t, uint32_t, int32_t, int32_t, uint32_t,
				uint32_t, uint32_t, uint32_t) { static_cast<Seen *>(data)->other++; },
		.timestamp = [](void *data, pp_surface_timing_v1 *, uint32_t, uint32_t, uint32_t, uint32_t,
				     uint32_t) { static_cast<Seen *>(data)->other++; },
		.done = [](void *data, pp_surface_timing_v1 *, uint32_t, uint32_t,
				const char *) { static_cast<Seen *>(data)->other++; },
		.report = [](void *data, pp_surface_timing_v1 *, uint32_t, uint32_t, wl_array *,
				  const char *) { static_cast<Seen *>(data)->other++; },
		.output_name =
			[](void *data, pp_surface_timing_v1 *, uint32_t id, const char *name) {
				auto *s = static_cast<Seen *>(data);
				if (id == s->outputs.size() + 1) s->outputs.push_back(name);
			},
		.reports =
			[](void *data, pp_surface_timing_v1 *, uint32_t stride, wl_array *records) {
				auto *s = static_cast<Seen *>(data);
				s->events++;
				s->stride = stride;
				const auto *r = static_cast<const uint64_t *>(records->data);
				size_t n = records->size / (stride * sizeof(uint64_t));
				s->max_per_event = std::max(s->max_per_event, static_cast<int>(n));
				for (size_t i = 0; i < n; i++, r += stride) {
					uint32_t seq = static_cast<uint32_t>(r[PP_SURFACE_TIMING_V1_RECORD_SEQ]);
					s->seqs.push_back(seq);
					uint64_t flags = r[PP_SURFACE_TIMING_V1_RECORD_FLAGS];
					s->presented += (flags & PP_SURFACE_TIMING_V1_FLAGS_PRESENTED) != 0;
					// The v2 report of this commit came first (subscribed first).
					auto it = s->v2.find(seq);
					std::vector<uint64_t> mine = {flags};
					mine.insert(mine.end(), r + PP_SURFACE_TIMING_V1_RECORD_VALUE_TRANSPORT,
						r + stride);
					uint64_t id = r[PP_SURFACE_TIMING_V1_RECORD_OUTPUT];
					bool output_ok = (flags & PP_SURFACE_TIMING_V1_FLAGS_PRESENTED)
						? id >= 1 && id <= s->outputs.size() && s->outputs[id - 1] == s->output
						: id == 0;
					s->equal += it != s->v2.end() && it->second == mine && output_ok;
				}
			},
	};
	pp_surface_timing_v1_add_listener(sub2, &l2, &seen);
	pp_surface_timing_v1_add_listener(sub3, &l3, &seen);
	auto px = frame(64, 64, 1);
	SurfaceWriter w(&conn, a.surface, TransportChoice::ShmReused);
	Pixels p = {DRM_FORMAT_XRGB8888, 64, 64, 256, px.data(), px.size()};
	constexpr int kBurst = 40;
	CommitWaiter last;
	for (int i = 0; i < kBurst; i++) {
		if (i == kBurst - 1) last.arm(&conn, a.surface);
		if (!w.put(p, nullptr, &e)) return report();
	}
	if (!last.wait(&conn, 5000)) {
		printf("last frame not presented\n");
		return report();
	}
	pp_surface_timing_v1_flush(sub3);
	conn.roundtrip();
	size_t after_flush = seen.seqs.size();
	CommitWaiter one;
	one.arm(&conn, a.surface);
	if (!w.put(p, nullptr, &e) || !one.wait(&conn, 5000)) return report();
	for (int i = 0; i < 50 && seen.seqs.size() < kBurst + 1; i++) conn.dispatch_timeout(100);
	bool ordered = true;
	for (size_t i = 1; i < seen.seqs.size(); i++) ordered = ordered && seen.seqs[i] == seen.seqs[i - 1] + 1;
	printf("flushed %zu records %zu batched %d max<=31 %d stride %u ordered %d equal %d "
	       "presented>=2 %d "
	       "outputs %zu other %d\n",
		after_flush, seen.seqs.size(), seen.events < static_cast<int>(seen.seqs.size()),
		seen.max_per_event <= 31, seen.stride, ordered, seen.equal, seen.presented >= 2, seen.outputs.size(),
		seen.other);
	return report();
}

// Names, as a surface, an object this client never created: object ids are per client,
// so another client's surface cannot be named at all, and libwayland says so.
int mode_foreign_subscribe() {
	pp_timing_manager_v1 *manager = bind_timing_manager();
	if (manager == nullptr) return 3;
	// A proxy with a fresh id that the server never heard of.
	auto *stranger = reinterpret_cast<wl_surface *>(
		wl_proxy_create(reinterpret_cast<wl_proxy *>(conn.compositor), &wl_surface_interface));
	pp_timing_manager_v1_subscribe(manager, stranger);
	return report();
}

// Thousands of stream frames through buffers created and destroyed on the way.
int mode_churn() {
	Window w;
	std::string e;
	if (!w.create(&conn, "stream", &e)) return 3;
	auto px = frame(32, 32, 1);
	for (int i = 0; i < 500; i++) {
		SurfaceWriter writer(
			&conn, w.surface, i % 2 ? TransportChoice::StreamPipe : TransportChoice::StreamSocket);
		Pixels p = {DRM_FORMAT_XRGB8888, 32, 32, 128, px.data(), px.size()};
		for (int k = 0; k < 4; k++) {
			if (!writer.put(p, nullptr, &e)) {
				fprintf(stderr, "%s\n", e.c_str());
				return report();
			}
		}
		if (!writer.wait_consumed(5000)) return report();
	}
	report();
	hold();
	return 0;
}

const std::map<std::string, int (*)()> kModes = {
	{"block-pipe", mode_block_pipe},
	{"block-socket", mode_block_socket},
	{"dgram-socket", mode_dgram_socket},
	{"seqpacket-socket", mode_seqpacket_socket},
	{"udp-socket", mode_udp_socket},
	{"unconnected-socket", mode_unconnected_socket},
	{"listening-socket", mode_listening_socket},
	{"fifo-read-write", mode_fifo_read_write},
	{"fifo-frame", mode_fifo_frame},
	{"many-streams", mode_many_streams},
	{"too-many-streams", mode_too_many_streams},
	{"orphan-cycles", mode_orphan_cycles},
	{"big-buffers", mode_big_buffers},
	{"role-after-held-commit", mode_role_after_held_commit},
	{"unmap-behind-held-commit", mode_unmap_behind_held_commit},
	{"role-destroyed-behind-held-commit", mode_role_destroyed_behind_held_commit},
	{"buffer-over-limit", mode_buffer_over_limit},
	{"not-a-socket", mode_not_a_socket},
	{"write-end-of-pipe", mode_write_end_of_pipe},
	{"unknown-format", mode_unknown_format},
	{"zero-size", mode_zero_size},
	{"negative-size", mode_negative_size},
	{"huge-size", mode_huge_size},
	{"rect-outside", mode_rect_outside},
	{"rect-overflowing", mode_rect_overflowing},
	{"rect-off-chroma-grid", mode_rect_off_chroma_grid},
	{"bad-length", mode_bad_length},
	{"foreign-buffer", mode_foreign_buffer},
	{"too-many-buffers", mode_too_many_buffers},
	{"too-many-bytes-in-flight", mode_too_many_bytes_in_flight},
	{"eof-mid-write", mode_eof_mid_write},
	{"extra-bytes", mode_extra_bytes},
	{"destroy-in-flight", mode_destroy_in_flight},
	{"stall", mode_stall},
	{"disconnect-mid-frame", mode_disconnect_mid_frame},
	{"held-order", mode_held_order},
	{"interleave", mode_interleave},
	{"subscribe", mode_subscribe},
	{"subscribe-v2", mode_subscribe_v2},
	{"retitle", mode_retitle},
	{"subscribe-v2-burst", mode_subscribe_v2_burst},
	{"subscribe-v3", mode_subscribe_v3},
	{"foreign-subscribe", mode_foreign_subscribe},
	{"churn", mode_churn},
};

} // namespace

int main(int argc, char *argv[]) {
	if (__lsan_disable != nullptr) __lsan_disable();
	if (argc < 2) {
		fprintf(stderr, "usage: %s MODE\n", argv[0]);
		return 2;
	}
	std::string error;
	// "shm" comparison runs need no stream global: they also run against stock wlroots.
	bool shm_only = argc > 2 && strcmp(argv[2], "shm") == 0 && strstr(argv[1], "-behind-held-commit") != nullptr;
	if (!conn.connect(&error) || (conn.stream_manager == nullptr && !shm_only)) {
		fprintf(stderr, "%s\n", error.empty() ? "no pixelport stream global" : error.c_str());
		return 1;
	}
	if (argc > 2) go_file = arg2 = argv[2];
	if (argc > 3) arg3 = argv[3];
	auto it = kModes.find(argv[1]);
	if (it == kModes.end()) {
		fprintf(stderr, "unknown mode %s\n", argv[1]);
		return 2;
	}
	return it->second();
}
