#include "workers.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>
#include <wayland-server-core.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "pixelport/timing/records.hpp"

namespace pixelport {

namespace {

// The fd table covers this many fds before the workers start (or the soft RLIMIT_NOFILE, if
// lower): 4096 slots cost about 33 KiB.
constexpr rlim_t kFdTableReserve = 4096;

// Grows the process's fd table while it may still have one thread. Once threads share it,
// every growth (at 64, 128, 256, ... fds: a client's pools and buffers received on the main
// thread) waits for an RCU grace period (fs/file.c, expand_fdtable: synchronize_rcu() when
// files->count > 1), which held the main thread 53 ms in one recvmsg on a busy 2-vCPU VM, where
// a single-threaded compositor pays nothing. The table never shrinks, so growing it once here
// is enough.
void reserve_fd_table(int any_fd) {
	rlimit limit = {};
	if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur < 2) return;
	const rlim_t want = std::min(limit.rlim_cur, kFdTableReserve) - 1;
	// F_DUPFD takes the lowest free fd at or above `want`: the table grows to hold it.
	const int fd = fcntl(any_fd, F_DUPFD_CLOEXEC, static_cast<int>(want));
	if (fd >= 0) close(fd);
}

} // namespace

struct ConvertWorkers::Impl {
	struct Queue {
		const void *client;
		std::deque<std::shared_ptr<ConvertJob>> jobs;
	};

	std::mutex mutex;
	std::condition_variable wake;
	/** A band ended (finish() waits for those under way). */
	std::condition_variable band_done;
	std::vector<Queue> queues; // clients with bands left, served round robin from `next`
	size_t next = 0;
	std::vector<std::shared_ptr<ConvertJob>> finished; // to hand back on the main thread
	bool signalled = false; // the eventfd was written since the main thread last read it
	bool stop = false;
	std::vector<std::thread> threads;
	int efd = -1;
	wl_event_source *source = nullptr;
	Done done;

	void work();
	void unqueue(const std::shared_ptr<ConvertJob> &job);
	void complete(const std::shared_ptr<ConvertJob> &job);
	void hand_back();
	bool cancel_locked(const std::shared_ptr<ConvertJob> &job);
};

namespace {

// Jobs the pool has handed back (or is about to): nothing more happens to them.
bool is_complete(const ConvertJob &job) {
	return job.in_flight == 0 && !job.queued && (job.cancelled || job.failed || job.next_row >= job.dst.height);
}

} // namespace

void ConvertWorkers::Impl::unqueue(const std::shared_ptr<ConvertJob> &job) {
	if (!job->queued) return;
	job->queued = false;
	for (size_t i = 0; i < queues.size(); i++) {
		if (queues[i].client != job->client) continue;
		std::erase(queues[i].jobs, job);
		if (queues[i].jobs.empty()) {
			queues.erase(queues.begin() + static_cast<std::ptrdiff_t>(i));
			if (next > i) next--;
		}
		return;
	}
}

// Under the mutex, once nothing of the job is under way or left to start.
void ConvertWorkers::Impl::complete(const std::shared_ptr<ConvertJob> &job) {
	if (std::exchange(job->completed, true)) return;
	job->end_ns = job->start_ns != 0 ? timing::monotonic_ns() : 0;
	job->ok = !job->cancelled && !job->failed && job->rows_done >= job->dst.height;
	finished.push_back(job);
	if (!std::exchange(signalled, true)) {
		uint64_t one = 1;
		ssize_t n = write(efd, &one, sizeof one);
		(void)n; // a full counter is still readable: the loop wakes all the same
	}
}

void ConvertWorkers::Impl::work() {
	std::unique_lock lock(mutex);
	for (;;) {
		wake.wait(lock, [this] { return stop || !queues.empty(); });
		if (stop) return;
		if (next >= queues.size()) next = 0;
		const size_t index = next;
		std::shared_ptr<ConvertJob> job = queues[index].jobs.front();
		const int32_t y0 = job->next_row;
		const int32_t y1 = std::min(job->dst.height, y0 + job->band_rows);
		job->next_row = y1;
		job->in_flight++;
		if (job->start_ns == 0) job->start_ns = timing::monotonic_ns();
		next = index + 1;
		if (y1 >= job->dst.height) {
			unqueue(job); // its last band: the next client's turn
		} else if (queues[index].jobs.size() > 1) {
			// The client's jobs (one per surface) take turns too: a small window's frame does
			// not wait behind its own client's large one.
			queues[index].jobs.pop_front();
			queues[index].jobs.push_back(job);
		}
		lock.unlock();
		const core::Status status = core::convert_rows(job->src, job->dst, y0, y1, job->options);
		lock.lock();
		job->in_flight--;
		if (status == core::Status::Ok) {
			job->rows_done += y1 - y0;
		} else {
			job->failed = true;
			unqueue(job);
		}
		if (is_complete(*job)) complete(job);
		band_done.notify_all(); // no syscall while nobody waits in finish()
	}
}

bool ConvertWorkers::Impl::cancel_locked(const std::shared_ptr<ConvertJob> &job) {
	const bool started = job->next_row > 0;
	if (is_complete(*job) || job->cancelled) return started;
	job->cancelled = true;
	unqueue(job);
	if (job->in_flight == 0) complete(job);
	return started;
}

void ConvertWorkers::Impl::hand_back() {
	std::vector<std::shared_ptr<ConvertJob>> jobs;
	{
		std::lock_guard lock(mutex);
		uint64_t count;
		ssize_t n = read(efd, &count, sizeof count);
		(void)n;
		signalled = false;
		jobs.swap(finished);
	}
	for (const std::shared_ptr<ConvertJob> &job : jobs) done(job);
}

unsigned ConvertWorkers::default_threads() {
	unsigned hw = std::thread::hardware_concurrency();
	return std::clamp(hw / 2, 1u, 8u);
}

std::unique_ptr<ConvertWorkers> ConvertWorkers::create(wl_event_loop *loop, unsigned threads, Done done) {
	std::unique_ptr<ConvertWorkers> workers(new ConvertWorkers());
	workers->impl_ = std::make_unique<Impl>();
	Impl *impl = workers->impl_.get();
	impl->done = std::move(done);
	impl->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (impl->efd < 0) return nullptr;
	impl->source = wl_event_loop_add_fd(
		loop, impl->efd, WL_EVENT_READABLE,
		[](int, uint32_t, void *data) {
			static_cast<Impl *>(data)->hand_back();
			return 0;
		},
		impl);
	if (impl->source == nullptr) {
		close(impl->efd);
		impl->efd = -1;
		return nullptr;
	}
	reserve_fd_table(impl->efd);
	// Workers take no asynchronous signals: the compositor's handlers (and signalfds) expect
	// them on the main thread. SIGBUS from a client's shrunk pool still reaches the worker that
	// read it (sigbus.hpp).
	sigset_t all, old;
	sigfillset(&all);
	for (int sig : {SIGBUS, SIGSEGV, SIGFPE, SIGILL, SIGABRT, SIGTRAP}) sigdelset(&all, sig);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	threads = std::clamp(threads, 1u, 64u);
	for (unsigned i = 0; i < threads; i++) {
		try {
			impl->threads.emplace_back([impl] {
				pthread_setname_np(pthread_self(), "pp-convert");
				// At the main thread's priority: a client's conversion gets the share of a
				// core its own process would get converting (as it does under stock), and the
				// main thread, asleep most of the time, is woken ahead of a worker in its band.
				impl->work();
			});
		} catch (const std::system_error &) {
			break;
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, nullptr);
	if (impl->threads.empty()) return nullptr;
	return workers;
}

ConvertWorkers::~ConvertWorkers() {
	if (impl_ == nullptr) return;
	{
		std::lock_guard lock(impl_->mutex);
		impl_->stop = true;
	}
	impl_->wake.notify_all();
	for (std::thread &t : impl_->threads) t.join();
	// Nothing runs now: everything still queued is handed back, cancelled.
	std::vector<std::shared_ptr<ConvertJob>> queued;
	for (Impl::Queue &q : impl_->queues) {
		for (std::shared_ptr<ConvertJob> &job : q.jobs) queued.push_back(std::move(job));
	}
	impl_->queues.clear();
	for (const std::shared_ptr<ConvertJob> &job : queued) {
		job->queued = false;
		impl_->cancel_locked(job);
	}
	if (impl_->source != nullptr) wl_event_source_remove(impl_->source);
	impl_->source = nullptr;
	std::vector<std::shared_ptr<ConvertJob>> jobs = std::exchange(impl_->finished, {});
	for (const std::shared_ptr<ConvertJob> &job : jobs) impl_->done(job);
	if (impl_->efd >= 0) close(impl_->efd);
}

void ConvertWorkers::submit(std::shared_ptr<ConvertJob> job) {
	job->options.threads = 1;
	job->band_rows = std::max(4, (job->band_rows + 3) & ~3);
	{
		std::lock_guard lock(impl_->mutex);
		job->queued = true;
		auto it = std::find_if(impl_->queues.begin(), impl_->queues.end(),
			[&](const Impl::Queue &q) { return q.client == job->client; });
		if (it == impl_->queues.end()) {
			impl_->queues.push_back({job->client, {}});
			it = impl_->queues.end() - 1;
		}
		it->jobs.push_back(std::move(job));
	}
	impl_->wake.notify_one();
}

bool ConvertWorkers::cancel(const std::shared_ptr<ConvertJob> &job) {
	std::lock_guard lock(impl_->mutex);
	return impl_->cancel_locked(job);
}

void ConvertWorkers::finish(const std::shared_ptr<ConvertJob> &job) {
	std::unique_lock lock(impl_->mutex);
	impl_->unqueue(job); // no worker begins another band of it
	while (!job->cancelled && !job->failed && job->next_row < job->dst.height) {
		const int32_t y0 = job->next_row;
		const int32_t y1 = std::min(job->dst.height, y0 + job->band_rows);
		job->next_row = y1;
		job->in_flight++;
		if (job->start_ns == 0) job->start_ns = timing::monotonic_ns();
		lock.unlock();
		const core::Status status = core::convert_rows(job->src, job->dst, y0, y1, job->options);
		lock.lock();
		job->in_flight--;
		if (status == core::Status::Ok) {
			job->rows_done += y1 - y0;
		} else {
			job->failed = true;
		}
	}
	impl_->band_done.wait(lock, [&] { return job->in_flight == 0; });
	impl_->complete(job);
}

unsigned ConvertWorkers::threads() const { return static_cast<unsigned>(impl_->threads.size()); }

} // namespace pixelport
