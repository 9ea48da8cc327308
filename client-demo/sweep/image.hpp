// Frame content for pixelport-sweep: real images decoded with libjpeg-turbo, libpng or
// libwebp (or the synthetic pattern), scaled with libyuv to any size and written in any
// wl_shm layout the sweep sends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace pixelport::sweep {

/** An 8-bit image as DRM ARGB8888 (B, G, R, A bytes in memory), tightly packed. */
struct Image {
	int width = 0, height = 0;
	std::vector<uint8_t> argb; // width * height * 4
	std::string source; // what it came from, for reports ("pattern" or a path)
};

/** Largest image file read, and most pixels decoded (2^28: 1 GiB as ARGB8888). */
inline constexpr uint64_t kMaxImageFileBytes = uint64_t{256} << 20;
inline constexpr uint64_t kMaxImagePixels = uint64_t{1} << 28;

/**
 * Decodes a JPEG, PNG or WebP file (picked by its first bytes, not its name). False with
 * `error` set to one line "PATH: why" when the file cannot be read, is not a regular file,
 * is larger than kMaxImageFileBytes, has more than kMaxImagePixels or is not such an image.
 */
bool load_image(const std::string &path, Image *out, std::string *error);

/**
 * A photo-sized image shipped by a Debian package, when one is installed (lomiri-wallpapers-
 * 20.04, gnome-backgrounds, desktop-base, ...): the largest JPEG/PNG/WebP under the usual
 * wallpaper folders. Empty when there is none.
 */
std::string find_system_photo();

/**
 * A frame of `drm_format` at width x height in pixelport's wl_shm layout (pattern.hpp
 * shm_layout, minimum stride). From `src` scaled to the size (libyuv, bilinear/box), or the
 * synthetic pattern when src is null or its format has no libyuv encoder (then *used_pattern
 * is set). False if the format or size has no layout.
 */
bool make_frame(const Image *src, uint32_t drm_format, int width, int height, uint32_t seed, std::vector<uint8_t> *out,
	size_t *stride, bool *used_pattern);

/** Whether make_frame() can write real image content in `drm_format`. */
bool image_encodable(uint32_t drm_format);

} // namespace pixelport::sweep
