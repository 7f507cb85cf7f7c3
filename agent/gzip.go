package agent

import "sync"

// gzipStored returns b as a gzip member (RFC 1952) whose deflate stream
// (RFC 1951) is made of stored blocks: a valid gzip file, not a smaller
// one. The agent writes it by hand: compress/gzip and hash/crc32 compute
// tables when the program starts, and what package initialisation runs is
// counted in every profile of every program kprof builds, served over
// HTTP or not. pprof's readers accept any gzip member.
func gzipStored(b []byte) []byte {
	const maxStored = 65535
	out := make([]byte, 0, len(b)+len(b)/maxStored*5+5+18)
	// ID1 ID2, CM=8 (deflate), FLG=0, MTIME=0, XFL=0, OS=255 (unknown).
	out = append(out, 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255)
	for rest := b; ; {
		n := min(len(rest), maxStored)
		final := byte(0)
		if n == len(rest) {
			final = 1
		}
		// BFINAL, BTYPE=00 (stored), padded to a byte; LEN and NLEN.
		out = append(out, final, byte(n), byte(n>>8), ^byte(n), ^byte(n>>8))
		out = append(out, rest[:n]...)
		rest = rest[n:]
		if final == 1 {
			break
		}
	}
	c := crc32IEEE(b)
	out = append(out, byte(c), byte(c>>8), byte(c>>16), byte(c>>24))
	size := uint32(len(b))
	return append(out, byte(size), byte(size>>8), byte(size>>16), byte(size>>24))
}

var (
	crcOnce  sync.Once
	crcTable [256]uint32
)

// crc32IEEE returns the CRC-32 (IEEE polynomial, reflected) of b, as
// gzip's trailer holds it. Its table is made on first use.
func crc32IEEE(b []byte) uint32 {
	crcOnce.Do(func() {
		for i := range crcTable {
			c := uint32(i)
			for range 8 {
				if c&1 != 0 {
					c = c>>1 ^ 0xedb88320
				} else {
					c >>= 1
				}
			}
			crcTable[i] = c
		}
	})
	c := ^uint32(0)
	for _, x := range b {
		c = crcTable[byte(c)^x] ^ c>>8
	}
	return ^c
}
