//go:build !linux

package sandbox

// probeABI: Landlock is Linux's.
func probeABI() (int, error) { return 0, nil }
