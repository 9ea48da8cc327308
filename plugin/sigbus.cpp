#include "sigbus.hpp"

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>

#include <cstdint>
#include <mutex>

namespace pixelport {

namespace {

std::atomic<SigbusGuard *> guards{nullptr};
struct sigaction previous_action;
// Handlers walking the list now (a conversion worker may fault while the main thread removes a
// guard): removal waits until none is, so no handler stands on a guard after it is freed.
// Sequentially consistent with the list's links: a handler that counted itself after a removal
// saw the list without the removed guard.
std::atomic<int> walking{0};

bool zero_fill(uintptr_t addr) {
	for (SigbusGuard *g = guards.load(); g != nullptr; g = g->next.load()) {
		auto start = reinterpret_cast<uintptr_t>(g->addr);
		if (addr >= start && addr - start < g->size) {
			// Zero pages in place of the client's file: the read that faulted is retried.
			void *r = mmap(g->addr, g->size, PROT_READ | PROT_WRITE,
				MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (r == MAP_FAILED) return false;
			g->faulted.store(true, std::memory_order_relaxed);
			return true;
		}
	}
	return false;
}

void handle_sigbus(int sig, siginfo_t *info, void *context) {
	walking.fetch_add(1);
	const bool ours = zero_fill(reinterpret_cast<uintptr_t>(info->si_addr));
	walking.fetch_sub(1);
	if (ours) return;
	// Not ours: behave as if we were never installed.
	if (previous_action.sa_flags & SA_SIGINFO) {
		previous_action.sa_sigaction(sig, info, context);
		return;
	}
	if (previous_action.sa_handler != SIG_DFL && previous_action.sa_handler != SIG_IGN) {
		previous_action.sa_handler(sig);
		return;
	}
	sigaction(SIGBUS, &previous_action, nullptr); // the retried access then kills as usual
}

} // namespace

bool sigbus_guard_add(SigbusGuard *guard) {
	static std::once_flag once;
	static bool installed = false;
	std::call_once(once, [] {
		struct sigaction action = {};
		action.sa_sigaction = handle_sigbus;
		action.sa_flags = SA_SIGINFO | SA_NODEFER;
		sigemptyset(&action.sa_mask);
		installed = sigaction(SIGBUS, &action, &previous_action) == 0;
	});
	if (!installed) {
		return false;
	}
	SigbusGuard *head = guards.load(std::memory_order_relaxed);
	guard->prev = nullptr;
	guard->next.store(head, std::memory_order_relaxed);
	if (head != nullptr) head->prev = guard;
	guards.store(guard);
	return true;
}

void sigbus_guard_remove(SigbusGuard *guard) {
	// A handler walking the list sees the old or the new link; either leads on to the end.
	SigbusGuard *next = guard->next.load(std::memory_order_relaxed);
	if (guard->prev != nullptr) {
		guard->prev->next.store(next);
	} else {
		guards.store(next);
	}
	if (next != nullptr) next->prev = guard->prev;
	guard->prev = nullptr; // `next` stays: a handler standing on this guard walks on from it
	// A handler on another thread may stand on it still: the caller frees it next.
	while (walking.load() != 0) sched_yield();
}

} // namespace pixelport
