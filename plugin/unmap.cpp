#include "unmap.hpp"

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

namespace pixelport {

namespace {

struct Release {
	void *data; // null: close `fd`, or trim the heap when `fd` is -1
	size_t size;
	int fd;
};

class Unmapper {
public:
	~Unmapper() {
		{
			std::lock_guard lock(mutex_);
			stop_ = true;
		}
		wake_.notify_one();
		if (thread_.joinable()) thread_.join();
	}

	void start() {
		std::lock_guard lock(mutex_);
		start_locked();
	}

	void push(const Release &release) {
		bool wake;
		{
			std::lock_guard lock(mutex_);
			start_locked();
			wake = queue_.empty() && idle_; // only a waiting thread needs the futex wake
			queue_.push_back(release);
		}
		if (wake) wake_.notify_one();
	}

private:
	// The thread takes the creator's signal mask: blocked, so process-directed signals (the
	// compositor's SIGTERM, read through a signalfd on the main thread) never land on it.
	void start_locked() {
		if (thread_.joinable()) return;
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		thread_ = std::thread([this] { run(); });
		pthread_sigmask(SIG_SETMASK, &old, nullptr);
	}

	void run() {
		std::unique_lock lock(mutex_);
		for (;;) {
			idle_ = true;
			wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
			idle_ = false;
			if (queue_.empty()) return; // stopping, nothing left
			Release r = queue_.front();
			queue_.pop_front();
			lock.unlock();
			if (r.data != nullptr) {
				munmap(r.data, r.size);
			} else if (r.fd >= 0) {
				close(r.fd);
			} else {
				malloc_trim(0);
			}
			lock.lock();
		}
	}

	std::mutex mutex_;
	std::condition_variable wake_;
	std::deque<Release> queue_;
	std::thread thread_;
	bool stop_ = false;
	bool idle_ = false;
};

Unmapper &unmapper() {
	static Unmapper instance;
	return instance;
}

} // namespace

void unmap_later(void *data, size_t size) {
	if (data == nullptr) return;
	unmapper().push({data, size, -1});
}

void close_later(int fd) {
	if (fd < 0) return;
	unmapper().push({nullptr, 0, fd});
}

void trim_later() { unmapper().push({nullptr, 0, -1}); }

void unmapper_start() { unmapper().start(); }

} // namespace pixelport
