package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// forbidden says, for the folders DESIGN.md's dependency direction
// constrains, which imports their files (tests included) may not have: a
// prefix of an import path names a package and everything under it.
var forbidden = []struct {
	dir     string
	imports []string
	why     string
}{
	{"state", []string{"retrace/agent", "retrace/storage", "retrace/tui", "retrace/themes"}, "state imports nothing of ours"},
	{"storage", []string{"retrace/agent", "retrace/tui", "retrace/themes"}, "storage never imports the agent or the interface"},
	{"agent", []string{"retrace/tui", "retrace/themes", "charm.land/", "github.com/charmbracelet/"}, "the agent never imports the interface, Bubble Tea or Lip Gloss"},
	{"tui", []string{"retrace/agent", "retrace/storage", "go.etcd.io/bbolt", "github.com/sashabaranov/go-openai"}, "the interface never imports the agent, the store, bbolt or go-openai"},
	{"themes", []string{"retrace/agent", "retrace/storage", "retrace/tui"}, "themes are palettes and styles only"},
}

// The layout's dependency direction holds in every file: main wires the
// agent and the store into the interface, and nothing below main reaches
// across.
func TestDependencyDirection(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	for _, rule := range forbidden {
		err := filepath.WalkDir(rule.dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
				return err
			}
			f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
			if err != nil {
				return err
			}
			checked++
			for _, spec := range f.Imports {
				imp, err := strconv.Unquote(spec.Path.Value)
				if err != nil {
					return err
				}
				for _, bad := range rule.imports {
					if imp == strings.TrimSuffix(bad, "/") || strings.HasPrefix(imp, strings.TrimSuffix(bad, "/")+"/") {
						t.Errorf("%s imports %s: %s (DESIGN.md, layout)", path, imp, rule.why)
					}
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 100 {
		t.Fatalf("only %d files checked: the walk missed the tree", checked)
	}
}
