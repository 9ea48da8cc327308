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

/** Bytes of converted images charged to one client, or to the whole plugin. */
struct ImageBudget {
	uint64_t bytes = 0;
	/** Pixels of unheld commits admitted and not yet converted or dropped. */
	uint64_t due_pixels = 0;
	/** Pixels of unheld commits converted since the main loop's last idle pass (`epoch`). */
	uint64_t spent_pixels = 0;
	uint64_t epoch = 0;
};

// A view: the wlr_buffer a surface's state holds instead of a converted-format PixelBuffer.
struct ConvertedView {
	wlr_buffer base; // first, in a standard-layout struct: the wlr_buffer pointer is cast back
	Conversions *conversions = nullptr;
	/** The client's buffer, locked until this commit was converted, superseded or dropped. */
	PixelBuffer *source = nullptr;
	uint64_t generation = 0; // source->generation at the commit
	uint32_t renderer_format = 0; // what the view's image holds
	wlr_surface *surface = nullptr;
	uint64_t surface_id = 0;
	/** What this view shows: bound when its commit is applied. */
	std::shared_ptr<ConvertedImage> image;
	bool bound = false;
	/** Timing record of the apply in progress, between begin and end of data access. */
	timing::CommitSample *timing_record = nullptr;
	/**
	 * The image was chosen at the client's commit (a large commit: held until converted, or
	 * content already converted for another surface), not when the commit is applied.
	 */
	bool early = false;
	bool held = false; // its commit is locked with `lock_seq` until converted
	uint32_t lock_seq = 0;
	bool superseded = false; // a newer buffer commit replaced it before it was converted
	bool converted = false;
	/** A synchronized subsurface's held commit: its root's commits wait for it while held. */
	bool rooted = false;
	wlr_surface *root_surface = nullptr;
	uint64_t root_id = 0;
	/** Unheld: pixels admitted against these budgets until converted or dropped. */
	uint64_t due_pixels = 0;
	std::shared_ptr<ImageBudget> due_budget;
	uint32_t source_format = 0; // the buffer's stored_format at the commit
	/** The commit's colour representation: how its YCbCr is read. */
	ColorState color;
	uint64_t convert_start_ns = 0, convert_end_ns = 0;
	/** The workers' job converting this commit's image, until handed back or stopped. */
	std::shared_ptr<ConvertJob> job;
	size_t job_slot = 0; // this view in the job's `views`
};

// A conversion on the workers, of one commit content for the views that wait for it (the
// commit that started it, and the same content committed to other surfaces meanwhile). The job
// keeps its own lock on the client's buffer (so its pages stay mapped and guarded) and its own
// reference on the image until it is handed back, whatever happens to the views meanwhile; it
// is cancelled when no view waits for it any more.
struct ViewJob : ConvertJob {
	PixelBuffer *source = nullptr; // locked by the job
	std::shared_ptr<ConvertedImage> image;
	std::vector<ConvertedView *> views; // null where a view stopped waiting
	size_t live = 0; // views not null
};

static_assert(std::is_standard_layout_v<ConvertedView>);

struct Conversions::Impl {
	Conversions *owner = nullptr;
	std::shared_ptr<ImageBudget> total = std::make_shared<ImageBudget>();
	/** Surfaces with a conversion due (lazy mode), in apply order; by id (they may go). */
	struct Due {
		wlr_surface *surface;
		uint64_t id;
	};
	std::vector<Due> due;
	/** Converts held commits off the main thread (null if it could not start). */
	std::unique_ptr<ConvertWorkers> workers;
	/** Surfaces whose held commits were all superseded by an unheld one: unlock them. */
	std::vector<Due> releases;
	/** Roots whose synchronized descendants may have nothing held any more: unlock them. */
	std::vector<Due> root_releases;
	/** Counts idle passes: ImageBudget::spent_pixels is of the pass it names. */
	uint64_t epoch = 1;
	wl_event_source *idle = nullptr;
	wl_event_source *timer = nullptr;
	struct Output {
		wlr_output *output;
		Listener destroy;
	};
	std::vector<std::unique_ptr<Output>> outputs;

	std::shared_ptr<ImageBudget> client_budget(wl_client *client);
	std::shared_ptr<ConvertedImage> allocate(wl_client *client, uint32_t fourcc, int32_t width, int32_t height);
	/** Whether allocate() would stay within the client's and the compositor's budgets. */
	bool affordable(wl_client *client, uint32_t fourcc, int32_t width, int32_t height);
	void schedule(SurfaceState *surface);
	void kick();
	void run_due(uint64_t budget_ns);
	/** Hands the held view's conversion to the workers; false if they cannot take it. */
	bool start_job(SurfaceState *surface, ConvertedView *view, PixelBuffer *buffer);
	/** A job handed back by the workers (main thread). */
	void job_done(const std::shared_ptr<ConvertJob> &job);
	/** The view waits for `job` too (the same commit content on another surface). */
	void join_job(ConvertedView *view, const std::shared_ptr<ConvertJob> &job);
	/**
	 * The view no longer waits for its job (it goes, or is superseded or dropped); the job is
	 * cancelled when nobody waits for it. `unless_started`: only if no band of it has started
	 * (returns false, changing nothing, when one has).
	 */
	bool stop_job(ConvertedView *view, bool unless_started = false);
	void release_ready(SurfaceState *surface);
	void supersede_held(SurfaceState *surface, ConvertedView *newer);
	void replace_held(SurfaceState *surface, ConvertedView *newer);
	void hold(SurfaceState *surface, ConvertedView *view, PixelBuffer *buffer);
	bool flush(SurfaceState *surface, timing::CommitSample *record);
	void bind(SurfaceState *surface, ConvertedView *view);
	void release_source(ConvertedView *view);
	/** Admits an unheld commit of `pixels` to convert, or says it must be held and banded. */
	bool admit(wl_client *client, ConvertedView *view, uint64_t pixels);
	/** The view's admitted pixels are converted (`converted`) or will never be. */
	void settle(ConvertedView *view, bool converted);
	/** Registers a synchronized subsurface's held view with the root whose commits wait. */
	void root_view(SurfaceState *root, ConvertedView *view);
	/** The view no longer holds its surface's commit: its root may apply (`now`: we are in run_due). */
	void unroot_view(ConvertedView *view, bool now) {
		if (std::exchange(view->rooted, false)) unroot({view->root_surface, view->root_id}, now);
	}
	void unroot(Due root, bool now);
	void unlock_root(SurfaceState *root);
};

// ---- shared by the three files ---------------------------------------------------------

inline wl_client *client_of(SurfaceState *s) { return wl_resource_get_client(s->surface->resource); }

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
