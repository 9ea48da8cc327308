// pixelport-timing-attack: a client that makes the compositor keep many pixelport-timing-v1
// objects, or many short-lived surfaces while the timing log runs, to check that what it made
// costs the others nothing and goes with it. Verdicts on stdout, one per line.
// Usage: pixelport-timing-attack MODE [ARGS]
//   subscribe N COMMITS low-ids|high-ids exit|hold [v2]
//       N subscriptions (version 3, or 2) on one surface without a role, then COMMITS commits of a
//       1x1 buffer. low-ids: the subscriptions get lower ids than the surface (libwayland
//       destroys a gone client's objects in id order: they go before the surface). Prints
//       "subscribed N" (or the error), then exits at once or prints "holding" and waits for
//       SIGKILL.
//   regions N
//       the same layout with wl_region objects in place of the subscriptions (stock wlroots
//       objects, for comparison with --no-plugin), then exits.
//   over-cap      subscribes 1024 times (the default cap; must work), then once more: report()
//   cap-reuse     1024 subscriptions, 512 destroyed, 512 more: report() ("ok")
//   surfaces FIRST SECOND
//       FIRST roleless surfaces, each with two commits of a 1x1 buffer and destroyed, paced;
//       prints "surfaces FIRST", waits for SIGUSR1, then SECOND more and "surfaces TOTAL",
//       then exits.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "client_verdict.hpp"
#include "timing_client.hpp"
#include "wayland_client.hpp"

using namespace pixelport;
using namespace pixelport::client;

extern "C" void __lsan_disable(void) __attribute__((weak));

namespace {

Connection conn;

// A roundtrip every this many requests: libwayland's client buffer is bounded (4 KiB by default
// in 1.23) and a compositor busy with the previous ones must not make it overflow.
constexpr int kRequestsPerRoundtrip = 512;

bool roundtrip_or_report() {
	if (conn.roundtrip()) return true;
	test::report(conn);
	return false;
}

struct Pixel {
	ShmPool pool;
	wl_buffer *buffer = nullptr;
	bool create() {
		std::string error;
		if (!pool.create(&conn, 4, &error)) {
			fprintf(stderr, "%s\n", error.c_str());
			return false;
		}
		buffer = wl_shm_pool_create_buffer(pool.pool, 0, 1, 1, 4, WL_SHM_FORMAT_XRGB8888);
		return buffer != nullptr;
	}
};

void commit_pixel(wl_surface *surface, wl_buffer *buffer) {
	wl_surface_attach(surface, buffer, 0, 0);
	wl_surface_damage_buffer(surface, 0, 0, 1, 1);
	wl_surface_commit(surface);
}

int subscribe_mode(pp_timing_manager_v1 *manager, long n, long commits, bool low_ids, bool hold) {
	std::vector<wl_region *> spacers;
	if (low_ids) {
		// Ids the subscriptions take again below the surface's (the client's id map reuses
		// freed ids, the most recently freed first); a few spare, see below.
		for (long i = 0; i < n + 64; i++) {
			spacers.push_back(wl_compositor_create_region(conn.compositor));
			if ((i + 1) % kRequestsPerRoundtrip == 0 && !roundtrip_or_report()) return 0;
		}
	}
	wl_surface *surface = wl_compositor_create_surface(conn.compositor);
	for (size_t i = 0; i < spacers.size(); i++) {
		wl_region_destroy(spacers[i]);
		if ((i + 1) % kRequestsPerRoundtrip == 0 && !roundtrip_or_report()) return 0;
	}
	if (!roundtrip_or_report()) return 0; // delete_id frees the ids
	uint32_t surface_id = wl_proxy_get_id(reinterpret_cast<wl_proxy *>(surface));
	// The first roundtrip's callback took a new id above the surface's, and the later ones
	// took it again: it is freed last. Regions keep it (and a spare id or two) from the
	// subscriptions.
	for (int i = 0; low_ids && i < 4; i++) {
		auto *plug = reinterpret_cast<wl_proxy *>(wl_compositor_create_region(conn.compositor));
		if (wl_proxy_get_id(plug) > surface_id) i = 0;
	}
	uint32_t below = 0;
	for (long i = 0; i < n; i++) {
		auto *sub = manager != nullptr
			? reinterpret_cast<wl_proxy *>(pp_timing_manager_v1_subscribe(manager, surface))
			: reinterpret_cast<wl_proxy *>(wl_compositor_create_region(conn.compositor));
		if (wl_proxy_get_id(sub) < surface_id) below++;
		if ((i + 1) % kRequestsPerRoundtrip == 0 && !roundtrip_or_report()) return 0;
	}
	if (!roundtrip_or_report()) return 0;
	Pixel pixel;
	if (!pixel.create()) return 3;
	for (long i = 0; i < commits; i++) commit_pixel(surface, pixel.buffer);
	if (!roundtrip_or_report()) return 0;
	printf("subscribed %ld below_surface %u\n", n, below);
	fflush(stdout);
	if (!hold) _exit(0); // no clean-up: the compositor tears it all down
	test::hold(conn);
	return 0;
}

volatile sig_atomic_t got_usr1 = 0;

// Roleless surfaces with two commits each, destroyed; paced by a roundtrip every 64 surfaces
// and a pause, so the log writer (which polls every 10 ms) keeps up with the records.
bool churn_surfaces(const Pixel &pixel, long count) {
	for (long i = 0; i < count; i++) {
		wl_surface *surface = wl_compositor_create_surface(conn.compositor);
		commit_pixel(surface, pixel.buffer);
		commit_pixel(surface, pixel.buffer);
		wl_surface_destroy(surface);
		if ((i + 1) % 64 == 0) {
			if (!roundtrip_or_report()) return false;
			usleep(4000); // the pace: the writer polls every 10 ms
		}
	}
	return roundtrip_or_report();
}

int surfaces_mode(long first, long second) {
	Pixel pixel;
	if (!pixel.create()) return 3;
	if (!churn_surfaces(pixel, first)) return 0;
	printf("surfaces %ld\n", first);
	fflush(stdout);
	signal(SIGUSR1, [](int) { got_usr1 = 1; });
	while (!got_usr1) {
		if (!conn.dispatch_timeout(10) && wl_display_get_error(conn.display) != 0) return test::report(conn);
	}
	if (!churn_surfaces(pixel, second)) return 0;
	printf("surfaces %ld\n", first + second);
	fflush(stdout);
	return 0;
}

} // namespace

int main(int argc, char *argv[]) {
	if (__lsan_disable != nullptr) __lsan_disable();
	if (argc < 2) {
		fprintf(stderr, "usage: %s MODE [ARGS]\n", argv[0]);
		return 2;
	}
	std::string error;
	if (!conn.connect(&error)) {
		fprintf(stderr, "%s\n", error.c_str());
		return 1;
	}
	const std::string mode = argv[1];
	if (mode == "surfaces" && argc == 4) return surfaces_mode(atol(argv[2]), atol(argv[3]));
	if (mode == "regions" && argc == 3) return subscribe_mode(nullptr, atol(argv[2]), 0, true, false);

	const bool v2 = argc == 7 && strcmp(argv[6], "v2") == 0;
	TimingClient timing(&conn, 0, !v2);
	if (!timing.available()) {
		fprintf(stderr, "no pp_timing_manager_v1\n");
		return 3;
	}
	pp_timing_manager_v1 *manager = timing.manager_;
	if (mode == "subscribe" && (argc == 6 || v2)) {
		return subscribe_mode(manager, atol(argv[2]), atol(argv[3]), strcmp(argv[4], "low-ids") == 0,
			strcmp(argv[5], "hold") == 0);
	}
	if (mode == "over-cap" || mode == "cap-reuse") {
		wl_surface *surface = wl_compositor_create_surface(conn.compositor);
		std::vector<pp_surface_timing_v1 *> subs;
		for (int i = 0; i < 1024; i++) {
			subs.push_back(pp_timing_manager_v1_subscribe(manager, surface));
			if ((i + 1) % kRequestsPerRoundtrip == 0 && !roundtrip_or_report()) return 0;
		}
		if (!roundtrip_or_report()) return 0; // 1024 are within the cap
		if (mode == "over-cap") {
			pp_timing_manager_v1_subscribe(manager, surface);
			return test::report(conn);
		}
		for (int i = 0; i < 512; i++) pp_surface_timing_v1_destroy(subs[i]);
		for (int i = 0; i < 512; i++) pp_timing_manager_v1_subscribe(manager, surface);
		return test::report(conn);
	}
	fprintf(stderr, "unknown mode or arguments: %s\n", mode.c_str());
	return 2;
}
