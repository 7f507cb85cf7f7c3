// Strings, runes, slices, structs and arrays.
package main

type point struct{ x, y int }

func wordCount(s string) int {
	n, in := 0, false
	for _, r := range s {
		space := r == ' ' || r == '\n'
		if !space && !in {
			n++
		}
		in = !space
	}
	return n
}

func main() {
	text := "the quick brown fox jumps over the lazy dog\nhéllo wörld"
	pts := make([]point, 0, 8)
	for i := 0; i < 8; i++ {
		pts = append(pts, point{i, i * i})
	}
	s := 0
	for _, p := range pts[2:6] {
		s += p.x * p.y
	}
	b := []byte(text)
	for i := range b {
		if b[i] == 'o' {
			b[i] = '0'
		}
	}
	println(wordCount(text), s, len(string(b)), string(b[:9]))
}
