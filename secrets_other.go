//go:build !linux

package main

import (
	"io"
	"os"
)

// moveSecrets leaves the command line and the environment as they are:
// the way retrace hands its secrets to itself across an exec, a memory
// file, is Linux's, and so is the sandbox that would make it matter.
func moveSecrets(io.Writer) []string { return os.Args[1:] }
