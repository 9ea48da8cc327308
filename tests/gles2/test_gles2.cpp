// The plugin's upload paths on wlroots' GLES2 renderer, on Mesa's llvmpipe (no GPU here).
//
// TEST SHIM, not product code: wlroots 0.18 refuses an EGL display without
// EGL_EXT_image_dma_buf_import, which llvmpipe's surfaceless platform lacks. That extension
// is needed to import dmabufs, never for the CPU uploads tested here, so this executable
// interposes eglQueryString() and appends the name. Textures are then really made and
// updated by llvmpipe (glTexImage2D / glTexSubImage2D with damage) and read back.
//
// One thread runs the compositor side (EGL context, renderer, wl_display, plugin); the test
// thread is a real Wayland client on a socketpair.
#include <gtest/gtest.h>

#include <EGL/egl.h>
#include <EGL/eglext.h>
#include <dlfcn.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <list>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "hold.hpp" // kMaxCommitsHeld
#include "listener.hpp"
#include "pattern.hpp"
#include "pixelport/pixelport.h"
#include "reference.hpp"
#include "transport.hpp"
#include "wait_until.hpp"
#include "wlr.hpp"

extern "C" {
#define static
#include <wlr/render/egl.h>
#include <wlr/render/gles2.h>
#undef static
}

extern "C" __attribute__((visibility("default"))) const char *eglQueryString(EGLDisplay display, EGLint name) {
	using Fn = const char *(*)(EGLDisplay, EGLint);
	static Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "eglQueryString"));
	const char *value = real(display, name);
	if (name != EGL_EXTENSIONS || display == EGL_NO_DISPLAY || value == nullptr) return value;
	static thread_local std::string extended;
	extended = std::string(value) + " EGL_EXT_image_dma_buf_import";
	return extended.c_str();
}

using namespace pixelport;
using namespace pixelport::client;

namespace {

struct ReadBack {
	int width = 0, height = 0;
	std::vector<uint32_t> rgb; // 0xRRGGBB
};

// Every buffer a surface commits must announce its end on wlr_buffer.events.destroy:
// wlr_client_buffer (which holds the texture) listens there for its source. wlroots 0.18 emits
// it before impl->destroy; from 0.19 the impl must (wlr_buffer_finish), else the client buffer
// later unlinks its listener from freed memory. Watched from the compositor thread.
struct BufferWatch {
	std::set<wlr_buffer *> alive; // committed, not yet announced destroyed
	size_t committed = 0;

	struct Entry {
		wl_listener destroy;
		BufferWatch *watch;
		wlr_buffer *buffer;
	};
	struct SurfaceEntry {
		wl_listener commit, destroy;
		BufferWatch *watch;
	};

	void watch_surface(wlr_surface *surface) {
		auto *e = new SurfaceEntry{{}, {}, this};
		e->commit.notify = [](wl_listener *l, void *data) {
			SurfaceEntry *e = wl_container_of(l, e, commit);
			e->watch->committed_buffer(static_cast<wlr_surface *>(data)->current.buffer);
		};
		e->destroy.notify = [](wl_listener *l, void *) {
			SurfaceEntry *e = wl_container_of(l, e, destroy);
			wl_list_remove(&e->commit.link);
			wl_list_remove(&e->destroy.link);
			delete e;
		};
		wl_signal_add(&surface->events.commit, &e->commit);
		wl_signal_add(&surface->events.destroy, &e->destroy);
	}

	void committed_buffer(wlr_buffer *buffer) {
		if (buffer == nullptr || !alive.insert(buffer).second) return;
		committed++;
		auto *e = new Entry{{}, this, buffer};
		e->destroy.notify = [](wl_listener *l, void *) {
			Entry *e = wl_container_of(l, e, destroy);
			e->watch->alive.erase(e->buffer);
			wl_list_remove(&e->destroy.link);
			delete e;
		};
		wl_signal_add(&buffer->events.destroy, &e->destroy);
	}
	// An entry whose buffer was freed silently stays allocated: its link lies in freed memory.
};

// One EGL display, context and renderer for the whole program, made on the first compositor
// thread and never destroyed: Mesa 25 cannot create a second wlr_egl on the surfaceless display
// once the first is gone (eglQueryDeviceStringEXT fails). wlroots makes the context current only
// around each use, so each case's thread can take it in turn.
struct Gles2 {
	wlr_renderer *renderer = nullptr;
	std::string skip_reason; // why there is none
};

const Gles2 &gles2() {
	static const Gles2 shared = [] {
		Gles2 g;
		auto get_platform_display = reinterpret_cast<PFNEGLGETPLATFORMDISPLAYEXTPROC>(
			eglGetProcAddress("eglGetPlatformDisplayEXT"));
		// Mesa (llvmpipe here) offers the surfaceless platform; GPU drivers such as NVIDIA's
		// offer EGL devices: take the first one.
		EGLDisplay egl_display = get_platform_display != nullptr
			? get_platform_display(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, nullptr)
			: EGL_NO_DISPLAY;
		if (egl_display == EGL_NO_DISPLAY || !eglInitialize(egl_display, nullptr, nullptr)) {
			auto query_devices =
				reinterpret_cast<PFNEGLQUERYDEVICESEXTPROC>(eglGetProcAddress("eglQueryDevicesEXT"));
			EGLDeviceEXT device = nullptr;
			EGLint n = 0;
			if (get_platform_display != nullptr && query_devices != nullptr &&
				query_devices(1, &device, &n) && n > 0) {
				egl_display = get_platform_display(EGL_PLATFORM_DEVICE_EXT, device, nullptr);
			}
			if (egl_display == EGL_NO_DISPLAY || !eglInitialize(egl_display, nullptr, nullptr)) {
				g.skip_reason = "no EGL surfaceless platform or EGL device on this machine";
				return g;
			}
		}
		const char *vendor = eglQueryString(egl_display, EGL_VENDOR);
		printf("EGL vendor: %s\n", vendor != nullptr ? vendor : "?");
		eglBindAPI(EGL_OPENGL_ES_API);
		const EGLint attribs[] = {EGL_CONTEXT_CLIENT_VERSION, 2, EGL_NONE};
		EGLContext context = eglCreateContext(egl_display, EGL_NO_CONFIG_KHR, EGL_NO_CONTEXT, attribs);
		if (context == EGL_NO_CONTEXT) {
			g.skip_reason = "cannot create a GLES2 context";
			return g;
		}
		setenv("WLR_RENDERER_ALLOW_SOFTWARE", "1", 1);
		if (getenv("PIXELPORT_TEST_VERBOSE") != nullptr) wlr_log_init(WLR_INFO, nullptr); // GL renderer name
		wlr_egl *egl = wlr_egl_create_with_context(egl_display, context);
		g.renderer = egl != nullptr ? wlr_gles2_renderer_create(egl) : nullptr;
		if (g.renderer == nullptr)
			g.skip_reason = "wlroots refused the llvmpipe EGL display even with the shim";
		return g;
	}();
	return shared;
}

// The compositor side. Everything GL happens on its thread.
struct Server {
	int client_fd = -1;
	int stop_fd = -1;
	std::string skip_reason;
	std::vector<ReadBack> textures; // one per surface, in creation order
	pixelport_stats stats{};
	BufferWatch buffers;
	std::thread thread;

	// Runs the compositor on its thread, on one end of a socketpair, and connects `conn` (a
	// real client) to the other. False with *error when that fails (skip_reason set when this
	// machine cannot run GLES2); the thread is joined then.
	bool start(Connection *conn, std::string *error) {
		int fds[2];
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
			*error = std::string("socketpair: ") + strerror(errno);
			return false;
		}
		client_fd = fds[0];
		stop_fd = eventfd(0, EFD_CLOEXEC);
		thread = std::thread([this] { run(); });
		// Connection::connect() uses wl_display_connect(), which takes an fd from WAYLAND_SOCKET.
		setenv("WAYLAND_SOCKET", std::to_string(fds[1]).c_str(), 1);
		if (conn->connect(error)) return true;
		stop();
		return false;
	}
	// Ends the compositor: textures, stats and buffers are final after it.
	bool stop() {
		uint64_t one = 1;
		if (write(stop_fd, &one, sizeof(one)) != sizeof(one)) return false;
		thread.join();
		return true;
	}

	void run() {
		const Gles2 &gl = gles2();
		if (gl.renderer == nullptr) {
			skip_reason = gl.skip_reason;
			return;
		}
		wlr_renderer *renderer = gl.renderer;
		wl_display *display = wl_display_create();
		pixelport_plugin *pp = pixelport_create(display, renderer, nullptr);
		ASSERT_TRUE(pixelport_create_globals(pp));
		wlr_compositor *compositor = wlr_compositor_create(display, 6, renderer);
		pixelport_attach_compositor(pp, compositor);
		wlr_subcompositor_create(display); // the surfaces are subsurfaces: a role, as shown ones have
		std::vector<wlr_surface *> surfaces; // alive, in creation order
		std::list<pixelport::Listener> surface_destroys;
		pixelport::Listener new_surface, stop;
		new_surface.connect(&compositor->events.new_surface, [&](void *data) {
			auto *surface = static_cast<wlr_surface *>(data);
			surfaces.push_back(surface);
			buffers.watch_surface(surface);
			surface_destroys.emplace_back().connect(&surface->events.destroy,
				[&surfaces, surface](void *) { std::erase(surfaces, surface); });
		});
		wl_event_loop *loop = wl_display_get_event_loop(display);
		wl_event_source *stop_source = wl_event_loop_add_fd(
			loop, stop_fd, WL_EVENT_READABLE,
			[](int, uint32_t, void *data) {
				wl_display_terminate(static_cast<wl_display *>(data));
				return 0;
			},
			display);
		wl_client_create(display, client_fd);
		wl_display_run(display);

		// Read back every surface's texture before the client goes.
		for (wlr_surface *surface : surfaces) {
			if (surface->buffer == nullptr && surface->role == nullptr)
				continue; // a parent, never drawn into
			ReadBack rb;
			if (surface->buffer != nullptr && surface->buffer->texture != nullptr) {
				wlr_texture *texture = surface->buffer->texture;
				rb.width = static_cast<int>(texture->width);
				rb.height = static_cast<int>(texture->height);
				std::vector<uint32_t> pixels(static_cast<size_t>(rb.width) * rb.height);
				wlr_texture_read_pixels_options options = {
					.data = pixels.data(),
					.format = DRM_FORMAT_XBGR8888, // GL_RGBA: always readable
					.stride = static_cast<uint32_t>(rb.width) * 4,
					.dst_x = 0,
					.dst_y = 0,
					.src_box = {},
				};
				if (wlr_texture_read_pixels(texture, &options)) {
					for (uint32_t p : pixels)
						rb.rgb.push_back((p & 0xff) << 16 | (p & 0xff00) | ((p >> 16) & 0xff));
				}
			}
			textures.push_back(std::move(rb));
		}
		stats.struct_size = sizeof stats;
		pixelport_get_stats(pp, &stats);
		wl_event_source_remove(stop_source);
		new_surface.disconnect();
		wl_display_destroy_clients(display);
		pixelport_destroy(pp);
		wl_display_destroy(display);
	}
};

struct Frame {
	uint32_t format;
	TransportChoice transport;
	int damage_x, damage_y, damage_w, damage_h; // second frame's damage
};

std::vector<uint32_t> expected(const std::vector<uint8_t> &image, uint32_t format, int w, int h, size_t stride) {
	std::vector<uint32_t> rgb;
	test::reference_rgb(format, w, h, stride, image.data(), &rgb);
	return rgb;
}

TEST(Gles2, NativeConvertedAndStreamedUploadsMatchTheReference) {
	Server server;
	Connection conn;
	std::string error;
	if (!server.start(&conn, &error)) {
		if (!server.skip_reason.empty()) GTEST_SKIP() << server.skip_reason;
		FAIL() << error;
	}

	const int w = 64, h = 48;
	// Each surface: a full frame, then a second frame changing one rectangle (GLES2 updates
	// the texture from the damaged rows only).
	const std::vector<Frame> frames = {
		{DRM_FORMAT_XRGB8888, TransportChoice::ShmReused, 8, 8, 20, 10},
		{DRM_FORMAT_RGB888, TransportChoice::ShmReused, 10, 6, 30, 20},
		{DRM_FORMAT_NV12, TransportChoice::ShmReused, 16, 8, 24, 16},
		{DRM_FORMAT_NV12, TransportChoice::StreamSocket, 16, 8, 24, 16},
	};
	std::vector<std::vector<uint32_t>> want;
	std::vector<std::unique_ptr<SurfaceWriter>> writers;
	std::vector<wl_surface *> surfaces;
	// Each surface a desync subsurface of one parent: the plugin holds a stream commit until its
	// bytes are in only on a surface with a role.
	ASSERT_NE(conn.subcompositor, nullptr);
	wl_surface *parent = wl_compositor_create_surface(conn.compositor);
	std::vector<wl_subsurface *> subsurfaces;
	for (const Frame &f : frames) {
		wl_surface *surface = wl_compositor_create_surface(conn.compositor);
		wl_subsurface *sub = wl_subcompositor_get_subsurface(conn.subcompositor, surface, parent);
		wl_subsurface_set_desync(sub);
		subsurfaces.push_back(sub);
		surfaces.push_back(surface);
		auto writer = std::make_unique<SurfaceWriter>(&conn, surface, f.transport);
		size_t stride = shm_min_stride(f.format, w);
		ShmLayout layout;
		shm_layout(f.format, w, h, stride, &layout);
		std::vector<uint8_t> image(layout.size, 0xa5);
		encode_pattern(f.format, w, h, stride, image.data(), 1, 0, 0, w, h);
		Pixels px = {f.format, w, h, stride, image.data(), image.size()};
		ASSERT_TRUE(writer->put(px, nullptr, &error)) << error;
		ASSERT_TRUE(conn.roundtrip());
		ASSERT_TRUE(writer->wait_consumed(5000));
		// A converted format's first frame is converted on a worker: once its buffer is released
		// the commit has applied, and the next one updates its image with the damage only.
		if (f.transport == TransportChoice::ShmReused && f.format != DRM_FORMAT_XRGB8888) {
			ASSERT_TRUE(writer->wait_shm_released(5000));
		}
		encode_pattern(f.format, w, h, stride, image.data(), 2, f.damage_x, f.damage_y, f.damage_w, f.damage_h);
		Rect damage = {f.damage_x, f.damage_y, f.damage_w, f.damage_h};
		ASSERT_TRUE(writer->put(px, &damage, &error)) << error;
		ASSERT_TRUE(conn.roundtrip());
		ASSERT_TRUE(writer->wait_consumed(5000));
		want.push_back(expected(image, f.format, w, h, stride));
		writers.push_back(std::move(writer));
	}
	ASSERT_TRUE(conn.roundtrip());
	ASSERT_TRUE(server.stop());
	if (!server.skip_reason.empty()) GTEST_SKIP() << server.skip_reason;
	EXPECT_GE(server.buffers.committed, 2u);
	EXPECT_EQ(server.buffers.alive.size(), 0u) << "committed buffers freed without wlr_buffer.events.destroy";

	ASSERT_EQ(server.textures.size(), frames.size());
	for (size_t i = 0; i < frames.size(); i++) {
		const ReadBack &rb = server.textures[i];
		ASSERT_EQ(rb.width, w) << "surface " << i;
		ASSERT_EQ(rb.rgb.size(), want[i].size()) << "surface " << i;
		int tol = test::reference_tolerance(frames[i].format), bad = 0;
		for (size_t p = 0; p < rb.rgb.size(); p++) {
			for (int c = 0; c < 24; c += 8) {
				int d = static_cast<int>((rb.rgb[p] >> c) & 0xff) -
					static_cast<int>((want[i][p] >> c) & 0xff);
				if (std::abs(d) > tol) {
					if (bad++ < 3)
						ADD_FAILURE() << "surface " << i << " pixel " << p << std::hex
							      << " got " << rb.rgb[p] << " want " << want[i][p];
					break;
				}
			}
		}
		EXPECT_EQ(bad, 0) << "surface " << i;
	}
	// Converted shm: full frame, then only the damaged rectangle.
	EXPECT_EQ(server.stats.converted_pixels, 2u * 64 * 48 + 30u * 20 + 24u * 16);
	writers.clear();
	for (wl_subsurface *sub : subsurfaces) wl_subsurface_destroy(sub);
	for (wl_surface *s : surfaces) wl_surface_destroy(s);
	wl_surface_destroy(parent);
}

// Buffer semantics on GLES2 (docs/design.md, "Converted buffers"): one converted buffer on two
// surfaces, another buffer replacing it on one of them, then the first buffer (released, so
// rewritten by the client) committed again with partial damage: each texture must show its
// own surface's commits.
TEST(Gles2, EachSurfaceShowsItsOwnCommitsOfASharedConvertedBuffer) {
	Server server;
	Connection conn;
	std::string error;
	if (!server.start(&conn, &error)) {
		if (!server.skip_reason.empty()) GTEST_SKIP() << server.skip_reason;
		FAIL() << error;
	}
	const int w = 64, h = 48;
	const uint32_t format = DRM_FORMAT_RGB888;
	const size_t stride = shm_min_stride(format, w), size = stride * h;
	struct Buf {
		ShmPool pool;
		wl_buffer *buffer = nullptr;
		bool released = false;
	} a, b;
	static const wl_buffer_listener listener = {
		.release = [](void *data, wl_buffer *) { static_cast<Buf *>(data)->released = true; }};
	for (Buf *buf : {&a, &b}) {
		ASSERT_TRUE(buf->pool.create(&conn, size, &error)) << error;
		buf->buffer = wl_shm_pool_create_buffer(
			buf->pool.pool, 0, w, h, static_cast<int32_t>(stride), drm_to_shm(format));
		wl_buffer_add_listener(buf->buffer, &listener, buf);
	}
	auto *pa = static_cast<uint8_t *>(a.pool.data), *pb = static_cast<uint8_t *>(b.pool.data);
	encode_pattern(format, w, h, stride, pa, 1, 0, 0, w, h);
	encode_pattern(format, w, h, stride, pb, 2, 0, 0, w, h);
	std::vector<uint32_t> want1 = expected(std::vector<uint8_t>(pa, pa + size), format, w, h, stride);
	std::vector<uint32_t> want2 = expected(std::vector<uint8_t>(pb, pb + size), format, w, h, stride);
	wl_surface *s1 = wl_compositor_create_surface(conn.compositor),
		   *s2 = wl_compositor_create_surface(conn.compositor);
	auto commit = [](wl_surface *s, wl_buffer *buffer, int x, int y, int dw, int dh) {
		if (buffer != nullptr) wl_surface_attach(s, buffer, 0, 0);
		wl_surface_damage_buffer(s, x, y, dw, dh);
		wl_surface_commit(s);
	};
	commit(s1, a.buffer, 0, 0, w, h);
	commit(s2, a.buffer, 0, 0, w, h);
	commit(s2, b.buffer, 0, 0, w, h);
	ASSERT_TRUE(conn.roundtrip());
	ASSERT_TRUE(conn.roundtrip());
	ASSERT_TRUE(a.released); // converted for both surfaces: nothing needs its pixels any more
	// The client may now draw into A: a new rectangle, committed to S1 only.
	encode_pattern(format, w, h, stride, pa, 3, 8, 8, 24, 16);
	std::vector<uint32_t> want1b = expected(std::vector<uint8_t>(pa, pa + size), format, w, h, stride);
	commit(s1, a.buffer, 8, 8, 24, 16);
	commit(s2, nullptr, 0, 0, w, h); // damage only: S2 keeps B
	ASSERT_TRUE(conn.roundtrip());
	ASSERT_TRUE(server.stop());
	if (!server.skip_reason.empty()) GTEST_SKIP() << server.skip_reason;
	EXPECT_GE(server.buffers.committed, 2u);
	EXPECT_EQ(server.buffers.alive.size(), 0u) << "committed buffers freed without wlr_buffer.events.destroy";
	ASSERT_EQ(server.textures.size(), 2u);
	const std::vector<uint32_t> *want[] = {&want1b, &want2};
	for (size_t i = 0; i < 2; i++) {
		const ReadBack &rb = server.textures[i];
		ASSERT_EQ(rb.rgb.size(), want[i]->size()) << "surface " << i;
		int bad = 0;
		for (size_t p = 0; p < rb.rgb.size(); p++) {
			for (int c = 0; c < 24; c += 8) {
				int d = static_cast<int>((rb.rgb[p] >> c) & 0xff) -
					static_cast<int>(((*want[i])[p] >> c) & 0xff);
				if (std::abs(d) > test::reference_tolerance(format)) {
					if (bad++ < 3)
						ADD_FAILURE() << "surface " << i << " pixel " << p << std::hex
							      << " got " << rb.rgb[p];
					break;
				}
			}
		}
		EXPECT_EQ(bad, 0) << "surface " << i;
	}
	(void)want1;
	wl_buffer_destroy(a.buffer);
	wl_buffer_destroy(b.buffer);
	wl_surface_destroy(s1);
	wl_surface_destroy(s2);
}

// GLES2 uploads at the apply: a commit that applies before its conversion ends (here: its client
// more than kMaxCommitsHeld commits ahead of it), in a size the surface has no complete image
// of, is completed on the compositor's thread at the apply and uploaded whole (no blank
// uploaded and redrawn later); then a burst of buffers in new sizes, back to back, ends on the
// last one's pixels.
TEST(Gles2, ACommitAppliedBeforeItsConversionEndsIsUploadedComplete) {
	Server server;
	Connection conn;
	std::string error;
	if (!server.start(&conn, &error)) {
		if (!server.skip_reason.empty()) GTEST_SKIP() << server.skip_reason;
		FAIL() << error;
	}
	ASSERT_NE(conn.subcompositor, nullptr);
	wl_surface *parent = wl_compositor_create_surface(conn.compositor);
	wl_surface *child = wl_compositor_create_surface(conn.compositor);
	wl_subsurface *sub = wl_subcompositor_get_subsurface(conn.subcompositor, child, parent);
	wl_subsurface_set_desync(sub);
	const uint32_t format = DRM_FORMAT_RGB888;
	struct Buf {
		ShmPool pool;
		wl_buffer *buffer = nullptr;
		std::vector<uint32_t> want;
	};
	auto make = [&](Buf *buf, int w, int h, uint32_t seed) {
		const size_t stride = shm_min_stride(format, w);
		ASSERT_TRUE(buf->pool.create(&conn, stride * h, &error)) << error;
		auto *p = static_cast<uint8_t *>(buf->pool.data);
		encode_pattern(format, w, h, stride, p, seed, 0, 0, w, h);
		buf->want = expected(std::vector<uint8_t>(p, p + stride * h), format, w, h, stride);
		buf->buffer = wl_shm_pool_create_buffer(
			buf->pool.pool, 0, w, h, static_cast<int32_t>(stride), drm_to_shm(format));
	};
	Buf first, burst[3];
	make(&first, 2048, 2048, 5);
	wl_surface_attach(child, first.buffer, 0, 0);
	wl_surface_damage_buffer(child, 0, 0, 2048, 2048);
	wl_surface_commit(child);
	for (uint64_t i = 0; i <= kMaxCommitsHeld; i++) wl_surface_commit(child);
	ASSERT_TRUE(conn.roundtrip());
	const int sizes[3][2] = {{1600, 1200}, {1000, 1400}, {1200, 800}};
	for (int i = 0; i < 3; i++) {
		make(&burst[i], sizes[i][0], sizes[i][1], 6 + static_cast<uint32_t>(i));
		wl_surface_attach(child, burst[i].buffer, 0, 0);
		wl_surface_damage_buffer(child, 0, 0, sizes[i][0], sizes[i][1]);
		wl_surface_commit(child);
	}
	// Until the last one shows: its frame callback.
	bool shown = false;
	static const wl_callback_listener done = {.done = [](void *data, wl_callback *cb, uint32_t) {
		*static_cast<bool *>(data) = true;
		wl_callback_destroy(cb);
	}};
	wl_callback_add_listener(wl_surface_frame(child), &done, &shown);
	wl_surface_commit(child);
	test::wait_until([&] { return !conn.roundtrip() || shown; }, std::chrono::seconds(2));
	ASSERT_TRUE(server.stop());
	if (!server.skip_reason.empty()) GTEST_SKIP() << server.skip_reason;
	// Let go with its job under way: completed where it applied, never uploaded blank and
	// redrawn later.
	EXPECT_EQ(server.stats.early_releases, 1u);
	EXPECT_EQ(server.stats.main_thread_completions, 1u);
	EXPECT_EQ(server.stats.redraws, 0u);
	ASSERT_EQ(server.textures.size(), 1u);
	const ReadBack &rb = server.textures[0];
	const std::vector<uint32_t> &want = burst[2].want;
	ASSERT_EQ(rb.rgb.size(), want.size());
	int bad = 0;
	for (size_t p = 0; p < rb.rgb.size(); p++) {
		for (int c = 0; c < 24; c += 8) {
			int d = static_cast<int>((rb.rgb[p] >> c) & 0xff) - static_cast<int>((want[p] >> c) & 0xff);
			if (std::abs(d) > test::reference_tolerance(format)) {
				bad++;
				break;
			}
		}
	}
	EXPECT_EQ(bad, 0);
	for (Buf *b : {&first, &burst[0], &burst[1], &burst[2]}) wl_buffer_destroy(b->buffer);
	wl_subsurface_destroy(sub);
	wl_surface_destroy(child);
	wl_surface_destroy(parent);
}

// A synchronized subsurface whose held commits were let go (its client too far ahead) stays in
// wlroots' cache until its parent commits; when its client goes before that, wlroots applies
// those states as the parent goes and takes the subsurface role with it. Nothing will show them:
// none is converted on the compositor's thread.
TEST(Gles2, CommitsAppliedAsTheirClientGoesAreNotConverted) {
	Server server;
	Connection conn;
	std::string error;
	if (!server.start(&conn, &error)) {
		if (!server.skip_reason.empty()) GTEST_SKIP() << server.skip_reason;
		FAIL() << error;
	}
	ASSERT_NE(conn.subcompositor, nullptr);
	wl_surface *parent = wl_compositor_create_surface(conn.compositor);
	wl_surface *child = wl_compositor_create_surface(conn.compositor);
	wl_subsurface *sub = wl_subcompositor_get_subsurface(conn.subcompositor, child, parent);
	const int w = 2048, h = 2048;
	const uint32_t format = DRM_FORMAT_RGB888;
	const size_t stride = shm_min_stride(format, w);
	ShmPool pool;
	ASSERT_TRUE(pool.create(&conn, stride * h, &error)) << error;
	encode_pattern(format, w, h, stride, static_cast<uint8_t *>(pool.data), 9, 0, 0, w, h);
	wl_buffer *buffer =
		wl_shm_pool_create_buffer(pool.pool, 0, w, h, static_cast<int32_t>(stride), drm_to_shm(format));
	wl_surface_attach(child, buffer, 0, 0);
	wl_surface_damage_buffer(child, 0, 0, w, h);
	wl_surface_commit(child);
	for (uint64_t i = 0; i <= kMaxCommitsHeld; i++) wl_surface_commit(child);
	ASSERT_TRUE(conn.roundtrip());
	// The client goes (a surface destroyed before its role object is a protocol error: the
	// compositor disconnects it), and its surfaces' roles with them, applying their cached states.
	wl_surface_destroy(child);
	EXPECT_FALSE(conn.roundtrip());
	ASSERT_TRUE(server.stop());
	if (!server.skip_reason.empty()) GTEST_SKIP() << server.skip_reason;
	EXPECT_EQ(server.stats.early_releases, 1u);
	EXPECT_EQ(server.stats.main_thread_completions, 0u);
	(void)sub;
	(void)buffer;
	(void)parent;
}

// wp_color_representation's alpha mode on GLES2, whose textures take only the damaged rows of
// a commit: a commit that switches the mode with a small damage must still change the whole
// texture (straight colour premultiplied through a converted view; premultiplied read in place).
TEST(Gles2, SwitchingTheAlphaModeRedoesTheWholeTexture) {
	Server server;
	Connection conn;
	std::string error;
	if (!server.start(&conn, &error)) {
		if (!server.skip_reason.empty()) GTEST_SKIP() << server.skip_reason;
		FAIL() << error;
	}
	ASSERT_NE(conn.color_representation, nullptr);
	const int w = 64, h = 48;
	const uint32_t format = DRM_FORMAT_ARGB8888;
	const size_t stride = shm_min_stride(format, w), size = stride * h;
	struct Buf {
		ShmPool pool;
		wl_buffer *buffer = nullptr;
	} a, b;
	for (Buf *buf : {&a, &b}) {
		ASSERT_TRUE(buf->pool.create(&conn, size, &error)) << error;
		encode_pattern(format, w, h, stride, static_cast<uint8_t *>(buf->pool.data), 1, 0, 0, w, h);
		buf->buffer = wl_shm_pool_create_buffer(
			buf->pool.pool, 0, w, h, static_cast<int32_t>(stride), drm_to_shm(format));
	}
	const auto *bytes = static_cast<const uint8_t *>(a.pool.data);
	std::vector<uint32_t> premultiplied, straight;
	ASSERT_TRUE(test::reference_rgb(format, w, h, stride, bytes, &premultiplied));
	ASSERT_TRUE(test::reference_rgb_straight(format, w, h, stride, bytes, &straight));
	wl_surface *s1 = wl_compositor_create_surface(conn.compositor),
		   *s2 = wl_compositor_create_surface(conn.compositor);
	wp_color_representation_surface_v1 *c1 =
		wp_color_representation_manager_v1_get_surface(conn.color_representation, s1);
	wp_color_representation_surface_v1 *c2 =
		wp_color_representation_manager_v1_get_surface(conn.color_representation, s2);
	constexpr uint32_t kPremultiplied = WP_COLOR_REPRESENTATION_SURFACE_V1_ALPHA_MODE_PREMULTIPLIED_ELECTRICAL,
			   kStraight = WP_COLOR_REPRESENTATION_SURFACE_V1_ALPHA_MODE_STRAIGHT;
	auto commit = [&](wl_surface *s, wp_color_representation_surface_v1 *c, wl_buffer *buffer, uint32_t mode,
			      int dw) {
		wp_color_representation_surface_v1_set_alpha_mode(c, mode);
		wl_surface_attach(s, buffer, 0, 0);
		wl_surface_damage_buffer(s, 8, 8, dw, dw);
		wl_surface_commit(s);
	};
	// S1: premultiplied, then straight; S2 the other way round. The second commits damage 4x4.
	commit(s1, c1, a.buffer, kPremultiplied, w);
	commit(s2, c2, b.buffer, kStraight, w);
	ASSERT_TRUE(conn.roundtrip());
	commit(s1, c1, a.buffer, kStraight, 4);
	commit(s2, c2, b.buffer, kPremultiplied, 4);
	ASSERT_TRUE(conn.roundtrip());
	ASSERT_TRUE(conn.roundtrip());
	ASSERT_TRUE(server.stop());
	if (!server.skip_reason.empty()) GTEST_SKIP() << server.skip_reason;
	ASSERT_EQ(server.textures.size(), 2u);
	const std::vector<uint32_t> *want[] = {&straight, &premultiplied};
	for (size_t i = 0; i < 2; i++) {
		const ReadBack &rb = server.textures[i];
		ASSERT_EQ(rb.rgb.size(), want[i]->size()) << "surface " << i;
		int bad = 0;
		for (size_t p = 0; p < rb.rgb.size(); p++) {
			if (rb.rgb[p] != (*want[i])[p] && bad++ < 3)
				ADD_FAILURE() << "surface " << i << " pixel " << p << std::hex << " got " << rb.rgb[p]
					      << " want " << (*want[i])[p];
		}
		EXPECT_EQ(bad, 0) << "surface " << i;
	}
	// Only the two straight commits were converted, each in full.
	EXPECT_EQ(server.stats.converted_pixels, 2u * 64 * 48);
	wp_color_representation_surface_v1_destroy(c1);
	wp_color_representation_surface_v1_destroy(c2);
	wl_buffer_destroy(a.buffer);
	wl_buffer_destroy(b.buffer);
	wl_surface_destroy(s1);
	wl_surface_destroy(s2);
}

} // namespace
