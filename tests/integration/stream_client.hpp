// pixelport-stream-client's shared parts. The program is split by concern: stream_client.cpp
// (the usage, the mode table, main), stream_client_common.cpp (the helpers below),
// stream_client_fds.cpp, stream_client_held.cpp, stream_client_errors.cpp and
// stream_client_frames.cpp (the modes, one function each, named after the mode).
#pragma once

#include <drm_fourcc.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "client_modes.hpp"
#include "pixelport-stream-v1-client-protocol.h"
#include "transport.hpp"
#include "wayland_client.hpp"

namespace pixelport::stream_client {

using namespace pixelport::client;
using test::ModeArgs;

/** The client's one connection. */
extern Connection conn;

/** The verdict line (client_verdict.hpp), and staying connected until killed. */
int report();
void hold();

/** A stream on a fresh socketpair; *data gets our (blocking) end. */
pp_stream_v1 *socket_stream(int *data);
/** Writes all `n` bytes to `fd` (blocking); exits with status 3 when it cannot. */
void send_bytes(int fd, const uint8_t *p, size_t n);

// A commit the plugin holds, for the modes that act behind it: `kind` "shm" (a small wl_shm
// buffer), "large" (NV12 over the conversion hold threshold, 1.25 Mi pixels) or else a stream
// buffer whose 1024 bytes are announced but not sent until send_announced().
struct HeldCommit {
	ShmPool pool;
	int pipe_write = -1;
	pp_stream_v1 *stream = nullptr; // the stream commit's

	/** `waiter`, when given, is armed for the held commit (its frame and presentation). */
	bool commit(wl_surface *surface, const char *kind, std::string *error, CommitWaiter *waiter = nullptr) {
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
			stream = pp_stream_manager_v1_create_stream(conn.stream_manager, p[0]);
			close(p[0]);
			pipe_write = p[1];
			held = pp_stream_v1_create_buffer(stream, 16, 16, DRM_FORMAT_XRGB8888);
			pp_stream_v1_write(stream, held, 0, 0, 16, 16, 1024); // no byte sent yet
		}
		wl_surface_attach(surface, held, 0, 0);
		wl_surface_damage_buffer(surface, 0, 0, INT32_MAX, INT32_MAX);
		if (waiter != nullptr) waiter->arm(&conn, surface);
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

/** Attaches `buffer` to w's surface, commits, and waits (10 s) for it to be presented. */
bool show(Window &w, wl_buffer *buffer, int width, int height);
/** Prints "attacking", sleeps `ms` answering nothing (the attacker may have frozen the compositor), exits. */
[[noreturn]] void hold_then_exit(int ms);
/** Clears O_NONBLOCK on our copy of stream `s`'s data fd, announces 16384 bytes, sends 100, holds. */
[[noreturn]] void blocking_attack(pp_stream_v1 *s, int ours, int writer, int hold_ms);
/** create_stream with `fd` (which must end in invalid_fd); the verdict. */
int stream_from_fd(int fd);
/** `act` on a stream over a fresh socketpair, then the verdict. */
int simple_error(const std::function<void(pp_stream_v1 *, int)> &act);

constexpr uint32_t xrgb = DRM_FORMAT_XRGB8888;

// ---- the modes: one function each, named after the mode ----
// stream_client_fds.cpp
int mode_block_pipe(const ModeArgs &args);
int mode_block_socket(const ModeArgs &args);
int mode_dgram_socket(const ModeArgs &args);
int mode_seqpacket_socket(const ModeArgs &args);
int mode_udp_socket(const ModeArgs &args);
int mode_unconnected_socket(const ModeArgs &args);
int mode_listening_socket(const ModeArgs &args);
int mode_fifo_read_write(const ModeArgs &args);
int mode_fifo_frame(const ModeArgs &args);
int mode_many_streams(const ModeArgs &args);
int mode_too_many_streams(const ModeArgs &args);
int mode_orphan_cycles(const ModeArgs &args);
int mode_big_buffers(const ModeArgs &args);
// stream_client_held.cpp
int mode_role_after_held_commit(const ModeArgs &args);
int mode_unmap_behind_held_commit(const ModeArgs &args);
int mode_role_destroyed_behind_held_commit(const ModeArgs &args);
int mode_orphan_behind_held_commit(const ModeArgs &args);
// stream_client_errors.cpp
int mode_buffer_over_limit(const ModeArgs &args);
int mode_not_a_socket(const ModeArgs &args);
int mode_write_end_of_pipe(const ModeArgs &args);
int mode_unknown_format(const ModeArgs &args);
int mode_zero_size(const ModeArgs &args);
int mode_negative_size(const ModeArgs &args);
int mode_huge_size(const ModeArgs &args);
int mode_rect_outside(const ModeArgs &args);
int mode_rect_overflowing(const ModeArgs &args);
int mode_rect_off_chroma_grid(const ModeArgs &args);
int mode_bad_length(const ModeArgs &args);
int mode_foreign_buffer(const ModeArgs &args);
int mode_too_many_buffers(const ModeArgs &args);
int mode_too_many_bytes_in_flight(const ModeArgs &args);
int mode_eof_mid_write(const ModeArgs &args);
int mode_extra_bytes(const ModeArgs &args);
int mode_destroy_in_flight(const ModeArgs &args);
int mode_stall(const ModeArgs &args);
int mode_disconnect_mid_frame(const ModeArgs &args);
// stream_client_frames.cpp
int mode_held_order(const ModeArgs &args);
int mode_interleave(const ModeArgs &args);
int mode_churn(const ModeArgs &args);
int mode_burst_frames(const ModeArgs &args);

} // namespace pixelport::stream_client
