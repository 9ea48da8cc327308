// DRM fourcc codes used by the pixelport core.
//
// Same names and values as <drm_fourcc.h> (libdrm), but as constants in
// namespace pixelport::core::fourcc so that this header and libdrm's macros can be
// included together in any order (core-only builds have no libdrm).
#pragma once

#include <cstdint>

namespace pixelport::core::fourcc {

constexpr uint32_t code(char a, char b, char c, char d) {
	return static_cast<uint32_t>(static_cast<uint8_t>(a)) | static_cast<uint32_t>(static_cast<uint8_t>(b)) << 8 |
		static_cast<uint32_t>(static_cast<uint8_t>(c)) << 16 |
		static_cast<uint32_t>(static_cast<uint8_t>(d)) << 24;
}

// Packed RGB, little-endian words as in drm_fourcc.h ("[15:0] R:G:B 5:6:5 little endian").
inline constexpr uint32_t RGB565 = code('R', 'G', '1', '6');
inline constexpr uint32_t BGR565 = code('B', 'G', '1', '6');
inline constexpr uint32_t XRGB1555 = code('X', 'R', '1', '5');
inline constexpr uint32_t ARGB1555 = code('A', 'R', '1', '5');
inline constexpr uint32_t XRGB4444 = code('X', 'R', '1', '2');
inline constexpr uint32_t ARGB4444 = code('A', 'R', '1', '2');
inline constexpr uint32_t RGB888 = code('R', 'G', '2', '4');
inline constexpr uint32_t BGR888 = code('B', 'G', '2', '4');
inline constexpr uint32_t XRGB8888 = code('X', 'R', '2', '4');
inline constexpr uint32_t ARGB8888 = code('A', 'R', '2', '4');
inline constexpr uint32_t XBGR8888 = code('X', 'B', '2', '4');
inline constexpr uint32_t ABGR8888 = code('A', 'B', '2', '4');
// Formats some renderers sample natively; the core only describes their layout (no kernels).
inline constexpr uint32_t RGBA8888 = code('R', 'A', '2', '4');
inline constexpr uint32_t RGBX8888 = code('R', 'X', '2', '4');
inline constexpr uint32_t BGRA8888 = code('B', 'A', '2', '4');
inline constexpr uint32_t BGRX8888 = code('B', 'X', '2', '4');
inline constexpr uint32_t RGBA4444 = code('R', 'A', '1', '2');
inline constexpr uint32_t RGBX4444 = code('R', 'X', '1', '2');
inline constexpr uint32_t RGBA5551 = code('R', 'A', '1', '5');
inline constexpr uint32_t RGBX5551 = code('R', 'X', '1', '5');
inline constexpr uint32_t XBGR16161616 = code('X', 'B', '4', '8');
inline constexpr uint32_t ABGR16161616 = code('A', 'B', '4', '8');
inline constexpr uint32_t XRGB2101010 = code('X', 'R', '3', '0');
inline constexpr uint32_t ARGB2101010 = code('A', 'R', '3', '0');
inline constexpr uint32_t XBGR2101010 = code('X', 'B', '3', '0');
inline constexpr uint32_t ABGR2101010 = code('A', 'B', '3', '0');
inline constexpr uint32_t XBGR16161616F = code('X', 'B', '4', 'H');
inline constexpr uint32_t ABGR16161616F = code('A', 'B', '4', 'H');

// YUV.
inline constexpr uint32_t YUYV = code('Y', 'U', 'Y', 'V');
inline constexpr uint32_t UYVY = code('U', 'Y', 'V', 'Y');
inline constexpr uint32_t NV12 = code('N', 'V', '1', '2');
inline constexpr uint32_t NV21 = code('N', 'V', '2', '1');
inline constexpr uint32_t NV16 = code('N', 'V', '1', '6');
inline constexpr uint32_t YUV420 = code('Y', 'U', '1', '2');
inline constexpr uint32_t YVU420 = code('Y', 'V', '1', '2');
inline constexpr uint32_t P010 = code('P', '0', '1', '0');

} // namespace pixelport::core::fourcc
