package state

import "slices"

// Briefing is what a task is told besides the conversation: the project's
// instructions (AGENTS.md and its kin) that the session's system prompt
// holds, and the memories of the person that hold in its project. A
// user_message carries it, so every version says exactly what the agent
// was told: the session's first message names the instruction files, and
// each task's message the memories it was given.
type Briefing struct {
	// Instructions are the files whose text the system prompt holds, as
	// they were read when the session began.
	Instructions []InstructionFile `json:"instructions,omitempty"`
	// Memories are the memories the task's requests include.
	Memories []Memory `json:"memories,omitempty"`
}

// InstructionFile is one file of project instructions a session was told.
type InstructionFile struct {
	Path string `json:"path"`
	// Tokens is what its text took in the system prompt.
	Tokens int `json:"tokens"`
	// Truncated is set when the text was cut to fit the cap on
	// instructions, and Tokens counts what was kept.
	Truncated bool `json:"truncated,omitempty"`
}

// apply takes a task's briefing into the state: instructions once given
// stay (only a session's first message has them), memories are the
// latest task's.
func (b Briefing) apply(ev *Briefing) Briefing {
	if ev == nil {
		return b
	}
	if len(ev.Instructions) > 0 {
		b.Instructions = slices.Clone(ev.Instructions)
	}
	b.Memories = cloneOrNil(ev.Memories)
	return b
}

// Tags of Briefing and of what it holds.
const (
	tagBriefingInstructions = iota + 1
	tagBriefingMemories
)

const (
	tagInstructionPath = iota + 1
	tagInstructionTokens
	tagInstructionTruncated
)

const (
	tagMemoryID = iota + 1
	tagMemoryProject
	tagMemoryText
	tagMemorySource
	tagMemoryCreatedAt
	tagMemoryUpdatedAt
)

func (w *bodyWriter) briefing(b Briefing) {
	w.list(tagBriefingInstructions, len(b.Instructions), func(i int, w *bodyWriter) {
		f := b.Instructions[i]
		w.str(tagInstructionPath, f.Path)
		w.int(tagInstructionTokens, int64(f.Tokens))
		w.bool(tagInstructionTruncated, f.Truncated)
	})
	w.list(tagBriefingMemories, len(b.Memories), func(i int, w *bodyWriter) {
		m := b.Memories[i]
		w.str(tagMemoryID, m.ID)
		w.str(tagMemoryProject, m.Project)
		w.str(tagMemoryText, m.Text)
		w.str(tagMemorySource, m.Source)
		w.time(tagMemoryCreatedAt, m.CreatedAt)
		w.time(tagMemoryUpdatedAt, m.UpdatedAt)
	})
}

func (r *bodyReader) briefing() Briefing {
	var b Briefing
	in := r.sub()
	for in.more() {
		switch tag := in.tag(); tag {
		case tagBriefingInstructions:
			b.Instructions = make([]InstructionFile, in.count())
			for i := range b.Instructions {
				b.Instructions[i] = in.instruction()
			}
		case tagBriefingMemories:
			b.Memories = make([]Memory, in.count())
			for i := range b.Memories {
				b.Memories[i] = in.memory()
			}
		default:
			in.unknown(tag)
		}
	}
	r.done(&in)
	return b
}

func (r *bodyReader) instruction() InstructionFile {
	var f InstructionFile
	in := r.sub()
	for in.more() {
		switch tag := in.tag(); tag {
		case tagInstructionPath:
			f.Path = in.str()
		case tagInstructionTokens:
			f.Tokens = in.int()
		case tagInstructionTruncated:
			f.Truncated = true
		default:
			in.unknown(tag)
		}
	}
	r.done(&in)
	return f
}

func (r *bodyReader) memory() Memory {
	var m Memory
	in := r.sub()
	for in.more() {
		switch tag := in.tag(); tag {
		case tagMemoryID:
			m.ID = in.str()
		case tagMemoryProject:
			m.Project = in.str()
		case tagMemoryText:
			m.Text = in.str()
		case tagMemorySource:
			m.Source = in.str()
		case tagMemoryCreatedAt:
			m.CreatedAt = in.time()
		case tagMemoryUpdatedAt:
			m.UpdatedAt = in.time()
		default:
			in.unknown(tag)
		}
	}
	r.done(&in)
	return m
}
