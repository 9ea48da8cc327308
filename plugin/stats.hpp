// The plugin's counters (pixelport_stats, read through pixelport_get_stats()): every module
// counts through Stats::add(), and only pixelport.cpp reads them out.
#pragma once

#include <cstddef>
#include <cstdint>

#include "pixelport/pixelport.h"

namespace pixelport {

/** One counter of pixelport_stats (pixelport.h says what each counts). */
enum class Stat : uint8_t {
	NativeUploads,
	ConvertedUploads,
	ConvertedPixels,
	ShmBuffers,
	SigbusFaults,
	StreamBytes,
	StreamWrites,
	HeldCommits,
	SkippedConversions,
	BudgetRefusals,
	EarlyReleases,
	Redraws,
	MainThreadCompletions,
	PacedCommits,
	BarrierTimeouts,
	Count,
};

class Stats {
public:
	void add(Stat stat, uint64_t n = 1) { counts_[static_cast<size_t>(stat)] += n; }
	uint64_t get(Stat stat) const { return counts_[static_cast<size_t>(stat)]; }
	/** Every counter into `out` (image_bytes and struct_size are the caller's). */
	void fill(pixelport_stats *out) const {
		out->native_uploads = get(Stat::NativeUploads);
		out->converted_uploads = get(Stat::ConvertedUploads);
		out->converted_pixels = get(Stat::ConvertedPixels);
		out->shm_buffers = get(Stat::ShmBuffers);
		out->sigbus_faults = get(Stat::SigbusFaults);
		out->stream_bytes = get(Stat::StreamBytes);
		out->stream_writes = get(Stat::StreamWrites);
		out->held_commits = get(Stat::HeldCommits);
		out->skipped_conversions = get(Stat::SkippedConversions);
		out->budget_refusals = get(Stat::BudgetRefusals);
		out->early_releases = get(Stat::EarlyReleases);
		out->redraws = get(Stat::Redraws);
		out->main_thread_completions = get(Stat::MainThreadCompletions);
		out->paced_commits = get(Stat::PacedCommits);
		out->barrier_timeouts = get(Stat::BarrierTimeouts);
	}

private:
	uint64_t counts_[static_cast<size_t>(Stat::Count)] = {};
};

} // namespace pixelport
