// The wl_shm path through the real pipeline: pixelport-paint -> plugin -> pixman -> grim.
// Every advertised format shows its pattern; converted formats redo only damaged rows and
// keep the surface's previous content elsewhere; native formats are used in place.
#include <gtest/gtest.h>

#include <drm_fourcc.h>

#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include "harness.hpp"
#include "pattern.hpp"
#include "pixelport/core/format.hpp"
#include "reference.hpp"

using namespace pixelport;
using namespace pixelport::test;

namespace {

uint32_t fourcc_of(const std::string &name) {
	const core::FormatInfo *info = core::format_by_name(name);
	return info != nullptr ? info->fourcc : 0;
}

// One frame of pixelport-paint, and the same frame simulated here to know what to expect.
struct Frame {
	std::string format;
	int width, height;
	uint32_t seed;
	int dx = 0, dy = 0, dw = -1, dh = -1; // damage; dw < 0: whole buffer
	bool fill_all = true;
	int slot = 0;

	std::string spec() const {
		std::ostringstream s;
		s << "format=" << format << ",size=" << width << "x" << height << ",seed=" << seed
		  << ",fill=" << (fill_all ? "all" : "damage") << ",buffer=" << slot;
		if (dw >= 0) s << ",damage=" << dx << ":" << dy << ":" << dw << ":" << dh;
		return s.str();
	}
};

// What the surface shows after each frame, by the protocol's rules: converted formats update
// only the damage (unless size or format changed, or the previous buffer was native).
class SurfaceModel {
public:
	void apply(const Frame &f, bool converted) {
		uint32_t drm = fourcc_of(f.format);
		Slot &slot = slots_[f.slot];
		if (slot.format != drm || slot.width != f.width || slot.height != f.height) {
			slot.stride = shm_min_stride(drm, f.width);
			ShmLayout l;
			shm_layout(drm, f.width, f.height, slot.stride, &l);
			slot.bytes.assign(l.size, 0xa5); // as pixelport-paint fills new buffers
			slot.format = drm;
			slot.width = f.width;
			slot.height = f.height;
		}
		int dx = f.dx, dy = f.dy, dw = f.dw, dh = f.dh;
		if (dw < 0) {
			dx = dy = 0;
			dw = f.width;
			dh = f.height;
		}
		if (f.fill_all) {
			encode_pattern(drm, f.width, f.height, slot.stride, slot.bytes.data(), f.seed, 0, 0, f.width,
				f.height);
		} else {
			encode_pattern(drm, f.width, f.height, slot.stride, slot.bytes.data(), f.seed, dx, dy, dw, dh);
		}
		std::vector<uint32_t> decoded;
		ASSERT_TRUE(reference_rgb(drm, f.width, f.height, slot.stride, slot.bytes.data(), &decoded));
		bool partial =
			converted && last_converted_ && width_ == f.width && height_ == f.height && format_ == drm;
		if (!partial) {
			shown_ = decoded;
		} else {
			for (int y = dy; y < dy + dh; y++)
				for (int x = dx; x < dx + dw; x++)
					shown_[static_cast<size_t>(y) * f.width + x] =
						decoded[static_cast<size_t>(y) * f.width + x];
		}
		width_ = f.width;
		height_ = f.height;
		format_ = drm;
		last_converted_ = converted;
		tolerance_ = reference_tolerance(drm);
	}

	// Compares the window area at the output origin; everything else must be black.
	int mismatches(const Image &shot) const {
		return screen_mismatches(shot, shown_, width_, height_, tolerance_, true);
	}

private:
	struct Slot {
		uint32_t format = 0;
		int width = 0, height = 0;
		size_t stride = 0;
		std::vector<uint8_t> bytes;
	};
	Slot slots_[2];
	std::vector<uint32_t> shown_;
	int width_ = 0, height_ = 0, tolerance_ = 0;
	uint32_t format_ = 0;
	bool last_converted_ = false;
};

// The renderer takes these from CPU memory itself; all others are converted by the plugin.
bool is_native(const std::string &f) { return is_native_shm_format(fourcc_of(f)); }

struct Stats {
	uint64_t native_uploads = 0, converted_uploads = 0, converted_pixels = 0, shm_buffers = 0;
};

bool parse_stats(const std::string &out, Stats *s) {
	size_t at = out.find("pixelport-stats ");
	if (at == std::string::npos) return false;
	return sscanf(out.c_str() + at,
		       "pixelport-stats "
		       "{\"native_uploads\":%lu,\"converted_uploads\":%lu,\"converted_pixels\":%lu,\"shm_buffers\":%lu",
		       &s->native_uploads, &s->converted_uploads, &s->converted_pixels, &s->shm_buffers) == 4;
}

// Runs the frames through pixelport-paint, checks the screen after the last one, returns stats.
void run_frames(const std::vector<Frame> &frames, Stats *stats = nullptr,
	const std::vector<std::string> &compositor_args = {}, const std::string &output = "256x256") {
	CompositorFixture fx;
	std::vector<std::string> args = {"--print-stats"};
	args.insert(args.end(), compositor_args.begin(), compositor_args.end());
	ASSERT_TRUE(fx.start(args, output)) << fx.compositor().err();
	std::vector<std::string> argv = {build_path("PIXELPORT_PAINT")};
	for (const Frame &f : frames) {
		argv.push_back("--frame");
		argv.push_back(f.spec());
	}
	Process client;
	ASSERT_TRUE(client.start(argv, fx.client_env()));
	SurfaceModel model;
	for (const Frame &f : frames) {
		std::string line;
		ASSERT_TRUE(client.read_line(&line, 10000)) << client.err();
		ASSERT_EQ(
			line, "presented " + f.format + " " + std::to_string(f.width) + "x" + std::to_string(f.height));
		model.apply(f, !is_native(f.format));
	}
	Image shot;
	ASSERT_TRUE(fx.screenshot(&shot));
	EXPECT_EQ(model.mismatches(shot), 0);
	client.terminate();
	ASSERT_EQ(fx.stop(), 0) << fx.compositor().err();
	if (stats != nullptr) {
		ASSERT_TRUE(parse_stats(fx.compositor().out(), stats)) << fx.compositor().out();
	}
}

class EveryFormat : public testing::TestWithParam<std::string> {};

TEST_P(EveryFormat, ShowsThePatternAtAnOddSize) {
	Stats stats;
	run_frames({{GetParam(), 61, 37, 5}}, &stats);
	if (is_native(GetParam())) {
		EXPECT_EQ(stats.converted_uploads, 0u);
	} else {
		EXPECT_EQ(stats.converted_uploads, 1u);
		EXPECT_EQ(stats.converted_pixels, 61u * 37u);
	}
}

INSTANTIATE_TEST_SUITE_P(Shm, EveryFormat, testing::ValuesIn(served_shm_format_names()));

TEST(ShmNative, IsUsedInPlaceWithoutAnyConversion) {
	Stats stats;
	run_frames({{"XRGB8888", 64, 48, 1, 0, 0, -1, -1, true, 0}, {"XRGB8888", 64, 48, 2, 0, 0, -1, -1, true, 1}},
		&stats);
	EXPECT_EQ(stats.converted_uploads, 0u);
	EXPECT_EQ(stats.converted_pixels, 0u);
	EXPECT_GE(stats.native_uploads, 2u);
}

class ConvertedDamage : public testing::TestWithParam<std::string> {};

// The client rewrites its whole buffer but damages one band: only that band may change.
TEST_P(ConvertedDamage, RedoesOnlyTheDamagedRows) {
	Stats stats;
	run_frames({{GetParam(), 64, 48, 1}, {GetParam(), 64, 48, 2, 8, 10, 20, 12, true, 0}}, &stats);
	EXPECT_EQ(stats.converted_uploads, 2u);
	EXPECT_EQ(stats.converted_pixels, 64u * 48u + 20u * 12u);
}

// Damage is relative to the surface's last content, not to this buffer's: a fresh second
// buffer holding junk outside the damage must not show that junk.
TEST_P(ConvertedDamage, IsRelativeToTheSurfacesPreviousContent) {
	run_frames({{GetParam(), 64, 48, 1, 0, 0, -1, -1, true, 0}, {GetParam(), 64, 48, 2, 16, 8, 24, 16, false, 1},
		{GetParam(), 64, 48, 3, 32, 30, 16, 10, false, 0}});
}

TEST_P(ConvertedDamage, ReconvertsEverythingWhenTheSizeChanges) {
	Stats stats;
	run_frames({{GetParam(), 64, 48, 1}, {GetParam(), 40, 30, 2, 0, 0, 8, 8, true, 0}}, &stats);
	EXPECT_EQ(stats.converted_pixels, 64u * 48u + 40u * 30u);
}

INSTANTIATE_TEST_SUITE_P(Shm, ConvertedDamage, testing::Values("RGB888", "NV12", "YUYV", "XBGR16161616F"));

// Large enough for the core to split rows between threads (>= 256 Ki pixels per thread).
TEST(ShmThreads, TwoConversionThreadsGiveTheSameFrame) {
	Stats stats;
	run_frames({{"NV12", 1024, 600, 3}, {"NV12", 1024, 600, 4, 0, 0, -1, -1, true, 1}}, &stats,
		{"--convert-threads", "2"}, "1024x600");
	EXPECT_EQ(stats.converted_pixels, 2u * 1024 * 600);
}

TEST(ShmFormatChange, ReconvertsEverythingWhenTheFormatChanges) {
	Stats stats;
	run_frames({{"RGB888", 64, 48, 1}, {"NV12", 64, 48, 2, 0, 0, 16, 16, true, 1}}, &stats);
	EXPECT_EQ(stats.converted_pixels, 2u * 64u * 48u);
}

TEST(ShmFormatChange, ANativeFrameMakesTheNextConvertedFrameFull) {
	run_frames({{"RGB888", 64, 48, 1}, {"XRGB8888", 64, 48, 2, 0, 0, -1, -1, true, 1},
		{"RGB888", 64, 48, 3, 0, 0, 8, 8, true, 0}});
}

class ShmStride : public testing::TestWithParam<std::pair<std::string, int>> {};

// 61 RGB888 pixels are 183 bytes; pads make strides of 186 (odd multiple of 2) and 192.
// RGB565 with a stride that is not a multiple of 4 cannot be used in place by pixman: the
// plugin converts it instead of failing the upload.
TEST_P(ShmStride, OddStridesDisplayExactly) {
	const auto &[format, pad] = GetParam();
	uint32_t drm = fourcc_of(format);
	CompositorFixture fx;
	ASSERT_TRUE(fx.start());
	Process c;
	ASSERT_TRUE(c.start({build_path("PIXELPORT_PAINT"), "--format", format, "--size", "61x37", "--seed", "4",
				    "--stride-pad", std::to_string(pad)},
		fx.client_env()));
	std::string line;
	ASSERT_TRUE(c.read_line(&line, 10000)) << c.err();
	Image shot;
	ASSERT_TRUE(fx.screenshot(&shot));
	size_t stride = shm_min_stride(drm, 61) + static_cast<size_t>(pad);
	std::vector<uint8_t> bytes(stride * 37, 0xa5);
	encode_pattern(drm, 61, 37, stride, bytes.data(), 4, 0, 0, 61, 37);
	std::vector<uint32_t> want;
	ASSERT_TRUE(reference_rgb(drm, 61, 37, stride, bytes.data(), &want));
	EXPECT_EQ(screen_mismatches(shot, want, 61, 37, 0, false), 0) << format << " stride " << stride;
	c.terminate();
}

INSTANTIATE_TEST_SUITE_P(Shm, ShmStride,
	testing::Values(std::pair{"RGB888", 2}, std::pair{"RGB888", 9}, std::pair{"RGB565", 2}, std::pair{"BGR565", 6}),
	[](const auto &info) { return info.param.first + "_pad" + std::to_string(info.param.second); });

} // namespace
