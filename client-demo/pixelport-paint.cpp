// pixelport-paint: shows a known pattern in one wl_shm buffer and reports when it is on screen.
//
// Tests use it as the "real client": it commits pattern_argb() in the chosen format and size,
// waits for the presentation (or frame) event, prints "presented FORMAT WxH" on stdout, then
// stays mapped for --hold-ms (forever with -1) so a screenshot can be taken.
#include <poll.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include <CLI/CLI.hpp>

#include "pattern.hpp"
#include "wayland_client.hpp"

using namespace pixelport;
using namespace pixelport::client;

int main(int argc, char *argv[]) {
	std::string format_arg = "XRGB8888";
	std::string size_arg = "128x96";
	uint32_t seed = 0;
	int stride_pad = 0;
	int hold_ms = -1;
	CLI::App app{"pixelport-paint: show a known test pattern in a wl_shm buffer"};
	app.add_option("--format", format_arg, "XRGB8888 or ARGB8888");
	app.add_option("--size", size_arg, "buffer size WIDTHxHEIGHT in pixels");
	app.add_option("--seed", seed, "pattern seed");
	app.add_option("--stride-pad", stride_pad, "bytes of padding after each row")->check(CLI::Range(0, 4096));
	app.add_option("--hold-ms", hold_ms, "stay mapped this long after presentation (-1: until killed)");
	CLI11_PARSE(app, argc, argv);

	uint32_t format;
	int width = 0, height = 0;
	if (!parse_format(format_arg, &format) ||
			(format != WL_SHM_FORMAT_ARGB8888 && format != WL_SHM_FORMAT_XRGB8888)) {
		fprintf(stderr, "pixelport-paint: unsupported format '%s'\n", format_arg.c_str());
		return 2;
	}
	if (sscanf(size_arg.c_str(), "%dx%d", &width, &height) != 2 || width <= 0 || height <= 0 ||
			width > 16384 || height > 16384) {
		fprintf(stderr, "pixelport-paint: bad --size '%s'\n", size_arg.c_str());
		return 2;
	}

	Connection conn;
	std::string error;
	if (!conn.connect(&error)) {
		fprintf(stderr, "pixelport-paint: %s\n", error.c_str());
		return 1;
	}
	if (!conn.has_shm_format(format)) {
		fprintf(stderr, "pixelport-paint: compositor does not advertise %s\n", format_arg.c_str());
		return 1;
	}
	Window window;
	if (!window.create(&conn, "pixelport-paint", &error)) {
		fprintf(stderr, "pixelport-paint: %s\n", error.c_str());
		return 1;
	}

	const size_t stride = static_cast<size_t>(width) * 4 + static_cast<size_t>(stride_pad);
	ShmPool pool;
	if (!pool.create(&conn, stride * static_cast<size_t>(height), &error)) {
		fprintf(stderr, "pixelport-paint: %s\n", error.c_str());
		return 1;
	}
	auto *base = static_cast<uint8_t *>(pool.data);
	memset(base, 0xa5, pool.size); // padding bytes must never be shown
	for (int y = 0; y < height; y++) {
		auto *row = reinterpret_cast<uint32_t *>(base + stride * static_cast<size_t>(y));
		for (int x = 0; x < width; x++) {
			uint32_t p = pattern_argb(static_cast<uint32_t>(x), static_cast<uint32_t>(y), seed);
			// XRGB8888's X byte is undefined: fill it with junk to prove it is ignored.
			row[x] = format == WL_SHM_FORMAT_XRGB8888 ? (p & 0x00ffffffu) | ((x * 37u + y) & 0xff) << 24 : p;
		}
	}
	wl_buffer *buffer = wl_shm_pool_create_buffer(pool.pool, 0, width, height,
		static_cast<int32_t>(stride), format);

	CommitWaiter waiter;
	wl_surface_attach(window.surface, buffer, 0, 0);
	wl_surface_damage_buffer(window.surface, 0, 0, width, height);
	waiter.arm(&conn, window.surface);
	wl_surface_commit(window.surface);
	if (!waiter.wait(&conn, 10000) || !waiter.presented) {
		fprintf(stderr, "pixelport-paint: frame not presented: %s\n", conn.error_text().c_str());
		return 1;
	}
	printf("presented %s %dx%d\n", format_name(format).c_str(), width, height);
	fflush(stdout);

	// Stay mapped, answering pings, until the hold time ends or the compositor goes away.
	uint64_t end = hold_ms < 0 ? UINT64_MAX : now_ns() + static_cast<uint64_t>(hold_ms) * 1000000u;
	while (now_ns() < end) {
		if (!conn.dispatch_timeout(100) && wl_display_get_error(conn.display) != 0) {
			fprintf(stderr, "pixelport-paint: %s\n", conn.error_text().c_str());
			return 1;
		}
	}
	wl_buffer_destroy(buffer);
	return 0;
}
