// pixelport-stream-client's modes: every bad request and bad byte count, each with its protocol error, and the byte stream's edge cases (extra bytes, a buffer destroyed in flight, a stall, a hang-up).
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
#include "stream_client.hpp"
#include "wait_until.hpp"

namespace pixelport::stream_client {

using test::xrgb_frame;

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

} // namespace pixelport::stream_client
