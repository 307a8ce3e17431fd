package storage_test

import (
	"reflect"
	"testing"

	"retrace/storage"
)

// WithRemoved adds versions to runs of removed versions: each run from
// its first to its last, both in it, runs that touch joined, in order.
func TestWithRemoved(t *testing.T) {
	for _, c := range []struct {
		runs [][2]int
		vs   []int
		want [][2]int
	}{
		{nil, nil, nil},
		{nil, []int{3}, [][2]int{{3, 3}}},
		{nil, []int{4, 3, 7, 8}, [][2]int{{3, 4}, {7, 8}}},
		{[][2]int{{3, 4}, {7, 8}}, []int{2, 5, 6}, [][2]int{{2, 8}}},              // the gaps filled: one run
		{[][2]int{{3, 4}}, []int{5}, [][2]int{{3, 5}}},                            // just after the last
		{[][2]int{{3, 4}}, []int{2}, [][2]int{{2, 4}}},                            // just before the first
		{[][2]int{{3, 4}}, []int{6}, [][2]int{{3, 4}, {6, 6}}},                    // one apart: two runs
		{[][2]int{{1, 1}}, []int{1}, [][2]int{{1, 1}}},                            // already there
		{[][2]int{{5, 1<<63 - 1}}, []int{4, 1<<63 - 1}, [][2]int{{4, 1<<63 - 1}}}, // a run to the last int, never walked
	} {
		if got := storage.WithRemoved(c.runs, c.vs); !reflect.DeepEqual(got, c.want) {
			t.Errorf("WithRemoved(%v, %v) = %v, want %v", c.runs, c.vs, got, c.want)
		}
	}
}

// Gaps is the runs of versions 1 to count that records lack, the last
// version included.
func TestGaps(t *testing.T) {
	records := func(vs ...int) []storage.Record {
		var out []storage.Record
		for _, v := range vs {
			out = append(out, storage.Record{Checkpoint: storage.Checkpoint{Version: v}})
		}
		return out
	}
	for _, c := range []struct {
		records []storage.Record
		count   int
		want    [][2]int
	}{
		{records(1, 2, 3), 3, nil},
		{records(1, 2), 3, [][2]int{{3, 3}}}, // the last version
		{records(2, 3), 3, [][2]int{{1, 1}}}, // the first
		{records(1, 5), 6, [][2]int{{2, 4}, {6, 6}}},
		{nil, 2, [][2]int{{1, 2}}},
		{records(3, 1, 3), 4, [][2]int{{2, 2}, {4, 4}}}, // out of order, twice
		// A count far past the records, as a hostile export declares it:
		// one run, found without walking it.
		{records(1, 2), 1<<63 - 11, [][2]int{{3, 1<<63 - 11}}},
		{records(1<<63 - 12), 1<<63 - 11, [][2]int{{1, 1<<63 - 13}, {1<<63 - 11, 1<<63 - 11}}},
	} {
		if got := storage.Gaps(c.records, c.count); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Gaps(%d records, %d) = %v, want %v", len(c.records), c.count, got, c.want)
		}
	}
}
