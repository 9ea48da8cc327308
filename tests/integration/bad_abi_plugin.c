// A plugin built against a future ABI: the compositor must refuse it before calling anything.
#include <stdint.h>

__attribute__((visibility("default"))) const uint32_t pixelport_abi_version = 9999;

__attribute__((visibility("default"))) void *pixelport_create(void *display, void *renderer, const void *options) {
	// Reaching this would mean the ABI check was skipped: crash loudly.
	__builtin_trap();
}
