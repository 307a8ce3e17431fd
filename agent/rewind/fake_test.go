package rewind

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"

	"retrace/agent/snapshot"
	"retrace/state"
	"retrace/storage"
)

// memStore is one session in memory: every version's state, a head, and
// blobs by digest. Append applies the event, as a store replays it.
type memStore struct {
	states []state.State // states[v] is version v
	events []state.Event // events[v] made version v (events[0] is zero)
	head   int
	blobs  map[string][]byte
	// refuse makes keeping an event of this kind fail, as a full disk
	// would: nothing is kept, the head included.
	refuse state.EventKind
	ats    int // At calls: loads of a whole version
}

func newMemStore() *memStore {
	return &memStore{states: []state.State{state.New("s")}, events: []state.Event{{}}, blobs: map[string][]byte{}}
}

func (m *memStore) Append(ctx context.Context, id string, parent int, ev state.Event) (storage.Checkpoint, error) {
	if parent != m.head {
		return storage.Checkpoint{}, &storage.ConflictError{Session: id, Parent: parent, Head: m.head}
	}
	return m.keep(parent, ev)
}

// Fork keeps ev under any version and moves the head to it, or does
// neither.
func (m *memStore) Fork(_ context.Context, _ string, parent int, ev state.Event) (storage.Checkpoint, error) {
	if parent < 0 || parent >= len(m.states) {
		return storage.Checkpoint{}, &storage.VersionError{Session: "s", Version: parent, Versions: len(m.states) - 1}
	}
	return m.keep(parent, ev)
}

func (m *memStore) keep(parent int, ev state.Event) (storage.Checkpoint, error) {
	if ev.Kind == m.refuse {
		return storage.Checkpoint{}, errors.New("disk full")
	}
	for _, d := range ev.BlobDigests() {
		if _, ok := m.blobs[d]; !ok && !hasBlob(ev.Blobs, d) {
			return storage.Checkpoint{}, fmt.Errorf("blob %s is nowhere", d)
		}
	}
	next, err := state.Apply(m.states[parent], ev)
	if err != nil {
		return storage.Checkpoint{}, err
	}
	for _, b := range ev.Blobs {
		m.blobs[b.Digest] = b.Data
	}
	ev.Blobs = nil
	v := len(m.states)
	next.Version, next.ParentVersion = v, parent
	m.states, m.events, m.head = append(m.states, next), append(m.events, ev), v
	return storage.Checkpoint{Version: v, Parent: parent, Event: ev.Kind, Phase: next.Phase}, nil
}

func hasBlob(bs []state.Blob, d string) bool {
	for _, b := range bs {
		if b.Digest == d {
			return true
		}
	}
	return false
}

func (m *memStore) At(_ context.Context, _ string, v int) (state.State, error) {
	m.ats++
	if v < 0 || v >= len(m.states) {
		return state.State{}, &storage.VersionError{Session: "s", Version: v, Versions: len(m.states) - 1}
	}
	return m.states[v], nil
}

func (m *memStore) SetHead(_ context.Context, _ string, v int) error {
	if v < 0 || v >= len(m.states) {
		return &storage.VersionError{Session: "s", Version: v, Versions: len(m.states) - 1}
	}
	m.head = v
	return nil
}

func (m *memStore) Blob(_ context.Context, d string) ([]byte, error) {
	b, ok := m.blobs[d]
	if !ok {
		return nil, fmt.Errorf("blob %s: not found", d)
	}
	return b, nil
}

// memFiles is a workspace in memory.
type memFiles struct {
	files map[string]file
	puts  []string // paths written, in order
	// failAt makes the nth Put (counting from 1) fail.
	failAt, tries int
	swept         []string
	images        int // Image calls
	// beforeReplace is called as PutIf looks at a file for the last
	// time, as a user saving it then would.
	beforeReplace func(p string)
}

var errChangedMeanwhile = fmt.Errorf("put: %w", snapshot.ErrChangedMeanwhile)

type file struct {
	data []byte
	mode uint32
}

var errStopped = errors.New("stopped")

func (f *memFiles) Image(p string) (state.FileImage, []byte, error) {
	f.images++
	x, ok := f.files[p]
	if !ok {
		return state.FileImage{Absent: true}, nil, nil
	}
	return image(x.data, x.mode), x.data, nil
}

func (f *memFiles) PutIf(p string, img state.FileImage, data []byte, ok func(state.FileImage) bool) error {
	f.tries++
	if f.tries == f.failAt {
		return errStopped
	}
	if f.beforeReplace != nil {
		f.beforeReplace(p)
	}
	if now, _, _ := f.Image(p); ok != nil && !ok(now) {
		return errChangedMeanwhile
	}
	f.puts = append(f.puts, p)
	if img.Absent {
		delete(f.files, p)
		return nil
	}
	if digest(data) != img.Blob {
		return fmt.Errorf("put %s: content does not match %s", p, img.Blob)
	}
	f.files[p] = file{data: append([]byte(nil), data...), mode: img.Mode}
	return nil
}

// Sweep records the paths swept.
func (f *memFiles) Sweep(p string) error {
	f.swept = append(f.swept, p)
	return nil
}

func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

func image(data []byte, mode uint32) state.FileImage {
	return state.FileImage{Blob: digest(data), Size: int64(len(data)), Mode: mode}
}

// session drives a memStore and a memFiles the way the agent does: each
// step changes files on disk and records the change as a tool call.
type session struct {
	st    *memStore
	files *memFiles
	calls int
}

func newSession() *session {
	s := &session{st: newMemStore(), files: &memFiles{files: map[string]file{}}}
	s.commit(state.Event{Kind: state.UserMessage, Messages: []state.Message{{Role: state.RoleUser, Content: "go"}}})
	s.commit(state.Event{Kind: state.PlanSet, Plan: []state.Step{{Text: "work"}}})
	return s
}

func (s *session) commit(ev state.Event) state.State {
	if _, err := s.st.Append(context.Background(), "s", s.st.head, ev); err != nil {
		panic(err)
	}
	return s.st.states[s.st.head]
}

// write makes each path hold its content ("" removes it) and records
// that as one tool call; it returns the version of the tool_finished.
func (s *session) write(contents map[string]string) int {
	s.calls++
	id := fmt.Sprintf("c%d", s.calls)
	s.commit(state.Event{Kind: state.AssistantMessage, Messages: []state.Message{{Role: state.RoleAssistant,
		ToolCalls: []state.ToolRequest{{ID: id, Name: "run_command", Arguments: `{}`}}}}})
	s.commit(state.Event{Kind: state.ToolStarted, Tool: &state.ToolCall{ID: id}})
	ev := state.Event{Kind: state.ToolFinished, Tool: &state.ToolCall{ID: id, Result: "ok"}}
	for _, p := range slices.Sorted(maps.Keys(contents)) {
		before, bdata, _ := s.files.Image(p)
		if c := contents[p]; c == "" {
			delete(s.files.files, p)
		} else {
			s.files.files[p] = file{data: []byte(c), mode: 0o644}
		}
		after, adata, _ := s.files.Image(p)
		ev.Files = append(ev.Files, state.FileChange{Path: p, Before: before, After: after})
		for _, b := range []struct {
			img  state.FileImage
			data []byte
		}{{before, bdata}, {after, adata}} {
			if b.img.Blob != "" {
				ev.Blobs = append(ev.Blobs, state.Blob{Digest: b.img.Blob, Data: b.data})
			}
		}
	}
	s.commit(ev)
	return s.st.head
}

// disk is the workspace as path → content.
func (s *session) disk() map[string]string {
	out := map[string]string{}
	for p, f := range s.files.files {
		out[p] = string(f.data)
	}
	return out
}
