// Protects the compositor from clients that shrink the file behind a wl_shm pool.
//
// Reading a mapping past the end of its (truncated) file raises SIGBUS. wlroots guards only
// while a buffer's data pointer is being accessed, but the pixman renderer keeps reading the
// pointer at render time, after the access ended. So pixelport guards each mapping for its
// whole life: on SIGBUS inside a guarded range the handler maps anonymous zero pages over the
// range, the read completes with zeroes, and the range is marked faulted so the plugin can
// log it. Faults outside every guarded range go to the previous handler. The fault is handled on
// the thread that read: the main thread, or a conversion worker (workers.hpp).
#pragma once

#include <atomic>
#include <cstddef>

namespace pixelport {

struct SigbusGuard {
	void *addr = nullptr;
	size_t size = 0;
	std::atomic<bool> faulted{false};
	/** The handler walks `next`; `prev` is the main thread's, for removal in constant time. */
	std::atomic<SigbusGuard *> next{nullptr};
	SigbusGuard *prev = nullptr;
};

/**
 * Starts guarding [guard->addr, guard->addr + guard->size). Installs the process-wide
 * handler on first use. The guard must stay valid until sigbus_guard_remove().
 * Main thread only, constant time. Returns false if the handler could not be installed.
 */
bool sigbus_guard_add(SigbusGuard *guard);

/**
 * Stops guarding, in constant time (a client may hold thousands of mappings), then waits for
 * handlers running on other threads (a few microseconds at most) so the guard may be freed.
 * Main thread only, never while another thread reads the range.
 */
void sigbus_guard_remove(SigbusGuard *guard);

} // namespace pixelport
