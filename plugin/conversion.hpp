// Converted views: how a wl_buffer in a format the renderer lacks reaches the renderer with
// wl_buffer semantics intact (docs/design.md, "Converted buffers"). The module's files: views.cpp
// (the views), images.cpp (images and budgets), conversion.cpp (which thread converts, and when).
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
// Which thread: the main thread converts only small updates of a surface's own image (its pages
// faulted in already): with a renderer that reads the pixels at render time (pixman), after the
// dispatch that applied the commit (an idle callback, bounded per pass) or when the renderer
// first reads it, whichever comes first, so a commit superseded in the same dispatch is never
// converted; renderers that copy at upload (GLES2) convert while the commit is applied. What
// it converts in one go is bounded per pass of the main loop, whatever the number of surfaces:
// such commits count their pixels against a per-client and a global allowance until converted.
//
// Every other commit (a new surface, a size change, a large update, one beyond the allowance)
// is held (wlr_surface_lock_pending, as a stream commit waiting for its bytes) and converted on
// the workers (workers.hpp) into an image of its own, then applied when the job is handed
// back. A newer buffer commit on the same surface supersedes a held one whose job has not
// started: it is cancelled, and the held commit applies together with the newer one, so no
// output shows it. The same commit content on another surface joins the running job. On a
// surface without a role the commit cannot be held: small ones are converted when applied,
// large ones on a worker while applied. A synchronized subsurface's commit is held too, and so
// is the next commit of the surface whose apply applies it (its root: the first ancestor that
// is not a synchronized subsurface) until every such child's image is complete: the root's
// apply then converts nothing, and the children still apply with it.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "client_account.hpp"
#include "color_representation.hpp"
#include "listener.hpp"
#include "wlr.hpp"

struct pixelport_plugin;

namespace pixelport {

class PixelBuffer;
struct SurfaceState;
struct ConvertedView;
struct ImageBudget;
struct ConvertJob;

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
	AccountSlot slot; // the owning client's ConvertedImage count
	/**
	 * Set while the image holds (or, if !filled, is about to hold) exactly the whole content
	 * of `pure_source` as committed at `pure_generation`, read as `pure_color`: views of that same commit content on
	 * other surfaces may share it. Cleared by any partial (damage) update.
	 */
	const PixelBuffer *pure_source = nullptr;
	uint64_t pure_generation = 0;
	ColorState pure_color;
	bool filled = false;
	/**
	 * A worker is writing it (workers.hpp): nothing else may write it or start showing it as
	 * another commit's content until the job is handed back.
	 */
	bool converting = false;
	/** That job, while it runs (views of the same commit content on other surfaces join it). */
	std::weak_ptr<ConvertJob> writer;
	/** Surfaces whose SurfaceConversion holds this image (an image on one is updated in place). */
	uint32_t surfaces = 0;

	ConvertedImage() = default;
	ConvertedImage(const ConvertedImage &) = delete;
	ConvertedImage &operator=(const ConvertedImage &) = delete;
	~ConvertedImage();
};

/**
 * Per surface (SurfaceState::conversion): the image it shows and the converted commits still
 * to be written into it. Only conversion.cpp changes it, through these calls.
 */
class SurfaceConversion {
public:
	SurfaceConversion();
	~SurfaceConversion();
	SurfaceConversion(const SurfaceConversion &) = delete;
	SurfaceConversion &operator=(const SurfaceConversion &) = delete;

	// ---- the image -------------------------------------------------------------------------

	/** The image the surface's current (or pending) view shows, or null. */
	const std::shared_ptr<ConvertedImage> &image() const { return image_; }
	/** The image holds the content of the surface's last converted commit (damage may apply). */
	bool valid() const { return valid_; }
	/**
	 * valid(), and that commit was in the client format `source_format` and read as `color`
	 * (else: convert all).
	 */
	bool up_to_date(uint32_t source_format, const ColorState &color) const {
		return valid_ && source_format_ == source_format && source_color_ == color;
	}
	/**
	 * Shows `image` from now on (keeping ConvertedImage::surfaces right); `valid`: it holds the
	 * whole content of a commit in client format `source_format` read as `color`, else it is to
	 * be converted in full. Clears the damage.
	 */
	void show(std::shared_ptr<ConvertedImage> image, bool valid, uint32_t source_format,
		const ColorState &color = {});
	/**
	 * Before show() of `next` for a large commit: the image shown now becomes the spare, if it
	 * is another one and only this surface shows it (its pages are already faulted in: a
	 * fresh 4K image costs thousands of page faults).
	 */
	void keep_spare(const std::shared_ptr<ConvertedImage> &next);
	/** Hands over the spare if it has this format and size and nothing else holds it, else null. */
	std::shared_ptr<ConvertedImage> take_spare(uint32_t fourcc, int32_t width, int32_t height);
	/** Neither image nor spare any more (a native buffer, a null attach, the surface going). */
	void drop_images();

	/** Buffer-coordinate damage accumulated since the image was last brought up to date. */
	const pixman_region32_t *damage() const { return &damage_; }
	/** Adds a commit's buffer damage, if the image is valid (else it is converted in full). */
	void add_damage(const pixman_region32_t *damage);

	// ---- the commits to convert ------------------------------------------------------------

	/** The applied view whose conversion is still due (lazy mode), or null. */
	ConvertedView *pending() const { return pending_; }
	void set_pending(ConvertedView *view) { pending_ = view; }
	/** The due view, which is no longer due. */
	ConvertedView *take_pending() { return std::exchange(pending_, nullptr); }

	/** Notes that a view was applied in the commit being applied now. */
	void view_applied() { view_applied_ = true; }
	/** Whether a view was applied since the last call (checked after each commit). */
	bool take_view_applied() { return std::exchange(view_applied_, false); }

	/** Enters the lazy-conversion queue: true the first time until dequeued(). */
	bool enqueue() { return !std::exchange(queued_, true); }
	void dequeued() { queued_ = false; }

	/**
	 * Views of this surface's commits converted in bands, in commit order (all but the last
	 * superseded): held (locked) ones, or on a surface without a role, already applied.
	 */
	const std::vector<ConvertedView *> &held() const { return held_; }
	void add_held(ConvertedView *view) { held_.push_back(view); }
	/** Removes the first `n` held views (they apply now). */
	void remove_first_held(size_t n);
	/** Removes the held views for which `pred(view)` is true. */
	template <typename Pred>
	void remove_held_if(Pred pred) {
		std::erase_if(held_, pred);
	}
	/** The views are gone with the surface (wlroots drops their cached states itself). */
	void forget_held() { held_.clear(); }
	/** `view` is being destroyed: no longer due or held. */
	void forget_view(ConvertedView *view);

	// ---- as the root of synchronized subsurfaces ---------------------------------------------

	/** Held commits of synchronized descendants that this surface's apply would apply. */
	uint32_t sync_waits() const { return sync_waits_; }
	void add_sync_wait() { sync_waits_++; }
	/** One fewer; returns how many are left. */
	uint32_t remove_sync_wait() { return sync_waits_ > 0 ? --sync_waits_ : 0; }
	/** This surface's commits held until those are converted (lock sequence numbers). */
	const std::vector<uint32_t> &root_locks() const { return root_locks_; }
	void add_root_lock(uint32_t seq) { root_locks_.push_back(seq); }
	std::vector<uint32_t> take_root_locks() { return std::exchange(root_locks_, {}); }
	/** This surface's client_commit, connected once it is a root with something to wait for. */
	Listener &root_commit() { return root_commit_; }

private:
	std::shared_ptr<ConvertedImage> image_;
	std::shared_ptr<ConvertedImage> spare_;
	bool valid_ = false;
	uint32_t source_format_ = 0;
	ColorState source_color_;
	pixman_region32_t damage_;
	ConvertedView *pending_ = nullptr;
	bool view_applied_ = false;
	bool queued_ = false;
	std::vector<ConvertedView *> held_;
	uint32_t sync_waits_ = 0;
	std::vector<uint32_t> root_locks_;
	Listener root_commit_;
};

/** Budgets, the lazy-conversion queue and the views' wlr_buffer implementation. */
class Conversions {
public:
	static std::unique_ptr<Conversions> create(pixelport_plugin *plugin);
	~Conversions();

	/**
	 * From the surface's client_commit, when the pending state attaches a buffer. A PixelBuffer
	 * to convert (else null) is put behind a view of it that shows it as `renderer_format`
	 * (the view takes over the pending state's lock on the buffer): a converted format,
	 * or any format with alpha under straight alpha (premultiplied, even into its own format).
	 * Any buffer supersedes the surface's held commits.
	 */
	void surface_client_commit(SurfaceState *surface, PixelBuffer *buffer, uint32_t renderer_format);
	/**
	 * Unlocks the surface's held commits now, unconverted where not yet converted: the client
	 * unmaps behind them (see surface.cpp).
	 */
	void release_held(SurfaceState *surface);
	/** From the surface's commit (state applied): a non-view buffer or null attach drops the image. */
	void surface_committed(SurfaceState *surface);
	/** The surface is going: its due conversion is dropped, its buffer released. */
	void surface_destroyed(SurfaceState *surface);
	/** Outputs size the default budgets. */
	void attach_output(wlr_output *output);
	/**
	 * For a reader of the client's buffer itself rather than a surface's view: its pixels now,
	 * converted in full into an image of its own, charged to its client's budget. Null if the
	 * client destroyed the buffer, the budget refuses (the client got no_memory), or the pixels
	 * cannot be read.
	 */
	std::shared_ptr<ConvertedImage> convert_whole(PixelBuffer *buffer);

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
