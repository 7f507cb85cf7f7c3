package switches

func ts(x any) int {
	switch y := x.(type) {
	case int, int8:
		return 1
	case string:
		return len(y)
	case bool:
		if y {
			return 2
		}
	}
	return 0
}

func hash(v any) uint64 {
	h := uint64(0)
	switch v := v.(type) {
	case string:
		h += uint64(len(v))
	case byte:
		h += uint64(v)
	case int:
		h += uint64(v) * 3
	default:
		h = 7
	}
	return h
}

func sel(a, b chan int) int {
	select {
	case v := <-a:
		return v
	case b <- 1:
		return 2
	default:
		return 3
	}
}

func sw(s int64, t string) int64 {
	switch s {
	case 1, 2:
		s++
	case 3:
		s--
		fallthrough
	default:
		s *= 2
	}
	switch {
	case t == "a", len(t) > 3:
		s += 5
	}
	return s
}
