package tools

import (
	"slices"
	"testing"
)

// Configuration and flags check the names they allow against Gated, so it
// must name exactly the tools that change files or run commands, and
// remember, whose memories for every project ask.
func TestGatedNamesTheToolsThatAsk(t *testing.T) {
	want := []string{"write_file", "edit_file", "run_command", "remember"}
	if got := Gated(); !slices.Equal(got, want) {
		t.Fatalf("Gated() = %v, want %v", got, want)
	}
	for _, name := range allTools {
		if IsGated(name) != slices.Contains(want, name) {
			t.Errorf("IsGated(%q) = %v", name, IsGated(name))
		}
	}
	if IsGated("rm_rf") || IsGated("") {
		t.Fatal("an unknown tool is not gated")
	}
}

// Every call of a gated tool asks; of remember, one for every project;
// of the others, none.
func TestAsks(t *testing.T) {
	r := New(nil, Options{})
	for _, c := range []struct {
		name, args string
		want       bool
	}{
		{"write_file", `{"path":"a","content":"b"}`, true},
		{"run_command", `{"command":"ls"}`, true},
		{"read_file", `{"path":"a"}`, false},
		{"remember", `{"text":"tabs"}`, false},
		{"remember", `{"text":"tabs","everywhere":false}`, false},
		{"remember", `{"text":"tabs","everywhere":true}`, true},
		{"note", `{"key":"a","value":"b"}`, false},
	} {
		def, ok := r.Def(c.name)
		if !ok {
			t.Fatalf("no tool %s", c.name)
		}
		if got := Asks(def, c.args); got != c.want {
			t.Errorf("Asks(%s, %s) = %v", c.name, c.args, got)
		}
	}
}
