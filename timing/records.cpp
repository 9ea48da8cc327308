#include "pixelport/timing/records.hpp"

#include <cstdio>
#include <ctime>
#include <iterator>

#include "pixelport/core/format.hpp"

namespace pixelport::timing {
namespace {

// The names pixelport-sweep and the clients use (client/transport.cpp's transport_name()).
constexpr std::string_view kTransportNames[] = {"unknown", "shm", "shm-new", "stream"};
// Logs written before the names were unified call ShmNewPool this; still read.
constexpr std::string_view kOldShmNewPoolName = "shm-new-pool";

bool printable(char c) { return c >= 0x20 && c <= 0x7e; }

} // namespace

const char *fifo_name(std::uint8_t fifo) {
	switch (fifo & (kFifoSetBarrier | kFifoWaitBarrier)) {
	case kFifoSetBarrier: return "set";
	case kFifoWaitBarrier: return "wait";
	case kFifoSetBarrier | kFifoWaitBarrier: return "set+wait";
	default: return nullptr;
	}
}

bool parse_fifo(std::string_view name, std::uint8_t &out) {
	for (std::uint8_t f = 1; f <= (kFifoSetBarrier | kFifoWaitBarrier); f++) {
		if (name == fifo_name(f)) {
			out = f;
			return true;
		}
	}
	return false;
}

std::string_view transport_name(Transport t) {
	auto i = static_cast<std::size_t>(t);
	return i < std::size(kTransportNames) ? kTransportNames[i] : "unknown";
}

bool parse_transport(std::string_view name, Transport &out) {
	if (name == kOldShmNewPoolName) {
		out = Transport::ShmNewPool;
		return true;
	}
	for (std::size_t i = 0; i < std::size(kTransportNames); ++i) {
		if (kTransportNames[i] == name) {
			out = static_cast<Transport>(i);
			return true;
		}
	}
	return false;
}

std::string format_name(std::uint32_t code) {
	if (const core::FormatInfo *info = core::format_info(code)) return info->name;
	char chars[4];
	bool ok = true;
	for (int i = 0; i < 4; ++i) {
		chars[i] = static_cast<char>((code >> (8 * i)) & 0xff);
		ok = ok && printable(chars[i]);
	}
	// drm_fourcc.h pads short codes with spaces ('R', '8', ' ', ' ' is R8).
	std::size_t n = 4;
	while (n > 1 && chars[n - 1] == ' ') --n;
	if (ok) return std::string(chars, n);
	char hex[11];
	std::snprintf(hex, sizeof hex, "0x%08x", code);
	return hex;
}

bool parse_format(std::string_view name, std::uint32_t &out) {
	// Exact spelling only: an unknown code whose characters are "nv12" must not read back as NV12.
	if (const core::FormatInfo *info = core::format_by_name(name); info != nullptr && info->name == name) {
		out = info->fourcc;
		return true;
	}
	if (!name.empty() && name.size() <= 4) {
		char c[4] = {' ', ' ', ' ', ' '};
		for (std::size_t i = 0; i < name.size(); ++i) {
			if (!printable(name[i])) return false;
			c[i] = name[i];
		}
		out = fourcc(c[0], c[1], c[2], c[3]);
		return true;
	}
	if (name.size() == 10 && name.starts_with("0x")) {
		std::uint32_t v = 0;
		for (char c : name.substr(2)) {
			int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
			if (d < 0) return false;
			v = v << 4 | static_cast<std::uint32_t>(d);
		}
		out = v;
		return true;
	}
	return false;
}

std::uint64_t monotonic_ns() {
	timespec ts{};
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

} // namespace pixelport::timing
