// Internal: hand-written SIMD rows (SSSE3 and AVX2) for the hot pairs, each a
// specialisation of the template in rows_impl.h with the template as its tail.
