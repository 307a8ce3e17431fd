package rewind

import (
	"testing"

	"retrace/state"
)

// sentSession is a session as it arrives from someone else: they allowed
// run_command for the whole session and wrote a.txt, then it arrived
// here (arrival 9) and the user here wrote b.txt. It returns the session,
// the sender's version that allows run_command (its tool_finished) and
// the arrival's version.
func sentSession(t *testing.T) (s *session, theirs, arrival int) {
	t.Helper()
	s = newSession()
	s.commit(state.Event{Kind: state.AssistantMessage, Messages: []state.Message{{Role: state.RoleAssistant,
		ToolCalls: []state.ToolRequest{{ID: "ok", Name: "run_command", Arguments: `{}`}}}}})
	s.commit(state.Event{Kind: state.ApprovalRequested, Tool: &state.ToolCall{ID: "ok"}})
	s.commit(state.Event{Kind: state.ApprovalGiven, Tool: &state.ToolCall{ID: "ok"}, Always: true})
	s.commit(state.Event{Kind: state.ToolStarted, Tool: &state.ToolCall{ID: "ok"}})
	s.commit(state.Event{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: "ok", Result: "ok"}})
	theirs = s.write(map[string]string{"a.txt": "theirs\n"})
	if len(s.st.states[theirs].Memory.AllowedTools) != 1 {
		t.Fatal("the sender's version allows no tool")
	}
	s.commit(state.Event{Kind: state.Imported, Text: "imported from theirs.json", Arrival: 9})
	arrival = s.st.head
	s.commit(state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "go on"}}})
	s.commit(state.Event{Kind: state.PlanSet, Plan: []state.Step{{Text: "work"}}})
	s.write(map[string]string{"b.txt": "mine\n"})
	return s, theirs, arrival
}

// closedAsItArrives checks that a rollback to the sender's version
// theirs left the head on a checkpoint of its own under it that closed
// it: the sender's tools allowed no more, nothing open, the arrival kept.
func closedAsItArrives(t *testing.T, s *session, res Result, theirs int) {
	t.Helper()
	head := res.Head
	if len(head.Memory.AllowedTools) != 0 || head.Restoring != nil || head.Phase.Active() || head.Arrival != 9 {
		t.Fatalf("after the rollback: allowed %v, restoring %v, phase %s, arrival %d",
			head.Memory.AllowedTools, head.Restoring, head.Phase, head.Arrival)
	}
	v := head.Version
	for s.st.events[v].Kind == state.FilesRestored {
		v = s.st.states[v].ParentVersion
	}
	if ev := s.st.events[v]; ev.Kind != state.Imported || ev.Arrival != 9 || s.st.states[v].ParentVersion != theirs {
		t.Fatalf("the rollback's first checkpoint is %s (arrival %d) under v%d, want imported under v%d",
			ev.Kind, ev.Arrival, s.st.states[v].ParentVersion, theirs)
	}
	if s.st.head != head.Version {
		t.Fatalf("the store's head is v%d, the result's v%d", s.st.head, head.Version)
	}
}

// A rollback to a version the sender recorded, with files to put back or
// none, never brings back what they allowed there.
func TestRollbackToTheSendersVersionClosesIt(t *testing.T) {
	t.Run("files", func(t *testing.T) {
		s, theirs, _ := sentSession(t)
		res, err := Restore(ctx, s.st, s.files, s.st.states[s.st.head], theirs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		closedAsItArrives(t, s, res, theirs)
		if _, ok := s.files.files["b.txt"]; ok || res.Restored != 1 {
			t.Fatalf("restored %d; the workspace %q", res.Restored, s.disk())
		}
	})
	t.Run("keep files", func(t *testing.T) {
		s, theirs, _ := sentSession(t)
		res, err := Restore(ctx, s.st, s.files, s.st.states[s.st.head], theirs, Options{KeepFiles: true})
		if err != nil {
			t.Fatal(err)
		}
		closedAsItArrives(t, s, res, theirs)
		if s.disk()["b.txt"] != "mine\n" {
			t.Fatalf("--keep-files changed the workspace: %q", s.disk())
		}
	})
	t.Run("nothing to put back", func(t *testing.T) {
		s, theirs, arrival := sentSession(t)
		// Back to the arrival first (b.txt goes), then to theirs: the
		// same files, nothing to write.
		if _, err := Restore(ctx, s.st, s.files, s.st.states[s.st.head], arrival, Options{}); err != nil {
			t.Fatal(err)
		}
		res, err := Restore(ctx, s.st, s.files, s.st.states[s.st.head], theirs, Options{})
		if err != nil {
			t.Fatal(err)
		}
		closedAsItArrives(t, s, res, theirs)
	})
}

// The user's own versions, after the arrival, are theirs: a rollback
// among them records a restore as ever, and the arrival stays.
func TestRollbackAmongOwnVersionsIsPlain(t *testing.T) {
	s, _, arrival := sentSession(t)
	res, err := Restore(ctx, s.st, s.files, s.st.states[s.st.head], arrival, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if started := s.st.events[res.Head.Version-1]; started.Kind != state.RestoreStarted {
		t.Fatalf("the rollback's first checkpoint is %s", started.Kind)
	}
	if res.Head.Arrival != 9 {
		t.Fatalf("arrival %d after a rollback to the arrival", res.Head.Arrival)
	}
}
