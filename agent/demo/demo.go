package demo

import (
	"encoding/json"
	"fmt"
	"regexp"
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

var stepLine = regexp.MustCompile(`You are carrying out step (\d+) of the plan: (.*)`)

// respond decides the next reply from what retrace sent.
func (m *model) respond(req llmserver.Request) llmserver.Response {
	m.n.Add(1)
	if len(req.Messages) == 0 {
		return m.text("I was sent nothing.")
	}
	system, last := req.Messages[0].Content, req.Messages[len(req.Messages)-1]
	switch {
	case len(req.Tools) == 0:
		return m.text("Summary: the developer asked the demo model for help with this workspace; it listed, read and took notes on files.")
	case strings.Contains(system, "Every step of the plan is done"):
		return m.text(m.finalAnswer(req))
	case stepLine.MatchString(system):
		return m.step(req, stepLine.FindStringSubmatch(system)[2])
	case last.Role == "user":
		return m.firstReply(req, last.Content)
	}
	return m.text("I am not sure what to do next.")
}

func (m *model) firstReply(req llmserver.Request, text string) llmserver.Response {
	lower := strings.ToLower(strings.TrimSpace(text))
	switch {
	case len(strings.Fields(lower)) <= 3 && (strings.HasPrefix(lower, "hi") || strings.HasPrefix(lower, "hello") || strings.HasPrefix(lower, "hey")):
		return m.text("Hello! I am retrace's demo model. Ask me to look at this workspace and I will plan, read files and take notes, asking before I write anything.")
	case strings.Contains(lower, "what did you") || strings.Contains(lower, "notes"):
		return m.text(m.recall(req))
	}
	args, _ := json.Marshal(map[string]any{"goal": strings.TrimSpace(text), "steps": steps})
	return m.call("set_plan", string(args))
}

// step works on one step of the plan: a tool call, then, once its result
// is in, a short report that ends the step.
func (m *model) step(req llmserver.Request, step string) llmserver.Response {
	last := req.Messages[len(req.Messages)-1]
	done := last.Role == "tool" && !strings.HasPrefix(last.Content, "plan recorded")
	switch {
	case strings.HasPrefix(step, "List"):
		if done {
			return m.text(fmt.Sprintf("The workspace holds %d entries.", countLines(last.Content)))
		}
		return m.call("list_files", `{"pattern":"**"}`)
	case strings.HasPrefix(step, "Read"):
		if done {
			return m.text(fmt.Sprintf("I read it: %d lines.", countLines(last.Content)))
		}
		args, _ := json.Marshal(map[string]any{"path": pickFile(req), "start_line": 1, "end_line": 40})
		return m.call("read_file", string(args))
	case strings.HasPrefix(step, "Write"):
		if done {
			if strings.Contains(last.Content, "denied") {
				return m.text("You declined the write, so NOTES.md was not written. That is fine.")
			}
			return m.text("NOTES.md is written.")
		}
		args, _ := json.Marshal(map[string]any{"path": "NOTES.md", "content": notes(req)})
		return m.call("write_file", string(args))
	}
	return m.text("Done with this step.")
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

func (m *model) call(name, args string) llmserver.Response {
	c := llmserver.Chunker{Model: "retrace-demo"}
	id := fmt.Sprintf("call_demo_%d", m.n.Load())
	events := []llmserver.Event{llmserver.Pause(m.pace), c.RoleToolStart(0, id, name)}
	for _, piece := range pieces(args, 12) {
		events = append(events, c.ToolArgs(0, piece))
	}
	return llmserver.Stream(append(events, c.Finish("tool_calls"), c.Usage(150, len(args)/4), llmserver.Done())...)
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
