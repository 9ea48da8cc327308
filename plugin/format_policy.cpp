#include "format_policy.hpp"

#include <algorithm>
#include <cctype>

#include "pixelport/core/convert.hpp"
#include "pixelport/core/format.hpp"

namespace pixelport {

FormatPolicy::FormatPolicy(std::span<const uint32_t> renderer_formats) {
	auto add = [this](uint32_t fourcc, uint32_t target) {
		if (std::find(served_.begin(), served_.end(), fourcc) != served_.end()) return;
		served_.push_back(fourcc);
		targets_.push_back(target);
	};
	for (uint32_t fourcc : renderer_formats) {
		if (core::format_info(fourcc) == nullptr) continue;
		renderer_.push_back(fourcc);
		add(fourcc, fourcc);
	}
	native_count_ = served_.size();
	for (const core::FormatInfo &info : core::all_formats()) {
		uint32_t target = core::pick_target(info.fourcc, renderer_);
		if (target != 0) add(info.fourcc, target);
	}
}

uint32_t FormatPolicy::target_for(uint32_t fourcc) const {
	for (size_t i = 0; i < served_.size(); i++) {
		if (served_[i] == fourcc) return targets_[i];
	}
	return 0;
}

uint32_t FormatPolicy::target_for_stride(uint32_t fourcc, uint64_t stride) const {
	uint32_t target = target_for(fourcc);
	if (target != fourcc || stride % 4 == 0) return target;
	std::vector<uint32_t> others;
	for (uint32_t f : renderer_) {
		if (f != fourcc) others.push_back(f);
	}
	return core::pick_target(fourcc, others);
}

uint32_t FormatPolicy::straight_target_for(uint32_t fourcc) const {
	if (target_for(fourcc) == 0) return 0;
	return core::pick_target_for_alpha(fourcc, renderer_, core::AlphaMode::Straight);
}

bool FormatPolicy::serves_required() const {
	return target_for(core::fourcc::ARGB8888) != 0 && target_for(core::fourcc::XRGB8888) != 0;
}

namespace {

// "libgstwayland-1.0.so.0.2200.0" from `at` (just after ".so.0."): 22, 0. False if no number.
bool read_version(std::string_view rest, GstWayland *out) {
	uint32_t number = 0;
	size_t digits = 0;
	while (digits < rest.size() && digits < 6 && std::isdigit(static_cast<unsigned char>(rest[digits]))) {
		number = number * 10 + static_cast<uint32_t>(rest[digits] - '0');
		digits++;
	}
	if (digits < 3) return false;
	out->minor = number / 100;
	out->micro = number % 100;
	return true;
}

// Whether `line` maps a file named `name` (the path's last component starts with it), and the
// version its ".so.0.MMmm" suffix gives, if any.
bool maps_library(std::string_view line, std::string_view name, GstWayland *version) {
	size_t slash = line.rfind('/');
	if (slash == std::string_view::npos) return false;
	std::string_view file = line.substr(slash + 1);
	if (file.substr(0, name.size()) != name) return false;
	std::string_view rest = file.substr(name.size());
	if (rest.substr(0, 3) == ".0.") read_version(rest.substr(3), version);
	return true;
}

} // namespace

GstWayland find_gst_wayland(std::string_view maps) {
	GstWayland gst, from_core;
	bool versioned = false;
	while (!maps.empty()) {
		size_t end = maps.find('\n');
		std::string_view line = maps.substr(0, end);
		maps = end == std::string_view::npos ? std::string_view() : maps.substr(end + 1);
		GstWayland v;
		if (maps_library(line, "libgstwayland-1.0.so", &v)) {
			gst.found = true;
			if (v.minor != 0) {
				gst.minor = v.minor;
				gst.micro = v.micro;
				versioned = true;
			}
		} else if (maps_library(line, "libgstwaylandsink.so", &v)) {
			gst.found = true;
		} else if (maps_library(line, "libgstreamer-1.0.so", &v) && v.minor != 0) {
			from_core = v;
		}
	}
	if (gst.found && !versioned) {
		gst.minor = from_core.minor;
		gst.micro = from_core.micro;
	}
	return gst;
}

namespace {

namespace f = core::fourcc;

// waylandsink up to 1.22 declares GStreamer's RGB (bytes R, G, B) as RGB888, whose bytes are
// B, G, R, and BGR as BGR888: red and blue swap on screen. 1.26 declares them right; 1.24 was
// not checked and counts as mislabelling (withheld, it converts them itself, as without us).
constexpr uint32_t kFirstRightRgbMinor = 26;
constexpr const char *kMislabels = "its waylandsink labels RGB bytes as RGB888 and BGR bytes as BGR888";
// waylandsink checks the planes GStreamer laid out (gst_video_info) against the one-stride
// layout it would send, and refuses the buffer where they differ ("Unsupported strides and
// offsets"): 4:2:0 at odd heights (GStreamer starts the chroma plane at an even row) and
// I420/YV12 where the chroma stride is not half the luma stride (widths 8k+1 to 8k+4); 1.22
// and 1.26 alike. Its video stops before the first frame; without these it converts to a
// format it lays out right (NV16 or YUYV). P010 is one of them from 1.26 on.
constexpr const char *kOddSizes = "its waylandsink refuses 4:2:0 planes at odd sizes";

} // namespace

std::vector<WithheldFormat> WithheldFormats::auto_rule(const GstWayland &gst) {
	std::vector<WithheldFormat> out;
	if (!gst.found) return out;
	if (gst.minor < kFirstRightRgbMinor) {
		out.push_back({f::RGB888, kMislabels});
		out.push_back({f::BGR888, kMislabels});
	}
	for (uint32_t fourcc : {f::NV12, f::NV21, f::YUV420, f::YVU420, f::P010}) {
		out.push_back({fourcc, kOddSizes});
	}
	return out;
}

bool WithheldFormats::parse(std::string_view spec, WithheldFormats *out, std::string *error) {
	out->items_.clear();
	out->can_withhold_ = false;
	auto lower_is = [](std::string_view s, std::string_view word) {
		return s.size() == word.size() && std::equal(s.begin(), s.end(), word.begin(), [](char a, char b) {
			return std::tolower(static_cast<unsigned char>(a)) == b;
		});
	};
	while (!spec.empty()) {
		size_t comma = spec.find(',');
		std::string_view item = spec.substr(0, comma);
		spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
		while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front()))) item.remove_prefix(1);
		while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) item.remove_suffix(1);
		if (item.empty()) continue;
		if (lower_is(item, "auto")) {
			out->items_.push_back({Item::Auto, 0});
			continue;
		}
		if (lower_is(item, "none")) {
			out->items_.push_back({Item::Clear, 0});
			continue;
		}
		bool remove = item.front() == '-';
		std::string_view name = remove ? item.substr(1) : item;
		const core::FormatInfo *info = core::format_by_name(name);
		if (info == nullptr) {
			*error = "unknown format \"" + std::string(name) +
				"\" (a DRM format name without DRM_FORMAT_, e.g. RGB888; or auto, none, -NAME)";
			out->items_.clear();
			return false;
		}
		out->items_.push_back({remove ? Item::Remove : Item::Add, info->fourcc});
	}
	if (out->items_.empty()) out->items_.push_back({Item::Auto, 0});
	// Version 0 (unknown) gets every part of the automatic rule.
	out->can_withhold_ = !out->for_client(GstWayland{.found = true}).empty();
	return true;
}

std::vector<WithheldFormat> WithheldFormats::for_client(const GstWayland &gst) const {
	std::vector<WithheldFormat> set;
	if (!gst.found) return set;
	auto add = [&set](WithheldFormat w) {
		auto same = [&w](const WithheldFormat &x) { return x.fourcc == w.fourcc; };
		if (std::find_if(set.begin(), set.end(), same) == set.end()) set.push_back(w);
	};
	for (const Item &item : items_) {
		switch (item.kind) {
		case Item::Auto:
			for (const WithheldFormat &w : auto_rule(gst)) add(w);
			break;
		case Item::Add: add({item.fourcc, "named in the switch"}); break;
		case Item::Remove:
			std::erase_if(set, [&item](const WithheldFormat &w) { return w.fourcc == item.fourcc; });
			break;
		case Item::Clear: set.clear(); break;
		}
	}
	// In the core's table order, for a stable log line.
	std::vector<WithheldFormat> ordered;
	for (const core::FormatInfo &info : core::all_formats()) {
		for (const WithheldFormat &w : set) {
			if (w.fourcc == info.fourcc) ordered.push_back(w);
		}
	}
	return ordered;
}

} // namespace pixelport
