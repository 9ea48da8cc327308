// pixelport-hostile's modes: nothing a client hands over keeps it alive; caps on what it makes.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

#include <drm_fourcc.h>

#include "client_modes.hpp"
#include "client_verdict.hpp"
#include "pattern.hpp"
#include "transport.hpp"
#include "wayland_client.hpp"

#include "hostile_client.hpp"

namespace pixelport::hostile_client {

// ---- lifetimes: nothing a client hands over keeps it alive; caps on what it makes ----------

// A 4096x4096 NV12 frame on a toplevel (a 64 MiB converted image), then a data fd that
// would keep this very connection open if the compositor held it; _exit right after the
// verdict. Its first line says whether the large frame was shown.
int own_connection_attack(int data_fd) {
	if (conn.stream_manager == nullptr) return 3;
	Window window;
	std::string e;
	if (!window.create(&conn, "hostile", &e)) return 3;
	const int w = 4096, h = 4096;
	ShmLayout layout;
	if (!shm_layout(DRM_FORMAT_NV12, w, h, w, &layout)) return 3;
	int fd = memfd(layout.size);
	wl_shm_pool *pool = pool_of(fd, static_cast<int32_t>(layout.size));
	wl_buffer *buffer = wl_shm_pool_create_buffer(pool, 0, w, h, w, WL_SHM_FORMAT_NV12);
	printf("%s\n", show(&window, buffer, w, h) ? "shown" : "not shown");
	pp_stream_manager_v1_create_stream(conn.stream_manager, data_fd);
	report();
	_exit(0);
}

int mode_stream_own_connection_fd(const ModeArgs &) { return own_connection_attack(wl_display_get_fd(conn.display)); }

int mode_stream_display_socket_fd(const ModeArgs &) {
	// A second connection to the display's socket: the compositor would serve it as a
	// client of its own, whose peer end it holds.
	const char *dir = getenv("XDG_RUNTIME_DIR"), *name = getenv("WAYLAND_DISPLAY");
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sockaddr_un addr = {};
	addr.sun_family = AF_UNIX;
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/%s", dir ? dir : "", name ? name : "wayland-0");
	if (connect(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0) return 3;
	return own_connection_attack(fd);
}

// A socket pair whose queued bytes carry this connection's fd: the compositor holding the
// receiving end would hold the connection in flight.
ssize_t send_own_connection(int over) { return send_fd(over, wl_display_get_fd(conn.display)); }

int mode_stream_fd_carrying_own_connection(const ModeArgs &) {
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return 3;
	if (send_own_connection(sv[0]) != 1) return 3;
	return own_connection_attack(sv[1]);
}

int mode_stream_fd_own_connection_sent_later(const ModeArgs &) {
	// The socket is clean when handed over; the connection's fd follows on it. Prints
	// whether the kernel let it through ("sent") or refused it ("refused").
	if (conn.stream_manager == nullptr) return 3;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return 3;
	pp_stream_manager_v1_create_stream(conn.stream_manager, sv[1]);
	close(sv[1]);
	if (!conn.roundtrip()) return report();
	printf("%s\n", send_own_connection(sv[0]) == 1 ? "sent" : "refused");
	report();
	_exit(0);
}

int mode_pool_dev_zero(const ModeArgs &) {
	// Shared anonymous memory the compositor's pages would back.
	int fd = open("/dev/zero", O_RDWR | O_CLOEXEC);
	pool_of(fd, 1 << 20);
	return report();
}

// One pool grown by one byte `count` times with a 1x1 buffer made after each growth and
// kept; the last one committed and shown. Exits without cleaning up.
int mode_pool_grow_storm(const ModeArgs &args) {
	const long count = args.number(0); // the mode's argument
	int32_t size = 4096;
	int fd = memfd(static_cast<size_t>(size + count));
	wl_shm_pool *pool = pool_of(fd, size);
	wl_buffer *last = nullptr;
	for (long i = 0; i < count; i++) {
		wl_shm_pool_resize(pool, ++size);
		last = wl_shm_pool_create_buffer(pool, 0, 1, 1, 4, WL_SHM_FORMAT_XRGB8888);
		if (i % 1000 == 999 && !conn.roundtrip()) return report();
	}
	Window window;
	std::string e;
	if (!window.create(&conn, "hostile", &e)) return 3;
	if (!show(&window, last, 1, 1)) return report();
	report();
	_exit(0);
}

// The same, each buffer committed and shown on one surface right after its growth: a
// renderer reads each from the mapping it was made from, never more than a few at once.
int mode_pool_grow_commit(const ModeArgs &args) {
	const long count = args.number(0); // the mode's argument
	int32_t size = 4096;
	int fd = memfd(static_cast<size_t>(size + count));
	wl_shm_pool *pool = pool_of(fd, size);
	Window window;
	std::string e;
	if (!window.create(&conn, "hostile", &e)) return 3;
	for (long i = 0; i < count; i++) {
		wl_shm_pool_resize(pool, ++size);
		wl_buffer *buffer = wl_shm_pool_create_buffer(pool, 0, 1, 1, 4, WL_SHM_FORMAT_XRGB8888);
		wl_surface_attach(window.surface, buffer, 0, 0);
		wl_surface_damage_buffer(window.surface, 0, 0, 1, 1);
		wl_surface_commit(window.surface);
		wl_buffer_destroy(buffer);
		if (i % 200 == 199 && !conn.roundtrip()) return report();
	}
	report();
	_exit(0);
}

// `count` objects of one kind, then "made N" and a hold until killed (teardown timing) or,
// when the compositor refused one, its verdict.
int made(long n) {
	if (!conn.roundtrip()) return report();
	printf("made %ld\n", n);
	fflush(stdout);
	hold();
	return 0;
}

int mode_many_pools(const ModeArgs &args) {
	const long count = args.number(0); // the mode's argument
	for (long i = 0; i < count; i++) {
		int fd = memfd(4096);
		pool_of(fd, 4096);
		close(fd);
		if (i % 500 == 499 && !conn.roundtrip()) return report();
	}
	return made(count);
}

int mode_many_buffers(const ModeArgs &args) {
	const long count = args.number(0); // the mode's argument
	int fd = memfd(4096);
	wl_shm_pool *pool = pool_of(fd, 4096);
	for (long i = 0; i < count; i++) {
		wl_shm_pool_create_buffer(pool, 0, 1, 1, 4, WL_SHM_FORMAT_XRGB8888);
		if (i % 5000 == 4999 && !conn.roundtrip()) return report();
	}
	return made(count);
}

// Surfaces without a role, each showing its own 2x2 NV12 buffer: an image each (converted
// in the idle passes after the commits; a converted buffer is released once converted).
int mode_many_images(const ModeArgs &args) {
	const long count = args.number(0); // the mode's argument
	const int32_t size = 6; // 2x2 NV12
	int fd = memfd(static_cast<size_t>(size * count));
	wl_shm_pool *pool = pool_of(fd, static_cast<int32_t>(size * count));
	long released = 0;
	static const wl_buffer_listener counted = {
		.release = [](void *data, wl_buffer *) { ++*static_cast<long *>(data); },
	};
	for (long i = 0; i < count; i++) {
		wl_surface *surface = wl_compositor_create_surface(conn.compositor);
		wl_buffer *buffer =
			wl_shm_pool_create_buffer(pool, static_cast<int32_t>(i * size), 2, 2, 2, WL_SHM_FORMAT_NV12);
		wl_buffer_add_listener(buffer, &counted, &released);
		wl_surface_attach(surface, buffer, 0, 0);
		wl_surface_damage_buffer(surface, 0, 0, 2, 2);
		wl_surface_commit(surface);
		if (i % 1000 == 999 && !conn.roundtrip()) return report();
	}
	// Every image made (each buffer released), or the compositor refused one (an error).
	for (int i = 0; i < 100 && released < count; i++) {
		if (!conn.dispatch_timeout(100) && wl_display_get_error(conn.display) != 0) break;
	}
	return made(count);
}

int mode_many_color_surfaces(const ModeArgs &args) {
	const long count = args.number(0); // the mode's argument
	if (conn.color_representation == nullptr) return 3;
	for (long i = 0; i < count; i++) {
		wl_surface *surface = wl_compositor_create_surface(conn.compositor);
		wp_color_representation_manager_v1_get_surface(conn.color_representation, surface);
		if (i % 5000 == 4999 && !conn.roundtrip()) return report();
	}
	return made(count);
}

} // namespace pixelport::hostile_client
