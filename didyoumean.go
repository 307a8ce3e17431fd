package main

import (
	"flag"
	"io"
	"strings"
)

// Words on the command line that name no command are a prompt (`retrace
// "fix the tests"`). A near miss of a command is not: `retrace shwo abc`
// sent to a model costs a request and leaves a session behind, for a
// line the person meant as `retrace show abc`; an error that names the
// command costs nothing. So a first word one edit (a letter added, lost,
// changed, or two swapped) from a command's name is taken for a typo when
// what follows parses as that command's arguments, or when it is the
// only word. "how does the store work" is one edit from "show" but has
// four words where show takes one ID: a prompt. A prompt the rule
// catches is sent after --, or quoted whole: a first argument with a
// space in it is never a command.

// elsewhere are words other tools use for what retrace spells otherwise,
// with how to say them here and how many words they take.
var elsewhere = []struct {
	word, hint string
	maxArgs    int
}{
	{"resume", "'retrace -r ID' resumes a session, 'retrace sessions' lists them.", 1},
	{"continue", "'retrace -c' continues the latest session.", 0},
}

// misspelt is what to say about a command line whose first word names
// no command but was probably meant as one, or "" for a prompt.
func misspelt(args []string) string {
	word := args[0]
	if strings.ContainsAny(word, " \t\n") {
		return ""
	}
	for _, e := range elsewhere {
		if word == e.word && countArgs(interactive, args[1:]) <= e.maxArgs {
			return e.hint
		}
	}
	for _, cmd := range append([]command{{name: "help", nargs: 0}}, commands...) {
		if editDistance(word, cmd.name) != 1 {
			continue
		}
		n := countArgs(cmd, args[1:])
		if len(args) == 1 || n == cmd.nargs || (cmd.nargs < 0 && n > 0) {
			return "did you mean 'retrace " + cmd.name + "'?"
		}
	}
	return ""
}

// countArgs is how many positional arguments args are to cmd, or -1 when
// they do not parse as its command line.
func countArgs(cmd command, args []string) int {
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.String("db", "", "")
	if cmd.setup != nil {
		cmd.setup(fs)
	}
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		return -1
	}
	return len(positional)
}

// closest is the name in names one or two edits from word, if one is.
func closest(word string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := editDistance(word, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// editDistance counts the letters to add, drop or change, and the
// neighbours to swap, to turn a into b (optimal string alignment).
func editDistance(a, b string) int {
	s, t := []rune(a), []rune(b)
	prev2 := make([]int, len(t)+1)
	prev := make([]int, len(t)+1)
	cur := make([]int, len(t)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(s); i++ {
		cur[0] = i
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(t)]
}
