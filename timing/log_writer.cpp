#include "pixelport/timing/log_writer.hpp"

#include <pthread.h>
#include <sched.h>

#include <csignal>

#include <unistd.h>

#include <bit>
#include <stdexcept>

#include "io.hpp"
#include "pixelport/timing/jsonl.hpp"
#include "pixelport/timing/summary.hpp"
#include "pixelport/timing/trace.hpp"

namespace pixelport::timing {

LogWriter::LogWriter(Options opts) : opts_(std::move(opts)) {
	if (opts_.capacity == 0) throw std::invalid_argument("LogWriter capacity must be >= 1");
	// Power-of-two slots for mask indexing; fullness is checked against the exact capacity.
	slots_.resize(std::bit_ceil(opts_.capacity));
	mask_ = slots_.size() - 1;
	wake_threshold_ = std::max<std::size_t>(1, opts_.capacity / 2);
	start_ns_ = monotonic_ns();
	drops_since_ns_ = start_ns_;
	const auto pid = static_cast<std::int32_t>(::getpid());
	if (!opts_.trace_path.empty()) trace_ = std::make_unique<TraceWriter>(opts_.trace_path, pid);
	if (!opts_.jsonl_path.empty()) {
		jsonl_fd_ = detail::create_file(opts_.jsonl_path, "create timing log");
		const std::string header = header_line(pid, start_ns_);
		if (!detail::pwrite_all(jsonl_fd_, header, 0)) {
			const int err = errno;
			::close(jsonl_fd_);
			throw std::system_error(err, std::generic_category(), "write timing log " + opts_.jsonl_path);
		}
		jsonl_offset_ = header.size();
	}
	try {
		thread_ = std::thread(&LogWriter::run, this);
	} catch (...) {
		if (jsonl_fd_ >= 0) ::close(jsonl_fd_);
		throw;
	}
}

LogWriter::~LogWriter() { close(); }

template <typename R>
bool LogWriter::push_item(const R &r) {
	// Labels are not records: one that does not fit is not a drop (the caller pushes it again).
	constexpr bool kRecord = !std::is_same_v<R, SurfaceLabels>;
	const std::uint64_t t = tail_.load(std::memory_order_relaxed);
	if (closed_) {
		if (kRecord) dropped_.fetch_add(1, std::memory_order_relaxed);
		return false;
	}
	// cached_head_ spares the shared cache line until the ring looks full or half full.
	if (t - cached_head_ >= opts_.capacity) {
		cached_head_ = head_.load(std::memory_order_acquire);
		if (t - cached_head_ >= opts_.capacity) {
			if (kRecord) dropped_.fetch_add(1, std::memory_order_relaxed);
			return false;
		}
	}
	slots_[t & mask_] = r;
	tail_.store(t + 1, std::memory_order_release);
	// Wake the writer when it sleeps for want of records (the first record after a quiet
	// spell), and early when the ring is half full so a burst does not overflow before the next
	// poll. notify without the mutex: a wake lost to the race costs at most the writer's current
	// wait (poll_interval, or idle_interval), and push() never blocks.
	bool wake = writer_idle_.load(std::memory_order_relaxed);
	if (!wake && t + 1 - cached_head_ >= wake_threshold_) {
		cached_head_ = head_.load(std::memory_order_acquire);
		wake = t + 1 - cached_head_ >= wake_threshold_;
	}
	if (wake && !wake_pending_.load(std::memory_order_relaxed) && !wake_pending_.exchange(true))
		wake_cv_.notify_one();
	return true;
}

bool LogWriter::push(const CommitRecord &r) { return push_item(r); }
bool LogWriter::push(const FrameRecord &r) { return push_item(r); }
bool LogWriter::push(const CommitSample &r) { return push_item(r); }
bool LogWriter::push(const SurfaceLabels &labels) { return push_item(labels); }

void LogWriter::run() {
	// A library thread takes no signals: hosts block SIGTERM, SIGINT, ... in their event-loop
	// thread (signalfd), and a thread that left them unblocked would be killed by them.
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, nullptr);
	// Idle priority: timing must not take CPU from what it measures (see the header). Failure
	// (a seccomp filter, say) leaves the thread at normal priority, which is correct, only dearer.
	const sched_param idle{};
	(void)pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle);
	unsigned empty_polls = 0; // wakes in a row that found nothing
	for (;;) {
		const bool idle = empty_polls >= kIdleAfterEmptyPolls;
		if (idle) writer_idle_.store(true); // push() wakes it from here on
		{
			std::unique_lock lock(mu_);
			// Asleep for want of records: a record that came between the last look and the
			// flag above would wait up to idle_interval; look once more.
			if (!idle || tail_.load(std::memory_order_acquire) == head_.load(std::memory_order_relaxed)) {
				wake_cv_.wait_for(lock, idle ? opts_.idle_interval : opts_.poll_interval,
					[&] { return stop_.load() || wake_pending_.load(); });
			}
		}
		if (idle) writer_idle_.store(false);
		wake_pending_.store(false);
		const bool stopping = stop_.load();
		if (paused_.load() && !stopping) continue;

		const std::uint64_t head = head_.load(std::memory_order_relaxed);
		const std::uint64_t tail = tail_.load(std::memory_order_acquire);
		write_batch(head, tail);
		if (stopping && tail == tail_.load(std::memory_order_acquire)) break;
		empty_polls = head == tail ? empty_polls + 1 : 0;
	}
}

LogWriter::Labelled *LogWriter::labelled(std::uint64_t surface_id) {
	if (last_labelled_ != nullptr && last_labelled_->labels.surface_id == surface_id) return last_labelled_;
	const auto it = labels_.find(surface_id);
	if (it == labels_.end()) return nullptr;
	last_labelled_ = &it->second;
	return last_labelled_;
}

void LogWriter::write_batch(std::uint64_t first, std::uint64_t last) {
	const std::uint64_t dropped_now = dropped_.load(std::memory_order_relaxed);
	std::uint64_t reported;
	{
		std::lock_guard lock(mu_);
		reported = dropped_reported_;
	}
	if (first != last || dropped_now != reported) {
		bool ok = true;
		std::size_t records = 0; // labels are not records
		try {
			std::string &lines = lines_; // reused: its capacity stays between batches
			lines.clear();
			// Writes the text made so far; on failure those lines are lost and the next ones go
			// where they were.
			auto write_lines = [&] {
				if (detail::pwrite_all(jsonl_fd_, lines, jsonl_offset_)) {
					jsonl_offset_ += lines.size();
				} else {
					ok = false;
				}
				lines.clear();
			};
			// Records are formatted where they lie in the ring, and their slots given back
			// every kReleaseEvery records, so a long batch does not hold the whole ring.
			constexpr std::uint64_t kReleaseEvery = 64;
			for (std::uint64_t i = first; i < last; ++i) {
				if (i != first && (i - first) % kReleaseEvery == 0)
					head_.store(i, std::memory_order_release);
				// Written in chunks: the text stays in the same few cache-warm KiB however long
				// the batch.
				if (lines.size() >= kWriteChunk) write_lines();
				const Item &item = slots_[i & mask_];
				if (const auto *labels = std::get_if<SurfaceLabels>(&item)) {
					last_labelled_ = nullptr; // the map changes under it
					if (labels->gone) {
						// Everything kept per surface goes with it: memory does not
						// grow with the number of surfaces ever seen.
						labels_.erase(labels->surface_id);
						if (opts_.summary) opts_.summary->surface_gone(labels->surface_id);
						if (trace_) trace_->surface_gone(labels->surface_id);
					} else {
						labels_.insert_or_assign(labels->surface_id,
							Labelled{*labels,
								CommitLines(labels->surface_id, labels->pid,
									labels->app_id.view(), labels->title.view())});
					}
					continue;
				}
				records++;
				if (const auto *sample = std::get_if<CommitSample>(&item)) {
					Labelled *l = labelled(sample->surface_id);
					if (jsonl_fd_ >= 0) {
						if (l != nullptr) {
							l->lines.append(lines, *sample);
						} else {
							CommitLines(sample->surface_id, 0, {}, {})
								.append(lines, *sample);
						}
					}
					if (opts_.summary)
						opts_.summary->add(
							*sample, l != nullptr ? l->labels.app_id.view() : "");
					if (trace_) {
						CommitRecord r;
						static_cast<CommitSample &>(r) = *sample;
						if (l != nullptr) {
							r.pid = l->labels.pid;
							r.app_id = l->labels.app_id;
							r.title = l->labels.title;
						}
						trace_->add(r);
					}
				} else if (const auto *r = std::get_if<CommitRecord>(&item)) {
					if (jsonl_fd_ >= 0) append_commit_line(lines, *r);
					if (trace_) trace_->add(*r);
					if (opts_.summary) opts_.summary->add(*r);
				} else if (const auto *f = std::get_if<FrameRecord>(&item)) {
					if (jsonl_fd_ >= 0) append_frame_line(lines, *f);
					if (trace_) trace_->add(*f);
					if (opts_.summary) opts_.summary->add(*f);
				}
			}
			head_.store(last, std::memory_order_release);
			if (dropped_now != reported) {
				const std::uint64_t now = monotonic_ns();
				if (jsonl_fd_ >= 0) lines += drops_line(dropped_now - reported, drops_since_ns_);
				if (trace_) trace_->add_drops(dropped_now - reported, now);
				drops_since_ns_ = now;
			}
			if (jsonl_fd_ >= 0) write_lines();
			if (trace_ && !trace_->commit_batch()) ok = false;
		} catch (const std::exception &) { // e.g. bad_alloc: lose this batch, keep the thread alive
			ok = false;
		}
		head_.store(last, std::memory_order_release);
		if (ok) {
			written_.fetch_add(records, std::memory_order_relaxed);
		} else {
			io_errors_.fetch_add(1, std::memory_order_relaxed);
		}
	}
	{
		std::lock_guard lock(mu_);
		done_ = head_.load(std::memory_order_relaxed);
		dropped_reported_ = dropped_now;
	}
	done_cv_.notify_all();
}

bool LogWriter::flush(std::chrono::milliseconds timeout) {
	if (closed_) return true;
	const std::uint64_t target = tail_.load(std::memory_order_relaxed);
	const std::uint64_t drops = dropped_.load(std::memory_order_relaxed);
	std::unique_lock lock(mu_);
	wake_pending_.store(true); // under mu_: this wake must not be lost between check and sleep
	wake_cv_.notify_one();
	return done_cv_.wait_for(lock, timeout, [&] { return done_ >= target && dropped_reported_ >= drops; });
}

void LogWriter::close() {
	if (closed_) return;
	closed_ = true;
	paused_.store(false);
	{
		std::lock_guard lock(mu_);
		stop_.store(true);
	}
	wake_cv_.notify_one();
	thread_.join();
	trace_.reset();
	if (jsonl_fd_ >= 0) {
		::close(jsonl_fd_);
		jsonl_fd_ = -1;
	}
}

void LogWriter::pause_writer_for_test(bool paused) {
	paused_.store(paused);
	if (!paused) {
		std::lock_guard lock(mu_);
		wake_pending_.store(true);
		wake_cv_.notify_one();
	}
}

} // namespace pixelport::timing
