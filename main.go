// Command retrace is a terminal chat agent whose state is never a mystery
// and never lost: every transition of the agent is a checkpoint in a local
// database, and any session can be resumed, stepped through and rolled
// back. See README.md.
package main

import "os"

// The sandbox launcher that run_command's commands start through is this
// binary too: package agent/sandbox takes over in its init, before main,
// when it is run as one.

func main() {
	// First, before anything can start a command: the API key and other
	// secrets leave what /proc shows of this process, which commands can
	// read (secrets.go). args has them back.
	args := moveSecrets(os.Stderr)
	// Ctrl+C outside the interface, SIGTERM and a hang-up (the terminal
	// closed) interrupt: the task is recorded as interrupted and a running
	// command's process group is killed with it. Signals that kill retrace
	// outright kill the group through the sandbox launcher.
	ctx, stop := handleSignals(os.Stderr)
	code := run(ctx, args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
