// hostile_client's helpers, shared by its modes (hostile_client.hpp).
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

Connection conn;

int report() { return test::report(conn); }
void hold() { test::hold(conn); }

int memfd(size_t size) {
	int fd = memfd_create("hostile", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0 || ftruncate(fd, static_cast<off_t>(size)) < 0) {
		perror("memfd");
		exit(3);
	}
	return fd;
}

wl_shm_pool *pool_of(int fd, int32_t size) {
	wl_shm_pool *pool = wl_shm_create_pool(conn.shm, fd, size);
	return pool;
}

// Commits `buffer` on a new toplevel and waits until it was presented.
bool show(Window *window, wl_buffer *buffer, int w, int h) {
	CommitWaiter waiter;
	wl_surface_attach(window->surface, buffer, 0, 0);
	wl_surface_damage_buffer(window->surface, 0, 0, w, h);
	waiter.arm(&conn, window->surface);
	wl_surface_commit(window->surface);
	return waiter.wait(&conn, 5000) && waiter.presented;
}

} // namespace pixelport::hostile_client
