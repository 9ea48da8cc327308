#include "sigbus.hpp"

#include <signal.h>
#include <sys/mman.h>

#include <cstdint>
#include <mutex>

namespace pixelport {

namespace {

std::atomic<SigbusGuard *> guards{nullptr};
struct sigaction previous_action;

void handle_sigbus(int sig, siginfo_t *info, void *context) {
	auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
	for (SigbusGuard *g = guards.load(std::memory_order_acquire); g != nullptr;
		g = g->next.load(std::memory_order_acquire)) {
		auto start = reinterpret_cast<uintptr_t>(g->addr);
		if (addr >= start && addr - start < g->size) {
			// Zero pages in place of the client's file: the read that faulted is retried.
			void *r = mmap(g->addr, g->size, PROT_READ | PROT_WRITE,
				MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (r != MAP_FAILED) {
				g->faulted.store(true, std::memory_order_relaxed);
				return;
			}
			break;
		}
	}
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
	guard->next.store(guards.load(std::memory_order_relaxed), std::memory_order_relaxed);
	guards.store(guard, std::memory_order_release);
	return true;
}

void sigbus_guard_remove(SigbusGuard *guard) {
	SigbusGuard *g = guards.load(std::memory_order_relaxed);
	if (g == guard) {
		guards.store(guard->next.load(std::memory_order_relaxed), std::memory_order_release);
		return;
	}
	for (; g != nullptr; g = g->next.load(std::memory_order_relaxed)) {
		if (g->next.load(std::memory_order_relaxed) == guard) {
			g->next.store(guard->next.load(std::memory_order_relaxed), std::memory_order_release);
			return;
		}
	}
}

} // namespace pixelport
