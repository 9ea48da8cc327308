// Percentiles and human-readable units shared by Summary and pixelport-compare.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace pixelport::timing {

// Nearest-rank percentile: the smallest value with at least p% of the values <= it, i.e.
// sorted[ceil(p/100 * n) - 1] (p = 0 gives the minimum). `sorted` must be ascending and
// non-empty; p in [0, 100]. For 1..100, p50 = 50, p95 = 95, p99 = 99.
template <typename T>
T percentile_sorted(std::span<const T> sorted, double p) {
	const std::size_t n = sorted.size();
	auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
	return sorted[std::clamp<std::size_t>(rank, 1, n) - 1];
}

struct Percentiles {
	std::size_t count = 0;
	std::uint64_t p50 = 0, p95 = 0, p99 = 0; // ns; all 0 when count == 0
};
// Sorts `values` in place and returns count, p50, p95, p99 (nearest rank).
Percentiles percentiles(std::vector<std::uint64_t> &values);

// "850 ns", "12.3 µs", "4.56 ms", "1.23 s": three significant digits.
std::string format_duration_ns(double ns);
// Power-of-two bucket containing `bytes` as "1-2 MiB", "512 KiB-1 MiB", "0 B" for 0.
std::string size_bucket_label(std::uint64_t bytes);
// Pads `s` with spaces to `width` terminal columns (UTF-8 code points, so "µs" is 2 wide),
// on the left (right-aligned) or the right. Longer strings are returned unchanged.
std::string pad(std::string_view s, std::size_t width, bool right_align);
// floor(log2(bytes)) + 1, 0 for 0: orders buckets by size.
unsigned size_bucket_index(std::uint64_t bytes);

} // namespace pixelport::timing
