// Derived phase durations: the one definition shared by Summary and pixelport-compare.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "pixelport/timing/records.hpp"

namespace pixelport::timing {

enum class Phase : std::uint8_t {
	Transfer, // commit: t_data_complete - t_commit (stream transport)
	Convert, // commit: t_convert_end - t_convert_start
	Upload, // commit: t_upload_end - t_upload_start
	Present, // commit: t_present - t_commit (commit to on-screen latency)
	Render, // frame:  t_render_end - t_render_start
};
inline constexpr std::size_t kPhaseCount = 5;
inline constexpr std::array<Phase, kPhaseCount> kAllPhases = {
	Phase::Transfer, Phase::Convert, Phase::Upload, Phase::Present, Phase::Render};

// "transfer", "convert", "upload", "present", "render".
std::string_view phase_name(Phase p);

// Duration of each phase in ns, indexed by Phase. A phase has no value (nullopt, never 0 as a
// stand-in) when either timestamp is absent (0) or the end precedes the start.
using PhaseDurations = std::array<std::optional<std::uint64_t>, kPhaseCount>;
PhaseDurations derive_phases(const CommitSample &r);
PhaseDurations derive_phases(const FrameRecord &r);

// derive_phases() with the phases made disjoint so that transfer, convert and upload add up
// across transports: where the upload contains the conversion (wl_shm converts inside its
// upload), the conversion is subtracted from the upload. *nested (if given) is set true when
// that happened. Used by pixelport-compare and pixelport-sweep (docs/timing.md, "Nesting").
PhaseDurations disjoint_phases(const CommitSample &r, bool *nested = nullptr);

} // namespace pixelport::timing
