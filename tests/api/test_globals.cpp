// The C API's globals and lifetimes (pixelport.h), in-process: a server display with the plugin
// and a libwayland client on a socketpair, pumped by hand. A host takes the globals it asks for,
// at the versions it asks for; destroy listeners run once; the plugin goes with the display; and
// a host that destroys the plugin before its clients (Wayfire unloads plugins first) leaves them
// working until they disconnect, after which the plugin is freed (its worker threads end).
#include <gtest/gtest.h>

#include "api_host.hpp"

namespace {

using namespace pixelport::test;

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
	EXPECT_EQ(seen->versions.count("wp_fifo_manager_v1"), 0u);
	EXPECT_EQ(seen->versions.count("wp_commit_timing_manager_v1"), 0u);
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
	EXPECT_EQ(pixelport_timing_manager_create(pp, 5), nullptr);
	EXPECT_EQ(pixelport_color_representation_manager_create(pp, 2), nullptr);
	EXPECT_EQ(pixelport_fifo_manager_create(pp, 2), nullptr);
	EXPECT_EQ(pixelport_commit_timing_manager_create(pp, 0), nullptr);
	EXPECT_EQ(pixelport_commit_timing_manager_create(pp, 2), nullptr);
	EXPECT_EQ(pixelport_fifo_manager_create(nullptr, 1), nullptr);
	pixelport_fifo_manager *fifo = pixelport_fifo_manager_create(pp, 1);
	ASSERT_NE(fifo, nullptr);
	EXPECT_EQ(pixelport_fifo_manager_create(pp, 1), nullptr);
	pixelport_fifo_manager_destroy(fifo);
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
	pixelport_fifo_manager_destroy(nullptr);
	pixelport_commit_timing_manager_destroy(nullptr);
	pixelport_destroy(nullptr);
}

// pixelport_create_globals() makes the pacing globals unless the options leave them out.
TEST(ApiGlobals, TheOptionsLeaveEachPacingGlobalOut) {
	for (int off = 0; off < 4; off++) {
		Host host;
		pixelport_options options{};
		options.struct_size = sizeof options;
		options.convert_threads = 1;
		options.fifo_off = off & 1;
		options.commit_timing_off = off & 2;
		pixelport_plugin *pp = pixelport_create(host.display, host.renderer, &options);
		ASSERT_NE(pp, nullptr);
		ASSERT_TRUE(pixelport_create_globals(pp));
		Registry *seen = host.listen();
		EXPECT_EQ(seen->versions.count("wp_fifo_manager_v1"), (off & 1) ? 0u : 1u) << off;
		EXPECT_EQ(seen->versions.count("wp_commit_timing_manager_v1"), (off & 2) ? 0u : 1u) << off;
		EXPECT_EQ(seen->versions["pp_timing_manager_v1"], 4u);
	}
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
	EXPECT_EQ(seen->versions.size(), 6u);
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

// The plugin follows each output it was given until one of them goes: an output destroyed before
// the plugin, and one still there when the plugin goes, leave no listener behind (the sanitizer
// legs see a listener left on a freed list).
TEST(ApiLifetime, OutputsGoBeforeOrAfterThePlugin) {
	Host host;
	wlr_backend *backend = wlr_headless_backend_create(wl_display_get_event_loop(host.display));
	ASSERT_NE(backend, nullptr);
	pixelport_plugin *pp = host.plugin(1);
	ASSERT_NE(pp, nullptr);
	ASSERT_TRUE(pixelport_create_globals(pp));
	wlr_output *first = wlr_headless_add_output(backend, 640, 480);
	wlr_output *second = wlr_headless_add_output(backend, 320, 240);
	ASSERT_NE(first, nullptr);
	ASSERT_NE(second, nullptr);
	pixelport_attach_output(pp, first);
	pixelport_attach_output(pp, second);
	wlr_output_destroy(first);
	Counter plugin_gone;
	pixelport_add_destroy_listener(pp, &plugin_gone.listener);
	pixelport_destroy(pp);
	EXPECT_EQ(plugin_gone.calls, 1);
	wlr_output_destroy(second); // its listeners went with the plugin
	wlr_backend_destroy(backend);
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
