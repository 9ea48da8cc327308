// pixelport-semantics-client: checks that buffers behave exactly like wl_buffers whatever the
// plugin does behind them (docs/design.md, "Converted buffers"): content per commit, the same
// buffer on several surfaces, cached commits of synchronized subsurfaces, damage-only commits,
// buffers destroyed while shown, size and format changes.
//
// Usage: pixelport-semantics-client SCENARIO FORMAT TRANSPORT
//   FORMAT: a DRM format name (RGB888, XRGB4444, NV12, XRGB8888, ...)
//   TRANSPORT: shm (wl_shm) or stream (pixelport-stream-v1 over a socketpair)
// Solid-colour 8x8 blocks are drawn side by side: surface i shows at (8 i, 0). At each
// checkpoint the client takes a screenshot with grim (which makes the compositor render every
// surface again) and compares the centre of each block with the colour an independent decoder
// (tests/integration/reference.cpp) gives for the bytes it wrote. It prints one line per
// checkpoint, "checkpoint NAME ok" or "checkpoint NAME FAIL: ...", and exits 0 only if all
// passed.
#include <drm_fourcc.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "reference.hpp"
#include "wayland_client.hpp"

using namespace pixelport;
using namespace pixelport::client;

// Surfaces and subsurfaces are left to the exit: no leak reports from LeakSanitizer in the
// sanitizer build (weak: absent in normal builds).
extern "C" void __lsan_disable(void) __attribute__((weak));

namespace {

constexpr int kBlock = 8;
constexpr uint32_t kRed = 0xff0000, kGreen = 0x00ff00, kBlue = 0x0000ff, kWhite = 0xffffff, kBlack = 0;

Connection conn;

// ---- solid colours in any format we test ---------------------------------------------------

uint8_t clamp8(double v) { return static_cast<uint8_t>(v < 0 ? 0 : v > 255 ? 255 : v + 0.5); }

// BT.601 limited range, as the plugin's default decode.
void rgb_to_yuv(uint32_t rgb, uint8_t *y, uint8_t *u, uint8_t *v) {
	double r = (rgb >> 16) & 0xff, g = (rgb >> 8) & 0xff, b = rgb & 0xff;
	double yy = 0.299 * r + 0.587 * g + 0.114 * b;
	*y = clamp8(16 + yy * 219 / 255);
	*u = clamp8(128 + (b - yy) / 1.772 * 224 / 255);
	*v = clamp8(128 + (r - yy) / 1.402 * 224 / 255);
}

// Tightly packed (stride = min stride) bytes of a w x h buffer of one colour (0xRRGGBB, or for
// ARGB8888 and ARGB4444 0xAARRGGBB with alpha 0 meaning opaque); planes as in
// pixelport's wl_shm layout (which for these formats is also the stream's packing when the
// rectangle is the whole buffer... except NV12, packed below in row groups).
bool solid(uint32_t format, int w, int h, uint32_t rgb, std::vector<uint8_t> *out, size_t *stride) {
	uint8_t r = (rgb >> 16) & 0xff, g = (rgb >> 8) & 0xff, b = rgb & 0xff;
	switch (format) {
	case DRM_FORMAT_XRGB8888:
	case DRM_FORMAT_ARGB8888: {
		*stride = static_cast<size_t>(w) * 4;
		out->assign(*stride * h, 0);
		uint8_t a = format == DRM_FORMAT_ARGB8888 && (rgb >> 24) != 0 ? rgb >> 24 : 0xff;
		for (size_t i = 0; i < out->size(); i += 4) {
			(*out)[i] = b, (*out)[i + 1] = g, (*out)[i + 2] = r, (*out)[i + 3] = a;
		}
		return true;
	}
	case DRM_FORMAT_RGB888: {
		*stride = (static_cast<size_t>(w) * 3 + 3) & ~size_t{3};
		out->assign(*stride * h, 0);
		for (int y = 0; y < h; y++)
			for (int x = 0; x < w; x++) {
				uint8_t *p = out->data() + y * *stride + x * 3;
				p[0] = b, p[1] = g, p[2] = r;
			}
		return true;
	}
	case DRM_FORMAT_XRGB4444:
	case DRM_FORMAT_ARGB4444: {
		*stride = static_cast<size_t>(w) * 2;
		out->assign(*stride * h, 0);
		uint32_t a = format == DRM_FORMAT_ARGB4444 && (rgb >> 24) != 0 ? rgb >> 28 : 0xf;
		uint16_t v = static_cast<uint16_t>(a << 12 | (r >> 4) << 8 | (g >> 4) << 4 | (b >> 4));
		for (size_t i = 0; i < out->size(); i += 2) {
			(*out)[i] = static_cast<uint8_t>(v), (*out)[i + 1] = static_cast<uint8_t>(v >> 8);
		}
		return true;
	}
	case DRM_FORMAT_NV12: {
		*stride = static_cast<size_t>(w);
		out->assign(*stride * h + *stride * (h / 2), 0);
		uint8_t yy, u, v;
		rgb_to_yuv(rgb, &yy, &u, &v);
		memset(out->data(), yy, *stride * h);
		for (size_t i = *stride * h; i < out->size(); i += 2) (*out)[i] = u, (*out)[i + 1] = v;
		return true;
	}
	default: return false;
	}
}

// The stream's packing of a whole buffer: for NV12, each pair of luma rows then one UV row.
std::vector<uint8_t> stream_packing(uint32_t format, int w, int h, const std::vector<uint8_t> &shm, size_t stride) {
	if (format != DRM_FORMAT_NV12) {
		size_t row = format == DRM_FORMAT_RGB888                                 ? w * 3
			: format == DRM_FORMAT_XRGB4444 || format == DRM_FORMAT_ARGB4444 ? w * 2
											 : w * 4;
		std::vector<uint8_t> out;
		for (int y = 0; y < h; y++)
			out.insert(out.end(), shm.begin() + y * stride, shm.begin() + y * stride + row);
		return out;
	}
	std::vector<uint8_t> out;
	const uint8_t *uv = shm.data() + stride * h;
	for (int y = 0; y < h; y += 2) {
		out.insert(out.end(), shm.begin() + y * stride, shm.begin() + y * stride + w);
		out.insert(out.end(), shm.begin() + (y + 1) * stride, shm.begin() + (y + 1) * stride + w);
		out.insert(out.end(), uv + (y / 2) * stride, uv + (y / 2) * stride + w);
	}
	return out;
}

// What a correct compositor shows for `rgb` drawn in `format` (the reference decoder's
// reading of the very bytes we send).
// `straight`: the bytes' colour is straight alpha (wp_color_representation).
uint32_t shown(uint32_t format, uint32_t rgb, bool straight = false) {
	std::vector<uint8_t> bytes;
	size_t stride = 0;
	solid(format, kBlock, kBlock, rgb, &bytes, &stride);
	std::vector<uint32_t> px;
	if (straight) {
		test::reference_rgb_straight(format, kBlock, kBlock, stride, bytes.data(), &px);
	} else {
		test::reference_rgb(format, kBlock, kBlock, stride, bytes.data(), &px);
	}
	return px.empty() ? 0xdeadbe : px[kBlock * (kBlock / 2) + kBlock / 2];
}

// ---- buffers ---------------------------------------------------------------------------------

struct Buffer {
	uint32_t format = 0;
	int w = 0, h = 0;
	wl_buffer *buffer = nullptr;
	bool released = true;
	// shm
	ShmPool pool;
	size_t stride = 0;
	// stream
	pp_stream_v1 *stream = nullptr;
	int data_fd = -1;
	bool shm = true; // else on a stream

	bool create(bool on_shm, uint32_t fmt, int width, int height, uint32_t rgb) {
		shm = on_shm, format = fmt, w = width, h = height;
		std::vector<uint8_t> bytes;
		if (!solid(format, w, h, rgb, &bytes, &stride)) return false;
		static const wl_buffer_listener listener = {
			.release = [](void *data, wl_buffer *) { static_cast<Buffer *>(data)->released = true; },
		};
		std::string error;
		if (shm) {
			if (!pool.create(&conn, bytes.size(), &error)) return false;
			memcpy(pool.data, bytes.data(), bytes.size());
			buffer = wl_shm_pool_create_buffer(
				pool.pool, 0, w, h, static_cast<int32_t>(stride), drm_to_shm(format));
		} else {
			int fds[2];
			if (conn.stream_manager == nullptr ||
				socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0)
				return false;
			stream = pp_stream_manager_v1_create_stream(conn.stream_manager, fds[0]);
			close(fds[0]);
			data_fd = fds[1];
			buffer = pp_stream_v1_create_buffer(stream, w, h, format);
			if (!fill(rgb)) return false;
		}
		wl_buffer_add_listener(buffer, &listener, this);
		return buffer != nullptr;
	}
	// Writes new content: the caller must own the buffer (released).
	bool fill(uint32_t rgb) {
		std::vector<uint8_t> bytes;
		size_t s = 0;
		solid(format, w, h, rgb, &bytes, &s);
		if (shm) {
			memcpy(pool.data, bytes.data(), bytes.size());
			return true;
		}
		std::vector<uint8_t> packed = stream_packing(format, w, h, bytes, s);
		pp_stream_v1_write(stream, buffer, 0, 0, w, h, static_cast<uint32_t>(packed.size()));
		wl_display_flush(conn.display);
		const uint8_t *p = packed.data();
		size_t n = packed.size();
		while (n > 0) {
			ssize_t k = write(data_fd, p, n);
			if (k <= 0) return false;
			p += k, n -= static_cast<size_t>(k);
		}
		return true;
	}
	void destroy() {
		if (buffer) wl_buffer_destroy(buffer);
		buffer = nullptr;
	}
	~Buffer() {
		destroy();
		if (stream) pp_stream_v1_destroy(stream);
		if (data_fd >= 0) close(data_fd);
	}
};

// ---- surfaces --------------------------------------------------------------------------------

struct Surface {
	wl_surface *surface = nullptr;
	wl_subsurface *sub = nullptr;
};

void attach(Surface &s, Buffer &b) {
	wl_surface_attach(s.surface, b.buffer, 0, 0);
	wl_surface_damage_buffer(s.surface, 0, 0, b.w, b.h);
	b.released = false;
}

// Frame callbacks of the commits since the last settle(): the plugin holds a commit until its
// pixels are converted (on a worker), and its frame callback comes once it is drawn.
std::set<wl_callback *> frames_pending;

void ask_frame(Surface &s) {
	static const wl_callback_listener listener = {
		.done =
			[](void *, wl_callback *cb, uint32_t) {
				frames_pending.erase(cb);
				wl_callback_destroy(cb);
			},
	};
	wl_callback *cb = wl_surface_frame(s.surface);
	wl_callback_add_listener(cb, &listener, nullptr);
	frames_pending.insert(cb);
}

void commit(Surface &s) {
	ask_frame(s);
	wl_surface_commit(s.surface);
}

// A commit that changes nothing but asks for its area to be drawn again.
void damage_only(Surface &s) {
	wl_surface_damage_buffer(s.surface, 0, 0, kBlock, kBlock);
	commit(s);
}

Surface child(Surface &parent, int index, bool sync) {
	Surface c;
	c.surface = wl_compositor_create_surface(conn.compositor);
	c.sub = wl_subcompositor_get_subsurface(conn.subcompositor, c.surface, parent.surface);
	wl_subsurface_set_position(c.sub, index * kBlock, 0);
	if (!sync) wl_subsurface_set_desync(c.sub);
	return c;
}

// The run, set up by main(): the buffers' format (its name as given) and transport, the parent
// surface the scenarios draw on, what the reference says each colour shows as, and the
// checkpoints failed so far.
struct Run {
	uint32_t format = 0;
	const char *format_arg = "";
	std::string transport = "shm";
	Surface parent;
	int tol = 0;
	uint32_t red = 0, green = 0, blue = 0;
	int failures = 0;
};

bool settle() {
	// Two roundtrips: requests applied, and any idle work after that dispatch done. Then the
	// frames of the commits since the last settle, for at most 500 ms: a cached commit of a
	// synchronized child, or one never shown, has none until its parent commits.
	if (!conn.roundtrip() || !conn.roundtrip()) return false;
	for (int i = 0; i < 50 && !frames_pending.empty(); i++) conn.dispatch_timeout(10);
	for (wl_callback *cb : frames_pending) wl_callback_destroy(cb);
	frames_pending.clear();
	return wl_display_get_error(conn.display) == 0;
}

// ---- checkpoints -----------------------------------------------------------------------------

bool screenshot(int *w, int *h, std::vector<uint8_t> *rgb) {
	std::string path = std::string(getenv("XDG_RUNTIME_DIR")) + "/semantics-" + std::to_string(getpid()) + ".ppm";
	pid_t pid = fork();
	if (pid == 0) {
		execlp("grim", "grim", "-t", "ppm", path.c_str(), static_cast<char *>(nullptr));
		_exit(127);
	}
	// Keep answering the compositor while grim runs.
	int status = 0;
	for (int i = 0; i < 1000; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid) break;
		conn.dispatch_timeout(10);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return false;
	std::ifstream in(path, std::ios::binary);
	std::string magic;
	int maxval = 0;
	in >> magic >> *w >> *h >> maxval;
	in.get();
	rgb->resize(static_cast<size_t>(*w) * *h * 3);
	in.read(reinterpret_cast<char *>(rgb->data()), static_cast<std::streamsize>(rgb->size()));
	unlink(path.c_str());
	return in && magic == "P6";
}

// want[i]: the colour the centre of block i must show (0xRRGGBB, black for nothing).
void checkpoint(Run &run, const char *name, const std::vector<uint32_t> &want, int tolerance) {
	if (!settle()) {
		printf("checkpoint %s FAIL: connection lost: %s\n", name, conn.error_text().c_str());
		run.failures++;
		return;
	}
	int w = 0, h = 0;
	std::vector<uint8_t> rgb;
	if (!screenshot(&w, &h, &rgb)) {
		printf("checkpoint %s FAIL: no screenshot\n", name);
		run.failures++;
		return;
	}
	std::string bad;
	for (size_t i = 0; i < want.size(); i++) {
		int x = static_cast<int>(i) * kBlock + kBlock / 2, y = kBlock / 2;
		const uint8_t *p = &rgb[(static_cast<size_t>(y) * w + x) * 3];
		uint32_t got = static_cast<uint32_t>(p[0]) << 16 | p[1] << 8 | p[2];
		for (int shift : {16, 8, 0}) {
			int d = static_cast<int>((got >> shift) & 0xff) - static_cast<int>((want[i] >> shift) & 0xff);
			if (d > tolerance || d < -tolerance) {
				char line[128];
				snprintf(line, sizeof(line), " block %zu shows %06x, want %06x;", i, got, want[i]);
				bad += line;
				break;
			}
		}
	}
	printf("checkpoint %s %s%s\n", name, bad.empty() ? "ok" : "FAIL:", bad.c_str());
	fflush(stdout);
	if (!bad.empty()) run.failures++;
}

void expect(Run &run, const char *name, bool ok, const std::string &what) {
	printf("checkpoint %s %s%s\n", name, ok ? "ok" : "FAIL: ", ok ? "" : what.c_str());
	fflush(stdout);
	if (!ok) run.failures++;
}

// Waits up to `ms` for the buffer's release.
bool wait_release(Buffer &b, int ms) {
	for (int i = 0; i < ms / 10 && !b.released; i++) conn.dispatch_timeout(10);
	return b.released;
}

// Converted wl_shm buffers are released once converted; buffers the renderer reads in
// place (native formats, stream storage) stay busy while a surface shows them.
void make(Run &run, Buffer &b, uint32_t rgb) {
	if (!b.create(run.transport == "shm", run.format, kBlock, kBlock, rgb)) {
		fprintf(stderr, "cannot make a %s %s buffer\n", run.format_arg, run.transport.c_str());
		exit(1);
	}
}

// ---- the scenarios: one function each, named after the scenario ----

// A on P and C, then B on C; P's damage-only commit repaints P's area.
void scenario_shared_then_replaced(Run &run) {
	Buffer a, b;
	make(run, a, kRed);
	make(run, b, kGreen);
	Surface c = child(run.parent, 1, false);
	attach(run.parent, a), commit(run.parent);
	attach(c, a), commit(c);
	attach(c, b), commit(c);
	damage_only(run.parent);
	checkpoint(run, "p-keeps-a-c-shows-b", {run.red, run.green}, run.tol);
	damage_only(c);
	damage_only(run.parent);
	checkpoint(run, "after-more-repaints", {run.red, run.green}, run.tol);
}

// The same buffer on three surfaces, with commits of other content interleaved, then
// (when it comes back) rewritten and committed to one of them only.
void scenario_three_surfaces(Run &run) {
	Buffer a, b, d;
	make(run, a, kRed);
	make(run, b, kGreen);
	Surface c1 = child(run.parent, 1, false), c2 = child(run.parent, 2, false);
	attach(run.parent, a), commit(run.parent);
	attach(c1, a), commit(c1);
	attach(c2, a), commit(c2);
	checkpoint(run, "a-on-three", {run.red, run.red, run.red}, run.tol);
	attach(c1, b), commit(c1);
	damage_only(run.parent);
	checkpoint(run, "b-on-the-middle-one", {run.red, run.green, run.red}, run.tol);
	if (wait_release(a, 2000)) {
		// Released: the client may draw into it; what P and C2 show must not change.
		a.fill(kBlue);
		attach(c2, a), commit(c2);
		damage_only(run.parent);
		checkpoint(run, "a-rewritten-for-c2-only", {run.red, run.green, run.blue}, run.tol);
	} else {
		make(run, d, kBlue);
		attach(c2, d), commit(c2);
		damage_only(run.parent);
		checkpoint(run, "new-buffer-for-c2-only", {run.red, run.green, run.blue}, run.tol);
	}
}

// A synchronized subsurface: its commits are cached until the parent commits; a cached
// commit is not shown, even when the area is drawn again, and its buffer is released
// only once its content is kept elsewhere.
void scenario_sync_cached(Run &run) {
	Buffer a, b;
	make(run, a, kRed);
	Surface c = child(run.parent, 1, true);
	Buffer p;
	make(run, p, kWhite);
	// Wait until the parent's commit is applied and shown: a commit held for stream
	// bytes would apply the child's later cache with it (wlroots 0.18 applies a
	// synchronized child's cache at its parent's next apply, whenever that comes).
	CommitWaiter waiter;
	attach(run.parent, p);
	waiter.arm(&conn, run.parent.surface);
	commit(run.parent);
	if (!waiter.wait(&conn, 10000)) {
		expect(run, "parent-presented", false, "the parent's commit was not presented");
		return;
	}
	attach(c, a), commit(c);
	checkpoint(run, "cached-not-shown", {shown(run.format, kWhite), kBlack}, run.tol);
	settle();
	// A cached commit's buffer may be released only once its content is kept
	// elsewhere (a converted image): reused by the client then, it must not change
	// what the parent's commit shows.
	if (a.released) a.fill(kGreen);
	damage_only(run.parent);
	checkpoint(run, "applied-with-parent", {shown(run.format, kWhite), run.red}, run.tol);
	Buffer *next = &a;
	if (wait_release(a, 2000)) {
		a.fill(kBlue); // released early: the client may reuse it at once
	} else {
		make(run, b, kBlue);
		next = &b;
	}
	attach(c, *next), commit(c);
	checkpoint(run, "rewritten-and-cached-shows-old", {shown(run.format, kWhite), run.red}, run.tol);
	settle();
	if (next->released) next->fill(kGreen); // as above
	damage_only(run.parent);
	checkpoint(run, "second-applied-with-parent", {shown(run.format, kWhite), run.blue}, run.tol);
}

// The client destroys the wl_buffer right after committing it, and later.
void scenario_destroyed_while_shown(Run &run) {
	Buffer a, b;
	make(run, a, kRed);
	make(run, b, kGreen);
	Surface c = child(run.parent, 1, false);
	attach(run.parent, a), commit(run.parent);
	a.destroy(); // before the compositor converted anything
	attach(c, b), commit(c);
	settle();
	b.destroy();
	checkpoint(run, "destroyed-buffers-still-shown", {run.red, run.green}, run.tol);
	damage_only(run.parent);
	damage_only(c);
	checkpoint(run, "and-after-repaints", {run.red, run.green}, run.tol);
}

// Several commits in one burst: only the last is shown.
void scenario_burst(Run &run) {
	Buffer a, b, d;
	make(run, a, kRed);
	make(run, b, kGreen);
	make(run, d, kBlue);
	for (int i = 0; i < 10; i++) {
		attach(run.parent, a), commit(run.parent);
		attach(run.parent, b), commit(run.parent);
	}
	attach(run.parent, d), commit(run.parent);
	checkpoint(run, "last-of-burst", {run.blue}, run.tol);
}

// One buffer on the parent, whose colour is straight alpha, and on a child that says
// nothing (premultiplied): each shows its own reading of the same bytes, also after
// repaints; then the parent goes back to premultiplied and shows what the child shows.
void scenario_alpha_shared(Run &run) {
	if (conn.color_representation == nullptr) {
		expect(run, "color-representation", false, "no wp_color_representation_manager_v1");
		return;
	}
	const uint32_t argb = 0x80c86432; // alpha 0x80, colour (200, 100, 50): not premultiplied
	const uint32_t straight = shown(run.format, argb, true), premultiplied = shown(run.format, argb);
	if (straight == premultiplied || straight == 0xdeadbe) {
		expect(run, "readings-differ", false, "the format does not tell the readings apart");
		return;
	}
	Buffer a;
	make(run, a, argb);
	Surface c = child(run.parent, 1, false);
	wp_color_representation_surface_v1 *color =
		wp_color_representation_manager_v1_get_surface(conn.color_representation, run.parent.surface);
	wp_color_representation_surface_v1_set_alpha_mode(
		color, WP_COLOR_REPRESENTATION_SURFACE_V1_ALPHA_MODE_STRAIGHT);
	attach(run.parent, a), commit(run.parent);
	attach(c, a), commit(c);
	checkpoint(run, "parent-straight-child-premultiplied", {straight, premultiplied}, run.tol);
	damage_only(c);
	damage_only(run.parent);
	checkpoint(run, "after-repaints", {straight, premultiplied}, run.tol);
	// The child commits it first this time, then the parent, straight again.
	attach(c, a), commit(c);
	attach(run.parent, a), commit(run.parent);
	checkpoint(run, "committed-the-other-way-round", {straight, premultiplied}, run.tol);
	wp_color_representation_surface_v1_set_alpha_mode(
		color, WP_COLOR_REPRESENTATION_SURFACE_V1_ALPHA_MODE_PREMULTIPLIED_ELECTRICAL);
	attach(run.parent, a), commit(run.parent);
	checkpoint(run, "parent-back-to-premultiplied", {premultiplied, premultiplied}, run.tol);
}

// Size and format changes on one surface, with a native buffer in between.
void scenario_size_and_format(Run &run) {
	struct Step {
		uint32_t format;
		int w, h;
		uint32_t rgb;
	};
	const Step steps[] = {{run.format, 8, 8, kRed}, {DRM_FORMAT_XRGB4444, 16, 8, kGreen},
		{DRM_FORMAT_NV12, 8, 16, kBlue}, {DRM_FORMAT_XRGB8888, 16, 8, kWhite}, {run.format, 16, 8, kGreen},
		{run.format, 8, 8, kBlue}};
	std::vector<std::unique_ptr<Buffer>> keep;
	int n = 0;
	for (const Step &s : steps) {
		auto b = std::make_unique<Buffer>();
		if (!b->create(run.transport == "shm", s.format, s.w, s.h, s.rgb)) {
			fprintf(stderr, "cannot make a buffer\n");
			exit(1);
		}
		attach(run.parent, *b), commit(run.parent);
		std::vector<uint32_t> want;
		uint32_t colour = shown(s.format, s.rgb);
		for (int x = 0; x < s.w / kBlock; x++) want.push_back(colour);
		want.resize(3, kBlack); // right of the buffer: nothing
		std::string name = "step" + std::to_string(++n);
		checkpoint(run, name.c_str(), want, std::max(run.tol, test::reference_tolerance(s.format)));
		keep.push_back(std::move(b));
	}
}

const std::map<std::string, void (*)(Run &)> kScenarios = {
	{"shared-then-replaced", scenario_shared_then_replaced},
	{"three-surfaces", scenario_three_surfaces},
	{"sync-cached", scenario_sync_cached},
	{"destroyed-while-shown", scenario_destroyed_while_shown},
	{"burst", scenario_burst},
	{"alpha-shared", scenario_alpha_shared},
	{"size-and-format", scenario_size_and_format},
};

} // namespace

int main(int argc, char *argv[]) {
	if (__lsan_disable != nullptr) __lsan_disable();
	if (argc < 4) {
		fprintf(stderr, "usage: %s SCENARIO FORMAT shm|stream\n", argv[0]);
		return 2;
	}
	std::string scenario = argv[1];
	Run run;
	if (!parse_format(argv[2], &run.format)) {
		fprintf(stderr, "unknown format %s\n", argv[2]);
		return 2;
	}
	run.format = shm_to_drm(run.format);
	run.format_arg = argv[2];
	run.transport = argv[3];
	std::string error;
	if (!conn.connect(&error)) {
		fprintf(stderr, "%s\n", error.c_str());
		return 1;
	}
	if (conn.subcompositor == nullptr) {
		fprintf(stderr, "no wl_subcompositor\n");
		return 1;
	}
	Window window;
	if (!window.create(&conn, "semantics", &error)) {
		fprintf(stderr, "%s\n", error.c_str());
		return 1;
	}
	run.parent = {window.surface, nullptr};
	run.tol = test::reference_tolerance(run.format);
	run.red = shown(run.format, kRed), run.green = shown(run.format, kGreen), run.blue = shown(run.format, kBlue);
	auto it = kScenarios.find(scenario);
	if (it == kScenarios.end()) {
		fprintf(stderr, "unknown scenario %s\n", scenario.c_str());
		return 2;
	}
	it->second(run);
	printf("%s\n", run.failures == 0 ? "all ok" : "failed");
	return run.failures == 0 ? 0 : 1;
}
