#include "io.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace pixelport::timing::detail {

int create_file(const std::string &path, const char *what) {
	const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) throw std::system_error(errno, std::generic_category(), std::string(what) + " " + path);
	return fd;
}

bool pwrite_all(int fd, std::string_view data, std::uint64_t offset) {
	while (!data.empty()) {
		const ssize_t n = ::pwrite(fd, data.data(), data.size(), static_cast<off_t>(offset));
		if (n < 0 && errno == EINTR) continue;
		if (n <= 0) return false;
		data.remove_prefix(static_cast<std::size_t>(n));
		offset += static_cast<std::uint64_t>(n);
	}
	return true;
}

} // namespace pixelport::timing::detail
