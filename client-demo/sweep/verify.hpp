// pixelport-sweep's pixel check: after a point's last frame, a screenshot of the output (grim,
// wlr-screencopy) is compared on a grid of samples against the frame that was sent, decoded
// independently with libyuv. A transport (or a peer such as waypipe) that delivers wrong pixels
// makes the point invalid: it is then left out of throughput, crossovers and the verdict.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pixelport::sweep {

/** An RGB screenshot, 3 bytes per pixel (R, G, B), tightly packed. */
struct Shot {
	int width = 0, height = 0;
	std::vector<uint8_t> rgb;
};

/**
 * The top-left crop_w x crop_h of the frame `data` (drm format, width x height, first-plane
 * stride, pixelport's wl_shm layout) decoded to ARGB8888 words (0xAARRGGBB) with libyuv: BT.601
 * limited range for YUV, as the plugin converts by default. False for a format libyuv cannot
 * decode.
 */
bool reference_argb(uint32_t drm, int width, int height, size_t stride, const uint8_t *data, size_t size, int crop_w,
	int crop_h, std::vector<uint32_t> *out);

struct PixelCheck {
	std::string status; // "ok" or "wrong"
	std::string note; // for "wrong": how many samples, the worst one
	int samples = 0, wrong = 0;
};

/**
 * Compares up to 16x16 samples of the visible part (the frame at the shot's origin, clipped to
 * the shot) channel by channel: a sample is wrong when any channel differs by more than
 * `tolerance`; the point is wrong when more than `max_wrong_fraction` of the samples are.
 */
PixelCheck check_pixels(const std::vector<uint32_t> &expected, int width, int height, const Shot &shot,
	int tolerance = 24, double max_wrong_fraction = 0.05);

/**
 * A screenshot of every output through `grim` (PPM on its stdout), on the Wayland display
 * `display` (empty: WAYLAND_DISPLAY). LD_LIBRARY_PATH is dropped for grim (a build tree's
 * libwayland is not Debian's). False with a one-line `error` (grim missing, no screencopy).
 */
bool capture_screen(const std::string &display, int timeout_ms, Shot *out, std::string *error);

} // namespace pixelport::sweep
