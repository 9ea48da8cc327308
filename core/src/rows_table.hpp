// Internal: the kernel table of one instruction set. Included after rows_impl.hpp and
// after any hand-written specialisations of rgb_row / yuv_row in that file.
// The pairs must match the targets in format.cpp (a test checks both ways).

#define PP_RGB8(S) rgb_entry<S, DArgb8888>(), rgb_entry<S, DXrgb8888>()
#define PP_RGB10(S) PP_RGB8(S), rgb_entry<S, DAbgr2101010>(), rgb_entry<S, DXbgr2101010>()
#define PP_YUV8(S) yuv_entry<S, DArgb8888>(), yuv_entry<S, DXrgb8888>()
#define PP_YUV10(S) PP_YUV8(S), yuv_entry<S, DAbgr2101010>(), yuv_entry<S, DXbgr2101010>()

constexpr KernelEntry kTable[] = {
	rgb_entry<SArgb8888, DArgb8888>(), // for straight alpha (AlphaMode::Straight)
	PP_RGB8(SAbgr8888),
	PP_RGB8(SXbgr8888),
	PP_RGB8(SRgb888),
	PP_RGB8(SBgr888),
	PP_RGB8(SRgb565),
	PP_RGB8(SBgr565),
	PP_RGB8(SXrgb1555),
	PP_RGB8(SArgb1555),
	PP_RGB8(SXrgb4444),
	PP_RGB8(SArgb4444),
	PP_RGB10(SXrgb2101010),
	PP_RGB10(SArgb2101010),
	PP_RGB10(SXbgr2101010),
	PP_RGB10(SAbgr2101010),
	PP_RGB10(SXbgr16f),
	PP_RGB10(SAbgr16f),
	PP_YUV8(SYuyv),
	PP_YUV8(SUyvy),
	PP_YUV8(SNv12),
	PP_YUV8(SNv21),
	PP_YUV8(SNv16),
	PP_YUV8(SYuv420),
	PP_YUV8(SYvu420),
	PP_YUV10(SP010),
};

#undef PP_RGB8
#undef PP_RGB10
#undef PP_YUV8
#undef PP_YUV10
