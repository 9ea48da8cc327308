// pixelport-hostile-client: does one thing a well-behaved wl_shm client never does, then reports
// how the compositor answered: "error CODE INTERFACE" for a protocol error, "ok" otherwise.
// Usage: pixelport-hostile-client MODE [COUNT]   (one function a mode, mode_NAME, listed in kModes).
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "hostile_client.hpp"

using namespace pixelport;
using namespace pixelport::hostile_client;
using pixelport::test::ModeArgs;
using pixelport::test::ModeTable;

namespace {

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
		// A library of that name is in the memory map of a process that loaded it.
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
