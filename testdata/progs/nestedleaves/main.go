// Loops over small functions that push and call small leaves: a
// comparison that calls a getter, and a generic one that calls a generic
// leaf (the shape of cmp.Less and its isNaN in slices.IsSorted), called
// once or twice, two or four times per call of the comparison, with a
// call of a leaf from the loop itself between them.
package main

type point struct{ x, y int }

func (p point) X() int { return p.x }

// less calls the getter twice, or four times.
func less(a, b point) bool {
	return a.X() < b.X() || a.X() == b.X() && a.y < b.y
}

func isNaN[T int | float64](x T) bool { return x != x }

// lessT calls isNaN once, or twice when x is a NaN.
func lessT[T int | float64](x, y T) bool {
	return (isNaN(x) && !isNaN(y)) || x < y
}

func sorted[T int | float64](s []T) bool {
	for i := len(s) - 1; i > 0; i-- {
		if lessT(s[i], s[i-1]) {
			return false
		}
	}
	return true
}

func sq(x int) int { return x * x }

func main() {
	pts := make([]point, 200)
	for i := range pts {
		pts[i] = point{i / 3, i % 7}
	}
	n := 0
	for r := 0; r < 20; r++ {
		for i := 1; i < len(pts); i++ {
			if less(pts[i-1], pts[i]) {
				n++
			}
			if i%5 == 0 {
				n += sq(i) % 3 // a leaf from the loop between the comparisons
			}
		}
	}
	ints := make([]int, 300)
	floats := make([]float64, 300)
	for i := range ints {
		ints[i] = i
		floats[i] = float64(i) / 2
	}
	nan := 0.0
	floats[150] = nan / nan
	k := 0
	for r := 0; r < 10; r++ {
		if sorted(ints) {
			k++
		}
		if sorted(floats) {
			k++
		}
	}
	println(n, k)
}
