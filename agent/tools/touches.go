package tools

import "retrace/state"

// Touches says which workspace files a call may change, so the agent can
// record them before and after: the one path write_file or edit_file
// names (relative to the root, slash-separated), or, for run_command,
// anything (whole). A call that would fail before doing anything touches
// nothing.
func (r *Registry) Touches(name, args string) (paths []string, whole bool) {
	var p string
	switch name {
	case "run_command":
		return nil, true
	case "write_file":
		var a writeArgs
		if decodeArgs(name, writeParams, args, &a) != nil {
			return nil, false
		}
		p = a.Path
	case "edit_file":
		var a editArgs
		if decodeArgs(name, editParams, args, &a) != nil {
			return nil, false
		}
		p = a.Path
	default:
		return nil, false
	}
	abs, err := r.ws.Resolve(p)
	if err != nil {
		return nil, false
	}
	rel := r.ws.rel(abs)
	if !state.ValidPath(rel) {
		return nil, false
	}
	return []string{rel}, false
}
