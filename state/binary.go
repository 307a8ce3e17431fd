package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"
)

// The binary form of an event is what a store reads back when it loads a
// session: decoding it costs a fraction of the JSON form's, because a
// long session's load is almost all decoding. It holds the same values as
// the canonical JSON form (see Canonical) and nothing more.
//
// An event's body is a list of fields, each a tag byte and a value, the
// tags strictly ascending. The encoder leaves out a field at its zero
// value; the decoder also takes one written out, so an event may be read
// from more than one body, but is always written as the same one. A value is one of
//
//	string  uvarint length, UTF-8 bytes
//	int     varint
//	bool    nothing: the tag alone means true
//	time    varint Unix seconds, uvarint nanoseconds; read back as UTC
//	struct  uvarint length, a body of its own fields
//	list    uvarint count, then each element as a struct
//
// A pointer field is written whenever it is not nil, even to an empty
// struct, because JSON keeps that difference too. The event's kind and
// time are not in the body: the store's record header carries them.
//
// Tags are never reused: a field that goes away keeps its tag retired,
// and a new field takes a new tag, in the order the struct lists them.

// Tags of Event.
const (
	tagEventMessages = iota + 1
	tagEventGoal
	tagEventPlan
	tagEventStep
	tagEventStatus
	tagEventTool
	tagEventNoteKey
	tagEventNoteValue
	tagEventText
	tagEventThrough
	tagEventAlways
	tagEventEndpoint
	tagEventFiles
	tagEventFrom
	tagEventUsage
	tagEventBriefing
	tagEventArrival
)

// Tags of the structs inside an event, each numbered from 1.
const (
	tagMessageRole = iota + 1
	tagMessageContent
	tagMessageToolCalls
	tagMessageToolCallID
	tagMessageName
	tagMessageReasoning
)

const (
	tagRequestID = iota + 1
	tagRequestName
	tagRequestArguments
)

const (
	tagStepText = iota + 1
	tagStepStatus
)

const (
	tagCallID = iota + 1
	tagCallName
	tagCallArguments
	tagCallResult
	tagCallError
	tagCallDurationMS
	tagCallStartedAt
	tagCallFinishedAt
	tagCallApproval
)

const (
	tagEndpointModel = iota + 1
	tagEndpointBaseURL
	tagEndpointKeyEnv
)

const (
	tagChangePath = iota + 1
	tagChangeBefore
	tagChangeAfter
)

const (
	tagImageBlob = iota + 1
	tagImageSize
	tagImageMode
	tagImageAbsent
	tagImageUntracked
	tagImageStamp
)

const (
	tagUsagePrompt = iota + 1
	tagUsageCompletion
)

// AppendEventBody appends ev's binary body (without its kind and time) to
// buf. The event should be canonical: the body keeps every string as it
// is, where JSON would have replaced invalid UTF-8, and a body holding
// invalid UTF-8 does not decode.
func AppendEventBody(buf []byte, ev Event) []byte {
	w := bodyWriter{buf}
	w.list(tagEventMessages, len(ev.Messages), func(i int, w *bodyWriter) { w.message(ev.Messages[i]) })
	w.str(tagEventGoal, ev.Goal)
	w.list(tagEventPlan, len(ev.Plan), func(i int, w *bodyWriter) {
		w.str(tagStepText, ev.Plan[i].Text)
		w.str(tagStepStatus, string(ev.Plan[i].Status))
	})
	w.int(tagEventStep, int64(ev.Step))
	w.str(tagEventStatus, string(ev.Status))
	if ev.Tool != nil {
		w.sub(tagEventTool, func(w *bodyWriter) { w.call(*ev.Tool) })
	}
	w.str(tagEventNoteKey, ev.NoteKey)
	w.str(tagEventNoteValue, ev.NoteValue)
	w.str(tagEventText, ev.Text)
	w.int(tagEventThrough, int64(ev.Through))
	w.bool(tagEventAlways, ev.Always)
	if ev.Endpoint != nil {
		w.sub(tagEventEndpoint, func(w *bodyWriter) {
			w.str(tagEndpointModel, ev.Endpoint.Model)
			w.str(tagEndpointBaseURL, ev.Endpoint.BaseURL)
			w.str(tagEndpointKeyEnv, ev.Endpoint.KeyEnv)
		})
	}
	w.list(tagEventFiles, len(ev.Files), func(i int, w *bodyWriter) {
		c := ev.Files[i]
		w.str(tagChangePath, c.Path)
		w.image(tagChangeBefore, c.Before)
		w.image(tagChangeAfter, c.After)
	})
	w.int(tagEventFrom, int64(ev.From))
	if ev.Usage != (Usage{}) {
		w.sub(tagEventUsage, func(w *bodyWriter) {
			w.int(tagUsagePrompt, int64(ev.Usage.PromptTokens))
			w.int(tagUsageCompletion, int64(ev.Usage.CompletionTokens))
		})
	}
	if ev.Briefing != nil {
		w.sub(tagEventBriefing, func(w *bodyWriter) { w.briefing(*ev.Briefing) })
	}
	w.int(tagEventArrival, int64(ev.Arrival))
	return w.buf
}

// DecodeEventBody reads the event of the given kind and time from its
// binary body. It checks what DecodeEvent checks, and gives the same
// in-memory form: empty lists are nil, times are UTC.
func DecodeEventBody(kind EventKind, at time.Time, body []byte) (Event, error) {
	if int(kind) >= len(eventNames) || eventNames[kind] == "" {
		return Event{}, &EventError{Reason: fmt.Sprintf("unknown kind %d", kind)}
	}
	ev := Event{Kind: kind, At: at.UTC()}
	r := bodyReader{p: body}
	for r.more() {
		switch tag := r.tag(); tag {
		case tagEventMessages:
			ev.Messages = make([]Message, r.count())
			for i := range ev.Messages {
				ev.Messages[i] = r.message()
			}
		case tagEventGoal:
			ev.Goal = r.str()
		case tagEventPlan:
			ev.Plan = make([]Step, r.count())
			for i := range ev.Plan {
				ev.Plan[i] = r.step()
			}
		case tagEventStep:
			ev.Step = r.int()
		case tagEventStatus:
			ev.Status = StepState(r.str())
		case tagEventTool:
			c := r.call()
			ev.Tool = &c
		case tagEventNoteKey:
			ev.NoteKey = r.str()
		case tagEventNoteValue:
			ev.NoteValue = r.str()
		case tagEventText:
			ev.Text = r.str()
		case tagEventThrough:
			ev.Through = r.int()
		case tagEventAlways:
			ev.Always = true
		case tagEventEndpoint:
			e := r.endpoint()
			ev.Endpoint = &e
		case tagEventFiles:
			ev.Files = make([]FileChange, r.count())
			for i := range ev.Files {
				ev.Files[i] = r.change()
			}
		case tagEventFrom:
			ev.From = r.int()
		case tagEventUsage:
			ev.Usage = r.usage()
		case tagEventBriefing:
			b := r.briefing()
			ev.Briefing = &b
		case tagEventArrival:
			ev.Arrival = r.int()
		default:
			r.unknown(tag)
		}
	}
	if r.err != nil {
		return Event{}, &EventError{Event: kind, Reason: "binary body: " + r.err.Error()}
	}
	if err := checkDecoded(ev); err != nil {
		return Event{}, err
	}
	return ev, nil
}

// bodyWriter appends fields to a body.
type bodyWriter struct{ buf []byte }

func (w *bodyWriter) str(tag byte, s string) {
	if s != "" {
		w.buf = append(w.buf, tag)
		w.buf = binary.AppendUvarint(w.buf, uint64(len(s)))
		w.buf = append(w.buf, s...)
	}
}

func (w *bodyWriter) int(tag byte, n int64) {
	if n != 0 {
		w.buf = binary.AppendVarint(append(w.buf, tag), n)
	}
}

func (w *bodyWriter) bool(tag byte, b bool) {
	if b {
		w.buf = append(w.buf, tag)
	}
}

func (w *bodyWriter) time(tag byte, t time.Time) {
	if !t.IsZero() {
		w.buf = binary.AppendVarint(append(w.buf, tag), t.Unix())
		w.buf = binary.AppendUvarint(w.buf, uint64(t.Nanosecond()))
	}
}

// sub writes a struct field: its length, then what fn writes. The length
// goes in front, so the body is written after a reserved maximum-size
// length and moved back over the unused bytes.
func (w *bodyWriter) sub(tag byte, fn func(*bodyWriter)) {
	w.buf = append(w.buf, tag)
	w.nested(fn)
}

func (w *bodyWriter) nested(fn func(*bodyWriter)) {
	at := len(w.buf)
	w.buf = append(w.buf, make([]byte, binary.MaxVarintLen64)...)
	start := len(w.buf)
	fn(w)
	n := len(w.buf) - start
	var lenBuf [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(lenBuf[:], uint64(n))
	copy(w.buf[at:], lenBuf[:k])
	w.buf = append(w.buf[:at+k], w.buf[start:]...)
}

func (w *bodyWriter) list(tag byte, n int, fn func(int, *bodyWriter)) {
	if n == 0 {
		return
	}
	w.buf = binary.AppendUvarint(append(w.buf, tag), uint64(n))
	for i := range n {
		w.nested(func(w *bodyWriter) { fn(i, w) })
	}
}

func (w *bodyWriter) message(m Message) {
	w.str(tagMessageRole, m.Role)
	w.str(tagMessageContent, m.Content)
	w.list(tagMessageToolCalls, len(m.ToolCalls), func(i int, w *bodyWriter) {
		w.str(tagRequestID, m.ToolCalls[i].ID)
		w.str(tagRequestName, m.ToolCalls[i].Name)
		w.str(tagRequestArguments, m.ToolCalls[i].Arguments)
	})
	w.str(tagMessageToolCallID, m.ToolCallID)
	w.str(tagMessageName, m.Name)
	w.str(tagMessageReasoning, m.Reasoning)
}

func (w *bodyWriter) call(c ToolCall) {
	w.str(tagCallID, c.ID)
	w.str(tagCallName, c.Name)
	w.str(tagCallArguments, c.Arguments)
	w.str(tagCallResult, c.Result)
	w.str(tagCallError, c.Error)
	w.int(tagCallDurationMS, c.DurationMS)
	w.time(tagCallStartedAt, c.StartedAt)
	w.time(tagCallFinishedAt, c.FinishedAt)
	w.str(tagCallApproval, string(c.Approval))
}

func (w *bodyWriter) image(tag byte, f FileImage) {
	if f == (FileImage{}) {
		return
	}
	w.sub(tag, func(w *bodyWriter) {
		w.str(tagImageBlob, f.Blob)
		w.int(tagImageSize, f.Size)
		w.int(tagImageMode, int64(f.Mode))
		w.bool(tagImageAbsent, f.Absent)
		w.str(tagImageUntracked, f.Untracked)
		w.str(tagImageStamp, f.Stamp)
	})
}

var (
	errBodyShort = errors.New("truncated")
	errBodyUTF8  = errors.New("a string is not valid UTF-8")
)

// bodyReader reads fields from a body. The first error sticks: every
// read after it returns a zero value, and the caller checks err once.
type bodyReader struct {
	p       []byte
	last    byte   // the tag read last; tags must ascend
	lastKey string // the key of a sorted list read last (ascending)
	err     error
}

func (r *bodyReader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.p = nil
}

func (r *bodyReader) more() bool { return r.err == nil && len(r.p) > 0 }

func (r *bodyReader) tag() byte {
	t := r.p[0]
	r.p = r.p[1:]
	if t <= r.last {
		r.fail(fmt.Errorf("field %d after field %d", t, r.last))
		return 0
	}
	r.last = t
	return t
}

func (r *bodyReader) unknown(tag byte) {
	if r.err == nil {
		r.fail(fmt.Errorf("unknown field %d", tag))
	}
}

func (r *bodyReader) uvarint() uint64 {
	n, k := binary.Uvarint(r.p)
	if k <= 0 {
		r.fail(errBodyShort)
		return 0
	}
	r.p = r.p[k:]
	return n
}

func (r *bodyReader) int() int {
	n, k := binary.Varint(r.p)
	if k <= 0 {
		r.fail(errBodyShort)
		return 0
	}
	r.p = r.p[k:]
	return int(n)
}

// bytes reads a length and that many bytes.
func (r *bodyReader) bytes() []byte {
	n := r.uvarint()
	if n > uint64(len(r.p)) {
		r.fail(errBodyShort)
		return nil
	}
	b := r.p[:n]
	r.p = r.p[n:]
	return b
}

func (r *bodyReader) str() string {
	b := r.bytes()
	if !utf8.Valid(b) {
		r.fail(errBodyUTF8)
		return ""
	}
	return string(b)
}

func (r *bodyReader) time() time.Time {
	sec, k := binary.Varint(r.p)
	if k <= 0 {
		r.fail(errBodyShort)
		return time.Time{}
	}
	r.p = r.p[k:]
	ns := r.uvarint()
	if ns >= 1e9 {
		r.fail(fmt.Errorf("nanoseconds %d out of range", ns))
		return time.Time{}
	}
	t := time.Unix(sec, int64(ns)).UTC()
	if y := t.Year(); y < 0 || y > 9999 {
		// JSON cannot write such a time, so no canonical event holds one.
		r.fail(fmt.Errorf("time in year %d", y))
		return time.Time{}
	}
	return t
}

// count reads a list's length. Each element takes at least one byte, so a
// count past what is left is damage, not a reason to allocate.
func (r *bodyReader) count() int {
	n := r.uvarint()
	if n == 0 || n > uint64(len(r.p)) {
		r.fail(fmt.Errorf("list of %d elements in %d bytes", n, len(r.p)))
		return 0
	}
	return int(n)
}

// sub returns a reader of the struct that comes next, whose fields are
// numbered on their own. done takes its error back.
func (r *bodyReader) sub() bodyReader { return bodyReader{p: r.bytes()} }

func (r *bodyReader) done(in *bodyReader) {
	if in.err != nil {
		r.fail(in.err)
	}
}

// role reads a message's role, sharing the strings of the known ones: a
// long session has one per message.
func (r *bodyReader) role() string {
	b := r.bytes()
	switch string(b) {
	case RoleUser:
		return RoleUser
	case RoleAssistant:
		return RoleAssistant
	case RoleTool:
		return RoleTool
	case RoleSystem:
		return RoleSystem
	}
	if !utf8.Valid(b) {
		r.fail(errBodyUTF8)
		return ""
	}
	return string(b)
}

func (r *bodyReader) message() Message {
	var m Message
	in := r.sub()
	for in.more() {
		switch tag := in.tag(); tag {
		case tagMessageRole:
			m.Role = in.role()
		case tagMessageContent:
			m.Content = in.str()
		case tagMessageToolCalls:
			m.ToolCalls = make([]ToolRequest, in.count())
			for i := range m.ToolCalls {
				m.ToolCalls[i] = in.request()
			}
		case tagMessageToolCallID:
			m.ToolCallID = in.str()
		case tagMessageName:
			m.Name = in.str()
		case tagMessageReasoning:
			m.Reasoning = in.str()
		default:
			in.unknown(tag)
		}
	}
	r.done(&in)
	return m
}

func (r *bodyReader) request() ToolRequest {
	var q ToolRequest
	in := r.sub()
	for in.more() {
		switch tag := in.tag(); tag {
		case tagRequestID:
			q.ID = in.str()
		case tagRequestName:
			q.Name = in.str()
		case tagRequestArguments:
			q.Arguments = in.str()
		default:
			in.unknown(tag)
		}
	}
	r.done(&in)
	return q
}

func (r *bodyReader) step() Step {
	var s Step
	in := r.sub()
	for in.more() {
		switch tag := in.tag(); tag {
		case tagStepText:
			s.Text = in.str()
		case tagStepStatus:
			s.Status = StepState(in.str())
		default:
			in.unknown(tag)
		}
	}
	r.done(&in)
	return s
}

func (r *bodyReader) call() ToolCall {
	var c ToolCall
	in := r.sub()
	for in.more() {
		switch tag := in.tag(); tag {
		case tagCallID:
			c.ID = in.str()
		case tagCallName:
			c.Name = in.str()
		case tagCallArguments:
			c.Arguments = in.str()
		case tagCallResult:
			c.Result = in.str()
		case tagCallError:
			c.Error = in.str()
		case tagCallDurationMS:
			c.DurationMS = int64(in.int())
		case tagCallStartedAt:
			c.StartedAt = in.time()
		case tagCallFinishedAt:
			c.FinishedAt = in.time()
		case tagCallApproval:
			c.Approval = ApprovalStatus(in.str())
		default:
			in.unknown(tag)
		}
	}
	r.done(&in)
	return c
}

func (r *bodyReader) endpoint() Endpoint {
	var e Endpoint
	in := r.sub()
	for in.more() {
		switch tag := in.tag(); tag {
		case tagEndpointModel:
			e.Model = in.str()
		case tagEndpointBaseURL:
			e.BaseURL = in.str()
		case tagEndpointKeyEnv:
			e.KeyEnv = in.str()
		default:
			in.unknown(tag)
		}
	}
	r.done(&in)
	return e
}

func (r *bodyReader) change() FileChange {
	var c FileChange
	in := r.sub()
	for in.more() {
		switch tag := in.tag(); tag {
		case tagChangePath:
			c.Path = in.str()
		case tagChangeBefore:
			c.Before = in.image()
		case tagChangeAfter:
			c.After = in.image()
		default:
			in.unknown(tag)
		}
	}
	r.done(&in)
	return c
}

func (r *bodyReader) image() FileImage {
	var f FileImage
	in := r.sub()
	for in.more() {
		switch tag := in.tag(); tag {
		case tagImageBlob:
			f.Blob = in.str()
		case tagImageSize:
			f.Size = int64(in.int())
		case tagImageMode:
			m := in.int()
			if m < 0 || m > math.MaxUint32 {
				in.fail(fmt.Errorf("mode %d out of range", m))
			}
			f.Mode = uint32(m)
		case tagImageAbsent:
			f.Absent = true
		case tagImageUntracked:
			f.Untracked = in.str()
		case tagImageStamp:
			f.Stamp = in.str()
		default:
			in.unknown(tag)
		}
	}
	r.done(&in)
	return f
}

func (r *bodyReader) usage() Usage {
	var u Usage
	in := r.sub()
	for in.more() {
		switch tag := in.tag(); tag {
		case tagUsagePrompt:
			u.PromptTokens = in.int()
		case tagUsageCompletion:
			u.CompletionTokens = in.int()
		default:
			in.unknown(tag)
		}
	}
	r.done(&in)
	return u
}
