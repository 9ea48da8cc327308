// pixelport-hostile's modes: wp_color_representation_v1, each mode breaking one rule of the protocol.
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

} // namespace pixelport::hostile_client
