package state

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// What the agent remembers of the person lives beside the sessions, not in
// any one of them: a memory log, one per store. Like a session it is an
// append-only log of versioned events, and the memories at a version are
// the fold of the events up to it. A memory is never changed in place: an
// edit, a removal, or a restore of the memories an earlier version held is
// an event of its own, so every earlier version can still be shown. A
// memory a session made on a branch that was later abandoned stays until
// it is removed: the log does not follow any session's branches.

// MemoryKind names what happened to the memories.
type MemoryKind string

// The memory log's event kinds.
const (
	MemoryAdded    MemoryKind = "added"
	MemoryEdited   MemoryKind = "edited"
	MemoryRemoved  MemoryKind = "removed"
	MemoryRestored MemoryKind = "restored" // the memories of an earlier version, back
)

// MaxMemory is the longest memory, in bytes: a fact or a preference, not
// a document. Longer text belongs in AGENTS.md.
const MaxMemory = 2000

// Memory is one fact or preference the agent was asked to keep.
type Memory struct {
	ID string `json:"id"`
	// Project is the repository root (or workspace) it holds for, as an
	// absolute path; empty for everywhere.
	Project string `json:"project,omitempty"`
	Text    string `json:"text"`
	// Source says where it came from: a session and version, the
	// interface's /remember, or the command line.
	Source    string    `json:"source,omitempty"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Everywhere reports whether m holds for every project.
func (m Memory) Everywhere() bool { return m.Project == "" }

// MemoryEvent is one entry of the memory log.
type MemoryEvent struct {
	Version int        `json:"version"`
	Kind    MemoryKind `json:"kind"`
	At      time.Time  `json:"at"`
	// Memory is the memory added, or as it is after an edit; a removal
	// names only its ID.
	Memory Memory `json:"memory,omitzero"`
	// To is the version whose memories a restore brings back.
	To int `json:"to,omitempty"`
}

// MemoryError says why an event cannot follow the log.
type MemoryError struct {
	Version int
	Kind    MemoryKind
	Reason  string
}

func (e *MemoryError) Error() string {
	return fmt.Sprintf("memory log v%d (%s): %s", e.Version, e.Kind, e.Reason)
}

// Memories is the memory log folded: the memories at a version, oldest
// first, each by its ID.
type Memories struct {
	Version int
	List    []Memory
	// sets keeps each version's memories, for a restore to bring back:
	// sets[v] for every v before Version, or none at all (Folded).
	sets [][]Memory
}

// Folded is the memories at version v as a snapshot of the log keeps
// them, without the versions before it: At knows v alone, and a restore
// cannot follow it.
func Folded(v int, list []Memory) Memories {
	return Memories{Version: v, List: slices.Clip(list)}
}

// Whole reports whether m knows every version before its own, as a fold
// of the whole log does and a restore needs.
func (m Memories) Whole() bool { return len(m.sets) == m.Version }

// FoldMemories replays a memory log, which must be its versions 1..n in
// order, each one checked against the memories before it. A memory added
// is appended in place, where Apply copies: a fold's cost and memory grow
// with the log, not with its square.
func FoldMemories(log []MemoryEvent) (Memories, error) {
	var m Memories
	// Whether the fold alone holds m.List's spare capacity: not after a
	// restore, whose list is an earlier version's.
	owned := true
	for _, ev := range log {
		var err error
		if m, err = m.apply(ev, owned); err != nil {
			return Memories{}, err
		}
		owned = ev.Kind != MemoryRestored
	}
	m.List, m.sets = slices.Clip(m.List), slices.Clip(m.sets)
	return m, nil
}

// Apply checks ev against the memories and returns them with it applied.
// It never changes m.
func (m Memories) Apply(ev MemoryEvent) (Memories, error) { return m.apply(ev, false) }

// apply is Apply, writing into the spare capacity of m's list and sets
// with grow set: only a fold that holds m alone may.
func (m Memories) apply(ev MemoryEvent, grow bool) (Memories, error) {
	fail := func(format string, args ...any) (Memories, error) {
		return m, &MemoryError{Version: ev.Version, Kind: ev.Kind, Reason: fmt.Sprintf(format, args...)}
	}
	if ev.Version != m.Version+1 {
		return fail("follows v%d", m.Version)
	}
	if ev.At.IsZero() {
		return fail("has no time")
	}
	i := slices.IndexFunc(m.List, func(x Memory) bool { return x.ID == ev.Memory.ID })
	list := m.List
	switch ev.Kind {
	case MemoryAdded, MemoryEdited:
		if err := checkMemory(ev.Memory); err != "" {
			return fail("%s", err)
		}
		switch {
		case ev.Kind == MemoryAdded && i >= 0:
			return fail("memory %s is there already", ev.Memory.ID)
		case ev.Kind == MemoryEdited && i < 0:
			return fail("there is no memory %s", ev.Memory.ID)
		case ev.Kind == MemoryAdded:
			list = addTo(list, ev.Memory, grow)
		default:
			list = slices.Clone(list)
			list[i] = ev.Memory
		}
	case MemoryRemoved:
		if i < 0 {
			return fail("there is no memory %s", ev.Memory.ID)
		}
		list = slices.Delete(slices.Clone(list), i, i+1)
	case MemoryRestored:
		if ev.To < 0 || ev.To >= ev.Version {
			return fail("restores v%d; it can restore v0 to v%d", ev.To, m.Version)
		}
		then, ok := m.At(ev.To)
		if !ok {
			return fail("the memories of v%d are not known here: only the whole log knows them", ev.To)
		}
		list = then
	default:
		return fail("unknown kind")
	}
	out := Memories{Version: ev.Version, List: list}
	// Folded, the versions before are not known, nor is this one. (Ifs,
	// not a tagless switch, so that mutation testing runs the conditions:
	// go-gremlins/gremlins#298.)
	if m.Whole() {
		sets := m.sets
		if !grow {
			sets = slices.Clip(sets)
		}
		out.sets = append(sets, m.List)
	}
	return out, nil
}

// addTo appends x to list: in place with grow set, else into a copy.
func addTo(list []Memory, x Memory, grow bool) []Memory {
	if !grow {
		list = slices.Clip(list)
	}
	return append(list, x)
}

// At returns the memories version v held (0 being none), or false when
// the log has not reached v. A Memories that is not Whole knows its own
// version's alone.
func (m Memories) At(v int) ([]Memory, bool) {
	if v < 0 || v > m.Version {
		return nil, false
	}
	if v == m.Version {
		return m.List, true
	}
	if !m.Whole() {
		return nil, false
	}
	return m.sets[v], true
}

// Find returns the memory with id, or an ID prefix that names one memory.
func (m Memories) Find(id string) (Memory, error) {
	var found []Memory
	for _, x := range m.List {
		if x.ID == id {
			return x, nil
		}
		if id != "" && strings.HasPrefix(x.ID, id) {
			found = append(found, x)
		}
	}
	switch len(found) {
	case 0:
		return Memory{}, fmt.Errorf("no memory %q; `retrace memory list` shows them", id)
	case 1:
		return found[0], nil
	}
	return Memory{}, fmt.Errorf("memory %q is ambiguous: %d memories start with it", id, len(found))
}

// For returns the memories that hold in project (a repository root):
// those kept for everywhere and those kept for it, oldest first.
func (m Memories) For(project string) []Memory {
	var out []Memory
	for _, x := range m.List {
		if x.Everywhere() || x.Project == project {
			out = append(out, x)
		}
	}
	return out
}

// Holding returns the memory that already says what x says where x
// would hold: the same words, however spaced, kept for x's project or
// for everywhere.
func (m Memories) Holding(x Memory) (Memory, bool) {
	text := strings.Join(strings.Fields(x.Text), " ")
	for _, y := range m.List {
		if strings.Join(strings.Fields(y.Text), " ") == text && (y.Everywhere() || y.Project == x.Project) {
			return y, true
		}
	}
	return Memory{}, false
}

// CheckMemories checks a list of memories as a log of their adds would:
// each with an id of its own, a text within bounds and its times in
// order. It is what a snapshot of the log is held to when it is read.
func CheckMemories(list []Memory) error {
	seen := make(map[string]bool, len(list))
	for i, x := range list {
		if err := checkMemory(x); err != "" {
			return fmt.Errorf("memory %d: %s", i+1, err)
		}
		if seen[x.ID] {
			return fmt.Errorf("memory %d: memory %s is there already", i+1, x.ID)
		}
		seen[x.ID] = true
	}
	return nil
}

func checkMemory(x Memory) string {
	switch {
	case x.ID == "":
		return "the memory has no id"
	case strings.TrimSpace(x.Text) == "":
		return "the memory is empty"
	case len(x.Text) > MaxMemory:
		return fmt.Sprintf("the memory is %d bytes; at most %d are kept (longer instructions belong in AGENTS.md)", len(x.Text), MaxMemory)
	case x.CreatedAt.IsZero() || x.UpdatedAt.Before(x.CreatedAt):
		return "the memory's times are out of order"
	}
	return ""
}
