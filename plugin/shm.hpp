// pixelport's wl_shm: memfd pools mapped once, buffers used in place when the renderer takes
// their format, converted during upload otherwise (see buffer.hpp). Hardened against hostile
// clients: every size is checked in 64 bits at create_pool/create_buffer, and a client that
// shrinks its file reads back zeroes instead of crashing the compositor (sigbus.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "plugin.hpp"

namespace pixelport {

class Shm {
public:
	/** Creates the wl_shm global (version 1 or 2). Null on failure. */
	static std::unique_ptr<Shm> create(pixelport_plugin *plugin, uint32_t version);
	~Shm();

	/** Advertised formats as wl_shm codes (0 and 1 for ARGB8888/XRGB8888, else DRM fourcc). */
	const std::vector<uint32_t> &formats() const { return formats_; }
	/** The renderer format a DRM format is uploaded as (itself when native), 0 if not served. */
	uint32_t target_for(uint32_t drm_format) const;
	pixelport_plugin *plugin() const { return plugin_; }
	/** The display is being destroyed and takes the global with it. */
	void forget_global() { global_ = nullptr; }

private:
	Shm() = default;
	static void bind(wl_client *client, void *data, uint32_t version, uint32_t id);

	pixelport_plugin *plugin_ = nullptr;
	wl_global *global_ = nullptr;
	std::vector<uint32_t> formats_;
	std::vector<std::pair<uint32_t, uint32_t>> targets_; // (drm source, drm target)
};

/** wl_shm format code <-> DRM fourcc (they differ only for ARGB8888 and XRGB8888). */
uint32_t shm_format_to_drm(uint32_t shm_format);
uint32_t drm_format_to_shm(uint32_t drm_format);

} // namespace pixelport
