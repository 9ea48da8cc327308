#include "pixelport/timing/jsonl.hpp"

#include <array>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

namespace pixelport::timing {
namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json; // keeps the documented key order

std::string to_line(const ojson &j) {
	// replace: a client's invalid UTF-8 must not abort the writer thread.
	return j.dump(-1, ' ', false, ojson::error_handler_t::replace) + '\n';
}

// nlohmann's escaping of one string (~1 µs) remembered for the writer thread's next lines: a
// surface's app_id and title, when not plain ASCII, repeat on every one of its commit lines.
std::string escape_cached(std::string_view v) {
	struct Entry {
		std::string in, out;
	};
	thread_local Entry cache[8];
	thread_local unsigned next = 0;
	for (const Entry &e : cache) {
		if (!e.out.empty() && e.in == v) return e.out;
	}
	Entry &e = cache[next++ % std::size(cache)];
	e.in.assign(v);
	e.out = ojson(e.in).dump(-1, ' ', false, ojson::error_handler_t::replace);
	return e.out;
}

// Commit and frame lines are written by hand: they are the hot path of the writer thread
// (an ordered_json per record cost ~4.5 us of CPU on 2 cores shared with a compositor and
// its clients; a std::string append per key and value still ~1-2 us). The line is laid out
// in place: the batch string grows once by the line's largest possible size, keys are copied
// as constants, numbers with to_chars, and it shrinks to what was written. The output is the
// same text nlohmann writes (tests/timing/test_records.cpp).
class Line {
public:
	// Bytes a JSON string holds as they are: printable ASCII but the quote and the backslash.
	static constexpr auto kPlain = [] {
		std::array<bool, 256> t{};
		for (int c = 0x20; c < 0x7f; c++) t[c] = c != '"' && c != '\\';
		return t;
	}();

	// A string value, quoted: plain printable ASCII as is (the common case, no copy), anything
	// else through nlohmann, which escapes and replaces invalid UTF-8 exactly as the rest of
	// the file does.
	class Str {
	public:
		explicit Str(std::string_view v) {
			bool plain = true;
			for (unsigned char c : v) {
				if (!kPlain[c]) {
					plain = false;
					break;
				}
			}
			if (plain) {
				view_ = v;
			} else {
				escaped_ = escape_cached(v);
			}
		}
		std::size_t max_size() const { return escaped_.empty() ? view_.size() + 2 : escaped_.size(); }
		char *put(char *p) const {
			if (!escaped_.empty()) return copy(p, escaped_);
			*p++ = '"';
			p = copy(p, view_);
			*p++ = '"';
			return p;
		}

	private:
		std::string_view view_;
		std::string escaped_;
	};

	// Everything but the strings fits in this many bytes (20-digit numbers, the longest keys).
	static constexpr std::size_t kFixedMax = 768;

	Line(std::string &out, std::size_t strings_max) : out_(out), start_(out.size()) {
		out_.resize(start_ + kFixedMax + strings_max);
		p_ = out_.data() + start_;
	}
	template <std::size_t N>
	Line &lit(const char (&s)[N]) { // a constant piece of the line (key, punctuation)
		std::memcpy(p_, s, N - 1);
		p_ += N - 1;
		return *this;
	}
	Line &u64(std::uint64_t v) {
		p_ = std::to_chars(p_, p_ + 20, v).ptr;
		return *this;
	}
	Line &i64(std::int64_t v) {
		p_ = std::to_chars(p_, p_ + 20, v).ptr;
		return *this;
	}
	Line &ts(std::uint64_t ns) { // 0 = absent
		return ns == 0 ? lit("null") : u64(ns);
	}
	// A commit's timestamps lie within a fraction of a second of each other, so they share all
	// but their last eight digits: those are copied from `base` (digits already written to this
	// line by u64()) and the last eight made from a table of digit pairs, as to_chars does.
	// The text is the same as ts(ns).
	static constexpr std::uint64_t k8 = 100'000'000;
	struct Digits {
		const char *at = nullptr;
		std::size_t size = 0;
		std::uint64_t high = 0; // value / 10^8
	};
	Digits mark_u64(std::uint64_t v) {
		Digits d{p_, 0, v / k8};
		u64(v);
		d.size = static_cast<std::size_t>(p_ - d.at);
		return d;
	}
	Line &ts_near(std::uint64_t ns, const Digits &base) {
		const std::uint64_t high = ns / k8;
		if (ns == 0 || base.size <= 8 || high != base.high) return ts(ns);
		// A fixed 16-byte copy (the most leading digits a u64 has is 12) for a call-free memcpy:
		// the bytes after base's digits are this line's own, and p_ has room (kFixedMax).
		std::memcpy(p_, base.at, 16);
		p_ += base.size - 8;
		const auto low = static_cast<std::uint32_t>(ns - high * k8);
		const std::uint32_t upper = low / 10'000, lower = low - upper * 10'000;
		pair(upper / 100).pair(upper % 100).pair(lower / 100).pair(lower % 100);
		return *this;
	}
	Line &text(std::string_view made) { // a piece of a line made before (CommitLines)
		p_ = copy(p_, made);
		return *this;
	}
	Line &boolean(bool v) { return v ? lit("true") : lit("false"); }
	Line &str(const Str &s) {
		p_ = s.put(p_);
		return *this;
	}
	void done() {
		lit("}\n");
		end();
	}
	void end() { out_.resize(static_cast<std::size_t>(p_ - out_.data())); } // a line's first part

private:
	static constexpr auto kDigitPairs = [] {
		std::array<char, 200> t{};
		for (int i = 0; i < 100; i++) {
			t[2 * i] = static_cast<char>('0' + i / 10);
			t[2 * i + 1] = static_cast<char>('0' + i % 10);
		}
		return t;
	}();
	Line &pair(std::uint32_t two_digits) {
		std::memcpy(p_, &kDigitPairs[2 * two_digits], 2);
		p_ += 2;
		return *this;
	}
	static char *copy(char *p, std::string_view s) {
		if (!s.empty()) std::memcpy(p, s.data(), s.size()); // an empty view's data() may be null
		return p + s.size();
	}
	std::string &out_;
	std::size_t start_;
	char *p_ = nullptr;
};

// Reading ---------------------------------------------------------------------------------

struct LineReader {
	const std::string &path;
	std::size_t line;
	const json &j;

	[[noreturn]] void fail(const std::string &why) const { throw LogError(path, line, why); }

	const json &field(const char *name) const {
		auto it = j.find(name);
		if (it == j.end()) fail(std::string("missing field \"") + name + "\"");
		return *it;
	}
	std::uint64_t u64(const char *name) const {
		const json &v = field(name);
		if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0)) {
			fail(std::string("field \"") + name + "\" is not a non-negative integer");
		}
		return v.get<std::uint64_t>();
	}
	std::int64_t i64(const char *name) const {
		const json &v = field(name);
		if (!v.is_number_integer()) fail(std::string("field \"") + name + "\" is not an integer");
		return v.get<std::int64_t>();
	}
	std::uint64_t ts(const char *name) const { return field(name).is_null() ? 0 : u64(name); }
	std::string str(const char *name) const {
		const json &v = field(name);
		if (!v.is_string()) fail(std::string("field \"") + name + "\" is not a string");
		return v.get<std::string>();
	}
	std::string str_or_null(const char *name) const { return field(name).is_null() ? "" : str(name); }
	bool boolean(const char *name) const {
		const json &v = field(name);
		if (!v.is_boolean()) fail(std::string("field \"") + name + "\" is not a boolean");
		return v.get<bool>();
	}
};

CommitRecord parse_commit(const LineReader &in) {
	CommitRecord r;
	r.surface_id = in.u64("surface");
	r.pid = static_cast<std::int32_t>(in.i64("pid"));
	r.app_id = in.str("app_id");
	r.title = in.str("title");
	r.seq = in.u64("seq");
	if (!parse_transport(in.str("transport"), r.transport)) in.fail("unknown transport");
	if (!parse_format(in.str("format"), r.format)) in.fail("unknown format name");
	r.width = static_cast<std::int32_t>(in.i64("width"));
	r.height = static_cast<std::int32_t>(in.i64("height"));
	r.bytes = in.u64("bytes");
	r.damage_bytes = in.u64("damage_bytes");
	r.t_commit = in.ts("t_commit");
	r.t_data_complete = in.ts("t_data_complete");
	r.t_convert_start = in.ts("t_convert_start");
	r.t_convert_end = in.ts("t_convert_end");
	r.t_upload_start = in.ts("t_upload_start");
	r.t_upload_end = in.ts("t_upload_end");
	r.t_present = in.ts("t_present");
	// Frame pacing's keys: absent from logs written before them.
	if (in.j.contains("t_target")) r.t_target = in.ts("t_target");
	if (in.j.contains("barrier_wait_ns")) r.barrier_wait = in.u64("barrier_wait_ns");
	if (in.j.contains("fifo") && !in.j["fifo"].is_null() && !parse_fifo(in.str("fifo"), r.fifo)) {
		in.fail("unknown fifo requests");
	}
	r.output = in.str_or_null("output");
	r.discarded = in.boolean("discarded");
	return r;
}

FrameRecord parse_frame(const LineReader &in) {
	FrameRecord r;
	r.output = in.str("output");
	r.seq = in.u64("seq");
	r.t_render_start = in.ts("t_render_start");
	r.t_render_end = in.ts("t_render_end");
	r.t_present = in.ts("t_present");
	r.refresh_ns = in.u64("refresh_ns");
	r.missed = in.boolean("missed");
	return r;
}

} // namespace

std::string header_line(std::int32_t pid, std::uint64_t start_ns) {
	return to_line({{"v", kSchemaVersion}, {"type", "header"}, {"clock", "CLOCK_MONOTONIC"}, {"unit", "ns"},
		{"pid", pid}, {"start_ns", start_ns}});
}

static_assert(kSchemaVersion == 1, "the hand-written lines below say \"v\":1");

CommitLines::CommitLines(
	std::uint64_t surface_id, std::int32_t pid, std::string_view app_id_text, std::string_view title_text) {
	const Line::Str app_id(app_id_text), title(title_text);
	Line l(head_, app_id.max_size() + title.max_size());
	l.lit("{\"v\":1,\"type\":\"commit\",\"surface\":").u64(surface_id).lit(",\"pid\":").i64(pid);
	l.lit(",\"app_id\":").str(app_id).lit(",\"title\":").str(title).lit(",\"seq\":");
	l.end();
}

void CommitLines::append(std::string &out, const CommitSample &r) {
	const Shape shape{r.transport, r.format, r.width, r.height, r.bytes, r.damage_bytes};
	if (shape_text_.empty() || !(shape == shape_)) {
		shape_ = shape;
		shape_text_.clear();
		const std::string format_text = format_name(r.format);
		const Line::Str transport(transport_name(r.transport)), format(format_text);
		Line l(shape_text_, transport.max_size() + format.max_size());
		l.lit(",\"transport\":").str(transport).lit(",\"format\":").str(format);
		l.lit(",\"width\":").i64(r.width).lit(",\"height\":").i64(r.height);
		l.lit(",\"bytes\":").u64(r.bytes).lit(",\"damage_bytes\":").u64(r.damage_bytes).lit(",\"t_commit\":");
		l.end();
	}
	if (output_text_.empty() || r.output.view() != output_.view()) {
		output_ = r.output;
		output_text_.clear();
		const Line::Str output(r.output.view());
		Line l(output_text_, output.max_size());
		l.lit(",\"output\":");
		if (r.output.empty()) {
			l.lit("null");
		} else {
			l.str(output);
		}
		l.lit(",\"discarded\":");
		l.end();
	}
	Line l(out, head_.size() + shape_text_.size() + output_text_.size());
	l.text(head_).u64(r.seq).text(shape_text_);
	Line::Digits base;
	if (r.t_commit != 0) {
		base = l.mark_u64(r.t_commit);
	} else {
		l.lit("null");
	}
	l.lit(",\"t_data_complete\":").ts_near(r.t_data_complete, base);
	l.lit(",\"t_convert_start\":").ts_near(r.t_convert_start, base);
	l.lit(",\"t_convert_end\":").ts_near(r.t_convert_end, base);
	l.lit(",\"t_upload_start\":").ts_near(r.t_upload_start, base);
	l.lit(",\"t_upload_end\":").ts_near(r.t_upload_end, base);
	l.lit(",\"t_present\":").ts_near(r.t_present, base);
	l.lit(",\"t_target\":").ts_near(r.t_target, base).lit(",\"barrier_wait_ns\":").u64(r.barrier_wait);
	l.lit(",\"fifo\":");
	if (const char *fifo = fifo_name(r.fifo)) {
		l.lit("\"").text(fifo).lit("\"");
	} else {
		l.lit("null");
	}
	l.text(output_text_).boolean(r.discarded);
	l.done();
}

void append_commit_line(std::string &out, const CommitRecord &r) {
	CommitLines(r.surface_id, r.pid, r.app_id.view(), r.title.view()).append(out, r);
}

void append_frame_line(std::string &out, const FrameRecord &r) {
	const Line::Str output(r.output.view());
	Line l(out, output.max_size());
	l.lit("{\"v\":1,\"type\":\"frame\",\"output\":").str(output).lit(",\"seq\":").u64(r.seq);
	l.lit(",\"t_render_start\":").ts(r.t_render_start).lit(",\"t_render_end\":").ts(r.t_render_end);
	l.lit(",\"t_present\":").ts(r.t_present).lit(",\"refresh_ns\":").u64(r.refresh_ns);
	l.lit(",\"missed\":").boolean(r.missed);
	l.done();
}

std::string commit_line(const CommitRecord &r) {
	std::string out;
	append_commit_line(out, r);
	return out;
}

std::string frame_line(const FrameRecord &r) {
	std::string out;
	append_frame_line(out, r);
	return out;
}

std::string drops_line(std::uint64_t count, std::uint64_t since_ns) {
	ojson j;
	j["v"] = kSchemaVersion;
	j["type"] = "drops";
	j["count"] = count;
	j["since_ns"] = since_ns;
	return to_line(j);
}

LogError::LogError(const std::string &p, std::size_t l, const std::string &reason) :
	std::runtime_error(p + (l ? ":" + std::to_string(l) : std::string()) + ": " + reason), path(p), line(l) {}

Log read_log(const std::string &path) {
	std::ifstream in(path, std::ios::binary);
	if (!in) throw LogError(path, 0, std::string("cannot open: ") + std::strerror(errno));
	return read_log(in, path);
}

Log read_log(std::istream &in, const std::string &path) {
	Log log;
	std::string text;
	std::size_t lineno = 0;
	bool saw_header = false;
	while (std::getline(in, text)) {
		++lineno;
		const bool cut = in.eof(); // getline hit EOF before '\n': the writer always ends lines
		if (text.find('\0') != std::string::npos) {
			throw LogError(path, lineno, "binary data, not a pixelport timing log");
		}
		if (text.empty()) {
			if (cut) break;
			throw LogError(path, lineno, "empty line");
		}
		json j = json::parse(text, nullptr, false);
		if (j.is_discarded()) {
			throw LogError(path, lineno, cut ? "truncated line (file ends mid-record)" : "not valid JSON");
		}
		if (!j.is_object() || !j.contains("v") || !j.contains("type")) {
			throw LogError(path, lineno, "not a pixelport timing log record (no \"v\"/\"type\")");
		}
		const LineReader rd{path, lineno, j};
		const json &v = j["v"];
		if (!v.is_number_integer() || v.get<std::int64_t>() != kSchemaVersion) {
			rd.fail("unsupported schema version " + v.dump() + " (this tool reads " +
				std::to_string(kSchemaVersion) + ")");
		}
		const std::string type = rd.str("type");
		if (!saw_header) {
			if (type != "header") rd.fail("first line is not a pixelport timing header");
			if (rd.str("clock") != "CLOCK_MONOTONIC" || rd.str("unit") != "ns") {
				rd.fail("header has an unsupported clock or unit");
			}
			log.pid = static_cast<std::int32_t>(rd.i64("pid"));
			log.start_ns = rd.u64("start_ns");
			saw_header = true;
		} else if (type == "commit") {
			log.commits.push_back(parse_commit(rd));
		} else if (type == "frame") {
			log.frames.push_back(parse_frame(rd));
		} else if (type == "drops") {
			log.dropped += rd.u64("count");
		} else if (type == "header") {
			rd.fail("second header");
		} else {
			rd.fail("unknown record type \"" + type + "\"");
		}
	}
	if (lineno == 0) throw LogError(path, 0, "empty file, not a pixelport timing log");
	if (!saw_header) throw LogError(path, lineno, "no pixelport timing header");
	return log;
}

} // namespace pixelport::timing
