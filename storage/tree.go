package storage

import (
	"retrace/state"
	"retrace/state/transcript"
)

// Tree is a session's versions and the branches they form.
type Tree struct {
	Session  string   `json:"session"`
	Head     int      `json:"head"`
	Nodes    []Node   `json:"versions"` // by version, ascending
	Branches []Branch `json:"branches"` // by id, ascending
}

// Node is one version in the tree.
type Node struct {
	Checkpoint
	Branch  int  `json:"branch"`
	Head    bool `json:"head,omitempty"`    // this version is the head
	Current bool `json:"current,omitempty"` // on the path from the root to the head
}

// Branch is a chain of versions. Branch 1 starts at the root; a version's
// first child (the lowest version) continues its parent's branch, and every
// later child starts a new branch, numbered in the order they were made.
type Branch struct {
	ID       int  `json:"id"`
	Fork     int  `json:"fork"` // the version it hangs under; 0 is the root
	First    int  `json:"first"`
	Tip      int  `json:"tip"`
	Versions int  `json:"versions"`
	Current  bool `json:"current,omitempty"` // the head is on it
	// Opening is the first thing the person said on the branch, which is
	// what tells branches apart. BuildTree has only checkpoints and leaves
	// it empty; a reader holding the events fills it (OpenBranches).
	Opening string `json:"opening,omitempty"`
}

// maxOpening bounds an Opening: it is a label, and the message may be a
// pasted log of 256 KiB that every frame of a list would otherwise clean.
const maxOpening = 200

// openingOf is the start of a message, up to maxOpening bytes, cut on a
// character's first byte.
func openingOf(text string) string { return transcript.Shorten(text, maxOpening) }

// OpenBranches sets each branch's Opening from the events of its
// versions: the person's words in the first user message made on it.
func OpenBranches(t *Tree, event func(version int) (state.Event, bool)) {
	for _, n := range t.Nodes {
		b := &t.Branches[n.Branch-1]
		if b.Opening != "" || n.Event != state.UserMessage {
			continue
		}
		ev, ok := event(n.Version)
		if !ok {
			continue
		}
		for _, msg := range ev.Messages {
			if msg.Role == state.RoleUser {
				b.Opening = openingOf(msg.Content)
			}
		}
	}
}

// BuildTree arranges checkpoints (in ascending version order, parents
// before children) into a Tree. It is what every backend's Tree returns;
// backends only read the checkpoints.
func BuildTree(session string, head int, cps []Checkpoint) Tree {
	t := Tree{Session: session, Head: head, Nodes: make([]Node, len(cps))}
	index := make(map[int]int, len(cps)) // version -> position in Nodes
	continued := map[int]bool{}          // versions a child already continues
	for i, cp := range cps {
		n := Node{Checkpoint: cp, Head: cp.Version == head}
		if p, ok := index[cp.Parent]; ok && !continued[cp.Parent] {
			n.Branch = t.Nodes[p].Branch
		} else {
			n.Branch = len(t.Branches) + 1
			t.Branches = append(t.Branches, Branch{ID: n.Branch, Fork: cp.Parent, First: cp.Version})
		}
		continued[cp.Parent] = true
		b := &t.Branches[n.Branch-1]
		b.Tip = cp.Version
		b.Versions++
		t.Nodes[i] = n
		index[cp.Version] = i
	}
	if i, ok := index[head]; ok {
		t.Branches[t.Nodes[i].Branch-1].Current = true
	}
	for v := head; v > 0; {
		i, ok := index[v]
		if !ok {
			break
		}
		t.Nodes[i].Current = true
		v = t.Nodes[i].Parent
	}
	return t
}

// Path returns the versions from the root to v, v last, or nil if v is not
// in the tree.
func (t Tree) Path(v int) []int {
	index := make(map[int]int, len(t.Nodes))
	for i, n := range t.Nodes {
		index[n.Version] = i
	}
	var path []int
	for v > 0 {
		i, ok := index[v]
		if !ok {
			return nil
		}
		path = append(path, v)
		v = t.Nodes[i].Parent
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	return path
}
