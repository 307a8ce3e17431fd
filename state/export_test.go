package state

// WithoutPrompt is s without the system prompt a window keeps aside, for
// comparing a window with the whole beside their histories.
func WithoutPrompt(s State) State {
	s.prompt = ""
	return s
}
