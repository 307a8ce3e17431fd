package tui

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
)

// keyToken finds the keys a line of the README names: Ctrl+T, Shift+←/→,
// PgUp/PgDn, Enter, `n`, ? or F1.
var keyToken = regexp.MustCompile("(?:(?:Ctrl|Alt|Shift)\\+)?(?:[←→↑↓](?:/[←→↑↓])?|PgUp|PgDn|Home|End|Enter|Esc|Tab|F1|Backspace|Space|\\b[A-Z](?:/[A-Z])?\\b)|`[a-z?]`|\\?")

// readmeKeys are the keys the README's keys table names, as keyName
// writes them.
func readmeKeys(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "| keys | |\n|---|---|\n")
	if !ok {
		t.Fatal("the README has no keys table")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	keys := map[string]bool{}
	for _, row := range strings.Split(table, "\n") {
		for _, tok := range keyToken.FindAllString(row, -1) {
			tok = strings.Trim(tok, "`")
			mod := ""
			if i := strings.LastIndex(tok, "+"); i >= 0 {
				mod, tok = tok[:i+1], tok[i+1:]
			}
			for _, k := range strings.Split(tok, "/") {
				keys[mod+k] = true
			}
		}
	}
	return keys
}

// The README's keys table names only keys the key declarations have, and
// every key of the chat, the timeline, an approval and the sessions
// dialog: the two cannot drift apart.
func TestReadmeKeysMatchTheDeclarations(t *testing.T) {
	declared := map[string]bool{}
	for _, bs := range modeBindings(t) {
		for _, b := range bs {
			for _, k := range b.Keys() {
				declared[keyName(k)] = true
			}
		}
	}
	named := readmeKeys(t)
	for k := range named {
		if !declared[k] {
			t.Errorf("the README's keys table names %s, which no mode declares", k)
		}
	}
	for mode, bs := range map[string][]key.Binding{
		"chat": keymap.Chat.bindings(), "timeline": keymap.Timeline.bindings(),
		"approval": keymap.Approval.bindings(), "sessions": keymap.Sessions.bindings(),
	} {
		for _, b := range bs {
			if k := legend(b); !named[k] {
				t.Errorf("%s: %s (%s) is not in the README's keys table", mode, k, b.Help().Desc)
			}
		}
	}
}
