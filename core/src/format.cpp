#include "pixelport/core/format.hpp"

#include <algorithm>
#include <cctype>

namespace pixelport::core {
namespace {

namespace f = fourcc;

constexpr PlaneInfo P(uint8_t hsub, uint8_t vsub, uint8_t bytes) { return {hsub, vsub, bytes}; }

// Targets per source class.
#define TGT_8                                                                                                          \
	2, { f::ARGB8888, f::XRGB8888 }
#define TGT_10                                                                                                         \
	4, { f::ABGR2101010, f::XBGR2101010, f::ARGB8888, f::XRGB8888 }

// clang-format off
constexpr FormatInfo kFormats[] = {
	// fourcc             name             model            n  planes                                   hs vs bits alpha float layout
	{f::ARGB8888,      "ARGB8888",      ColorModel::RGB, 1, {P(1,1,4)},                              1, 1, 8,  true,  false, "[31:0] A:R:G:B 8:8:8:8 LE", 1, {f::ARGB8888}},
	{f::XRGB8888,      "XRGB8888",      ColorModel::RGB, 1, {P(1,1,4)},                              1, 1, 8,  false, false, "[31:0] x:R:G:B 8:8:8:8 LE", 0, {}},
	{f::ABGR8888,      "ABGR8888",      ColorModel::RGB, 1, {P(1,1,4)},                              1, 1, 8,  true,  false, "[31:0] A:B:G:R 8:8:8:8 LE", TGT_8},
	{f::XBGR8888,      "XBGR8888",      ColorModel::RGB, 1, {P(1,1,4)},                              1, 1, 8,  false, false, "[31:0] x:B:G:R 8:8:8:8 LE", TGT_8},
	{f::RGB888,        "RGB888",        ColorModel::RGB, 1, {P(1,1,3)},                              1, 1, 8,  false, false, "[23:0] R:G:B LE (bytes B G R)", TGT_8},
	{f::BGR888,        "BGR888",        ColorModel::RGB, 1, {P(1,1,3)},                              1, 1, 8,  false, false, "[23:0] B:G:R LE (bytes R G B)", TGT_8},
	{f::RGB565,        "RGB565",        ColorModel::RGB, 1, {P(1,1,2)},                              1, 1, 5,  false, false, "[15:0] R:G:B 5:6:5 LE", TGT_8},
	{f::BGR565,        "BGR565",        ColorModel::RGB, 1, {P(1,1,2)},                              1, 1, 5,  false, false, "[15:0] B:G:R 5:6:5 LE", TGT_8},
	{f::XRGB1555,      "XRGB1555",      ColorModel::RGB, 1, {P(1,1,2)},                              1, 1, 5,  false, false, "[15:0] x:R:G:B 1:5:5:5 LE", TGT_8},
	{f::ARGB1555,      "ARGB1555",      ColorModel::RGB, 1, {P(1,1,2)},                              1, 1, 5,  true,  false, "[15:0] A:R:G:B 1:5:5:5 LE", TGT_8},
	{f::XRGB4444,      "XRGB4444",      ColorModel::RGB, 1, {P(1,1,2)},                              1, 1, 4,  false, false, "[15:0] x:R:G:B 4:4:4:4 LE", TGT_8},
	{f::ARGB4444,      "ARGB4444",      ColorModel::RGB, 1, {P(1,1,2)},                              1, 1, 4,  true,  false, "[15:0] A:R:G:B 4:4:4:4 LE", TGT_8},
	{f::XRGB2101010,   "XRGB2101010",   ColorModel::RGB, 1, {P(1,1,4)},                              1, 1, 10, false, false, "[31:0] x:R:G:B 2:10:10:10 LE", TGT_10},
	{f::ARGB2101010,   "ARGB2101010",   ColorModel::RGB, 1, {P(1,1,4)},                              1, 1, 10, true,  false, "[31:0] A:R:G:B 2:10:10:10 LE", TGT_10},
	{f::XBGR2101010,   "XBGR2101010",   ColorModel::RGB, 1, {P(1,1,4)},                              1, 1, 10, false, false, "[31:0] x:B:G:R 2:10:10:10 LE", TGT_10},
	{f::ABGR2101010,   "ABGR2101010",   ColorModel::RGB, 1, {P(1,1,4)},                              1, 1, 10, true,  false, "[31:0] A:B:G:R 2:10:10:10 LE", TGT_10},
	{f::XBGR16161616F, "XBGR16161616F", ColorModel::RGB, 1, {P(1,1,8)},                              1, 1, 16, false, true,  "[63:0] x:B:G:R 16:16:16:16 LE half float", TGT_10},
	{f::ABGR16161616F, "ABGR16161616F", ColorModel::RGB, 1, {P(1,1,8)},                              1, 1, 16, true,  true,  "[63:0] A:B:G:R 16:16:16:16 LE half float", TGT_10},
	{f::YUYV,          "YUYV",          ColorModel::YUV, 1, {P(2,1,4)},                              2, 1, 8,  false, false, "[31:0] Cr0:Y1:Cb0:Y0 8:8:8:8 LE", TGT_8},
	{f::UYVY,          "UYVY",          ColorModel::YUV, 1, {P(2,1,4)},                              2, 1, 8,  false, false, "[31:0] Y1:Cr0:Y0:Cb0 8:8:8:8 LE", TGT_8},
	{f::NV12,          "NV12",          ColorModel::YUV, 2, {P(1,1,1), P(2,2,2)},                    2, 2, 8,  false, false, "Y plane; [15:0] Cr:Cb 8:8 LE plane, 2x2 subsampled", TGT_8},
	{f::NV21,          "NV21",          ColorModel::YUV, 2, {P(1,1,1), P(2,2,2)},                    2, 2, 8,  false, false, "Y plane; [15:0] Cb:Cr 8:8 LE plane, 2x2 subsampled", TGT_8},
	{f::NV16,          "NV16",          ColorModel::YUV, 2, {P(1,1,1), P(2,1,2)},                    2, 1, 8,  false, false, "Y plane; [15:0] Cr:Cb 8:8 LE plane, 2x1 subsampled", TGT_8},
	{f::YUV420,        "YUV420",        ColorModel::YUV, 3, {P(1,1,1), P(2,2,1), P(2,2,1)},          2, 2, 8,  false, false, "Y, Cb, Cr planes, 2x2 subsampled", TGT_8},
	{f::YVU420,        "YVU420",        ColorModel::YUV, 3, {P(1,1,1), P(2,2,1), P(2,2,1)},          2, 2, 8,  false, false, "Y, Cr, Cb planes, 2x2 subsampled", TGT_8},
	{f::P010,          "P010",          ColorModel::YUV, 2, {P(1,1,2), P(2,2,4)},                    2, 2, 10, false, false, "[15:0] Y:x 10:6 LE plane; [31:0] Cr:x:Cb:x 10:6:10:6 LE plane, 2x2", TGT_10},
	// Renderer-native only (pixman, GLES2): layout for wl_shm validation, no conversion.
	{f::RGBA8888,      "RGBA8888",      ColorModel::RGB, 1, {P(1,1,4)},                              1, 1, 8,  true,  false, "[31:0] R:G:B:A 8:8:8:8 LE", 0, {}},
	{f::RGBX8888,      "RGBX8888",      ColorModel::RGB, 1, {P(1,1,4)},                              1, 1, 8,  false, false, "[31:0] R:G:B:x 8:8:8:8 LE", 0, {}},
	{f::BGRA8888,      "BGRA8888",      ColorModel::RGB, 1, {P(1,1,4)},                              1, 1, 8,  true,  false, "[31:0] B:G:R:A 8:8:8:8 LE", 0, {}},
	{f::BGRX8888,      "BGRX8888",      ColorModel::RGB, 1, {P(1,1,4)},                              1, 1, 8,  false, false, "[31:0] B:G:R:x 8:8:8:8 LE", 0, {}},
	{f::RGBA4444,      "RGBA4444",      ColorModel::RGB, 1, {P(1,1,2)},                              1, 1, 4,  true,  false, "[15:0] R:G:B:A 4:4:4:4 LE", 0, {}},
	{f::RGBX4444,      "RGBX4444",      ColorModel::RGB, 1, {P(1,1,2)},                              1, 1, 4,  false, false, "[15:0] R:G:B:x 4:4:4:4 LE", 0, {}},
	{f::RGBA5551,      "RGBA5551",      ColorModel::RGB, 1, {P(1,1,2)},                              1, 1, 5,  true,  false, "[15:0] R:G:B:A 5:5:5:1 LE", 0, {}},
	{f::RGBX5551,      "RGBX5551",      ColorModel::RGB, 1, {P(1,1,2)},                              1, 1, 5,  false, false, "[15:0] R:G:B:x 5:5:5:1 LE", 0, {}},
	{f::XBGR16161616,  "XBGR16161616",  ColorModel::RGB, 1, {P(1,1,8)},                              1, 1, 16, false, false, "[63:0] x:B:G:R 16:16:16:16 LE", 0, {}},
	{f::ABGR16161616,  "ABGR16161616",  ColorModel::RGB, 1, {P(1,1,8)},                              1, 1, 16, true,  false, "[63:0] A:B:G:R 16:16:16:16 LE", 0, {}},
};
// clang-format on

#undef TGT_8
#undef TGT_10

bool contains(std::span<const uint32_t> set, uint32_t v) { return std::find(set.begin(), set.end(), v) != set.end(); }

} // namespace

const FormatInfo *format_info(uint32_t code) {
	for (const FormatInfo &fi : kFormats)
		if (fi.fourcc == code) return &fi;
	return nullptr;
}

std::span<const FormatInfo> all_formats() { return kFormats; }

const char *format_name(uint32_t code) {
	const FormatInfo *fi = format_info(code);
	return fi ? fi->name : "unknown";
}

const FormatInfo *format_by_name(std::string_view name) {
	for (const FormatInfo &fi : kFormats) {
		std::string_view n = fi.name;
		if (n.size() == name.size() && std::equal(n.begin(), n.end(), name.begin(), [](char a, char b) {
			    return a == std::toupper(static_cast<unsigned char>(b));
		    }))
			return &fi;
	}
	return nullptr;
}

// wayland.xml: WL_SHM_FORMAT_ARGB8888 = 0, WL_SHM_FORMAT_XRGB8888 = 1.
constexpr uint32_t kShmArgb8888 = 0, kShmXrgb8888 = 1;

uint32_t fourcc_from_shm_format(uint32_t shm) {
	return shm == kShmArgb8888 ? f::ARGB8888 : shm == kShmXrgb8888 ? f::XRGB8888 : shm;
}

uint32_t shm_format_from_fourcc(uint32_t code) {
	return code == f::ARGB8888 ? kShmArgb8888 : code == f::XRGB8888 ? kShmXrgb8888 : code;
}

bool can_convert(uint32_t src, uint32_t dst) {
	const FormatInfo *fi = format_info(src);
	return fi && contains({fi->targets, fi->num_targets}, dst);
}

uint32_t pick_target(uint32_t src, std::span<const uint32_t> renderer) {
	if (!format_info(src)) return 0;
	if (contains(renderer, src)) return src;
	return pick_converted_target(src, renderer);
}

uint32_t pick_converted_target(uint32_t src, std::span<const uint32_t> renderer) {
	const FormatInfo *fi = format_info(src);
	if (!fi) return 0;
	const bool deep = fi->bits >= 10 && !(fi->is_float && fi->has_alpha);
	uint32_t order[4];
	int n = 0;
	if (deep) order[n++] = fi->has_alpha ? f::ABGR2101010 : f::XBGR2101010;
	if (fi->has_alpha) {
		order[n++] = f::ARGB8888;
	} else {
		order[n++] = f::XRGB8888;
		order[n++] = f::ARGB8888;
		if (deep) order[n++] = f::ABGR2101010;
	}
	for (int i = 0; i < n; ++i)
		if (contains(renderer, order[i]) && can_convert(src, order[i])) return order[i];
	return 0;
}

uint64_t min_stride(const FormatInfo &fi, int plane, uint32_t width) {
	if (plane < 0 || plane >= fi.num_planes) return 0;
	const PlaneInfo &p = fi.planes[plane];
	return (uint64_t{width} + p.hsub - 1) / p.hsub * p.unit_bytes;
}

uint64_t plane_rows(const FormatInfo &fi, int plane, uint32_t height) {
	if (plane < 0 || plane >= fi.num_planes) return 0;
	const PlaneInfo &p = fi.planes[plane];
	return (uint64_t{height} + p.vsub - 1) / p.vsub;
}

namespace {

// wl_shm's one stride divides for the chroma planes of 3-plane formats only.
uint64_t stride_divisor(const FormatInfo &fi, int plane) {
	return fi.num_planes == 3 && plane > 0 ? fi.planes[plane].hsub : 1;
}

} // namespace

bool shm_planes(const FormatInfo &fi, uint32_t width, uint32_t height, uint64_t stride, ShmPlanes *out) {
	*out = {};
	uint64_t pos = 0;
	for (int p = 0; p < fi.num_planes; ++p) {
		const uint64_t div = stride_divisor(fi, p);
		if (stride % div != 0 || stride / div < min_stride(fi, p, width)) return false;
		out->offset[p] = pos;
		out->stride[p] = stride / div;
		out->rows[p] = plane_rows(fi, p, height);
		pos += out->stride[p] * out->rows[p]; // < 3 * 2^62 for int32 stride and height
	}
	out->size = pos;
	return true;
}

uint64_t shm_min_stride(const FormatInfo &fi, uint32_t width, uint32_t align) {
	if (align == 0) align = 1;
	uint64_t need = 0, step = align;
	for (int p = 0; p < fi.num_planes; ++p) {
		const uint64_t div = stride_divisor(fi, p);
		need = std::max(need, min_stride(fi, p, width) * div);
		step = std::max(step, uint64_t{align} * div);
	}
	return (need + step - 1) / step * step;
}

} // namespace pixelport::core
