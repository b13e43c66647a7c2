package jpegscale

import "math"

// The reduced inverse DCTs: from a block's 8×8 dequantized coefficients,
// kx×ky samples (kx and ky of 1, 2, 4 or 8), each the average of the
// (8/kx)×(8/ky) pixels the full inverse DCT gives where it lies.
//
// Averaging is linear, so it can be folded into the transform. In one
// dimension, the 8-point inverse DCT gives
//
//	x[j] = Σ_k C(k)/2 · cos((2j+1)kπ/16) · X[k],   C(0) = 1/√2, C(k>0) = 1,
//
// and the average of the samples j in a group g of 8/n of them is
//
//	a[g] = Σ_k box[n][k][g] · X[k],   box[n][k][g] = (n/8) Σ_{j in g} C(k)/2 · cos((2j+1)kπ/16).
//
// (For n = 4, the sums of cos over pairs make coefficient 4 drop out; for
// n = 2, every even coefficient but the DC: libjpeg's 2×2 inverse DCT uses
// the same five coefficients.) The 2D transform is separable: rows first,
// then columns. Rows and coefficients that are zero (most of them, in a
// photo) are skipped. The full 8×8 inverse DCT (kx = ky = 8) is image/jpeg's
// (idct in dct.go), and 1×1 is the DC coefficient over 8 (reconstructBlock).

// boxBits is the fixed-point precision of box: each pass multiplies by
// 1<<boxBits, and the result is shifted back by 2*boxBits.
const boxBits = 16

// box[n][k][g] is coefficient k's weight in the average of group g of n
// (see above), times 1<<boxBits, rounded.
var box = func() (t [9][8][8]int64) {
	for _, n := range []int{1, 2, 4, 8} {
		per := 8 / n
		for k := range 8 {
			ck := 0.5
			if k == 0 {
				ck = 0.5 / math.Sqrt2
			}
			for g := range n {
				sum := 0.0
				for j := g * per; j < (g+1)*per; j++ {
					sum += math.Cos(float64((2*j+1)*k) * math.Pi / 16)
				}
				t[n][k][g] = int64(math.Round(ck * sum / float64(per) * (1 << boxBits)))
			}
		}
	}
	return t
}()

// idctBox writes the kx×ky samples of the dequantized block b to dst,
// rows stride apart.
func idctBox(b *block, kx, ky int, dst []byte, stride int) {
	bx, by := &box[kx], &box[ky]
	// rows[i] is row nz[i] of the block (one vertical frequency) across,
	// as kx samples; rows with no coefficient are left out.
	var rows [8][8]int64
	var nz [8]int
	n := 0
	for r := range 8 {
		var t [8]int64
		any := false
		for k, c := range b[8*r : 8*r+8] {
			if c == 0 {
				continue
			}
			any = true
			w := &bx[k]
			for g := range kx {
				t[g] += int64(c) * w[g]
			}
		}
		if any {
			rows[n], nz[n] = t, r
			n++
		}
	}
	for y := range ky {
		line := dst[y*stride : y*stride+kx]
		for x := range line {
			v := int64(1) << (2*boxBits - 1) // one half, to round
			for i := range n {
				v += by[nz[i]][y] * rows[i][x]
			}
			line[x] = clamp(v >> (2 * boxBits))
		}
	}
}

// clamp returns the sample of the level-shifted value v: v+128, clipped
// to 0..255.
func clamp(v int64) uint8 {
	switch {
	case v < -128:
		return 0
	case v > 127:
		return 255
	}
	return uint8(v + 128)
}

// coeffs are a block's quantized coefficients, in natural order, as a
// progressive image keeps them between its scans: int16, as libjpeg keeps
// them (an 8-bit JPEG's coefficients fit in 12 bits), half the memory of
// a block.
type coeffs [blockSize]int16

// load copies c into b.
func (c *coeffs) load(b *block) {
	for i, v := range c {
		b[i] = int32(v)
	}
}

// store copies b into c.
func (c *coeffs) store(b *block) {
	for i, v := range b {
		c[i] = int16(v)
	}
}
