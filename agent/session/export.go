package session

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"retrace/state/transcript"
	"retrace/storage"
)

// ExportFormat names the JSON export's layout, so a reader can tell which
// retrace wrote it; storage reads it back (storage.DecodeExport).
const ExportFormat = storage.ExportFormat

// Exported is the JSON export: everything the store holds about a
// session, every version's event included, so nothing is lost.
type Exported = storage.Exported

// ExportTo writes session id of st to w as "json" (every version, and
// every file content, read a piece at a time: see storage.WriteExport)
// or "md" (the conversation at the head, as markdown). An error once
// writing began leaves w with part of an export.
func ExportTo(ctx context.Context, w io.Writer, st storage.Store, id, format string) error {
	switch format {
	case "json":
		return storage.WriteExport(ctx, w, st, id)
	case "md":
		info, err := st.Session(ctx, id)
		if err != nil {
			return err
		}
		s, err := st.At(ctx, id, info.Head)
		if err != nil {
			return err
		}
		_, err = io.WriteString(w, transcript.Markdown(transcript.Header{
			Title: info.Title, SessionID: id, Model: info.Model, Workspace: info.Workspace,
			Version: info.Head, Versions: info.Versions, Head: info.Head, Exported: time.Now(),
		}, s))
		return err
	}
	return fmt.Errorf("export format %q: want json or md", format)
}

// WriteExport writes the open session to path ("" names a file after the
// session in the current directory) and returns the absolute path. The
// export is written beside it under a temporary name and renamed into
// place once whole: a failed export leaves no part of one at path.
func (c *Controller) WriteExport(format, path string) (string, error) {
	c.mu.Lock()
	id, draft := c.info.ID, c.draft != nil
	c.mu.Unlock()
	switch {
	case draft:
		return "", ErrDraft
	case id == "":
		return "", ErrNoSession
	}
	if format != "json" && format != "md" {
		return "", fmt.Errorf("export format %q: want json or md", format)
	}
	if path == "" {
		path = fmt.Sprintf("retrace-%s.%s", Short(id), format)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	f, err := os.CreateTemp(filepath.Dir(abs), "."+filepath.Base(abs)+".*")
	if err != nil {
		return "", fmt.Errorf("export: %w", err)
	}
	err = ExportTo(c.base, f, c.store, id, format)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), abs)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return "", fmt.Errorf("export: %w", err)
	}
	return abs, nil
}

// Short is the first eight characters of a session id: enough to name it
// (any unambiguous prefix resolves).
func Short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}
