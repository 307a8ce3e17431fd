package tui

import (
	"strings"
	"testing"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
)

// A folded paste's marker edits as one piece: Backspace at its end, or a
// deletion reaching into it, takes the whole marker and its paste, and
// text typed inside it goes after it. The rest of the draft is kept and
// the cursor stays where the edit was.
func TestMarkersEditWhole(t *testing.T) {
	for _, size := range sizes {
		t.Run(sizeName(size), func(t *testing.T) {
			f := newFake()
			m := newModel(t, f, "dark", size[0], size[1])
			for _, r := range "see " {
				m.Update(keyMsg(string(r)))
			}
			m.Update(tea.PasteMsg{Content: numberedLog(100)})
			for _, r := range " ok" {
				m.Update(keyMsg(string(r)))
			}
			pressKeys(t, m, "left", "left", "left", "backspace")
			if got := m.input.Value(); got != "see  ok" || len(m.input.folded.markers) != 0 {
				t.Fatalf("Backspace at a marker's end left %q and %d pastes", got, len(m.input.folded.markers))
			}
			m.Update(keyMsg("x")) // the cursor stayed where the marker was
			if got := m.input.Value(); got != "see x ok" {
				t.Fatalf("typing after the deletion: %q", got)
			}
			m.input.Reset()
			m.Update(tea.PasteMsg{Content: numberedLog(50)})
			marker := m.input.Value()
			for range 5 {
				pressKeys(t, m, "left")
			}
			m.Update(keyMsg("Z"))
			if got := m.input.Value(); got != marker+"Z" {
				t.Fatalf("a letter typed inside a marker: %q", got)
			}
			pressKeys(t, m, "enter")
			if len(f.submitted) != 1 || f.submitted[0] != numberedLog(50)+"Z" {
				t.Fatalf("sent %d messages; the first is not the paste and Z", len(f.submitted))
			}
		})
	}
}

// A marker typed by hand, or a second copy, is text: no paste is sent
// twice.
func TestACopiedMarkerIsText(t *testing.T) {
	f := newFake()
	m := newModel(t, f, "dark", 80, 24)
	log := numberedLog(100)
	m.Update(tea.PasteMsg{Content: log})
	marker := m.input.Value()
	m.Update(tea.PasteMsg{Content: " and " + marker}) // short: inline
	pressKeys(t, m, "enter")
	if want := strings.TrimSpace(log + " and " + marker); len(f.submitted) != 1 || f.submitted[0] != want {
		t.Fatalf("a copied marker expanded too (%d sent)", len(f.submitted))
	}
}

// The editor gets the pastes whole, and what comes back folds again
// where a paste is still whole in it.
func TestEditorSeesPastesWhole(t *testing.T) {
	f := newFake()
	m := newModel(t, f, "dark", 80, 24)
	log := numberedLog(100)
	m.Update(tea.PasteMsg{Content: log})
	marker := m.input.Value()
	if got := m.input.Message(); got != log {
		t.Fatalf("the editor would get %d bytes, not the paste", len(got))
	}
	m.Update(editorMsg{text: "look: " + log + " thanks\n"})
	if got := m.input.Value(); got != "look: "+marker+" thanks" {
		t.Fatalf("after the editor the draft is %.80q", got)
	}
	m.Update(editorMsg{text: "changed it all"})
	if got := m.input.Message(); got != "changed it all" || len(m.input.folded.markers) != 0 {
		t.Fatalf("a paste edited away in the editor: %q, %d pastes", got, len(m.input.folded.markers))
	}
}

// FuzzMarkerEdits makes any one edit of a draft holding two markers:
// whole never panics, never cuts a character, and leaves every paste it
// keeps with its marker whole in the draft.
func FuzzMarkerEdits(f *testing.F) {
	f.Add("see ", " and ", " ok", 5, 3, "x")
	f.Add("é", "ü", "", 0, 40, "")
	f.Fuzz(func(t *testing.T, a, b, c string, at, del int, ins string) {
		var p pastes
		m1, m2 := p.fold(numberedLog(30), 0), p.fold(numberedLog(40), 0)
		before := a + m1 + b + m2 + c
		at = min(max(at, 0), len(before))
		del = min(max(del, 0), len(before)-at)
		after := before[:at] + ins + before[at+del:]
		draft, cursor, ok := p.whole(before, after)
		if !ok {
			return
		}
		if cursor < 0 || cursor > len(draft) || (utf8.ValidString(before) && utf8.ValidString(after) && !utf8.ValidString(draft)) {
			t.Fatalf("whole(%q, %q) = %q, cursor %d", before, after, draft, cursor)
		}
		for _, m := range p.markers {
			if !strings.Contains(draft, m) {
				t.Fatalf("a kept paste lost its marker: %q in %q", m, draft)
			}
		}
	})
}
