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
// is converted on the workers (workers.hpp) into an image of its own, one job per surface at a
// time, and held (the hold ledger, hold.hpp: HoldReason::Conversion) until the job is handed
// back; a commit made while the surface's job runs waits for it (at most one waits: a newer
// commit supersedes it, and the superseded one applies together with the newer one, so it is
// never shown). A view shows its own image only once its conversion is complete; applied
// before that (no role, a role object destroyed, an unmap, a client committing faster than its
// frames convert) it shows the surface's last complete image where that has its size, and is
// otherwise completed on the main thread before anything reads it; the surface is redrawn
// when the job ends. Each commit's state and its moves: commit_state.hpp, conversion.cpp, and
// docs/design.md ("The commit path"). The same commit content on another surface joins the
// running job.
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
	/** No longer charged to the budgets (and the client's count), ahead of being freed. */
	void uncharge();
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
	/**
	 * A fully transparent image of this size (read-only zero pages: no memory, no budget),
	 * what a view shows when the surface's last complete image has another size or none.
	 */
	const std::shared_ptr<ConvertedImage> &blank(int32_t width, int32_t height);
	/** Whether a spare of this format and size could be handed over now. */
	bool has_spare(uint32_t fourcc, int32_t width, int32_t height) const;
	/** The spare goes (its memory is needed for an image of another size). */
	void drop_spare() { spare_ = nullptr; }
	/** Neither image nor spare any more (a native buffer, a null attach, the surface going). */
	void drop_images();

	/** Buffer-coordinate damage accumulated since the image was last brought up to date. */
	const pixman_region32_t *damage() const { return &damage_; }
	/** Adds a commit's buffer damage, if the image is valid (else it is converted in full). */
	void add_damage(const pixman_region32_t *damage);
	/**
	 * The image stays shown but no longer holds the client's last commit (a commit applied
	 * before its conversion was done): the next one is converted, and uploaded, in full.
	 */
	void invalidate() {
		valid_ = false;
		pixman_region32_clear(&damage_);
	}

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
	 * The job converting this surface's newest commit on the workers (null when none), that
	 * commit's number, and its view while the view lives (it may be applied, or gone, before
	 * the job ends: the image then shows once handed back). At most one per surface.
	 */
	const std::shared_ptr<ConvertJob> &job() const { return job_; }
	uint64_t job_seq() const { return job_seq_; }
	ConvertedView *job_view() const { return job_view_; }
	void set_job(std::shared_ptr<ConvertJob> job, uint64_t seq, ConvertedView *view) {
		job_ = std::move(job);
		job_seq_ = seq;
		job_view_ = view;
	}
	std::shared_ptr<ConvertJob> take_job() {
		job_view_ = nullptr;
		return std::move(job_);
	}
	/**
	 * The commit waiting for that job to end before its own starts (null when none): a newer
	 * commit supersedes it. At most one per surface.
	 */
	ConvertedView *waiting() const { return waiting_; }
	void set_waiting(ConvertedView *view) { waiting_ = view; }
	ConvertedView *take_waiting() { return std::exchange(waiting_, nullptr); }
	/** `view` is being destroyed: no longer due, converting or waiting here. */
	void forget_view(ConvertedView *view);

	// ---- frame callbacks ---------------------------------------------------------------------

	/**
	 * Moves the frame callbacks of `current` (the surface's applied state's list) behind the
	 * ones held already: they belong to commits whose own pixels are not shown yet.
	 */
	void hold_frames(wl_list *current);
	/** Puts the held frame callbacks back at the front of `current`; false when none were held. */
	bool release_frames(wl_list *current);
	/**
	 * Sends the held frame callbacks' done event (time in ms, CLOCK_MONOTONIC) and destroys them,
	 * oldest first, all but the newest `keep`.
	 */
	void send_frames_done(uint32_t time_ms, size_t keep = 0);
	/** Frame callbacks held (moved into hold_frames(), less those sent; a few may be gone since). */
	size_t held_frames() const { return held_frame_count_; }

private:
	std::shared_ptr<ConvertedImage> image_;
	std::shared_ptr<ConvertedImage> spare_;
	std::shared_ptr<ConvertedImage> blank_;
	bool valid_ = false;
	uint32_t source_format_ = 0;
	ColorState source_color_;
	pixman_region32_t damage_;
	ConvertedView *pending_ = nullptr;
	bool view_applied_ = false;
	bool queued_ = false;
	std::shared_ptr<ConvertJob> job_;
	uint64_t job_seq_ = 0;
	ConvertedView *job_view_ = nullptr;
	ConvertedView *waiting_ = nullptr;
	wl_list held_frames_; // wl_callback resources, linked as wlroots links them
	size_t held_frame_count_ = 0;
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
	 * A null `buffer` (a native buffer or a null attach) supersedes the surface's held commits.
	 */
	void surface_client_commit(SurfaceState *surface, PixelBuffer *buffer, uint32_t renderer_format);
	/** From the surface's commit (state applied): a non-view buffer or null attach drops the image. */
	void surface_committed(SurfaceState *surface);
	/** The surface is going: its due conversion is dropped, its buffer released. */
	void surface_destroyed(SurfaceState *surface);
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
