#include "points.hpp"

#include <algorithm>

#include "measure.hpp"
#include "progress.hpp"

using namespace pixelport::client;

namespace pixelport::sweep {

bool measure_points(Connection &conn, TimingClient &timing, const Options &o, const Plan &plan, const Source &src,
	std::vector<Point> *points_out) {
	const auto &[transport_names, transports, format_names, formats, sizes, size_args] = plan;
	std::vector<Point> &points = *points_out;
	Progress progress;
	progress.total = static_cast<int>(formats.size() * sizes.size() * transports.size());
	bool alive = true;
	for (size_t fi = 0; fi < formats.size() && alive; fi++) {
		uint32_t f = formats[fi];
		for (const SizeSpec &s : sizes) {
			if (!alive) break;
			int w = s.width, h = s.height;
			if (w == 0) shape_for(f, s.bytes, &w, &h);
			Content c;
			c.drm = f;
			c.width = w;
			c.height = h;
			make_frame(src.path.empty() ? nullptr : &src.img, f, w, h, o.seed, &c.bytes, &c.stride,
				&c.pattern);
			for (size_t ti = 0; ti < transports.size(); ti++) {
				Point p;
				p.format = format_names[fi];
				p.transport = transport_names[ti];
				p.width = w;
				p.height = h;
				p.bytes = c.bytes.size();
				p.content = c.pattern ? "pattern" : "image";
				TransportChoice t = transports[ti];
				bool stream = t == TransportChoice::StreamSocket || t == TransportChoice::StreamPipe;
				if (stream && conn.stream_manager == nullptr) {
					p.note = "no pixelport stream in this compositor (no plugin?)";
				} else if (stream &&
					std::find(conn.stream_formats.begin(), conn.stream_formats.end(), f) ==
						conn.stream_formats.end()) {
					p.note = "the stream does not take " + p.format;
				} else if (stream && conn.stream_max_buffer_bytes &&
					std::max<uint64_t>(
						p.bytes, static_cast<uint64_t>(w) * static_cast<uint64_t>(h) * 4) >
						conn.stream_max_buffer_bytes) {
					// The limit counts the buffer's storage: 4 bytes a pixel for what it converts.
					p.note = "over the stream's buffer limit (" +
						human_bytes(conn.stream_max_buffer_bytes) + ")";
				} else if (!stream && !conn.has_shm_format(drm_to_shm(f))) {
					p.note = "wl_shm does not advertise " + p.format;
				} else {
					alive = run_point(conn, timing, o, c, t, &p);
				}
				std::string label =
					p.format + " " + p.transport + " " + human_bytes(static_cast<double>(p.bytes));
				timing::Percentiles cs = p.stats(kCost);
				progress.step(label,
					p.measured() ? "median cost " +
							timing::format_duration_ns(static_cast<double>(cs.p50)) + " (" +
							std::to_string(cs.count) + " frames)" +
							(p.note.empty() ? "" : "; " + p.note)
						     : "skipped: " + p.note);
				points.push_back(std::move(p));
				if (!alive) break;
			}
		}
	}
	return alive;
}

} // namespace pixelport::sweep
