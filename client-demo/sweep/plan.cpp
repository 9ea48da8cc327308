#include "plan.hpp"

#include <algorithm>
#include <cmath>

#include "model.hpp"
#include "pattern.hpp"
#include "pixelport/core/format.hpp"
#include "procfs.hpp"
#include "wayland_client.hpp"

using namespace pixelport::client;

namespace pixelport::sweep {

// Bytes of a width x height frame of `drm` in pixelport's wl_shm layout; 0 if none.
uint64_t frame_bytes(uint32_t drm, int w, int h) {
	size_t stride = shm_min_stride(drm, w);
	ShmLayout layout;
	if (stride == 0 || !shm_layout(drm, w, h, stride, &layout)) return 0;
	return layout.size;
}

// A 4:3 frame of about `bytes` on the format's chroma grid.
void shape_for(uint32_t drm, double bytes, int *w, int *h) {
	const core::FormatInfo *f = core::format_info(drm);
	int gx = f ? f->hsub : 1, gy = f ? f->vsub : 1;
	gx = std::max(gx, 2);
	gy = std::max(gy, 2);
	double bpp = static_cast<double>(frame_bytes(drm, 256, 256)) / 65536.0;
	double pixels = bytes / bpp;
	int width = static_cast<int>(std::lround(std::sqrt(pixels * 4.0 / 3.0) / gx)) * gx;
	width = std::max(width, gx);
	int height = static_cast<int>(std::lround(pixels / width / gy)) * gy;
	*w = width;
	*h = std::max(height, gy);
}

Plan plan_sweep(const Options &o, bool sizes_given) {
	std::vector<std::string> transport_names = split(o.transports, ',');
	std::vector<TransportChoice> transports;
	for (const std::string &n : transport_names) {
		TransportChoice t;
		if (!parse_transport(n, &t) || t == TransportChoice::Auto)
			die(2, "unknown transport '" + n + "' (shm, shm-new, socket or pipe)");
		transports.push_back(t);
	}
	std::vector<std::string> format_names = split(o.formats, ',');
	std::vector<uint32_t> formats;
	for (std::string &n : format_names) {
		uint32_t code;
		if (!parse_format(n, &code)) die(2, "unknown format '" + n + "'");
		n = format_name(code);
		formats.push_back(shm_to_drm(code));
	}
	if (transports.empty() || formats.empty()) die(2, "no transport or no format to measure");

	// Sizes (not in pressure mode): per format, the frame shape for each requested size.
	std::vector<SizeSpec> sizes;
	std::vector<std::string> size_args; // what a peer child gets
	if (o.instances == 0) {
		if (sizes_given) {
			// Given, even empty: exactly these sizes, never the default sweep.
			if (o.sizes_arg.empty())
				die(2,
					std::string("--sizes: empty (want WxH or ") + kBytesRange +
						", comma-separated)");
			for (const std::string &s : split_all(o.sizes_arg)) {
				SizeSpec spec;
				if (s.find_first_of("xX") != std::string::npos) {
					if (!parse_wxh(s, &spec.width, &spec.height)) {
						die(2,
							"--sizes: size '" + s +
								"' does not fit (want WxH, width and height 1..32767)");
					}
				} else if (!parse_bytes(s, &spec.bytes)) {
					die(2, "--sizes: bad size '" + s + "' (want WxH or " + kBytesRange + ")");
				}
				spec.label = s;
				sizes.push_back(spec);
				size_args.push_back(s);
			}
		} else {
			double lo, hi;
			if (!parse_bytes(o.min_size, &lo))
				die(2, "--min-size: bad size '" + o.min_size + "' (want " + kBytesRange + ")");
			if (!parse_bytes(o.max_size, &hi))
				die(2, "--max-size: bad size '" + o.max_size + "' (want " + kBytesRange + ")");
			if (lo > hi) die(2, "--min-size " + o.min_size + " is larger than --max-size " + o.max_size);
			for (int i = 0; i < o.steps; i++) {
				SizeSpec spec;
				spec.bytes = o.steps == 1
					? lo
					: std::exp(std::log(lo) + (std::log(hi) - std::log(lo)) * i / (o.steps - 1));
				spec.bytes = std::round(spec.bytes);
				spec.label = std::to_string(static_cast<uint64_t>(spec.bytes));
				sizes.push_back(spec);
				size_args.push_back(spec.label);
			}
		}
		uint64_t largest = 0;
		for (uint32_t f : formats) {
			for (SizeSpec &s : sizes) {
				int w = s.width, h = s.height;
				if (w == 0) shape_for(f, s.bytes, &w, &h);
				uint64_t b = frame_bytes(f, w, h);
				const core::FormatInfo *fi = core::format_info(f);
				if (b == 0 || (fi && (w % fi->hsub || h % fi->vsub))) {
					die(2,
						"size " + std::to_string(w) + "x" + std::to_string(h) +
							" does not fit " + format_name(drm_to_shm(f)) +
							" (off its chroma grid)");
				}
				if (b > INT32_MAX) {
					die(2,
						"size " + s.label + " does not fit: a " + std::to_string(w) + "x" +
							std::to_string(h) + " " + format_name(drm_to_shm(f)) +
							" frame is " + human_bytes(static_cast<double>(b)) +
							", wl_shm pools hold at most 2 GiB");
				}
				largest = std::max(largest, b);
			}
		}
		// Content, a frame copy, two reused shm buffers and the compositor's converted copy.
		uint64_t need = largest * 5, avail = mem_available();
		if (avail && need > avail) {
			die(2,
				"the largest frame (" + human_bytes(static_cast<double>(largest)) + ") needs about " +
					human_bytes(static_cast<double>(need)) + " of memory, only " +
					human_bytes(static_cast<double>(avail)) + " available (lower --max-size)");
		}
	}
	return {transport_names, transports, format_names, formats, sizes, size_args};
}

} // namespace pixelport::sweep
