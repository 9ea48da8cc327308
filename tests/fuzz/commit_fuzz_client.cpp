// pixelport-commit-fuzz: random sequences of requests a client may legally send, and what the
// screen shows for them (tests/fuzz/README.md, "The commit fuzzer").
//
// Surfaces are xdg toplevels, wl_subsurfaces (sync and desync) or roleless; each shows its
// buffer through a wp_viewport as a kSide x kSide block: toplevels at the output's origin (slot
// 0, the newest mapped one on top), every other surface in a slot of its own (its subsurface
// position is chosen so), so whatever the buffer sizes (16x16 to 1600x1200), one slot shows at
// most one surface. Every commit of a buffer writes a new solid colour (or re-commits a released
// buffer unchanged). Checks: a screenshot at random points (each slot shows, at every sample
// point, one colour committed to that slot since the last quiescent point, or black where the
// slot may be empty); at quiescent points (every sync subsurface's parent committed, then each
// visible surface's frame callback of its last commit, then a roundtrip) exactly each slot's last
// committed colour; the connection never ends; pp_timing_manager_v1 reports (version 2) come in
// strictly increasing seq, one for each buffer commit, none skipped.
//
// Output: "finding KIND seed S op N: ..." lines and "commit-fuzz ops=N ... findings=N".
// Exit status 0 when there is no finding, 1 with findings, 2 on bad arguments.
#include <CLI/CLI.hpp>
#include <cinttypes>
#include <cstdio>
#include <cstring>

#include "commit_fuzz.hpp"
#include "reference.hpp"

using namespace pixelport;
using namespace pixelport::commit_fuzz;

extern "C" void __lsan_disable(void) __attribute__((weak));

namespace pixelport::commit_fuzz {

int Fuzzer::run() {
	std::string error;
	if (!conn.connect(&error) || !conn.subcompositor || !conn.viewporter || !conn.wm_base) {
		fprintf(stderr, "cannot connect (or no wl_subcompositor/wp_viewporter/xdg_wm_base): %s\n",
			error.c_str());
		return 2;
	}
	if (!conn.has_shm_format(drm_to_shm(o.format))) {
		fprintf(stderr, "the compositor does not serve %s\n", o.format_name.c_str());
		return 2;
	}
	static const wl_registry_listener listener = {
		.global =
			[](void *data, wl_registry *r, uint32_t name, const char *interface, uint32_t version) {
				if (strcmp(interface, pp_timing_manager_v1_interface.name) == 0 && version >= 2) {
					static_cast<Fuzzer *>(data)->timing = static_cast<pp_timing_manager_v1 *>(
						wl_registry_bind(r, name, &pp_timing_manager_v1_interface, 2));
				}
			},
		.global_remove = [](void *, wl_registry *, uint32_t) {},
	};
	wl_registry *registry = wl_display_get_registry(conn.display);
	wl_registry_add_listener(registry, &listener, this);
	conn.roundtrip();
	tol = test::reference_tolerance(o.format) + 2; // + the renderer's scaling of the viewport
	printf("commit-fuzz seed %" PRIu64 " format %s seconds %g timing %s\n", o.seed, o.format_name.c_str(),
		o.seconds, timing ? "yes" : "no");
	fflush(stdout);
	uint64_t end = now_ns() + static_cast<uint64_t>(o.seconds * 1e9);
	if (o.desync_under_sync > 0) { // toplevel, sync child, desync grandchild: one quiescent point
		Surf &t = *new_surface(), &a = *new_surface(), &b = *new_surface();
		make_toplevel(t);
		make_sub(a, t, true);
		make_sub(b, a, false);
		b.w = b.h = o.desync_under_sync;
		for (Surf *s : {&t, &a, &b}) writable(*s, 0, 1), commit_buffer(*s, 0, true);
		op++;
		quiesce();
	}
	if (o.size_bursts > 0) size_bursts();
	while (o.desync_under_sync == 0 && o.size_bursts == 0 && now_ns() < end && op < o.max_ops && alive()) {
		op++;
		step();
	}
	if (alive()) quiesce();
	while (!surfs.empty() && alive()) destroy_surface(*surfs.back());
	if (alive()) conn.roundtrip();
	if (!alive()) finding("disconnected", conn.error_text());
	printf("commit-fuzz ops=%" PRIu64 " commits=%" PRIu64 " checkpoints=%" PRIu64 " quiescent=%" PRIu64
	       " reports_presented=%" PRIu64 " reports_discarded=%" PRIu64 " findings=%" PRIu64 "\n",
		op, commits, checkpoints, quiescent, presented, discarded, findings);
	wl_registry_destroy(registry);
	if (timing) pp_timing_manager_v1_destroy(timing);
	return findings == 0 ? 0 : 1;
}

} // namespace pixelport::commit_fuzz

int main(int argc, char *argv[]) {
	if (__lsan_disable != nullptr) __lsan_disable();
	Options o;
	CLI::App app{"random legal commit sequences, checked on screen"};
	app.add_option("--seed", o.seed, "seed: the same seed makes the same random choices");
	app.add_option("--seconds", o.seconds, "how long to send requests");
	app.add_option("--format", o.format_name, "wl_shm format of every buffer (NV12, RGB888, XRGB4444, XRGB8888)");
	app.add_option("--max-ops", o.max_ops, "stop after N operations");
	app.add_flag("--verbose", o.verbose, "print every operation");
	app.add_option("--desync-under-sync", o.desync_under_sync,
		"only this: a desync subsurface (SIDE x SIDE) under a sync one, applied at a quiescent point");
	app.add_option("--size-bursts", o.size_bursts,
		"only this: N bursts of 3 to 6 commits in new sizes on one toplevel, screenshots until each shows");
	CLI11_PARSE(app, argc, argv);
	uint32_t shm = 0;
	if (!parse_format(o.format_name, &shm)) {
		fprintf(stderr, "unknown format %s\n", o.format_name.c_str());
		return 2;
	}
	o.format = shm_to_drm(shm);
	if (o.format != DRM_FORMAT_NV12 && o.format != DRM_FORMAT_RGB888 && o.format != DRM_FORMAT_XRGB4444 &&
		o.format != DRM_FORMAT_XRGB8888 && o.format != DRM_FORMAT_ARGB8888) {
		fprintf(stderr, "--format takes NV12, RGB888, XRGB4444, XRGB8888 or ARGB8888\n");
		return 2;
	}
	Fuzzer f(o);
	return f.run();
}
