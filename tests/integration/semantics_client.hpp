// pixelport-semantics-client's shared parts. The program is split by concern:
// semantics_client.cpp (the usage, the scenario table, main), semantics_colours.cpp,
// semantics_surfaces.cpp (buffers, surfaces, frames), semantics_checks.cpp (screenshots) and
// semantics_scenarios.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "wayland_client.hpp"

namespace pixelport::semantics {

using namespace pixelport::client;

constexpr int kBlock = 8;
constexpr uint32_t kRed = 0xff0000, kGreen = 0x00ff00, kBlue = 0x0000ff, kWhite = 0xffffff, kBlack = 0;

/** The client's one connection. */
extern Connection conn;

// ---- solid colours (semantics_colours.cpp) ----
/** `rgb` drawn w x h in `format` (DRM fourcc) into *out with its row stride; false for a format it cannot draw. */
bool solid(uint32_t format, int w, int h, uint32_t rgb, std::vector<uint8_t> *out, size_t *stride);
// The stream's packing of a whole buffer: for NV12, each pair of luma rows then one UV row.
std::vector<uint8_t> stream_packing(uint32_t format, int w, int h, const std::vector<uint8_t> &shm, size_t stride);
// What a correct compositor shows for `rgb` drawn in `format` (the reference decoder's
// reading of the very bytes we send). `straight`: the bytes' colour is straight alpha.
uint32_t shown(uint32_t format, uint32_t rgb, bool straight = false);

// ---- buffers, surfaces, frames (semantics_surfaces.cpp) ----
struct Buffer {
	uint32_t format = 0;
	int w = 0, h = 0;
	wl_buffer *buffer = nullptr;
	bool released = true;
	// shm
	ShmPool pool;
	size_t stride = 0;
	// stream
	pp_stream_v1 *stream = nullptr;
	int data_fd = -1;
	bool shm = true; // else on a stream

	bool create(bool on_shm, uint32_t fmt, int width, int height, uint32_t rgb);
	// Writes new content: the caller must own the buffer (released).
	bool fill(uint32_t rgb);
	void destroy();
	~Buffer();
};

struct Surface {
	wl_surface *surface = nullptr;
	wl_subsurface *sub = nullptr;
};

/** Attaches b's buffer with full damage (not committed); b is busy from now. */
void attach(Surface &s, Buffer &b);
// Frame callbacks of the commits since the last settle(): the plugin holds a commit until its
// pixels are converted (on a worker), and its frame callback comes once it is drawn.
extern std::set<wl_callback *> frames_pending;
/** A frame callback for s's next commit, in frames_pending. */
void ask_frame(Surface &s);
/** Commits s, asking for its frame. */
void commit(Surface &s);
// A commit that changes nothing but asks for its area to be drawn again.
void damage_only(Surface &s);
/** A subsurface of `parent` at block `index`, synchronized or not. */
Surface child(Surface &parent, int index, bool sync);

// The run, set up by main(): the buffers' format (its name as given) and transport, the parent
// surface the scenarios draw on, what the reference says each colour shows as, and the
// checkpoints failed so far.
struct Run {
	uint32_t format = 0;
	const char *format_arg = "";
	std::string transport = "shm";
	Surface parent;
	int tol = 0;
	uint32_t red = 0, green = 0, blue = 0;
	int failures = 0;
};

/** Requests applied, then the frames pending (500 ms at most); false if the connection died. */
bool settle();

// ---- checkpoints (semantics_checks.cpp) ----
bool screenshot(int *w, int *h, std::vector<uint8_t> *rgb);
// want[i]: the colour the centre of block i must show (0xRRGGBB, black for nothing).
void checkpoint(Run &run, const char *name, const std::vector<uint32_t> &want, int tolerance);
void expect(Run &run, const char *name, bool ok, const std::string &what);
// Waits up to `ms` for the buffer's release.
bool wait_release(Buffer &b, int ms);
// Converted wl_shm buffers are released once converted; buffers the renderer reads in
// place (native formats, stream storage) stay busy while a surface shows them.
void make(Run &run, Buffer &b, uint32_t rgb);

// ---- the scenarios (semantics_scenarios.cpp) ----
void scenario_shared_then_replaced(Run &run);
void scenario_three_surfaces(Run &run);
void scenario_sync_cached(Run &run);
void scenario_destroyed_while_shown(Run &run);
void scenario_burst(Run &run);
void scenario_alpha_shared(Run &run);
void scenario_size_and_format(Run &run);

} // namespace pixelport::semantics
