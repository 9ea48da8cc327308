#include "pixelport/timing/records.h"

#include <cstdio>
#include <ctime>
#include <iterator>

namespace pixelport::timing {
namespace {

struct FormatName {
  std::uint32_t fourcc;
  std::string_view name;
};
// The formats clients commonly send; others decode to their fourcc characters.
constexpr FormatName kFormats[] = {
    {fourcc('X', 'R', '2', '4'), "XRGB8888"},    {fourcc('A', 'R', '2', '4'), "ARGB8888"},
    {fourcc('X', 'B', '2', '4'), "XBGR8888"},    {fourcc('A', 'B', '2', '4'), "ABGR8888"},
    {fourcc('R', 'X', '2', '4'), "RGBX8888"},    {fourcc('R', 'A', '2', '4'), "RGBA8888"},
    {fourcc('B', 'X', '2', '4'), "BGRX8888"},    {fourcc('B', 'A', '2', '4'), "BGRA8888"},
    {fourcc('R', 'G', '1', '6'), "RGB565"},      {fourcc('B', 'G', '1', '6'), "BGR565"},
    {fourcc('R', 'G', '2', '4'), "RGB888"},      {fourcc('B', 'G', '2', '4'), "BGR888"},
    {fourcc('X', 'R', '3', '0'), "XRGB2101010"}, {fourcc('A', 'R', '3', '0'), "ARGB2101010"},
    {fourcc('X', 'B', '3', '0'), "XBGR2101010"}, {fourcc('A', 'B', '3', '0'), "ABGR2101010"},
    {fourcc('X', 'B', '4', 'H'), "XBGR16161616F"}, {fourcc('A', 'B', '4', 'H'), "ABGR16161616F"},
    {fourcc('R', '8', ' ', ' '), "R8"},          {fourcc('G', 'R', '8', '8'), "GR88"},
    {fourcc('N', 'V', '1', '2'), "NV12"},        {fourcc('N', 'V', '2', '1'), "NV21"},
    {fourcc('N', 'V', '1', '6'), "NV16"},        {fourcc('P', '0', '1', '0'), "P010"},
    {fourcc('P', '0', '1', '2'), "P012"},        {fourcc('P', '0', '1', '6'), "P016"},
    {fourcc('Y', 'U', 'Y', 'V'), "YUYV"},        {fourcc('U', 'Y', 'V', 'Y'), "UYVY"},
    {fourcc('Y', 'U', '1', '2'), "YUV420"},      {fourcc('Y', 'V', '1', '2'), "YVU420"},
};

constexpr std::string_view kTransportNames[] = {"unknown", "shm", "shm-new-pool", "stream"};

bool printable(char c) { return c >= 0x20 && c <= 0x7e; }

}  // namespace

std::string_view transport_name(Transport t) {
  auto i = static_cast<std::size_t>(t);
  return i < std::size(kTransportNames) ? kTransportNames[i] : "unknown";
}

bool parse_transport(std::string_view name, Transport& out) {
  for (std::size_t i = 0; i < std::size(kTransportNames); ++i) {
    if (kTransportNames[i] == name) {
      out = static_cast<Transport>(i);
      return true;
    }
  }
  return false;
}

std::string format_name(std::uint32_t code) {
  for (const auto& f : kFormats) {
    if (f.fourcc == code) return std::string(f.name);
  }
  char chars[4];
  bool ok = true;
  for (int i = 0; i < 4; ++i) {
    chars[i] = static_cast<char>((code >> (8 * i)) & 0xff);
    ok = ok && printable(chars[i]);
  }
  if (ok) return std::string(chars, 4);
  char hex[11];
  std::snprintf(hex, sizeof hex, "0x%08x", code);
  return hex;
}

bool parse_format(std::string_view name, std::uint32_t& out) {
  for (const auto& f : kFormats) {
    if (f.name == name) {
      out = f.fourcc;
      return true;
    }
  }
  if (name.size() == 4) {
    for (char c : name) {
      if (!printable(c)) return false;
    }
    out = fourcc(name[0], name[1], name[2], name[3]);
    return true;
  }
  if (name.size() == 10 && name.starts_with("0x")) {
    std::uint32_t v = 0;
    for (char c : name.substr(2)) {
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) return false;
      v = v << 4 | static_cast<std::uint32_t>(d);
    }
    out = v;
    return true;
  }
  return false;
}

std::uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(ts.tv_nsec);
}

}  // namespace pixelport::timing
