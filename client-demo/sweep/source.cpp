#include "source.hpp"

#include <cstdio>

namespace pixelport::sweep {

Source load_source(const Options &o) {
	Source src;
	if (!o.image.empty()) {
		std::string error;
		if (!load_image(o.image, &src.img, &error)) die(2, error);
		src.path = o.image;
	} else if (!o.pattern) {
		src.path = find_system_photo();
		if (!src.path.empty()) {
			std::string error;
			if (!load_image(src.path, &src.img, &error)) {
				fprintf(stderr, "pixelport-sweep: note: %s; using the synthetic pattern\n",
					error.c_str());
				src.path.clear();
			}
		}
	}
	if (!src.path.empty()) {
		src.note = "image " + src.path + " (" + std::to_string(src.img.width) + "x" +
			std::to_string(src.img.height) + ")";
		if (o.image.empty()) src.note += ", a photo from a Debian wallpaper package";
	} else {
		src.note = o.pattern ? "synthetic pattern (--pattern)"
				     : "synthetic pattern (no --image and no Debian wallpaper photo installed; "
				       "apt-get install lomiri-wallpapers-20.04 for one)";
	}
	return src;
}

} // namespace pixelport::sweep
