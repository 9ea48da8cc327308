// pixelport-paint: shows known patterns through wl_shm, frame by frame, in any format the
// compositor advertises, and reports when each frame is on screen.
//
// Tests use it as the "real client". Each --frame is painted into one of two buffers,
// attached with its damage, committed, and waited for (presentation feedback); then
// "presented FORMAT WxH" is printed. Afterwards it stays mapped for --hold-ms (default:
// until killed) so a screenshot can be taken.
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli.hpp"
#include "pattern.hpp"
#include "transport.hpp"
#include "wayland_client.hpp"

using namespace pixelport;
using namespace pixelport::client;

namespace {

struct FrameSpec {
	uint32_t format = WL_SHM_FORMAT_XRGB8888;
	int width = 128, height = 96;
	uint32_t seed = 0;
	int damage[4] = {0, 0, -1, -1}; // x, y, w, h; w < 0: whole buffer
	bool fill_all = true; // false: write only the damaged pixels
	int slot = 0;
	int alpha = -1; // wp_color_representation alpha mode set before this frame's commit; -1: none
};

struct Slot {
	ShmPool pool;
	wl_buffer *buffer = nullptr;
	uint32_t format = 0;
	int width = 0, height = 0;
	size_t stride = 0;
	bool busy = false;
	~Slot() {
		if (buffer) wl_buffer_destroy(buffer);
	}
};

constexpr const char *kName = "pixelport-paint";

// "premultiplied" or "straight": wp_color_representation_surface_v1.alpha_mode values.
bool parse_alpha(const std::string &s, int *mode) {
	if (s == "premultiplied") {
		*mode = WP_COLOR_REPRESENTATION_SURFACE_V1_ALPHA_MODE_PREMULTIPLIED_ELECTRICAL;
	} else if (s == "straight") {
		*mode = WP_COLOR_REPRESENTATION_SURFACE_V1_ALPHA_MODE_STRAIGHT;
	} else {
		return false;
	}
	return true;
}

bool parse_size(const std::string &s, int *w, int *h) { return cli::parse_wxh(s, 1, 65535, w, h); }

// "x:y:w:h", each -65535..65535 (w < 0: the whole buffer).
bool parse_damage(const std::string &s, int damage[4]) {
	std::stringstream in(s);
	std::string item;
	int64_t v[4];
	int n = 0;
	while (std::getline(in, item, ':')) {
		if (n == 4 || !cli::parse_int(item, -65535, 65535, &v[n])) return false;
		n++;
	}
	if (n != 4 || s.back() == ':') return false;
	for (int i = 0; i < 4; i++) damage[i] = static_cast<int>(v[i]);
	return true;
}

bool parse_frame(const std::string &spec, FrameSpec *f, std::string *error) {
	std::stringstream in(spec);
	std::string item;
	while (std::getline(in, item, ',')) {
		size_t eq = item.find('=');
		std::string key = item.substr(0, eq), value = eq == std::string::npos ? "" : item.substr(eq + 1);
		if (key == "format") {
			if (!parse_format(value, &f->format)) {
				*error = "unknown format '" + value + "'";
				return false;
			}
		} else if (key == "size") {
			if (!parse_size(value, &f->width, &f->height)) {
				*error = "bad size '" + value + "' (want WxH, each 1..65535)";
				return false;
			}
		} else if (key == "seed") {
			uint64_t seed = 0;
			if (!cli::parse_uint(value, 0, UINT32_MAX, &seed)) {
				*error = "bad seed '" + value + "' (want 0.." + std::to_string(UINT32_MAX) + ")";
				return false;
			}
			f->seed = static_cast<uint32_t>(seed);
		} else if (key == "damage") {
			if (!parse_damage(value, f->damage)) {
				*error = "bad damage '" + value + "' (want x:y:w:h, each -65535..65535)";
				return false;
			}
		} else if (key == "fill") {
			if (value != "all" && value != "damage") {
				*error = "bad fill '" + value + "' (want all or damage)";
				return false;
			}
			f->fill_all = value == "all";
		} else if (key == "buffer") {
			if (value != "0" && value != "1") {
				*error = "bad buffer '" + value + "' (want 0 or 1)";
				return false;
			}
			f->slot = value == "1" ? 1 : 0;
		} else if (key == "alpha") {
			if (!parse_alpha(value, &f->alpha)) {
				*error = "bad alpha '" + value + "' (want premultiplied or straight)";
				return false;
			}
		} else {
			*error = "unknown frame key '" + key + "'";
			return false;
		}
	}
	return true;
}

// "COEFFICIENTS:RANGE[:LOCATION]": bt601|bt709|bt2020, full|limited, chroma location type 0..5
// (wp_color_representation_surface_v1's values).
bool parse_color(const std::string &s, uint32_t *coefficients, uint32_t *range, uint32_t *location) {
	std::stringstream in(s);
	std::string c, r, l;
	if (!std::getline(in, c, ':') || !std::getline(in, r, ':')) return false;
	bool has_location = static_cast<bool>(std::getline(in, l, ':'));
	std::string rest;
	if (std::getline(in, rest) || s.back() == ':') return false;
	if (c == "bt601") {
		*coefficients = WP_COLOR_REPRESENTATION_SURFACE_V1_COEFFICIENTS_BT601;
	} else if (c == "bt709") {
		*coefficients = WP_COLOR_REPRESENTATION_SURFACE_V1_COEFFICIENTS_BT709;
	} else if (c == "bt2020") {
		*coefficients = WP_COLOR_REPRESENTATION_SURFACE_V1_COEFFICIENTS_BT2020;
	} else {
		return false;
	}
	if (r == "full") {
		*range = WP_COLOR_REPRESENTATION_SURFACE_V1_RANGE_FULL;
	} else if (r == "limited") {
		*range = WP_COLOR_REPRESENTATION_SURFACE_V1_RANGE_LIMITED;
	} else {
		return false;
	}
	*location = 0;
	if (has_location) {
		int64_t type = 0;
		if (!cli::parse_int(l, 0, 5, &type)) return false;
		*location = WP_COLOR_REPRESENTATION_SURFACE_V1_CHROMA_LOCATION_TYPE_0 + static_cast<uint32_t>(type);
	}
	return true;
}

} // namespace

int main(int argc, char *argv[]) {
	std::string format_arg = "XRGB8888";
	std::string size_arg = "128x96";
	uint32_t seed = 0;
	int stride_pad = 0;
	int hold_ms = -1;
	std::vector<std::string> frame_args;
	std::string transport_arg = "shm";
	std::string chunk_arg;
	std::string color_arg;
	std::string alpha_arg;
	CLI::App app{
		"pixelport-paint: show known test patterns through wl_shm or the pixelport stream (socket or pipe)"};
	app.add_option("--format", format_arg, "pixel format (DRM name, e.g. XRGB8888, NV12, RGB565)");
	app.add_option("--size", size_arg, "buffer size WIDTHxHEIGHT in pixels");
	app.add_option("--seed", seed, "pattern seed")->transform(cli::Range(0u, UINT32_MAX));
	app.add_option("--stride-pad", stride_pad, "bytes of padding after each row")->transform(cli::Range(0, 4096));
	app.add_option("--hold-ms", hold_ms, "stay mapped this long after the last frame (-1: until killed)")
		->transform(cli::Range(-1, INT32_MAX));
	app.add_option("--frame", frame_args,
		"a frame: format=F,size=WxH,seed=N,damage=x:y:w:h,fill=all|damage,buffer=0|1 (repeatable; "
		"unset keys take the options above)");
	app.add_option("--transport", transport_arg,
		"shm (two buffers, painted in place), shm-new, socket, pipe or auto (client/transport.hpp)");
	app.add_option("--chunk", chunk_arg, "stream sends in pieces: N bytes, or random:N (tests); N 1..2^30");
	app.add_option("--color", color_arg,
		"YCbCr colour representation, COEFFICIENTS:RANGE[:LOCATION]: bt601|bt709|bt2020, full|limited, "
		"chroma location type 0..5 (wp_color_representation_v1; default: the compositor's rule)");
	app.add_option("--alpha", alpha_arg,
		"alpha mode of the frames' colour: premultiplied or straight (wp_color_representation_v1; "
		"default: unset, i.e. premultiplied)");
	app.set_version_flag("--version", std::string("pixelport-paint ") + PIXELPORT_VERSION);
	if (int rc = cli::parse(app, argc, argv, kName); rc >= 0) return rc;

	TransportChoice transport = TransportChoice::ShmReused;
	if (!parse_transport(transport_arg, &transport)) {
		return cli::usage_error(
			kName, "--transport '" + transport_arg + "': want shm, shm-new, socket, pipe or auto");
	}
	// "shm" keeps this program's own two-buffer painting (exact damage semantics tests);
	// every other transport goes through the transport library.
	const bool use_writer = transport_arg != "shm";
	size_t chunk = 0;
	bool chunk_random = chunk_arg.rfind("random:", 0) == 0;
	if (!chunk_arg.empty()) {
		uint64_t n = 0;
		if (!cli::parse_uint(chunk_random ? chunk_arg.substr(7) : chunk_arg, 1, uint64_t{1} << 30, &n)) {
			return cli::usage_error(
				kName, "--chunk '" + chunk_arg + "': want N or random:N, N 1..1073741824");
		}
		chunk = static_cast<size_t>(n);
	}

	uint32_t color_coefficients = 0, color_range = 0, color_location = 0;
	if (!color_arg.empty() && !parse_color(color_arg, &color_coefficients, &color_range, &color_location)) {
		return cli::usage_error(
			kName, "--color '" + color_arg + "': want bt601|bt709|bt2020:full|limited[:0..5]");
	}

	int alpha_mode = -1;
	if (!alpha_arg.empty() && !parse_alpha(alpha_arg, &alpha_mode)) {
		return cli::usage_error(kName, "--alpha '" + alpha_arg + "': want premultiplied or straight");
	}

	FrameSpec defaults;
	if (!parse_format(format_arg, &defaults.format)) {
		return cli::usage_error(kName, "--format '" + format_arg + "': unknown format");
	}
	if (!parse_size(size_arg, &defaults.width, &defaults.height)) {
		return cli::usage_error(kName, "--size '" + size_arg + "': want WIDTHxHEIGHT, each 1..65535");
	}
	defaults.seed = seed;
	std::vector<FrameSpec> frames;
	for (const std::string &spec : frame_args) {
		FrameSpec f = defaults;
		std::string error;
		if (!parse_frame(spec, &f, &error)) return cli::usage_error(kName, "--frame '" + spec + "': " + error);
		frames.push_back(f);
	}
	if (frames.empty()) frames.push_back(defaults);

	Connection conn;
	std::string error;
	if (!conn.connect(&error)) {
		fprintf(stderr, "pixelport-paint: %s\n", error.c_str());
		return 1;
	}
	Window window;
	if (!window.create(&conn, "pixelport-paint", &error)) {
		fprintf(stderr, "pixelport-paint: %s\n", error.c_str());
		return 1;
	}

	if (color_coefficients != 0 && !window.declare_color(color_coefficients, color_range, color_location)) {
		fprintf(stderr, "pixelport-paint: the compositor has no wp_color_representation_manager_v1\n");
		return 1;
	}
	auto set_alpha = [&](int mode) {
		if (window.set_alpha_mode(static_cast<uint32_t>(mode))) return true;
		fprintf(stderr, "pixelport-paint: the compositor does not advertise alpha mode %d\n", mode);
		return false;
	};
	// Committed before any frame: the stream converts rows with the state committed last.
	if (alpha_mode >= 0) {
		if (!set_alpha(alpha_mode)) return 1;
		wl_surface_commit(window.surface);
	}

	SurfaceWriter writer(&conn, window.surface, transport);
	writer.set_chunking(chunk, chunk_random);
	std::vector<uint8_t> image; // the writer's frame in client memory
	uint32_t image_format = 0;
	int image_w = 0, image_h = 0;

	Slot slots[2];
	static const wl_buffer_listener buffer_listener = {
		.release = [](void *data, wl_buffer *) { static_cast<Slot *>(data)->busy = false; },
	};
	for (const FrameSpec &f : frames) {
		uint32_t drm = shm_to_drm(f.format);
		if (!conn.has_shm_format(f.format)) {
			fprintf(stderr, "pixelport-paint: compositor does not advertise %s\n",
				format_name(f.format).c_str());
			return 1;
		}
		if (use_writer) {
			size_t stride = shm_min_stride(drm, f.width) + static_cast<size_t>(stride_pad);
			ShmLayout layout;
			if (!shm_layout(drm, f.width, f.height, stride, &layout)) {
				fprintf(stderr, "pixelport-paint: no layout for %s\n", format_name(f.format).c_str());
				return 1;
			}
			// The pipe transport may still have our pages in the pipe: wait before changing them.
			if (!writer.wait_consumed(10000)) {
				fprintf(stderr, "pixelport-paint: stream writes never consumed\n");
				return 1;
			}
			if (image_format != drm || image_w != f.width || image_h != f.height) {
				image.assign(layout.size, 0xa5);
				image_format = drm;
				image_w = f.width;
				image_h = f.height;
			}
			Rect d = {f.damage[0], f.damage[1], f.damage[2], f.damage[3]};
			if (d.width < 0) d = {0, 0, f.width, f.height};
			if (f.fill_all) {
				encode_pattern(
					drm, f.width, f.height, stride, image.data(), f.seed, 0, 0, f.width, f.height);
			} else {
				encode_pattern(drm, f.width, f.height, stride, image.data(), f.seed, d.x, d.y, d.width,
					d.height);
			}
			if (f.alpha >= 0 && !set_alpha(f.alpha)) return 1;
			Pixels px = {drm, f.width, f.height, stride, image.data(), image.size()};
			CommitWaiter waiter;
			waiter.arm(&conn, window.surface); // applies to the commit put() sends
			if (!writer.put(px, &d, &error)) {
				fprintf(stderr, "pixelport-paint: %s\n", error.c_str());
				return 1;
			}
			if (!waiter.wait(&conn, 10000) || !waiter.presented) {
				fprintf(stderr, "pixelport-paint: frame not presented: %s\n",
					conn.error_text().c_str());
				return 1;
			}
			printf("presented %s %dx%d via %s\n", format_name(f.format).c_str(), f.width, f.height,
				transport_name(writer.timing().transport));
			fflush(stdout);
			continue;
		}
		Slot &slot = slots[f.slot];
		// The compositor owns a committed buffer until wl_buffer.release.
		uint64_t deadline = now_ns() + 2000000000ull;
		while (slot.busy && now_ns() < deadline) {
			if (!conn.dispatch_timeout(50) && wl_display_get_error(conn.display) != 0) break;
		}
		if (slot.busy) {
			fprintf(stderr, "pixelport-paint: buffer %d was never released\n", f.slot);
			return 1;
		}
		if (slot.buffer == nullptr || slot.format != f.format || slot.width != f.width ||
			slot.height != f.height) {
			if (slot.buffer) wl_buffer_destroy(slot.buffer);
			slot.buffer = nullptr;
			slot.pool.destroy();
			slot.stride = shm_min_stride(drm, f.width) + static_cast<size_t>(stride_pad);
			ShmLayout layout;
			if (!shm_layout(drm, f.width, f.height, slot.stride, &layout) ||
				!slot.pool.create(&conn, layout.size, &error)) {
				fprintf(stderr, "pixelport-paint: cannot make a %s buffer: %s\n",
					format_name(f.format).c_str(), error.c_str());
				return 1;
			}
			memset(slot.pool.data, 0xa5, slot.pool.size); // padding bytes must never be shown
			slot.buffer = wl_shm_pool_create_buffer(
				slot.pool.pool, 0, f.width, f.height, static_cast<int32_t>(slot.stride), f.format);
			wl_buffer_add_listener(slot.buffer, &buffer_listener, &slot);
			slot.format = f.format;
			slot.width = f.width;
			slot.height = f.height;
		}
		int dx = f.damage[0], dy = f.damage[1], dw = f.damage[2], dh = f.damage[3];
		if (dw < 0) {
			dx = dy = 0;
			dw = f.width;
			dh = f.height;
		}
		auto *base = static_cast<uint8_t *>(slot.pool.data);
		if (f.fill_all) {
			encode_pattern(drm, f.width, f.height, slot.stride, base, f.seed, 0, 0, f.width, f.height);
		} else {
			encode_pattern(drm, f.width, f.height, slot.stride, base, f.seed, dx, dy, dw, dh);
		}
		if (f.alpha >= 0 && !set_alpha(f.alpha)) return 1;
		CommitWaiter waiter;
		wl_surface_attach(window.surface, slot.buffer, 0, 0);
		wl_surface_damage_buffer(window.surface, dx, dy, dw, dh);
		waiter.arm(&conn, window.surface);
		wl_surface_commit(window.surface);
		slot.busy = true;
		if (!waiter.wait(&conn, 10000) || !waiter.presented) {
			fprintf(stderr, "pixelport-paint: frame not presented: %s\n", conn.error_text().c_str());
			return 1;
		}
		printf("presented %s %dx%d\n", format_name(f.format).c_str(), f.width, f.height);
		fflush(stdout);
	}

	// Stay mapped, answering pings, until the hold time ends or the compositor goes away.
	uint64_t end = hold_ms < 0 ? UINT64_MAX : now_ns() + static_cast<uint64_t>(hold_ms) * 1000000u;
	while (now_ns() < end) {
		if (!conn.dispatch_timeout(100) && wl_display_get_error(conn.display) != 0) {
			fprintf(stderr, "pixelport-paint: %s\n", conn.error_text().c_str());
			return 1;
		}
	}
	return 0;
}
