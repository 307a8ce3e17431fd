package tui

import (
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"retrace/state"
)

// A session opened mid-task runs nothing by itself, by -r or from the
// sessions list: the status line says Ctrl+R carries the task on and a
// new message replaces it, and a message is sent as a new task.
func TestOpeningAMidTaskSessionRunsNothing(t *testing.T) {
	f := newFake(richSession()...) // ends executing, a call approved
	m := newModel(t, f, "dark", 120, 40)
	run(m, m.Init())
	if m.running || f.resumed != 0 {
		t.Fatalf("opening a mid-task session carried it on: running %v, resumed %d", m.running, f.resumed)
	}
	if s := statusText(m); !strings.Contains(s, "stopped in the middle of a task (executing): Ctrl+R carries it on; a new message replaces it") {
		t.Fatalf("status %q", s)
	}
	other := newModel(t, newFake(), "dark", 120, 40)
	run(other, func() tea.Msg { return SessionChangedMsg{Session: f.info, Head: f.head} })
	if other.running || f.resumed != 0 || !strings.Contains(other.notice, "Ctrl+R carries it on") {
		t.Fatalf("switching to it: running %v, resumed %d, notice %q", other.running, f.resumed, other.notice)
	}
	typed(t, m, "what is this about?")
	if f.resumed != 0 || len(f.submitted) != 1 || f.submitted[0] != "what is this about?" {
		t.Fatalf("a message on a mid-task head: resumed %d, submitted %q", f.resumed, f.submitted)
	}
}

// restoreLeftOpen is a session whose head is a restore a stopped retrace
// left open: v3, restoring v2.
func restoreLeftOpen() *fakeDriver {
	hook := state.FileChange{Path: ".git/hooks/pre-commit", Before: state.FileImage{Untracked: "a symlink"}, After: state.FileImage{Absent: true}}
	return newFake(append(answeredSession(), state.Event{Kind: state.RestoreStarted, From: 1, Files: []state.FileChange{hook}})...)
}

// A restore left open is asked about when the session opens, and nothing
// is written until the answer: y finishes it, k keeps the files and
// moves the head to the version it restored, n leaves it for later, and
// a message sent meanwhile brings the question back.
func TestAnOpenRestoreIsAskedAbout(t *testing.T) {
	const question = "A restore of the workspace to v2 was left unfinished (1 file; nothing written since)"
	for _, c := range []struct {
		key              string
		finished, keptAt int
	}{{"y", 1, 0}, {"k", 0, 2}, {"n", 0, 0}} {
		t.Run(c.key, func(t *testing.T) {
			f := restoreLeftOpen()
			m := newModel(t, f, "dark", 120, 40)
			run(m, m.Init())
			if f.finished != 0 || len(f.restored) != 0 || !strings.Contains(statusText(m), question) {
				t.Fatalf("on open: finished %d, restored %v, status %q", f.finished, f.restored, statusText(m))
			}
			// The question comes by itself: a key typed as it opens
			// answers nothing.
			typeAt(t, m, approvalGuard-time.Millisecond, c.key)
			if f.finished != 0 || len(f.restored) != 0 || m.confirm == nil {
				t.Fatalf("%s typed as the question opened answered it: finished %d, restored %v", c.key, f.finished, f.restored)
			}
			typeAt(t, m, approvalGuard, c.key)
			if f.finished != c.finished {
				t.Fatalf("finished %d, want %d", f.finished, c.finished)
			}
			if c.keptAt > 0 && (len(f.restored) != 1 || f.restored[0] != c.keptAt || !f.hows[0].KeepFiles) {
				t.Fatalf("restored %v with %+v, want v%d keeping the files", f.restored, f.hows, c.keptAt)
			}
			if c.key == "n" && (len(f.restored) != 0 || m.confirm != nil) {
				t.Fatalf("later: restored %v, question %v", f.restored, m.confirm)
			}
		})
	}
	f := restoreLeftOpen()
	f.submitErr = errRestoreOpen
	m := newModel(t, f, "dark", 120, 40)
	run(m, m.Init())
	typeAt(t, m, approvalGuard, "n")
	typed(t, m, "go on")
	if m.confirm == nil || !strings.Contains(statusText(m), question) || m.input.Value() != "go on" {
		t.Fatalf("a message on an open restore: question %v, input %q, status %q", m.confirm, m.input.Value(), statusText(m))
	}
}

var errRestoreOpen = errors.New("a restore of the workspace was left unfinished")
