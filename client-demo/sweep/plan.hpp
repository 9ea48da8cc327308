// What one sweep measures: transports, formats and frame sizes, every one checked before anything
// is measured, and the frame shape of a size request per format.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "options.hpp"
#include "transport.hpp"

namespace pixelport::sweep {

/** A size request: explicit WxH, or bytes of pixel data (the shape follows per format). */
struct SizeSpec {
	int width = 0, height = 0;
	double bytes = 0;
	std::string label;
};

/** Bytes of a width x height frame of `drm` in pixelport's wl_shm layout; 0 if none. */
uint64_t frame_bytes(uint32_t drm, int w, int h);
/** A 4:3 frame of about `bytes` on the format's chroma grid. */
void shape_for(uint32_t drm, double bytes, int *w, int *h);

/** The checked request; names as the user gave them (formats canonical), codes DRM. */
struct Plan {
	std::vector<std::string> transport_names;
	std::vector<client::TransportChoice> transports;
	std::vector<std::string> format_names;
	std::vector<uint32_t> formats;
	std::vector<SizeSpec> sizes; // empty in pressure mode
	std::vector<std::string> size_args; // what a peer child gets
};

/**
 * Checks transports, formats and (outside pressure mode) sizes and the memory they need;
 * die()s with a one-line error on the first bad one. `sizes_given`: --sizes was on the command line.
 */
Plan plan_sweep(const Options &o, bool sizes_given);

} // namespace pixelport::sweep
