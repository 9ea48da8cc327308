// pixelport-hostile-client: does one thing a well-behaved wl_shm client never does, then reports
// how the compositor answered: "error CODE INTERFACE" for a protocol error, "ok" otherwise.
// Usage: pixelport-hostile-client MODE [COUNT]   (one function a mode, mode_NAME, listed in kModes).
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

using namespace pixelport;
using namespace pixelport::client;
using pixelport::test::ModeArgs;
using pixelport::test::ModeTable;

namespace {

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

constexpr uint32_t argb = WL_SHM_FORMAT_ARGB8888;

// ---- the modes: one function each, named after the mode ----

int mode_pool_size_zero(const ModeArgs &) {
	pool_of(memfd(4096), 0);
	return report();
}

int mode_pool_size_negative(const ModeArgs &) {
	pool_of(memfd(4096), -4096);
	return report();
}

int mode_pool_pipe_fd(const ModeArgs &) {
	int p[2];
	if (pipe(p) < 0) return 3;
	pool_of(p[0], 4096);
	return report();
}

int mode_pool_larger_than_file(const ModeArgs &) {
	// The pool may be larger than its file; a buffer reaching past the file's end may not.
	wl_shm_pool *pool = pool_of(memfd(4096), 1 << 20);
	wl_shm_pool_create_buffer(pool, 0, 16, 16, 64, argb); // inside the file: fine
	wl_shm_pool_create_buffer(pool, 0, 256, 256, 1024, argb);
	return report();
}

int mode_buffer_negative_offset(const ModeArgs &) {
	wl_shm_pool_create_buffer(pool_of(memfd(1 << 20), 1 << 20), -4, 16, 16, 64, argb);
	return report();
}

int mode_buffer_zero_width(const ModeArgs &) {
	wl_shm_pool_create_buffer(pool_of(memfd(1 << 20), 1 << 20), 0, 0, 16, 64, argb);
	return report();
}

int mode_buffer_negative_height(const ModeArgs &) {
	wl_shm_pool_create_buffer(pool_of(memfd(1 << 20), 1 << 20), 0, 16, -16, 64, argb);
	return report();
}

// The classic mistake: stride given in pixels, not bytes.
int mode_buffer_stride_in_pixels(const ModeArgs &) {
	wl_shm_pool_create_buffer(pool_of(memfd(200 * 200 * 4), 200 * 200 * 4), 0, 200, 200, 200, argb);
	return report();
}

int mode_buffer_beyond_pool(const ModeArgs &) {
	wl_shm_pool_create_buffer(pool_of(memfd(4096), 4096), 0, 16, 65, 64, argb); // 4160 > 4096
	return report();
}

// stride * height overflows 32 bits: only 64-bit maths sees it is beyond the pool.
int mode_buffer_overflowing_size(const ModeArgs &) {
	wl_shm_pool_create_buffer(pool_of(memfd(1 << 20), 1 << 20), INT_MAX - 64, 16, 0x10000, 0x10000, argb);
	return report();
}

int mode_buffer_unknown_format(const ModeArgs &) {
	wl_shm_pool_create_buffer(pool_of(memfd(1 << 20), 1 << 20), 0, 16, 16, 64, 0x12345678);
	return report();
}

int mode_buffer_yuv420_odd_stride(const ModeArgs &) {
	wl_shm_pool_create_buffer(pool_of(memfd(1 << 20), 1 << 20), 0, 16, 16, 17, DRM_FORMAT_YUV420);
	return report();
}

int mode_pool_shrink(const ModeArgs &) {
	wl_shm_pool *pool = pool_of(memfd(8192), 8192);
	wl_shm_pool_resize(pool, 4096);
	return report();
}

// Grow the pool while a buffer of the old mapping is on screen; new buffers in the grown
// part must work at once.
int mode_pool_grow(const ModeArgs &) {
	const int w = 64, h = 64, stride = w * 4, size = stride * h;
	int fd = memfd(size);
	wl_shm_pool *pool = pool_of(fd, size);
	auto *m = static_cast<uint8_t *>(mmap(nullptr, size * 2, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	Window window;
	std::string e;
	if (!window.create(&conn, "hostile", &e)) return 3;
	encode_pattern(DRM_FORMAT_ARGB8888, w, h, stride, m, 1, 0, 0, w, h);
	wl_buffer *first = wl_shm_pool_create_buffer(pool, 0, w, h, stride, argb);
	if (!show(&window, first, w, h)) return report();
	if (ftruncate(fd, size * 2) < 0) return 3;
	wl_shm_pool_resize(pool, size * 2);
	encode_pattern(DRM_FORMAT_ARGB8888, w, h, stride, m + size, 2, 0, 0, w, h);
	wl_buffer *second = wl_shm_pool_create_buffer(pool, size, w, h, stride, argb);
	if (!show(&window, second, w, h)) return report();
	report();
	hold();
	return 0;
}

// Truncate the file behind a buffer that is on screen: SIGBUS territory.
int mode_truncate_attached(const ModeArgs &) {
	const int w = 64, h = 64, stride = w * 4, size = stride * h;
	int fd = memfd(size);
	auto *m = static_cast<uint8_t *>(mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	encode_pattern(DRM_FORMAT_ARGB8888, w, h, stride, m, 1, 0, 0, w, h);
	wl_shm_pool *pool = pool_of(fd, size);
	Window window;
	std::string e;
	if (!window.create(&conn, "hostile", &e)) return 3;
	wl_buffer *buffer = wl_shm_pool_create_buffer(pool, 0, w, h, stride, argb);
	if (!show(&window, buffer, w, h)) return report();
	if (ftruncate(fd, 0) < 0) return 3;
	report();
	hold();
	return 0;
}

// Same, for a format the plugin converts, after destroying pool and buffer.
int mode_truncate_converted_destroyed(const ModeArgs &) {
	const int w = 64, h = 64, stride = w * 3, size = stride * h;
	int fd = memfd(size);
	auto *m = static_cast<uint8_t *>(mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	encode_pattern(DRM_FORMAT_RGB888, w, h, stride, m, 1, 0, 0, w, h);
	wl_shm_pool *pool = pool_of(fd, size);
	Window window;
	std::string e;
	if (!window.create(&conn, "hostile", &e)) return 3;
	wl_buffer *buffer = wl_shm_pool_create_buffer(pool, 0, w, h, stride, DRM_FORMAT_RGB888);
	conn.roundtrip(); // a buffer created past the file's end would be refused (wlcs BadBufferTest)
	wl_surface_attach(window.surface, buffer, 0, 0);
	wl_surface_damage_buffer(window.surface, 0, 0, w, h);
	if (ftruncate(fd, 0) < 0) return 3; // before the compositor reads it
	wl_surface_commit(window.surface);
	wl_buffer_destroy(buffer);
	wl_shm_pool_destroy(pool);
	report();
	hold();
	return 0;
}

// Truncate the file of a large converted buffer right after committing it: a conversion
// worker reads it (the main thread never reads a large commit's pixels), and faults.
// Reports once the commit was presented.
int mode_truncate_while_converting(const ModeArgs &) {
	const int w = 4096, h = 4096, stride = w, size = stride * h * 3 / 2;
	int fd = memfd(size);
	auto *m = static_cast<uint8_t *>(mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	memset(m, 0x80, size); // grey
	wl_shm_pool *pool = pool_of(fd, size);
	Window window;
	std::string e;
	if (!window.create(&conn, "hostile", &e)) return 3;
	wl_buffer *buffer = wl_shm_pool_create_buffer(pool, 0, w, h, stride, DRM_FORMAT_NV12);
	conn.roundtrip();
	CommitWaiter waiter;
	wl_surface_attach(window.surface, buffer, 0, 0);
	wl_surface_damage_buffer(window.surface, 0, 0, w, h);
	waiter.arm(&conn, window.surface);
	wl_surface_commit(window.surface);
	wl_display_flush(conn.display);
	if (ftruncate(fd, 0) < 0) return 3;
	if (!waiter.wait(&conn, 10000) || !waiter.presented) return report();
	report();
	hold();
	return 0;
}

// Destroying a buffer right after its commit still shows that commit's content.
int mode_destroy_after_commit(const ModeArgs &) {
	const int w = 64, h = 64, stride = w * 4, size = stride * h;
	int fd = memfd(size);
	auto *m = static_cast<uint8_t *>(mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	encode_pattern(DRM_FORMAT_ARGB8888, w, h, stride, m, 1, 0, 0, w, h);
	wl_shm_pool *pool = pool_of(fd, size);
	Window window;
	std::string e;
	if (!window.create(&conn, "hostile", &e)) return 3;
	wl_buffer *buffer = wl_shm_pool_create_buffer(pool, 0, w, h, stride, argb);
	CommitWaiter waiter;
	wl_surface_attach(window.surface, buffer, 0, 0);
	wl_surface_damage_buffer(window.surface, 0, 0, w, h);
	waiter.arm(&conn, window.surface);
	wl_surface_commit(window.surface);
	wl_buffer_destroy(buffer);
	wl_shm_pool_destroy(pool);
	munmap(m, size);
	close(fd);
	if (!waiter.wait(&conn, 5000)) return report();
	report();
	hold();
	return 0;
}

// A buffer wider than any output (45120x64), then a normal one: nothing of the first
// (size, texture) may stay behind.
int mode_huge_then_normal(const ModeArgs &) {
	Window window;
	std::string e;
	if (!window.create(&conn, "hostile", &e)) return 3;
	const int hw = 45120, hh = 64, hs = hw * 4;
	int fd = memfd(static_cast<size_t>(hs) * hh);
	auto *m = static_cast<uint8_t *>(
		mmap(nullptr, static_cast<size_t>(hs) * hh, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
	encode_pattern(DRM_FORMAT_ARGB8888, hw, hh, hs, m, 5, 0, 0, hw, hh);
	wl_buffer *huge = wl_shm_pool_create_buffer(pool_of(fd, hs * hh), 0, hw, hh, hs, argb);
	bool huge_shown = show(&window, huge, hw, hh);
	const int w = 64, h = 64, stride = w * 4;
	int fd2 = memfd(stride * h);
	auto *m2 = static_cast<uint8_t *>(mmap(nullptr, stride * h, PROT_READ | PROT_WRITE, MAP_SHARED, fd2, 0));
	encode_pattern(DRM_FORMAT_ARGB8888, w, h, stride, m2, 1, 0, 0, w, h);
	wl_buffer *normal = wl_shm_pool_create_buffer(pool_of(fd2, stride * h), 0, w, h, stride, argb);
	if (!show(&window, normal, w, h)) return report();
	printf("huge %s\n", huge_shown ? "shown" : "refused");
	report();
	hold();
	return 0;
}

// Thousands of pools, buffers and commits: the compositor must not keep fds or mappings.
int mode_churn(const ModeArgs &) {
	const int w = 32, h = 32, stride = w * 4, size = stride * h;
	Window window;
	std::string e;
	if (!window.create(&conn, "hostile", &e)) return 3;
	for (int i = 0; i < 2000; i++) {
		int fd = memfd(size);
		wl_shm_pool *pool = pool_of(fd, size);
		uint32_t format = i % 2 ? argb : DRM_FORMAT_RGB888;
		wl_buffer *buffer = wl_shm_pool_create_buffer(pool, 0, w, h, stride, format);
		wl_surface_attach(window.surface, buffer, 0, 0);
		wl_surface_damage_buffer(window.surface, 0, 0, w, h);
		wl_surface_commit(window.surface);
		wl_buffer_destroy(buffer);
		wl_shm_pool_destroy(pool);
		close(fd);
		if (i % 100 == 0 && !conn.roundtrip()) break;
	}
	report();
	hold();
	return 0;
}

// wp_color_representation_v1: each mode breaks one rule of the protocol.
wp_color_representation_surface_v1 *color_surface(Window *window) {
	std::string e;
	if (conn.color_representation == nullptr || !window->create(&conn, "hostile", &e)) exit(3);
	return wp_color_representation_manager_v1_get_surface(conn.color_representation, window->surface);
}

// Commits an 8x8 buffer of `format` (zeroes) on the window.
void commit_buffer(Window *window, uint32_t format) {
	const int w = 8, h = 8;
	size_t stride = shm_min_stride(shm_to_drm(format), w);
	ShmLayout layout;
	if (!shm_layout(shm_to_drm(format), w, h, stride, &layout)) exit(3);
	int fd = memfd(layout.size);
	wl_shm_pool *pool = pool_of(fd, static_cast<int32_t>(layout.size));
	wl_buffer *buffer = wl_shm_pool_create_buffer(pool, 0, w, h, static_cast<int32_t>(stride), format);
	wl_surface_attach(window->surface, buffer, 0, 0);
	wl_surface_damage_buffer(window->surface, 0, 0, w, h);
	wl_surface_commit(window->surface);
}

int mode_color_surface_exists(const ModeArgs &) {
	Window window;
	color_surface(&window);
	wp_color_representation_manager_v1_get_surface(conn.color_representation, window.surface);
	return report();
}

int mode_color_unsupported_coefficients(const ModeArgs &) {
	Window window;
	wp_color_representation_surface_v1_set_coefficients_and_range(color_surface(&window),
		WP_COLOR_REPRESENTATION_SURFACE_V1_COEFFICIENTS_ICTCP, WP_COLOR_REPRESENTATION_SURFACE_V1_RANGE_FULL);
	return report();
}

int mode_color_invalid_range(const ModeArgs &) {
	Window window;
	wp_color_representation_surface_v1_set_coefficients_and_range(
		color_surface(&window), WP_COLOR_REPRESENTATION_SURFACE_V1_COEFFICIENTS_BT709, 0);
	return report();
}

int mode_color_optical_alpha(const ModeArgs &) {
	// Premultiplied optical needs the transfer function: not advertised.
	Window window;
	wp_color_representation_surface_v1_set_alpha_mode(
		color_surface(&window), WP_COLOR_REPRESENTATION_SURFACE_V1_ALPHA_MODE_PREMULTIPLIED_OPTICAL);
	return report();
}

int mode_color_unknown_alpha(const ModeArgs &) {
	Window window;
	wp_color_representation_surface_v1_set_alpha_mode(color_surface(&window), 7);
	return report();
}

int mode_color_straight_on_rgba8888(const ModeArgs &) {
	// Straight alpha is fine on formats with alpha the plugin can premultiply (and on those
	// without alpha); RGBA8888 is shown in place and has no premultiplying kernel.
	Window window;
	wp_color_representation_surface_v1_set_alpha_mode(
		color_surface(&window), WP_COLOR_REPRESENTATION_SURFACE_V1_ALPHA_MODE_STRAIGHT);
	commit_buffer(&window, WL_SHM_FORMAT_XRGB8888);
	commit_buffer(&window, WL_SHM_FORMAT_ARGB8888);
	commit_buffer(&window, WL_SHM_FORMAT_NV12);
	if (!conn.roundtrip()) return report();
	commit_buffer(&window, WL_SHM_FORMAT_RGBA8888);
	return report();
}

int mode_color_inert(const ModeArgs &) {
	Window window;
	wp_color_representation_surface_v1 *color = color_surface(&window);
	window.destroy();
	wp_color_representation_surface_v1_set_coefficients_and_range(color,
		WP_COLOR_REPRESENTATION_SURFACE_V1_COEFFICIENTS_BT709, WP_COLOR_REPRESENTATION_SURFACE_V1_RANGE_FULL);
	return report();
}

int mode_color_coefficients_on_rgb(const ModeArgs &) {
	Window window;
	wp_color_representation_surface_v1_set_coefficients_and_range(color_surface(&window),
		WP_COLOR_REPRESENTATION_SURFACE_V1_COEFFICIENTS_BT709, WP_COLOR_REPRESENTATION_SURFACE_V1_RANGE_FULL);
	commit_buffer(&window, WL_SHM_FORMAT_XRGB8888);
	return report();
}

int mode_color_location_on_yuyv(const ModeArgs &) {
	// YUYV is subsampled horizontally only: a location is fine. On RGB it is not.
	Window window;
	wp_color_representation_surface_v1 *color = color_surface(&window);
	wp_color_representation_surface_v1_set_chroma_location(
		color, WP_COLOR_REPRESENTATION_SURFACE_V1_CHROMA_LOCATION_TYPE_2);
	commit_buffer(&window, WL_SHM_FORMAT_YUYV);
	if (!conn.roundtrip()) return report();
	commit_buffer(&window, WL_SHM_FORMAT_RGB565);
	return report();
}

int mode_color_list(const ModeArgs &) {
	// What the manager advertised, one line each, then the verdict.
	if (conn.color_representation == nullptr) return 3;
	for (auto [coefficients, range] : conn.color_coefficients_and_ranges) {
		printf("coefficients %u range %u\n", coefficients, range);
	}
	for (uint32_t mode : conn.color_alpha_modes) printf("alpha %u\n", mode);
	return report();
}

int mode_color_yuv_ok(const ModeArgs &) {
	// Every supported combination on NV12, then unset by destroying the object: no error.
	Window window;
	wp_color_representation_surface_v1 *color = color_surface(&window);
	for (auto [coefficients, range] : conn.color_coefficients_and_ranges) {
		wp_color_representation_surface_v1_set_coefficients_and_range(color, coefficients, range);
		wp_color_representation_surface_v1_set_chroma_location(
			color, WP_COLOR_REPRESENTATION_SURFACE_V1_CHROMA_LOCATION_TYPE_1);
		commit_buffer(&window, WL_SHM_FORMAT_NV12);
	}
	wp_color_representation_surface_v1_destroy(color);
	commit_buffer(&window, WL_SHM_FORMAT_XRGB8888);
	return report();
}

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

// shm-formats-mapping FILE [hold]: FILE was mapped before connecting (connect() below), as a
// library of that name is in the memory map of a process that loaded it; prints the wl_shm
// formats the compositor told this client, as wayland-info names them (the fourcc's four
// characters), one a line, then the verdict, and with `hold` stays connected until killed.
int mode_shm_formats_mapping(const ModeArgs &args) {
	for (uint32_t shm : conn.shm_formats) {
		uint32_t code = shm == WL_SHM_FORMAT_ARGB8888 ? DRM_FORMAT_ARGB8888
			: shm == WL_SHM_FORMAT_XRGB8888       ? DRM_FORMAT_XRGB8888
							      : shm;
		printf("%c%c%c%c\n", static_cast<char>(code), static_cast<char>(code >> 8),
			static_cast<char>(code >> 16), static_cast<char>(code >> 24));
	}
	int status = report();
	if (status == 0 && args.is(1, "hold")) hold();
	return status;
}

const ModeTable kModes = {
	{"pool-size-zero", mode_pool_size_zero},
	{"pool-size-negative", mode_pool_size_negative},
	{"pool-pipe-fd", mode_pool_pipe_fd},
	{"pool-larger-than-file", mode_pool_larger_than_file},
	{"buffer-negative-offset", mode_buffer_negative_offset},
	{"buffer-zero-width", mode_buffer_zero_width},
	{"buffer-negative-height", mode_buffer_negative_height},
	{"buffer-stride-in-pixels", mode_buffer_stride_in_pixels},
	{"buffer-beyond-pool", mode_buffer_beyond_pool},
	{"buffer-overflowing-size", mode_buffer_overflowing_size},
	{"buffer-unknown-format", mode_buffer_unknown_format},
	{"buffer-yuv420-odd-stride", mode_buffer_yuv420_odd_stride},
	{"pool-shrink", mode_pool_shrink},
	{"pool-grow", mode_pool_grow},
	{"truncate-attached", mode_truncate_attached},
	{"truncate-converted-destroyed", mode_truncate_converted_destroyed},
	{"truncate-while-converting", mode_truncate_while_converting},
	{"destroy-after-commit", mode_destroy_after_commit},
	{"huge-then-normal", mode_huge_then_normal},
	{"churn", mode_churn},
	{"color-surface-exists", mode_color_surface_exists},
	{"color-unsupported-coefficients", mode_color_unsupported_coefficients},
	{"color-invalid-range", mode_color_invalid_range},
	{"color-optical-alpha", mode_color_optical_alpha},
	{"color-unknown-alpha", mode_color_unknown_alpha},
	{"color-straight-on-rgba8888", mode_color_straight_on_rgba8888},
	{"color-inert", mode_color_inert},
	{"color-coefficients-on-rgb", mode_color_coefficients_on_rgb},
	{"color-location-on-yuyv", mode_color_location_on_yuyv},
	{"color-list", mode_color_list},
	{"shm-formats-mapping", mode_shm_formats_mapping},
	{"color-yuv-ok", mode_color_yuv_ok},
	{"stream-own-connection-fd", mode_stream_own_connection_fd},
	{"stream-display-socket-fd", mode_stream_display_socket_fd},
	{"stream-fd-carrying-own-connection", mode_stream_fd_carrying_own_connection},
	{"stream-fd-own-connection-sent-later", mode_stream_fd_own_connection_sent_later},
	{"pool-dev-zero", mode_pool_dev_zero},
	{"pool-grow-storm", mode_pool_grow_storm},
	{"pool-grow-commit", mode_pool_grow_commit},
	{"many-pools", mode_many_pools},
	{"many-buffers", mode_many_buffers},
	{"many-images", mode_many_images},
	{"many-color-surfaces", mode_many_color_surfaces},
};

bool connect(const std::string &mode, const ModeArgs &args, std::string *error) {
	if (mode == "shm-formats-mapping") {
		int fd = open(args.at(0), O_RDONLY | O_CLOEXEC);
		void *at = fd >= 0 ? mmap(nullptr, 4096, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
		if (fd >= 0) close(fd);
		if (at == MAP_FAILED) {
			*error = std::string("cannot map ") + args.at(0) + ": " + strerror(errno);
			return false;
		}
	}
	return conn.connect(error);
}

} // namespace

int main(int argc, char *argv[]) { return test::run_mode(argc, argv, kModes, connect); }
