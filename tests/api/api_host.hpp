// The in-process host of the API tests: a server display with the plugin and a libwayland
// client on a socketpair, pumped by hand (test_globals.cpp, test_commit_path.cpp).
#pragma once

#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <wayland-client.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "../integration/wait_until.hpp"
#include "pixelport/pixelport.h"
#include "wlr.hpp" // wlroots for C++ (0.20's headers need its help)

namespace pixelport::test {

// Threads of this process named as the plugin's conversion workers: they end (are joined) when
// it is freed. A worker names itself once it runs: up to a second is given for `expected`.
inline int worker_threads(int expected) {
	int n = 0;
	wait_until(
		[&] {
			n = 0;
			for (const auto &task : std::filesystem::directory_iterator("/proc/self/task")) {
				std::ifstream comm(task.path() / "comm");
				std::string name;
				std::getline(comm, name);
				n += name == "pp-convert";
			}
			return n == expected;
		},
		std::chrono::seconds(1));
	return n;
}

struct Counter {
	wl_listener listener{};
	int calls = 0;
	Counter() {
		listener.notify = [](wl_listener *l, void *) { reinterpret_cast<Counter *>(l)->calls++; };
	}
};

// The globals a client sees: interface -> version, and the names of those removed since.
struct Registry {
	std::map<std::string, uint32_t> versions;
	std::map<uint32_t, std::string> names;
	wl_shm *shm = nullptr;
	wl_compositor *compositor = nullptr;
	wl_subcompositor *subcompositor = nullptr;
	wl_registry *registry = nullptr;
};

const wl_registry_listener kRegistryListener = {
	.global =
		[](void *data, wl_registry *registry, uint32_t name, const char *interface, uint32_t version) {
			auto *r = static_cast<Registry *>(data);
			r->versions[interface] = version;
			r->names[name] = interface;
			if (strcmp(interface, "wl_shm") == 0 && r->shm == nullptr) {
				r->shm = static_cast<wl_shm *>(wl_registry_bind(registry, name, &wl_shm_interface, 1));
			}
			if (strcmp(interface, "wl_subcompositor") == 0 && r->subcompositor == nullptr) {
				r->subcompositor = static_cast<wl_subcompositor *>(
					wl_registry_bind(registry, name, &wl_subcompositor_interface, 1));
			}
			if (strcmp(interface, "wl_compositor") == 0 && r->compositor == nullptr) {
				r->compositor = static_cast<wl_compositor *>(
					wl_registry_bind(registry, name, &wl_compositor_interface, 4));
			}
		},
	.global_remove =
		[](void *data, wl_registry *, uint32_t name) {
			auto *r = static_cast<Registry *>(data);
			r->versions.erase(r->names[name]);
		},
};

class Host {
public:
	Host() {
		display = wl_display_create();
		renderer = wlr_pixman_renderer_create();
		int fds[2];
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0) {
			client = wl_client_create(display, fds[0]);
			conn = wl_display_connect_to_fd(fds[1]);
		}
	}
	~Host() {
		disconnect();
		if (display != nullptr) destroy_display();
		wlr_renderer_destroy(renderer);
	}

	pixelport_plugin *plugin(uint32_t threads = 1) {
		pixelport_options options{};
		options.struct_size = sizeof options;
		options.convert_threads = threads;
		return pixelport_create(display, renderer, &options);
	}

	// One turn of each side: the server's sources (waiting up to `server_ms`), then the
	// client's events (waiting up to `client_ms`). The client gone, the server's side only.
	void turn(int server_ms, int client_ms) {
		if (conn == nullptr) {
			wl_event_loop_dispatch(wl_display_get_event_loop(display), server_ms);
			return;
		}
		wl_display_flush(conn);
		wl_event_loop_dispatch(wl_display_get_event_loop(display), server_ms);
		wl_display_flush_clients(display);
		while (wl_display_prepare_read(conn) != 0) wl_display_dispatch_pending(conn);
		pollfd pfd = {wl_display_get_fd(conn), POLLIN, 0};
		if (poll(&pfd, 1, client_ms) > 0) {
			wl_display_read_events(conn);
		} else {
			wl_display_cancel_read(conn);
		}
		wl_display_dispatch_pending(conn);
	}

	// Turns (at most `turns`) until the client's wl_display.sync is answered.
	void sync(int turns, int client_ms) {
		bool done = false;
		wl_callback *callback = wl_display_sync(conn);
		static const wl_callback_listener listener = {
			.done = [](void *data, wl_callback *, uint32_t) { *static_cast<bool *>(data) = true; },
		};
		wl_callback_add_listener(callback, &listener, &done);
		for (int i = 0; i < turns && !done && wl_display_get_error(conn) == 0; i++) turn(0, client_ms);
		wl_callback_destroy(callback); // the client's proxy, answered or not
	}

	// Server and client take turns until the client's wl_display.sync is answered.
	void roundtrip() { sync(100, 10); }

	Registry *listen() {
		registry.registry = wl_display_get_registry(conn);
		wl_registry_add_listener(registry.registry, &kRegistryListener, &registry);
		roundtrip();
		return &registry;
	}

	// A wl_shm_pool of `size` bytes from a memfd.
	wl_shm_pool *pool(int32_t size) {
		int fd = memfd_create("pool", MFD_CLOEXEC);
		if (fd < 0 || ftruncate(fd, size) != 0) return nullptr;
		wl_shm_pool *p = wl_shm_create_pool(registry.shm, fd, size);
		close(fd);
		return p;
	}

	// The client goes; the server sees it and runs what that queued (idle sources).
	void disconnect() {
		if (conn == nullptr) return;
		if (registry.shm != nullptr) wl_shm_destroy(registry.shm);
		if (registry.compositor != nullptr) wl_compositor_destroy(registry.compositor);
		if (registry.subcompositor != nullptr) wl_subcompositor_destroy(registry.subcompositor);
		if (registry.registry != nullptr) wl_registry_destroy(registry.registry);
		wl_display_disconnect(conn);
		conn = nullptr;
		if (display == nullptr) return;
		for (int i = 0; i < 3; i++) wl_event_loop_dispatch(wl_display_get_event_loop(display), 10);
	}

	void destroy_display() {
		wl_display_destroy_clients(display);
		wl_display_destroy(display);
		display = nullptr;
	}

	wl_display *display = nullptr;
	wlr_renderer *renderer = nullptr;
	wl_client *client = nullptr;
	wl_display *conn = nullptr; // the client's end
	Registry registry;
};

} // namespace pixelport::test
