// Which thread converts a commit, and when: admission against the main thread's allowance, the
// workers' jobs, held commits and synchronized subsurfaces' roots, the idle queue of due views,
// and the calls conversion.hpp lists (docs/design.md, "The commit path").
//
// A commit's state changes only in move(), along the table of commit_state.cpp (docs/design.md
// prints it). Orthogonal to the state: its hold in the ledger (hold.hpp: HoldReason::Conversion
// while Waiting or Converting on a surface with a role; Successor once superseded by a newer
// held commit) and `applied`. A view shows its own image only when Ready; applied before (no
// role, let go), it shows the surface's last complete image where that has its size, and is
// completed on the main thread before it is read where not (complete_now()); the surface is
// redrawn when its job ends.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdlib>

#include "conversion_internal.hpp"
#include "hold.hpp"
#include "timing.hpp"
#include "wlr_compat.hpp"

namespace pixelport {

namespace {

// One idle pass converts until this much time is spent, then yields to other clients for
// kResumeMs; a render that needs a surface converts it at once regardless.
constexpr uint64_t kIdleBudgetNs = 4'000'000;
constexpr int kResumeMs = 1;
// The main thread converts a commit itself only when it updates the surface's own image (its
// pages faulted in already) with at most this many pixels: handing a commit to a worker and
// applying it when handed back costs the main thread about what converting this many pixels
// does (docs/design.md, "Why 64 Ki pixels"). Everything else is converted on a worker.
constexpr uint64_t kInlinePixels = uint64_t{1} << 16;
// The same limit in bytes of the client's rows (stride x rows): a narrow buffer with a huge
// stride has few pixels but a page per row to fault in, which costs more than its pixels.
constexpr uint64_t kInlineSpanBytes = kInlinePixels * 4;
// A worker's band: about 1 ms of converting (less on warm pages), the longest another
// client's frame waits for a worker (workers.hpp).
constexpr uint64_t kBandPixels = uint64_t{1} << 18;
constexpr uint64_t kBandSpanBytes = kBandPixels * 4;
// What commits converted on the main thread may leave to be converted in one go (at an apply,
// in an idle pass or in a render), counted from their admission until the next idle pass
// after their conversion: a client one small commit's worth, all clients together two.
// Commits beyond go to the workers, so 40 surfaces committing at once cost the main thread no
// more than two small conversions.
constexpr uint64_t kDueClientPixels = kInlinePixels;
constexpr uint64_t kDueTotalPixels = 2 * kInlinePixels;
// Frame callbacks held for commits shown late (settle_frames): beyond this many, the client is
// not waiting for them, and they go out as they would without the plugin.
constexpr size_t kMaxHeldFrames = 64;

// Bytes per row of the client's buffer when it lives in a wl_shm pool (its first plane); 0 when
// not (stream buffers are the plugin's own memory).
uint64_t shm_stride(PixelBuffer *buffer) {
	wlr_shm_attributes attrs;
	return buffer->get_shm(&attrs) && attrs.stride > 0 ? static_cast<uint64_t>(attrs.stride) : 0;
}

// Upper bounds on the buffer damage wlroots computes from a finalized pending state when it
// applies (wlroots' surface_update_damage: the surface damage through the viewport's dst-to-src
// scale and src offset, the buffer scale and the inverse transform, united with the buffer
// damage), clipped to the buffer. Pixels and rows: a tall, narrow damage on a wide-stride buffer
// has few pixels but a row of the pool per row. Computed in doubles: no overflow whatever the
// scale or viewport.
struct DamageBound {
	uint64_t pixels = 0;
	uint64_t rows = 0;
};

DamageBound pending_damage_bound(const wlr_surface_state &st, int32_t width, int32_t height) {
	const double w = width, h = height;
	const pixman_box32_t *b = pixman_region32_extents(&st.buffer_damage);
	double bw = std::clamp<double>(static_cast<double>(b->x2) - b->x1, 0, w);
	double bh = std::clamp<double>(static_cast<double>(b->y2) - b->y1, 0, h);
	double pixels = bw * bh, rows = bh;
	const pixman_box32_t *d = pixman_region32_extents(&st.surface_damage);
	double dw = std::max<double>(0, static_cast<double>(d->x2) - d->x1),
	       dh = std::max<double>(0, static_cast<double>(d->y2) - d->y1);
	if (dw > 0 && dh > 0) {
		const bool swapped = (st.transform & 1) != 0; // 90 and 270, flipped or not
		const double scale = std::max(1, st.scale);
		if (st.viewport.has_dst) {
			// The viewport's source size in surface coordinates (wlroots' surface_state_viewport_src_size).
			double src_w =
				st.viewport.has_src ? st.viewport.src.width : std::floor((swapped ? h : w) / scale);
			double src_h =
				st.viewport.has_src ? st.viewport.src.height : std::floor((swapped ? w : h) / scale);
			dw *= src_w / std::max(1, st.viewport.dst_width);
			dh *= src_h / std::max(1, st.viewport.dst_height);
		}
		dw *= scale;
		dh *= scale;
		if (swapped) std::swap(dw, dh);
		// Each scaling step rounds outwards: a pixel more on each side.
		dw = std::isfinite(dw) ? std::min(w, std::ceil(dw) + 2) : w;
		dh = std::isfinite(dh) ? std::min(h, std::ceil(dh) + 2) : h;
		pixels += dw * dh;
		rows += dh;
	}
	return {static_cast<uint64_t>(pixels), static_cast<uint64_t>(std::min(rows, h))};
}

// Counts of a pass before `epoch` are of a pass that is over.
void refresh(ImageBudget &budget, uint64_t epoch) {
	if (budget.epoch != epoch) {
		budget.epoch = epoch;
		budget.spent_pixels = 0;
	}
}

} // namespace

ConvertedView *converted_view(wlr_buffer *buffer) {
	return buffer != nullptr && buffer->impl == &kConvertedViewImpl ? reinterpret_cast<ConvertedView *>(buffer)
									: nullptr;
}

ConvertedView *shown_view(wlr_surface *surface) {
	// While its state applies, the buffer is the state's; after, wlroots keeps only the
	// texture's buffer, whose source lives while the texture reads it (pixman).
	if (surface->current.buffer != nullptr) return converted_view(surface->current.buffer);
	return surface->buffer != nullptr ? converted_view(surface->buffer->source) : nullptr;
}

void Conversions::Impl::release_source(ConvertedView *view) {
	settle(view, false);
	if (view->source == nullptr) return;
	PixelBuffer *source = view->source;
	view->source = nullptr;
	wlr_buffer_unlock(source->base()); // the last lock releases the wl_buffer to the client
}

bool Conversions::Impl::admit(wl_client *client, ConvertedView *view, uint64_t pixels) {
	std::shared_ptr<ImageBudget> mine = client_budget(client);
	refresh(*mine, epoch);
	refresh(*total, epoch);
	const uint64_t client_used = mine->due_pixels + mine->spent_pixels;
	const uint64_t total_used = total->due_pixels + total->spent_pixels;
	// The first always fits: a small commit alone is converted in one go.
	if (pixels > 0 &&
		((client_used > 0 && client_used + pixels > kDueClientPixels) ||
			(total_used > 0 && total_used + pixels > kDueTotalPixels))) {
		return false;
	}
	mine->due_pixels += pixels;
	total->due_pixels += pixels;
	view->due_pixels = pixels;
	view->due_budget = std::move(mine);
	return true;
}

void Conversions::Impl::settle(ConvertedView *view, bool converted) {
	if (view->due_budget == nullptr) return;
	std::shared_ptr<ImageBudget> mine = std::move(view->due_budget);
	const uint64_t pixels = std::exchange(view->due_pixels, 0);
	mine->due_pixels -= pixels;
	total->due_pixels -= pixels;
	if (converted && pixels > 0) {
		// Spent in this pass: the next idle pass starts a new one.
		refresh(*mine, epoch);
		refresh(*total, epoch);
		mine->spent_pixels += pixels;
		total->spent_pixels += pixels;
		kick();
	}
}

// ---- the idle pass ---------------------------------------------------------------------------

void Conversions::Impl::schedule(SurfaceState *s) {
	if (!s->conversion.enqueue()) return;
	due.push_back(s->ref());
	kick();
}

void Conversions::Impl::kick() {
	if (idle == nullptr) {
		wl_event_loop *loop = wl_display_get_event_loop(owner->plugin()->display);
		idle = wl_event_loop_add_idle(
			loop,
			[](void *data) {
				auto *impl = static_cast<Impl *>(data);
				impl->idle = nullptr;
				impl->run_due(kIdleBudgetNs);
			},
			this);
	}
}

void Conversions::Impl::run_due(uint64_t budget_ns) {
	pixelport_plugin *plugin = owner->plugin();
	uint64_t start = monotonic_ns();
	// Each due conversion is bounded (kInlinePixels): a pass does one at least.
	size_t i = 0;
	for (; i < due.size(); i++) {
		if (budget_ns != 0 && i > 0 && monotonic_ns() - start >= budget_ns) break;
		SurfaceState *s = due[i].get();
		if (s == nullptr) continue;
		s->conversion.dequeued();
		if (s->conversion.pending() != nullptr) flush(s, plugin->timing->converting(s));
	}
	due.erase(due.begin(), due.begin() + static_cast<std::ptrdiff_t>(i));
	// What unheld commits spent until now is over: the next dispatch starts afresh.
	epoch++;
	if (!due.empty()) {
		// Let other clients' requests run, then go on.
		if (timer == nullptr) {
			timer = wl_event_loop_add_timer(
				wl_display_get_event_loop(plugin->display),
				[](void *data) {
					auto *impl = static_cast<Impl *>(data);
					impl->run_due(kIdleBudgetNs);
					return 0;
				},
				this);
		}
		if (timer != nullptr) wl_event_source_timer_update(timer, kResumeMs);
	}
}

// ---- the one place a commit's state changes ---------------------------------------------------

void Conversions::Impl::move(SurfaceState *s, ConvertedView *view, CommitState to) {
	const CommitState from = view->state;
	if (commit_edge_allowed(from, to)) {
		view->state = to;
		return;
	}
	wlr_log(WLR_ERROR, "pixelport: illegal commit state move %s -> %s (commit %llu)", commit_state_name(from),
		commit_state_name(to), static_cast<unsigned long long>(view->seq));
#ifndef NDEBUG
	abort();
#endif
	// Recovered: a commit that is not final goes without an image, its buffer released and its
	// hold cleared, so nothing wrong shows and no client waits for it.
	if (from == CommitState::Ready || from == CommitState::Superseded) return;
	view->state = CommitState::Superseded;
	view->image.reset();
	release_source(view);
	if (s != nullptr) {
		SurfaceConversion &c = s->conversion;
		if (c.waiting() == view) c.take_waiting();
		if (c.job_view() == view) drop_job(s);
		unhold(s, view, Release::Idle);
	}
}

// ---- the commit path: jobs ---------------------------------------------------------------------

void Conversions::Impl::start_job(SurfaceState *s, ConvertedView *view, PixelBuffer *buffer) {
	SurfaceConversion &c = s->conversion;
	const int32_t w = buffer->width(), h = buffer->height();
	auto fits = [&](const std::shared_ptr<ConvertedImage> &image) {
		return image != nullptr && image->fourcc == view->renderer_format && image->width == w &&
			image->height == h;
	};
	// Converted already, or being converted by a job other surfaces still wait for: this one
	// takes it, or waits for that job too.
	std::shared_ptr<ConvertedImage> shared = buffer->pure_image.lock();
	std::shared_ptr<ConvertJob> writer = shared != nullptr ? shared->writer.lock() : nullptr;
	const bool pure = fits(shared) && shared->pure_source == buffer &&
		shared->pure_generation == view->generation && shared->pure_color == view->color;
	if (pure && shared->filled) {
		view->image = std::move(shared);
		move(s, view, CommitState::Ready);
		release_source(view);
		return;
	}
	if (pure && writer != nullptr && !static_cast<ViewJob *>(writer.get())->surfaces.empty()) {
		static_cast<ViewJob *>(writer.get())->surfaces.push_back(s->ref());
		view->image = std::move(shared);
		move(s, view, CommitState::Converting);
		c.set_job(std::move(writer), view->seq, view);
		return;
	}
	// Older content of this buffer is often the surface's spare: no reference of ours may keep
	// take_spare() from handing it over.
	shared.reset();
	std::shared_ptr<ConvertedImage> image = c.take_spare(view->renderer_format, w, h);
	if (image != nullptr) {
		image->filled = false; // nobody shows it any more
	} else {
		// A spare of another size is only memory now, when the budget is short.
		if (!affordable(client_of(s), view->renderer_format, w, h)) c.drop_spare();
		image = allocate(client_of(s), view->renderer_format, w, h);
	}
	auto job = std::make_shared<ViewJob>();
	if (image == nullptr || !buffer->source(&job->src)) {
		// Over budget (the client has its error) or pixels that cannot be read: nothing of
		// this commit to show.
		move(s, view, CommitState::Superseded);
		owner->plugin()->stats.add(Stat::SkippedConversions);
		release_source(view);
		return;
	}
	image->pure_source = buffer;
	image->pure_generation = view->generation;
	image->pure_color = view->color;
	buffer->pure_image = image;
	job->dst.fourcc = image->fourcc;
	job->dst.width = image->width;
	job->dst.height = image->height;
	job->dst.data = image->data;
	job->dst.stride = image->stride;
	job->dst.size = image->size;
	job->options = color_state_options(
		view->color, buffer->stored_format, image->width, image->height, owner->plugin()->convert_options);
	job->client = client_of(s);
	uint64_t band_rows = kBandPixels / static_cast<uint64_t>(std::max(1, image->width));
	if (uint64_t stride = shm_stride(buffer); stride > 0) band_rows = std::min(band_rows, kBandSpanBytes / stride);
	job->band_rows = static_cast<int32_t>(std::min<uint64_t>(band_rows, INT32_MAX - 3));
	job->source = buffer;
	wlr_buffer_lock(buffer->base());
	job->image = image;
	image->converting = true;
	image->writer = job;
	job->surfaces.push_back(s->ref());
	view->image = std::move(image);
	move(s, view, CommitState::Converting);
	c.set_job(job, view->seq, view);
	workers->submit(job);
}

void Conversions::Impl::drop_job(SurfaceState *s) {
	std::shared_ptr<ConvertJob> job = s->conversion.take_job();
	if (job == nullptr) return;
	auto *j = static_cast<ViewJob *>(job.get());
	std::erase(j->surfaces, s->ref());
	if (!j->surfaces.empty() || j->handed_back) return;
	// Nobody waits for it: the workers stop it, and its image stops counting against the
	// client at once (it is unmapped when the job is handed back, a band later at most).
	workers->cancel(job);
	j->image->pure_source = nullptr;
	j->image->uncharge();
}

void Conversions::Impl::start_waiting(SurfaceState *s) {
	SurfaceConversion &c = s->conversion;
	if (c.job() != nullptr || c.waiting() == nullptr) return;
	ConvertedView *view = c.take_waiting();
	start_job(s, view, view->source);
	if (view->state == CommitState::Converting) return;
	// Ready at once (content converted for another surface) or Superseded: it may apply.
	if (view->applied && view->state == CommitState::Ready && converted_view(s->surface->current.buffer) == view) {
		redraw(s, view);
	}
	unhold(s, view, Release::Now);
}

// The rows a worker wrote are the image's now: what every view of the job may show.
void Conversions::Impl::job_rows_done(ViewJob *job) {
	if (std::exchange(job->rows_settled, true)) return;
	PixelBuffer *source = job->source;
	ConvertedImage *image = job->image.get();
	source->after_read(); // a shrunk pool read as zeroes: say so
	image->converting = false;
	image->writer.reset();
	if (job->ok) {
		owner->plugin()->stats.add(Stat::ConvertedUploads);
		owner->plugin()->stats.add(Stat::ConvertedPixels,
			static_cast<uint64_t>(image->width) * static_cast<uint64_t>(image->height));
		image->filled = image->pure_source == source;
	} else {
		if (!job->cancelled) {
			wlr_log(WLR_ERROR, "pixelport: converting %s %dx%d failed",
				core::format_name(source->stored_format), image->width, image->height);
		}
		image->pure_source = nullptr; // not this content: nobody shares it
	}
}

void Conversions::Impl::job_done(const std::shared_ptr<ConvertJob> &done) {
	auto *job = static_cast<ViewJob *>(done.get());
	PixelBuffer *source = job->source;
	std::shared_ptr<ConvertedImage> image = job->image;
	job->handed_back = true;
	job_rows_done(job);
	// Each surface leaves the job's list as it is served: one served may apply states that drop
	// another's job (drop_job then sees that surface still listed, and cancels nothing).
	while (!job->surfaces.empty()) {
		const SurfaceRef ref = job->surfaces.front();
		job->surfaces.erase(job->surfaces.begin());
		SurfaceState *s = ref.get();
		if (s == nullptr || s->conversion.job() != done) continue;
		SurfaceConversion &c = s->conversion;
		const uint64_t seq = c.job_seq();
		ConvertedView *view = c.job_view();
		c.take_job();
		// Applied before its conversion was done (or a later commit that shows what the
		// surface showed): the surface shows this image from now on, redrawn. A view completed
		// on the main thread when read shows its own already.
		ConvertedView *current = shown_view(s->surface);
		const bool stale = job->ok && current != nullptr && current->applied &&
			((current == view && view->state == CommitState::Converting) ||
				(current->seq > seq && current->state != CommitState::Ready &&
					current->state != CommitState::Due));
		if (view != nullptr && view->state == CommitState::Converting) {
			if (job->ok) {
				view->convert_start_ns = job->start_ns;
				view->convert_end_ns = job->end_ns;
				move(s, view, CommitState::Ready);
			} else {
				move(s, view, CommitState::Superseded);
				view->image.reset();
				owner->plugin()->stats.add(Stat::SkippedConversions);
			}
			release_source(view);
		}
		if (stale) {
			c.keep_spare(image);
			c.show(image, false, 0); // the next commit converts in full: its upload too
			redraw(s, current);
		}
		// This commit may apply now (with the superseded ones before it): it shows its image.
		if (view != nullptr) unhold(s, view, Release::Now);
		start_waiting(s);
		settle_frames(s, stale);
	}
	wlr_buffer_unlock(source->base()); // the job's lock, last: it may free the buffer
}

// ---- the commit path: holding and letting go ----------------------------------------------------

void Conversions::Impl::unhold(SurfaceState *s, ConvertedView *view, Release when) {
	owner->plugin()->holds->clear(s, view->seq, HoldReason::Conversion, when);
}

void Conversions::Impl::supersede(SurfaceState *s, ConvertedView *view) {
	SurfaceConversion &c = s->conversion;
	if (c.waiting() == view) c.take_waiting();
	if (c.job_view() == view) drop_job(s);
	move(s, view, CommitState::Superseded);
	view->image.reset();
	owner->plugin()->stats.add(Stat::SkippedConversions);
	// Held still: it applies together with the commit that replaced it, so nothing shows it.
	// It keeps its buffer all the same until it goes: a lock that is not the plugin's (a
	// synchronized subsurface's) may keep that commit back, and then it shows, completed on the
	// main thread (complete_now()).
	owner->plugin()->holds->replace(s, view->seq, HoldReason::Conversion, HoldReason::Successor);
}

void Conversions::Impl::supersede_all(SurfaceState *s) {
	SurfaceConversion &c = s->conversion;
	if (ConvertedView *waiting = c.waiting()) supersede(s, waiting);
	ConvertedView *converting = c.job_view();
	if (converting != nullptr && converting->state == CommitState::Converting) {
		supersede(s, converting);
	} else {
		drop_job(s); // its view applied and is gone, or was completed on the main thread
	}
}

bool Conversions::Impl::complete_now(SurfaceState *s, ConvertedView *view) {
	SurfaceConversion &c = s->conversion;
	// A client going shows nothing more: the cached states wlroots applies as its surfaces'
	// roles go (a subsurface's, as its parent goes) are never converted on the main thread.
	if (client_going(client_of(s))) return view->state == CommitState::Ready;
	// Nor those that apply now because what follows hides them (a null attach, another buffer,
	// a role object's destroy): should they show later, they are completed then.
	if (owner->plugin()->holds->applying_hidden(s)) return view->state == CommitState::Ready;
	if (view->state == CommitState::Converting) {
		if (c.job_view() != view || workers == nullptr) return false;
		const std::shared_ptr<ConvertJob> job = c.job();
		auto *vj = static_cast<ViewJob *>(job.get());
		if (!vj->handed_back && !vj->rows_settled) {
			// The rows left are converted here, those under way on workers waited for; the job
			// is handed back as usual after (job_done), with its rows settled.
			workers->finish(job);
			job_rows_done(vj);
		}
		if (!job->ok) return false;
		view->convert_start_ns = job->start_ns;
		view->convert_end_ns = job->end_ns;
		move(s, view, CommitState::Ready);
		release_source(view);
	} else if (view->state == CommitState::Waiting || (view->state == CommitState::Superseded && view->source)) {
		if (c.waiting() == view) c.take_waiting();
		PixelBuffer *source = view->source;
		const int32_t w = view->base.width, h = view->base.height;
		std::shared_ptr<ConvertedImage> image = c.take_spare(view->renderer_format, w, h);
		if (image == nullptr) {
			if (!affordable(client_of(s), view->renderer_format, w, h)) c.drop_spare();
			image = allocate(client_of(s), view->renderer_format, w, h);
		}
		if (source == nullptr || image == nullptr ||
			!convert_buffer(source, image.get(), nullptr, view->color, nullptr)) {
			move(s, view, CommitState::Superseded);
			view->image.reset();
			owner->plugin()->stats.add(Stat::SkippedConversions);
			release_source(view);
			return false;
		}
		image->pure_source = source;
		image->pure_generation = view->generation;
		image->pure_color = view->color;
		image->filled = true;
		source->pure_image = image;
		view->image = std::move(image);
		move(s, view, CommitState::Ready);
		release_source(view);
	} else {
		return view->state == CommitState::Ready;
	}
	c.keep_spare(view->image);
	c.show(view->image, view->image->filled, view->source_format, view->color);
	// Frame callbacks held for its pixels go with the render that reads them now.
	c.release_frames(&s->surface->current.frame_callback_list);
	owner->plugin()->stats.add(Stat::MainThreadCompletions);
	return true;
}

void Conversions::Impl::redraw(SurfaceState *s, ConvertedView *current) {
	wlr_surface *surface = s->surface;
	if (surface->role == nullptr || surface->buffer == nullptr) return; // shown nowhere
	s->redrawing = true; // the plugin's own commit listeners skip it
	wlr_compat::surface_redraw(surface, current != nullptr ? &current->base : nullptr, !owner->lazy());
	s->redrawing = false;
	owner->plugin()->stats.add(Stat::Redraws);
}

// A frame callback tells its client that the commit was shown. Those of commits applied before
// their conversion ended (they show what the surface showed before) are held until the surface
// shows the image of its newest applied commit, or until nothing more will come of it, and then
// done at once (the redraw is queued by then); a client that waits for its frames then commits
// at the rate its frames convert. At most kMaxHeldFrames are held: beyond, the oldest are done
// (a client that makes that many commits without waiting waits for none of those), and those of
// the newest commits still wait for their pixels.
void Conversions::Impl::settle_frames(SurfaceState *s, bool redrawn) {
	wlr_surface *surface = s->surface;
	SurfaceConversion &c = s->conversion;
	ConvertedView *current = shown_view(surface);
	if (current != nullptr &&
		(current->state == CommitState::Waiting || current->state == CommitState::Converting)) {
		c.hold_frames(&surface->current.frame_callback_list);
		if (c.held_frames() > kMaxHeldFrames) {
			c.send_frames_done(static_cast<uint32_t>(monotonic_ns() / 1000000), kMaxHeldFrames);
		}
		return;
	} else if (c.held_frames() == 0) {
		return;
	} else if (!redrawn) {
		redraw(s, current);
	}
	c.send_frames_done(static_cast<uint32_t>(monotonic_ns() / 1000000));
}

// ---- Conversions ------------------------------------------------------------------------

// Whether letting go every held commit of the surface now leaves it showing a complete image
// without converting on the main thread (the ledger asks, for a client past its commits-behind
// limit): the newest cached state that attaches a buffer shows a native buffer or nothing, its
// own image (Ready; or Due: a small update, converted at the apply), or the last complete image
// the surface has of its size by then.
bool Conversions::Impl::shows_cheaply(void *data, SurfaceState *s) {
	const std::shared_ptr<ConvertedImage> &shown = s->conversion.image();
	int32_t width = -1, height = -1; // of the surface's complete image, as the states apply
	if (shown != nullptr && !shown->converting) {
		width = shown->width;
		height = shown->height;
	}
	bool attaches = false;
	const ConvertedView *last = nullptr;
	wlr_surface_state *state;
	wl_list_for_each(state, &s->surface->cached, cached_state_link) {
		if (!(state->committed & WLR_SURFACE_STATE_BUFFER)) continue;
		attaches = true;
		last = converted_view(state->buffer);
		if (last == nullptr) {
			width = height = -1; // a native buffer or a null attach: the image goes
		} else if (last->state == CommitState::Ready) {
			width = last->base.width;
			height = last->base.height;
		}
	}
	(void)data;
	if (!attaches || last == nullptr || last->state == CommitState::Ready || last->state == CommitState::Due) {
		return true;
	}
	return last->base.width == width && last->base.height == height;
}

std::unique_ptr<Conversions> Conversions::create(pixelport_plugin *plugin) {
	std::unique_ptr<Conversions> c(new Conversions());
	c->plugin_ = plugin;
	c->lazy_ = wlr_renderer_is_pixman(plugin->renderer);
	c->impl_ = std::make_unique<Impl>();
	c->impl_->owner = c.get();
	const uint32_t threads = plugin->options.convert_threads;
	Impl *impl = c->impl_.get();
	c->impl_->workers = ConvertWorkers::create(wl_display_get_event_loop(plugin->display),
		threads != 0 ? threads : ConvertWorkers::default_threads(),
		[impl](const std::shared_ptr<ConvertJob> &job) { impl->job_done(job); });
	if (c->impl_->workers == nullptr) {
		wlr_log(WLR_ERROR, "pixelport: no conversion worker could start; converting on the main thread");
	}
	plugin->holds->set_cheap_release(&Impl::shows_cheaply, impl);
	return c;
}

Conversions::~Conversions() {
	impl_->workers.reset(); // hands back what is under way (its views are gone with the clients)
	if (impl_->idle != nullptr) wl_event_source_remove(impl_->idle);
	if (impl_->timer != nullptr) wl_event_source_remove(impl_->timer);
}

void Conversions::surface_client_commit(SurfaceState *s, PixelBuffer *buffer, uint32_t renderer_format) {
	SurfaceConversion &c = s->conversion;
	if (buffer == nullptr) {
		// A buffer we do not convert, or a null attach: the commits we hold apply with it,
		// unconverted.
		impl_->supersede_all(s);
		return;
	}
	wlr_surface *surface = s->surface;
	auto *view = new ConvertedView();
	view->conversions = this;
	view->source = buffer; // takes over the pending state's lock
	view->generation = buffer->generation;
	view->renderer_format = renderer_format;
	view->surface = s->ref();
	view->seq = s->commits;
	view->source_format = buffer->stored_format;
	view->color = s->color;
	wlr_buffer_init(&view->base, &kConvertedViewImpl, buffer->width(), buffer->height());
	surface->pending.buffer = wlr_buffer_lock(&view->base);
	wlr_buffer_drop(&view->base); // freed with its last lock
	// At most one commit waits behind the surface's job: this one replaces it.
	if (ConvertedView *older = c.waiting()) impl_->supersede(s, older);
	impl_->admit_commit(s, view, buffer);
	if (view->state == CommitState::Waiting || view->state == CommitState::Converting) {
		// Held until converted (a surface without a role is not: the ledger says so).
		plugin_->holds->hold(s, HoldReason::Conversion);
	}
	if (view->state == CommitState::Waiting) c.set_waiting(view);
}

// Chooses the new view's state: converted when applied (small, within the allowance), or on
// the workers now, or once the surface's running job ends (see conversion.hpp).
void Conversions::Impl::admit_commit(SurfaceState *s, ConvertedView *view, PixelBuffer *buffer) {
	SurfaceConversion &c = s->conversion;
	int32_t w = buffer->width(), h = buffer->height();
	const uint64_t stride = shm_stride(buffer);
	// Stream bytes still to come (straight alpha on a stream buffer): the stream holds the
	// commit until they are in, and it is converted in one go when applied. Without workers,
	// every commit is converted so.
	if (buffer->incomplete() || workers == nullptr) return move(s, view, CommitState::Due);
	// Cheap enough to convert in one go when applied: few pixels in few bytes of the pool.
	auto small = [&](uint64_t pixels, uint64_t rows) {
		return pixels <= kInlinePixels && stride * rows <= kInlineSpanBytes;
	};
	auto fits = [&](const std::shared_ptr<ConvertedImage> &image) {
		return image != nullptr && image->fourcc == view->renderer_format && image->width == w &&
			image->height == h;
	};
	std::shared_ptr<ConvertedImage> shared = buffer->pure_image.lock();
	const bool pure = fits(shared) && shared->pure_source == buffer &&
		shared->pure_generation == view->generation && shared->pure_color == view->color;
	shared.reset();
	// Nothing of the surface's is under way: a commit may be converted in place when applied.
	const bool idle = c.job() == nullptr && c.waiting() == nullptr;
	const uint64_t pixels = static_cast<uint64_t>(w) * static_cast<uint64_t>(h);
	bool cheap = false;
	uint64_t cost = pixels;
	if (idle && c.pending() == nullptr && fits(c.image()) && c.image()->surfaces == 1 && !c.image()->converting) {
		// The surface's own image, its pages faulted in already: a small update of it is
		// converted on the main thread when applied (a fresh image's page faults never are).
		if (c.up_to_date(buffer->stored_format, view->color)) {
			// Bounded by the damage, in pixels and in rows of the pool.
			DamageBound damage = pending_damage_bound(s->surface->pending, w, h);
			cheap = small(damage.pixels, damage.rows);
			cost = std::min(cost, damage.pixels);
		} else {
			cheap = small(pixels, static_cast<uint64_t>(h));
		}
	}
	// A surface without a role cannot be held: a small commit of one is converted when
	// applied, whatever image it needs, so a renderer that copies at the apply gets its pixels.
	if (idle && s->surface->role == nullptr && !cheap && small(pixels, static_cast<uint64_t>(h))) cheap = true;
	if (!pure && cheap && admit(client_of(s), view, cost)) return move(s, view, CommitState::Due);
	if (!idle) return move(s, view, CommitState::Waiting); // its job starts when the surface's ends
	if (!pure && fits(c.image()) && c.image()->surfaces == 1 && !c.has_spare(view->renderer_format, w, h) &&
		!affordable(client_of(s), view->renderer_format, w, h)) {
		// A second image of this size would cross a budget: not held, the commit is converted
		// into the surface's own image when it applies (in one go, as small ones are). Slower
		// to show, but a client that shows one such frame may show the next.
		return move(s, view, CommitState::Due);
	}
	start_job(s, view, buffer);
}

void Conversions::surface_committed(SurfaceState *s) {
	SurfaceConversion &c = s->conversion;
	bool view_applied = c.take_view_applied();
	if ((s->surface->current.committed & WLR_SURFACE_STATE_BUFFER) && !view_applied) {
		// A native buffer or a null attach: the image is nobody's content any more.
		if (c.pending() != nullptr) impl_->release_source(c.take_pending());
		c.drop_images();
	}
	if (view_applied && c.pending() != nullptr && lazy_) {
		impl_->schedule(s);
	}
	impl_->settle_frames(s, false);
}

void Conversions::surface_destroyed(SurfaceState *s) {
	SurfaceConversion &c = s->conversion;
	// wlroots destroys them with the surface's state.
	c.release_frames(&s->surface->current.frame_callback_list);
	// wlroots drops the cached states (and so the views) after this: none of them applies.
	c.take_waiting();
	impl_->drop_job(s);
	if (c.pending() != nullptr) impl_->release_source(c.take_pending());
	c.drop_images();
}

} // namespace pixelport
