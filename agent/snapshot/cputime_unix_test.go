//go:build unix

package snapshot

import (
	"syscall"
	"testing"
)

// cpuTime is the CPU time (user and system) the process has used, in ns:
// on a shared machine it says what a scan costs when the wall-clock time
// also counts the waits for a CPU that another job holds.
func cpuTime(b *testing.B) int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
