// A wl_listener for C++: not copyable, not movable (the wl_list link points into it),
// disconnected in its destructor so an owner's destruction removes every listener,
// as wlroots requires of listeners on objects that outlive their owner.
#pragma once

#include <functional>
#include <utility>

#include <wayland-server-core.h>

namespace pixelport {

class Listener {
public:
	using Callback = std::function<void(void *data)>;

	Listener() { wl_list_init(&slot_.listener.link); }
	~Listener() { disconnect(); }
	Listener(const Listener &) = delete;
	Listener &operator=(const Listener &) = delete;
	Listener(Listener &&) = delete;
	Listener &operator=(Listener &&) = delete;

	/** Connects to `signal`, replacing any earlier connection. */
	void connect(wl_signal *signal, Callback callback) {
		disconnect();
		callback_ = std::move(callback);
		slot_.listener.notify = &Listener::notify;
		slot_.owner = this;
		wl_signal_add(signal, &slot_.listener);
	}

	/** Connects to the display's destroy signal (it has no public wl_signal). */
	void connect_display_destroy(wl_display *display, Callback callback) {
		disconnect();
		callback_ = std::move(callback);
		slot_.listener.notify = &Listener::notify;
		slot_.owner = this;
		wl_display_add_destroy_listener(display, &slot_.listener);
	}

	/**
	 * Connects to the resource's destroy signal, which libwayland emits before the resource's
	 * own destroy callback runs (and which disconnects the listener as it fires).
	 */
	void connect_resource_destroy(wl_resource *resource, Callback callback) {
		disconnect();
		callback_ = std::move(callback);
		slot_.listener.notify = &Listener::notify;
		slot_.owner = this;
		wl_resource_add_destroy_listener(resource, &slot_.listener);
	}

	void disconnect() {
		wl_list_remove(&slot_.listener.link);
		wl_list_init(&slot_.listener.link);
	}

	bool connected() const { return !wl_list_empty(&slot_.listener.link); }

private:
	// Standard-layout, listener first: the notify thunk recovers the owner by a cast.
	struct Slot {
		wl_listener listener;
		Listener *owner;
	};

	static void notify(wl_listener *listener, void *data) {
		auto *slot = reinterpret_cast<Slot *>(listener);
		// Copy: the callback may destroy this Listener (e.g. on a destroy signal).
		Callback callback = slot->owner->callback_;
		callback(data);
	}

	Slot slot_{};
	Callback callback_;
};

} // namespace pixelport
