// pixelport-conversion-attack: what a hostile client can make the compositor convert and keep
// (converted images that multiply memory, and a conversion storm that would freeze everyone).
// Reports like the other test clients ("ok", "error CODE INTERFACE"), then holds.
// Usage: pixelport-conversion-attack MODE N WIDTH HEIGHT
//   share-burst       one NV12 buffer attached to N subsurfaces in one burst; reports once the
//                     last one is shown
//   share-sequential  the same, waiting for the buffer's release between surfaces
//   storm             N full-damage commits of one NV12 buffer in one burst, the last one with
//                     presentation feedback: prints "presented" once it is shown (30 s at most)
//   wide-stride       an NV12 buffer whose rows are 64 KiB apart in a sparse pool (never
//                     written: all zero), committed N+1 times, each once the last was shown,
//                     its pages punched out of the pool in between (every row a fresh page to
//                     fault in); prints "presented K" (commits shown)
//   sync-wide-stride  wide-stride's buffer (rows 4 KiB apart) on a synchronized subsurface:
//                     each commit of it applies with its parent's next commit, which follows;
//                     "presented K" counts the subsurface's commits shown
//   viewport-damage   an NV12 buffer shown through a 64x64 wp_viewport destination, committed
//                     once in full, then N times with the whole 64x64 *surface* damaged (the
//                     whole buffer, once through the viewport), each once the last was shown;
//                     prints "presented K"
//   sync-children     one toplevel (a 64x64 XRGB8888 buffer) with N synchronized subsurfaces,
//                     each with two buffers: WIDTHxHEIGHT of bytes 0x60 and 8 px smaller of 0xa0,
//                     8 rounds: every child commits its buffer of the round (the large one in
//                     even rounds), then the parent commits, and the next round starts once
//                     the last (topmost) child's commit is shown; prints "presented K" (rounds
//                     shown)
//   sync-children-exit the same rounds without waiting, then exits at once
//   nested-children   sync-children with the N children in groups of 4 under N/4 synchronized
//                     middle subsurfaces (64x64 XRGB8888), themselves on the toplevel
//   flood             two NV12 buffers committed on a toplevel in turn, each as soon as it is
//                     released (converted), N commits; prints "flooding" once the first
//                     was converted and the next ones are under way
//   small-frames      N NV12 commits on a toplevel, each once the last was presented, sizes
//                     alternating (WIDTHxHEIGHT, 8 px smaller: each a worker's job); prints
//                     "presented K p50_us=N worst_us=N" (commit to presentation) and exits
//   same-frames       small-frames with both buffers WIDTHxHEIGHT
//   beside-video      a WIDTHxHEIGHT video on a toplevel (two NV12 buffers, each committed again
//                     as soon as it is released) and, on a second toplevel of the same client,
//                     N 256x256 frames, each once the last was presented: prints the small
//                     window's "presented K p50_us=N worst_us=N" and exits
//   resize-frames     N NV12 commits on a toplevel, each 8 px smaller than the last (an
//                     interactive resize: every frame a new size), each once the last was
//                     presented; prints "presented K" and exits
//   desync-children   N desynchronized subsurfaces, all committing in one batch per round, the
//                     next round once the last child's commit is shown; same buffers and
//                     rounds as sync-children
//   storm-one         one NV12 buffer committed N times as fast as possible (no wait for its
//                     release or a frame), a flush and a roundtrip every 256 commits
//   storm-two         two NV12 buffers in turn, N commits as fast as possible: each committed
//                     again only once released; when neither is, the last one again
//   storm-sizes       64 NV12 buffers in one pool, WIDTHxHEIGHT, each 8 px smaller than the
//                     last, N commits of them in turn as fast as possible (never written again)
//   storm-behind      storm-two with 1920x1080 buffers and a roundtrip every 16 commits, while
//                     a second toplevel (below it) commits a WIDTHxHEIGHT NV12 frame whenever
//                     its last one is released
//   The storm-* modes end with a last commit (of each toplevel) with presentation feedback,
//   print "presented" once it is shown (60 s at most), then the verdict ("ok"), and exit.
// Children sit at (i % 8, i / 8) (nested: at 0,0, as the middles, each covering its own).
// Without NV12 (stock wlroots) the children's, the frames' and the storms' buffers are
// XRGB8888 of the same sizes: the same attack as far as the compositor allows.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "conversion_attack.hpp"

using namespace pixelport::conversion_attack;

extern "C" void __lsan_disable(void) __attribute__((weak));

int main(int argc, char *argv[]) {
	if (__lsan_disable != nullptr) __lsan_disable();
	if (argc < 5) {
		fprintf(stderr,
			"usage: %s share-burst|share-sequential|storm|wide-stride|sync-wide-stride|viewport-damage|"
			"sync-children|sync-children-exit|nested-children|desync-children|flood|small-frames|beside-"
			"video|storm-one|"
			"storm-two|"
			"storm-sizes|storm-behind N WIDTH "
			"HEIGHT\n",
			argv[0]);
		return 2;
	}
	std::string mode = argv[1];
	int n = atoi(argv[2]), w = atoi(argv[3]), h = atoi(argv[4]);
	std::string error;
	if (n <= 0 || w <= 0 || h <= 0 || w % 2 || h % 2 || !conn.connect(&error)) {
		fprintf(stderr, "bad arguments or no compositor: %s\n", error.c_str());
		return 2;
	}
	if (mode.ends_with("-children") || mode == "sync-children-exit") return children_attack(mode, n, w, h);
	if (mode == "flood" || mode == "small-frames" || mode == "same-frames") return frames_attack(mode, n, w, h);
	if (mode == "beside-video") return beside_video_attack(n, w, h);
	if (mode == "resize-frames") return resize_attack(n, w, h);
	if (mode.starts_with("storm-")) return storm_attack(mode, n, w, h);
	return single_buffer_attack(mode, n, w, h);
}
