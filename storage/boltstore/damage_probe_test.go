package boltstore_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"retrace/state"
	"retrace/storage"
	"retrace/storage/boltstore"
)

// probeOp is one operation the probe ran on a variant.
type probeOp struct {
	Op      string `json:"op"`
	Write   bool   `json:"write,omitempty"`
	Err     string `json:"err,omitempty"`
	Typed   bool   `json:"typed,omitempty"` // wraps storage.ErrCorrupt or ErrNotDatabase
	Session string `json:"session,omitempty"`
	Version int    `json:"version,omitempty"`
	Panic   string `json:"panic,omitempty"`
	Result  string `json:"result,omitempty"` // SHA-256 of the result as JSON
	Empty   bool   `json:"empty,omitempty"`  // an empty session list
	// Derived: the damage is in data made from the rest (a snapshot),
	// which reads pass over and writes may go on after.
	Derived bool `json:"derived,omitempty"`
}

// probeReport is everything the probe saw of one variant.
type probeReport struct {
	Variant     string    `json:"variant"`
	Path        string    `json:"path"`
	Ops         []probeOp `json:"ops"`
	ReadsEdited bool      `json:"reads_edited,omitempty"` // the file changed while only reading
	WriteEdited bool      `json:"write_edited,omitempty"` // the file changed during the writes
}

// damageProbe is the probe process (RETRACE_TEST_ROLE=damage-probe): for
// every variant directory under dir it opens the file, reads every
// session's tree and head, verifies it, then tries to write, printing one
// JSON report per variant.
func damageProbe(dir string, ids []string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	out := bufio.NewWriter(os.Stdout)
	for _, e := range entries {
		fmt.Fprintf(out, "begin %s\n", e.Name())
		out.Flush()
		rep := probeVariant(filepath.Join(dir, e.Name(), "retrace.db"), ids)
		rep.Variant = e.Name()
		js, err := json.Marshal(rep)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "report %s\n", js)
		out.Flush()
	}
	return nil
}

// probeVariant runs every read on path, then every write.
func probeVariant(path string, ids []string) probeReport {
	ctx := context.Background()
	rep := probeReport{Path: path}
	sum := func() [32]byte {
		b, _ := os.ReadFile(path)
		return sha256.Sum256(b)
	}
	before := sum()
	run := func(op string, write bool, fn func() (any, error)) {
		rep.Ops = append(rep.Ops, runProbeOp(op, write, fn))
	}

	st, err := boltstore.Open(path, boltstore.Options{})
	run("open", false, func() (any, error) { return nil, err })
	if err == nil {
		run("sessions", false, func() (any, error) { return st.Sessions(ctx) })
		run("memories", false, func() (any, error) { return st.MemoryEvents(ctx) })
		run("memories now", false, func() (any, error) { return st.MemoriesNow(ctx) })
		run("chunked content", false, func() (any, error) {
			blob, _ := chunkedContent()
			data, err := st.Blob(ctx, blob.Digest)
			if err == nil && !bytes.Equal(data, blob.Data) {
				return nil, errors.New("the chunked content read back as other bytes")
			}
			return len(data), err
		})
		for _, id := range ids {
			// Recent first: it reads through guarded lookups (guardIn)
			// only while no read has walked the session whole.
			run("recent "+id, false, func() (any, error) { return storage.Latest(ctx, st, id, 5) })
			run("tree "+id, false, func() (any, error) { return st.Tree(ctx, id) })
			run("head "+id, false, func() (any, error) { return st.Head(ctx, id) })
		}
		st.Close()
	}
	run("verify", false, func() (any, error) { return nil, boltstore.Verify(ctx, path) })
	rep.ReadsEdited = sum() != before

	// Writes, by a new store as a new retrace process would make them.
	before = sum()
	w, err := boltstore.Open(path, boltstore.Options{})
	run("open to write", true, func() (any, error) { return nil, err })
	if err == nil {
		run("create", true, func() (any, error) { return w.Create(ctx, storage.NewSession{Title: "after damage"}) })
		run("commit", true, func() (any, error) {
			s, err := w.Head(ctx, ids[0])
			if err != nil {
				return nil, err
			}
			return storage.Commit(ctx, w, s, chatEvent(s, 1000))
		})
		run("set head", true, func() (any, error) { return nil, w.SetHead(ctx, ids[0], 1) })
		run("remember", true, func() (any, error) {
			return w.AppendMemory(ctx, state.MemoryEvent{Kind: state.MemoryAdded, Memory: state.Memory{Text: "after damage"}})
		})
		w.Close()
	}
	rep.WriteEdited = sum() != before
	return rep
}

func runProbeOp(op string, write bool, fn func() (any, error)) (r probeOp) {
	r.Op, r.Write = op, write
	defer func() {
		if p := recover(); p != nil {
			r.Panic = fmt.Sprint(p)
		}
	}()
	v, err := fn()
	if err != nil {
		r.Err = err.Error()
		r.Typed = errors.Is(err, storage.ErrCorrupt) || errors.Is(err, storage.ErrNotDatabase)
		var ce *storage.CorruptError
		if errors.As(err, &ce) {
			r.Session, r.Version, r.Derived = ce.Session, ce.Version, ce.Derived
		}
		return r
	}
	if v != nil {
		js, err := json.Marshal(v)
		if err != nil {
			r.Err = "cannot encode the result: " + err.Error()
			return r
		}
		r.Result = fmt.Sprintf("%x", sha256.Sum256(js))
		if list, ok := v.([]storage.SessionInfo); ok && len(list) == 0 {
			r.Empty = true
		}
	}
	return r
}
