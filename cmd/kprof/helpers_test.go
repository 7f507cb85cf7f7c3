package main

import (
	"bytes"
	"os"
	"os/exec"
)

// runCmd runs a command and returns its combined output.
func runCmd(dir string, env []string, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func lookPath(name string) (string, error) { return exec.LookPath(name) }
