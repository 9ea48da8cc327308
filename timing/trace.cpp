#include "pixelport/timing/trace.hpp"

#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>
#include <system_error>

#include "io.hpp"
#include "pixelport/timing/phases.hpp"

namespace pixelport::timing {
namespace {

using ojson = nlohmann::ordered_json;

constexpr std::string_view kHead = "{\"traceEvents\":[\n";
constexpr std::string_view kTail = "\n],\"displayTimeUnit\":\"ns\"}\n";
// Outputs get tids 1.., surfaces 1000.. so the two never collide and outputs sort first.
constexpr int kFirstOutputTid = 1;
constexpr int kFirstSurfaceTid = 1000;

// Trace timestamps are µs; the fractional part keeps ns precision.
double us(std::uint64_t ns) { return static_cast<double>(ns) / 1000.0; }

std::string dump(const ojson &j) { return j.dump(-1, ' ', false, ojson::error_handler_t::replace); }

ojson metadata(std::int32_t pid, int tid, const char *name, ojson args) {
	return ojson{{"name", name}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", std::move(args)}};
}

} // namespace

TraceWriter::TraceWriter(const std::string &path, std::int32_t pid) : pid_(pid), next_surface_tid_(kFirstSurfaceTid) {
	fd_ = detail::create_file(path, "create trace");
	std::string head(kHead);
	head += dump(metadata(pid_, 0, "process_name", {{"name", "pixelport"}}));
	events_end_ = head.size();
	head += kTail;
	if (!detail::pwrite_all(fd_, head, 0)) {
		const int err = errno;
		::close(fd_);
		throw std::system_error(err, std::generic_category(), "write trace " + path);
	}
}

TraceWriter::~TraceWriter() {
	commit_batch();
	if (fd_ >= 0) ::close(fd_);
}

void TraceWriter::append_event(const std::string &json) {
	batch_ += ",\n";
	batch_ += json;
	if (batch_.size() >= kChunk) write_pending();
}

int TraceWriter::track_for_surface(const CommitRecord &r) {
	auto [it, fresh] = surfaces_.try_emplace(r.surface_id, SurfaceTrack{});
	SurfaceTrack &t = it->second;
	if (fresh) {
		// Tracks of gone surfaces are forgotten, so tids come from a counter (never reused
		// before it wraps; the int would overflow after 2^31 surfaces).
		t.tid = next_surface_tid_;
		next_surface_tid_ = next_surface_tid_ == INT32_MAX ? kFirstSurfaceTid : next_surface_tid_ + 1;
	}
	if (fresh || t.app_id != r.app_id.view()) { // (re)name the track when app_id appears or changes
		t.app_id = r.app_id.view();
		std::string name = "surface " + std::to_string(r.surface_id);
		if (!t.app_id.empty()) name += " (" + t.app_id + ")";
		append_event(dump(metadata(pid_, t.tid, "thread_name", {{"name", name}})));
		append_event(dump(metadata(pid_, t.tid, "thread_sort_index", {{"sort_index", t.tid}})));
	}
	return t.tid;
}

int TraceWriter::track_for_output(std::string_view name) {
	auto [it, fresh] = outputs_.try_emplace(std::string(name), 0);
	if (fresh) {
		it->second = kFirstOutputTid + static_cast<int>(outputs_.size()) - 1;
		append_event(dump(metadata(pid_, it->second, "thread_name", {{"name", "output " + it->first}})));
		append_event(dump(metadata(pid_, it->second, "thread_sort_index", {{"sort_index", it->second}})));
	}
	return it->second;
}

void TraceWriter::add(const CommitRecord &r) {
	const int tid = track_for_surface(r);
	const ojson args = {{"seq", r.seq}, {"transport", transport_name(r.transport)},
		{"format", format_name(r.format)}, {"width", r.width}, {"height", r.height}, {"bytes", r.bytes},
		{"damage_bytes", r.damage_bytes}, {"discarded", r.discarded}};
	auto instant = [&](const char *name, std::uint64_t at, ojson extra) {
		ojson e = {{"name", name}, {"cat", "pixelport"}, {"ph", "i"}, {"s", "t"}, {"ts", us(at)}, {"pid", pid_},
			{"tid", tid}, {"args", std::move(extra)}};
		append_event(dump(e));
	};
	// Spans only where derive_phases() has a value, so trace and statistics agree.
	const PhaseDurations d = derive_phases(r);
	auto complete = [&](Phase p, std::uint64_t start) {
		const auto &dur = d[static_cast<std::size_t>(p)];
		if (!dur) return;
		ojson e = {{"name", phase_name(p)}, {"cat", "pixelport"}, {"ph", "X"}, {"ts", us(start)},
			{"dur", us(*dur)}, {"pid", pid_}, {"tid", tid}, {"args", {{"seq", r.seq}}}};
		append_event(dump(e));
	};
	if (r.t_commit) instant("commit", r.t_commit, args);
	complete(Phase::Transfer, r.t_commit);
	complete(Phase::Convert, r.t_convert_start);
	complete(Phase::Upload, r.t_upload_start);
	// Frame pacing: the target as an instant of its own, and both beside the presentation.
	if (r.t_target) instant("target", r.t_target, {{"seq", r.seq}});
	if (r.t_present) {
		ojson extra = {{"seq", r.seq}, {"output", r.output.view()}};
		if (const auto &latency = d[static_cast<std::size_t>(Phase::Present)]) {
			extra["latency_us"] = us(*latency);
		}
		if (r.barrier_wait) extra["barrier_wait_us"] = us(r.barrier_wait);
		if (const char *fifo = fifo_name(r.fifo)) extra["fifo"] = fifo;
		if (r.t_target) {
			extra["target_error_us"] =
				(static_cast<double>(r.t_present) - static_cast<double>(r.t_target)) / 1000.0;
		}
		instant("present", r.t_present, std::move(extra));
	}
}

void TraceWriter::add(const FrameRecord &r) {
	const int tid = track_for_output(r.output.view());
	if (const auto render = derive_phases(r)[static_cast<std::size_t>(Phase::Render)]) {
		append_event(dump({{"name", "render"}, {"cat", "pixelport"}, {"ph", "X"}, {"ts", us(r.t_render_start)},
			{"dur", us(*render)}, {"pid", pid_}, {"tid", tid},
			{"args", {{"seq", r.seq}, {"missed", r.missed}}}}));
	}
	if (r.t_present) {
		append_event(dump({{"name", r.missed ? "present (missed)" : "present"}, {"cat", "pixelport"},
			{"ph", "i"}, {"s", "t"}, {"ts", us(r.t_present)}, {"pid", pid_}, {"tid", tid},
			{"args", {{"seq", r.seq}, {"refresh_ns", r.refresh_ns}, {"missed", r.missed}}}}));
	}
}

void TraceWriter::add_drops(std::uint64_t count, std::uint64_t at_ns) {
	append_event(dump({{"name", "dropped " + std::to_string(count) + " records"}, {"cat", "pixelport"}, {"ph", "i"},
		{"s", "p"}, {"ts", us(at_ns)}, {"pid", pid_}, {"tid", 0}, {"args", {{"count", count}}}}));
}

void TraceWriter::write_pending() {
	if (batch_.empty() || fd_ < 0) return;
	const std::size_t events = batch_.size();
	batch_ += kTail;
	if (detail::pwrite_all(fd_, batch_, events_end_)) {
		events_end_ += events;
	} else {
		failed_ = true;
	}
	batch_.clear();
	// A batch that outgrew the chunk (one huge event) does not keep its buffer.
	if (batch_.capacity() > 2 * kChunk) batch_.shrink_to_fit();
}

bool TraceWriter::commit_batch() {
	write_pending();
	const bool ok = !failed_;
	failed_ = false;
	return ok;
}

} // namespace pixelport::timing
