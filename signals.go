package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"
)

// shutdownGrace is how long retrace has, after the first of the signals
// it handles, to record the interruption and end on its own. Past it
// something was deaf to the signal (a read no context reaches), and
// retrace exits as a kill would end it: every checkpoint is committed or
// not there, claims die with the process, and a command's process group
// dies with it through the sandbox launcher.
const shutdownGrace = 30 * time.Second

// handleSignals makes SIGINT, SIGTERM and SIGHUP (the terminal closed,
// the SSH session dropped) an interruption: the first one cancels the
// returned context, so that a running task is recorded as interrupted,
// the terminal is restored and the session's claim released. From then
// on the signals have their default action again, so a second one ends
// retrace at once whatever it is doing. stop ends the handling.
func handleSignals(stderr io.Writer) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	done := make(chan struct{})
	go onSignal(sigs, done, cancel, shutdownTimer{after: time.After, exit: os.Exit, stderr: stderr})
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

// shutdownTimer bounds the shutdown a signal starts; the test swaps its
// clock and its exit.
type shutdownTimer struct {
	after  func(time.Duration) <-chan time.Time
	exit   func(code int)
	stderr io.Writer
}

// onSignal waits for the first signal on sigs (or for done), cancels,
// gives the handling back to the system and exits when the shutdown
// outlasts shutdownGrace.
func onSignal(sigs chan os.Signal, done <-chan struct{}, cancel context.CancelFunc, t shutdownTimer) {
	var sig os.Signal
	select {
	case sig = <-sigs:
	case <-done:
		return
	}
	cancel()
	signal.Stop(sigs)
	select {
	case <-t.after(shutdownGrace):
		fmt.Fprintf(t.stderr, "retrace: still running %s after %s; exiting\n", shutdownGrace, signalNames[sig])
		// The code a shell gives a process the signal ended.
		code := 128 + int(syscall.SIGTERM)
		if s, ok := sig.(syscall.Signal); ok {
			code = 128 + int(s)
		}
		t.exit(code)
	case <-done:
	}
}

// signalNames are the signals retrace handles, as people know them.
var signalNames = map[os.Signal]string{os.Interrupt: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGHUP: "SIGHUP"}
