// The wl_shm format sets the tests expect, taken from the wlroots this build links at run time
// (its pixman renderer), so the same tests hold on every wlroots release.
#include "harness.hpp"

#include <vector>

#include "pixelport/core/format.hpp"

#include <wayland-server-core.h> // before `static` is redefined: it includes <math.h>

#define WLR_USE_UNSTABLE
extern "C" {
#define static // C-only `[static N]` parameters (wlroots 0.20's wlr/render/color.h)
#include <wlr/render/drm_format_set.h>
#include <wlr/render/pixman.h>
#include <wlr/render/wlr_renderer.h>
#include <wlr/types/wlr_buffer.h>
#undef static
}

namespace pixelport::test {

std::string fourcc_name(uint32_t f) {
	std::string s(4, ' ');
	for (int i = 0; i < 4; i++) s[i] = static_cast<char>((f >> (8 * i)) & 0xff);
	return s;
}

namespace {

struct Sets {
	std::set<std::string> native, converted, served;
	std::vector<std::string> served_names;
};

const Sets &sets() {
	static const Sets s = [] {
		Sets out;
		std::vector<uint32_t> native;
		wlr_renderer *r = wlr_pixman_renderer_create();
		if (r != nullptr) {
			const wlr_drm_format_set *set = wlr_renderer_get_texture_formats(r, WLR_BUFFER_CAP_DATA_PTR);
			for (size_t i = 0; set != nullptr && i < set->len; i++)
				native.push_back(set->formats[i].format);
			wlr_renderer_destroy(r);
		}
		for (uint32_t f : native) out.native.insert(fourcc_name(f));
		for (const core::FormatInfo &info : core::all_formats()) {
			std::string name = fourcc_name(info.fourcc);
			if (out.native.count(name) == 0 && core::pick_target(info.fourcc, native) != 0) {
				out.converted.insert(name);
			}
			if (core::pick_target(info.fourcc, native) != 0) {
				out.served.insert(name);
				out.served_names.push_back(info.name);
			}
		}
		return out;
	}();
	return s;
}

} // namespace

const std::set<std::string> &native_shm_formats() { return sets().native; }
const std::set<std::string> &converted_shm_formats() { return sets().converted; }
const std::set<std::string> &served_shm_formats() { return sets().served; }
const std::vector<std::string> &served_shm_format_names() { return sets().served_names; }
bool is_native_shm_format(uint32_t fourcc) { return sets().native.count(fourcc_name(fourcc)) != 0; }

} // namespace pixelport::test
