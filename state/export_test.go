package state

// WithoutPrompt is s without the system prompt a window keeps aside, for
// comparing a window with the whole beside their histories.
func WithoutPrompt(s State) State {
	s.prompt = ""
	return s
}

// ReadOpenCalls reads the open calls from the history alone, as a state
// that says nothing about them does.
var ReadOpenCalls = readOpenCalls
