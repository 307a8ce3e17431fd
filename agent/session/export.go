package session

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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

// Export renders session id of st as "json" (every version) or "md" (the
// conversation at the head, as markdown).
func Export(ctx context.Context, st storage.Store, id, format string) ([]byte, error) {
	switch format {
	case "json":
		ex, err := st.Export(ctx, id)
		if err != nil {
			return nil, err
		}
		if ex.Checkpoints == nil {
			ex.Checkpoints = []storage.Record{}
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		if err := enc.Encode(Exported{Format: ExportFormat, Export: ex}); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	case "md":
		info, err := st.Session(ctx, id)
		if err != nil {
			return nil, err
		}
		s, err := st.At(ctx, id, info.Head)
		if err != nil {
			return nil, err
		}
		return []byte(transcript.Markdown(transcript.Header{
			Title: info.Title, SessionID: id, Model: info.Model, Workspace: info.Workspace,
			Version: info.Head, Versions: info.Versions, Head: info.Head, Exported: time.Now(),
		}, s)), nil
	}
	return nil, fmt.Errorf("export format %q: want json or md", format)
}

// WriteExport writes the open session to path ("" names a file after the
// session in the current directory) and returns the absolute path.
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
	if path == "" {
		path = fmt.Sprintf("retrace-%s.%s", Short(id), format)
	}
	data, err := Export(c.base, c.store, id, format)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(abs, data, 0o600); err != nil {
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
