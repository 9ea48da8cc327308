// Internal: hand-written NEON (arm64 ASIMD) rows, the arm64 counterpart of rows_simd.hpp.
// Each specialises Fast<S, D> from rows_impl.hpp, does the same integer / exactly
// representable float arithmetic as the template, lane for lane, and finishes the row
// with the template (widths that are not a multiple of the step). Loads never reach
// beyond the bytes of the row's own pixels. Structured loads (vld2/vld3/vld4) split
// interleaved channels and vst4 writes B G R A, so no shuffles are needed.
#if defined(__aarch64__)

// ---- 8-bit YUV -> RGB in 16-bit lanes, 16 pixels per step ----------------------------------
// yuv16_chroma / yuv16_luma / yuv16_out of rows_impl.hpp: vqrdmulh is pmulhrsw's
// (a * b + 2^14) >> 15 (it saturates only for -32768 * -32768, and no coefficient is
// -32768), vqadd is paddsw, vqmovun after the shift clamps to 0..255.
// Loaders give the luma of even and odd pixels of 8 pairs apart, so each lines up with the
// chroma of its pair without duplication.
template <class S>
struct Yuv16NeonLoad;

template <uint32_t Code, int U, int V>
struct Yuv16NeonLoad<SSemi<Code, U, V>> {
	static void load(const RowSrc &s, int32_t i, uint8x8_t &ye, uint8x8_t &yo, uint8x8_t &u, uint8x8_t &v) {
		const uint8x8x2_t y = vld2_u8(s.p[0] + i), c = vld2_u8(s.p[1] + i);
		ye = y.val[0];
		yo = y.val[1];
		u = c.val[U];
		v = c.val[V];
	}
};

template <uint32_t Code, int UP, int VP>
struct Yuv16NeonLoad<SPlanar<Code, UP, VP>> {
	static void load(const RowSrc &s, int32_t i, uint8x8_t &ye, uint8x8_t &yo, uint8x8_t &u, uint8x8_t &v) {
		const uint8x8x2_t y = vld2_u8(s.p[0] + i);
		ye = y.val[0];
		yo = y.val[1];
		u = vld1_u8(s.p[UP] + i / 2);
		v = vld1_u8(s.p[VP] + i / 2);
	}
};

template <uint32_t Code, int Y0, int U, int Y1, int V>
struct Yuv16NeonLoad<SPacked422<Code, Y0, U, Y1, V>> {
	static void load(const RowSrc &s, int32_t i, uint8x8_t &ye, uint8x8_t &yo, uint8x8_t &u, uint8x8_t &v) {
		const uint8x8x4_t x = vld4_u8(s.p[0] + 2 * int64_t(i));
		ye = x.val[Y0];
		yo = x.val[Y1];
		u = x.val[U];
		v = x.val[V];
	}
};

template <class S, class D>
void yuv16_row_neon(const RowSrc &s, uint8_t *d, int32_t w, const RowParams &c) {
	static_assert(D::cb == 8 && !D::bgr);
	const int16x8_t yoff = vdupq_n_s16(static_cast<int16_t>(c.y_off)), coff = vdupq_n_s16(128);
	const int16x8_t cy = vdupq_n_s16(static_cast<int16_t>(c.y_mul14)), r32 = vdupq_n_s16(32);
	const int16x8_t krv = vdupq_n_s16(static_cast<int16_t>(c.rv)), kgu = vdupq_n_s16(static_cast<int16_t>(-c.gu));
	const int16x8_t kgv = vdupq_n_s16(static_cast<int16_t>(-c.gv)), kbu = vdupq_n_s16(static_cast<int16_t>(c.bu));
	auto s16 = [](uint8x8_t x) { return vreinterpretq_s16_u16(vmovl_u8(x)); };
	auto luma = [&](uint8x8_t y) {
		return vaddq_s16(vqrdmulhq_s16(vshlq_n_s16(vsubq_s16(s16(y), yoff), 7), cy), r32);
	};
	auto out = [](int16x8_t y, int16x8_t t) { return vqmovun_s16(vshrq_n_s16(vqaddq_s16(y, t), 6)); };
	// Even and odd pixels' bytes back into pixel order.
	auto zip = [](uint8x8_t e, uint8x8_t o) {
		const uint8x8x2_t z = vzip_u8(e, o);
		return vcombine_u8(z.val[0], z.val[1]);
	};
	const int32_t n = w & ~15;
	for (int32_t i = 0; i < n; i += 16) {
		uint8x8_t y8[2], u8, v8;
		Yuv16NeonLoad<S>::load(s, i, y8[0], y8[1], u8, v8);
		const int16x8_t u = vshlq_n_s16(vsubq_s16(s16(u8), coff), 8);
		const int16x8_t v = vshlq_n_s16(vsubq_s16(s16(v8), coff), 8);
		const int16x8_t tr = vqrdmulhq_s16(v, krv);
		const int16x8_t tg = vqaddq_s16(vqrdmulhq_s16(u, kgu), vqrdmulhq_s16(v, kgv));
		const int16x8_t tb = vqrdmulhq_s16(u, kbu);
		const int16x8_t ye = luma(y8[0]), yo = luma(y8[1]);
		uint8x16x4_t px;
		px.val[0] = zip(out(ye, tb), out(yo, tb));
		px.val[1] = zip(out(ye, tg), out(yo, tg));
		px.val[2] = zip(out(ye, tr), out(yo, tr));
		px.val[3] = vdupq_n_u8(0xff);
		vst4q_u8(d + 4 * int64_t(i), px);
	}
	yuv_span<S, D>(s, d, n, w, c);
}

template <class S, class D>
	requires requires { &Yuv16NeonLoad<S>::load; }
struct Fast<S, D> {
	static constexpr RowFn fn = &yuv16_row_neon<S, D>;
};

#endif // __aarch64__
