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
//   orphan-cycles CYCLES STREAMS GO_FILE: each cycle a child process connects, creates STREAMS
//     streams on pipes whose write ends this (parent) process keeps, announces a 1024x512
//     XRGB8888 frame on each, destroys them and exits without a goodbye. Prints "connected"
//     first (its own connection is up) and starts the cycles once GO_FILE exists, then prints
//     "ok" and "holding".
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

#include "client_modes.hpp"
#include "client_verdict.hpp"
#include "pattern.hpp"
#include "transport.hpp"
#include "wait_until.hpp"
#include "wayland_client.hpp"

using namespace pixelport;
using namespace pixelport::client;
using pixelport::test::ModeArgs;
using pixelport::test::ModeTable;
using pixelport::test::xrgb_frame;

namespace {

Connection conn;

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

// Sleeps `ms` while answering nothing (the attacker may have frozen the compositor), then exits.
[[noreturn]] void hold_then_exit(int ms) {
	printf("attacking\n");
	fflush(stdout);
	usleep(static_cast<useconds_t>(ms) * 1000); // the attack: idle this long, deliberately
	_exit(0);
}

// Clears O_NONBLOCK on our copy of stream `s`'s data fd, announces 16384 bytes, sends 100, holds.
[[noreturn]] void blocking_attack(pp_stream_v1 *s, int ours, int writer, int hold_ms) {
	Window w;
	std::string e;
	if (!w.create(&conn, "attacker", &e)) exit(3);
	conn.roundtrip(); // the compositor has made the fd non-blocking by now
	int flags = fcntl(ours, F_GETFL);
	if (fcntl(ours, F_SETFL, flags & ~O_NONBLOCK) < 0) exit(3);
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

constexpr uint32_t xrgb = DRM_FORMAT_XRGB8888;

// ---- the modes: one function each, named after the mode ----

int mode_block_pipe(const ModeArgs &args) {
	int p[2];
	if (pipe(p) < 0) return 3;
	pp_stream_v1 *s = pp_stream_manager_v1_create_stream(conn.stream_manager, p[0]);
	blocking_attack(s, p[0], p[1], static_cast<int>(args.number(0)));
}

int mode_block_socket(const ModeArgs &args) {
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) return 3;
	pp_stream_v1 *s = pp_stream_manager_v1_create_stream(conn.stream_manager, sv[0]);
	blocking_attack(s, sv[0], sv[1], static_cast<int>(args.number(0)));
}

int mode_dgram_socket(const ModeArgs &) {
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv) < 0) return 3;
	return stream_from_fd(sv[0]);
}

int mode_seqpacket_socket(const ModeArgs &) {
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0) return 3;
	return stream_from_fd(sv[0]);
}

int mode_udp_socket(const ModeArgs &) { return stream_from_fd(socket(AF_INET, SOCK_DGRAM, 0)); }

int mode_unconnected_socket(const ModeArgs &) { return stream_from_fd(socket(AF_UNIX, SOCK_STREAM, 0)); }

int mode_listening_socket(const ModeArgs &) {
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);
	sockaddr_un addr = {};
	addr.sun_family = AF_UNIX;
	// Abstract address: nothing to clean up.
	snprintf(addr.sun_path + 1, sizeof(addr.sun_path) - 1, "pixelport-listen-%d", getpid());
	if (bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) < 0 || listen(fd, 1) < 0) return 3;
	return stream_from_fd(fd);
}

int mode_fifo_read_write(const ModeArgs &) {
	std::string path = "/tmp/pixelport-fifo-" + std::to_string(getpid());
	if (mkfifo(path.c_str(), 0600) < 0) return 3;
	int fd = open(path.c_str(), O_RDWR);
	unlink(path.c_str());
	return stream_from_fd(fd);
}

int mode_fifo_frame(const ModeArgs &args) {
	// Read end first (non-blocking open), then the write end.
	int rd = open(args.at(0), O_RDONLY | O_NONBLOCK);
	int wr = open(args.at(0), O_WRONLY);
	if (rd < 0 || wr < 0) return 3;
	pp_stream_v1 *s = pp_stream_manager_v1_create_stream(conn.stream_manager, rd);
	close(rd);
	Window w;
	std::string e;
	if (!w.create(&conn, "stream", &e)) return 3;
	auto px = xrgb_frame(32, 32, 5);
	wl_buffer *b = pp_stream_v1_create_buffer(s, 32, 32, DRM_FORMAT_XRGB8888);
	pp_stream_v1_write(s, b, 0, 0, 32, 32, static_cast<uint32_t>(px.size()));
	wl_display_flush(conn.display);
	send_bytes(wr, px.data(), px.size());
	if (!show(w, b, 32, 32)) return report();
	report();
	hold();
	return 0;
}

int mode_many_streams(const ModeArgs &args) {
	int n = static_cast<int>(args.number(0));
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
int mode_too_many_streams(const ModeArgs &) {
	for (int i = 0; i < 200; i++) {
		int data;
		socket_stream(&data);
		if (!conn.roundtrip()) break; // one at a time: the error is read, not a broken pipe
	}
	return report();
}

int mode_orphan_cycles(const ModeArgs &args) {
	int cycles = static_cast<int>(args.number(0)),
	    streams = args.args.size() > 1 ? static_cast<int>(args.number(1)) : 1;
	std::vector<int> keep; // the write ends: none of the pipes ever hangs up
	conn.roundtrip();
	printf("connected\n");
	fflush(stdout);
	const char *go_file = args.at(2, "/nonexistent");
	test::wait_until([&] { return access(go_file, F_OK) == 0; }, std::chrono::seconds(10));
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

int mode_big_buffers(const ModeArgs &args) {
	int n = static_cast<int>(args.number(0));
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

int mode_role_after_held_commit(const ModeArgs &args) {
	int p[2];
	if (pipe(p) < 0) return 3;
	pp_stream_v1 *s = pp_stream_manager_v1_create_stream(conn.stream_manager, p[0]);
	close(p[0]);
	wl_buffer *b;
	ShmPool pool;
	std::string e;
	if (args.is(0, "shm")) {
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
	if (!args.is(0, "shm")) {
		std::vector<uint8_t> zeros(1024);
		send_bytes(p[1], zeros.data(), zeros.size());
	}
	if (!conn.roundtrip() || !w.configured) return report();
	auto px = xrgb_frame(32, 32, 7);
	wl_buffer *b2 = pp_stream_v1_create_buffer(s, 32, 32, DRM_FORMAT_XRGB8888);
	pp_stream_v1_write(s, b2, 0, 0, 32, 32, static_cast<uint32_t>(px.size()));
	wl_display_flush(conn.display);
	send_bytes(p[1], px.data(), px.size());
	if (!show(w, b2, 32, 32)) return report();
	report();
	hold();
	return 0;
}

int mode_unmap_behind_held_commit(const ModeArgs &args) {
	// A configured toplevel; a commit the plugin holds (stream bytes not sent, or a
	// converted NV12 buffer over the hold threshold), then without waiting: a null
	// attach (unmaps, so the next buffer needs a new configure), a buffer, a null attach.
	Window w;
	std::string e;
	if (!w.create(&conn, "unmap-behind-held-commit", &e)) return 3;
	HeldCommit held;
	if (!held.commit(w.surface, args.at(0), &e)) return 3;
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

int mode_role_destroyed_behind_held_commit(const ModeArgs &args) {
	// A configured toplevel; a commit the plugin holds, as in unmap-behind-held-commit;
	// then the role object goes and a new one comes: "toplevel" makes a new toplevel
	// of the same xdg_surface and commits it (a null attach), "xdg-surface" destroys
	// the xdg_surface too and makes a new one (the surface had a buffer: stock wlroots
	// answers xdg_wm_base error 3).
	bool whole = args.is(1, "xdg-surface");
	Window w;
	std::string e;
	if (!w.create(&conn, "role-destroyed-behind-held-commit", &e)) return 3;
	HeldCommit held;
	if (!held.commit(w.surface, args.at(0), &e)) return 3;
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

int mode_buffer_over_limit(const ModeArgs &) {
	return simple_error([](pp_stream_v1 *s, int) {
		const int32_t w = 8192;
		int32_t h = static_cast<int32_t>(conn.stream_max_buffer_bytes / (4u * w)) + 1;
		pp_stream_v1_create_buffer(s, w, h, DRM_FORMAT_XRGB8888);
	});
}

int mode_not_a_socket(const ModeArgs &) {
	int fd = memfd_create("x", MFD_CLOEXEC);
	pp_stream_manager_v1_create_stream(conn.stream_manager, fd);
	return report();
}

int mode_write_end_of_pipe(const ModeArgs &) {
	int p[2];
	if (pipe(p) < 0) return 3;
	pp_stream_manager_v1_create_stream(conn.stream_manager, p[1]);
	return report();
}

int mode_unknown_format(const ModeArgs &) {
	return simple_error([](pp_stream_v1 *s, int) { pp_stream_v1_create_buffer(s, 8, 8, 0x12345678); });
}

int mode_zero_size(const ModeArgs &) {
	return simple_error([](pp_stream_v1 *s, int) { pp_stream_v1_create_buffer(s, 0, 8, xrgb); });
}

int mode_negative_size(const ModeArgs &) {
	return simple_error([](pp_stream_v1 *s, int) { pp_stream_v1_create_buffer(s, 8, -8, xrgb); });
}

int mode_huge_size(const ModeArgs &) {
	return simple_error([](pp_stream_v1 *s, int) { pp_stream_v1_create_buffer(s, 65536, 65536, xrgb); });
}

int mode_rect_outside(const ModeArgs &) {
	return simple_error([](pp_stream_v1 *s, int) {
		wl_buffer *b = pp_stream_v1_create_buffer(s, 16, 16, xrgb);
		pp_stream_v1_write(s, b, 8, 8, 16, 16, 16 * 16 * 4);
	});
}

int mode_rect_overflowing(const ModeArgs &) {
	return simple_error([](pp_stream_v1 *s, int) {
		wl_buffer *b = pp_stream_v1_create_buffer(s, 16, 16, xrgb);
		pp_stream_v1_write(s, b, 0x7fffffff, 0, 0x7fffffff, 1, 4);
	});
}

int mode_rect_off_chroma_grid(const ModeArgs &) {
	return simple_error([](pp_stream_v1 *s, int) {
		wl_buffer *b = pp_stream_v1_create_buffer(s, 16, 16, DRM_FORMAT_NV12);
		pp_stream_v1_write(s, b, 1, 0, 4, 2, 12);
	});
}

int mode_bad_length(const ModeArgs &) {
	return simple_error([](pp_stream_v1 *s, int) {
		wl_buffer *b = pp_stream_v1_create_buffer(s, 16, 16, xrgb);
		pp_stream_v1_write(s, b, 0, 0, 16, 16, 16 * 16 * 4 - 1);
	});
}

int mode_foreign_buffer(const ModeArgs &) {
	int d2;
	pp_stream_v1 *other = socket_stream(&d2);
	wl_buffer *b = pp_stream_v1_create_buffer(other, 16, 16, xrgb);
	return simple_error([b](pp_stream_v1 *s, int) { pp_stream_v1_write(s, b, 0, 0, 16, 16, 1024); });
}

int mode_too_many_buffers(const ModeArgs &) {
	return simple_error([](pp_stream_v1 *s, int) {
		for (uint32_t i = 0; i <= conn.stream_max_buffers; i++) pp_stream_v1_create_buffer(s, 4, 4, xrgb);
	});
}

int mode_too_many_bytes_in_flight(const ModeArgs &) {
	return simple_error([](pp_stream_v1 *s, int) {
		wl_buffer *b = pp_stream_v1_create_buffer(s, 4096, 4096, xrgb); // 64 MiB
		for (uint64_t sent = 0; sent <= conn.stream_max_inflight_bytes; sent += 64u << 20) {
			pp_stream_v1_write(s, b, 0, 0, 4096, 4096, 64u << 20);
		}
	});
}

int mode_eof_mid_write(const ModeArgs &) {
	return simple_error([](pp_stream_v1 *s, int data) {
		wl_buffer *b = pp_stream_v1_create_buffer(s, 16, 16, xrgb);
		pp_stream_v1_write(s, b, 0, 0, 16, 16, 1024);
		wl_display_flush(conn.display);
		uint8_t some[10] = {};
		send_bytes(data, some, sizeof(some));
		close(data);
		// The hang-up reaches the compositor through its fd source, not the Wayland
		// socket: a roundtrip may come back before it; the error is waited for.
		test::wait_until(
			[] {
				conn.dispatch_timeout(10); // the poll is the interval
				return wl_display_get_error(conn.display) != 0;
			},
			std::chrono::seconds(5), std::chrono::microseconds(0));
	});
}

// Extra and unannounced bytes are simply not read; everything else goes on.
int mode_extra_bytes(const ModeArgs &) {
	int data;
	pp_stream_v1 *s = socket_stream(&data);
	Window w;
	std::string e;
	if (!w.create(&conn, "stream", &e)) return 3;
	send_bytes(data, reinterpret_cast<const uint8_t *>("unannounced"), 11);
	conn.roundtrip();
	wl_buffer *b = pp_stream_v1_create_buffer(s, 32, 32, xrgb);
	auto px = xrgb_frame(32, 32, 1);
	pp_stream_v1_write(s, b, 0, 0, 32, 32, static_cast<uint32_t>(px.size()));
	return report();
}

// The announced buffer goes away before its bytes; the stream stays in step.
int mode_destroy_in_flight(const ModeArgs &) {
	int data;
	pp_stream_v1 *s = socket_stream(&data);
	Window w;
	std::string e;
	if (!w.create(&conn, "stream", &e)) return 3;
	auto px = xrgb_frame(32, 32, 1);
	wl_buffer *gone = pp_stream_v1_create_buffer(s, 32, 32, xrgb);
	pp_stream_v1_write(s, gone, 0, 0, 32, 32, static_cast<uint32_t>(px.size()));
	wl_buffer_destroy(gone);
	wl_buffer *b = pp_stream_v1_create_buffer(s, 32, 32, xrgb);
	auto px2 = xrgb_frame(32, 32, 2);
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
int mode_stall(const ModeArgs &) {
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

int mode_disconnect_mid_frame(const ModeArgs &) {
	int data;
	pp_stream_v1 *s = socket_stream(&data);
	Window w;
	std::string e;
	if (!w.create(&conn, "stream", &e)) return 3;
	wl_buffer *b = pp_stream_v1_create_buffer(s, 64, 64, xrgb);
	pp_stream_v1_write(s, b, 0, 0, 64, 64, 64 * 64 * 4);
	wl_surface_attach(w.surface, b, 0, 0);
	wl_surface_commit(w.surface);
	auto px = xrgb_frame(64, 64, 1);
	wl_display_flush(conn.display);
	send_bytes(data, px.data(), px.size() / 2);
	report();
	_exit(0); // no goodbye
}

// Commit A (stream, bytes held back), then commit B (shm) on the same surface: the
// compositor must show neither until A's bytes arrive, then A, then B.
int mode_held_order(const ModeArgs &args) {
	int data;
	pp_stream_v1 *s = socket_stream(&data);
	Window w;
	std::string e;
	if (!w.create(&conn, "stream", &e)) return 3;
	const int W = 64, H = 64;
	ShmPool pool0, pool2;
	auto f0 = xrgb_frame(W, H, 10), f1 = xrgb_frame(W, H, 11), f2 = xrgb_frame(W, H, 12);
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
	// file named by the mode's argument to let us send A's bytes.
	const char *go_file = args.at(0, "/nonexistent");
	test::wait_until([&] { return access(go_file, F_OK) == 0; }, std::chrono::seconds(10));
	send_bytes(data, f1.data(), f1.size());
	if (!wb.wait(&conn, 10000)) return report();
	printf("order %s %s\n", wa.presented ? "presented" : "discarded", wb.presented ? "presented" : "discarded");
	report();
	hold();
	return 0;
}

// Three buffers on one stream for two surfaces, writes interleaved.
int mode_interleave(const ModeArgs &) {
	int data;
	pp_stream_v1 *s = socket_stream(&data);
	Window big, small;
	std::string e;
	if (!big.create(&conn, "big", &e) || !small.create(&conn, "small", &e)) return 3;
	auto fb = xrgb_frame(96, 64, 21), fs = xrgb_frame(32, 32, 22), fb2 = xrgb_frame(96, 64, 23);
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

// Thousands of stream frames through buffers created and destroyed on the way.
int mode_churn(const ModeArgs &) {
	Window w;
	std::string e;
	if (!w.create(&conn, "stream", &e)) return 3;
	auto px = xrgb_frame(32, 32, 1);
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

const ModeTable kModes = {
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
	{"churn", mode_churn},
};

// "shm" comparison runs need no stream global: they also run against stock wlroots.
bool connect(const std::string &mode, const ModeArgs &args, std::string *error) {
	bool shm_only = args.is(0, "shm") && mode.find("-behind-held-commit") != std::string::npos;
	if (!conn.connect(error)) return false;
	if (conn.stream_manager == nullptr && !shm_only) *error = "no pixelport stream global";
	return conn.stream_manager != nullptr || shm_only;
}

} // namespace

int main(int argc, char *argv[]) { return test::run_mode(argc, argv, kModes, connect); }
