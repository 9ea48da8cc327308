// Buffers behave exactly like wl_buffers whatever the plugin does behind them: every rule of
// docs/design.md "Converted buffers" read back from the screen by pixelport-semantics-client,
// for converted wl_shm formats, native ones, the stream, and stock wlroots as the baseline.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "harness.hpp"

using namespace pixelport::test;

namespace {

struct Case {
	const char *scenario;
	const char *format;
	const char *transport; // shm, stream, or stock (wl_shm of wlroots itself: --no-plugin)
};

class Semantics : public testing::TestWithParam<Case> {};

TEST_P(Semantics, ScreenShowsEachSurfacesOwnCommit) {
	const Case &c = GetParam();
	CompositorFixture fx;
	bool stock = std::string(c.transport) == "stock";
	ASSERT_TRUE(fx.start(stock ? std::vector<std::string>{"--no-plugin"} : std::vector<std::string>{}));
	std::string out, err;
	int status = fx.run_client(
		{build_path("PIXELPORT_SEMANTICS_CLIENT"), c.scenario, c.format, stock ? "shm" : c.transport}, 60000,
		&out, &err);
	EXPECT_EQ(status, 0) << out << err;
	EXPECT_NE(out.find("all ok"), std::string::npos) << out << err;
	EXPECT_EQ(out.find("FAIL"), std::string::npos) << out;
	EXPECT_EQ(fx.stop(), 0) << fx.compositor().err();
}

const char *const kScenarios[] = {
	"shared-then-replaced", "three-surfaces", "sync-cached", "destroyed-while-shown", "burst", "size-and-format"};

std::vector<Case> cases() {
	std::vector<Case> all;
	for (const char *s : kScenarios) {
		for (const char *f : {"RGB888", "XRGB4444", "NV12", "XRGB8888"}) all.push_back({s, f, "shm"});
		for (const char *f : {"RGB888", "NV12", "XRGB8888"}) all.push_back({s, f, "stream"});
		// Stock wlroots has no XRGB4444/RGB888/NV12 on pixman: its own wl_shm in a native format.
		if (std::string(s) != "size-and-format") all.push_back({s, "XRGB8888", "stock"});
	}
	return all;
}

INSTANTIATE_TEST_SUITE_P(AllRules, Semantics, testing::ValuesIn(cases()), [](const auto &info) {
	std::string name = std::string(info.param.scenario) + "_" + info.param.format + "_" + info.param.transport;
	for (char &ch : name) {
		if (ch == '-') ch = '_';
	}
	return name;
});

} // namespace
