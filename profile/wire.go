package profile

// The wire primitives are written out here rather than taken from
// encoding/binary and hash/crc32: this package is linked into instrumented
// programs, and the fewer standard packages it needs, the fewer a test
// binary of those packages has to rebuild it against (kprof test).

// appendUvarint appends x in the unsigned LEB128 form
// encoding/binary.AppendUvarint uses.
func appendUvarint(b []byte, x uint64) []byte {
	for x >= 0x80 {
		b = append(b, byte(x)|0x80)
		x >>= 7
	}
	return append(b, byte(x))
}

// uvarint decodes an unsigned LEB128 number from b and returns it with the
// number of bytes read: n == 0 means b is too short, n < 0 that the value
// overflows 64 bits (-n bytes were read), as encoding/binary.Uvarint.
func uvarint(b []byte) (uint64, int) {
	var x uint64
	var s uint
	for i, c := range b {
		if i == 10 {
			return 0, -(i + 1)
		}
		if c < 0x80 {
			if i == 9 && c > 1 {
				return 0, -(i + 1)
			}
			return x | uint64(c)<<s, i + 1
		}
		x |= uint64(c&0x7f) << s
		s += 7
	}
	return 0, 0
}

// checksum is the 32-bit FNV-1a hash of b.
func checksum(b []byte) uint32 { return checksumUpdate(checksumInit, b) }

// checksumInit is the checksum of no bytes.
const checksumInit = uint32(2166136261)

// checksumUpdate returns the checksum of the bytes whose checksum is h
// followed by b.
func checksumUpdate(h uint32, b []byte) uint32 {
	for _, c := range b {
		h ^= uint32(c)
		h *= 16777619
	}
	return h
}

func appendUint32(b []byte, v uint32) []byte {
	return append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
}

func uint32At(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}
