// The views: the wlr_buffer a surface's state holds instead of a converted-format buffer, the
// image each is bound to when its commit applies, and the conversion of a due view into it.
#include <cassert>

#include "conversion_internal.hpp"
#include "timing.hpp"
#include "wlr_compat.hpp"

namespace pixelport {

namespace {

ConvertedView *view_from_base(wlr_buffer *base) { return reinterpret_cast<ConvertedView *>(base); }

} // namespace

// The view's commit is being applied: what the surface shows from now on.
void Conversions::Impl::bind(SurfaceState *s, ConvertedView *view) {
	SurfaceConversion &c = s->conversion;
	view->applied = true;
	c.view_applied();
	if (!c.valid() && view->state != CommitState::Superseded) {
		// What the surface showed was not the client's last commit (a commit applied before its
		// conversion ended, a blank): this commit's damage, relative to that commit, does not
		// cover what changes on screen. The whole buffer is damaged, for the texture upload
		// under way (GLES2 reads this region after this call) and for the scene's redraw.
		pixman_region32_union_rect(&s->surface->buffer_damage, &s->surface->buffer_damage, 0, 0,
			static_cast<unsigned>(view->base.width), static_cast<unsigned>(view->base.height));
	}
	if (view->state == CommitState::Waiting || view->state == CommitState::Converting) {
		// Let go before its conversion ended. A due commit finishes first; then it shows the
		// surface's last complete image where that has its size. Where not, it is completed on
		// this thread before anything reads it: now for a renderer that uploads at the apply,
		// at the first read for one that reads at render time (a commit replaced in the same
		// dispatch is never completed).
		if (c.pending() != nullptr) flush(s, nullptr);
		if (!owner->lazy() && !shows_last(s, view) && !wlr_compat::another_state_applies_next(s->surface) &&
			complete_now(s, view)) {
			return;
		}
		c.invalidate();
		return;
	}
	if (view->state == CommitState::Superseded) {
		// The commit that replaced it applies right after it, in the same call, as a rule: only
		// if nothing follows (a lock not the plugin's kept that one back) does it show, then
		// completed as a commit let go is.
		if (c.pending() != nullptr) flush(s, nullptr);
		if (!owner->lazy() && !wlr_compat::another_state_applies_next(s->surface) && complete_now(s, view)) {
			return; // never by a worker: the last image, even of its size, would stay in its place
		}
		c.invalidate();
		return;
	}
	if (view->state == CommitState::Ready) {
		if (c.pending() != nullptr) {
			// Replaced before it was converted: nothing will ever show it.
			ConvertedView *older = c.take_pending();
			move(s, older, CommitState::Superseded);
			release_source(older);
			owner->plugin()->stats.add(Stat::SkippedConversions);
		}
		// Its own image; the one it replaces may serve the next large commit once nothing
		// shows it.
		c.keep_spare(view->image);
		c.show(view->image, view->image != nullptr && view->image->filled, view->source_format, view->color);
		return;
	}
	if (c.pending() != nullptr && c.pending() != view) {
		// Replaced before it was converted: nothing will ever show it.
		ConvertedView *older = c.take_pending();
		move(s, older, CommitState::Superseded);
		release_source(older);
		owner->plugin()->stats.add(Stat::SkippedConversions);
	}
	PixelBuffer *source = view->source;
	if (source == nullptr) return;
	int32_t w = view->base.width, h = view->base.height;
	auto fits = [&](const std::shared_ptr<ConvertedImage> &image) {
		return image != nullptr && image->fourcc == view->renderer_format && image->width == w &&
			image->height == h;
	};
	std::shared_ptr<ConvertedImage> shared = source->pure_image.lock();
	if (fits(shared) && !shared->converting && shared->pure_source == source &&
		shared->pure_generation == view->generation && shared->pure_color == view->color) {
		// The same commit content on another surface: share its image.
		c.show(shared, false, 0);
	} else if (fits(c.image()) && c.image()->surfaces == 1 && !c.image()->converting) {
		// This surface's own image: updated with the damage (or in full) when due. It stops
		// being any other commit's content now, so nobody starts sharing it.
		c.image()->pure_source = nullptr;
		c.image()->filled = false;
		c.add_damage(&s->surface->buffer_damage);
	} else {
		// No image, another size or format, or one another surface shows too.
		std::shared_ptr<ConvertedImage> fresh = allocate(client_of(s), view->renderer_format, w, h);
		if (fresh == nullptr) {
			move(s, view, CommitState::Superseded);
			release_source(view);
			return;
		}
		c.show(std::move(fresh), false, 0);
	}
	if (!c.valid() && c.image()->pure_source != source) {
		// It will be converted in full from this commit: other surfaces showing the same
		// commit content may share it from now on.
		c.image()->pure_source = source;
		c.image()->pure_generation = view->generation;
		c.image()->pure_color = view->color;
		c.image()->filled = false;
		source->pure_image = c.image();
	}
	c.set_pending(view);
}

bool Conversions::Impl::shows_last(SurfaceState *s, ConvertedView *view) {
	const std::shared_ptr<ConvertedImage> &shown = s->conversion.image();
	return shown != nullptr && !shown->converting && shown->width == view->base.width &&
		shown->height == view->base.height;
}

// Converts the surface's due commit into its image. Returns false if it could not.
bool Conversions::Impl::flush(SurfaceState *s, timing::CommitSample *record) {
	SurfaceConversion &c = s->conversion;
	ConvertedView *view = c.take_pending();
	if (view == nullptr) return true;
	PixelBuffer *source = view->source;
	std::shared_ptr<ConvertedImage> image = c.image();
	if (source == nullptr || image == nullptr) {
		move(s, view, CommitState::Superseded);
		return false;
	}

	bool pure = image->pure_source == source && image->pure_generation == view->generation &&
		image->pure_color == view->color;
	// Holders other than the surfaces that want this content (and our local reference) are
	// converted views of older content: never overwrite what they show.
	bool exclusive = image.use_count() == 1 + static_cast<long>(image->surfaces) && (pure || image->surfaces == 1);
	bool ok = true;
	if (pure && image->filled) {
		// Shared content of this very commit, already converted for another surface.
	} else {
		bool full = !c.up_to_date(source->stored_format, view->color) || pure;
		if (!exclusive) {
			// Copy on write: a fresh image, converted in full.
			std::shared_ptr<ConvertedImage> fresh =
				allocate(client_of(s), image->fourcc, image->width, image->height);
			if (fresh == nullptr) {
				move(s, view, CommitState::Superseded);
				release_source(view);
				return false;
			}
			c.show(fresh, false, 0); // converted in full below
			image = std::move(fresh);
			full = true;
		}
		if (!full) {
			pixman_box32_t *e = pixman_region32_extents(c.damage());
			full = pixman_region32_n_rects(c.damage()) == 1 && e->x1 <= 0 && e->y1 <= 0 &&
				e->x2 >= image->width && e->y2 >= image->height;
		}
		ok = convert_buffer(source, image.get(), full ? nullptr : c.damage(), view->color, record);
		if (full) {
			image->pure_source = source;
			image->pure_generation = view->generation;
			image->pure_color = view->color;
			source->pure_image = image;
		} else {
			image->pure_source = nullptr;
		}
		image->filled = ok;
	}
	view->image = image; // what this view shows from now on
	move(s, view, ok ? CommitState::Ready : CommitState::Superseded);
	c.show(image, ok, source->stored_format, view->color);
	settle(view, true);
	release_source(view);
	return ok;
}

namespace {

void view_destroy(wlr_buffer *base) {
	wlr_compat::buffer_finish(base);
	ConvertedView *view = view_from_base(base);
	Conversions::Impl *impl = view->conversions->impl();
	if (SurfaceState *s = view->surface.get()) {
		// Its surface's job, if it had one, goes on: the surface may still show its image.
		s->conversion.forget_view(view);
	}
	impl->release_source(view);
	delete view;
}

bool view_begin_data_ptr_access(wlr_buffer *base, uint32_t flags, void **data, uint32_t *format, size_t *stride) {
	ConvertedView *view = view_from_base(base);
	if (flags & WLR_BUFFER_DATA_PTR_ACCESS_WRITE) return false;
	Conversions *conversions = view->conversions;
	pixelport_plugin *plugin = conversions->plugin();
	SurfaceState *s = view->surface.get();
	bool applying = s != nullptr && s->surface->current.buffer == base;
	timing::CommitSample *record = nullptr;
	if (applying) {
		// The first access of the apply is the upload; later ones are not timed.
		record = plugin->timing->upload_started(s);
		view->timing_record = record;
		if (!view->applied) conversions->impl()->bind(s, view);
		if (record != nullptr && view->state == CommitState::Ready && view->convert_end_ns != 0) {
			record->t_convert_start = view->convert_start_ns;
			record->t_convert_end = view->convert_end_ns;
		}
	}
	bool due = s != nullptr && s->conversion.pending() == view;
	if (due && (!conversions->lazy() || !applying)) {
		// Renderers that copy at upload need it now; a render reading it needs it now.
		conversions->impl()->flush(s, conversions->lazy() ? plugin->timing->converting(s) : record);
		due = false;
	}
	ConvertedImage *image = nullptr;
	if (due) {
		// About to be converted into its surface's image (lazy mode, while wlroots makes the
		// texture): hand out that image; the render will convert first.
		image = s->conversion.image().get();
	} else if (view->state == CommitState::Ready) {
		image = view->image.get();
	} else if (s != nullptr) {
		// Not converted (yet): what the surface showed, complete (a due commit is finished
		// first), where that has this buffer's size. Where not, the surface's own commit (let
		// go before its conversion ended) is completed now, unless this is the apply of a
		// renderer that reads at render time (the render completes it). Nothing (transparent)
		// only for a commit that can never show: superseded, or its image refused.
		SurfaceConversion &c = s->conversion;
		Conversions::Impl *impl = conversions->impl();
		if (c.pending() != nullptr)
			impl->flush(s, conversions->lazy() ? plugin->timing->converting(s) : nullptr);
		// The surface's own shown commit; at the apply, only for a renderer that uploads now
		// and when no other state of the surface applies right after this one.
		const bool shows = applying
			? !conversions->lazy() && !wlr_compat::another_state_applies_next(s->surface)
			: shown_view(s->surface) == view;
		// A superseded commit that shows is never converted by a worker: the last image would
		// stay on screen in its place.
		const bool has_last = impl->shows_last(s, view);
		if (!(has_last && view->state != CommitState::Superseded) && shows && impl->complete_now(s, view)) {
			image = view->image.get();
		} else if (has_last) {
			image = c.image().get();
		} else {
			image = c.blank(base->width, base->height).get();
		}
	}
	if (image == nullptr) return false;
	// Never an image a worker is writing (docs/design.md, "The commit path", invariant 1).
	assert(!image->converting);
	if (image->converting) return false;
	*data = image->data;
	*format = image->fourcc;
	*stride = image->stride;
	return true;
}

void view_end_data_ptr_access(wlr_buffer *base) {
	ConvertedView *view = view_from_base(base);
	if (view->timing_record != nullptr) {
		view->timing_record->t_upload_end = monotonic_ns();
		view->timing_record = nullptr;
	}
}

} // namespace

const wlr_buffer_impl kConvertedViewImpl = {
	.destroy = view_destroy,
	.get_dmabuf = nullptr,
	.get_shm = nullptr,
	.begin_data_ptr_access = view_begin_data_ptr_access,
	.end_data_ptr_access = view_end_data_ptr_access,
};

} // namespace pixelport
