// pixelport-hostile's modes: bad wl_shm requests, each with its protocol error, and pools truncated, shrunk and grown under the compositor.
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

// shm-formats-mapping FILE [hold]: FILE was mapped before connecting (connect() in
// hostile_client.cpp), as a library of that name is in the memory map of a process that loaded
// it; prints the wl_shm formats the compositor told this client, as wayland-info names them (the
// fourcc's four characters), one a line, then the verdict, and with `hold` stays connected until
// killed.
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

} // namespace pixelport::hostile_client
