// Independent reference decoder for the integration tests: turns the bytes of a wl_shm buffer
// back into the 8-bit RGB a correct compositor shows over a black background, with plain
// float formulas written separately from the plugin's conversion kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pixelport::test {

/** How Y'CbCr is read: the luma weights Kr, Kb (ITU-R BT.601-7, BT.709-6, BT.2020-2) and range. */
struct YuvColour {
	double kr = 0.299, kb = 0.114;
	bool full = false;
	static YuvColour bt601(bool full);
	static YuvColour bt709(bool full);
	static YuvColour bt2020(bool full);
	/** What a compositor assumes when the client says nothing, by buffer height (docs/design.md). */
	static YuvColour default_for(int height);
};

/**
 * Decodes every pixel of a `drm_format` buffer (pixelport's wl_shm plane layout, see
 * client/pattern.hpp) into 0xRRGGBB, premultiplied colour as it appears over black.
 * YUV is read as `colour` says (null: YuvColour::default_for(height)), chroma replicated over
 * its block. False if unknown.
 */
bool reference_rgb(uint32_t drm_format, int width, int height, size_t stride, const uint8_t *base,
	std::vector<uint32_t> *out, const YuvColour *colour = nullptr);

/**
 * reference_rgb() for a buffer whose colour is straight (wp_color_representation's `straight`
 * alpha mode): over black a correct compositor shows colour x alpha. Rounded as the plugin's
 * core documents it (convert.hpp, AlphaMode): colour and alpha first widened to the renderer
 * format's bits (8, or for the 2101010 formats 10-bit colour with 2-bit alpha: they are shown
 * as ABGR2101010), then round(colour * alpha / max) there. Formats without alpha decode as in
 * reference_rgb(). False for other formats with alpha (RGBA8888, half float, ...).
 */
bool reference_rgb_straight(
	uint32_t drm_format, int width, int height, size_t stride, const uint8_t *base, std::vector<uint32_t> *out);

/** reference_rgb() of pattern `seed` encoded over a whole `drm_format` buffer at its minimum stride. */
std::vector<uint32_t> pattern_reference(uint32_t drm_format, int width, int height, uint32_t seed);

/** Largest per-channel difference allowed between the screen and reference_rgb(). */
int reference_tolerance(uint32_t drm_format);

} // namespace pixelport::test
