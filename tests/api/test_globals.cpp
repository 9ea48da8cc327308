// The C API's globals and lifetimes (pixelport.h), in-process: a server display with the plugin
// and a libwayland client on a socketpair, pumped by hand. A host takes the globals it asks for,
// at the versions it asks for; destroy listeners run once; the plugin goes with the display; and
// a host that destroys the plugin before its clients (Wayfire unloads plugins first) leaves them
// working until they disconnect, after which the plugin is freed (its worker threads end).
#include <gtest/gtest.h>
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

#include "pixelport/pixelport.h"
#include "wlr.hpp" // wlroots for C++ (0.20's headers need its help)

namespace {

// Threads of this process named as the plugin's conversion workers: they end (are joined) when
// it is freed. A worker names itself once it runs: up to a second is given for `expected`.
int worker_threads(int expected) {
	int n = 0;
	for (int tries = 0; tries < 100; tries++) {
		n = 0;
		for (const auto &task : std::filesystem::directory_iterator("/proc/self/task")) {
			std::ifstream comm(task.path() / "comm");
			std::string name;
			std::getline(comm, name);
			n += name == "pp-convert";
		}
		if (n == expected) break;
		usleep(10000);
	}
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

	// Server and client take turns until the client's wl_display.sync is answered.
	void roundtrip() {
		bool done = false;
		wl_callback *sync = wl_display_sync(conn);
		static const wl_callback_listener listener = {
			.done = [](void *data, wl_callback *, uint32_t) { *static_cast<bool *>(data) = true; },
		};
		wl_callback_add_listener(sync, &listener, &done);
		for (int i = 0; i < 100 && !done && wl_display_get_error(conn) == 0; i++) {
			wl_display_flush(conn);
			wl_event_loop_dispatch(wl_display_get_event_loop(display), 0);
			wl_display_flush_clients(display);
			while (wl_display_prepare_read(conn) != 0) wl_display_dispatch_pending(conn);
			pollfd pfd = {wl_display_get_fd(conn), POLLIN, 0};
			if (poll(&pfd, 1, 10) > 0) {
				wl_display_read_events(conn);
			} else {
				wl_display_cancel_read(conn);
			}
			wl_display_dispatch_pending(conn);
		}
		wl_callback_destroy(sync); // the client's proxy, answered or not
	}

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

TEST(ApiGlobals, OnlyTheGlobalsAskedForAreAdvertisedAtTheirVersions) {
	Host host;
	ASSERT_NE(host.conn, nullptr);
	pixelport_plugin *pp = host.plugin();
	ASSERT_NE(pp, nullptr);
	ASSERT_NE(pixelport_shm_create(pp, 1), nullptr);
	ASSERT_NE(pixelport_timing_manager_create(pp, 2), nullptr);
	Registry *seen = host.listen();
	EXPECT_EQ(seen->versions.count("wl_shm"), 1u);
	EXPECT_EQ(seen->versions["wl_shm"], 1u);
	EXPECT_EQ(seen->versions["pp_timing_manager_v1"], 2u);
	EXPECT_EQ(seen->versions.count("pp_stream_manager_v1"), 0u);
	EXPECT_EQ(seen->versions.count("wp_color_representation_manager_v1"), 0u);
	// A global made later is announced to clients already connected.
	ASSERT_NE(pixelport_color_representation_manager_create(pp, 1), nullptr);
	host.roundtrip();
	EXPECT_EQ(seen->versions["wp_color_representation_manager_v1"], 1u);
	EXPECT_EQ(wl_display_get_error(host.conn), 0);
}

TEST(ApiGlobals, VersionsTheProtocolsLackAndSecondGlobalsAreRefused) {
	Host host;
	pixelport_plugin *pp = host.plugin();
	ASSERT_NE(pp, nullptr);
	EXPECT_EQ(pixelport_shm_create(pp, 0), nullptr);
	EXPECT_EQ(pixelport_shm_create(pp, 3), nullptr);
	EXPECT_EQ(pixelport_stream_manager_create(pp, 2), nullptr);
	EXPECT_EQ(pixelport_timing_manager_create(pp, 4), nullptr);
	EXPECT_EQ(pixelport_color_representation_manager_create(pp, 2), nullptr);
	EXPECT_EQ(pixelport_shm_create(nullptr, 2), nullptr);
	pixelport_shm *shm = pixelport_shm_create(pp, 2);
	ASSERT_NE(shm, nullptr);
	EXPECT_EQ(pixelport_shm_create(pp, 2), nullptr); // one wl_shm per plugin
	// Once destroyed, another may be made.
	pixelport_shm_destroy(shm);
	EXPECT_NE(pixelport_shm_create(pp, 2), nullptr);
	ASSERT_TRUE(pixelport_create_globals(pp) == false); // wl_shm is there already: nothing made
	pixelport_shm_destroy(nullptr);
	pixelport_stream_manager_destroy(nullptr);
	pixelport_timing_manager_destroy(nullptr);
	pixelport_color_representation_manager_destroy(nullptr);
	pixelport_destroy(nullptr);
}

TEST(ApiGlobals, ADestroyedGlobalLeavesClientsViewButWhatTheyMadeOfItWorks) {
	Host host;
	pixelport_plugin *pp = host.plugin();
	ASSERT_NE(pp, nullptr);
	pixelport_shm *shm = pixelport_shm_create(pp, 2);
	ASSERT_NE(shm, nullptr);
	Counter gone;
	pixelport_shm_add_destroy_listener(shm, &gone.listener);
	Registry *seen = host.listen();
	ASSERT_NE(seen->shm, nullptr);
	wl_shm_pool *pool = host.pool(64 * 64 * 4);
	ASSERT_NE(pool, nullptr);
	pixelport_shm_destroy(shm);
	EXPECT_EQ(gone.calls, 1);
	host.roundtrip();
	EXPECT_EQ(seen->versions.count("wl_shm"), 0u); // global_remove reached the client
	// The bound wl_shm and its pool still serve the client.
	wl_buffer *buffer = wl_shm_pool_create_buffer(pool, 0, 64, 64, 64 * 4, WL_SHM_FORMAT_XRGB8888);
	wl_shm_pool *second = host.pool(4096);
	host.roundtrip();
	EXPECT_EQ(wl_display_get_error(host.conn), 0);
	wl_buffer_destroy(buffer);
	wl_shm_pool_destroy(second);
	wl_shm_pool_destroy(pool);
	host.roundtrip();
	EXPECT_EQ(wl_display_get_error(host.conn), 0);
	EXPECT_EQ(gone.calls, 1); // not again when the plugin goes with the display
	host.destroy_display();
	EXPECT_EQ(gone.calls, 1);
}

TEST(ApiLifetime, ThePluginAndItsGlobalsGoWithTheDisplay) {
	Host host;
	pixelport_plugin *pp = host.plugin(2);
	ASSERT_NE(pp, nullptr);
	ASSERT_TRUE(pixelport_create_globals(pp));
	EXPECT_EQ(worker_threads(2), 2);
	Counter plugin_gone;
	pixelport_add_destroy_listener(pp, &plugin_gone.listener);
	pixelport_timing_manager *timing = pixelport_timing_manager_create(pp, 3);
	EXPECT_EQ(timing, nullptr); // pixelport_create_globals made it
	Registry *seen = host.listen();
	EXPECT_EQ(seen->versions.size(), 4u);
	host.destroy_display(); // no pixelport_destroy: the display takes the plugin
	EXPECT_EQ(plugin_gone.calls, 1);
	EXPECT_EQ(worker_threads(0), 0);
}

// Wayfire's order: plugins unloaded, then clients destroyed. Objects the client holds keep
// working; the plugin is freed once the client is gone.
TEST(ApiLifetime, DestroyedBeforeItsClientsThePluginServesThemUntilTheyGo) {
	Host host;
	pixelport_plugin *pp = host.plugin(1);
	ASSERT_NE(pp, nullptr);
	ASSERT_TRUE(pixelport_create_globals(pp));
	Counter plugin_gone;
	pixelport_add_destroy_listener(pp, &plugin_gone.listener);
	Registry *seen = host.listen();
	ASSERT_NE(seen->shm, nullptr);
	wl_shm_pool *pool = host.pool(64 * 64 * 4);
	wl_buffer *buffer = wl_shm_pool_create_buffer(pool, 0, 64, 64, 64 * 4, WL_SHM_FORMAT_XRGB8888);
	host.roundtrip();
	pixelport_destroy(pp);
	EXPECT_EQ(plugin_gone.calls, 1);
	host.roundtrip();
	EXPECT_EQ(seen->versions.size(), 0u); // every global removed
	EXPECT_EQ(worker_threads(1), 1); // still there for the client
	wl_buffer *second = wl_shm_pool_create_buffer(pool, 0, 32, 32, 32 * 4, WL_SHM_FORMAT_ARGB8888);
	wl_shm_pool *another = host.pool(4096);
	host.roundtrip();
	EXPECT_EQ(wl_display_get_error(host.conn), 0);
	wl_buffer_destroy(second);
	wl_buffer_destroy(buffer);
	wl_shm_pool_destroy(another);
	host.roundtrip();
	// The pool is left to the disconnect (only the client's proxy is freed here).
	wl_proxy_destroy(reinterpret_cast<wl_proxy *>(pool));
	host.disconnect();
	EXPECT_EQ(worker_threads(0), 0); // freed with its last client
	EXPECT_EQ(plugin_gone.calls, 1);
}

// The same order, but the host destroys the display with the client still connected: the
// display's destroy frees the plugin (the idle queued by the client's destroy never runs).
TEST(ApiLifetime, DestroyedBeforeItsClientsAndThenTheDisplayThePluginIsFreedOnce) {
	Host host;
	pixelport_plugin *pp = host.plugin(1);
	ASSERT_NE(pp, nullptr);
	ASSERT_NE(pixelport_shm_create(pp, 2), nullptr);
	Registry *seen = host.listen();
	ASSERT_NE(seen->shm, nullptr);
	wl_shm_pool *pool = host.pool(4096);
	host.roundtrip();
	wl_proxy_destroy(reinterpret_cast<wl_proxy *>(pool)); // the client's proxy: the pool stays
	pixelport_destroy(pp);
	EXPECT_EQ(worker_threads(1), 1);
	host.destroy_display(); // the client is destroyed, then the display
	EXPECT_EQ(worker_threads(0), 0);
}

// Destroyed before its client while a worker converts the client's commit (a surface without a
// role: a 2048x2048 NV12 buffer is converted on a worker as it applies): the conversion finishes or
// is dropped with the client, and the plugin goes after it.
TEST(ApiLifetime, DestroyedBeforeItsClientsWhileAWorkerConvertsTheirCommit) {
	Host host;
	wlr_compositor *compositor = wlr_compositor_create(host.display, 6, host.renderer);
	pixelport_plugin *pp = host.plugin(1);
	ASSERT_NE(pp, nullptr);
	ASSERT_NE(pixelport_shm_create(pp, 2), nullptr);
	ASSERT_TRUE(pixelport_attach_compositor(pp, compositor));
	Registry *seen = host.listen();
	ASSERT_NE(seen->shm, nullptr);
	ASSERT_NE(seen->compositor, nullptr);
	const int w = 2048, h = 2048, size = w * h * 3 / 2;
	wl_shm_pool *pool = host.pool(size);
	wl_buffer *buffer = wl_shm_pool_create_buffer(pool, 0, w, h, w, WL_SHM_FORMAT_NV12);
	wl_surface *surface = wl_compositor_create_surface(seen->compositor);
	wl_surface_attach(surface, buffer, 0, 0);
	wl_surface_damage_buffer(surface, 0, 0, w, h);
	wl_surface_commit(surface);
	host.roundtrip();
	pixelport_destroy(pp); // the commit may still be on the worker
	EXPECT_EQ(worker_threads(1), 1);
	wl_surface_commit(surface); // the surface still works for its client
	host.roundtrip();
	EXPECT_EQ(wl_display_get_error(host.conn), 0);
	// Left to the disconnect: only the client's proxies are freed here.
	for (void *proxy : {static_cast<void *>(surface), static_cast<void *>(buffer), static_cast<void *>(pool)}) {
		wl_proxy_destroy(static_cast<wl_proxy *>(proxy));
	}
	host.disconnect();
	EXPECT_EQ(worker_threads(0), 0);
}

// Destroyed with no client bound: freed at once.
TEST(ApiLifetime, DestroyedWithNoClientItIsFreedAtOnce) {
	Host host;
	pixelport_plugin *pp = host.plugin(1);
	ASSERT_NE(pp, nullptr);
	ASSERT_TRUE(pixelport_create_globals(pp));
	Counter plugin_gone;
	pixelport_add_destroy_listener(pp, &plugin_gone.listener);
	EXPECT_EQ(worker_threads(1), 1);
	pixelport_destroy(pp);
	EXPECT_EQ(plugin_gone.calls, 1);
	EXPECT_EQ(worker_threads(0), 0);
}

} // namespace
