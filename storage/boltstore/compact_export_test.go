package boltstore

// StopCompactAt makes Compact stop, as a crash would, just before the step
// named ("copy", "sync", "check" or "rename"), until the test ends.
func StopCompactAt(step string, err error) (undo func()) {
	compactStep = func(s string) error {
		if s == step {
			return err
		}
		return nil
	}
	return func() { compactStep = nil }
}
