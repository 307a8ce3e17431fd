package agent

import (
	"context"

	"retrace/agent/llm"
	"retrace/agent/tools"
	"retrace/state"
)

// The loop follows the model's turns and adds none of its own: planning
// is the task's first reply, executing runs the calls of a reply,
// tools_done hands their results back, and reflecting is the model's
// reply to them. A task of a plan, N tool rounds and an answer is N + 2
// requests.

// plan asks for the task's first reply: an answer, or a plan (and maybe
// the first calls already).
func (a *Agent) plan(ctx context.Context) error {
	s := a.cp.State()
	if open := s.OpenCalls(); len(open) > 0 {
		// A replan kept by an earlier retrace brought its calls along.
		return a.planFromCalls(ctx, open, nil, state.Usage{})
	}
	turn, err := a.call(ctx, planningInstructions, a.toolSpecs())
	if err != nil {
		return err
	}
	msg := assistantMessage(turn)
	if len(turn.Calls) == 0 {
		_, err := a.commit(ctx, state.Event{Kind: state.Answered, Messages: []state.Message{msg}, Usage: turn.Usage})
		return err
	}
	return a.planFromCalls(ctx, msg.ToolCalls, []state.Message{msg}, turn.Usage)
}

// planFromCalls moves to executing with the plan a set_plan call gives,
// or, when the model went straight to other tools, a one-step plan: the
// goal itself. The set_plan call is answered at once; the others are left
// open for executing to run.
func (a *Agent) planFromCalls(ctx context.Context, calls []state.ToolRequest, msgs []state.Message, usage state.Usage) error {
	s := a.cp.State()
	ev := state.Event{Kind: state.PlanSet, Messages: msgs, Usage: usage,
		Plan: planSteps(tools.Plan{Steps: []string{oneLine(s.Memory.CurrentGoal, 200)}})}
	var planCall *state.ToolRequest
	var planErr error
	for i, c := range calls {
		if c.Name == "set_plan" && planCall == nil {
			planCall = &calls[i]
			p, err := tools.ParsePlan(c.Arguments)
			if err != nil {
				planErr = err
				break
			}
			ev.Plan, ev.Goal = planSteps(p), p.Goal
		}
	}
	if _, err := a.commit(ctx, ev); err != nil {
		return err
	}
	if planCall == nil {
		return nil
	}
	fin := state.Event{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: planCall.ID, Result: planRecorded(ev.Plan)}}
	if planErr != nil {
		fin.Tool.Result, fin.Tool.Error = "", "invalid plan ("+planErr.Error()+"); working from a one-step plan instead"
	}
	_, err := a.commit(ctx, fin)
	return err
}

// execute runs the open calls of the model's last reply, one checkpoint
// at a time; once each has its result, the model reads them.
func (a *Agent) execute(ctx context.Context) error {
	if open := a.cp.State().OpenCalls(); len(open) > 0 {
		return a.runCalls(ctx, open)
	}
	_, err := a.commit(ctx, state.Event{Kind: state.ToolsDone})
	return err
}

// reflect asks for the model's reply to the tool results: more calls
// (continue), or the answer.
func (a *Agent) reflect(ctx context.Context) error {
	turn, err := a.call(ctx, workingInstructions, a.toolSpecs())
	if err != nil {
		return err
	}
	msg := assistantMessage(turn)
	kind := state.Answered
	if len(turn.Calls) > 0 {
		kind = state.Continue
	}
	_, err = a.commit(ctx, state.Event{Kind: kind, Messages: []state.Message{msg}, Usage: turn.Usage})
	return err
}

// awaitApproval asks about the call waiting for a decision.
func (a *Agent) awaitApproval(ctx context.Context) error {
	s := a.cp.State()
	for _, req := range s.OpenCalls() {
		if c, ok := s.OpenCallEntry(req.ID); ok && c.Approval == state.AwaitingDecision {
			return a.decide(ctx, req)
		}
	}
	// Nothing waits: a state only a bug makes. Failing the task answers
	// every open call, so the session can go on with the next message.
	return &TaskError{Message: "awaiting approval, but no tool call waits for a decision"}
}

func (a *Agent) decide(ctx context.Context, call state.ToolRequest) error {
	def, _ := a.tools.Def(call.Name)
	req := ApprovalRequest{Call: call, Def: def}
	if call.Name == "remember" {
		req.Why = a.rememberCap(ctx, a.cp.State())
	}
	d, err := a.approve.Approve(ctx, req)
	if err != nil {
		return err
	}
	if !d.Approved {
		_, err := a.commit(ctx, state.Event{Kind: state.ApprovalDenied, Tool: &state.ToolCall{ID: call.ID}, Text: d.Reason})
		return err
	}
	if _, err = a.commit(ctx, state.Event{Kind: state.ApprovalGiven, Tool: &state.ToolCall{ID: call.ID}, Always: d.Always}); err != nil {
		return err
	}
	if a.here.approved == nil {
		a.here.approved = map[string]bool{}
	}
	a.here.approved[call.ID] = true
	return nil
}

func assistantMessage(t llm.Turn) state.Message {
	m := state.Message{Role: state.RoleAssistant, Content: t.Content, Reasoning: t.Reasoning}
	for _, c := range t.Calls {
		m.ToolCalls = append(m.ToolCalls, c.ToolRequest)
	}
	return m
}

// planSteps gives a plan's steps their status: the first done ones
// done, the next one active (the model works on it now), the rest
// pending.
func planSteps(p tools.Plan) []state.Step {
	steps := make([]state.Step, len(p.Steps))
	for i, t := range p.Steps {
		// Ifs, not a tagless switch, so that mutation testing runs the
		// conditions (go-gremlins/gremlins#298).
		status := state.StepPending
		if i < p.Done {
			status = state.StepDone
		} else if i == p.Done {
			status = state.StepActive
		}
		steps[i] = state.Step{Text: t, Status: status}
	}
	return steps
}
