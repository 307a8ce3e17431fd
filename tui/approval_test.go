package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// later moves m's clock on by d.
func later(m *Model, d time.Duration) {
	now := m.opts.Now
	m.opts.Now = func() time.Time { return now().Add(d) }
}

// typeAt types each key of keys into m, every step apart on m's clock.
func typeAt(t *testing.T, m *Model, step time.Duration, keys ...string) {
	t.Helper()
	for _, k := range keys {
		later(m, step)
		_, cmd := m.Update(keyPress(t, k))
		run(m, cmd)
	}
}

// A message typed on as the question opens answers nothing: its letters
// (an a, a y among them) and its Enter go to the message, which waits;
// the input says the question waits. Once the keyboard has been still
// for the guard, a approves.
func TestTypingAheadDoesNotAnswerAnApproval(t *testing.T) {
	f := newFake(richSession()...)
	m := newModel(t, f, "dark", 120, 40)
	typeAt(t, m, 150*time.Millisecond, "l", "o")
	m.Update(ApprovalMsg{Tool: "run_command", Command: "rm -rf build"})
	typeAt(t, m, 150*time.Millisecond, "o", "k", "space", "a", "t", "space", "i", "t", "space", "y", "e", "s", "enter", "n", "d", "esc")
	if len(f.decided) != 0 || f.cancelled != 0 || len(f.submitted) != 0 {
		t.Fatalf("typing ahead answered the question: decided %+v, cancelled %d, sent %q", f.decided, f.cancelled, f.submitted)
	}
	if got := m.input.Value(); got != "look at it yesnd" {
		t.Fatalf("the typed-ahead message is %q", got)
	}
	s := screenOf(m)
	if !strings.Contains(s, "Approve run_command?") || !strings.Contains(s, "a question waits above · keys typed now go to your message") {
		t.Fatalf("the question, or the input's word that keys go to the message, is gone:\n%s", s)
	}
	later(m, approvalGuard)
	if s := screenOf(m); !strings.Contains(s, "waiting on the question above: a approve · d deny") {
		t.Fatalf("once the keyboard is still, the input does not say the question waits for a or d:\n%s", s)
	}
	later(m, -approvalGuard)
	// Still typing: the guard runs from the last key, not from the
	// question.
	typeAt(t, m, approvalGuard-time.Millisecond, "a")
	if len(f.decided) != 0 {
		t.Fatalf("a key within the guard of the one before answered: %+v", f.decided)
	}
	typeAt(t, m, approvalGuard, "a")
	if len(f.decided) != 1 || !f.decided[0].Approve || m.approval != nil {
		t.Fatalf("a after the guard: decided %+v", f.decided)
	}
	if s := screenOf(m); strings.Contains(s, "waiting on the question") {
		t.Fatalf("the input still waits after the answer:\n%s", s)
	}
}

// A question just opened takes no key, even after a still keyboard; and
// Enter never approves.
func TestApprovalGuardFromTheQuestion(t *testing.T) {
	for _, k := range []string{"a", "y", "s", "p", "d", "n", "esc"} {
		f := newFake(richSession()...)
		m := newModel(t, f, "dark", 120, 40)
		later(m, time.Hour)
		m.Update(ApprovalMsg{Tool: "write_file", Path: "a.go", Diff: "+package a\n"})
		typeAt(t, m, approvalGuard-time.Millisecond, k)
		if len(f.decided) != 0 || f.cancelled != 0 || m.approval == nil {
			t.Fatalf("%s %s after the question opened answered it: %+v, cancelled %d", k, approvalGuard-time.Millisecond, f.decided, f.cancelled)
		}
		typeAt(t, m, approvalGuard, "enter")
		if len(f.decided) != 0 || m.approval == nil {
			t.Fatalf("Enter answered the question: %+v", f.decided)
		}
		typeAt(t, m, approvalGuard, k)
		if len(f.decided)+f.cancelled != 1 {
			t.Fatalf("%s after the guard answered nothing", k)
		}
	}
}

// A paste, bracketed, is text for the message whatever it holds; a key
// hard behind it is part of it.
func TestPasteDoesNotAnswerAnApproval(t *testing.T) {
	f := newFake(richSession()...)
	m := newModel(t, f, "dark", 120, 40)
	m.Update(ApprovalMsg{Tool: "run_command", Command: "make"})
	later(m, time.Minute)
	_, cmd := m.Update(tea.PasteMsg{Content: "a\ny\r\nsure"})
	run(m, cmd)
	typeAt(t, m, time.Millisecond, "a")
	if len(f.decided) != 0 || m.approval == nil {
		t.Fatalf("a paste answered the question: %+v", f.decided)
	}
	if got := m.input.Message(); got != "a\ny\nsurea" {
		t.Fatalf("the message after the paste is %q", got)
	}
	typeAt(t, m, approvalGuard, "d")
	if len(f.decided) != 1 || f.decided[0].Approve {
		t.Fatalf("d after the guard: %+v", f.decided)
	}
}
