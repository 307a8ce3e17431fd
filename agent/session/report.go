package session

import (
	"context"

	"retrace/agent"
	"retrace/agent/llm"
	"retrace/state"
)

// approver asks whoever reads the events, and waits for Decide.
type approver struct{ c *Controller }

func (a approver) Approve(ctx context.Context, req agent.ApprovalRequest) (agent.Decision, error) {
	ev := ApprovalNeeded{Call: req.Call, Why: req.Why}
	ev.Preview, ev.PreviewErr = a.c.tools.Preview(req.Call.Name, req.Call.Arguments)
	if req.Why != "" && ev.PreviewErr == nil {
		ev.Preview.Summary += " (" + req.Why + ")"
	}
	select { // an answer left over from an earlier question is void
	case <-a.c.decided:
	default:
	}
	a.c.events.publish(ev)
	select {
	case d := <-a.c.decided:
		return d, nil
	case <-ctx.Done():
		return agent.Decision{}, ctx.Err()
	}
}

// observer turns the agent's reports into events, and keeps the head the
// controller gives out up to date.
type observer struct{ c *Controller }

func (o observer) State(s state.State) {
	o.c.mu.Lock()
	o.c.head = s
	o.c.mu.Unlock()
	o.c.events.publish(StateChanged{State: s})
}

func (o observer) Delta(p state.Phase, k llm.DeltaKind, text string) {
	o.c.events.publish(Delta{Phase: p, Kind: k, Text: text})
}

func (o observer) Retry(r llm.Retry) { o.c.events.publish(Retrying{Retry: r}) }

func (o observer) Notice(text string) { o.c.events.publish(Notice{Text: text}) }

func (o observer) Working(text string) { o.c.events.publish(Notice{Text: text, Passing: true}) }
