#include "pixelport/timing/stats.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>

namespace pixelport::timing {

Percentiles percentiles(std::vector<std::uint64_t> &values) {
	Percentiles out;
	out.count = values.size();
	if (values.empty()) return out;
	std::sort(values.begin(), values.end());
	const std::span<const std::uint64_t> sorted(values);
	out.p50 = percentile_sorted(sorted, 50);
	out.p95 = percentile_sorted(sorted, 95);
	out.p99 = percentile_sorted(sorted, 99);
	return out;
}

std::string format_duration_ns(double ns) {
	static constexpr struct {
		double scale;
		const char *unit;
	} kUnits[] = {{1e9, "s"}, {1e6, "ms"}, {1e3, "µs"}, {1, "ns"}};
	for (const auto &u : kUnits) {
		if (std::fabs(ns) >= u.scale || u.scale == 1) {
			const double v = ns / u.scale;
			const int decimals = u.scale == 1 ? 0 : std::fabs(v) >= 100 ? 0 : std::fabs(v) >= 10 ? 1 : 2;
			char buf[32];
			std::snprintf(buf, sizeof buf, "%.*f %s", decimals, v, u.unit);
			return buf;
		}
	}
	return {};
}

std::string pad(std::string_view s, std::size_t width, bool right_align) {
	std::size_t columns = 0;
	for (char c : s) columns += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
	const std::string fill(columns < width ? width - columns : 0, ' ');
	return right_align ? fill + std::string(s) : std::string(s) + fill;
}

unsigned size_bucket_index(std::uint64_t bytes) { return static_cast<unsigned>(std::bit_width(bytes)); }

namespace {
std::string pow2_label(unsigned log2) {
	static constexpr const char *kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	return std::to_string(1ull << (log2 % 10)) + " " + kUnits[log2 / 10];
}
} // namespace

std::string size_bucket_label(std::uint64_t bytes) {
	if (bytes == 0) return "0 B";
	const unsigned lo = size_bucket_index(bytes) - 1; // [2^lo, 2^(lo+1))
	const unsigned hi = lo + 1;
	if (lo / 10 == hi / 10) { // same unit: "1-2 MiB"
		return std::to_string(1ull << (lo % 10)) + "-" + pow2_label(hi);
	}
	return pow2_label(lo) + "-" + pow2_label(hi); // "512 KiB-1 MiB"
}

} // namespace pixelport::timing
