// Pressure mode (--instances N): N concurrent clients each putting one huge image, and what that
// costs the compositor's memory.
#pragma once

#include <filesystem>
#include <string>

#include "options.hpp"

namespace pixelport::sweep {

/**
 * Runs pressure mode with the image at `image_path` ("" for the pattern; `image_note` says which),
 * writes pressure.{csv,json,txt} to `out`; the exit status (0 if any instance finished).
 */
int run_pressure(const Options &o, const std::string &image_path, const std::string &image_note,
	const std::filesystem::path &out);

} // namespace pixelport::sweep
