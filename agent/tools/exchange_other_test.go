//go:build !linux

package tools

import "errors"

// exchange needs renameat2, which only Linux has.
func exchange(a, b string) error { return errors.ErrUnsupported }
