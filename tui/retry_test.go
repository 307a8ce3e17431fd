package tui

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"retrace/state"
)

// interruptedSession is a task stopped mid-way and never taken up again.
func interruptedSession() []state.Event {
	return append(richSession(), state.Event{Kind: state.Interrupted})
}

// Ctrl+R acts on the head's own failed or interrupted task, and on
// nothing else: not on a message sent in another session or on another
// branch, and not on a task that finished. Where there is nothing to
// retry it says so.
func TestRetryActsOnlyOnTheHeadsOwnTask(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			nothing := func(t *testing.T, f *fakeDriver, m *Model, submitted int) {
				t.Helper()
				pressKeys(t, m, "ctrl+r")
				if len(f.submitted) != submitted || f.resumed != 0 || m.running {
					t.Fatalf("Ctrl+R with nothing to retry: submitted %q, resumed %d, running %v", f.submitted, f.resumed, m.running)
				}
				if s := statusText(m); !strings.Contains(s, "nothing to retry") {
					t.Fatalf("the status line does not say there is nothing to retry: %q", s)
				}
			}
			t.Run("a new session after a failure elsewhere", func(t *testing.T) {
				f := newFake(answeredSession()...)
				m := newModel(t, f, "dark", size[0], size[1])
				typed(t, m, "fix the build")
				failed := newFake(append(answeredSession(),
					state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "fix the build"}}},
					state.Event{Kind: state.Failed, Text: "server error (500)"})...)
				m.Update(TaskDoneMsg{Err: errors.New("server error (500)"), Session: failed.info, Head: failed.head})
				m.Update(SessionChangedMsg{Session: SessionInfo{ID: "a1b2c3d4e5f60718"}, Head: state.New("a1b2c3d4e5f60718")})
				nothing(t, f, m, 1)
			})
			t.Run("a branch the message was never sent on", func(t *testing.T) {
				f := newFake(answeredSession()...)
				m := newModel(t, f, "dark", size[0], size[1])
				typed(t, m, "only on branch 1")
				m.Update(TaskDoneMsg{Err: errors.New("server error (500)"), Session: f.info, Head: f.head})
				m.Update(restoredMsg{version: 2, session: f.info, head: f.head})
				nothing(t, f, m, 1)
			})
			t.Run("a finished task", func(t *testing.T) {
				f := newFake(answeredSession()...)
				m := newModel(t, f, "dark", size[0], size[1])
				nothing(t, f, m, 0)
			})
			t.Run("an empty session", func(t *testing.T) {
				f := newFake()
				m := newModel(t, f, "dark", size[0], size[1])
				nothing(t, f, m, 0)
			})
			t.Run("the head's interrupted task goes on", func(t *testing.T) {
				f := newFake(interruptedSession()...)
				m := newModel(t, f, "dark", size[0], size[1])
				pressKeys(t, m, "ctrl+r")
				if f.resumed != 1 || len(f.submitted) != 0 || !m.running {
					t.Fatalf("Ctrl+R on an interrupted task: resumed %d, submitted %q, running %v", f.resumed, f.submitted, m.running)
				}
			})
			t.Run("the head's failed task is sent again", func(t *testing.T) {
				f := newFake(failedSession()...)
				m := newModel(t, f, "dark", size[0], size[1])
				pressKeys(t, m, "ctrl+r")
				if len(f.submitted) != 1 || f.submitted[0] != "Why does `go build` fail?" || f.resumed != 0 {
					t.Fatalf("Ctrl+R on a failed task: submitted %q, resumed %d", f.submitted, f.resumed)
				}
			})
		})
	}
}

// A message the driver refuses to start (no API key, say) leaves the
// interface at rest with the reason, not busy with nothing running.
func TestARefusedStartLeavesTheInterfaceAtRest(t *testing.T) {
	for _, size := range sizes {
		t.Run(sizeName(size), func(t *testing.T) {
			f := newFake(answeredSession()...)
			f.submitErr = errors.New("set OPENAI_API_KEY to talk to gpt-test")
			m := newModel(t, f, "dark", size[0], size[1])
			typed(t, m, "hello again")
			if m.running {
				t.Fatal("the interface is busy after the driver refused to start the task")
			}
			if s := statusText(m); !strings.Contains(s, "set OPENAI_API_KEY to talk to gpt-test") {
				t.Fatalf("the refusal is not shown: %q", s)
			}
		})
	}
}
