package storetest

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"retrace/state"
	"retrace/storage"
)

// A session that arrives from elsewhere is kept closed: an imported
// checkpoint on its head ends the restore it left open, and becomes the
// head. Each backend keeps it, exports it, and takes the export again.
func testArrival(t *testing.T, b Backend) {
	from := open(t, b)
	info := create(t, from, "left mid-restore")
	s, _ := commitScript(t, from, state.New(info.ID), 31, 12)
	if s.Restoring != nil {
		var err error
		if s, err = storage.Commit(ctx, from, s, state.Event{Kind: state.FilesRestored, At: created.Add(time.Hour), Text: "restored"}); err != nil {
			t.Fatal(err)
		}
	}
	hook := state.FileChange{Path: ".git/hooks/pre-commit", Before: state.FileImage{Untracked: "a symlink"}, After: state.FileImage{Absent: true}}
	if _, err := storage.Commit(ctx, from, s, state.Event{Kind: state.RestoreStarted, At: created.Add(time.Hour), From: 3, Files: []state.FileChange{hook}}); err != nil {
		t.Fatal(err)
	}
	ex := exportOf(t, from, info.ID)
	ws := t.TempDir()
	at := created.Add(2 * time.Hour)
	arrived, err := storage.Arrive(cloneExport(t, ex), storage.Arrival{At: at, From: "imported from review.json", Workspace: ws})
	if err != nil {
		t.Fatal(err)
	}
	to := open(t, b)
	got, err := to.Import(ctx, arrived)
	if err != nil {
		t.Fatalf("import of an arrival: %v", err)
	}
	v := ex.Session.Versions + 1
	if got.Head != v || got.Versions != v || got.Workspace != ws || got.Phase.Active() || !got.UpdatedAt.Equal(at) {
		t.Fatalf("arrived as %+v; want head and versions v%d in %s, at rest, updated at %s", got, v, ws, at)
	}
	h := head(t, to, info.ID)
	if h.Restoring != nil || h.ParentVersion != ex.Session.Head || h.Unfinished() || len(h.OpenCalls()) > 0 || h.Arrival != v {
		t.Fatalf("head v%d under v%d: restoring %v, unfinished %v, open calls %v, arrival %d", h.Version, h.ParentVersion, h.Restoring, h.Unfinished(), h.OpenCalls(), h.Arrival)
	}
	back := exportOf(t, to, info.ID)
	if !reflect.DeepEqual(back, cloneExport(t, arrived)) {
		t.Fatalf("the arrival exports differently:\ngot  %+v\nwant %+v", back.Session, arrived.Session)
	}
	if last := back.Checkpoints[len(back.Checkpoints)-1]; last.Event != state.Imported || last.Data.Text != "imported from review.json" {
		t.Fatalf("the last checkpoint is %+v", last.Checkpoint)
	}
	// Exported, it arrives again: a second imported checkpoint.
	again, err := storage.Arrive(back, storage.Arrival{At: at.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	third := open(t, b)
	if got, err := third.Import(ctx, again); err != nil || got.Head != v+1 || got.Workspace != ws {
		t.Fatalf("the arrival exported and imported again: %+v, %v", got, err)
	}
	if h := head(t, third, info.ID); h.Arrival != v+1 {
		t.Fatalf("the second arrival is numbered %d, want %d", h.Arrival, v+1)
	}
}

// A workspace that is no directory of this machine is refused, and the
// export is left as it was.
func testArrivalWorkspaceRefused(t *testing.T, b Backend) {
	st := open(t, b)
	ex := exportedSession(t, st)
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// A repository's .git, a directory in it, and a link to one: a
	// rollback there would write git's hooks.
	repo := t.TempDir()
	gitDir := filepath.Join(repo, ".Git")
	if err := os.MkdirAll(filepath.Join(gitDir, "hooks"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "looks-plain")
	if err := os.Symlink(gitDir, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ recorded, chosen string }{
		{"", ""}, {"src/app", ""}, {"/src/app", ""}, {file, ""}, {"/src/../etc", ""},
		{t.TempDir(), "relative"}, {t.TempDir(), file},
		{gitDir, ""}, {filepath.Join(gitDir, "hooks"), ""}, {link, ""}, {repo, gitDir},
	} {
		in := cloneExport(t, ex)
		in.Session.Workspace = c.recorded
		want := cloneExport(t, in)
		got, err := storage.Arrive(in, storage.Arrival{At: created, Workspace: c.chosen})
		if !errors.Is(err, storage.ErrWorkspace) {
			t.Errorf("recorded %q, chosen %q: %v, want ErrWorkspace", c.recorded, c.chosen, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("recorded %q, chosen %q: the refused export changed", c.recorded, c.chosen)
		}
	}
}
