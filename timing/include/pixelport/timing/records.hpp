// Plain-data timing records that the compositor glue fills and LogWriter::push() copies.
//
// Units: timestamps are CLOCK_MONOTONIC nanoseconds (0 = absent), sizes are bytes, width and
// height are pixels. Strings are fixed-size inline arrays (FixedString) rather than std::string
// so that copying a record into the queue never allocates on the compositor's hot path; longer
// strings are truncated (on a UTF-8 character boundary) — they only label surfaces.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

namespace pixelport::timing {

// NUL-terminated inline string of at most N-1 bytes; trivially copyable.
template <std::size_t N>
struct FixedString {
	static_assert(N >= 2);
	char data[N] = {};

	FixedString() = default;
	FixedString(std::string_view s) { assign(s); } // NOLINT: implicit on purpose, records read naturally

	FixedString &operator=(std::string_view s) {
		assign(s);
		return *this;
	}

	// Copies s, truncated to N-1 bytes without splitting a UTF-8 sequence.
	void assign(std::string_view s) {
		std::size_t n = s.size() < N - 1 ? s.size() : N - 1;
		if (n < s.size()) {
			// Step back over continuation bytes (10xxxxxx) so the cut lands before a lead byte.
			while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
		}
		std::memcpy(data, s.data(), n);
		data[n] = '\0';
	}
	std::string_view view() const { return {data, std::strlen(data)}; }
	bool empty() const { return data[0] == '\0'; }
	static constexpr std::size_t capacity() { return N - 1; }
	friend bool operator==(const FixedString &a, const FixedString &b) { return a.view() == b.view(); }
};

// How the client's pixels reached the compositor.
enum class Transport : std::uint8_t {
	Unknown,
	ShmReused, // wl_shm buffer from a pool that was already mapped
	ShmNewPool, // wl_shm buffer from a pool mapped for this commit
	Stream, // pixelport stream transport (has t_data_complete)
};

// CommitSample::fifo bits.
inline constexpr std::uint8_t kFifoSetBarrier = 1;
inline constexpr std::uint8_t kFifoWaitBarrier = 2;

// What the compositor records of one wl_surface commit on its hot path: every field of the
// commit's record but its surface's labels. Those change rarely and reach the log apart
// (SurfaceLabels), so the compositor clears and copies about half the bytes per commit.
struct CommitSample {
	std::uint64_t surface_id = 0; // compositor-unique, stable for the surface's life
	std::uint64_t seq = 0; // per-surface commit sequence number
	Transport transport = Transport::Unknown;
	std::uint8_t fifo = 0; // wp_fifo_v1 requests the commit carried: kFifoSetBarrier | kFifoWaitBarrier
	std::uint32_t format = 0; // DRM fourcc
	std::int32_t width = 0; // pixels
	std::int32_t height = 0; // pixels
	std::uint64_t bytes = 0; // whole buffer size
	std::uint64_t damage_bytes = 0;
	// CLOCK_MONOTONIC ns; 0 = absent.
	std::uint64_t t_commit = 0;
	std::uint64_t t_data_complete = 0; // stream only: last byte received
	std::uint64_t t_convert_start = 0;
	std::uint64_t t_convert_end = 0;
	std::uint64_t t_upload_start = 0;
	std::uint64_t t_upload_end = 0;
	std::uint64_t t_present = 0;
	// Frame pacing: the target time the client gave the commit (wp_commit_timer_v1), CLOCK_MONOTONIC
	// ns, 0 = none; and how long it waited for a fifo barrier (wp_fifo_v1) once every older commit
	// of its surface had applied, ns, 0 = not at all.
	std::uint64_t t_target = 0;
	std::uint64_t barrier_wait = 0;
	FixedString<32> output; // output the commit was presented on; empty = absent
	bool discarded = false; // replaced by a newer commit before it was shown
};

// The labels of a surface's records: its client and, for an xdg toplevel, app_id and title.
struct SurfaceLabels {
	std::uint64_t surface_id = 0;
	std::int32_t pid = 0; // client pid, 0 if unknown
	FixedString<64> app_id;
	FixedString<96> title;
	bool gone = false; // the surface is destroyed: its labels are forgotten (LogWriter)
};

// One wl_surface commit, from commit to on-screen: the sample and its surface's labels.
struct CommitRecord : CommitSample {
	std::int32_t pid = 0; // client pid, 0 if unknown
	FixedString<64> app_id;
	FixedString<96> title;
};

// One output frame (render pass + page flip).
struct FrameRecord {
	FixedString<32> output;
	std::uint64_t seq = 0;
	std::uint64_t t_render_start = 0; // CLOCK_MONOTONIC ns; 0 = absent
	std::uint64_t t_render_end = 0;
	std::uint64_t t_present = 0;
	std::uint64_t refresh_ns = 0; // output refresh period, 0 = unknown
	bool missed = false; // the frame missed its vblank
};

// push() copies records into the queue by plain assignment; keep them free of owned memory.
static_assert(std::is_trivially_copyable_v<CommitRecord>);
static_assert(std::is_trivially_copyable_v<CommitSample>);
static_assert(std::is_trivially_copyable_v<SurfaceLabels>);
static_assert(std::is_trivially_copyable_v<FrameRecord>);

// null (as nullptr), "set", "wait", "set+wait": CommitSample::fifo as JSON Lines spell it.
const char *fifo_name(std::uint8_t fifo);
// Inverse of fifo_name() (null: 0); false for other text.
bool parse_fifo(std::string_view name, std::uint8_t &out);

// "shm", "shm-new", "stream", "unknown" (the JSONL spelling, the same as the clients' options).
std::string_view transport_name(Transport t);
// Inverse of transport_name(), also taking "shm-new-pool" (older logs); false for other names.
bool parse_transport(std::string_view name, Transport &out);

// DRM fourcc name without the DRM_FORMAT_ prefix ("XRGB8888", "NV12"), from the core's table
// (pixelport/core/format.hpp). Other codes decode to their four characters, or "0x%08x" when
// those are not printable.
std::string format_name(std::uint32_t fourcc);
// Inverse of format_name(); false for a name it cannot map back.
bool parse_format(std::string_view name, std::uint32_t &out);

constexpr std::uint32_t fourcc(char a, char b, char c, char d) {
	return static_cast<std::uint32_t>(static_cast<unsigned char>(a)) |
		static_cast<std::uint32_t>(static_cast<unsigned char>(b)) << 8 |
		static_cast<std::uint32_t>(static_cast<unsigned char>(c)) << 16 |
		static_cast<std::uint32_t>(static_cast<unsigned char>(d)) << 24;
}

// CLOCK_MONOTONIC now, in ns.
std::uint64_t monotonic_ns();

} // namespace pixelport::timing
