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
// then columns; the rows of coefficients that are all zero (most of them,
// in a photo) are skipped. The full 8×8 inverse DCT (kx = ky = 8) is image/jpeg's
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
	// rows[r] is row r of the block (one vertical frequency) across, as
	// kx samples; a row of zeros stays zero.
	var rows [8][8]int64
	for r := range 8 {
		x := (*[8]int32)(b[8*r : 8*r+8])
		if x[0]|x[1]|x[2]|x[3]|x[4]|x[5]|x[6]|x[7] == 0 {
			continue
		}
		box1D(kx, &[8]int64{int64(x[0]), int64(x[1]), int64(x[2]), int64(x[3]), int64(x[4]), int64(x[5]), int64(x[6]), int64(x[7])}, &rows[r])
	}
	for g := range kx {
		var out [8]int64
		box1D(ky, &[8]int64{rows[0][g], rows[1][g], rows[2][g], rows[3][g], rows[4][g], rows[5][g], rows[6][g], rows[7][g]}, &out)
		for y := range ky {
			// Back from twice boxBits, rounding half up as idct does.
			dst[y*stride+g] = clamp((out[y] + 1<<(2*boxBits-1)) >> (2 * boxBits))
		}
	}
}

// box1D sets out[:n] to the n averages of the 8-point inverse DCT of x.
// The weights are symmetric (box[n][k][n-1-g] is box[n][k][g] for even k,
// its opposite for odd k), so for n = 4 and 2 the even and odd
// coefficients are summed apart and added and subtracted, as a fast
// inverse DCT does; the weights that are zero are left out.
func box1D(n int, x, out *[8]int64) {
	switch n {
	case 4:
		w := &box[4]
		e0 := w[0][0]*x[0] + w[2][0]*x[2] + w[6][0]*x[6]
		e1 := w[0][1]*x[0] + w[2][1]*x[2] + w[6][1]*x[6]
		o0 := w[1][0]*x[1] + w[3][0]*x[3] + w[5][0]*x[5] + w[7][0]*x[7]
		o1 := w[1][1]*x[1] + w[3][1]*x[3] + w[5][1]*x[5] + w[7][1]*x[7]
		out[0], out[1], out[2], out[3] = e0+o0, e1+o1, e1-o1, e0-o0
	case 2:
		w := &box[2]
		e := w[0][0] * x[0]
		o := w[1][0]*x[1] + w[3][0]*x[3] + w[5][0]*x[5] + w[7][0]*x[7]
		out[0], out[1] = e+o, e-o
	case 1:
		out[0] = box[1][0][0] * x[0]
	default:
		w := &box[8]
		for g := range 8 {
			v := int64(0)
			for k := range 8 {
				v += w[k][g] * x[k]
			}
			out[g] = v
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
