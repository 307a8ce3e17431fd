package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"retrace/agent/llmserver"
	"retrace/agent/session"
)

// awaitDone reads a controller's events to the end of its task.
func awaitDone(t *testing.T, c *session.Controller) session.TaskDone {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	for {
		ev, err := c.Next(ctx)
		if err != nil {
			t.Fatalf("waiting for the task's end: %v", err)
		}
		if done, ok := ev.(session.TaskDone); ok {
			return done
		}
	}
}

// A second retrace on a session the first one writes opens it read-only
// and follows it: each answer the writer keeps shows up. When the writer
// quits, the status line offers to take the session over; y makes this
// one the writer, and what is sent then is kept. Two controllers, each on
// a store of its own on one file, as two processes would be.
func TestTUIReadOnlyFollowsAndTakesOver(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			r := newTUIRig(t)
			id := r.seed("shared", [2]string{"first question", "First answer."})
			writer := r.controller(r.openStore())
			if err := writer.Open(id); err != nil {
				t.Fatal(err)
			}
			if err := r.ctrl.Open(id); err != nil {
				t.Fatal(err)
			}
			p := r.open(r.ctrl, size[0], size[1])
			p.untilShown("First answer.", "read-only")

			r.srv.Enqueue(llmserver.TextReply("Second answer."))
			if err := writer.Submit("second question"); err != nil {
				t.Fatal(err)
			}
			if done := awaitDone(t, writer); done.Err != nil || done.State.Version != 4 {
				t.Fatalf("the writer's task: v%d %v", done.State.Version, done.Err)
			}
			s := p.until("the writer's answer on the reader's screen", func(s string) bool {
				return strings.Contains(s, "Second answer.") && strings.Contains(lastLine(s), "v4/4")
			})
			if !strings.Contains(lastLine(s), "read-only") {
				t.Fatalf("following made the session writable before its writer quit: %q", lastLine(s))
			}

			if err := writer.Close(); err != nil {
				t.Fatal(err)
			}
			p.until("the offer to take the session over", func(s string) bool {
				return strings.Contains(lastLine(s), "Writer quit: take the session over? (y/n)")
			})
			p.press("y")
			p.until("the session writable", func(s string) bool {
				return !strings.Contains(lastLine(s), "read-only") && strings.Contains(lastLine(s), "^S sessions")
			})
			r.srv.Enqueue(llmserver.TextReply("Third answer."))
			p.send("third question")
			p.untilShown("Third answer.")
			p.untilResting()
			if head := r.head(id); head.Version != 6 || head.FinalAnswer != "Third answer." {
				t.Fatalf("after the takeover the store has v%d %q", head.Version, head.FinalAnswer)
			}
			if _, busy := r.openStore().Holder(id); !busy {
				t.Fatal("the session taken over is not claimed")
			}
		})
	}
}
