// Internal file helpers shared by the JSONL and trace writers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace pixelport::timing::detail {

// Creates/truncates `path` for writing; throws std::system_error naming `what` and the path.
int create_file(const std::string &path, const char *what);
// Writes all of `data` at `offset`, retrying short writes and EINTR. False on error (errno set).
bool pwrite_all(int fd, std::string_view data, std::uint64_t offset);

} // namespace pixelport::timing::detail
