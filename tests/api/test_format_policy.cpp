// The rule that withholds wl_shm formats from GStreamer's clients (plugin/format_policy.cpp):
// how a process's memory map names GStreamer and its version, the switch's grammar, and what
// each version gets.
#include <gtest/gtest.h>

#include <string>

#include "format_policy.hpp"
#include "pixelport/core/format.hpp"

using namespace pixelport;
namespace f = pixelport::core::fourcc;

namespace {

// Lines as /proc/PID/maps writes them.
const char *kMapsGst122 =
	"55d0c0a00000-55d0c0a02000 r--p 00000000 fe:01 1835 /usr/bin/gst-launch-1.0\n"
	"7f1c2a000000-7f1c2a021000 rw-p 00000000 00:00 0 \n"
	"7f1c2b400000-7f1c2b41a000 r--p 00000000 fe:01 4242 /usr/lib/x86_64-linux-gnu/libgstreamer-1.0.so.0.2200.0\n"
	"7f1c2c000000-7f1c2c006000 r--p 00000000 fe:01 4243 "
	"/usr/lib/x86_64-linux-gnu/gstreamer-1.0/libgstwaylandsink.so\n"
	"7f1c2c100000-7f1c2c104000 r-xp 00004000 fe:01 4244 /usr/lib/x86_64-linux-gnu/libgstwayland-1.0.so.0.2200.0\n"
	"7ffd1e5f0000-7ffd1e611000 rw-p 00000000 00:00 0                          [stack]\n";

std::vector<uint32_t> fourccs(const std::vector<WithheldFormat> &w) {
	std::vector<uint32_t> out;
	for (const WithheldFormat &x : w) out.push_back(x.fourcc);
	return out;
}

WithheldFormats parsed(const std::string &spec) {
	WithheldFormats w;
	std::string error;
	EXPECT_TRUE(WithheldFormats::parse(spec, &w, &error)) << spec << ": " << error;
	return w;
}

const std::vector<uint32_t> kOld = {f::RGB888, f::BGR888, f::NV12, f::NV21, f::YUV420, f::YVU420, f::P010};
const std::vector<uint32_t> kPlanar420 = {f::NV12, f::NV21, f::YUV420, f::YVU420, f::P010};

} // namespace

TEST(FindGstWayland, ReadsTheLibraryAndItsVersionFromTheFileName) {
	GstWayland gst = find_gst_wayland(kMapsGst122);
	EXPECT_TRUE(gst.found);
	EXPECT_EQ(gst.minor, 22u);
	EXPECT_EQ(gst.micro, 0u);
	gst = find_gst_wayland("7f00-7f01 r--p 0 0:0 1 /usr/lib/libgstwayland-1.0.so.0.2602.0 (deleted)\n");
	EXPECT_TRUE(gst.found);
	EXPECT_EQ(gst.minor, 26u);
	EXPECT_EQ(gst.micro, 2u);
}

TEST(FindGstWayland, TheSinkAloneTakesGStreamersCoreVersion) {
	// 1.20 and older: waylandsink has no library of its own.
	GstWayland gst = find_gst_wayland("1-2 r--p 0 0:0 1 /usr/lib/libgstreamer-1.0.so.0.1804.0\n"
					  "3-4 r--p 0 0:0 1 /usr/lib/gstreamer-1.0/libgstwaylandsink.so\n");
	EXPECT_TRUE(gst.found);
	EXPECT_EQ(gst.minor, 18u);
	EXPECT_EQ(gst.micro, 4u);
	// No version anywhere: 0.0, which the rule treats as the oldest.
	gst = find_gst_wayland("3-4 r--p 0 0:0 1 /opt/gst/libgstwayland-1.0.so\n");
	EXPECT_TRUE(gst.found);
	EXPECT_EQ(gst.minor, 0u);
}

TEST(FindGstWayland, GStreamerWithoutItsWaylandCodeOrLookalikesAreNotIt) {
	EXPECT_FALSE(find_gst_wayland("").found);
	EXPECT_FALSE(find_gst_wayland("1-2 r--p 0 0:0 1 /usr/lib/libgstreamer-1.0.so.0.2200.0\n"
				      "3-4 r--p 0 0:0 1 /usr/lib/libgstvideo-1.0.so.0.2200.0\n")
			     .found);
	// The name must be the file's, not a folder's or a longer name's prefix.
	EXPECT_FALSE(find_gst_wayland("1-2 r--p 0 0:0 1 /tmp/libgstwayland-1.0.so/x.so\n").found);
	EXPECT_FALSE(find_gst_wayland("1-2 r--p 0 0:0 1 /usr/lib/mylibgstwayland-1.0.so.0\n").found);
	EXPECT_FALSE(find_gst_wayland("1-2 rw-p 00000000 00:00 0 [heap]\nlibgstwayland-1.0.so").found);
}

TEST(WithheldFormats, AutoFollowsTheVersion) {
	WithheldFormats w = parsed("");
	EXPECT_EQ(fourccs(w.for_client({true, 22, 0})), kOld);
	EXPECT_EQ(fourccs(w.for_client({true, 24, 9})), kOld); // not checked: counts as mislabelling
	EXPECT_EQ(fourccs(w.for_client({true, 26, 0})), kPlanar420);
	EXPECT_EQ(fourccs(w.for_client({true, 0, 0})), kOld);
	EXPECT_TRUE(w.for_client({false, 22, 0}).empty()) << "a client without GStreamer gets every format";
	EXPECT_TRUE(w.can_withhold());
	EXPECT_EQ(fourccs(parsed("auto").for_client({true, 22, 0})), kOld);
	EXPECT_EQ(fourccs(parsed(" AUTO , ").for_client({true, 22, 0})), kOld);
}

TEST(WithheldFormats, NamesAddRemoveAndNoneClears) {
	EXPECT_TRUE(parsed("none").for_client({true, 22, 0}).empty());
	EXPECT_FALSE(parsed("none").can_withhold());
	EXPECT_EQ(fourccs(parsed("rgb888,BGR888").for_client({true, 26, 0})),
		(std::vector<uint32_t>{f::RGB888, f::BGR888}));
	EXPECT_EQ(fourccs(parsed("auto,-NV12,-yuv420").for_client({true, 26, 0})),
		(std::vector<uint32_t>{f::NV21, f::YVU420, f::P010}));
	EXPECT_EQ(fourccs(parsed("auto,none,UYVY").for_client({true, 22, 0})), (std::vector<uint32_t>{f::UYVY}));
	EXPECT_FALSE(parsed("RGB888,-RGB888").can_withhold());
	// Each withheld format says why, for the log line.
	for (const WithheldFormat &x : parsed("auto,UYVY").for_client({true, 22, 0})) {
		EXPECT_NE(std::string(x.why), "") << core::format_name(x.fourcc);
	}
}

TEST(WithheldFormats, AnUnknownItemIsAnErrorNamingIt) {
	WithheldFormats w;
	std::string error;
	EXPECT_FALSE(WithheldFormats::parse("auto,RGB24", &w, &error));
	EXPECT_NE(error.find("\"RGB24\""), std::string::npos) << error;
	EXPECT_FALSE(WithheldFormats::parse("-", &w, &error));
	EXPECT_FALSE(WithheldFormats::parse("nv12;nv21", &w, &error));
}
