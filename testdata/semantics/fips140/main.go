// Package main runs with the FIPS 140 module's self-checks on (as
// GODEBUG=fips140=on does): at startup crypto/internal/fips140/check
// hashes the module's code and initialized data and panics ("fips140:
// verification mismatch") if they differ from what the linker hashed.
// kprof instruments the module's packages; their tables must not change
// its hashed data.
//
//go:debug fips140=on
package main

import (
	"crypto/fips140"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"fmt"
)

func main() {
	fmt.Println("fips140 enabled:", fips140.Enabled())
	fmt.Printf("sha256: %x\n", sha256.Sum256([]byte("kprof")))
	fmt.Printf("sha512: %x\n", sha512.Sum512([]byte("kprof")))
	m := hmac.New(sha256.New, []byte("key"))
	m.Write([]byte("instruction counts"))
	fmt.Printf("hmac: %x\n", m.Sum(nil))
}
