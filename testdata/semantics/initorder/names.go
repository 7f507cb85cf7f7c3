package main

import (
	"fmt"
	"strings"
)

var names = build(3)

func build(n int) []string {
	var s []string
	for i := 0; i < n; i++ {
		s = append(s, strings.Repeat("x", i+1))
	}
	return s
}

type list struct{}

func (list) String() string { return strings.Join(names, ",") }

var c = fmt.Sprint(list{})
