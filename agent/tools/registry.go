package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"retrace/agent/sandbox"
)

// The defaults New uses for Options fields left at zero.
const (
	DefaultMaxReadBytes      = 64 << 10
	DefaultMaxOutputBytes    = 32 << 10
	DefaultMaxMatches        = 200
	DefaultMaxEntries        = 1000
	DefaultCommandTimeout    = 2 * time.Minute
	DefaultMaxCommandTimeout = 10 * time.Minute
)

// Def describes one tool to the model and to the approval UI.
type Def struct {
	Name        string
	Description string          // one or two sentences for the model
	Parameters  json.RawMessage // a JSON Schema object: {"type":"object","properties":{...},"required":[...]}
	Gated       bool            // needs the person's approval before it runs
	// AsksSometimes: some of its calls need the approval (Asks says
	// which), and configuration may allow them as it allows a gated tool.
	AsksSometimes bool
}

// Options bounds what a tool may return or spend. Every result goes into
// the model's context, so each cap is what one call may cost there. Zero
// (or negative) fields take the Default values.
type Options struct {
	MaxReadBytes      int           // text read_file returns
	MaxOutputBytes    int           // run_command output, and list_files and search_text results
	MaxMatches        int           // matching lines search_text returns
	MaxEntries        int           // entries list_files returns
	CommandTimeout    time.Duration // run_command's limit when the model asks for none
	MaxCommandTimeout time.Duration // the most the model may ask for
	// Sandbox is how run_command's commands are confined; the zero
	// value is sandbox.Workspace. Registry.Sandbox says what this
	// machine gives it.
	Sandbox sandbox.Mode
	// Reach is what the configuration adds to the sandbox's mode:
	// places closed or opened to commands, and the agents let through.
	Reach sandbox.Reach
	// HideEnv names environment variables run_command's commands do not
	// see (the API key's).
	HideEnv []string
}

// withDefaults fills in the zero fields.
func (o Options) withDefaults() Options {
	set := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	set(&o.MaxReadBytes, DefaultMaxReadBytes)
	set(&o.MaxOutputBytes, DefaultMaxOutputBytes)
	set(&o.MaxMatches, DefaultMaxMatches)
	set(&o.MaxEntries, DefaultMaxEntries)
	if o.MaxCommandTimeout <= 0 {
		o.MaxCommandTimeout = DefaultMaxCommandTimeout
	}
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = DefaultCommandTimeout
	}
	o.CommandTimeout = min(o.CommandTimeout, o.MaxCommandTimeout)
	return o
}

// tool is one entry of the registry: its definition, the params its schema
// and its argument checks come from, and what it does. run is nil for the
// tools the agent handles itself.
type tool struct {
	def     Def
	params  []param
	run     func(ctx context.Context, args string) (string, error)
	preview func(args string) (Preview, error)
}

// Registry is the set of tools the model may call, bound to one workspace.
// It is safe for concurrent use: tools share nothing but the workspace.
type Registry struct {
	ws    *Workspace
	opts  Options
	tools map[string]*tool
	order []string
}

// New returns the registry of all nine tools, working in ws.
func New(ws *Workspace, opts Options) *Registry {
	r := &Registry{ws: ws, opts: opts.withDefaults(), tools: map[string]*tool{}}
	for _, t := range r.toolList() {
		t.def.Parameters = schema(t.params)
		r.tools[t.def.Name] = t
		r.order = append(r.order, t.def.Name)
	}
	return r
}

// Defs returns the definitions of all nine tools, always in the same
// order (reading tools first), so the prompt the model sees is stable.
func (r *Registry) Defs() []Def {
	defs := make([]Def, len(r.order))
	for i, name := range r.order {
		defs[i], _ = r.Def(name)
	}
	return defs
}

// Def returns the definition of the tool called name. The caller may keep
// and change it: it is a copy.
func (r *Registry) Def(name string) (Def, bool) {
	t, ok := r.tools[name]
	if !ok {
		return Def{}, false
	}
	d := t.def
	d.Parameters = slices.Clone(d.Parameters)
	return d, true
}

// Run runs a tool with its arguments (the JSON string the model sent) and
// returns what the model is told. A non-nil error means the call failed;
// its message is for the model (and a person) to read. A command that
// exits non-zero has not failed: its result says the exit code. When
// run_command is interrupted, Run returns the output so far along with an
// error wrapping ErrInterrupted.
func (r *Registry) Run(ctx context.Context, name, args string) (out string, err error) {
	t, err := r.lookup(name)
	if err != nil {
		return "", err
	}
	if t.run == nil {
		return "", fmt.Errorf("%s is %w", name, ErrHandledByAgent)
	}
	defer func() {
		if p := recover(); p != nil {
			out, err = "", fmt.Errorf("%s: %w: %v", name, ErrToolPanic, p)
		}
	}()
	return t.run(ctx, args)
}

// lookup finds a tool, or says which ones exist.
func (r *Registry) lookup(name string) (*tool, error) {
	t, ok := r.tools[name]
	if !ok {
		return nil, fmt.Errorf("%w %q; available: %s", ErrUnknownTool, shorten(name, 64), strings.Join(r.order, ", "))
	}
	return t, nil
}

// bind makes a tool's run function: it decodes and checks the arguments
// against params, then calls fn.
func bind[A any](name string, params []param, fn func(context.Context, *A) (string, error)) func(context.Context, string) (string, error) {
	return func(ctx context.Context, args string) (string, error) {
		var a A
		if err := decodeArgs(name, params, args, &a); err != nil {
			return "", err
		}
		return fn(ctx, &a)
	}
}

// bindPreview is bind for a tool's preview function.
func bindPreview[A any](name string, params []param, fn func(*A) (Preview, error)) func(string) (Preview, error) {
	return func(args string) (Preview, error) {
		var a A
		if err := decodeArgs(name, params, args, &a); err != nil {
			return Preview{}, err
		}
		p, err := fn(&a)
		if err != nil {
			return Preview{}, err
		}
		p.Tool = name
		return p, nil
	}
}
