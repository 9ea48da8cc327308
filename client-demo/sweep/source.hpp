// The sweep's content: --image, else a Debian wallpaper photo, else the synthetic pattern.
#pragma once

#include <string>

#include "image.hpp"
#include "options.hpp"

namespace pixelport::sweep {

struct Source {
	Image img; // decoded when path is set
	std::string path; // "" for the synthetic pattern
	std::string note; // what the content is, for the reports
};

/** Loads the content the options ask for; die()s if --image cannot be read. */
Source load_source(const Options &o);

} // namespace pixelport::sweep
