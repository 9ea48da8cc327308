// pixelport-timing-client: exercises pixelport-timing-v1 from a client, the ways the timing
// tests need, and prints what arrived in one line (or "error CODE INTERFACE" for a protocol
// error, "ok" otherwise; test_timing.cpp and test_preload.cpp read them).
// Usage: pixelport-timing-client MODE
//
//   subscribe: version 1, one of two surfaces subscribed, three frames each: "info N done N
//     presented N ordered B".
//   subscribe-v2: the same at version 2: one report event per commit with every phase.
//   subscribe-v2-burst: 20 commits faster than the output: each reported once, in order.
//   subscribe-v3: version 3 beside version 2 on one surface: batched records equal to the
//     reports.
//   retitle: four frames, the title and app id changed after two (the timing log's labels).
//   foreign-subscribe: a subscription naming an object this client never created.
#include <drm_fourcc.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "client_modes.hpp"
#include "client_verdict.hpp"
#include "pixelport-timing-v1-client-protocol.h"
#include "transport.hpp"
#include "wayland_client.hpp"

using namespace pixelport;
using namespace pixelport::client;
using pixelport::test::ModeArgs;
using pixelport::test::ModeTable;
using pixelport::test::xrgb_frame;

namespace {

Connection conn;

int report() { return test::report(conn); }

// The timing global, bound through a registry of its own; null when the compositor lacks it.
// Bound at `version` (1: what old clients get; 2: one report event per commit).
pp_timing_manager_v1 *bind_timing_manager(uint32_t version = 1) {
	struct Bind {
		uint32_t version;
		pp_timing_manager_v1 *manager = nullptr;
	} bind{version};
	static const wl_registry_listener listener = {
		.global =
			[](void *data, wl_registry *registry, uint32_t name, const char *interface, uint32_t) {
				auto *b = static_cast<Bind *>(data);
				if (strcmp(interface, pp_timing_manager_v1_interface.name) == 0) {
					b->manager = static_cast<pp_timing_manager_v1 *>(wl_registry_bind(
						registry, name, &pp_timing_manager_v1_interface, b->version));
				}
			},
		.global_remove = [](void *, wl_registry *, uint32_t) {},
	};
	wl_registry *registry = wl_display_get_registry(conn.display);
	wl_registry_add_listener(registry, &listener, &bind);
	conn.roundtrip();
	return bind.manager;
}

// Two toplevels: a (64x64 over wl_shm) is larger than b (32x32 over the stream's socket),
// which lies on top of it: both stay visible.
struct TwoSurfaces {
	Window a, b;
	std::vector<uint8_t> pxa = xrgb_frame(64, 64, 1), pxb = xrgb_frame(32, 32, 2);
	std::unique_ptr<SurfaceWriter> wa, wb; // kept until the mode ends, as their buffers

	bool create() {
		std::string e;
		return a.create(&conn, "a", &e) && b.create(&conn, "b", &e);
	}

	// Three frames on each, each pair waited for; false after the verdict when one failed.
	bool show_three_frames() {
		std::string e;
		wa = std::make_unique<SurfaceWriter>(&conn, a.surface, TransportChoice::ShmReused);
		wb = std::make_unique<SurfaceWriter>(&conn, b.surface, TransportChoice::StreamSocket);
		Pixels pa = {DRM_FORMAT_XRGB8888, 64, 64, 256, pxa.data(), pxa.size()};
		Pixels pb = {DRM_FORMAT_XRGB8888, 32, 32, 128, pxb.data(), pxb.size()};
		for (int i = 0; i < 3; i++) {
			CommitWaiter w1, w2;
			w1.arm(&conn, a.surface);
			if (!wa->put(pa, nullptr, &e)) break;
			w2.arm(&conn, b.surface);
			if (!wb->put(pb, nullptr, &e)) break;
			if (!w1.wait(&conn, 5000) || !w2.wait(&conn, 5000)) {
				printf("frame %d not presented\n", i);
				break;
			}
			if (i == 2) return true;
		}
		report();
		return false;
	}
};

// ---- the modes: one function each, named after the mode ----

// Subscribes (version 1) to the timing of one of two surfaces and counts what arrives for each.
int mode_subscribe(const ModeArgs &) {
	pp_timing_manager_v1 *manager = bind_timing_manager(1);
	if (manager == nullptr) {
		printf("no timing global\n");
		return 0;
	}
	TwoSurfaces pair;
	if (!pair.create()) return 3;
	struct Seen {
		int info = 0, done = 0, presented = 0;
		uint64_t last_commit = 0;
		bool ordered = true;
	} seen;
	pp_surface_timing_v1 *sub = pp_timing_manager_v1_subscribe(manager, pair.a.surface);
	static const pp_surface_timing_v1_listener listener = {
		.info = [](void *data, pp_surface_timing_v1 *, uint32_t, uint32_t, uint32_t, int32_t, int32_t, uint32_t,
				uint32_t, uint32_t, uint32_t) { static_cast<Seen *>(data)->info++; },
		.timestamp =
			[](void *data, pp_surface_timing_v1 *, uint32_t, uint32_t phase, uint32_t hi, uint32_t lo,
				uint32_t nsec) {
				auto *s = static_cast<Seen *>(data);
				uint64_t ns = ((static_cast<uint64_t>(hi) << 32 | lo) * 1000000000u) + nsec;
				if (phase == PP_SURFACE_TIMING_V1_PHASE_COMMIT) {
					s->ordered = s->ordered && ns > s->last_commit;
					s->last_commit = ns;
				}
			},
		.done =
			[](void *data, pp_surface_timing_v1 *, uint32_t, uint32_t flags, const char *) {
				auto *s = static_cast<Seen *>(data);
				s->done++;
				s->presented += (flags & PP_SURFACE_TIMING_V1_FLAGS_PRESENTED) != 0;
			},
	};
	pp_surface_timing_v1_add_listener(sub, &listener, &seen);
	if (!pair.show_three_frames()) return 0;
	for (int i = 0; i < 50 && seen.done < 3; i++) conn.dispatch_timeout(100);
	printf("info %d done %d presented %d ordered %d\n", seen.info, seen.done, seen.presented, seen.ordered);
	return report();
}

// Version 2: the same commits, each in exactly one report event carrying every phase.
int mode_subscribe_v2(const ModeArgs &) {
	pp_timing_manager_v1 *manager = bind_timing_manager(2);
	if (manager == nullptr) {
		printf("no timing global\n");
		return 0;
	}
	TwoSurfaces pair;
	if (!pair.create()) return 3;
	struct Seen {
		int v1_events = 0, report = 0, presented = 0, phases_ordered = 0, times_size = 0;
		uint32_t last_seq = 0;
		uint64_t last_commit = 0;
		bool ordered = true;
		std::string output;
	} seen;
	pp_surface_timing_v1 *sub = pp_timing_manager_v1_subscribe(manager, pair.a.surface);
	static const pp_surface_timing_v1_listener listener = {
		.info = [](void *data, pp_surface_timing_v1 *, uint32_t, uint32_t, uint32_t, int32_t, int32_t, uint32_t,
				uint32_t, uint32_t, uint32_t) { static_cast<Seen *>(data)->v1_events++; },
		.timestamp = [](void *data, pp_surface_timing_v1 *, uint32_t, uint32_t, uint32_t, uint32_t,
				     uint32_t) { static_cast<Seen *>(data)->v1_events++; },
		.done = [](void *data, pp_surface_timing_v1 *, uint32_t, uint32_t,
				const char *) { static_cast<Seen *>(data)->v1_events++; },
		.report =
			[](void *data, pp_surface_timing_v1 *, uint32_t seq, uint32_t flags, wl_array *values,
				const char *output) {
				auto *s = static_cast<Seen *>(data);
				s->report++;
				s->times_size = static_cast<int>(values->size);
				uint64_t v[PP_SURFACE_TIMING_V1_VALUE_PHASE_COMMIT + 7] = {};
				memcpy(v, values->data, std::min(sizeof(v), values->size));
				const uint64_t *t = v + PP_SURFACE_TIMING_V1_VALUE_PHASE_COMMIT;
				s->ordered = s->ordered && seq > s->last_seq &&
					t[PP_SURFACE_TIMING_V1_PHASE_COMMIT] > s->last_commit;
				s->last_seq = seq;
				s->last_commit = t[PP_SURFACE_TIMING_V1_PHASE_COMMIT];
				// What the shm surface's commits carry: 64x64 XRGB8888, 16 KiB, uploaded, shown.
				bool presented = (flags & PP_SURFACE_TIMING_V1_FLAGS_PRESENTED) != 0;
				s->presented += presented;
				uint64_t transport = v[PP_SURFACE_TIMING_V1_VALUE_TRANSPORT];
				bool shape = (transport == PP_SURFACE_TIMING_V1_TRANSPORT_SHM ||
						     transport == PP_SURFACE_TIMING_V1_TRANSPORT_SHM_NEW_POOL) &&
					v[PP_SURFACE_TIMING_V1_VALUE_FORMAT] == DRM_FORMAT_XRGB8888 &&
					v[PP_SURFACE_TIMING_V1_VALUE_WIDTH] == 64 &&
					v[PP_SURFACE_TIMING_V1_VALUE_HEIGHT] == 64 &&
					v[PP_SURFACE_TIMING_V1_VALUE_BYTES] == 64 * 64 * 4 &&
					v[PP_SURFACE_TIMING_V1_VALUE_DAMAGE_BYTES] == 64 * 64 * 4;
				s->phases_ordered += shape && t[PP_SURFACE_TIMING_V1_PHASE_COMMIT] > 0 &&
					t[PP_SURFACE_TIMING_V1_PHASE_COMMIT] <=
						t[PP_SURFACE_TIMING_V1_PHASE_UPLOAD_START] &&
					t[PP_SURFACE_TIMING_V1_PHASE_UPLOAD_START] <=
						t[PP_SURFACE_TIMING_V1_PHASE_UPLOAD_END] &&
					(!presented ||
						t[PP_SURFACE_TIMING_V1_PHASE_UPLOAD_END] <=
							t[PP_SURFACE_TIMING_V1_PHASE_PRESENT]) &&
					t[PP_SURFACE_TIMING_V1_PHASE_CONVERT_START] == 0 &&
					t[PP_SURFACE_TIMING_V1_PHASE_DATA_COMPLETE] == 0;
				if (output != nullptr) s->output = output;
			},
	};
	pp_surface_timing_v1_add_listener(sub, &listener, &seen);
	if (!pair.show_three_frames()) return 0;
	for (int i = 0; i < 50 && seen.report < 3; i++) conn.dispatch_timeout(100);
	printf("report %d presented %d ordered %d checked %d values %d output %s v1 %d\n", seen.report, seen.presented,
		seen.ordered, seen.phases_ordered, seen.times_size, seen.output.c_str(), seen.v1_events);
	return report();
}

// Two frames as "first"/"one", two after xdg_toplevel.set_title "second" and set_app_id
// "two", each presented before the next (TimingLog: the log's labels follow).
int mode_retitle(const ModeArgs &) {
	Window a;
	std::string e;
	if (!a.create(&conn, "first", &e)) return 3;
	xdg_toplevel_set_app_id(a.toplevel, "one");
	auto px = xrgb_frame(64, 64, 1);
	SurfaceWriter w(&conn, a.surface, TransportChoice::ShmReused);
	Pixels p = {DRM_FORMAT_XRGB8888, 64, 64, 256, px.data(), px.size()};
	for (int i = 0; i < 4; i++) {
		if (i == 2) {
			xdg_toplevel_set_title(a.toplevel, "second");
			xdg_toplevel_set_app_id(a.toplevel, "two");
		}
		CommitWaiter shown;
		shown.arm(&conn, a.surface);
		if (!w.put(p, nullptr, &e)) return report();
		if (!shown.wait(&conn, 5000)) {
			printf("frame %d not presented\n", i);
			return report();
		}
	}
	printf("ok\n");
	return 0;
}

// Version 2, a burst of commits faster than the output: each commit reported exactly
// once, in order, the replaced ones as discarded.
int mode_subscribe_v2_burst(const ModeArgs &) {
	pp_timing_manager_v1 *manager = bind_timing_manager(2);
	if (manager == nullptr) {
		printf("no timing global\n");
		return 0;
	}
	Window a;
	std::string e;
	if (!a.create(&conn, "a", &e)) return 3;
	struct Seen {
		std::vector<uint32_t> seqs;
		int presented = 0, discarded = 0;
	} seen;
	pp_surface_timing_v1 *sub = pp_timing_manager_v1_subscribe(manager, a.surface);
	static const pp_surface_timing_v1_listener listener = {
		.info = [](void *, pp_surface_timing_v1 *, uint32_t, uint32_t, uint32_t, int32_t, int32_t, uint32_t,
				uint32_t, uint32_t, uint32_t) {},
		.timestamp = [](void *, pp_surface_timing_v1 *, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t) {},
		.done = [](void *, pp_surface_timing_v1 *, uint32_t, uint32_t, const char *) {},
		.report =
			[](void *data, pp_surface_timing_v1 *, uint32_t seq, uint32_t flags, wl_array *, const char *) {
				auto *s = static_cast<Seen *>(data);
				s->seqs.push_back(seq);
				(flags & PP_SURFACE_TIMING_V1_FLAGS_PRESENTED ? s->presented : s->discarded)++;
			},
	};
	pp_surface_timing_v1_add_listener(sub, &listener, &seen);
	auto px = xrgb_frame(64, 64, 1);
	SurfaceWriter w(&conn, a.surface, TransportChoice::ShmReused);
	Pixels p = {DRM_FORMAT_XRGB8888, 64, 64, 256, px.data(), px.size()};
	constexpr int kCommits = 20;
	CommitWaiter last;
	for (int i = 0; i < kCommits; i++) {
		if (i == kCommits - 1) last.arm(&conn, a.surface);
		if (!w.put(p, nullptr, &e)) return report();
	}
	if (!last.wait(&conn, 5000)) {
		printf("last frame not presented\n");
		return report();
	}
	for (int i = 0; i < 50 && seen.seqs.size() < kCommits; i++) conn.dispatch_timeout(100);
	bool ordered = seen.seqs.size() == kCommits;
	for (size_t i = 1; i < seen.seqs.size(); i++) ordered = ordered && seen.seqs[i] == seen.seqs[i - 1] + 1;
	printf("reports %zu ordered %d last presented %d some discarded %d\n", seen.seqs.size(), ordered,
		seen.presented >= 1, seen.discarded >= 1);
	return report();
}

// Version 3 next to version 2 on the same surface: a burst of 40 commits (more than the
// 28 records one reports event holds), then one more. Every v3 record must equal the v2
// report of the same commit; after the burst a flush brings every finished record at
// once, the last commit's record comes by itself (the batch timer).
int mode_subscribe_v3(const ModeArgs &) {
	pp_timing_manager_v1 *m3 = bind_timing_manager(3), *m2 = bind_timing_manager(2);
	if (m3 == nullptr || m2 == nullptr) {
		printf("no timing global\n");
		return 0;
	}
	Window a;
	std::string e;
	if (!a.create(&conn, "a", &e)) return 3;
	struct Seen {
		std::map<uint32_t, std::vector<uint64_t>> v2; // seq -> flags, output?, values
		std::vector<uint32_t> seqs;
		std::vector<std::string> outputs;
		int events = 0, equal = 0, max_per_event = 0, other = 0, presented = 0;
		uint32_t stride = 0;
		std::string output;
	} seen;
	pp_surface_timing_v1 *sub2 = pp_timing_manager_v1_subscribe(m2, a.surface);
	pp_surface_timing_v1 *sub3 = pp_timing_manager_v1_subscribe(m3, a.surface);
	static const pp_surface_timing_v1_listener l2 = {
		.info = [](void *, pp_surface_timing_v1 *, uint32_t, uint32_t, uint32_t, int32_t, int32_t, uint32_t,
				uint32_t, uint32_t, uint32_t) {},
		.timestamp = [](void *, pp_surface_timing_v1 *, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t) {},
		.done = [](void *, pp_surface_timing_v1 *, uint32_t, uint32_t, const char *) {},
		.report =
			[](void *data, pp_surface_timing_v1 *, uint32_t seq, uint32_t flags, wl_array *values,
				const char *output) {
				auto *s = static_cast<Seen *>(data);
				std::vector<uint64_t> r = {flags};
				const auto *v = static_cast<const uint64_t *>(values->data);
				r.insert(r.end(), v, v + values->size / sizeof(uint64_t));
				s->v2[seq] = r;
				if (output != nullptr) s->output = output;
			},
	};
	static const pp_surface_timing_v1_listener l3 = {
		.info = [](void *data, pp_surface_timing_v1 *, uint32_t, uint32_t, uint32_t, int32_t, int32_t, uint32_t,
				uint32_t, uint32_t, uint32_t) { static_cast<Seen *>(data)->other++; },
		.timestamp = [](void *data, pp_surface_timing_v1 *, uint32_t, uint32_t, uint32_t, uint32_t,
				     uint32_t) { static_cast<Seen *>(data)->other++; },
		.done = [](void *data, pp_surface_timing_v1 *, uint32_t, uint32_t,
				const char *) { static_cast<Seen *>(data)->other++; },
		.report = [](void *data, pp_surface_timing_v1 *, uint32_t, uint32_t, wl_array *,
				  const char *) { static_cast<Seen *>(data)->other++; },
		.output_name =
			[](void *data, pp_surface_timing_v1 *, uint32_t id, const char *name) {
				auto *s = static_cast<Seen *>(data);
				if (id == s->outputs.size() + 1) s->outputs.push_back(name);
			},
		.reports =
			[](void *data, pp_surface_timing_v1 *, uint32_t stride, wl_array *records) {
				auto *s = static_cast<Seen *>(data);
				s->events++;
				s->stride = stride;
				const auto *r = static_cast<const uint64_t *>(records->data);
				size_t n = records->size / (stride * sizeof(uint64_t));
				s->max_per_event = std::max(s->max_per_event, static_cast<int>(n));
				for (size_t i = 0; i < n; i++, r += stride) {
					uint32_t seq = static_cast<uint32_t>(r[PP_SURFACE_TIMING_V1_RECORD_SEQ]);
					s->seqs.push_back(seq);
					uint64_t flags = r[PP_SURFACE_TIMING_V1_RECORD_FLAGS];
					s->presented += (flags & PP_SURFACE_TIMING_V1_FLAGS_PRESENTED) != 0;
					// The v2 report of this commit came first (subscribed first).
					auto it = s->v2.find(seq);
					std::vector<uint64_t> mine = {flags};
					mine.insert(mine.end(), r + PP_SURFACE_TIMING_V1_RECORD_VALUE_TRANSPORT,
						r + stride);
					uint64_t id = r[PP_SURFACE_TIMING_V1_RECORD_OUTPUT];
					bool output_ok = (flags & PP_SURFACE_TIMING_V1_FLAGS_PRESENTED)
						? id >= 1 && id <= s->outputs.size() && s->outputs[id - 1] == s->output
						: id == 0;
					s->equal += it != s->v2.end() && it->second == mine && output_ok;
				}
			},
	};
	pp_surface_timing_v1_add_listener(sub2, &l2, &seen);
	pp_surface_timing_v1_add_listener(sub3, &l3, &seen);
	auto px = xrgb_frame(64, 64, 1);
	SurfaceWriter w(&conn, a.surface, TransportChoice::ShmReused);
	Pixels p = {DRM_FORMAT_XRGB8888, 64, 64, 256, px.data(), px.size()};
	constexpr int kBurst = 40;
	CommitWaiter last;
	for (int i = 0; i < kBurst; i++) {
		if (i == kBurst - 1) last.arm(&conn, a.surface);
		if (!w.put(p, nullptr, &e)) return report();
	}
	if (!last.wait(&conn, 5000)) {
		printf("last frame not presented\n");
		return report();
	}
	pp_surface_timing_v1_flush(sub3);
	conn.roundtrip();
	size_t after_flush = seen.seqs.size();
	CommitWaiter one;
	one.arm(&conn, a.surface);
	if (!w.put(p, nullptr, &e) || !one.wait(&conn, 5000)) return report();
	for (int i = 0; i < 50 && seen.seqs.size() < kBurst + 1; i++) conn.dispatch_timeout(100);
	bool ordered = true;
	for (size_t i = 1; i < seen.seqs.size(); i++) ordered = ordered && seen.seqs[i] == seen.seqs[i - 1] + 1;
	printf("flushed %zu records %zu batched %d max<=28 %d stride %u ordered %d equal %d "
	       "presented>=2 %d "
	       "outputs %zu other %d\n",
		after_flush, seen.seqs.size(), seen.events < static_cast<int>(seen.seqs.size()),
		seen.max_per_event <= 28, seen.stride, ordered, seen.equal, seen.presented >= 2, seen.outputs.size(),
		seen.other);
	return report();
}

// Names, as a surface, an object this client never created: object ids are per client,
// so another client's surface cannot be named at all, and libwayland says so.
int mode_foreign_subscribe(const ModeArgs &) {
	pp_timing_manager_v1 *manager = bind_timing_manager();
	if (manager == nullptr) return 3;
	// A proxy with a fresh id that the server never heard of.
	auto *stranger = reinterpret_cast<wl_surface *>(
		wl_proxy_create(reinterpret_cast<wl_proxy *>(conn.compositor), &wl_surface_interface));
	pp_timing_manager_v1_subscribe(manager, stranger);
	return report();
}

const ModeTable kModes = {
	{"subscribe", mode_subscribe},
	{"subscribe-v2", mode_subscribe_v2},
	{"retitle", mode_retitle},
	{"subscribe-v2-burst", mode_subscribe_v2_burst},
	{"subscribe-v3", mode_subscribe_v3},
	{"foreign-subscribe", mode_foreign_subscribe},
};

// As pixelport-stream-client's modes did: the compositor must serve the stream too (two
// modes show a surface over it).
bool connect(const std::string &, const ModeArgs &, std::string *error) {
	if (!conn.connect(error)) return false;
	if (conn.stream_manager == nullptr) *error = "no pixelport stream global";
	return conn.stream_manager != nullptr;
}

} // namespace

int main(int argc, char *argv[]) { return test::run_mode(argc, argv, kModes, connect); }
