// pixelport-semantics-client: checks that buffers behave exactly like wl_buffers whatever the
// plugin does behind them (docs/design.md, "Converted buffers"): content per commit, the same
// buffer on several surfaces, cached commits of synchronized subsurfaces, damage-only commits,
// buffers destroyed while shown, size and format changes.
//
// Usage: pixelport-semantics-client SCENARIO FORMAT TRANSPORT
//   FORMAT: a DRM format name (RGB888, XRGB4444, NV12, XRGB8888, ...)
//   TRANSPORT: shm (wl_shm) or stream (pixelport-stream-v1 over a socketpair)
// Solid-colour 8x8 blocks are drawn side by side: surface i shows at (8 i, 0). At each
// checkpoint the client takes a screenshot with grim (which makes the compositor render every
// surface again) and compares the centre of each block with the colour an independent decoder
// (tests/integration/reference.cpp) gives for the bytes it wrote. It prints one line per
// checkpoint, "checkpoint NAME ok" or "checkpoint NAME FAIL: ...", and exits 0 only if all
// passed.
#include <cstdio>
#include <map>
#include <string>

#include "reference.hpp"
#include "semantics_client.hpp"

using namespace pixelport;
using namespace pixelport::semantics;

// Surfaces and subsurfaces are left to the exit: no leak reports from LeakSanitizer in the
// sanitizer build (weak: absent in normal builds).
extern "C" void __lsan_disable(void) __attribute__((weak));

namespace {

const std::map<std::string, void (*)(Run &)> kScenarios = {
	{"shared-then-replaced", scenario_shared_then_replaced},
	{"three-surfaces", scenario_three_surfaces},
	{"sync-cached", scenario_sync_cached},
	{"destroyed-while-shown", scenario_destroyed_while_shown},
	{"burst", scenario_burst},
	{"alpha-shared", scenario_alpha_shared},
	{"size-and-format", scenario_size_and_format},
};

} // namespace

int main(int argc, char *argv[]) {
	if (__lsan_disable != nullptr) __lsan_disable();
	if (argc < 4) {
		fprintf(stderr, "usage: %s SCENARIO FORMAT shm|stream\n", argv[0]);
		return 2;
	}
	std::string scenario = argv[1];
	Run run;
	if (!parse_format(argv[2], &run.format)) {
		fprintf(stderr, "unknown format %s\n", argv[2]);
		return 2;
	}
	run.format = shm_to_drm(run.format);
	run.format_arg = argv[2];
	run.transport = argv[3];
	std::string error;
	if (!conn.connect(&error)) {
		fprintf(stderr, "%s\n", error.c_str());
		return 1;
	}
	if (conn.subcompositor == nullptr) {
		fprintf(stderr, "no wl_subcompositor\n");
		return 1;
	}
	Window window;
	if (!window.create(&conn, "semantics", &error)) {
		fprintf(stderr, "%s\n", error.c_str());
		return 1;
	}
	run.parent = {window.surface, nullptr};
	run.tol = test::reference_tolerance(run.format);
	run.red = shown(run.format, kRed), run.green = shown(run.format, kGreen), run.blue = shown(run.format, kBlue);
	auto it = kScenarios.find(scenario);
	if (it == kScenarios.end()) {
		fprintf(stderr, "unknown scenario %s\n", scenario.c_str());
		return 2;
	}
	it->second(run);
	printf("%s\n", run.failures == 0 ? "all ok" : "failed");
	return run.failures == 0 ? 0 : 1;
}
