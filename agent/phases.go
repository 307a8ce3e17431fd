package agent

import (
	"context"

	"retrace/agent/llm"
	"retrace/agent/tools"
	"retrace/state"
)

// plan asks the model how to handle the person's message: a plan through
// set_plan, or a direct answer.
func (a *Agent) plan(ctx context.Context) error {
	s := a.cp.State()
	if open := s.OpenCalls(); len(open) > 0 {
		// A re-plan from reflecting brought its calls along; they decide.
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
		Plan: []state.Step{{Text: oneLine(s.Memory.CurrentGoal, 200)}}}
	var planCall *state.ToolRequest
	var planErr error
	for i, c := range calls {
		if c.Name == "set_plan" && planCall == nil {
			planCall = &calls[i]
			goal, steps, err := tools.ParsePlan(c.Arguments)
			if err != nil {
				planErr = err
				break
			}
			ev.Plan, ev.Goal = stepsOf(steps), goal
		}
	}
	if _, err := a.commit(ctx, ev); err != nil {
		return err
	}
	if planCall == nil {
		return nil
	}
	fin := state.Event{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: planCall.ID, Result: planRecorded(len(ev.Plan))}}
	if planErr != nil {
		fin.Tool.Result, fin.Tool.Error = "", "invalid plan ("+planErr.Error()+"); working from a one-step plan instead"
	}
	_, err := a.commit(ctx, fin)
	return err
}

// execute works on the plan: it runs open tool calls, starts the next
// step, or asks the model to go on with the active one.
func (a *Agent) execute(ctx context.Context) error {
	s := a.cp.State()
	if open := s.OpenCalls(); len(open) > 0 {
		return a.runCalls(ctx, open)
	}
	step := activeStep(s)
	if step < 0 {
		next := nextStep(s)
		if next < 0 {
			// Every step was settled by step_status; hand over to reflection.
			_, err := a.commit(ctx, state.Event{Kind: state.StepCompleted, Step: max(len(s.Memory.Plan)-1, 0)})
			return err
		}
		_, err := a.commit(ctx, state.Event{Kind: state.StepStatus, Step: next, Status: state.StepActive})
		return err
	}
	turn, err := a.call(ctx, executingInstructions(s, step), a.toolSpecs())
	if err != nil {
		return err
	}
	msg := assistantMessage(turn)
	if len(turn.Calls) == 0 {
		_, err := a.commit(ctx, state.Event{Kind: state.StepCompleted, Step: step, Messages: []state.Message{msg}, Usage: turn.Usage})
		return err
	}
	_, err = a.commit(ctx, state.Event{Kind: state.AssistantMessage, Messages: []state.Message{msg}, Usage: turn.Usage})
	return err
}

// reflect goes on with the next step, or, when none is left, asks for the
// final answer; the model may re-plan instead of answering.
func (a *Agent) reflect(ctx context.Context) error {
	s := a.cp.State()
	if nextStep(s) >= 0 || activeStep(s) >= 0 {
		_, err := a.commit(ctx, state.Event{Kind: state.Continue})
		return err
	}
	planOnly := []llm.Tool{}
	for _, t := range a.toolSpecs() {
		if t.Name == "set_plan" {
			planOnly = append(planOnly, t)
		}
	}
	turn, err := a.call(ctx, answerInstructions, planOnly)
	if err != nil {
		return err
	}
	msg := assistantMessage(turn)
	kind := state.Answered
	if len(turn.Calls) > 0 {
		kind = state.Replan
	}
	_, err = a.commit(ctx, state.Event{Kind: kind, Messages: []state.Message{msg}, Usage: turn.Usage})
	return err
}

// awaitApproval asks about the call waiting for a decision.
func (a *Agent) awaitApproval(ctx context.Context) error {
	s := a.cp.State()
	for _, c := range s.Memory.ToolCalls {
		if c.Approval == state.AwaitingDecision && !c.Finished() {
			return a.decide(ctx, state.ToolRequest{ID: c.ID, Name: c.Name, Arguments: c.Arguments})
		}
	}
	// Nothing waits: a state only a bug makes. Failing the task answers
	// every open call, so the session can go on with the next message.
	return &TaskError{Message: "awaiting approval, but no tool call waits for a decision"}
}

func (a *Agent) decide(ctx context.Context, call state.ToolRequest) error {
	def, _ := a.tools.Def(call.Name)
	d, err := a.approve.Approve(ctx, ApprovalRequest{Call: call, Def: def})
	if err != nil {
		return err
	}
	if !d.Approved {
		_, err := a.commit(ctx, state.Event{Kind: state.ApprovalDenied, Tool: &state.ToolCall{ID: call.ID}, Text: d.Reason})
		return err
	}
	_, err = a.commit(ctx, state.Event{Kind: state.ApprovalGiven, Tool: &state.ToolCall{ID: call.ID}, Always: d.Always})
	return err
}

func assistantMessage(t llm.Turn) state.Message {
	m := state.Message{Role: state.RoleAssistant, Content: t.Content}
	for _, c := range t.Calls {
		m.ToolCalls = append(m.ToolCalls, c.ToolRequest)
	}
	return m
}

func stepsOf(texts []string) []state.Step {
	steps := make([]state.Step, len(texts))
	for i, t := range texts {
		steps[i] = state.Step{Text: t}
	}
	return steps
}

// activeStep is the step being worked on, or -1.
func activeStep(s state.State) int {
	for i, st := range s.Memory.Plan {
		if st.Status == state.StepActive {
			return i
		}
	}
	return -1
}

// nextStep is the first step not started yet, or -1.
func nextStep(s state.State) int {
	for i, st := range s.Memory.Plan {
		if st.Status == state.StepPending {
			return i
		}
	}
	return -1
}
