package state

import "encoding/json"

// The JSON form of a State always has every field, with empty lists and maps
// written as [] and {} rather than null, so that scripts reading
// `retrace show --json` need no special cases. In memory an empty list or
// map is nil, whichever way the state was made, so that two equal states are
// equal to reflect.DeepEqual too.

// MarshalJSON writes the state with empty collections as [] and {}.
func (s State) MarshalJSON() ([]byte, error) {
	type plain State
	p := plain(s)
	if p.History == nil {
		p.History = []Message{}
	}
	if p.Files == nil {
		p.Files = map[string]FileEntry{}
	}
	return json.Marshal(p)
}

// UnmarshalJSON reads a state and stores empty collections as nil.
func (s *State) UnmarshalJSON(b []byte) error {
	type plain State
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	if len(p.History) == 0 {
		p.History = nil
	}
	if len(p.Files) == 0 {
		p.Files = nil
	}
	*s = State(p)
	s.open = exchangeOf(*s)
	return nil
}

// MarshalJSON writes working memory with empty collections as [] and {}.
func (m WorkingMemory) MarshalJSON() ([]byte, error) {
	type plain WorkingMemory
	p := plain(m)
	if p.Plan == nil {
		p.Plan = []Step{}
	}
	if p.Notes == nil {
		p.Notes = map[string]string{}
	}
	if p.ToolCalls == nil {
		p.ToolCalls = []ToolCall{}
	}
	return json.Marshal(p)
}

// UnmarshalJSON reads working memory and stores empty collections as nil.
func (m *WorkingMemory) UnmarshalJSON(b []byte) error {
	type plain WorkingMemory
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	if len(p.Plan) == 0 {
		p.Plan = nil
	}
	if len(p.Notes) == 0 {
		p.Notes = nil
	}
	if len(p.ToolCalls) == 0 {
		p.ToolCalls = nil
	}
	if len(p.AllowedTools) == 0 {
		p.AllowedTools = nil
	}
	*m = WorkingMemory(p)
	return nil
}

// DecodeEvent parses an event as the store keeps it. An unknown kind, an
// unknown step status or trailing data is an error.
func DecodeEvent(b []byte) (Event, error) {
	var ev Event
	if err := json.Unmarshal(b, &ev); err != nil {
		return Event{}, err
	}
	if err := checkDecoded(ev); err != nil {
		return Event{}, err
	}
	return normalizeEvent(ev), nil
}

// checkDecoded refuses what decodes but is no event: no kind, or a step
// status nobody writes. Both forms of an event check the same things.
func checkDecoded(ev Event) error {
	if ev.Kind == 0 {
		return &EventError{Reason: "no kind"}
	}
	if ev.Status != "" && !ev.Status.Valid() {
		return invalid(ev.Kind, "unknown step status %q", ev.Status)
	}
	for _, st := range ev.Plan {
		if st.Status != "" && !st.Status.Valid() {
			return invalid(ev.Kind, "unknown step status %q", st.Status)
		}
	}
	return nil
}

// normalizeEvent gives a decoded event the one in-memory form Apply and the
// encoder agree on: empty lists are nil, times are UTC.
func normalizeEvent(ev Event) Event {
	ev.At = ev.At.UTC()
	ev.Plan = cloneOrNil(ev.Plan)
	ev.Files = cloneOrNil(ev.Files)
	ev.Messages = cloneOrNil(ev.Messages)
	for i := range ev.Messages {
		ev.Messages[i].ToolCalls = cloneOrNil(ev.Messages[i].ToolCalls)
	}
	if ev.Tool != nil {
		c := *ev.Tool
		c.StartedAt, c.FinishedAt = c.StartedAt.UTC(), c.FinishedAt.UTC()
		ev.Tool = &c
	}
	if ev.Briefing != nil {
		b := Briefing{Instructions: cloneOrNil(ev.Briefing.Instructions), Memories: cloneOrNil(ev.Briefing.Memories)}
		for i := range b.Memories {
			b.Memories[i].CreatedAt, b.Memories[i].UpdatedAt = b.Memories[i].CreatedAt.UTC(), b.Memories[i].UpdatedAt.UTC()
		}
		ev.Briefing = &b
	}
	return ev
}

// EncodeEvent is the inverse of DecodeEvent.
func EncodeEvent(ev Event) ([]byte, error) { return json.Marshal(ev) }

// Canonical returns ev as it will read back from the store: encoded and
// decoded once. Applying the canonical event in memory gives a state equal,
// byte for byte, to the one the store replays later (strings that are not
// valid UTF-8, for one, come back with U+FFFD in them).
func Canonical(ev Event) (Event, error) {
	b, err := EncodeEvent(ev)
	if err != nil {
		return ev, err
	}
	return DecodeEvent(b)
}
