package yearbench

import (
	"testing"
	"time"

	"retrace/storage"
)

// Every session the benchmark builds is one an import accepts, of exactly
// the size asked, at rest at its head, and old only when gc is to take it.
func TestSessionsImportAtEverySize(t *testing.T) {
	now := time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, n := range []int{1, 2, 3, 6, 7, 8, 20, 101, 1000} {
		p := Plan{Sessions: 10, Checkpoints: n, Now: now}
		if p.Old(p.Measured()) {
			t.Fatalf("the measured session %d is one gc removes", p.Measured())
		}
		for i := range p.Sessions {
			ex, err := Session(i, p)
			if err != nil {
				t.Fatalf("%d checkpoints, session %d: %v", n, i, err)
			}
			if _, err := storage.CheckImport(ex); err != nil {
				t.Fatalf("%d checkpoints, session %d: %v", n, i, err)
			}
			if len(ex.Checkpoints) != n {
				t.Fatalf("%d checkpoints asked, session %d has %d", n, i, len(ex.Checkpoints))
			}
			if ex.Session.Phase.Active() {
				t.Fatalf("%d checkpoints, session %d ends in %s, not at rest", n, i, ex.Session.Phase)
			}
			old := now.Sub(ex.Session.UpdatedAt) > GCAge
			if old != p.Old(i) {
				t.Fatalf("session %d updated %s ago: old %v, want %v", i, now.Sub(ex.Session.UpdatedAt), old, p.Old(i))
			}
		}
	}
}

// A long session's checkpoints have the sizes of a real chat's: about
// 750 bytes each, as in the file issue 15 measured (151 MB for 200,000).
func TestCheckpointSize(t *testing.T) {
	ex, err := Session(1, Plan{Sessions: 3, Checkpoints: 1000, Now: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	text := 0
	for _, r := range ex.Checkpoints {
		for _, m := range r.Data.Messages {
			text += len(m.Content)
		}
		if r.Data.Tool != nil {
			text += len(r.Data.Tool.Result)
		}
	}
	if per := text / len(ex.Checkpoints); per < 300 || per > 1200 {
		t.Fatalf("%d bytes of text per checkpoint; a real chat has 300 to 1200", per)
	}
}
