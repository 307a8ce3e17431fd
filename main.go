// Command retrace is a terminal chat agent whose state is never a mystery
// and never lost: every transition of the agent is a checkpoint in a local
// database, and any session can be resumed, stepped through and rolled
// back. See README.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
