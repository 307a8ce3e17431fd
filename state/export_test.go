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

// Exchange is where s records its open calls, and where a reading of its
// history puts them: the same for every state Apply makes.
func Exchange(s State) (recorded, read [2]int) {
	return [2]int{s.open.at, s.open.answered}, [2]int{exchangeOf(s).at, exchangeOf(s).answered}
}
