// Inside the conversion module (conversion.cpp, views.cpp, images.cpp): what they share, the
// views, the workers' jobs and the budgets' counters. Nothing outside those files includes it.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "buffer.hpp"
#include "conversion.hpp"
#include "plugin.hpp"
#include "workers.hpp"

namespace pixelport {

/**
 * Where a converted commit is. Every transition is in conversion.cpp (views.cpp moves Due to
 * Ready when it converts a due view): docs/design.md, "The commit path", draws them.
 */
enum class CommitState : uint8_t {
	/** Converted on the main thread after it applies (a small update): never held. */
	Due,
	/** Behind the surface's job (SurfaceConversion::waiting()): no image yet. */
	Waiting,
	/** Its job runs on the workers, writing `image`, which nothing shows until it ends. */
	Converting,
	/** `image` holds its complete conversion: what the view shows. */
	Ready,
	/**
	 * Never to be converted: a newer commit replaced it, its pixels could not be read, or its
	 * surface unmapped or went. No image, no lock on the client's buffer.
	 */
	Superseded,
};

// A view: the wlr_buffer a surface's state holds instead of a converted-format PixelBuffer.
struct ConvertedView {
	wlr_buffer base; // first, in a standard-layout struct: the wlr_buffer pointer is cast back
	Conversions *conversions = nullptr;
	/** The client's buffer, locked while Due, Waiting or Converting (a job has a lock of its own). */
	PixelBuffer *source = nullptr;
	uint64_t generation = 0; // source->generation at the commit
	uint32_t renderer_format = 0; // what the view's image holds
	SurfaceRef surface;
	/** The surface's commit number (SurfaceState::commits): orders its views. */
	uint64_t seq = 0;
	CommitState state = CommitState::Due;
	/** wlroots applied its state (bind() ran). */
	bool applied = false;
	/** Held in wlroots' cache with `lock_seq` until it may apply. */
	bool locked = false;
	uint32_t lock_seq = 0;
	/** Ready: what it shows. Converting: what its job writes (never shown until Ready). */
	std::shared_ptr<ConvertedImage> image;
	/** Converting: the job (its surface's, or another surface's it joined). */
	std::shared_ptr<ConvertJob> job;
	/** Timing record of the apply in progress, between begin and end of data access. */
	timing::CommitSample *timing_record = nullptr;
	/** Locked on a synchronized subsurface: its root's next commit waits for it. */
	bool rooted = false;
	SurfaceRef root;
	/** Due: pixels admitted against these budgets until converted or dropped. */
	uint64_t due_pixels = 0;
	std::shared_ptr<ImageBudget> due_budget;
	uint32_t source_format = 0; // the buffer's stored_format at the commit
	/** The commit's colour representation: how its YCbCr is read. */
	ColorState color;
	uint64_t convert_start_ns = 0, convert_end_ns = 0;
};

// A conversion on the workers, of one commit content for the surfaces that wait for it (the
// one that started it, and those the same content was committed to meanwhile). The job keeps
// its own lock on the client's buffer (so its pages stay mapped and guarded) and its own
// reference on the image until it is handed back, whatever happens to the views meanwhile; it
// is cancelled when no surface waits for it any more, and then its image is no longer charged
// to the client.
struct ViewJob : ConvertJob {
	PixelBuffer *source = nullptr; // locked by the job
	std::shared_ptr<ConvertedImage> image;
	/** Surfaces whose SurfaceConversion::job() this is. */
	std::vector<SurfaceRef> surfaces;
	/** job_done() runs or ran: its image is what it is, nothing cancels it. */
	bool handed_back = false;
};

static_assert(std::is_standard_layout_v<ConvertedView>);

struct Conversions::Impl {
	Conversions *owner = nullptr;
	std::shared_ptr<ImageBudget> total = std::make_shared<ImageBudget>();
	/** Surfaces with a conversion due (lazy mode), in apply order. */
	std::vector<SurfaceRef> due;
	/** Converts held commits off the main thread (null if it could not start). */
	std::unique_ptr<ConvertWorkers> workers;
	/** Roots whose synchronized descendants may have nothing held any more: unlock them. */
	std::vector<SurfaceRef> root_releases;
	/** Counts idle passes: ImageBudget::spent_pixels is of the pass it names. */
	uint64_t epoch = 1;
	wl_event_source *idle = nullptr;
	wl_event_source *timer = nullptr;

	std::shared_ptr<ImageBudget> client_budget(wl_client *client);
	std::shared_ptr<ConvertedImage> allocate(wl_client *client, uint32_t fourcc, int32_t width, int32_t height);
	/** Whether allocate() would stay within the client's and the compositor's budgets. */
	bool affordable(wl_client *client, uint32_t fourcc, int32_t width, int32_t height);
	void schedule(SurfaceState *surface);
	void kick();
	void run_due(uint64_t budget_ns);

	// ---- the commit path (conversion.cpp) ---------------------------------------------------
	/** A new view's state, chosen at its client commit (and its job started, or its wait). */
	CommitState admit_commit(SurfaceState *surface, ConvertedView *view, PixelBuffer *buffer);
	/** Waiting (or new) -> Converting: a job for it, or the running one of the same content. */
	bool start_job(SurfaceState *surface, ConvertedView *view, PixelBuffer *buffer);
	/** A job handed back by the workers (main thread): its views become Ready, or Superseded. */
	void job_done(const std::shared_ptr<ConvertJob> &job);
	/** The surface no longer waits for its job: cancelled when no surface does. */
	void drop_job(SurfaceState *surface);
	/** Starts the waiting commit's job, if the surface has one and no job runs. */
	void start_waiting(SurfaceState *surface);
	/**
	 * -> Superseded (unless Ready): no image, the client's buffer released, its job dropped,
	 * and unlocked (see unlock()).
	 */
	void supersede(SurfaceState *surface, ConvertedView *view);
	/** The surface's waiting and converting commits are superseded. */
	void supersede_all(SurfaceState *surface);
	/** Lets a locked view apply (its state unchanged); wlroots may apply states here, and views may go. */
	void unlock(SurfaceState *surface, ConvertedView *view);
	/** Too many commits behind the surface's locked views: they apply now. */
	void release_early(SurfaceState *surface);
	/** Redraws the surface after its shown image changed outside a commit. */
	void redraw(SurfaceState *surface, ConvertedView *current);
	void settle_frames(SurfaceState *surface, bool redrawn);
	bool flush(SurfaceState *surface, timing::CommitSample *record);
	void bind(SurfaceState *surface, ConvertedView *view);
	void release_source(ConvertedView *view);
	/** Admits an unheld commit of `pixels` to convert, or says it must go to the workers. */
	bool admit(wl_client *client, ConvertedView *view, uint64_t pixels);
	/** The view's admitted pixels are converted (`converted`) or will never be. */
	void settle(ConvertedView *view, bool converted);
	/** Registers a synchronized subsurface's locked view with the root whose commit waits. */
	void root_view(SurfaceState *root, ConvertedView *view);
	/** The view no longer holds its surface's commit: its root may apply (`now`: not inside wlroots). */
	void unroot_view(ConvertedView *view, bool now) {
		if (std::exchange(view->rooted, false)) unroot(view->root, now);
	}
	void unroot(SurfaceRef root, bool now);
	void unlock_root(SurfaceState *root);
};

// ---- shared by the three files ---------------------------------------------------------

inline wl_client *client_of(SurfaceState *s) { return wl_resource_get_client(s->surface->resource); }

/** The view a wlr_buffer is, if it is one of ours. */
ConvertedView *converted_view(wlr_buffer *buffer);
/** The view the surface shows now, if it is one of ours (and still alive). */
ConvertedView *shown_view(wlr_surface *surface);

/** The views' wlr_buffer implementation (views.cpp). */
extern const wlr_buffer_impl kConvertedViewImpl;

/**
 * Converts `buffer`'s pixels into `image` (the buffer's size, in the image's format): the
 * rectangles of `damage` (buffer coordinates, clamped to the buffer), or everything when it is
 * null, reading YCbCr as `color` says (color_state_options()). Counts the upload and its pixels
 * in the plugin's stats and times it in `record` (if not null). False (logged) if the pixels
 * cannot be read or converted (images.cpp).
 */
bool convert_buffer(PixelBuffer *buffer, ConvertedImage *image, const pixman_region32_t *damage,
	const ColorState &color, timing::CommitSample *record);

} // namespace pixelport
