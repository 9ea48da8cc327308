#include "pixelport/timing/jsonl.h"

#include <charconv>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

namespace pixelport::timing {
namespace {

using nlohmann::json;
using ojson = nlohmann::ordered_json;  // keeps the documented key order


std::string to_line(const ojson& j) {
  // replace: a client's invalid UTF-8 must not abort the writer thread.
  return j.dump(-1, ' ', false, ojson::error_handler_t::replace) + '\n';
}

// Commit and frame lines are written by hand: they are the hot path of the writer thread
// (an ordered_json per record cost ~4.5 us of CPU on this 2-core machine, next to a
// compositor and its clients). The output is the same text nlohmann writes.
class Line {
 public:
  // Appends to `out` (the writer thread's batch buffer: no string per line).
  Line(std::string& out, const char* type) : out_(out) {
    out_ += "{\"v\":";
    number(static_cast<std::uint64_t>(kSchemaVersion));
    out_ += ",\"type\":\"";
    out_ += type;
    out_ += '"';
  }
  Line& u64(const char* key, std::uint64_t v) {
    this->key(key);
    number(v);
    return *this;
  }
  Line& i64(const char* key, std::int64_t v) {
    this->key(key);
    if (v < 0) {
      out_ += '-';
      number(static_cast<std::uint64_t>(0) - static_cast<std::uint64_t>(v));
    } else {
      number(static_cast<std::uint64_t>(v));
    }
    return *this;
  }
  Line& ts(const char* key, std::uint64_t ns) {  // 0 = absent
    if (ns == 0) return null(key);
    return u64(key, ns);
  }
  Line& null(const char* key) {
    this->key(key);
    out_ += "null";
    return *this;
  }
  Line& boolean(const char* key, bool v) {
    this->key(key);
    out_ += v ? "true" : "false";
    return *this;
  }
  Line& str(const char* key, std::string_view v) {
    this->key(key);
    // Plain printable ASCII needs no escaping; anything else goes through nlohmann, which
    // escapes and replaces invalid UTF-8 exactly as the rest of the file does.
    bool plain = true;
    for (unsigned char c : v) plain = plain && c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
    if (plain) {
      out_ += '"';
      out_ += v;
      out_ += '"';
    } else {
      out_ += ojson(std::string(v)).dump(-1, ' ', false, ojson::error_handler_t::replace);
    }
    return *this;
  }
  void done() { out_ += "}\n"; }

 private:
  void key(const char* k) {
    out_ += ",\"";
    out_ += k;
    out_ += "\":";
  }
  void number(std::uint64_t v) {
    char buf[24];
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
    out_.append(buf, end);
  }
  std::string& out_;
};

// Reading ---------------------------------------------------------------------------------

struct LineReader {
  const std::string& path;
  std::size_t line;
  const json& j;

  [[noreturn]] void fail(const std::string& why) const { throw LogError(path, line, why); }

  const json& field(const char* name) const {
    auto it = j.find(name);
    if (it == j.end()) fail(std::string("missing field \"") + name + "\"");
    return *it;
  }
  std::uint64_t u64(const char* name) const {
    const json& v = field(name);
    if (!v.is_number_unsigned() && !(v.is_number_integer() && v.get<std::int64_t>() >= 0)) {
      fail(std::string("field \"") + name + "\" is not a non-negative integer");
    }
    return v.get<std::uint64_t>();
  }
  std::int64_t i64(const char* name) const {
    const json& v = field(name);
    if (!v.is_number_integer()) fail(std::string("field \"") + name + "\" is not an integer");
    return v.get<std::int64_t>();
  }
  std::uint64_t ts(const char* name) const { return field(name).is_null() ? 0 : u64(name); }
  std::string str(const char* name) const {
    const json& v = field(name);
    if (!v.is_string()) fail(std::string("field \"") + name + "\" is not a string");
    return v.get<std::string>();
  }
  std::string str_or_null(const char* name) const { return field(name).is_null() ? "" : str(name); }
  bool boolean(const char* name) const {
    const json& v = field(name);
    if (!v.is_boolean()) fail(std::string("field \"") + name + "\" is not a boolean");
    return v.get<bool>();
  }
};

CommitRecord parse_commit(const LineReader& in) {
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
  r.output = in.str_or_null("output");
  r.discarded = in.boolean("discarded");
  return r;
}

FrameRecord parse_frame(const LineReader& in) {
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

}  // namespace

std::string header_line(std::int32_t pid, std::uint64_t start_ns) {
  return to_line({{"v", kSchemaVersion}, {"type", "header"}, {"clock", "CLOCK_MONOTONIC"},
                  {"unit", "ns"}, {"pid", pid}, {"start_ns", start_ns}});
}

void append_commit_line(std::string& out, const CommitRecord& r) {
  Line l(out, "commit");
  l.u64("surface", r.surface_id).i64("pid", r.pid).str("app_id", r.app_id.view()).str("title", r.title.view());
  l.u64("seq", r.seq).str("transport", transport_name(r.transport)).str("format", format_name(r.format));
  l.i64("width", r.width).i64("height", r.height).u64("bytes", r.bytes).u64("damage_bytes", r.damage_bytes);
  l.ts("t_commit", r.t_commit).ts("t_data_complete", r.t_data_complete);
  l.ts("t_convert_start", r.t_convert_start).ts("t_convert_end", r.t_convert_end);
  l.ts("t_upload_start", r.t_upload_start).ts("t_upload_end", r.t_upload_end).ts("t_present", r.t_present);
  if (r.output.empty()) {
    l.null("output");
  } else {
    l.str("output", r.output.view());
  }
  l.boolean("discarded", r.discarded);
  l.done();
}

void append_frame_line(std::string& out, const FrameRecord& r) {
  Line l(out, "frame");
  l.str("output", r.output.view()).u64("seq", r.seq).ts("t_render_start", r.t_render_start);
  l.ts("t_render_end", r.t_render_end).ts("t_present", r.t_present).u64("refresh_ns", r.refresh_ns);
  l.boolean("missed", r.missed);
  l.done();
}

std::string commit_line(const CommitRecord& r) {
  std::string out;
  out.reserve(512);
  append_commit_line(out, r);
  return out;
}

std::string frame_line(const FrameRecord& r) {
  std::string out;
  out.reserve(192);
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

LogError::LogError(const std::string& p, std::size_t l, const std::string& reason)
    : std::runtime_error(p + (l ? ":" + std::to_string(l) : std::string()) + ": " + reason),
      path(p),
      line(l) {}

Log read_log(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw LogError(path, 0, std::string("cannot open: ") + std::strerror(errno));
  Log log;
  std::string text;
  std::size_t lineno = 0;
  bool saw_header = false;
  while (std::getline(in, text)) {
    ++lineno;
    const bool cut = in.eof();  // getline hit EOF before '\n': the writer always ends lines
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
    const json& v = j["v"];
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

}  // namespace pixelport::timing
