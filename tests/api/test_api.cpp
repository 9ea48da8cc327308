// The C API's versioned structs (pixelport.h): a host built against an older or newer header of
// the same ABI version works with this plugin, each side using the fields both know.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <vector>

#include "pixelport/pixelport.h"
#include "wlr.hpp" // wlroots for C++ (0.20's headers need its help)

namespace {

struct Host {
	wl_display *display = wl_display_create();
	wlr_renderer *renderer = wlr_pixman_renderer_create();
	~Host() {
		wlr_renderer_destroy(renderer);
		wl_display_destroy(display);
	}
};

TEST(ApiStructSize, OptionsWithoutTheirSizeAreRefused) {
	Host host;
	ASSERT_NE(host.display, nullptr);
	ASSERT_NE(host.renderer, nullptr);
	pixelport_options options{}; // struct_size 0
	EXPECT_EQ(pixelport_create(host.display, host.renderer, &options), nullptr);
	// NULL options: every default.
	pixelport_plugin *pp = pixelport_create(host.display, host.renderer, nullptr);
	EXPECT_NE(pp, nullptr);
	pixelport_destroy(pp);
}

// A host built before the per-client caps existed passes a shorter struct: the plugin reads no
// byte past it (here: 0xff bytes that would be absurd caps and thread counts).
TEST(ApiStructSize, AnOlderHostsShorterOptionsAreReadOnlyAsFarAsTheyReach) {
	Host host;
	std::vector<unsigned char> bytes(sizeof(pixelport_options), 0xff);
	pixelport_options older{};
	older.struct_size = offsetof(pixelport_options, stream_max_streams);
	older.shm_version = 1;
	memcpy(bytes.data(), &older, older.struct_size);
	pixelport_plugin *pp = pixelport_create(
		host.display, host.renderer, reinterpret_cast<const pixelport_options *>(bytes.data()));
	ASSERT_NE(pp, nullptr); // with 0xff past the size read, shm_version would be refused
	pixelport_destroy(pp);
}

// A newer host's longer struct: the fields this plugin knows are read, the rest ignored.
TEST(ApiStructSize, ANewerHostsLongerOptionsAreAccepted) {
	Host host;
	std::vector<unsigned char> bytes(sizeof(pixelport_options) + 64, 0xee);
	pixelport_options options{};
	options.struct_size = bytes.size();
	memcpy(bytes.data(), &options, sizeof options);
	pixelport_plugin *pp = pixelport_create(
		host.display, host.renderer, reinterpret_cast<const pixelport_options *>(bytes.data()));
	EXPECT_NE(pp, nullptr);
	pixelport_destroy(pp);
}

TEST(ApiStructSize, StatsAreWrittenOnlyAsFarAsTheCallersStructReaches) {
	Host host;
	pixelport_plugin *pp = pixelport_create(host.display, host.renderer, nullptr);
	ASSERT_NE(pp, nullptr);
	pixelport_stats stats;
	memset(&stats, 0xab, sizeof stats);
	stats.struct_size = offsetof(pixelport_stats, converted_pixels); // two counters
	pixelport_get_stats(pp, &stats);
	EXPECT_EQ(stats.struct_size, offsetof(pixelport_stats, converted_pixels)); // never written
	EXPECT_EQ(stats.native_uploads, 0u);
	EXPECT_EQ(stats.converted_uploads, 0u);
	uint64_t untouched;
	memset(&untouched, 0xab, sizeof untouched);
	EXPECT_EQ(stats.converted_pixels, untouched);
	EXPECT_EQ(stats.image_bytes, untouched);
	// A size of 0, or no struct: nothing is written.
	memset(&stats, 0xab, sizeof stats);
	stats.struct_size = 0;
	pixelport_get_stats(pp, &stats);
	EXPECT_EQ(stats.native_uploads, untouched);
	pixelport_get_stats(pp, nullptr);
	// The whole struct.
	stats.struct_size = sizeof stats;
	pixelport_get_stats(pp, &stats);
	EXPECT_EQ(stats.native_uploads, 0u);
	EXPECT_EQ(stats.image_bytes, 0u);
	pixelport_destroy(pp);
}

} // namespace
