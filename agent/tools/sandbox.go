package tools

import "retrace/agent/sandbox"

// Sandbox says how run_command's commands are confined on this machine:
// the mode Options asked for and what the kernel gives it. Its Warning,
// when not empty, is for the person approving commands.
func (r *Registry) Sandbox() sandbox.Status {
	st := sandbox.Check(r.opts.Sandbox)
	st.Agents = r.opts.Reach.Agents
	return st
}
