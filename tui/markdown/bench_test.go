package markdown

import (
	"testing"

	"charm.land/lipgloss/v2"
)

// benchReply is a realistic 4 KB assistant reply: headings, prose with
// inline markup, lists, a quote, a table and several code blocks.
const benchReply = "## Fixing the flaky checkpoint test\n\n" +
	"The failure comes from `TestCheckpointResume`: it assumes the **bolt** file is flushed when `Close` returns, " +
	"but the store opens the database with `NoSync: true` in tests, so a crash between the write and the " +
	"fsync loses the last checkpoint. See the [bbolt docs](https://pkg.go.dev/go.etcd.io/bbolt#Options) for the details.\n\n" +
	"There are three ways to fix it:\n\n" +
	"1. Keep `NoSync` but call `db.Sync()` in the test helper before simulating the crash.\n" +
	"2. Drop `NoSync` from the test options; the suite gets about *15% slower*.\n" +
	"3. Make the resume path tolerate a missing final checkpoint, which it should anyway:\n" +
	"   - replay the event log from the previous checkpoint,\n" +
	"   - and re-derive the phase with `state.Apply`.\n\n" +
	"I went with the third option, plus the first for the test itself.\n\n" +
	"### The store change\n\n" +
	"```go\n" +
	"// Resume returns the last consistent checkpoint and the events after it.\n" +
	"func (s *Store) Resume(ctx context.Context, session string) (Checkpoint, []Event, error) {\n" +
	"\tvar cp Checkpoint\n" +
	"\tvar events []Event\n" +
	"\terr := s.db.View(func(tx *bbolt.Tx) error {\n" +
	"\t\tb := tx.Bucket(bucketSessions).Bucket([]byte(session))\n" +
	"\t\tif b == nil {\n" +
	"\t\t\treturn ErrNoSession\n" +
	"\t\t}\n" +
	"\t\tcp = decodeCheckpoint(b.Get(keyCheckpoint))\n" +
	"\t\treturn b.Bucket(bucketEvents).ForEach(func(k, v []byte) error {\n" +
	"\t\t\tif seq(k) > cp.Seq {\n" +
	"\t\t\t\tevents = append(events, decodeEvent(bytes.Clone(v)))\n" +
	"\t\t\t}\n" +
	"\t\t\treturn nil\n" +
	"\t\t})\n" +
	"\t})\n" +
	"\treturn cp, events, err\n" +
	"}\n" +
	"```\n\n" +
	"Note the `bytes.Clone`: bbolt's slices are only valid inside the transaction, and the old code kept them.\n\n" +
	"### The test helper\n\n" +
	"```go\n" +
	"func openStore(t *testing.T) *Store {\n" +
	"\tt.Helper()\n" +
	"\ts, err := Open(filepath.Join(t.TempDir(), \"retrace.db\"), Options{NoSync: true, Timeout: time.Second})\n" +
	"\tif err != nil {\n" +
	"\t\tt.Fatal(err)\n" +
	"\t}\n" +
	"\tt.Cleanup(func() { _ = s.Close() })\n" +
	"\treturn s\n" +
	"}\n" +
	"```\n\n" +
	"> **Caveat:** the event log can now grow without bound between checkpoints. " +
	"The agent checkpoints after every tool call, so in practice it stays under a few hundred entries.\n\n" +
	"| option | speed | safety |\n" +
	"|---|---|---|\n" +
	"| `NoSync` + `Sync()` | fast | good |\n" +
	"| no `NoSync` | slow | good |\n" +
	"| tolerant resume | fast | best |\n\n" +
	"If you would rather not change the resume semantics, the smallest safe change is option 1 alone. It keeps the " +
	"production code untouched and only makes the test honest about what it simulates; the downside is that a real crash " +
	"in the field would still lose the final checkpoint, which is exactly the situation the tolerant resume is meant to " +
	"handle. Since the agent already treats checkpoints as *must-deliver* events (they are never coalesced like streaming " +
	"deltas), losing one silently felt like the wrong trade-off, so I kept both changes. Tell me if you want them split " +
	"into two commits: the test fix is independent and could land first.\n\n" +
	"To run the suite:\n\n" +
	"```sh\n" +
	"go test -race -count=20 -run 'TestCheckpoint|TestResume' ./storage/...\n" +
	"```\n\n" +
	"### Why the old test passed locally\n\n" +
	"On a laptop the page cache hides the problem: the write is visible to the *same process* long before it reaches the disk, " +
	"and the simulated crash only closes file handles. CI runs on a tmpfs-backed runner where `fsync` is a no-op, which changes " +
	"the timing just enough that the __background__ flush of the previous test overlaps with the next `Open`. A few things made it " +
	"hard to spot:\n\n" +
	"- the failure rate was about 1 in 40 runs,\n" +
	"- the error message (`bucket not found`) pointed at the session code, not at the store,\n" +
	"- and `-count=1` disabled the test cache, so re-running a failed job often passed.\n\n" +
	"The resume path now logs the checkpoint sequence it starts from, which makes the next failure of this kind obvious:\n\n" +
	"```go\n" +
	"slog.DebugContext(ctx, \"resume\", \"session\", session, \"checkpoint\", cp.Seq, \"replay\", len(events))\n" +
	"```\n\n" +
	"---\n\n" +
	"Everything passes 200 times in a row now. If you want, I can also add a `storetest` case for the " +
	"missing-final-checkpoint scenario so every backend is held to it; it would go in " +
	"`storage/storetest/resume.go` next to the other conformance cases.\n"

func benchStyles() Styles {
	return Styles{
		Text:      lipgloss.NewStyle().Foreground(lipgloss.Color("#d0d0d0")),
		Heading:   lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("#7aa2f7")),
		Bold:      lipgloss.NewStyle().Bold(true),
		Italic:    lipgloss.NewStyle().Italic(true),
		Code:      lipgloss.NewStyle().Foreground(lipgloss.Color("#e0af68")),
		CodeBlock: lipgloss.NewStyle().Foreground(lipgloss.Color("#c0caf5")).Background(lipgloss.Color("#1f2335")),
		Quote:     lipgloss.NewStyle().Foreground(lipgloss.Color("#9aa5ce")).Italic(true),
		Bullet:    lipgloss.NewStyle().Foreground(lipgloss.Color("#bb9af7")),
		Link:      lipgloss.NewStyle().Foreground(lipgloss.Color("#7dcfff")).Underline(true),
		Rule:      lipgloss.NewStyle().Foreground(lipgloss.Color("#565f89")),
	}
}

func BenchmarkRender(b *testing.B) {
	s := benchStyles()
	b.SetBytes(int64(len(benchReply)))
	b.ReportAllocs()
	for b.Loop() {
		Render(benchReply, 80, s)
	}
}
