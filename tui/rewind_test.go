package tui

import (
	"strings"
	"testing"

	"retrace/state"
)

// notesSession writes NOTES.md at v5 (its tool_finished carries the
// change) and answers.
func notesSession() []state.Event {
	digest := "sha256:" + strings.Repeat("ab", 32)
	return []state.Event{
		{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "take notes"}}},
		{Kind: state.PlanSet, Plan: []state.Step{{Text: "write NOTES.md"}}},
		{Kind: state.AssistantMessage, Messages: []state.Message{{Role: state.RoleAssistant,
			ToolCalls: []state.ToolRequest{{ID: "w1", Name: "write_file", Arguments: `{"path":"NOTES.md","content":"new"}`}}}}},
		{Kind: state.ToolStarted, Tool: &state.ToolCall{ID: "w1"}},
		{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: "w1", Result: "wrote NOTES.md"},
			Files: []state.FileChange{{Path: "NOTES.md", Before: state.FileImage{Absent: true}, After: state.FileImage{Blob: digest, Size: 4, Mode: 0o644}}}},
		{Kind: state.ToolsDone},
		{Kind: state.Answered, Messages: []state.Message{{Role: state.RoleAssistant, Content: "done"}}},
	}
}

// The timeline says which files each version changed, with +/− lines
// once read, and d shows the diffs; closing them returns to the timeline.
func TestTimelineShowsFileChanges(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		f := newFake(notesSession()...)
		m := newModel(t, f, "dark", size[0], size[1])
		pressKeys(t, m, "ctrl+t", "home")
		if got := plain(m.Render()); !strings.Contains(got, "files: no workspace file changed here") {
			t.Fatalf("%v: v0's banner says nothing of files:\n%s", size, got)
		}
		pressKeys(t, m, "right", "right", "right", "right", "right")
		if len(f.diffed) != 1 || f.diffed[0][0].Path != "NOTES.md" {
			t.Fatalf("%v: stepping onto v5 read the diffs of %v", size, f.diffed)
		}
		if got := plain(m.Render()); !strings.Contains(got, "files: created NOTES.md (+1 −1)") {
			t.Fatalf("%v: v5's banner does not list its file change:\n%s", size, got)
		}
		pressKeys(t, m, "d")
		if m.mode != modeToolDetail || !strings.Contains(strings.Join(m.detail.body, "\n"), "+new") {
			t.Fatalf("%v: d shows mode %v, body %q", size, m.mode, m.detail.body)
		}
		checkScreen(t, m.Render(), size[0], size[1])
		pressKeys(t, m, "esc")
		if m.mode != modeTimeline || m.timeline.current().Version != 5 {
			t.Fatalf("%v: closing the diffs went to mode %v", size, m.mode)
		}
		pressKeys(t, m, "left", "d")
		if m.mode != modeTimeline || !strings.Contains(m.notice, "v4 changed no workspace file") {
			t.Fatalf("%v: d on a version without files: mode %v, notice %q", size, m.mode, m.notice)
		}
	}
}

// A restore over files changed outside retrace asks first: y overwrites
// them, k moves only the head, anything else leaves everything as it was.
func TestRestoreAsksAboutChangedFiles(t *testing.T) {
	for _, c := range []struct {
		answer   string
		restored []int
		how      RestoreHow
		notice   string
	}{
		{"n", nil, RestoreHow{}, ""},
		{"y", []int{2}, RestoreHow{Force: true}, "restored v2 and 1 file,"},
		{"k", []int{2}, RestoreHow{KeepFiles: true}, "restored v2 (files left as they were),"},
	} {
		f := newFake(notesSession()...)
		f.changedOutside = []string{"NOTES.md"}
		m := newModel(t, f, "dark", 120, 40)
		pressKeys(t, m, "ctrl+t", "home", "right", "right", "enter")
		if m.confirm == nil || !strings.Contains(m.confirm.question, "1 file changed outside retrace: NOTES.md. Overwrite with v2's?") {
			t.Fatalf("%s: no question about the changed file: %+v", c.answer, m.confirm)
		}
		if got := plain(m.Render()); !strings.Contains(got, "NOTES.md") {
			t.Fatalf("%s: the question is not on screen:\n%s", c.answer, got)
		}
		// The question comes by itself, later than the key that led to
		// it: a key typed as it opens answers nothing.
		pressKeys(t, m, c.answer)
		if m.confirm == nil || len(f.restored) != 0 {
			t.Fatalf("%s typed as the question opened: restored %v", c.answer, f.restored)
		}
		later(m, approvalGuard)
		pressKeys(t, m, c.answer)
		if m.confirm != nil || len(f.restored) != len(c.restored) || (len(c.restored) > 0 && f.restored[0] != c.restored[0]) {
			t.Fatalf("%s: restored %v, question %+v", c.answer, f.restored, m.confirm)
		}
		if last := f.hows[len(f.hows)-1]; last != c.how && c.restored != nil {
			t.Fatalf("%s: asked the driver for %+v, want %+v", c.answer, last, c.how)
		}
		if c.notice != "" && !strings.HasPrefix(m.notice, c.notice) {
			t.Fatalf("%s: notice %q, want it to start %q", c.answer, m.notice, c.notice)
		}
	}
}

// Enter on a call in the tool log shows, below its result, the files it
// changed and their diffs.
func TestToolDetailShowsTheCallsFiles(t *testing.T) {
	f := newFake(notesSession()...)
	m := newModel(t, f, "dark", 120, 40)
	pressKeys(t, m, "tab", "enter")
	body := strings.Join(m.detail.body, "\n")
	if m.mode != modeToolDetail || !strings.Contains(body, "files:\ncreated NOTES.md (+1 −1)") || !strings.Contains(body, "+new") {
		t.Fatalf("mode %v, detail:\n%s", m.mode, body)
	}
	if len(f.diffed) != 1 || len(f.diffed[0]) != 1 || f.diffed[0][0].Path != "NOTES.md" {
		t.Fatalf("diffed %v", f.diffed)
	}
}

// A call whose approval was never given (the task was cancelled while it
// asked) shows as cancelled in the tool log, not as waiting.
func TestCancelledApprovalShowsAsCancelled(t *testing.T) {
	f := newFake(richSession()...)
	m := newModel(t, f, "dark", 120, 40)
	pending := state.ToolCall{ID: "c9", Name: "run_command", Arguments: `{"command":"make"}`, Approval: state.AwaitingDecision}
	cancelled := pending
	cancelled.FinishedAt, cancelled.Error = t0, "interrupted: cancelled by the user"
	if line := plain(toolLine(&m.st, pending, 60)); !strings.HasPrefix(line, "? run make") {
		t.Fatalf("pending: %q", line)
	}
	if line := plain(toolLine(&m.st, cancelled, 60)); !strings.HasPrefix(line, "⊘ run make") || !strings.HasSuffix(line, "cancelled") {
		t.Fatalf("cancelled: %q", line)
	}
	// On screen, in the tool log at either size.
	for _, size := range sizes {
		f := newFake(append(richSession(),
			state.Event{Kind: state.AssistantMessage, Messages: []state.Message{{Role: state.RoleAssistant,
				ToolCalls: []state.ToolRequest{{ID: "c9", Name: "write_file", Arguments: `{"path":"x.go","content":"x"}`}}}}},
			state.Event{Kind: state.ApprovalRequested, Tool: &state.ToolCall{ID: "c9"}},
			state.Event{Kind: state.Interrupted})...)
		m := newModel(t, f, "dark", size[0], size[1])
		pressKeys(t, m, "tab")
		if size[0] < wideLayout {
			pressKeys(t, m, "tab")
		}
		if s := screenOf(m); !strings.Contains(s, "⊘ write x.go") || !strings.Contains(s, "cancelled") {
			t.Fatalf("%v: the cancelled approval is not shown as cancelled:\n%s", size, s)
		}
	}
}
