#include "client_modes.hpp"

#include <drm_fourcc.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "pattern.hpp"

namespace pixelport::test {

long ModeArgs::number(size_t i) const { return strtol(at(i, "0"), nullptr, 10); }

bool ModeArgs::is(size_t i, const char *value) const { return i < args.size() && strcmp(args[i], value) == 0; }

int run_mode(int argc, char *argv[], const ModeTable &modes, ModeConnect connect) {
	if (__lsan_disable != nullptr) __lsan_disable();
	if (argc < 2) {
		fprintf(stderr, "usage: %s MODE [ARG...]\n", argv[0]);
		return 2;
	}
	const std::string mode = argv[1];
	ModeArgs args{{argv + 2, argv + argc}};
	std::string error;
	if (!connect(mode, args, &error)) {
		fprintf(stderr, "%s\n", error.c_str());
		return 1;
	}
	auto it = modes.find(mode);
	if (it == modes.end()) {
		fprintf(stderr, "unknown mode %s\n", mode.c_str());
		return 2;
	}
	return it->second(args);
}

std::vector<uint8_t> xrgb_frame(int w, int h, uint32_t seed) {
	std::vector<uint8_t> bytes(static_cast<size_t>(w) * h * 4);
	encode_pattern(DRM_FORMAT_XRGB8888, w, h, static_cast<size_t>(w) * 4, bytes.data(), seed, 0, 0, w, h);
	return bytes;
}

} // namespace pixelport::test
