// One point of the sweep: a fresh window, warm-up frames, then measured frames, each waiting for
// presentation and for the compositor's pixelport-timing-v1 report before the next one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model.hpp"
#include "options.hpp"
#include "timing_client.hpp"
#include "transport.hpp"
#include "wayland_client.hpp"

namespace pixelport::sweep {

/** The frame one point puts, in pixelport's wl_shm layout (bytes owned). */
struct Content {
	uint32_t drm = 0;
	int width = 0, height = 0;
	size_t stride = 0;
	std::vector<uint8_t> bytes;
	bool pattern = false;
};

/**
 * Measures one point into p; false only when the connection is gone (the sweep must stop).
 * With `verify`, checks the pixels shown (verify.hpp) into p->pixels. `tag` ends the window title.
 */
bool run_point(client::Connection &conn, client::TimingClient &timing, const Options &o, const Content &c,
	client::TransportChoice t, Point *p, bool verify = true, const std::string &tag = "");

} // namespace pixelport::sweep
