package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"retrace/agent"
	"retrace/agent/llmserver"
	"retrace/state"
)

// gatedTools are the tools that ask before they run, written out from the
// tool descriptions ("Needs the person's approval"), not taken from the
// registry under test.
var gatedTools = []string{"write_file", "edit_file", "run_command"}

// gatedCall is the k-th call of a gated tool in these tests: each has a
// file of its own, so what is on disk says which calls ran.
func gatedCall(tool string, k int) llmserver.Response {
	return llmserver.ToolCallReply(call(gatedID(tool, k), tool, gatedArgs(tool, k)))
}

func gatedID(tool string, k int) string { return fmt.Sprintf("call_%s_%d", tool, k) }

func gatedArgs(tool string, k int) string {
	switch tool {
	case "write_file":
		return fmt.Sprintf(`{"path":"write_%d.txt","content":"written %d"}`, k, k)
	case "edit_file":
		return fmt.Sprintf(`{"path":"edit_%d.txt","old_text":"before","new_text":"after"}`, k)
	case "run_command":
		return fmt.Sprintf(`{"command":"echo ran %d > run_%d.txt"}`, k, k)
	}
	panic("not a gated tool: " + tool)
}

// prepareGated puts the files the edit_file calls change in place, and
// removes every effect of an earlier run.
func (r *rig) prepareGated() {
	r.t.Helper()
	for k := 1; k <= 3; k++ {
		for _, name := range []string{"write_%d.txt", "run_%d.txt"} {
			if err := os.Remove(filepath.Join(r.ws, fmt.Sprintf(name, k))); err != nil && !os.IsNotExist(err) {
				r.t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(r.ws, fmt.Sprintf("edit_%d.txt", k)), fmt.Appendf(nil, "before %d", k), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
}

// ran reports whether the k-th call of tool had its effect on disk.
func (r *rig) ran(tool string, k int) bool {
	switch tool {
	case "write_file":
		return r.file(fmt.Sprintf("write_%d.txt", k)) == fmt.Sprintf("written %d", k)
	case "edit_file":
		return r.file(fmt.Sprintf("edit_%d.txt", k)) == fmt.Sprintf("after %d", k)
	case "run_command":
		return r.file(fmt.Sprintf("run_%d.txt", k)) == fmt.Sprintf("ran %d\n", k)
	}
	panic("not a gated tool: " + tool)
}

func callByID(t *testing.T, s state.State, id string) state.ToolCall {
	t.Helper()
	for _, c := range s.Memory.ToolCalls {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no call %s in the tool log %+v", id, s.Memory.ToolCalls)
	return state.ToolCall{}
}

func others(tool string) []string {
	var out []string
	for _, g := range gatedTools {
		if g != tool {
			out = append(out, g)
		}
	}
	return out
}

var (
	approveOnce    = agent.Decision{Approved: true}
	approveSession = agent.Decision{Approved: true, Always: true}
	deny           = agent.Decision{Reason: "not now"}
)

// Each gated tool, each answer to its first call. After the answer the
// model calls the same tool again, then each other gated tool, and in a
// second task (a fresh agent, as after a restart) the same tool once
// more. Every later question is approved once. Then the session is rolled
// back to the version that asked about the first call, and a fresh agent
// resumes it.
func TestApprovalDecisionsPerGatedTool(t *testing.T) {
	decisions := []struct {
		name string
		d    agent.Decision
	}{{"once", approveOnce}, {"session", approveSession}, {"deny", deny}}
	for _, tool := range gatedTools {
		for _, dec := range decisions {
			t.Run(tool+"/"+dec.name, func(t *testing.T) {
				testApprovalDecision(t, tool, dec.name, dec.d)
			})
		}
	}
}

func testApprovalDecision(t *testing.T, tool, name string, d agent.Decision) {
	ctx := context.Background()
	r := newRig(t, agent.Options{})
	r.prepareGated()
	o1, o2 := others(tool)[0], others(tool)[1]
	rest := []llmserver.Response{gatedCall(tool, 2), gatedCall(o1, 1), gatedCall(o2, 1),
		llmserver.TextReply("Done.")}
	r.srv.Enqueue(append([]llmserver.Response{plan("use the tools"), gatedCall(tool, 1)}, rest...)...)
	r.approve.decisions = []agent.Decision{d, approveOnce, approveOnce, approveOnce}
	s, err := r.agent().Send(ctx, "use the tools")
	if err != nil || s.Phase != state.Done {
		t.Fatalf("phase %s: %v", s.Phase, err)
	}

	session := name == "session"
	// What was asked: the first call always; the second call of the same
	// tool unless it was approved for the session; every other tool.
	want := []string{tool, tool, o1, o2}
	if session {
		want = []string{tool, o1, o2}
	}
	if !slices.Equal(r.approve.asked, want) {
		t.Fatalf("asked %v, want %v", r.approve.asked, want)
	}
	// What ran.
	if got := r.ran(tool, 1); got != (name != "deny") {
		t.Errorf("first %s call ran: %v", tool, got)
	}
	for _, c := range []struct {
		tool string
		k    int
	}{{tool, 2}, {o1, 1}, {o2, 1}} {
		if !r.ran(c.tool, c.k) {
			t.Errorf("%s call %d did not run", c.tool, c.k)
		}
	}
	// What the state records.
	var wantAllowed []string
	if session {
		wantAllowed = []string{tool}
	}
	if !slices.Equal(s.Memory.AllowedTools, wantAllowed) {
		t.Errorf("allowed tools %v, want %v", s.Memory.AllowedTools, wantAllowed)
	}
	first := callByID(t, s, gatedID(tool, 1))
	switch name {
	case "deny":
		if first.Approval != state.Denied || !strings.Contains(first.Error, "not now") || !first.StartedAt.IsZero() {
			t.Errorf("denied call %+v", first)
		}
	default:
		if first.Approval != state.Approved || first.StartedAt.IsZero() || first.Error != "" {
			t.Errorf("approved call %+v", first)
		}
	}
	wantSecond := state.Approved
	if session {
		wantSecond = "" // never asked: the status is only for calls that needed a decision
	}
	if c := callByID(t, s, gatedID(tool, 2)); c.Approval != wantSecond || !c.Finished() || c.Error != "" {
		t.Errorf("second %s call %+v, want approval %q", tool, c, wantSecond)
	}
	for _, o := range []string{o1, o2} {
		if c := callByID(t, s, gatedID(o, 1)); c.Approval != state.Approved {
			t.Errorf("%s call %+v, want approved when asked", o, c)
		}
	}

	// The next task, in a fresh agent on the stored head.
	r.approve = &approver{decisions: []agent.Decision{approveOnce}}
	r.srv.Enqueue(plan("once more"), gatedCall(tool, 3), llmserver.TextReply("Done again."))
	s, err = r.agent().Send(ctx, "once more")
	if err != nil || s.Phase != state.Done || !r.ran(tool, 3) {
		t.Fatalf("second task: phase %s, ran %v: %v", s.Phase, r.ran(tool, 3), err)
	}
	want = []string{tool}
	if session {
		want = nil
	}
	if !slices.Equal(r.approve.asked, want) || !slices.Equal(s.Memory.AllowedTools, wantAllowed) {
		t.Fatalf("second task: asked %v (want %v), allowed %v", r.approve.asked, want, s.Memory.AllowedTools)
	}

	// Roll back to the version that asked about the first call: whatever
	// was decided there is undone, and a fresh agent asks again.
	asking := versionOf(t, r, state.ApprovalRequested)
	if err := r.store.SetHead(ctx, r.session, asking); err != nil {
		t.Fatal(err)
	}
	r.prepareGated()
	r.approve = &approver{decisions: []agent.Decision{approveOnce, approveOnce, approveOnce, approveOnce}}
	r.srv.Enqueue(rest...)
	s, err = r.agent().Resume(ctx)
	if err != nil || s.Phase != state.Done {
		t.Fatalf("after the rollback: phase %s: %v", s.Phase, err)
	}
	if want := []string{tool, tool, o1, o2}; !slices.Equal(r.approve.asked, want) {
		t.Fatalf("after the rollback: asked %v, want %v", r.approve.asked, want)
	}
	if s.Memory.AllowedTools != nil {
		t.Errorf("after the rollback: allowed tools %v", s.Memory.AllowedTools)
	}
	for _, c := range []struct {
		tool string
		k    int
	}{{tool, 1}, {tool, 2}, {o1, 1}, {o2, 1}} {
		if !r.ran(c.tool, c.k) || callByID(t, s, gatedID(c.tool, c.k)).Approval != state.Approved {
			t.Errorf("after the rollback: %s call %d ran %v, %+v", c.tool, c.k, r.ran(c.tool, c.k), callByID(t, s, gatedID(c.tool, c.k)))
		}
	}
}

// versionOf is the first version of the session's tree made by an event
// of kind.
func versionOf(t *testing.T, r *rig, kind state.EventKind) int {
	t.Helper()
	tree, err := r.store.Tree(context.Background(), r.session)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range tree.Nodes {
		if n.Event == kind {
			return n.Version
		}
	}
	t.Fatalf("no %s version in the tree", kind)
	return 0
}

// A tool the configuration allows runs without a question, whatever the
// person answers about the others, and is not written into the state as
// a session approval.
func TestConfigAllowedToolNeverAsks(t *testing.T) {
	for _, tool := range gatedTools {
		t.Run(tool, func(t *testing.T) {
			r := newRig(t, agent.Options{Allowed: []string{tool}})
			r.prepareGated()
			o1, o2 := others(tool)[0], others(tool)[1]
			r.srv.Enqueue(plan("use the tools"), gatedCall(tool, 1), gatedCall(o1, 1), gatedCall(o2, 1), gatedCall(tool, 2),
				llmserver.TextReply("Done."))
			// The approver denies every question.
			s, err := r.agent().Send(context.Background(), "use the tools")
			if err != nil || s.Phase != state.Done {
				t.Fatalf("phase %s: %v", s.Phase, err)
			}
			if want := []string{o1, o2}; !slices.Equal(r.approve.asked, want) {
				t.Fatalf("asked %v, want %v", r.approve.asked, want)
			}
			if !r.ran(tool, 1) || !r.ran(tool, 2) || r.ran(o1, 1) || r.ran(o2, 1) {
				t.Errorf("ran: %s %v %v, %s %v, %s %v", tool, r.ran(tool, 1), r.ran(tool, 2), o1, r.ran(o1, 1), o2, r.ran(o2, 1))
			}
			if c := callByID(t, s, gatedID(tool, 1)); c.Approval != "" || !c.Finished() || c.Error != "" {
				t.Errorf("allowed call %+v", c)
			}
			if s.Memory.AllowedTools != nil {
				t.Errorf("allowed tools in the state %v; the configuration is not the session's", s.Memory.AllowedTools)
			}
		})
	}
}
