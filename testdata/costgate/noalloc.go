//go:build !alloc

package work

func hook(s uint32) uint32 { return s & 1 }
