// pixelport-stream-client's modes: frames shown in commit order, several surfaces on one stream, and churn.
#include <drm_fourcc.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
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

// N WxH NV12 frames on one socket stream, each once the last was presented. As much of a
// frame as the socket holds is sent before its write is announced, so that the compositor
// finds it all there at once: with a send buffer of a frame or more (SO_SNDBUFFORCE, which
// takes CAP_NET_ADMIN; else SO_SNDBUF, capped by net.core.wmem_max), the whole frame arrives
// in one burst. Prints "burst BYTES presented K" (BYTES: what was queued before each announce).
int mode_burst_frames(const ModeArgs &args) {
	const int n = static_cast<int>(args.number(0)), w = static_cast<int>(args.number(1)),
		  h = static_cast<int>(args.number(2));
	if (n <= 0 || w <= 0 || h <= 0 || w % 2 != 0 || h % 2 != 0) return 2;
	const size_t frame = static_cast<size_t>(w) * static_cast<size_t>(h) * 3 / 2;
	int fds[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0) return 3;
	int want = static_cast<int>(std::min<size_t>(2 * frame + (1 << 20), INT32_MAX / 2));
	if (setsockopt(fds[1], SOL_SOCKET, SO_SNDBUFFORCE, &want, sizeof want) != 0)
		setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &want, sizeof want);
	pp_stream_v1 *s = pp_stream_manager_v1_create_stream(conn.stream_manager, fds[0]);
	close(fds[0]);
	const int data = fds[1];
	fcntl(data, F_SETFL, fcntl(data, F_GETFL) | O_NONBLOCK);
	Window win;
	std::string e;
	if (!win.create(&conn, "burst", &e)) return 3;
	wl_buffer *b = pp_stream_v1_create_buffer(s, w, h, DRM_FORMAT_NV12);
	std::vector<uint8_t> bytes(frame, 0x80);
	size_t burst = frame;
	int presented = 0;
	for (int i = 0; i < n && wl_display_get_error(conn.display) == 0; i++) {
		size_t sent = 0;
		while (sent < frame) { // what the socket takes now
			const ssize_t k = write(data, bytes.data() + sent, frame - sent);
			if (k <= 0) break;
			sent += static_cast<size_t>(k);
		}
		burst = std::min(burst, sent);
		CommitWaiter shown;
		pp_stream_v1_write(s, b, 0, 0, w, h, static_cast<uint32_t>(frame));
		wl_surface_attach(win.surface, b, 0, 0);
		wl_surface_damage_buffer(win.surface, 0, 0, w, h);
		shown.arm(&conn, win.surface);
		wl_surface_commit(win.surface);
		wl_display_flush(conn.display);
		while (sent < frame) { // the rest, as the compositor reads
			pollfd pfd = {data, POLLOUT, 0};
			if (poll(&pfd, 1, 10000) <= 0) return 3;
			const ssize_t k = write(data, bytes.data() + sent, frame - sent);
			if (k < 0 && errno != EAGAIN) return 3;
			if (k > 0) sent += static_cast<size_t>(k);
		}
		if (shown.wait(&conn, 30000) && shown.presented) presented++;
	}
	printf("burst %zu presented %d\n", burst, presented);
	return report();
}

} // namespace pixelport::stream_client
