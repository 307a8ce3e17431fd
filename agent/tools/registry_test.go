package tools

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"retrace/agent/sandbox"
	"slices"
	"strings"
	"testing"
	"time"
)

var allTools = []string{"read_file", "list_files", "search_text", "write_file", "edit_file", "run_command", "note", "remember", "set_plan"}

func TestDefs(t *testing.T) {
	r, _ := newTestRegistry(t, Options{}, nil)
	defs := r.Defs()
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
		gated := d.Name == "write_file" || d.Name == "edit_file" || d.Name == "run_command"
		if d.Gated != gated {
			t.Errorf("%s: Gated = %v, want %v", d.Name, d.Gated, gated)
		}
		if d.Description == "" {
			t.Errorf("%s: no description", d.Name)
		}
		one, ok := r.Def(d.Name)
		if !ok || one.Name != d.Name || string(one.Parameters) != string(d.Parameters) {
			t.Errorf("Def(%q) = %+v, %v; want what Defs lists", d.Name, one, ok)
		}
	}
	if !slices.Equal(names, allTools) {
		t.Fatalf("Defs order = %v, want %v", names, allTools)
	}
	if _, ok := r.Def("nope"); ok {
		t.Fatal(`Def("nope") found a tool`)
	}
}

// TestDefsSchemas checks every schema is a JSON Schema object whose
// required list and property types are what the tools check.
func TestDefsSchemas(t *testing.T) {
	r, _ := newTestRegistry(t, Options{}, nil)
	wantRequired := map[string][]string{
		"read_file": {"path"}, "list_files": {}, "search_text": {"pattern"},
		"write_file": {"path", "content"}, "edit_file": {"path", "old_text", "new_text"},
		"run_command": {"command"}, "note": {"key", "value"}, "remember": {"text"}, "set_plan": {"steps"},
	}
	for _, d := range r.Defs() {
		var s struct {
			Type       string `json:"type"`
			Properties map[string]struct {
				Type        string            `json:"type"`
				Description string            `json:"description"`
				Items       map[string]string `json:"items"`
			} `json:"properties"`
			Required   []string `json:"required"`
			Additional *bool    `json:"additionalProperties"`
		}
		if err := json.Unmarshal(d.Parameters, &s); err != nil {
			t.Fatalf("%s: schema is not JSON: %v", d.Name, err)
		}
		if s.Type != "object" || s.Additional == nil || *s.Additional {
			t.Errorf("%s: schema type %q, additionalProperties %v", d.Name, s.Type, s.Additional)
		}
		if !slices.Equal(s.Required, wantRequired[d.Name]) {
			t.Errorf("%s: required = %v, want %v", d.Name, s.Required, wantRequired[d.Name])
		}
		for name, p := range s.Properties {
			if p.Description == "" || !slices.Contains([]string{"string", "integer", "number", "boolean", "array"}, p.Type) {
				t.Errorf("%s.%s: type %q, description %q", d.Name, name, p.Type, p.Description)
			}
			if p.Type == "array" && p.Items["type"] != "string" {
				t.Errorf("%s.%s: array items %v", d.Name, name, p.Items)
			}
		}
		for _, req := range s.Required {
			if _, ok := s.Properties[req]; !ok {
				t.Errorf("%s: required %q is not a property", d.Name, req)
			}
		}
	}
}

func TestDefIsACopy(t *testing.T) {
	r, _ := newTestRegistry(t, Options{}, nil)
	d, _ := r.Def("read_file")
	d.Parameters[0] = 'X'
	d.Name = "changed"
	again, _ := r.Def("read_file")
	if again.Parameters[0] != '{' || again.Name != "read_file" {
		t.Fatal("changing a returned Def changed the registry")
	}
}

func TestDescriptionsStateCaps(t *testing.T) {
	r, _ := newTestRegistry(t, Options{MaxReadBytes: 1000, MaxEntries: 7, MaxMatches: 9, CommandTimeout: 30 * time.Second}, nil)
	for name, want := range map[string]string{
		"read_file": "1000 bytes", "list_files": "7 entries", "search_text": "9 matches", "run_command": "30s",
	} {
		if d, _ := r.Def(name); !strings.Contains(d.Description, want) {
			t.Errorf("%s description %q does not state %q", name, d.Description, want)
		}
	}
}

func TestOptionsDefaults(t *testing.T) {
	got := Options{MaxMatches: -5, CommandTimeout: time.Hour}.withDefaults()
	want := Options{
		MaxReadBytes: 64 << 10, MaxOutputBytes: 32 << 10, MaxMatches: 200, MaxEntries: 1000,
		CommandTimeout: 10 * time.Minute, MaxCommandTimeout: 10 * time.Minute,
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("withDefaults = %+v, want %+v", got, want)
	}
	if got := (Options{}).withDefaults().CommandTimeout; got != 2*time.Minute {
		t.Fatalf("default CommandTimeout = %s", got)
	}
}

func TestRunUnknownTool(t *testing.T) {
	r, _ := newTestRegistry(t, Options{}, nil)
	_, err := r.Run(context.Background(), "write_filewrite_file", "{}")
	want := `unknown tool "write_filewrite_file"; available: read_file, list_files, search_text, write_file, edit_file, run_command, note, remember, set_plan`
	if err == nil || err.Error() != want || !errors.Is(err, ErrUnknownTool) {
		t.Fatalf("err = %v, want %q", err, want)
	}
	_, err = r.Preview(strings.Repeat("x", 10000), "{}")
	if !errors.Is(err, ErrUnknownTool) || len(err.Error()) > 300 {
		t.Fatalf("a huge unknown name: %v", err)
	}
}

func TestRunInvalidArguments(t *testing.T) {
	r, _ := newTestRegistry(t, Options{}, map[string]string{"a.txt": "a\n"})
	for _, tc := range []struct {
		tool, args, want string
	}{
		{"read_file", `{"path":`, "invalid arguments for read_file: unexpected end of JSON input"},
		{"read_file", `not json`, "invalid arguments for read_file: invalid character"},
		{"read_file", `["a.txt"]`, "invalid arguments for read_file: json: cannot unmarshal array"},
		{"read_file", `null`, `missing required field "path"`},
		{"read_file", `{}`, `invalid arguments for read_file: missing required field "path"`},
		{"read_file", `{"path":null}`, `missing required field "path"`},
		{"read_file", `{"path":"a.txt"} {}`, "invalid arguments for read_file"},
		{"read_file", `{"path":7}`, `"path" must be a string, got 7`},
		{"read_file", `{"path":"a.txt","start_line":"5"}`, `"start_line" must be an integer, got "5"`},
		{"read_file", `{"path":"a.txt","start_line":1.5}`, `"start_line" must be an integer, got 1.5`},
		{"read_file", `{"path":"a.txt","start_line":1e300}`, `"start_line" must be an integer`},
		{"read_file", `{"path":"a.txt","startLine":3}`, `unknown field "startLine"; expected: path, start_line, end_line`},
		{"write_file", `{"path":"b.txt"}`, `invalid arguments for write_file: missing required field "content"`},
		{"edit_file", `{"path":"a.txt","old_text":"a"}`, `missing required field "new_text"`},
		{"run_command", `{"command":["ls"]}`, `"command" must be a string`},
		{"run_command", `{"command":"true","timeout_seconds":"10"}`, `"timeout_seconds" must be a number`},
		{"run_command", `{"command":"true","timeout_seconds":-1}`, "timeout_seconds must be a positive number"},
		{"search_text", `{"pattern":"("}`, "invalid arguments for search_text: invalid regular expression"},
		{"list_files", `{"pattern":{}}`, `"pattern" must be a string`},
	} {
		t.Run(tc.tool+" "+tc.args, func(t *testing.T) {
			out, err := r.Run(context.Background(), tc.tool, tc.args)
			checkErr(t, err, tc.want)
			if !errors.Is(err, ErrInvalidArguments) || out != "" {
				t.Fatalf("err = %v (ErrInvalidArguments: %v), out = %q", err, errors.Is(err, ErrInvalidArguments), out)
			}
		})
	}
}

func TestRunEmptyArgumentsMeanNone(t *testing.T) {
	r, _ := newTestRegistry(t, Options{}, map[string]string{"a.txt": "a\n"})
	for _, args := range []string{"", "  ", "{}"} {
		out, err := r.Run(context.Background(), "list_files", args)
		if err != nil || out != "a.txt\n" {
			t.Fatalf("list_files with %q: %q, %v", args, out, err)
		}
	}
}

func TestRunAgentTools(t *testing.T) {
	r, _ := newTestRegistry(t, Options{}, nil)
	for _, name := range []string{"note", "set_plan"} {
		_, err := r.Run(context.Background(), name, `{"key":"k","value":"v"}`)
		if err == nil || err.Error() != name+" is handled by the agent" || !errors.Is(err, ErrHandledByAgent) {
			t.Errorf("Run(%s) = %v", name, err)
		}
	}
}

// FuzzRun sends arbitrary arguments to every tool but run_command (which
// would run them): whatever arrives, no tool and no preview may panic.
func FuzzRun(f *testing.F) {
	for _, s := range []string{
		`{"path":"a.txt"}`, `{"path":"../x"}`, `{"path":"a.txt","start_line":3,"end_line":2}`,
		`{"pattern":"**/*.go","path":"sub"}`, `{"pattern":"[","path":"."}`, `{"pattern":"a","glob":"**/"}`,
		`{"path":"sub/new.txt","content":"x"}`, `{"path":"a.txt","old_text":"a","new_text":"b"}`,
		`{"key":"k","value":"v"}`, `{"steps":["a",""]}`, `{"pattern":"(?i)A+$"}`, `[]`, `""`, `{"path":"\u0000"}`,
	} {
		for i := range allTools {
			f.Add(uint8(i), s)
		}
	}
	r, _ := newTestRegistry(f, Options{MaxReadBytes: 64, MaxOutputBytes: 128, MaxEntries: 3, MaxMatches: 2},
		map[string]string{"a.txt": "a\nb\n", "sub/c.go": "package c\n"})
	f.Fuzz(func(t *testing.T, which uint8, args string) {
		name := allTools[int(which)%len(allTools)]
		if name == "run_command" {
			return
		}
		if _, err := r.Run(context.Background(), name, args); errors.Is(err, ErrToolPanic) {
			t.Fatal(err)
		}
		if _, err := r.Preview(name, args); errors.Is(err, ErrToolPanic) {
			t.Fatal(err)
		}
	})
}

// run_command's description tells the model where a command may write
// only when the sandbox confines it there.
func TestCommandDescriptionSaysItsReach(t *testing.T) {
	ws, err := NewWorkspace(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	const reach = "It may write only in the workspace and $TMPDIR."
	for _, mode := range []sandbox.Mode{sandbox.Workspace, sandbox.Off} {
		r := New(ws, Options{Sandbox: mode})
		d, _ := r.Def("run_command")
		if says, confined := strings.Contains(d.Description, reach), !r.Sandbox().Unconfined(); says != confined {
			t.Errorf("mode %v (confined %v): the description %q", mode, confined, d.Description)
		}
	}
}
