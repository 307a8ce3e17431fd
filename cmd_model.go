package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"retrace/agent/demo"
)

func modelServerCmd(fs *flag.FlagSet) func(context.Context, *cli, []string) error {
	addr := fs.String("addr", "127.0.0.1:8089", "address to listen on")
	pace := fs.Duration("pace", 30*time.Millisecond, "pause between streamed pieces")
	return func(ctx context.Context, c *cli, _ []string) error {
		srv, err := demo.Start(*addr, *pace)
		if err != nil {
			return fmt.Errorf("model server: %w", err)
		}
		defer srv.Close()
		fmt.Fprintf(c.stdout, "retrace's scripted demo model is listening at %s (Ctrl+C stops it)\n", srv.URL())
		fmt.Fprintf(c.stdout, "try:  retrace run --base-url %s --model retrace-demo --yes \"look around this repository\"\n", srv.URL())
		<-ctx.Done()
		return nil
	}
}
