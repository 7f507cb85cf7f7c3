// Command mpegaudio is the kprof evaluation workload in the role of SPEC JVM98
// _222_mpegaudio: a DCT-based codec with bit-stream (Huffman) coding. It
// encodes generated images with image/jpeg at varying quality and decodes
// them again, measuring the reconstruction error in integer arithmetic.
//
// Usage: mpegaudio [-n frames]. Each unit of -n is one 640x480 frame that is
// generated, encoded and decoded. The program prints one deterministic
// checksum line.
package main

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"hash/fnv"
	"image"
	"image/color"
	"image/jpeg"
	"math/rand/v2"
	"os"

	"github.com/kprof/kprof/bench/workloads/internal/cpuprofile"
)

const (
	width  = 640
	height = 480
)

type blob struct {
	cx, cy, r2 int
	c          color.RGBA
}

func main() {
	n := flag.Int("n", 90, "problem size: number of 640x480 frames to encode and decode")
	flag.Parse()
	if *n < 1 {
		fmt.Fprintln(os.Stderr, "mpegaudio: -n must be >= 1")
		os.Exit(2)
	}
	defer cpuprofile.Start()()

	r := rand.New(rand.NewPCG(1, 2))
	blobs := make([]blob, 12)
	for i := range blobs {
		rad := 10 + r.IntN(60)
		blobs[i] = blob{r.IntN(width), r.IntN(height), rad * rad,
			color.RGBA{uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(r.IntN(256)), 255}}
	}

	sum := fnv.New64a()
	var encoded, sqErr uint64
	var buf bytes.Buffer
	var word [8]byte
	rgba := image.NewRGBA(image.Rect(0, 0, width, height))
	gray := image.NewGray(image.Rect(0, 0, width, height))

	for f := 0; f < *n; f++ {
		var src image.Image
		if f%4 == 3 {
			drawGray(gray, r, f)
			src = gray
		} else {
			drawFrame(rgba, blobs, r, f)
			src = rgba
		}
		quality := 30 + (f*37)%70
		buf.Reset()
		if err := jpeg.Encode(&buf, src, &jpeg.Options{Quality: quality}); err != nil {
			fail("encode frame %d: %v", f, err)
		}
		encoded += uint64(buf.Len())
		binary.LittleEndian.PutUint64(word[:], uint64(buf.Len()))
		sum.Write(word[:])

		dec, err := jpeg.Decode(bytes.NewReader(buf.Bytes()))
		if err != nil {
			fail("decode frame %d: %v", f, err)
		}
		switch d := dec.(type) {
		case *image.YCbCr:
			sum.Write(d.Y)
			sum.Write(d.Cb)
			sum.Write(d.Cr)
			sqErr += rgbError(rgba, d)
		case *image.Gray:
			sum.Write(d.Pix)
			sqErr += grayError(gray, d)
		default:
			fail("frame %d decoded to unexpected %T", f, dec)
		}
	}
	fmt.Printf("mpegaudio n=%d bytes=%d sqerr=%d checksum=%016x\n", *n, encoded, sqErr, sum.Sum64())
}

// drawFrame paints gradients, moving discs and noise; frame f shifts the scene.
func drawFrame(img *image.RGBA, blobs []blob, r *rand.Rand, f int) {
	for y := 0; y < height; y++ {
		for x := 0; x < width; x++ {
			i := img.PixOffset(x, y)
			cr := (x*255/width + f*3) & 255
			cg := (y*255/height + f*5) & 255
			cb := ((x ^ y) + f) & 255
			for k := range blobs {
				b := &blobs[k]
				dx, dy := x-b.cx-f*(k%3), y-b.cy+f*(k%2)
				if dx*dx+dy*dy < b.r2 {
					cr, cg, cb = int(b.c.R), int(b.c.G), int(b.c.B)
				}
			}
			noise := int(r.Uint32N(16)) - 8
			img.Pix[i+0] = clamp(cr + noise)
			img.Pix[i+1] = clamp(cg + noise)
			img.Pix[i+2] = clamp(cb - noise)
			img.Pix[i+3] = 255
		}
	}
}

// drawGray paints a checkerboard of ramps with text-like stripes.
func drawGray(img *image.Gray, r *rand.Rand, f int) {
	for y := 0; y < height; y++ {
		for x := 0; x < width; x++ {
			v := (x + y + f) & 255
			if (x/32+y/32)%2 == 0 {
				v = 255 - v
			}
			if y%16 < 2 && r.IntN(4) != 0 {
				v = 0
			}
			img.Pix[img.PixOffset(x, y)] = clamp(v + int(r.Uint32N(8)) - 4)
		}
	}
}

func clamp(v int) uint8 {
	if v < 0 {
		return 0
	}
	if v > 255 {
		return 255
	}
	return uint8(v)
}

// rgbError is the squared error of the decoded luma against the source's
// luma, computed with color.RGBToYCbCr (integer arithmetic).
func rgbError(src *image.RGBA, d *image.YCbCr) uint64 {
	var e uint64
	for y := 0; y < height; y += 2 {
		for x := 0; x < width; x += 2 {
			i := src.PixOffset(x, y)
			yy, _, _ := color.RGBToYCbCr(src.Pix[i], src.Pix[i+1], src.Pix[i+2])
			diff := int64(yy) - int64(d.Y[d.YOffset(x, y)])
			e += uint64(diff * diff)
		}
	}
	return e
}

func grayError(src, d *image.Gray) uint64 {
	var e uint64
	for i, v := range src.Pix {
		diff := int64(v) - int64(d.Pix[i])
		e += uint64(diff * diff)
	}
	return e
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "mpegaudio: "+format+"\n", args...)
	os.Exit(1)
}
