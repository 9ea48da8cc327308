// --peer waypipe: the shm transports of this sweep again, as a child run through waypipe.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "model.hpp"
#include "options.hpp"

namespace pixelport::sweep {

/**
 * Runs `shm_transports` at `size_args` as a child through waypipe, once per --peer-compress, in
 * out/peer-waypipe-COMPRESS; appends its points (transport "NAME@waypipe-COMPRESS") to *points and
 * their series to *series, and a note for each run that was skipped or failed.
 */
void run_peer(const Options &o, const std::vector<std::string> &size_args,
	const std::vector<std::string> &shm_transports, const std::filesystem::path &out, std::vector<Point> *points,
	std::vector<std::string> *series, std::vector<std::string> *notes);

} // namespace pixelport::sweep
