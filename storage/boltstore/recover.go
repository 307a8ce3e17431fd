package boltstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	bolt "go.etcd.io/bbolt"

	"retrace/state"
)

// Recovered says what Recover kept, and what it could not.
type Recovered struct {
	Sessions int // sessions copied (whole or in part)
	Versions int // versions copied
	Lost     []Loss
}

// Loss is what one session lost.
type Loss struct {
	Session string
	Lost    []int // version numbers, as they were, that could not be kept
	Reason  string
	// Renumbered is true when versions after a lost one moved down, so
	// that versions stay 1..N: the report says so, as their numbers
	// changed.
	Renumbered bool
	Whole      bool // nothing of the session could be kept
}

// Recover copies every session and version of a damaged database that
// still reads back intact into a new file at dst, which must not exist.
// The damaged file is only read.
//
// A version is kept when its record passes its checksum and decodes, and
// its parent was kept: a state is the replay of its whole path, so a
// version whose ancestor is lost cannot be shown truthfully and is lost
// with it. Kept versions are numbered 1..N again in their old order.
// A session whose head was lost continues from its newest kept version.
//
// Damage to bbolt's own page structure (a truncated file, a broken page)
// cannot be read around: Recover then fails with the error Open gives.
func Recover(ctx context.Context, src, dst string) (Recovered, error) {
	if _, err := os.Stat(dst); err == nil {
		return Recovered{}, fmt.Errorf("recover into %s: the file exists; give a new path", dst)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return Recovered{}, fmt.Errorf("recover into %s: %w", dst, err)
	}
	from, err := Open(src, Options{})
	if err != nil {
		return Recovered{}, err
	}
	defer from.Close()
	var sessions []salvaged
	err = from.view(ctx, func(tx *bolt.Tx) error {
		b, err := from.sessionsOf(tx)
		if err != nil {
			return err
		}
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if v == nil {
				sessions = append(sessions, salvage(b.Bucket(k), string(k)))
			}
		}
		return nil
	})
	if err != nil {
		return Recovered{}, err
	}
	return write(ctx, dst, sessions)
}

// salvaged is one session as Recover could read it.
type salvaged struct {
	id      string
	info    infoRecord
	records [][]byte // re-encoded, numbered 1..len
	loss    Loss
}

func salvage(b *bolt.Bucket, id string) salvaged {
	s := salvaged{id: id, loss: Loss{Session: id}}
	info, infoErr := decodeInfo(b.Get(infoKey))
	err := infoErr
	if err != nil {
		s.loss.Reason = "its session record: " + err.Error()
		info = infoRecord{Title: "(recovered session)"}
	}
	s.info = info
	vb := b.Bucket(versionsBucket)
	if vb == nil {
		s.loss.Whole, s.loss.Reason = true, "its versions are missing"
		return s
	}
	renumber := map[int]int{0: 0}       // old version -> new
	phases := []state.Phase{state.Idle} // by new version
	c := vb.Cursor()
	for k, raw := c.First(); k != nil; k, raw = c.Next() {
		v, ok := keyVersion(k)
		if !ok {
			continue
		}
		h, ev, err := decodeCheckpoint(raw)
		// A parent that is not older is damage of the record itself; only
		// an older parent can have been lost.
		if err == nil && h.parent >= v {
			err = fmt.Errorf("its parent v%d is not older than it", h.parent)
		}
		newParent, parentKept := renumber[h.parent]
		if err == nil && !parentKept {
			err = fmt.Errorf("its parent v%d was lost", h.parent)
		}
		var rec []byte
		if err == nil {
			rec, err = encodeCheckpoint(newParent, h.phase, ev)
		}
		if err != nil {
			s.loss.Lost = append(s.loss.Lost, v)
			if s.loss.Reason == "" {
				s.loss.Reason = fmt.Sprintf("v%d: %v", v, err)
			}
			continue
		}
		s.records = append(s.records, rec)
		renumber[v] = len(s.records)
		phases = append(phases, h.phase)
		if len(s.loss.Lost) > 0 {
			s.loss.Renumbered = true
		}
	}
	head, ok := renumber[info.Head]
	if !ok || infoErr != nil { // the head was lost, or never known
		head = len(s.records)
	}
	s.info.Head, s.info.Versions, s.info.Phase = head, len(s.records), phases[head]
	return s
}

func write(ctx context.Context, dst string, sessions []salvaged) (Recovered, error) {
	to, err := Open(dst, Options{})
	if err != nil {
		return Recovered{}, err
	}
	defer to.Close()
	var r Recovered
	err = to.update(ctx, func(tx *bolt.Tx) error {
		into, err := to.sessionsOf(tx)
		if err != nil {
			return err
		}
		for _, s := range sessions {
			if len(s.loss.Lost) > 0 || s.loss.Whole || s.loss.Reason != "" {
				r.Lost = append(r.Lost, s.loss)
			}
			if s.loss.Whole {
				continue
			}
			b, err := into.CreateBucket([]byte(s.id))
			if err != nil {
				return err
			}
			vb, err := b.CreateBucket(versionsBucket)
			if err != nil {
				return err
			}
			vb.FillPercent = 1.0
			for i, rec := range s.records {
				if err := vb.Put(versionKey(i+1), rec); err != nil {
					return err
				}
			}
			if err := putInfo(b, s.info); err != nil {
				return err
			}
			r.Sessions++
			r.Versions += len(s.records)
		}
		return nil
	})
	if err != nil {
		return Recovered{}, fmt.Errorf("recover into %s: %w", dst, err)
	}
	// Every kept head must replay: the copy is checked as a whole before
	// anyone relies on it.
	for _, s := range sessions {
		if s.loss.Whole {
			continue
		}
		if _, err := to.Head(ctx, s.id); err != nil {
			return r, fmt.Errorf("recover into %s: session %s does not replay: %w", dst, s.id, err)
		}
	}
	return r, Verify(ctx, dst)
}
