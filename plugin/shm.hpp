// pixelport's wl_shm: memfd pools mapped once, buffers used in place when the renderer takes
// their format, converted during upload otherwise (see buffer.hpp). Hardened against hostile
// clients: every size is checked in 64 bits at create_pool/create_buffer, and a client that
// shrinks its file reads back zeroes instead of crashing the compositor (sigbus.hpp).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "format_policy.hpp"
#include "wlr.hpp"

struct pixelport_plugin;

namespace pixelport {

class Shm {
public:
	/**
	 * The formats to serve, and the switch that withholds some from GStreamer's clients
	 * (pixelport_options.gstreamer_withhold, else PIXELPORT_GSTREAMER_WITHHOLD). Null if the
	 * renderer cannot show ARGB8888 and XRGB8888, or the option names an unknown format (the
	 * variable's bad value is ignored, logged).
	 */
	static std::unique_ptr<Shm> create(pixelport_plugin *plugin);
	/** A wl_shm global (version 1 or 2) serving them; its owner destroys it (pixelport.cpp). */
	wl_global *create_global(uint32_t version);

	/** Advertised formats as wl_shm codes (0 and 1 for ARGB8888/XRGB8888, else DRM fourcc). */
	const std::vector<uint32_t> &formats() const { return formats_; }
	pixelport_plugin *plugin() const { return plugin_; }

	/**
	 * The formats left out of `client`'s format list (docs/design.md, "Formats withheld from a
	 * client"): read from its process once it binds (/proc/PID/maps), logged once per client.
	 */
	std::vector<WithheldFormat> withheld_for(wl_client *client);

private:
	Shm() = default;
	static void bind(wl_client *client, void *data, uint32_t version, uint32_t id);

	pixelport_plugin *plugin_ = nullptr;
	std::vector<uint32_t> formats_;
	WithheldFormats withheld_;
};

} // namespace pixelport
