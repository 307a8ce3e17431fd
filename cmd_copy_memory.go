package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/charmbracelet/x/term"

	"retrace/state"
	"retrace/state/transcript"
	"retrace/storage"
)

// copyMemoryLog copies source's memory log into target on a whole copy
// with --memories, and says what it did. A memory kept for every project
// reaches the prompt of every project of the target's user, without any
// approval of theirs: such memories are copied only after a question
// (or --everywhere); without them, only the memories kept for projects
// are copied, each as it is now, not the log that made them. The error
// is the memory log's failure, said already.
func copyMemoryLog(ctx context.Context, c *cli, f copyFlags, whole bool, source, target storage.Store) error {
	if !whole {
		if f.memories {
			fmt.Fprintln(c.stderr, "retrace: the memory log goes only with a whole copy (no ID named); it was not copied")
		}
		return nil
	}
	log, err := source.MemoryEvents(ctx)
	if !f.memories {
		if err == nil && len(log) > 0 {
			fmt.Fprintf(c.stdout, "the memory log (%s) was not copied: --memories copies it\n", transcript.Count(len(log), "entry"))
		}
		return nil // not asked for: a log that cannot be read fails nothing
	}
	var n int
	var what string
	if err == nil && len(log) > 0 {
		n, what, err = copyMemoryEntries(ctx, c, f, log, target)
	}
	switch {
	case err != nil:
		fmt.Fprintf(c.stderr, "retrace: the memory log not copied: %s\n", explain(err))
	case n > 0:
		fmt.Fprintf(c.stdout, "copied %s: %s\n", what, transcript.Count(n, "entry"))
	}
	return err
}

// copyMemoryEntries copies log into target, whole when it holds no memory
// for every project or the user lets those come too; otherwise only the
// memories for projects. It returns how many entries it wrote and what
// they were.
func copyMemoryEntries(ctx context.Context, c *cli, f copyFlags, log []state.MemoryEvent, target storage.Store) (int, string, error) {
	folded, err := state.FoldMemories(log)
	if err != nil {
		return 0, "", err
	}
	everywhere := everywhereMemories(folded)
	if len(everywhere) == 0 || f.everywhere || c.askEverywhere(everywhere) {
		n, err := replayMemories(ctx, log, target)
		return n, "the memory log", err
	}
	fmt.Fprintf(c.stdout, "%s for every project not copied (--everywhere copies them)\n", transcript.Count(len(everywhere), "memory"))
	var mine []state.MemoryEvent
	for _, m := range folded.List {
		if !m.Everywhere() {
			mine = append(mine, state.MemoryEvent{Kind: state.MemoryAdded, Memory: m})
		}
	}
	n, err := replayMemories(ctx, mine, target)
	return n, "the memories for projects", err
}

// everywhereMemories are the memories kept for every project.
func everywhereMemories(m state.Memories) []state.Memory {
	var out []state.Memory
	for _, x := range m.List {
		if x.Everywhere() {
			out = append(out, x)
		}
	}
	return out
}

// askEverywhere asks whether memories kept for every project come too:
// on a terminal, with each one shown; anywhere else the answer is no.
func (c *cli) askEverywhere(ms []state.Memory) bool {
	in, ok := c.stdin.(*os.File)
	if !ok || !term.IsTerminal(in.Fd()) {
		return false
	}
	fmt.Fprintf(c.stderr, "The memory log holds %s kept for every project. Each would be in the prompt of every task in every project of yours:\n",
		transcript.Count(len(ms), "memory"))
	for _, m := range ms {
		fmt.Fprintf(c.stderr, "  %s  %s\n", inertLine(m.ID), inertLine(m.Text))
	}
	fmt.Fprint(c.stderr, "Copy them too? [y/N] ")
	answer, _ := bufio.NewReader(in).ReadString('\n')
	answer = strings.ToLower(strings.TrimSpace(answer))
	return answer == "y" || answer == "yes"
}

// replayMemories appends log's entries to target's, when target has none
// of its own: ids and times stay, and a whole log keeps its numbers too.
// Two logs are not merged; one already there is left as it is, unless it
// is the same log.
func replayMemories(ctx context.Context, log []state.MemoryEvent, target storage.Store) (int, error) {
	there, err := target.MemoryEvents(ctx)
	if err != nil {
		return 0, err
	}
	if len(there) > 0 {
		if reflect.DeepEqual(there, log) {
			return 0, nil
		}
		return 0, fmt.Errorf("the target keeps a memory log of its own (%s); logs are not merged", transcript.Count(len(there), "entry"))
	}
	for i, ev := range log {
		if _, err := target.AppendMemory(ctx, ev); err != nil {
			return i, fmt.Errorf("memory log v%d: %w", i+1, err)
		}
	}
	return len(log), nil
}
