// Stands in for core-stream-fuzz where the libFuzzer target cannot be built (tests/core/
// meson.build says when): a skip with the reason, counted as one by scripts/test.
#include <gtest/gtest.h>

TEST(StreamFuzz, LibFuzzerTarget) {
	GTEST_SKIP() << "pixelport-core-fuzz-stream not built: " PP_FUZZ_WHY
			"; the same body ran on random inputs in core-stream-layout (AssemblerFuzzBody)";
}
