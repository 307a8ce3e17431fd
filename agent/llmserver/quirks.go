package llmserver

import "strconv"

// This file names the odd shapes of openai-wire.md §2, §3.3 and §5 that
// tests need most, so a scenario reads like its description. Anything
// rarer is one Data or Line away.

// ErrorData is the canonical mid-stream error (OpenAI, vLLM, SGLang):
// data: {"error":{"message":…,"type":…,"param":null,"code":null}}.
// go-openai's Recv returns it as an *APIError with HTTPStatusCode 0,
// unless a comment came earlier in the stream.
func ErrorData(message, typ string) Event {
	return Data(ErrorBody(message, typ, "", nil))
}

// ErrorEvent is the same error framed as an SSE "event: error" line and
// its data line. go-openai loses the message ("unexpected end of JSON
// input").
func ErrorEvent(message, typ string) Event {
	return Seq(Line("event: error\n"), ErrorData(message, typ))
}

// ErrorSpaced is the error with a space after the brace,
// data: { "error": …}, which go-openai does not recognise as an error and
// silently yields as an empty chunk.
func ErrorSpaced(message, typ string) Event {
	return Data(`{ "error": ` + ErrorBody(message, typ, "", nil)[len(`{"error":`):])
}

// ErrorField is llama.cpp's 2025 non-standard "error: {json}" SSE line.
// Real servers followed it with Done(), after which go-openai reports a
// clean io.EOF and no error at all.
func ErrorField(message string) Event {
	return Line(`error: {"code":500,"message":` + quote(message) + `,"type":"server_error"}` + "\n\n")
}

// OpenRouterError is OpenRouter's mid-stream failure: a chunk with a
// top-level "error" and a choice whose finish_reason is "error".
// go-openai drops the error and yields FinishReason("error").
func (c Chunker) OpenRouterError(code int, message string) Event {
	return c.Chunk(`"provider":"llmserver","error":{"code":` + strconv.Itoa(code) + `,"message":` + quote(message) +
		`},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]`)
}

// PromptFilter is Azure's first chunk: "choices":[] with
// prompt_filter_results, and id, object, model and created left empty.
func (c Chunker) PromptFilter() Event {
	return Data(`{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":` +
		`[{"prompt_index":0,"content_filter_results":` + safeFilter + `}]}`)
}

// FilterAnnotation is Azure's asynchronous content-filter chunk: a choice
// without a delta, carrying content_filter_offsets.
func (c Chunker) FilterAnnotation(check, start, end int) Event {
	c = c.norm()
	return Data(c.envelope(`[{"content_filter_offsets":{"check_offset":`+strconv.Itoa(check)+
		`,"start_offset":`+strconv.Itoa(start)+`,"end_offset":`+strconv.Itoa(end)+`},"content_filter_results":`+
		safeFilter+`,"finish_reason":null,"index":0}]`, ""))
}
