// pixelport-stream-client's helpers, shared by its modes (stream_client.hpp).
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
#include "stream_client.hpp"

namespace pixelport::stream_client {

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

} // namespace pixelport::stream_client
