#include "image.hpp"

#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <drm_fourcc.h>
#include <jpeglib.h>
#include <libyuv.h>
#include <png.h>
#include <webp/decode.h>

#include "cli.hpp"
#include "pattern.hpp"

namespace pixelport::sweep {

namespace {

struct JpegError {
	jpeg_error_mgr mgr;
	jmp_buf jump;
	char message[JMSG_LENGTH_MAX];
};

// Checked from the header, before the pixels are allocated.
bool too_many_pixels(uint64_t w, uint64_t h, std::string *error) {
	if (w * h <= kMaxImagePixels) return false;
	*error = std::to_string(w) + "x" + std::to_string(h) + " is more than " + std::to_string(kMaxImagePixels) +
		" pixels";
	return true;
}

// Decodes straight to BGRA (libjpeg-turbo's JCS_EXT_BGRA): no conversion pass of ours.
bool decode_jpeg(const std::string &file, Image *out, std::string *error) {
	jpeg_decompress_struct cinfo;
	JpegError err;
	cinfo.err = jpeg_std_error(&err.mgr);
	err.mgr.error_exit = [](j_common_ptr c) {
		auto *e = reinterpret_cast<JpegError *>(c->err);
		c->err->format_message(c, e->message);
		longjmp(e->jump, 1);
	};
	if (setjmp(err.jump)) {
		*error = std::string("bad JPEG: ") + err.message;
		jpeg_destroy_decompress(&cinfo);
		return false;
	}
	jpeg_create_decompress(&cinfo);
	jpeg_mem_src(
		&cinfo, reinterpret_cast<const unsigned char *>(file.data()), static_cast<unsigned long>(file.size()));
	jpeg_read_header(&cinfo, TRUE);
	if (too_many_pixels(cinfo.image_width, cinfo.image_height, error)) {
		jpeg_destroy_decompress(&cinfo);
		return false;
	}
	cinfo.out_color_space = JCS_EXT_BGRA;
	jpeg_start_decompress(&cinfo);
	out->width = static_cast<int>(cinfo.output_width);
	out->height = static_cast<int>(cinfo.output_height);
	out->argb.resize(static_cast<size_t>(out->width) * out->height * 4);
	while (cinfo.output_scanline < cinfo.output_height) {
		JSAMPROW row = out->argb.data() + static_cast<size_t>(cinfo.output_scanline) * out->width * 4;
		jpeg_read_scanlines(&cinfo, &row, 1);
	}
	jpeg_finish_decompress(&cinfo);
	jpeg_destroy_decompress(&cinfo);
	return true;
}

bool decode_png(const std::string &file, Image *out, std::string *error) {
	png_image img;
	memset(&img, 0, sizeof(img));
	img.version = PNG_IMAGE_VERSION;
	if (!png_image_begin_read_from_memory(&img, file.data(), file.size())) {
		*error = std::string("bad PNG: ") + img.message;
		return false;
	}
	if (too_many_pixels(img.width, img.height, error)) {
		png_image_free(&img);
		return false;
	}
	img.format = PNG_FORMAT_BGRA;
	out->width = static_cast<int>(img.width);
	out->height = static_cast<int>(img.height);
	out->argb.resize(PNG_IMAGE_SIZE(img));
	if (!png_image_finish_read(&img, nullptr, out->argb.data(), 0, nullptr)) {
		*error = std::string("bad PNG: ") + img.message;
		png_image_free(&img);
		return false;
	}
	return true;
}

bool decode_webp(const std::string &file, Image *out, std::string *error) {
	int w = 0, h = 0;
	const auto *data = reinterpret_cast<const uint8_t *>(file.data());
	if (WebPGetInfo(data, file.size(), &w, &h) &&
		too_many_pixels(static_cast<uint64_t>(w), static_cast<uint64_t>(h), error)) {
		return false;
	}
	uint8_t *pixels = WebPDecodeBGRA(data, file.size(), &w, &h);
	if (pixels == nullptr) {
		*error = "bad WebP: libwebp could not decode it";
		return false;
	}
	out->width = w;
	out->height = h;
	out->argb.assign(pixels, pixels + static_cast<size_t>(w) * h * 4);
	WebPFree(pixels);
	return true;
}

} // namespace

bool load_image(const std::string &path, Image *out, std::string *error) {
	std::string file, why;
	if (!cli::read_file(path, kMaxImageFileBytes, &file, &why)) {
		*error = path + ": " + why;
		return false;
	}
	bool ok = false;
	if (file.size() >= 3 && memcmp(file.data(), "\xff\xd8\xff", 3) == 0) {
		ok = decode_jpeg(file, out, &why);
	} else if (file.size() >= 8 && memcmp(file.data(), "\x89PNG\r\n\x1a\n", 8) == 0) {
		ok = decode_png(file, out, &why);
	} else if (file.size() >= 12 && memcmp(file.data(), "RIFF", 4) == 0 &&
		memcmp(file.data() + 8, "WEBP", 4) == 0) {
		ok = decode_webp(file, out, &why);
	} else {
		why = "not a JPEG, PNG or WebP file";
	}
	if (ok && (out->width <= 0 || out->height <= 0)) {
		ok = false;
		why = "empty image";
	}
	if (!ok) {
		*error = path + ": " + why;
		return false;
	}
	out->source = path;
	return true;
}

std::string find_system_photo() {
	namespace fs = std::filesystem;
	// Photos first: gnome-backgrounds and lomiri-wallpapers ship photographs; desktop-base art.
	static const char *kDirs[] = {
		"/usr/share/backgrounds", "/usr/share/wallpapers", "/usr/share/images/desktop-base"};
	std::string best;
	uintmax_t best_size = 0;
	for (const char *dir : kDirs) {
		std::error_code ec;
		for (auto it = fs::recursive_directory_iterator(dir, ec);
			!ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
			if (!it->is_regular_file(ec)) continue;
			std::string ext = it->path().extension().string();
			for (char &c : ext) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
			if (ext != ".jpg" && ext != ".jpeg" && ext != ".png" && ext != ".webp") continue;
			uintmax_t size = it->file_size(ec);
			// The largest file is the most photo-like; cap so decoding stays quick.
			if (!ec && size > best_size && size < (64u << 20)) {
				best = it->path().string();
				best_size = size;
			}
		}
		if (!best.empty()) break;
	}
	return best;
}

bool image_encodable(uint32_t f) {
	switch (f) {
	case DRM_FORMAT_ARGB8888:
	case DRM_FORMAT_XRGB8888:
	case DRM_FORMAT_RGB888:
	case DRM_FORMAT_BGR888:
	case DRM_FORMAT_RGB565:
	case DRM_FORMAT_NV12:
	case DRM_FORMAT_NV21:
	case DRM_FORMAT_YUV420:
	case DRM_FORMAT_YVU420:
	case DRM_FORMAT_YUYV:
	case DRM_FORMAT_UYVY: return true;
	default: return false;
	}
}

bool make_frame(const Image *src, uint32_t f, int w, int h, uint32_t seed, std::vector<uint8_t> *out, size_t *stride,
	bool *used_pattern) {
	size_t s = shm_min_stride(f, w);
	ShmLayout layout;
	if (s == 0 || !shm_layout(f, w, h, s, &layout)) return false;
	out->assign(layout.size, 0);
	*stride = s;
	*used_pattern = src == nullptr || !image_encodable(f);
	if (*used_pattern) return encode_pattern(f, w, h, s, out->data(), seed, 0, 0, w, h);

	// Scale the whole image to the frame (aspect not kept: every pixel is photo content).
	std::vector<uint8_t> scaled;
	const uint8_t *argb = src->argb.data();
	if (src->width != w || src->height != h) {
		scaled.resize(static_cast<size_t>(w) * h * 4);
		bool down = static_cast<int64_t>(w) * h < static_cast<int64_t>(src->width) * src->height;
		libyuv::ARGBScale(src->argb.data(), src->width * 4, src->width, src->height, scaled.data(), w * 4, w, h,
			down ? libyuv::kFilterBox : libyuv::kFilterBilinear);
		argb = scaled.data();
	}
	const int as = w * 4, ds = static_cast<int>(s);
	uint8_t *d = out->data();
	uint8_t *p1 = d + layout.offset[1], *p2 = d + layout.offset[2];
	const int s1 = static_cast<int>(layout.stride[1]), s2 = static_cast<int>(layout.stride[2]);
	switch (f) {
	case DRM_FORMAT_ARGB8888:
	case DRM_FORMAT_XRGB8888: libyuv::ARGBCopy(argb, as, d, ds, w, h); break;
	case DRM_FORMAT_RGB888: libyuv::ARGBToRGB24(argb, as, d, ds, w, h); break; // B, G, R in memory
	case DRM_FORMAT_BGR888: libyuv::ARGBToRAW(argb, as, d, ds, w, h); break; // R, G, B
	case DRM_FORMAT_RGB565: libyuv::ARGBToRGB565(argb, as, d, ds, w, h); break;
	case DRM_FORMAT_NV12: libyuv::ARGBToNV12(argb, as, d, ds, p1, s1, w, h); break;
	case DRM_FORMAT_NV21: libyuv::ARGBToNV21(argb, as, d, ds, p1, s1, w, h); break;
	case DRM_FORMAT_YUV420: libyuv::ARGBToI420(argb, as, d, ds, p1, s1, p2, s2, w, h); break;
	case DRM_FORMAT_YVU420: libyuv::ARGBToI420(argb, as, d, ds, p2, s2, p1, s1, w, h); break;
	case DRM_FORMAT_YUYV: libyuv::ARGBToYUY2(argb, as, d, ds, w, h); break;
	case DRM_FORMAT_UYVY: libyuv::ARGBToUYVY(argb, as, d, ds, w, h); break;
	default: return false;
	}
	return true;
}

} // namespace pixelport::sweep
