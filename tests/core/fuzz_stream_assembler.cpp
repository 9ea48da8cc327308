// libFuzzer target: the stream assembler (pixelport/core/stream_layout.hpp) against the
// protocol's packing and convert_rects(); the body is fuzz_stream_assembler() in
// stream_support.hpp, which the unit tests also run on random inputs. Built with clang by
// tests/core/meson.build (pixelport-core-fuzz-stream); run it longer with
//   build/tests/core/pixelport-core-fuzz-stream -max_total_time=600 CORPUS_DIR
#include <cstddef>
#include <cstdint>

#include "stream_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
	return pixelport::core::test::fuzz_stream_assembler(data, size);
}
