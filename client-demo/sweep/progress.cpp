#include "progress.hpp"

#include <cstdio>

using pixelport::client::now_ns;

namespace pixelport::sweep {

std::string Progress::left() const {
	if (done == 0 || done >= total) return "";
	double s = static_cast<double>(now_ns() - start) / 1e9 / done * (total - done);
	char buf[48];
	if (s < 90)
		snprintf(buf, sizeof(buf), ", ~%.0f s left", s);
	else
		snprintf(buf, sizeof(buf), ", ~%.0f min left", s / 60);
	return buf;
}

void Progress::step(const std::string &label, const std::string &result) {
	done++;
	if (tty) {
		int width = 30, filled = total ? done * width / total : width;
		fprintf(stderr, "\r\033[K[%s%s] %d/%d%s %s", std::string(static_cast<size_t>(filled), '#').c_str(),
			std::string(static_cast<size_t>(width - filled), '.').c_str(), done, total, left().c_str(),
			label.c_str());
		if (done == total) fprintf(stderr, "\n");
	} else {
		fprintf(stderr, "pixelport-sweep: [%d/%d%s] %s: %s\n", done, total, left().c_str(), label.c_str(),
			result.c_str());
	}
	fflush(stderr);
}

} // namespace pixelport::sweep
