// Converted views: how a wl_buffer in a format the renderer lacks reaches the renderer with
// wl_buffer semantics intact (docs/design.md, "Converted buffers").
//
// At the client's commit the plugin puts a ConvertedView (a small wlr_buffer of its own) in
// the surface's pending state instead of the client's buffer. The view keeps the client's
// buffer locked (busy, not released) until that commit's pixels have been converted into a
// ConvertedImage, so a cached or pending commit always converts the bytes it committed.
// The renderer reads the view: the image it was converted into, never a later one.
//
// Images are per surface and updated in place with the commit's damage when nothing else
// shows them; one that another view still shows is copied on write (a fresh image, converted
// in full). The same buffer committed to several surfaces without being released in between
// shares one image. Images count against a per-client and a global budget.
//
// When: with a renderer that reads the pixels at render time (pixman), a commit is converted
// after the dispatch that applied it (an idle callback, bounded per pass) or when the renderer
// first reads it, whichever comes first, so a commit superseded in the same dispatch is never
// converted. Renderers that copy at upload (GLES2) convert while the commit is applied.
//
// Large commits (more than kHoldPixels to convert) would hold the main loop for that long in
// one go: they are held instead (wlr_surface_lock_pending, as a stream commit waiting for its
// bytes), converted into an image of their own in bands of bounded time between dispatches,
// and applied when done. A newer buffer commit on the same surface supersedes a held one: its
// conversion stops, and it applies together with the newer one, so no output shows it. On a
// surface without a role the commit is converted in bands but not held; a synchronized
// subsurface's is neither (its parent's commit cannot be held with it).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "wlr.hpp"

struct pixelport_plugin;

namespace pixelport {

class PixelBuffer;
struct SurfaceState;
struct ConvertedView;
struct ImageBudget;

/** Renderer-format pixels converted from client buffers; shared by the views that show them. */
struct ConvertedImage {
	uint32_t fourcc = 0;
	int32_t width = 0;
	int32_t height = 0;
	size_t stride = 0; // bytes, a multiple of 4 (pixman, GL's default unpack alignment)
	size_t size = 0; // stride * height
	size_t mapped = 0; // bytes mapped (page-rounded); what the budgets count
	uint8_t *data = nullptr; // anonymous mapping: zero pages until first written
	/** Budgets charged for this image (the owning client's and the plugin's). */
	std::shared_ptr<ImageBudget> client_budget;
	std::shared_ptr<ImageBudget> total_budget;
	/**
	 * Set while the image holds (or, if !filled, is about to hold) exactly the whole content
	 * of `pure_source` as committed at `pure_generation`: views of that same commit content on
	 * other surfaces may share it. Cleared by any partial (damage) update.
	 */
	const PixelBuffer *pure_source = nullptr;
	uint64_t pure_generation = 0;
	bool filled = false;
	/** Rows converted so far by held-commit conversions (in bands, top down). */
	int32_t filled_rows = 0;
	/** Surfaces whose SurfaceConversion holds this image (an image on one is updated in place). */
	uint32_t surfaces = 0;

	ConvertedImage() = default;
	ConvertedImage(const ConvertedImage &) = delete;
	ConvertedImage &operator=(const ConvertedImage &) = delete;
	~ConvertedImage();
};

/** Per surface: the image it shows and the converted commit still to be written into it. */
struct SurfaceConversion {
	/** The image the surface's current (or pending) view shows. */
	std::shared_ptr<ConvertedImage> image;
	/**
	 * The image it showed before its last large commit: reused by the next one of the same size
	 * once nothing shows it (its pages are already faulted in: a fresh 4K image costs
	 * thousands of page faults).
	 */
	std::shared_ptr<ConvertedImage> spare;
	/** `image` holds the content of the surface's last converted commit (damage may apply). */
	bool valid = false;
	/** The client format last converted into `image`: a change converts everything. */
	uint32_t source_format = 0;
	/** The applied view whose conversion is still due (lazy mode), or null. */
	ConvertedView *pending = nullptr;
	/** Buffer-coordinate damage accumulated since `image` was last brought up to date. */
	pixman_region32_t damage;
	/** A view was applied in the commit being applied now (checked after the commit). */
	bool view_applied = false;
	/** In the lazy-conversion queue (once per surface, however many commits). */
	bool queued = false;
	/**
	 * Views of this surface's commits converted in bands, in commit order (all but the last
	 * superseded): held (locked) ones, or on a surface without a role, already applied.
	 */
	std::vector<ConvertedView *> held;

	SurfaceConversion();
	~SurfaceConversion();
	/** Points `image` at `next`, keeping ConvertedImage::surfaces right. */
	void set_image(std::shared_ptr<ConvertedImage> next);
	SurfaceConversion(const SurfaceConversion &) = delete;
	SurfaceConversion &operator=(const SurfaceConversion &) = delete;
};

/** Budgets, the lazy-conversion queue and the views' wlr_buffer implementation. */
class Conversions {
public:
	static std::unique_ptr<Conversions> create(pixelport_plugin *plugin);
	~Conversions();

	/**
	 * From the surface's client_commit, when the pending state attaches a buffer. A
	 * converted-format PixelBuffer (else null) is put behind a view of it (the view takes over
	 * the pending state's lock on the buffer); any buffer supersedes the surface's held commits.
	 */
	void surface_client_commit(SurfaceState *surface, PixelBuffer *buffer);
	/**
	 * Unlocks the surface's held commits now, unconverted where not yet converted: the client
	 * unmaps behind them (see pixelport.cpp).
	 */
	void release_held(SurfaceState *surface);
	/** From the surface's commit (state applied): a non-view buffer or null attach drops the image. */
	void surface_committed(SurfaceState *surface);
	/** The surface is going: its due conversion is dropped, its buffer released. */
	void surface_destroyed(SurfaceState *surface);
	/** Outputs size the default budgets. */
	void attach_output(wlr_output *output);

	/** Bytes of converted images alive (mapped, page-rounded). */
	uint64_t total_bytes() const;
	/** The per-client and total budgets in force now (defaults follow the outputs). */
	uint64_t client_budget() const;
	uint64_t total_budget() const;

	bool lazy() const { return lazy_; }
	pixelport_plugin *plugin() const { return plugin_; }

	// Internal (conversion.cpp).
	struct Impl;
	Impl *impl() const { return impl_.get(); }

private:
	Conversions() = default;
	pixelport_plugin *plugin_ = nullptr;
	bool lazy_ = false;
	std::unique_ptr<Impl> impl_;
};

} // namespace pixelport
