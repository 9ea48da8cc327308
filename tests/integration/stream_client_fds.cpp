// pixelport-stream-client's modes: fd kinds, stream and buffer caps, and attacks that hold the compositor's reads (blocking fds, orphaned writers).
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
	const bool small = args.is(1, "small"); // 64x64 buffers: the baseline of the same requests
	const int32_t w = small ? 64 : 16384; // h stays under 65536 up to 4 GiB
	int32_t h = small ? 64 : static_cast<int32_t>(conn.stream_max_buffer_bytes / (4u * w));
	uint64_t t0 = now_ns();
	for (int i = 0; i < n; i++) pp_stream_v1_create_buffer(s, w, h, DRM_FORMAT_XRGB8888);
	conn.roundtrip();
	printf("created %d in %llu\n", n, static_cast<unsigned long long>((now_ns() - t0) / 1000));
	return report();
}

} // namespace pixelport::stream_client
