#include "format_policy.hpp"

#include <algorithm>

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

} // namespace pixelport
