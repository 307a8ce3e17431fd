package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"retrace/agent/llmserver"
)

// n in the sessions dialog starts a session in memory only: the list, the
// store and another process see nothing until its first message, which
// writes it, named after that message. A new session left without a
// message leaves nothing behind.
func TestTUINewSessionIsWrittenByItsFirstMessage(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			r := newTUIRig(t)
			ctx := context.Background()
			current := r.seed("current work", [2]string{"current question", "Current answer."})
			if err := r.ctrl.Open(current); err != nil {
				t.Fatal(err)
			}
			count := func() int {
				t.Helper()
				list, err := r.openStore().Sessions(ctx)
				if err != nil {
					t.Fatal(err)
				}
				return len(list)
			}
			p := r.open(r.ctrl, size[0], size[1])
			p.press("ctrl+s")
			p.untilShown("type to filter")
			p.press("n")
			s := p.until("the new session", func(s string) bool {
				return !strings.Contains(s, "Sessions") && !strings.Contains(lastLine(s), current[:8])
			})
			if n := count(); n != 1 {
				t.Fatalf("%d sessions in the store after n, want 1: a new session is written by its first message", n)
			}
			if !strings.Contains(lastLine(s), "new") {
				t.Fatalf("the status line does not say the session is new: %q", lastLine(s))
			}
			if _, busy := r.openStore().Holder(current); busy {
				t.Fatal("the session left is still claimed")
			}

			// n again, from the unwritten session, still writes nothing.
			p.press("ctrl+s")
			p.untilShown("type to filter")
			p.press("n")
			p.until("the dialog closed", func(s string) bool { return !strings.Contains(s, "Sessions") })
			if n := count(); n != 1 {
				t.Fatalf("%d sessions after n twice, want 1", n)
			}

			r.srv.Enqueue(llmserver.TextReply("Fresh answer."))
			p.send("a fresh question")
			p.untilShown("Fresh answer.")
			s = p.untilResting()
			fresh := r.ctrl.Info().Session.ID
			if fresh == "" || fresh == current || !strings.Contains(lastLine(s), fresh[:8]) ||
				// Below 100 columns the status line gives up the title first.
				(size[0] >= 100 && !strings.Contains(lastLine(s), "a fresh question")) {
				t.Fatalf("after the first message the status line is %q; the controller has %q open", lastLine(s), fresh)
			}
			if n := count(); n != 2 {
				t.Fatalf("%d sessions after the first message, want 2", n)
			}
			if head := r.head(fresh); head.Version != 2 || head.FinalAnswer != "Fresh answer." {
				t.Fatalf("the new session: v%d %q", head.Version, head.FinalAnswer)
			}
			p.press("ctrl+s")
			p.untilShown("a fresh question", "current work")
		})
	}
}
