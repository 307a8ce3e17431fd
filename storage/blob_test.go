package storage

import (
	"fmt"
	"testing"

	"retrace/state"
)

// BenchmarkCheckReferences checks the event of a command that made
// 100,000 small files, each content carried: the cost of the check must
// follow the number of contents, not its square.
func BenchmarkCheckReferences(b *testing.B) {
	const n = 100_000
	ev := state.Event{Kind: state.ToolFinished, Files: make([]state.FileChange, n)}
	carried := make([]state.Blob, n)
	for i := range n {
		data := fmt.Appendf(nil, "file %d\n", i)
		d := Digest(data)
		carried[i] = state.Blob{Digest: d, Data: data}
		ev.Files[i] = state.FileChange{Path: fmt.Sprintf("gen/f%d", i), Before: state.FileImage{Absent: true}, After: state.FileImage{Blob: d, Size: int64(len(data))}}
	}
	held := func(string) bool { return false }
	for b.Loop() {
		if err := CheckReferences(ev, carried, held); err != nil {
			b.Fatal(err)
		}
	}
}
