//===- E2m1Table.h - The sm_90a e2m1 decoding table's constants -*- C++ -*-===//
//
// The register-weight GEMM (Sm90GemmKernel) decodes e2m1 codes through a
// per-block byte table: the bf16 of the 8 magnitudes times the block's scale
// (four packed bf16 products of kMagnitudePairs by the scale), split by byte
// permutes into pools of their high bytes and of their low bytes; a word of
// 8 codes then becomes 4 bf16x2 fragment words by byte permutes (PTX prmt,
// default mode: selector nibble i picks byte i of the result from the 8
// bytes of {a, b}, a's bytes 0-3 and b's 4-7). Half the weight rows take the
// arithmetic route instead (its constants at the end). MLIR-free: a host
// model of the same permutes and products proves both routes exact for every
// code and scale (test/unit/cuda/E2m1TableTest.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef MOEGEN_TEMPLATES_SM90_E2M1TABLE_H
#define MOEGEN_TEMPLATES_SM90_E2M1TABLE_H

#include <cstdint>

namespace moegen::sm90 {

/// bf16x2 words (element 0 low) of the e2m1 magnitude pairs (0, 0.5),
/// (1, 1.5), (2, 3), (4, 6): magnitude m is pair m / 2, half m % 2.
inline constexpr uint32_t kE2m1MagnitudePairs[4] = {0x3F000000u, 0x3FC03F80u, 0x40404000u,
                                                    0x40C04080u};
/// Of two bf16x2 words: their four high bytes, their four low bytes (in
/// element order: the pools the magnitudes 0-3 and 4-7 index).
inline constexpr uint32_t kHighBytesOfPairs = 0x7531u;
inline constexpr uint32_t kLowBytesOfPairs = 0x6420u;
/// The magnitude bits of the 8 codes of a word: the selector nibbles (bit 3,
/// prmt's sign-replicate mode, cleared); prmt reads the low 16 bits, codes
/// 0-3, and the word shifted right by 16 gives codes 4-7.
inline constexpr uint32_t kMagnitudeSelect = 0x77777777u;
/// Bytes 0, 1 (and 2, 3) of a and b interleaved: a0 b0 a1 b1 (a2 b2 a3 b3).
/// For (low bytes, high bytes) this makes two bf16 values; for (word << 4,
/// word) it puts the sign bits of codes 0-3 (4-7) at bit 7 of bytes 0-3.
inline constexpr uint32_t kInterleaveBytes01 = 0x5140u;
inline constexpr uint32_t kInterleaveBytes23 = 0x7362u;
/// Bit 7 of every byte: the signs OR-ed into the high bytes.
inline constexpr uint32_t kByteSignBits = 0x80808080u;

/// The arithmetic route (Sm90GemmKernel::dequantWordArith). Fragment word p
/// of a word of codes: the permute of (word << 4, word) that gives bytes
/// [byte p of word << 4 (code 2p at bits 4-7), its sign in every bit, byte p
/// of word (code 2p + 1 at bits 4-7), its sign in every bit].
constexpr uint32_t arithmeticSelect(uint32_t p) {
  return p | (8 | p) << 4 | (4 + p) << 8 | (12 + p) << 12;
}
/// After that permute and a shift by 2: the bits of each half that hold a
/// code's magnitude (6-8) and sign (15), and the bf16x2 of 2^126 that brings
/// the placed value (the code's times 2^-126) to the code's.
inline constexpr uint32_t kE2m1PlacedBits = 0x81C081C0u;
inline constexpr uint32_t kBf16x2Two126 = 0x7E807E80u;
/// The one-product form: for e8m0 scales e <= 128 (scale at most 2), 2^126 x
/// the scale is 2^(e - 1), a bf16 of exponent field e + 126 (e x 0x00800080
/// plus this bias in both halves), and the placed bits times it are the
/// code times the scale exactly (in [2^-128, 12]): the same bf16 as the two
/// products give. Larger scales (and NaN, 255) take the two products.
inline constexpr uint32_t kBf16x2OneProductBias = 0x3F003F00u;
inline constexpr uint32_t kE2m1OneProductMaxScale = 128;

} // namespace moegen::sm90

#endif // MOEGEN_TEMPLATES_SM90_E2M1TABLE_H
