// pixelport-conversion-attack's helpers, shared by its attacks (conversion_attack.hpp).
#include <drm_fourcc.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "client_verdict.hpp"
#include "wayland_client.hpp"

#include "conversion_attack.hpp"

namespace pixelport::conversion_attack {

Connection conn;

// A buffer of one uniform byte `value` in a pool of its own (NV12, or XRGB8888 without it).
wl_buffer *uniform_buffer(ShmPool *pool, int w, int h, uint32_t format, uint8_t value, std::string *error) {
	const bool nv12 = format == DRM_FORMAT_NV12;
	const int32_t stride = nv12 ? w : w * 4;
	const size_t size = static_cast<size_t>(stride) * h * (nv12 ? 3 : 2) / 2;
	if (!pool->create(&conn, size, error)) return nullptr;
	memset(pool->data, value, size);
	return wl_shm_pool_create_buffer(
		pool->pool, 0, w, h, stride, nv12 ? DRM_FORMAT_NV12 : static_cast<uint32_t>(WL_SHM_FORMAT_XRGB8888));
}

} // namespace pixelport::conversion_attack
