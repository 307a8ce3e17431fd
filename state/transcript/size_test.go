package transcript_test

import (
	"testing"

	"retrace/state/transcript"
)

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 bytes", 1: "1 byte", 2: "2 bytes", 100: "100 bytes", 1023: "1023 bytes", 1024: "1 KiB", 1025: "1025 bytes",
		1536: "1536 bytes", 2048: "2 KiB", 64 << 10: "64 KiB", 1<<20 - 1024: "1023 KiB", 1 << 20: "1 MiB",
		1<<20 + 1024: "1025 KiB", 1<<20 + 1: "1048577 bytes", 3 << 20: "3 MiB", 10 << 20: "10 MiB",
	} {
		if got := transcript.Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
