package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The first signal cancels the context; a shutdown that outlasts the grace
// exits with the code a shell gives the signal, saying so; one that ends
// in time exits no other way.
func TestSignalInterruptsThenBoundsTheShutdown(t *testing.T) {
	for _, tc := range []struct {
		name    string
		overrun bool
	}{{"ends in time", false}, {"overruns", true}} {
		t.Run(tc.name, func(t *testing.T) {
			sigs := make(chan os.Signal, 1)
			done := make(chan struct{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			fire := make(chan time.Time, 1)
			asked := make(chan time.Duration, 1)
			exited := make(chan int, 1)
			var stderr bytes.Buffer
			finished := make(chan struct{})
			go func() {
				onSignal(sigs, done, cancel, shutdownTimer{
					after:  func(d time.Duration) <-chan time.Time { asked <- d; return fire },
					exit:   func(code int) { exited <- code },
					stderr: &stderr,
				})
				close(finished)
			}()
			sigs <- syscall.SIGTERM
			<-ctx.Done()
			if d := <-asked; d != shutdownGrace {
				t.Fatalf("the grace asked for is %s, want %s", d, shutdownGrace)
			}
			if tc.overrun {
				fire <- time.Time{}
			} else {
				close(done)
			}
			<-finished
			select {
			case code := <-exited:
				if !tc.overrun || code != 128+15 || !strings.Contains(stderr.String(), "after SIGTERM; exiting") {
					t.Fatalf("exit %d: %q", code, stderr.String())
				}
			default:
				if tc.overrun {
					t.Fatal("a shutdown past the grace did not exit")
				}
			}
		})
	}
}

// Without a signal, stop ends the watch and nothing is cancelled.
func TestSignalStopWithoutSignal(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		onSignal(make(chan os.Signal), done, cancel, shutdownTimer{
			after: func(time.Duration) <-chan time.Time { t.Error("timer started without a signal"); return nil },
			exit:  func(int) { t.Error("exit without a signal") },
		})
		close(finished)
	}()
	close(done)
	<-finished
	if ctx.Err() != nil {
		t.Fatal("stopping the watch cancelled the context")
	}
}
