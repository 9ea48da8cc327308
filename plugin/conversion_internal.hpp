// Inside the conversion module (conversion.cpp, views.cpp, images.cpp): what they share, the
// views, the workers' jobs and the budgets' counters. Nothing outside those files includes it.
#pragma once

#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "buffer.hpp"
#include "commit_state.hpp"
#include "conversion.hpp"
#include "plugin.hpp"
#include "surface_state.hpp"
#include "workers.hpp"

namespace pixelport {

// A view: the wlr_buffer a surface's state holds instead of a converted-format PixelBuffer.
struct ConvertedView {
	wlr_buffer base; // first, in a standard-layout struct: the wlr_buffer pointer is cast back
	Conversions *conversions = nullptr;
	/** The client's buffer, locked while Due, Waiting or Converting (a job has a lock of its own). */
	PixelBuffer *source = nullptr;
	uint64_t generation = 0; // source->generation at the commit
	uint32_t renderer_format = 0; // what the view's image holds
	SurfaceRef surface;
	/**
	 * The surface's commit number (SurfaceState::commits): orders its views, and names its hold
	 * in the ledger (HoldReason::Conversion while Waiting or Converting on a surface with a role).
	 */
	uint64_t seq = 0;
	/** Changed only by Conversions::Impl::move(), along commit_edges(). */
	CommitState state = CommitState::New;
	/** wlroots applied its state (bind() ran). */
	bool applied = false;
	/** Ready: what it shows. Converting: what its job writes (never shown until Ready). */
	std::shared_ptr<ConvertedImage> image;
	/** Timing record of the apply in progress, between begin and end of data access. */
	timing::CommitSample *timing_record = nullptr;
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
	/** job_rows_done() ran: the image is no longer being written (finished early, or handed back). */
	bool rows_settled = false;
};

static_assert(std::is_standard_layout_v<ConvertedView>);

struct Conversions::Impl {
	Conversions *owner = nullptr;
	std::shared_ptr<ImageBudget> total = std::make_shared<ImageBudget>();
	/** Surfaces with a conversion due (lazy mode), in apply order. */
	std::vector<SurfaceRef> due;
	/** Converts held commits off the main thread (null if it could not start). */
	std::unique_ptr<ConvertWorkers> workers;
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
	/**
	 * Moves the view to `to` along commit_edges(), the one place a commit's state changes. An
	 * illegal move aborts where assertions are on (debug and test builds); elsewhere it is
	 * logged and the commit is superseded instead (no image, its buffer released, its hold
	 * cleared at the next idle), which never shows a wrong image nor keeps a client waiting.
	 */
	void move(SurfaceState *surface, ConvertedView *view, CommitState to);
	/** A new view's state, chosen at its client commit (and its job started, or its wait). */
	void admit_commit(SurfaceState *surface, ConvertedView *view, PixelBuffer *buffer);
	/** Waiting (or New) -> Converting: a job for it, or the running one of the same content. */
	void start_job(SurfaceState *surface, ConvertedView *view, PixelBuffer *buffer);
	/** A job handed back by the workers (main thread): its views become Ready, or Superseded. */
	void job_done(const std::shared_ptr<ConvertJob> &job);
	/** No thread writes the job's image any more: it is settled (filled, or not this content). */
	void job_rows_done(ViewJob *job);
	/** The surface no longer waits for its job: cancelled when no surface does. */
	void drop_job(SurfaceState *surface);
	/** Starts the waiting commit's job, if the surface has one and no job runs. */
	void start_waiting(SurfaceState *surface);
	/**
	 * A newer commit replaces `view` (waiting, or converting for a native buffer or a null
	 * attach): Superseded, no image, its job dropped, and its hold waits for the next commit
	 * (HoldReason::Successor), so both apply together. It keeps its buffer until it goes.
	 */
	void supersede(SurfaceState *surface, ConvertedView *view);
	/** A native buffer or a null attach replaces the surface's waiting and converting commits. */
	void supersede_all(SurfaceState *surface);
	/**
	 * The view's Conversion reason clears in the hold ledger (its commit may apply), if it
	 * held one.
	 */
	void unhold(SurfaceState *surface, ConvertedView *view, Release when);
	/**
	 * The applied, incomplete `view` (let go before its conversion ended, or superseded and
	 * shown all the same) is completed now on this thread: its job finished (the rows left
	 * converted here, those under way on workers waited for), or its pixels converted into an
	 * image of its own. True when it is Ready after.
	 */
	bool complete_now(SurfaceState *surface, ConvertedView *view);
	/** Redraws the surface after its shown image changed outside a commit. */
	void redraw(SurfaceState *surface, ConvertedView *current);
	void settle_frames(SurfaceState *surface, bool redrawn);
	bool flush(SurfaceState *surface, timing::CommitSample *record);
	/**
	 * Whether every held commit of the surface could apply now and leave it showing a complete
	 * image without converting on the main thread (HoldLedger::set_cheap_release()).
	 */
	static bool shows_cheaply(void *data, SurfaceState *surface);
	/** The surface's shown image is complete and has the view's size: what the view shows until its own is. */
	bool shows_last(SurfaceState *surface, ConvertedView *view);
	void bind(SurfaceState *surface, ConvertedView *view);
	void release_source(ConvertedView *view);
	/** Admits an unheld commit of `pixels` to convert, or says it must go to the workers. */
	bool admit(wl_client *client, ConvertedView *view, uint64_t pixels);
	/** The view's admitted pixels are converted (`converted`) or will never be. */
	void settle(ConvertedView *view, bool converted);
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
