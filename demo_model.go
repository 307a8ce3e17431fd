package main

import (
	"fmt"
	"time"

	"retrace/agent/demo"
)

// demoEndpoint is the base URL a session records when it talks to
// retrace's scripted demo model: the model runs in this process, on a
// port that changes every time, so the session names it instead.
const demoEndpoint = "retrace-demo"

// demoModel starts the demo model the first time a session needs it.
type demoModel struct {
	pace time.Duration
	srv  *demo.Server
}

func (d *demoModel) url() (string, error) {
	if d.srv == nil {
		srv, err := demo.Start("127.0.0.1:0", d.pace)
		if err != nil {
			return "", fmt.Errorf("start the demo model: %w", err)
		}
		d.srv = srv
	}
	return d.srv.URL(), nil
}

// close stops the demo model if it was started.
func (d *demoModel) close() {
	if d.srv != nil {
		d.srv.Close()
	}
}
