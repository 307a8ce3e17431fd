//go:build !unix

package snapshot

import "testing"

// cpuTime is not measured here: the benchmarks report zero CPU time.
func cpuTime(*testing.B) int64 { return 0 }
