package pgstore_test

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"retrace/state"
	"retrace/storage"
	"retrace/storage/pgstore"
)

// memoryDatabase is a database whose memory log holds n memories, the
// second edited.
func memoryDatabase(t *testing.T, n int) string {
	t.Helper()
	loc := newDatabase(t)
	st := openPG(t, loc, pgstore.Options{})
	var ids []string
	for i := range n {
		kept, err := st.AppendMemory(ctx, state.MemoryEvent{Kind: state.MemoryAdded, Memory: state.Memory{Text: fmt.Sprintf("memory %d", i)}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, kept.Memory.ID)
	}
	if _, err := st.AppendMemory(ctx, state.MemoryEvent{Kind: state.MemoryEdited, Memory: state.Memory{ID: ids[1], Text: "memory 1, edited"}}); err != nil {
		t.Fatal(err)
	}
	return loc
}

// nowIsTheFold checks that a new Store's memories now are the whole log
// folded.
func nowIsTheFold(t *testing.T, loc string) {
	t.Helper()
	st := openPG(t, loc, pgstore.Options{})
	whole, err := storage.Memories(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	now, err := st.MemoriesNow(ctx)
	if err != nil || now.Version != whole.Version || !reflect.DeepEqual(now.List, whole.List) {
		t.Fatalf("the memories now are v%d %+v (%v); the log folds to v%d %+v", now.Version, now.List, err, whole.Version, whole.List)
	}
}

// A snapshot of the memory log that cannot serve is passed over, and the
// memories read from the whole log: damaged, ahead of the log, of
// another log's row, behind the log (an older build appended), with a
// restore after it, or not there. Check reports it as derived damage;
// the next append makes a sound one.
func TestAMemorySnapshotThatCannotServeIsPassedOver(t *testing.T) {
	at := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name    string
		spoil   func(st *pgstore.Store) error
		derived bool
	}{
		{"a byte changed", nil, true},
		{"ahead of the log", func(st *pgstore.Store) error {
			return pgstore.PutMemorySnapshot(ctx, st, state.Folded(99, nil), 1)
		}, true},
		{"of another log's row", func(st *pgstore.Store) error {
			return pgstore.PutMemorySnapshot(ctx, st, state.Folded(6, nil), 12345)
		}, true},
		{"behind the log", func(st *pgstore.Store) error {
			return pgstore.PutMemoryRow(ctx, st, state.MemoryEvent{Version: 7, Kind: state.MemoryAdded, At: at,
				Memory: state.Memory{ID: "older", Text: "an older build's", CreatedAt: at, UpdatedAt: at}})
		}, false},
		{"a restore after it", func(st *pgstore.Store) error {
			return pgstore.PutMemoryRow(ctx, st, state.MemoryEvent{Version: 7, Kind: state.MemoryRestored, At: at, To: 2})
		}, false},
		{"not there", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			loc := memoryDatabase(t, 5)
			switch c.name {
			case "a byte changed":
				sql(t, loc, `UPDATE retrace_memory_now SET body = set_byte(body, 30, get_byte(body, 30) # 4)`)
			case "not there":
				sql(t, loc, `DELETE FROM retrace_memory_now`)
			default:
				if err := c.spoil(openPG(t, loc, pgstore.Options{})); err != nil {
					t.Fatal(err)
				}
			}
			nowIsTheFold(t, loc)
			st := openPG(t, loc, pgstore.Options{})
			_, err := st.Check(ctx)
			var ce *storage.CorruptError
			if c.derived != (err != nil) || err != nil && (!errors.As(err, &ce) || !ce.Derived || !strings.Contains(err.Error(), "memory log's snapshot")) {
				t.Fatalf("check: %v", err)
			}
			if _, err := st.AppendMemory(ctx, state.MemoryEvent{Kind: state.MemoryAdded, Memory: state.Memory{Text: "after"}}); err != nil {
				t.Fatalf("an append after the snapshot was spoilt: %v", err)
			}
			if _, err := st.Check(ctx); err != nil {
				t.Fatalf("check after an append: %v", err)
			}
			nowIsTheFold(t, loc)
		})
	}
}

// A sound snapshot serves alone: the log's earlier rows are not read, so
// damage in one of them does not stop a task start (an append, and
// Check, still find it).
func TestMemoriesNowReadNoEarlierRow(t *testing.T) {
	loc := memoryDatabase(t, 40) // a snapshot at v33
	sql(t, loc, `UPDATE retrace_memory SET crc = crc # 1 WHERE version = 1`)
	st := openPG(t, loc, pgstore.Options{})
	now, err := st.MemoriesNow(ctx)
	if err != nil || now.Version != 41 || len(now.List) != 40 || now.List[1].Text != "memory 1, edited" {
		t.Fatalf("the memories now: v%d, %d memories, %v", now.Version, len(now.List), err)
	}
	if _, err := st.AppendMemory(ctx, state.MemoryEvent{Kind: state.MemoryAdded, Memory: state.Memory{Text: "x"}}); !errors.Is(err, storage.ErrCorrupt) || !strings.Contains(err.Error(), "memory log v1") {
		t.Fatalf("an append over the damaged log: %v", err)
	}
}
