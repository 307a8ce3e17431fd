package demo

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"retrace/agent/llmserver"
)

// Server is a running demo model.
type Server struct{ *llmserver.Server }

// Start serves the demo model on addr ("127.0.0.1:0" picks a port). Pace
// is the pause between streamed pieces, so streaming can be seen.
func Start(addr string, pace time.Duration) (*Server, error) {
	srv, err := llmserver.Start(addr)
	if err != nil {
		return nil, err
	}
	m := &model{pace: pace}
	srv.SetHandler(m.respond)
	return &Server{srv}, nil
}

// The plan the demo model always makes for a real request.
var steps = []string{
	"List the files in the workspace",
	"Read the most interesting file",
	"Write NOTES.md with what I found",
}

type model struct {
	pace time.Duration
	n    atomic.Int64 // replies made, for unique tool call ids
}

// goOn is what retrace sends after a reply of the model's own, to make
// the request end with a user message; it is not the developer speaking.
const goOn = "Go on with the task."

// respond decides the next reply from what retrace sent, as a model
// would: from the developer's last message and what happened since.
func (m *model) respond(req llmserver.Request) llmserver.Response {
	m.n.Add(1)
	if len(req.Messages) == 0 {
		return m.text("I was sent nothing.")
	}
	if len(req.Tools) == 0 {
		return m.text("Summary: the developer asked the demo model for help with this workspace; it listed, read and took notes on files.")
	}
	ask := -1
	for i, msg := range req.Messages {
		if msg.Role == "user" && msg.Content != goOn {
			ask = i
		}
	}
	if ask < 0 {
		return m.text("I am not sure what to do next.")
	}
	since := req.Messages[ask+1:]
	if len(since) == 0 {
		return m.firstReply(req, req.Messages[ask].Content)
	}
	return m.next(req, since)
}

func (m *model) firstReply(req llmserver.Request, text string) llmserver.Response {
	lower := strings.ToLower(strings.TrimSpace(text))
	switch {
	case len(strings.Fields(lower)) <= 3 && (strings.HasPrefix(lower, "hi") || strings.HasPrefix(lower, "hello") || strings.HasPrefix(lower, "hey")):
		return m.text("Hello! I am retrace's demo model. Ask me to look at this workspace and I will plan, read files and take notes, asking before I write anything.")
	case strings.Contains(lower, "what did you") || strings.Contains(lower, "notes"):
		return m.text(m.recall(req))
	}
	// The plan and the first step's call in one reply.
	return m.calls("", plan(strings.TrimSpace(text), 0), call{"list_files", `{"pattern":"**"}`})
}

// next works on the plan from the results of the calls made so far: each
// reply reports on the last result, moves the plan on and makes the next
// call, until the notes are written (or declined) and it answers.
func (m *model) next(req llmserver.Request, since []llmserver.Message) llmserver.Response {
	var called []string
	results := map[string]string{} // tool name -> its last result
	names := map[string]string{}   // call id -> tool name
	for _, msg := range since {
		for _, c := range msg.ToolCalls {
			called, names[c.ID] = append(called, c.Name), c.Name
		}
		if msg.Role == "tool" {
			results[names[msg.ToolCallID]] = msg.Content
		}
	}
	has := func(name string) bool { return slices.Contains(called, name) }
	switch {
	case has("write_file"):
		return m.text(m.finalAnswer(req))
	case has("read_file"):
		report := fmt.Sprintf("I read it: %d lines.", countLines(results["read_file"]))
		args, _ := json.Marshal(map[string]any{"path": "NOTES.md", "content": notes(req)})
		return m.calls(report, plan("", 2), call{"write_file", string(args)})
	case has("list_files"):
		report := fmt.Sprintf("The workspace holds %d entries.", countLines(results["list_files"]))
		args, _ := json.Marshal(map[string]any{"path": pickFile(req), "start_line": 1, "end_line": 40})
		return m.calls(report, plan("", 1), call{"read_file", string(args)})
	}
	return m.text("I am not sure what to do next.")
}

// plan is a set_plan call with the demo's steps, done of them finished.
func plan(goal string, done int) call {
	a := map[string]any{"steps": steps, "done": done}
	if goal != "" {
		a["goal"] = goal
	}
	args, _ := json.Marshal(a)
	return call{"set_plan", string(args)}
}

func (m *model) finalAnswer(req llmserver.Request) string {
	file := pickFile(req)
	written := "I wrote my notes to NOTES.md."
	for _, msg := range req.Messages {
		if msg.Role == "tool" && strings.Contains(msg.Content, "denied") {
			written = "I did not write NOTES.md, as you declined."
		}
	}
	return fmt.Sprintf("I looked through the workspace and read %s. %s Ask me what I did, or roll back with the timeline and try another way.", file, written)
}

func (m *model) recall(req llmserver.Request) string {
	var did []string
	for _, msg := range req.Messages {
		for _, c := range msg.ToolCalls {
			if c.Name != "set_plan" {
				did = append(did, c.Name)
			}
		}
	}
	if len(did) == 0 {
		return "So far I have not used any tool in this session."
	}
	return "So far I used these tools, in order: " + strings.Join(did, ", ") + "."
}

// pickFile chooses a file from the list_files result in the conversation:
// the first Go, Markdown or text file, else the first file.
func pickFile(req llmserver.Request) string {
	var files []string
	for _, msg := range req.Messages {
		if msg.Role != "tool" {
			continue
		}
		for _, line := range strings.Split(msg.Content, "\n") {
			line = strings.TrimSpace(line)
			if u, err := strconv.Unquote(line); err == nil && strings.HasPrefix(line, `"`) {
				line = u // list_files quotes a name that would break its line
			}
			if line != "" && !strings.HasSuffix(line, "/") && !strings.HasPrefix(line, "[") && !strings.Contains(line, " ") {
				files = append(files, line)
			}
		}
		if len(files) > 0 {
			break
		}
	}
	for _, f := range files {
		if strings.HasSuffix(f, ".go") || strings.HasSuffix(f, ".md") || strings.HasSuffix(f, ".txt") {
			return f
		}
	}
	if len(files) > 0 {
		return files[0]
	}
	return "README.md"
}

func notes(req llmserver.Request) string {
	return "# Notes from retrace's demo model\n\n- Looked at the workspace file list.\n- Read " + pickFile(req) + ".\n"
}

func countLines(s string) int { return strings.Count(strings.TrimRight(s, "\n"), "\n") + 1 }

// text streams an answer in small pieces, paced so it can be seen.
func (m *model) text(s string) llmserver.Response {
	c := llmserver.Chunker{Model: "retrace-demo"}
	events := []llmserver.Event{c.Role()}
	for _, piece := range pieces(s, 4) {
		events = append(events, llmserver.Pause(m.pace), c.Text(piece))
	}
	return llmserver.Stream(append(events, c.Finish("stop"), c.Usage(120+len(s)/3, len(s)/4), llmserver.Done())...)
}

// call is a tool call the demo makes.
type call struct{ name, args string }

// calls streams a reply: some text, if any, then the calls, each one's
// arguments in pieces, as servers stream them.
func (m *model) calls(text string, cs ...call) llmserver.Response {
	c := llmserver.Chunker{Model: "retrace-demo"}
	events := []llmserver.Event{llmserver.Pause(m.pace), c.Role()}
	for _, piece := range pieces(text, 4) {
		events = append(events, llmserver.Pause(m.pace), c.Text(piece))
	}
	size := len(text)
	for i, cl := range cs {
		events = append(events, c.ToolStart(i, fmt.Sprintf("call_demo_%d_%d", m.n.Load(), i), cl.name))
		for _, piece := range pieces(cl.args, 12) {
			events = append(events, c.ToolArgs(i, piece))
		}
		size += len(cl.args)
	}
	return llmserver.Stream(append(events, c.Finish("tool_calls"), c.Usage(150, size/4), llmserver.Done())...)
}

// pieces splits s into chunks of about n runes.
func pieces(s string, n int) []string {
	r := []rune(s)
	var out []string
	for len(r) > 0 {
		k := min(n, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}
