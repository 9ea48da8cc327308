#include "unmap.hpp"

#include <sys/mman.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <utility>

namespace pixelport {

namespace {

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

	void push(void *data, size_t size) {
		{
			std::lock_guard lock(mutex_);
			if (!thread_.joinable()) thread_ = std::thread([this] { run(); });
			queue_.emplace_back(data, size);
		}
		wake_.notify_one();
	}

private:
	void run() {
		std::unique_lock lock(mutex_);
		for (;;) {
			wake_.wait(lock, [this] { return stop_ || !queue_.empty(); });
			if (queue_.empty()) return; // stopping, nothing left
			auto [data, size] = queue_.front();
			queue_.pop_front();
			lock.unlock();
			munmap(data, size);
			lock.lock();
		}
	}

	std::mutex mutex_;
	std::condition_variable wake_;
	std::deque<std::pair<void *, size_t>> queue_;
	std::thread thread_;
	bool stop_ = false;
};

Unmapper &unmapper() {
	static Unmapper instance;
	return instance;
}

} // namespace

void unmap_later(void *data, size_t size) {
	if (data == nullptr) return;
	if (size < kUnmapLaterBytes) {
		munmap(data, size);
		return;
	}
	unmapper().push(data, size);
}

} // namespace pixelport
