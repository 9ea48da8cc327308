// pixelport-compositor answers xdg_toplevel.set_fullscreen and set_maximized as a desktop
// compositor does: a configure of the output's size with the state (also for a request made
// before the window maps, as waylandsink fullscreen=true makes it), the window at that output's
// corner; leaving gives back the size it had. The test process is the client (libwayland).
#include <gtest/gtest.h>

#include <stdlib.h>
#include <string.h>

#include "harness.hpp"
#include "wayland_client.hpp"

using namespace pixelport;
using namespace pixelport::test;

namespace {

// One toplevel and what the compositor last configured it to.
struct Toplevel {
	client::Connection *conn = nullptr;
	wl_surface *surface = nullptr;
	xdg_surface *xsurface = nullptr;
	xdg_toplevel *toplevel = nullptr;
	int32_t width = -1, height = -1; // the last xdg_toplevel.configure
	bool fullscreen = false, maximized = false;
	uint32_t serial = 0; // the last xdg_surface.configure, 0 once acked
	client::ShmPool pool;
	wl_buffer *buffer = nullptr;

	void create(client::Connection *c) {
		conn = c;
		surface = wl_compositor_create_surface(c->compositor);
		xsurface = xdg_wm_base_get_xdg_surface(c->wm_base, surface);
		static const xdg_surface_listener xs = {
			.configure = [](void *data, xdg_surface *,
					     uint32_t s) { static_cast<Toplevel *>(data)->serial = s; },
		};
		xdg_surface_add_listener(xsurface, &xs, this);
		toplevel = xdg_surface_get_toplevel(xsurface);
		static const xdg_toplevel_listener tl = {
			.configure =
				[](void *data, xdg_toplevel *, int32_t w, int32_t h, wl_array *states) {
					auto *t = static_cast<Toplevel *>(data);
					t->width = w;
					t->height = h;
					t->fullscreen = t->maximized = false;
					const auto *state = static_cast<const uint32_t *>(states->data);
					for (size_t i = 0; i < states->size / sizeof *state; i++) {
						t->fullscreen |= state[i] == XDG_TOPLEVEL_STATE_FULLSCREEN;
						t->maximized |= state[i] == XDG_TOPLEVEL_STATE_MAXIMIZED;
					}
				},
			.close = [](void *, xdg_toplevel *) {},
			.configure_bounds = nullptr,
			.wm_capabilities = nullptr,
		};
		xdg_toplevel_add_listener(toplevel, &tl, this);
	}

	// Waits for the next configure; acks it.
	bool configured() {
		while (serial == 0) {
			if (!conn->dispatch_timeout(5000)) return false;
		}
		xdg_surface_ack_configure(xsurface, serial);
		serial = 0;
		return true;
	}

	// Shows a w x h buffer of one colour (XRGB8888).
	void show(int w, int h, uint32_t colour) {
		if (buffer != nullptr) wl_buffer_destroy(buffer);
		pool.destroy();
		std::string error;
		ASSERT_TRUE(pool.create(conn, static_cast<size_t>(w) * h * 4, &error)) << error;
		auto *px = static_cast<uint32_t *>(pool.data);
		for (int i = 0; i < w * h; i++) px[i] = colour;
		buffer = wl_shm_pool_create_buffer(pool.pool, 0, w, h, w * 4, WL_SHM_FORMAT_XRGB8888);
		wl_surface_attach(surface, buffer, 0, 0);
		wl_surface_damage_buffer(surface, 0, 0, w, h);
		wl_surface_commit(surface);
		ASSERT_TRUE(conn->roundtrip());
	}

	// Before the connection goes.
	void destroy() {
		if (buffer != nullptr) wl_buffer_destroy(buffer);
		pool.destroy();
		if (toplevel != nullptr) xdg_toplevel_destroy(toplevel);
		if (xsurface != nullptr) xdg_surface_destroy(xsurface);
		if (surface != nullptr) wl_surface_destroy(surface);
		buffer = nullptr;
		toplevel = nullptr;
		xsurface = nullptr;
		surface = nullptr;
	}
	~Toplevel() { destroy(); }
};

// The test process as a client of `fx`: WAYLAND_DISPLAY and XDG_RUNTIME_DIR for this connect.
bool connect(CompositorFixture &fx, client::Connection *conn, std::string *error) {
	setenv("XDG_RUNTIME_DIR", fx.runtime_dir().c_str(), 1);
	setenv("WAYLAND_DISPLAY", fx.socket().c_str(), 1);
	bool ok = conn->connect(error);
	unsetenv("WAYLAND_DISPLAY");
	return ok && conn->wm_base != nullptr;
}

// The wl_outputs, in the order the compositor announced them.
std::vector<wl_output *> outputs(client::Connection *conn) {
	static std::vector<wl_output *> found;
	found.clear();
	wl_registry *registry = wl_display_get_registry(conn->display);
	static const wl_registry_listener listener = {
		.global =
			[](void *, wl_registry *r, uint32_t name, const char *interface, uint32_t) {
				if (strcmp(interface, wl_output_interface.name) == 0) {
					found.push_back(static_cast<wl_output *>(
						wl_registry_bind(r, name, &wl_output_interface, 1)));
				}
			},
		.global_remove = [](void *, wl_registry *, uint32_t) {},
	};
	wl_registry_add_listener(registry, &listener, nullptr);
	conn->roundtrip();
	wl_registry_destroy(registry);
	return found;
}

// The box of pixels of `colour` in the screenshot, as "WxH+X+Y" ("none" if there are none).
std::string box_of(const Image &shot, uint32_t colour) {
	int x0 = shot.width, y0 = shot.height, x1 = -1, y1 = -1;
	for (int y = 0; y < shot.height; y++) {
		for (int x = 0; x < shot.width; x++) {
			if (shot.pixel(x, y) != (colour & 0xffffff)) continue;
			x0 = std::min(x0, x);
			y0 = std::min(y0, y);
			x1 = std::max(x1, x);
			y1 = std::max(y1, y);
		}
	}
	if (x1 < 0) return "none";
	return std::to_string(x1 - x0 + 1) + "x" + std::to_string(y1 - y0 + 1) + "+" + std::to_string(x0) + "+" +
		std::to_string(y0);
}

} // namespace

TEST(ToplevelStates, FullscreenAskedBeforeMappingFillsTheOutputAndLeavingGivesBackTheSize) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start({}, "320x200"));
	client::Connection conn;
	std::string error;
	ASSERT_TRUE(connect(fx, &conn, &error)) << error;
	Toplevel t;
	t.create(&conn);
	xdg_toplevel_set_fullscreen(t.toplevel, nullptr);
	wl_surface_commit(t.surface); // the initial commit answers the request
	ASSERT_TRUE(t.configured()) << conn.error_text();
	EXPECT_EQ(t.width, 320);
	EXPECT_EQ(t.height, 200);
	EXPECT_TRUE(t.fullscreen);
	t.show(320, 200, 0xff2040);
	Image shot;
	ASSERT_TRUE(fx.screenshot(&shot));
	EXPECT_EQ(box_of(shot, 0xff2040), "320x200+0+0");

	// It had no size before: 0x0, it picks again.
	xdg_toplevel_unset_fullscreen(t.toplevel);
	ASSERT_TRUE(t.configured());
	EXPECT_EQ(t.width, 0);
	EXPECT_EQ(t.height, 0);
	EXPECT_FALSE(t.fullscreen);
	t.show(64, 48, 0x30a050);

	// Maximized from 64x48: the output's size, then 64x48 again.
	xdg_toplevel_set_maximized(t.toplevel);
	ASSERT_TRUE(t.configured());
	EXPECT_EQ(t.width, 320);
	EXPECT_EQ(t.height, 200);
	EXPECT_TRUE(t.maximized);
	EXPECT_FALSE(t.fullscreen);
	t.show(320, 200, 0x2040ff);
	xdg_toplevel_unset_maximized(t.toplevel);
	ASSERT_TRUE(t.configured());
	EXPECT_EQ(t.width, 64);
	EXPECT_EQ(t.height, 48);
	EXPECT_FALSE(t.maximized);
	t.show(64, 48, 0x30a050);
	ASSERT_TRUE(fx.screenshot(&shot));
	EXPECT_EQ(box_of(shot, 0x30a050), "64x48+0+0");
	t.destroy();
	conn.disconnect();
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
}

TEST(ToplevelStates, FullscreenOnTheSecondOutputFillsThatOneAndComesBack) {
	CompositorFixture fx;
	ASSERT_TRUE(fx.start({"--outputs", "2"}, "320x200"));
	client::Connection conn;
	std::string error;
	ASSERT_TRUE(connect(fx, &conn, &error)) << error;
	std::vector<wl_output *> outs = outputs(&conn);
	ASSERT_EQ(outs.size(), 2u);
	Toplevel t;
	t.create(&conn);
	wl_surface_commit(t.surface);
	ASSERT_TRUE(t.configured());
	EXPECT_EQ(t.width, 0) << "a window that asks nothing picks its size";
	t.show(64, 48, 0x30a050);

	xdg_toplevel_set_fullscreen(t.toplevel, outs[1]);
	ASSERT_TRUE(t.configured());
	EXPECT_EQ(t.width, 320);
	EXPECT_EQ(t.height, 200);
	EXPECT_TRUE(t.fullscreen);
	t.show(320, 200, 0xff2040);
	Image shot;
	ASSERT_TRUE(fx.screenshot(&shot));
	ASSERT_EQ(shot.width, 640) << "the two outputs side by side";
	EXPECT_EQ(box_of(shot, 0xff2040), "320x200+320+0");

	xdg_toplevel_unset_fullscreen(t.toplevel);
	ASSERT_TRUE(t.configured());
	EXPECT_EQ(t.width, 64);
	EXPECT_EQ(t.height, 48);
	t.show(64, 48, 0x30a050);
	ASSERT_TRUE(fx.screenshot(&shot));
	EXPECT_EQ(box_of(shot, 0x30a050), "64x48+0+0") << "back where it was";
	for (wl_output *o : outs) wl_output_destroy(o);
	t.destroy();
	conn.disconnect();
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
}
