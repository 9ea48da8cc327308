#include "measure.hpp"

#include <algorithm>
#include <cstring>

#include "pixelport/core/format.hpp"
#include "verify.hpp"

using namespace pixelport::client;
using TPhase = pixelport::timing::Phase;

namespace pixelport::sweep {

namespace {

// Client-side spans in ns; -1 = no value (a time absent, or the end before the start).
int64_t diff(uint64_t end, uint64_t start) {
	return end != 0 && start != 0 && end >= start ? static_cast<int64_t>(end - start) : -1;
}

// Checks what the output shows against what was sent (verify.hpp) into p->pixels.
void verify_point(const Options &o, const Content &c, Point *p) {
	Shot shot;
	std::string error;
	if (!capture_screen(o.verify_display, o.timeout_ms, &shot, &error)) {
		p->pixels = "unverified";
		p->pixels_note = error;
		return;
	}
	const int vw = std::min(c.width, shot.width), vh = std::min(c.height, shot.height);
	std::vector<uint32_t> want;
	if (!reference_argb(c.drm, c.width, c.height, c.stride, c.bytes.data(), c.bytes.size(), vw, vh, &want)) {
		p->pixels = "unverified";
		p->pixels_note = "no reference decoder for " + p->format;
		return;
	}
	if (o.test_wrong_reference) {
		for (uint32_t &v : want) v ^= 0x00ffffff;
	}
	PixelCheck r = check_pixels(want, vw, vh, shot);
	p->pixels = r.status;
	p->pixels_note = r.note;
}

// The releases the writer read since the last call, into their samples' release phase. `starts`
// (each sample's PutTiming::start) ascends: CLOCK_MONOTONIC.
void take_releases(SurfaceWriter &writer, const std::vector<uint64_t> &starts, Point *p) {
	for (const SurfaceWriter::Release &r : writer.take_releases()) {
		auto at = std::lower_bound(starts.begin(), starts.end(), r.put_start);
		if (at != starts.end() && *at == r.put_start)
			p->samples[static_cast<size_t>(at - starts.begin())][kRelease] = diff(r.released, r.put_start);
	}
}

} // namespace

bool run_point(Connection &conn, TimingClient &timing, const Options &o, const Content &c, TransportChoice t, Point *p,
	bool verify, const std::string &tag) {
	std::string error;
	Window win;
	// "pixelport-sweep shm NV12 640x480" ("shm@waypipe-lz4" under a peer): the timing log's
	// title field then tells runs and transports apart (scripts/demo splits the log by it).
	std::string title = "pixelport-sweep " + p->transport + (o.source.empty() ? "" : "@" + o.source) + " " +
		p->format + " " + std::to_string(c.width) + "x" + std::to_string(c.height) + tag;
	if (!win.create(&conn, title.c_str(), &error)) {
		p->note = error;
		return false;
	}
	// The frames are encoded with libyuv's BT.601 limited range (image.cpp): say so, where the
	// compositor can hear it (otherwise it reads them its own way: pixelport takes BT.709 above
	// 576 lines, and the pixel check below then sees it). RGB formats carry no such state.
	const core::FormatInfo *info = core::format_info(c.drm);
	if (info != nullptr && info->model == core::ColorModel::YUV) {
		win.declare_color(WP_COLOR_REPRESENTATION_SURFACE_V1_COEFFICIENTS_BT601,
			WP_COLOR_REPRESENTATION_SURFACE_V1_RANGE_LIMITED);
	}
	timing.subscribe(win.surface);
	std::vector<uint8_t> frame(c.bytes.size());
	Pixels px = {c.drm, c.width, c.height, c.stride, frame.data(), frame.size()};
	bool alive = true;
	{
		SurfaceWriter writer(&conn, win.surface, t);
		uint64_t measure_start = 0, last_frame_ns = 0;
		std::vector<uint64_t> starts; // each sample's PutTiming::start, for its release
		for (int i = 0; i < o.warmup + o.frames; i++) {
			bool measuring = i >= o.warmup;
			if (measuring && measure_start == 0) measure_start = now_ns();
			int measured = i - o.warmup;
			if (measuring && measured >= o.min_frames &&
				static_cast<double>(now_ns() - measure_start) / 1e9 > o.point_seconds) {
				break;
			}
			// vmsplice'd pages may still be in the pipe: never rewrite them before they are read.
			if (!writer.wait_consumed(o.timeout_ms)) {
				p->note = "stream writes not consumed within " + std::to_string(o.timeout_ms) + " ms";
				break;
			}
			uint64_t f0 = now_ns();
			memcpy(frame.data(), c.bytes.data(), frame.size());
			uint64_t f1 = now_ns();
			CommitWaiter waiter;
			waiter.arm(&conn, win.surface, true);
			if (!writer.put(px, nullptr, &error, o.timeout_ms)) {
				p->note = error;
				alive = wl_display_get_error(conn.display) == 0;
				break;
			}
			PutTiming pt = writer.timing();
			if (!waiter.wait(&conn, o.timeout_ms)) {
				alive = wl_display_get_error(conn.display) == 0;
				p->note = alive ? "frame not presented within " + std::to_string(o.timeout_ms) + " ms"
						: "connection lost: " + conn.error_text();
				break;
			}
			CommitTiming ct;
			bool have =
				timing.available() && timing.wait_commit(pt.start, std::min(o.timeout_ms, 2000), &ct);
			if (!measuring) continue;
			Sample s;
			s.fill(-1);
			s[kFill] = static_cast<int64_t>(f1 - f0);
			s[kSubmit] = diff(pt.sent, pt.start);
			s[kLatency] = waiter.present_ns ? diff(waiter.present_ns, pt.start) : -1;
			s[kFrame] = waiter.frame_ns ? diff(waiter.frame_ns, pt.start) : -1;
			s[kFrameInterval] =
				waiter.frame_ns && last_frame_ns ? diff(waiter.frame_ns, last_frame_ns) : -1;
			last_frame_ns = waiter.frame_ns;
			starts.push_back(pt.start);
			if (have) {
				// The phases as the timing core defines them (disjoint: docs/timing.md, "Nesting").
				const timing::PhaseDurations d = ct.phases();
				auto ns = [&](TPhase ph) {
					const auto &v = d[static_cast<size_t>(ph)];
					return v ? static_cast<int64_t>(*v) : int64_t{-1};
				};
				s[kTransfer] = ns(TPhase::Transfer);
				s[kConvert] = ns(TPhase::Convert);
				s[kUpload] = ns(TPhase::Upload);
				s[kPresent] = ns(TPhase::Present);
				// Until the last of: the client's send, the compositor's last stream byte, its
				// conversion and its upload. Ends, not sums: the phases overlap (the stream's
				// reads run during the writes and convert as rows arrive; an shm upload may
				// contain the conversion).
				uint64_t end = std::max(
					{pt.sent, ct.phase(PP_SURFACE_TIMING_V1_PHASE_DATA_COMPLETE), ct.ready()});
				s[kCost] = static_cast<int64_t>(end - pt.start);
				p->compositor_timing = true;
			} else {
				s[kCost] = s[kSubmit];
			}
			p->samples.push_back(s);
			// Each frame: the writer keeps only the latest releases for a caller that never takes them.
			take_releases(writer, starts, p);
		}
		take_releases(writer, starts, p);
		// A buffer still shown at the end (the last frame's, and where the compositor keeps the
		// previous one until the next commit, that one's) has no release.
	}
	if (verify && alive && p->measured()) verify_point(o, c, p);
	timing.unsubscribe();
	win.destroy();
	if (alive && !conn.roundtrip()) alive = false;
	if (!alive && p->note.empty()) p->note = "connection lost: " + conn.error_text();
	return alive;
}

} // namespace pixelport::sweep
