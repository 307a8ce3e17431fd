package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"retrace/agent"
	"retrace/agent/llmserver"
	"retrace/state"
)

// memories is a Briefer over a list in memory: what the caps read.
type memories struct {
	mu   sync.Mutex
	list []state.Memory
	err  error // Memories fails with it, when set
}

func (m *memories) Instructions(context.Context) (string, []state.InstructionFile, []string, error) {
	return "", nil, nil, nil
}

func (m *memories) Memories(context.Context) ([]state.Memory, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]state.Memory(nil), m.list...), m.err
}

func (m *memories) Remember(_ context.Context, text string, everywhere bool, source string) (state.Memory, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	at := time.Date(2026, 11, 27, 9, 0, len(m.list), 0, time.UTC)
	x := state.Memory{ID: fmt.Sprintf("m%d", len(m.list)), Text: text, Source: source, CreatedAt: at, UpdatedAt: at}
	if !everywhere {
		x.Project = "/src/app"
	}
	m.list = append(m.list, x)
	return x, false, nil
}

// kept fills m with n memories for the project and every project.
func (m *memories) kept(project, everywhere int) {
	for i := range project + everywhere {
		if _, _, err := m.Remember(context.Background(), fmt.Sprintf("fact %d", i), i >= project, "test"); err != nil {
			panic(err)
		}
	}
}

// rememberCalls is one reply of n remember calls for the project.
func rememberCalls(task, n int) llmserver.Response {
	var calls []llmserver.Call
	for i := range n {
		calls = append(calls, llmserver.Call{ID: fmt.Sprintf("call_%d_%d", task, i), Name: "remember", Args: fmt.Sprintf(`{"text":"fact %d.%d"}`, task, i)})
	}
	return llmserver.ToolCallReply(calls)
}

// A task keeps agent.MaxRememberedPerTask memories for its project
// without a question; past that each call asks, saying why. One the user
// approved (a memory for every project, or one past the cap) does not
// count. The next task starts afresh.
func TestRememberAsksPastTheTasksCap(t *testing.T) {
	ctx := context.Background()
	br := &memories{}
	r := newRig(t, agent.Options{Briefer: br})
	per := agent.MaxRememberedPerTask
	calls := []llmserver.Call{{ID: "call_everywhere", Name: "remember", Args: `{"text":"answer briefly","everywhere":true}`}}
	for i := range per + 2 {
		calls = append(calls, llmserver.Call{ID: fmt.Sprintf("call_%d", i), Name: "remember", Args: fmt.Sprintf(`{"text":"fact %d"}`, i)})
	}
	r.srv.Enqueue(llmserver.ToolCallReply(calls), llmserver.TextReply("Done."))
	r.approve.decisions = []agent.Decision{approveOnce, approveOnce} // then a denial
	s, err := r.agent().Send(ctx, "remember these")
	if err != nil || s.Phase != state.Done {
		t.Fatalf("phase %s: %v", s.Phase, err)
	}
	capped := fmt.Sprintf("this task already kept %d memories without asking; more need the user's approval", per)
	if want := []string{"", capped, capped}; strings.Join(r.approve.whys, "|") != strings.Join(want, "|") {
		t.Fatalf("asked because %q; want %q", r.approve.whys, want)
	}
	if len(br.list) != per+2 {
		t.Fatalf("%d memories kept; want %d unasked and the two approved", len(br.list), per)
	}
	if c := callByID(t, s, fmt.Sprintf("call_%d", per+1)); c.Approval != state.Denied || c.Result != "" {
		t.Fatalf("a denied call past the cap: %+v", c)
	}

	r.approve.asked, r.approve.whys = nil, nil
	r.srv.Enqueue(rememberCalls(2, per), llmserver.TextReply("Done."))
	if _, err := r.agent().Send(ctx, "and these"); err != nil {
		t.Fatal(err)
	}
	if len(r.approve.asked) != 0 || len(br.list) != 2*per+2 {
		t.Fatalf("the next task asked %v and kept %d", r.approve.asked, len(br.list))
	}
}

// A project that holds agent.MaxProjectMemories asks before it keeps
// more, even where remember is allowed without asking; memories kept
// for every project do not count. Memories that cannot be read ask too.
func TestRememberAsksPastTheProjectsCap(t *testing.T) {
	most := agent.MaxProjectMemories
	for _, c := range []struct {
		name              string
		project, anywhere int
		err               error
		why               string // "" when it does not ask
	}{
		{"under the cap", most - 1, 10, nil, ""},
		{"at the cap", most, 0, nil, fmt.Sprintf("this project already holds %d memories", most)},
		{"unreadable", 0, 0, errors.New("the log is damaged"), "could not be read (the log is damaged)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			br := &memories{}
			br.kept(c.project, c.anywhere)
			br.err = c.err
			r := newRig(t, agent.Options{Briefer: br, Allowed: []string{"remember"}})
			r.srv.Enqueue(rememberCalls(1, 1), llmserver.TextReply("Done."))
			r.approve.decisions = []agent.Decision{approveOnce}
			if _, err := r.agent().Send(context.Background(), "remember this"); err != nil {
				t.Fatal(err)
			}
			switch {
			case c.why == "" && len(r.approve.asked) != 0:
				t.Fatalf("asked because %q", r.approve.whys)
			case c.why != "" && (len(r.approve.whys) != 1 || !strings.Contains(r.approve.whys[0], c.why)):
				t.Fatalf("asked because %q; want %q", r.approve.whys, c.why)
			}
			if len(br.list) != c.project+c.anywhere+1 {
				t.Fatalf("%d memories kept", len(br.list))
			}
		})
	}
}
