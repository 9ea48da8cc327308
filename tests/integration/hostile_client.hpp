// hostile_client's shared parts. The program is split by concern: hostile_client.cpp (the usage, the mode
// table, main), hostile_client_common.cpp (the helpers below), and the modes, one function each named
// after the mode: hostile_client_shm.cpp, hostile_client_color.cpp, hostile_client_lifetime.cpp.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>

#include "client_modes.hpp"
#include "wayland_client.hpp"

namespace pixelport::hostile_client {

using namespace pixelport::client;
using test::ModeArgs;

/** The client's one connection. */
extern Connection conn;

/** The verdict line (client_verdict.hpp), and staying connected until killed. */
int report();
void hold();
/** A memfd of `size` bytes (sealable); exits with status 3 when it cannot. */
int memfd(size_t size);
/** wl_shm.create_pool on `fd`. */
wl_shm_pool *pool_of(int fd, int32_t size);
/** Commits `buffer` on a new toplevel and waits until it was presented. */
bool show(Window *window, wl_buffer *buffer, int w, int h);

constexpr uint32_t argb = WL_SHM_FORMAT_ARGB8888;

// ---- the modes ----
// hostile_client_shm.cpp
int mode_pool_size_zero(const ModeArgs &args);
int mode_pool_size_negative(const ModeArgs &args);
int mode_pool_pipe_fd(const ModeArgs &args);
int mode_pool_larger_than_file(const ModeArgs &args);
int mode_buffer_negative_offset(const ModeArgs &args);
int mode_buffer_zero_width(const ModeArgs &args);
int mode_buffer_negative_height(const ModeArgs &args);
int mode_buffer_stride_in_pixels(const ModeArgs &args);
int mode_buffer_beyond_pool(const ModeArgs &args);
int mode_buffer_overflowing_size(const ModeArgs &args);
int mode_buffer_unknown_format(const ModeArgs &args);
int mode_buffer_yuv420_odd_stride(const ModeArgs &args);
int mode_pool_shrink(const ModeArgs &args);
int mode_pool_grow(const ModeArgs &args);
int mode_truncate_attached(const ModeArgs &args);
int mode_truncate_converted_destroyed(const ModeArgs &args);
int mode_truncate_while_converting(const ModeArgs &args);
int mode_destroy_after_commit(const ModeArgs &args);
int mode_huge_then_normal(const ModeArgs &args);
int mode_churn(const ModeArgs &args);
// hostile_client_color.cpp
int mode_color_surface_exists(const ModeArgs &args);
int mode_color_unsupported_coefficients(const ModeArgs &args);
int mode_color_invalid_range(const ModeArgs &args);
int mode_color_optical_alpha(const ModeArgs &args);
int mode_color_unknown_alpha(const ModeArgs &args);
int mode_color_straight_on_rgba8888(const ModeArgs &args);
int mode_color_inert(const ModeArgs &args);
int mode_color_coefficients_on_rgb(const ModeArgs &args);
int mode_color_location_on_yuyv(const ModeArgs &args);
int mode_shm_formats_mapping(const ModeArgs &args);
int mode_color_list(const ModeArgs &args);
int mode_color_yuv_ok(const ModeArgs &args);
// hostile_client_lifetime.cpp
int mode_stream_own_connection_fd(const ModeArgs &args);
int mode_stream_display_socket_fd(const ModeArgs &args);
int mode_stream_fd_carrying_own_connection(const ModeArgs &args);
int mode_stream_fd_own_connection_sent_later(const ModeArgs &args);
int mode_pool_dev_zero(const ModeArgs &args);
int mode_pool_grow_storm(const ModeArgs &args);
int mode_pool_grow_commit(const ModeArgs &args);
int mode_many_pools(const ModeArgs &args);
int mode_many_buffers(const ModeArgs &args);
int mode_many_images(const ModeArgs &args);
int mode_many_color_surfaces(const ModeArgs &args);

} // namespace pixelport::hostile_client
