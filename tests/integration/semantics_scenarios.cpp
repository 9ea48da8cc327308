// pixelport-semantics-client: the scenarios, one function each, named after the scenario.
#include <drm_fourcc.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "reference.hpp"
#include "wayland_client.hpp"

#include "semantics_client.hpp"

namespace pixelport::semantics {

// ---- the scenarios: one function each, named after the scenario ----

// A on P and C, then B on C; P's damage-only commit repaints P's area.
void scenario_shared_then_replaced(Run &run) {
	Buffer a, b;
	make(run, a, kRed);
	make(run, b, kGreen);
	Surface c = child(run.parent, 1, false);
	attach(run.parent, a), commit(run.parent);
	attach(c, a), commit(c);
	attach(c, b), commit(c);
	damage_only(run.parent);
	checkpoint(run, "p-keeps-a-c-shows-b", {run.red, run.green}, run.tol);
	damage_only(c);
	damage_only(run.parent);
	checkpoint(run, "after-more-repaints", {run.red, run.green}, run.tol);
}

// The same buffer on three surfaces, with commits of other content interleaved, then
// (when it comes back) rewritten and committed to one of them only.
void scenario_three_surfaces(Run &run) {
	Buffer a, b, d;
	make(run, a, kRed);
	make(run, b, kGreen);
	Surface c1 = child(run.parent, 1, false), c2 = child(run.parent, 2, false);
	attach(run.parent, a), commit(run.parent);
	attach(c1, a), commit(c1);
	attach(c2, a), commit(c2);
	checkpoint(run, "a-on-three", {run.red, run.red, run.red}, run.tol);
	attach(c1, b), commit(c1);
	damage_only(run.parent);
	checkpoint(run, "b-on-the-middle-one", {run.red, run.green, run.red}, run.tol);
	if (wait_release(a, 2000)) {
		// Released: the client may draw into it; what P and C2 show must not change.
		a.fill(kBlue);
		attach(c2, a), commit(c2);
		damage_only(run.parent);
		checkpoint(run, "a-rewritten-for-c2-only", {run.red, run.green, run.blue}, run.tol);
	} else {
		make(run, d, kBlue);
		attach(c2, d), commit(c2);
		damage_only(run.parent);
		checkpoint(run, "new-buffer-for-c2-only", {run.red, run.green, run.blue}, run.tol);
	}
}

// A synchronized subsurface: its commits are cached until the parent commits; a cached
// commit is not shown, even when the area is drawn again, and its buffer is released
// only once its content is kept elsewhere.
void scenario_sync_cached(Run &run) {
	Buffer a, b;
	make(run, a, kRed);
	Surface c = child(run.parent, 1, true);
	Buffer p;
	make(run, p, kWhite);
	// Wait until the parent's commit is applied and shown: a commit held for stream
	// bytes would apply the child's later cache with it (wlroots 0.18 applies a
	// synchronized child's cache at its parent's next apply, whenever that comes).
	CommitWaiter waiter;
	attach(run.parent, p);
	waiter.arm(&conn, run.parent.surface);
	commit(run.parent);
	if (!waiter.wait(&conn, 10000)) {
		expect(run, "parent-presented", false, "the parent's commit was not presented");
		return;
	}
	attach(c, a), commit(c);
	checkpoint(run, "cached-not-shown", {shown(run.format, kWhite), kBlack}, run.tol);
	settle();
	// A cached commit's buffer may be released only once its content is kept
	// elsewhere (a converted image): reused by the client then, it must not change
	// what the parent's commit shows.
	if (a.released) a.fill(kGreen);
	damage_only(run.parent);
	checkpoint(run, "applied-with-parent", {shown(run.format, kWhite), run.red}, run.tol);
	Buffer *next = &a;
	if (wait_release(a, 2000)) {
		a.fill(kBlue); // released early: the client may reuse it at once
	} else {
		make(run, b, kBlue);
		next = &b;
	}
	attach(c, *next), commit(c);
	checkpoint(run, "rewritten-and-cached-shows-old", {shown(run.format, kWhite), run.red}, run.tol);
	settle();
	if (next->released) next->fill(kGreen); // as above
	damage_only(run.parent);
	checkpoint(run, "second-applied-with-parent", {shown(run.format, kWhite), run.blue}, run.tol);
}

// The client destroys the wl_buffer right after committing it, and later.
void scenario_destroyed_while_shown(Run &run) {
	Buffer a, b;
	make(run, a, kRed);
	make(run, b, kGreen);
	Surface c = child(run.parent, 1, false);
	attach(run.parent, a), commit(run.parent);
	a.destroy(); // before the compositor converted anything
	attach(c, b), commit(c);
	settle();
	b.destroy();
	checkpoint(run, "destroyed-buffers-still-shown", {run.red, run.green}, run.tol);
	damage_only(run.parent);
	damage_only(c);
	checkpoint(run, "and-after-repaints", {run.red, run.green}, run.tol);
}

// Several commits in one burst: only the last is shown.
void scenario_burst(Run &run) {
	Buffer a, b, d;
	make(run, a, kRed);
	make(run, b, kGreen);
	make(run, d, kBlue);
	for (int i = 0; i < 10; i++) {
		attach(run.parent, a), commit(run.parent);
		attach(run.parent, b), commit(run.parent);
	}
	attach(run.parent, d), commit(run.parent);
	checkpoint(run, "last-of-burst", {run.blue}, run.tol);
}

// One buffer on the parent, whose colour is straight alpha, and on a child that says
// nothing (premultiplied): each shows its own reading of the same bytes, also after
// repaints; then the parent goes back to premultiplied and shows what the child shows.
void scenario_alpha_shared(Run &run) {
	if (conn.color_representation == nullptr) {
		expect(run, "color-representation", false, "no wp_color_representation_manager_v1");
		return;
	}
	const uint32_t argb = 0x80c86432; // alpha 0x80, colour (200, 100, 50): not premultiplied
	const uint32_t straight = shown(run.format, argb, true), premultiplied = shown(run.format, argb);
	if (straight == premultiplied || straight == 0xdeadbe) {
		expect(run, "readings-differ", false, "the format does not tell the readings apart");
		return;
	}
	Buffer a;
	make(run, a, argb);
	Surface c = child(run.parent, 1, false);
	wp_color_representation_surface_v1 *color =
		wp_color_representation_manager_v1_get_surface(conn.color_representation, run.parent.surface);
	wp_color_representation_surface_v1_set_alpha_mode(
		color, WP_COLOR_REPRESENTATION_SURFACE_V1_ALPHA_MODE_STRAIGHT);
	attach(run.parent, a), commit(run.parent);
	attach(c, a), commit(c);
	checkpoint(run, "parent-straight-child-premultiplied", {straight, premultiplied}, run.tol);
	damage_only(c);
	damage_only(run.parent);
	checkpoint(run, "after-repaints", {straight, premultiplied}, run.tol);
	// The child commits it first this time, then the parent, straight again.
	attach(c, a), commit(c);
	attach(run.parent, a), commit(run.parent);
	checkpoint(run, "committed-the-other-way-round", {straight, premultiplied}, run.tol);
	wp_color_representation_surface_v1_set_alpha_mode(
		color, WP_COLOR_REPRESENTATION_SURFACE_V1_ALPHA_MODE_PREMULTIPLIED_ELECTRICAL);
	attach(run.parent, a), commit(run.parent);
	checkpoint(run, "parent-back-to-premultiplied", {premultiplied, premultiplied}, run.tol);
}

// Size and format changes on one surface, with a native buffer in between.
void scenario_size_and_format(Run &run) {
	struct Step {
		uint32_t format;
		int w, h;
		uint32_t rgb;
	};
	const Step steps[] = {{run.format, 8, 8, kRed}, {DRM_FORMAT_XRGB4444, 16, 8, kGreen},
		{DRM_FORMAT_NV12, 8, 16, kBlue}, {DRM_FORMAT_XRGB8888, 16, 8, kWhite}, {run.format, 16, 8, kGreen},
		{run.format, 8, 8, kBlue}};
	std::vector<std::unique_ptr<Buffer>> keep;
	int n = 0;
	for (const Step &s : steps) {
		auto b = std::make_unique<Buffer>();
		if (!b->create(run.transport == "shm", s.format, s.w, s.h, s.rgb)) {
			fprintf(stderr, "cannot make a buffer\n");
			exit(1);
		}
		attach(run.parent, *b), commit(run.parent);
		std::vector<uint32_t> want;
		uint32_t colour = shown(s.format, s.rgb);
		for (int x = 0; x < s.w / kBlock; x++) want.push_back(colour);
		want.resize(3, kBlack); // right of the buffer: nothing
		std::string name = "step" + std::to_string(++n);
		checkpoint(run, name.c_str(), want, std::max(run.tol, test::reference_tolerance(s.format)));
		keep.push_back(std::move(b));
	}
}

} // namespace pixelport::semantics
